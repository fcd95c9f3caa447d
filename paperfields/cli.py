"""The ``paperfields`` command line."""

from __future__ import annotations

import inspect
import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperCommand, TyperGroup

from paperfields.core import paths
from paperfields.core.errors import PaperFieldsError
from paperfields.core.plural import plural
from paperfields.options import RunOptions, cli_parameters


class _Commands(TyperGroup):
    """The command group: a :class:`PaperFieldsError` that a command does not handle itself (every one
    of PaperFields' own errors, whatever its subclass) is printed as one line and exits 2, like the
    errors each command catches; anything else is a bug and keeps its traceback."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except PaperFieldsError as exc:
            fail(str(exc))


app = typer.Typer(
    cls=_Commands,
    help="PaperFields: a benchmark for LLM structured extraction from ML paper abstracts.\n\n"
    "Main job: `paperfields run` extracts records with the offline local model, scores them against the gold labels "
    "(written from the abstracts under gold/GUIDELINES.md by AI agent sessions) and prints the leaderboard.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text holds literal brackets: "[default: ...]", ".[anthropic]"
)
corpus_app = typer.Typer(help="Build the corpus from seed text files or JSONL.", no_args_is_help=True)
gold_app = typer.Typer(help="Check the gold annotations.", no_args_is_help=True)
submission_app = typer.Typer(
    help="Submissions from outside (submissions/<name>/): check them, and score one onto the board.",
    no_args_is_help=True,
)
app.add_typer(corpus_app, name="corpus")
app.add_typer(gold_app, name="gold")
app.add_typer(submission_app, name="submission")
console = Console(stderr=True, soft_wrap=True)
out = Console(width=None if sys.stdout.isatty() else 160)


_WARNED: set[str] = set()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    # Once per text: two readers of one file (score reads predictions.jsonl twice) must not say the same thing twice.
    if str(message) in _WARNED:
        return
    _WARNED.add(str(message))
    console.print(f"warning: {message}", style="yellow", highlight=False, markup=False)


warnings.showwarning = _show_warning  # a library warning reads like our errors, without a source line

RUNS_DIR_HELP = (
    "Where runs are looked up [default: runs/ (yours) and results/runs (published); an id found in both is refused: "
    "give its folder]."
)  # every command that reads a stored run

# Each failed attempt is recorded in its paper's line (error, failure class) and summed up after the
# run; instructor's own per-attempt log lines would only break the progress bar.
logging.getLogger("instructor").setLevel(logging.CRITICAL)


def fail(message: str, code: int = 2) -> None:
    console.print("error: " + message, style="bold red", highlight=False, markup=False)
    raise typer.Exit(code)


def _write_text(target: Path, text: str) -> None:
    """Write an output file (its folders made), or fail with a clear message naming it."""
    _check_writable(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}")


def _check_writable(target: Path) -> None:
    """Fail where ``target`` can never be written: a folder, a path under a file, or under a folder this user cannot
    write. :func:`_write_text` checks this first; a command that takes tens of seconds, such as ``gold agreement``,
    calls it before the work too, so it tells at once."""
    if target.is_dir():
        fail(f"--out {target} is a folder; give a file path such as {target / 'out.md'}")
    parent = target.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        fail(f"cannot write {target}: {parent} is not a folder")
    if not os.access(parent, os.W_OK):
        fail(f"cannot write {target}: {parent} is not writable")


def _known_errors() -> tuple[type[Exception], ...]:
    """What a command prints as one line instead of a traceback: every PaperFields error (the root of
    :mod:`paperfields.core.errors`, so each subclass, present and future), and files that cannot be
    read or decoded."""
    return (PaperFieldsError, OSError, UnicodeDecodeError)


def _month_option(value: Optional[str]) -> Optional[str]:
    """``--date``: a ``YYYY-MM`` month, else typer's usage error naming the option and the value."""
    from paperfields.core.corpus import month_index

    if value is not None:
        try:
            month_index(value)
        except ValueError as exc:
            raise typer.BadParameter(f"{exc}, e.g. 2025-03 for March 2025") from None
    return value


@corpus_app.command("build")
def corpus_build(
    files: list[Path] = typer.Argument(
        ...,
        help="Text or JSONL files of abstracts (a folder: pass its files, e.g. DIR/*.txt). "
        "A file named *.jsonl, *.ndjson or *.json is JSONL (one object with 'id' and 'text' per line; "
        "other keys are ignored, with a warning), one named *.txt or *.md is text: one abstract per "
        "blank-line-separated paragraph, its lines joined with a space. Any other file is JSONL when its "
        "first non-blank line starts with '{', else text.",
    ),
    out_path: Path = typer.Option(
        None,
        "--out",
        help="Where to write the corpus JSONL [default: gold/corpus.jsonl, the benchmark's own, "
        "which --out never names]. Never one of the input files.",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace the output file (--out, or gold/corpus.jsonl without it) when it exists and "
        "the result differs from it (the same bytes are rewritten without it).",
    ),
    header: Optional[bool] = typer.Option(
        None,
        "--header/--no-header",
        help="Text files: line 1 is a header to skip (--header) or the start of the first abstract (--no-header). "
        "Default: a header when it is a single short line (at most 120 characters and 15 words) that does not end with "
        ". ! or ? and is followed by a blank line or a one-line abstract.",
    ),
    one_per_line: bool = typer.Option(
        False,
        "--one-per-line",
        help="Text files: every non-blank line is one abstract. Without it, a "
        "paragraph of 3+ abstract-length lines (300+ characters, 3+ sentences) is refused.",
    ),
    date: Optional[str] = typer.Option(
        None,
        "--date",
        metavar="YYYY-MM",
        callback=_month_option,
        help="The month the abstracts were first "
        "public (the earliest, e.g. of a preprint), written into every line as 'public_date'. A run's "
        "contamination status compares it with the model's training-data cutoff; a corpus of your own "
        "without it is 'unknown'.",
    ),
) -> None:
    """Turn text or JSONL files of abstracts into the corpus JSONL: one
    record per abstract with a stable id, source file and position.

    Warnings and errors name file:line: a first line read as an abstract that may be a header, an abstract
    over 3,000 characters or with two abstract-length lines (perhaps several abstracts run together).
    """
    from paperfields.core.corpus import (
        CorpusError,
        check_given_once,
        check_output,
        corpus_bytes,
        read_source,
        unique_papers,
        with_public_date,
        write_corpus,
    )

    try:
        check_given_once(files)
        sources = [read_source(path, header, one_per_line) for path in files]
        papers = unique_papers(sources)
    except _known_errors() as exc:
        fail(str(exc))
    papers = with_public_date(papers, date) if date else papers
    for source in sources[:20]:  # say how each file was read: a wrong guess is visible, never silent
        how = (
            "JSONL"
            if source.format == "jsonl"
            else f"text, header line {source.header_line} {source.header!r} skipped"
            if source.header is not None
            else "text, no header line"
        )
        console.print(f"{source.path}: {how}, {plural(len(source.papers), 'abstract')}", highlight=False, markup=False)
    if len(sources) > 20:
        console.print(f"... and {plural(len(sources) - 20, 'more file')}", highlight=False, markup=False)
    benchmark = paths.gold_dir() / "corpus.jsonl"
    target = out_path or benchmark
    if target.is_dir():
        fail(f"--out {target} is a folder; give a file path such as {target / 'corpus.jsonl'}")
    if date and out_path is None:
        fail(
            f"--date {date} is for a corpus of your own (--out PATH); the benchmark "
            "corpus's date is in paperfields/core/tables/cutoffs.toml"
        )
    try:
        # Gold labels refer to the benchmark corpus's ids, and an input or an earlier output may be the
        # user's only copy: never replace one by accident, whatever path names it.
        check_output(target, files, benchmark, corpus_bytes(papers), out_given=out_path is not None, force=force)
    except CorpusError as exc:
        fail(str(exc))
    try:
        write_corpus(papers, target)
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}")
    console.print(
        f"wrote {plural(len(papers), 'abstract')} from {plural(len(files), 'file')} to {target}",
        highlight=False,
        markup=False,
    )


@gold_app.command("check")
def gold_check(
    gold_path: Path = typer.Option(None, "--gold", help="Gold JSONL [default: gold/gold.jsonl]."),
    corpus_path: Path = typer.Option(None, "--corpus", help="Corpus JSONL [default: gold/corpus.jsonl]."),
) -> None:
    """Validate gold against the schema and the corpus. Exits 1 listing file:line: field: problem."""
    from paperfields.core.corpus import load_corpus
    from paperfields.core.gold import check_gold, load_gold

    gold_path = gold_path or paths.gold_dir() / "gold.jsonl"
    corpus_path = corpus_path or paths.gold_dir() / "corpus.jsonl"
    problems: list[str] = []
    try:
        papers = load_corpus(corpus_path)
        gold = load_gold(gold_path, problems)
    except _known_errors() as exc:
        fail(str(exc), 1)
    problems += check_gold(gold, papers, gold_path)
    for problem in problems:
        console.print(problem, highlight=False, markup=False)
    if problems:
        fail(f"{plural(len(problems), 'problem')} in {gold_path}", 1)
    splits = {s: sum(1 for g in gold if g.split == s) for s in ("dev", "test")}
    console.print(f"gold ok: {plural(len(gold), 'paper')} ({splits['dev']} dev, {splits['test']} test) in {gold_path}")


@gold_app.command("agreement")
def gold_agreement(
    second_path: Path = typer.Option(
        None, "--second", help="The current blind second labeling [default: gold/second_annotation_2.jsonl]."
    ),
    out_path: Path = typer.Option(None, "--out", help="Markdown to write [default: gold/AGREEMENT.md]."),
    semantic: bool = typer.Option(
        False,
        "--semantic",
        help="Compute the semantic tier's cosines that gold/scorer_semantic_cosines.jsonl lacks (needs "
        "pip install -e '.[semantic]') and store them; without it the stored ones are read.",
    ),
    held_out: str = typer.Option(
        None,
        "--held-out",
        help="The held-out stratified judgments to read, by file name in gold/ (scorer_stratified9_judgments.jsonl, "
        "or an earlier set's scorer_stratified8_judgments.jsonl ... scorer_stratified2_judgments.jsonl, "
        "scorer_stratified_judgments.jsonl) [default: the newest set, scoring/agreement.py HELD_OUT]. A set whose "
        "rules are not frozen, or whose unedited commit is not entered, is never opened.",
    ),
) -> None:
    """Inter-annotator agreement per field (the project's scorer, first labeling as gold) and the scorer's
    agreement with blind judges (the held-out stratified set, the tuning sets, the semantic tier beside
    them); writes gold/AGREEMENT.md and gold/validity.json (the held-out figures the board shows)."""
    from paperfields.scoring.agreement import HELDOUT_SETS, agreement_files
    from paperfields.scoring.semantic import Embedder

    if held_out is not None and held_out not in HELDOUT_SETS:
        fail(f"--held-out: '{held_out}' is not a held-out set (one of {', '.join(HELDOUT_SETS)})")
    gold_dir = paths.gold_dir()
    _check_writable(out_path or gold_dir / "AGREEMENT.md")
    try:
        files = agreement_files(
            gold_dir,
            second_path,
            embedder=Embedder() if semantic else None,
            held_out=HELDOUT_SETS[held_out] if held_out else None,
        )
    except _known_errors() as exc:
        fail(str(exc))
    text = files.pop("AGREEMENT.md")
    target = out_path or gold_dir / "AGREEMENT.md"
    _write_text(target, text)
    for name, content in files.items():  # validity.json beside the Markdown written
        _write_text(target.parent / name, content)
    out.print(
        "\n".join(
            line
            for line in text.splitlines()
            if line.startswith(
                ("Overall agreement", "Single-label", "Scorer-judge", "| all |", "| contested", "Target")
            )
        )
    )
    console.print(f"wrote {target}")


@gold_app.command("sample-pairs")
def gold_sample_pairs(
    runs: list[str] = typer.Argument(..., help="Run ids or folders whose predictions supply the pairs."),
    n: int = typer.Option(160, min=1, help="How many pairs."),
    out_path: Path = typer.Option(..., "--out", help="JSONL of pairs to judge by hand (no scorer verdicts in it)."),
    runs_dir: Path = typer.Option(None, help=RUNS_DIR_HELP),
    exclude: list[Path] = typer.Option(
        [],
        "--exclude",
        help="Judgments JSONL whose pairs are never drawn again (repeatable): "
        "keeps a validation sample apart from the tuning pairs.",
    ),
    seed: int = typer.Option(7, help="Seed of the draw."),
) -> None:
    """Draw (prediction, nearest gold) item pairs from real runs for a person to judge 'same thing or not'.

    For a held-out set stratified by the scorer's own verdicts (matched, near misses, results), see
    `paperfields gold stratified-pairs`."""
    import json

    from paperfields.core.gold import load_gold
    from paperfields.scoring.validity import sample_pairs

    try:
        from paperfields.scoring.validity import load_judgments

        excluded = [j for path in exclude for j in load_judgments(path)]
        pairs = sample_pairs(
            [_run_dir(r, runs_dir) for r in runs], load_gold(paths.gold_dir() / "gold.jsonl"), n, seed, excluded
        )
        if not pairs:
            fail(
                f"no (prediction, gold) item pairs in {', '.join(runs)}: their "
                "predictions hold no list item for a paper in the gold",
                1,
            )
        _write_text(out_path, "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs))
    except _known_errors() as exc:
        fail(str(exc))
    console.print(
        f'wrote {plural(len(pairs), "pair")} to {out_path}; add "same": '
        "true/false to each and save as gold/scorer_judgments.jsonl"
    )


@gold_app.command("stratified-pairs")
def gold_stratified_pairs(
    runs: list[str] = typer.Argument(
        ..., help="Run ids or folders to draw from; they take turns in this order, the --favor runs after the others."
    ),
    out_path: Path = typer.Option(
        ...,
        "--out",
        help="JSONL of every drawn pair with its stratum, closeness and source runs: the record, never for the judge. "
        "How it was drawn (seed, inputs by hash, scorer and gold versions) goes beside it as <name>.draw.json.",
    ),
    blind_dir: Optional[Path] = typer.Option(
        None,
        "--blind-dir",
        help="Folder for a blind judge: pairs.jsonl (no stratum, run or scorer verdict), abstracts.jsonl "
        "(the papers of the pairs) and brief.md (--brief). Refused when it holds a judgments.jsonl already.",
    ),
    brief: Path = typer.Option(
        None, help="Judging brief copied into --blind-dir as brief.md [default: gold/scorer_stratified_brief.md]."
    ),
    matched: int = typer.Option(90, min=0, help="How many pairs the scorer matched that differ after normalization."),
    near_miss: int = typer.Option(
        90, min=0, help="How many close pairs the scorer left unmatched (prediction, nearest gold)."
    ),
    results: int = typer.Option(
        60, min=0, help="How many result tuples beside the gold result aligned with (or nearest by value)."
    ),
    favor: list[str] = typer.Option(
        [], "--favor", help="Run id drawn for with a share of its own (repeatable): the rows that will decide rankings."
    ),
    favor_share: float = typer.Option(0.3, min=0.0, max=1.0, help="Share of each stratum held for the --favor runs."),
    run_cap: float = typer.Option(0.2, min=0.01, max=1.0, help="At most this share of a stratum from any other run."),
    exclude: list[Path] = typer.Option(
        [],
        "--exclude",
        help="Judged (or drawn) pairs JSONL whose pairs are never drawn, string and result pairs alike (repeatable) "
        "[default: the judged sets in gold/ when the first stratified set was drawn (scoring.validity.JUDGED_SETS)].",
    ),
    seed: int = typer.Option(38, help="Seed of the draw."),
    runs_dir: Path = typer.Option(None, help=RUNS_DIR_HELP),
) -> None:
    """Draw a stratified held-out set of scorer-validity pairs (issue 38): pairs the scorer matched
    but that are not identical, close pairs it left unmatched, and result tuples, spread over runs."""
    from paperfields.core.corpus import load_corpus
    from paperfields.scoring.validity import (
        JUDGED_SETS,
        STRATIFIED_BRIEF,
        blind_files,
        draw_stratified,
        stratified_lines,
    )

    gold_dir = paths.gold_dir()
    if blind_dir is not None and (blind_dir / "judgments.jsonl").exists():
        fail(f"{blind_dir} holds a judgments.jsonl: a judge has worked there; give an empty folder")
    excluded = exclude or [gold_dir / name for name in JUDGED_SETS if (gold_dir / name).is_file()]
    try:
        pairs, draw = draw_stratified(
            [_run_dir(r, runs_dir) for r in runs],
            gold_dir / "gold.jsonl",
            excluded,
            seed=seed,
            quotas={"matched": matched, "near_miss": near_miss, "results": results},
            favored=tuple(favor),
            favored_share=favor_share,
            run_cap=run_cap,
        )
        files = {}
        if blind_dir is not None:
            abstracts = {p.id: p.text for p in load_corpus(gold_dir / "corpus.jsonl")}
            brief_text = (brief or gold_dir / STRATIFIED_BRIEF).read_text(encoding="utf-8")
            files = {blind_dir / name: text for name, text in blind_files(pairs, abstracts, brief_text).items()}
    except (*_known_errors(), ValueError) as exc:
        fail(str(exc))
    if not pairs:
        fail(f"no candidate pairs in {', '.join(runs)}: nothing to draw", 1)
    files[out_path] = stratified_lines(pairs)
    files[out_path.with_name(out_path.stem + ".draw.json")] = draw.model_dump_json(indent=2) + "\n"
    for target, text in files.items():
        _write_text(target, text)
    _print_stratified(pairs, draw)
    console.print(f"wrote {plural(len(pairs), 'pair')}: {', '.join(str(t) for t in files)}", highlight=False)


def _print_stratified(pairs: list[dict[str, Any]], draw: Any) -> None:
    """Counts of a stratified draw: per stratum (drawn of available), per field and per run drawn for."""
    from collections import Counter

    fields = sorted({p["field"] for p in pairs})
    table = Table("stratum", "drawn", "quota", "available", *fields)
    by_field = Counter((p["stratum"], p["field"]) for p in pairs)
    for stratum, n in draw.counts.items():
        quota, available = draw.quotas.get(stratum, 0), draw.available[stratum]
        table.add_row(stratum, str(n), str(quota), str(available), *(str(by_field[(stratum, f)]) for f in fields))
    out.print(table)
    runs = Table("run drawn for", *draw.counts, "all", "source of")
    drawn = Counter((p["drawn_for"], p["stratum"]) for p in pairs)
    sources = Counter(r for p in pairs for r in p["runs"])
    for run in draw.runs:
        row = [drawn[(run, s)] for s in draw.counts]
        runs.add_row(run, *map(str, row), str(sum(row)), str(sources[run]))
    out.print(runs)


def _print_leaderboard(board, highlight: Optional[str] = None, wide: bool = False) -> None:
    """Print a :class:`~paperfields.scoring.board.Board` in the terminal, with its legend."""
    from paperfields.scoring.board import TERMINAL_LEGEND, TERMINAL_WIDTH

    if wide:
        Console(width=None if sys.stdout.isatty() else 240).print(board.terminal(highlight, wide))
    else:  # the default columns fit TERMINAL_WIDTH whatever the rows: the model column wraps to fit
        out.print(board.terminal(highlight, wide), width=min(out.width, TERMINAL_WIDTH))
    out.print(TERMINAL_LEGEND, highlight=False, markup=False)


def _with_options(options_type: type) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the flags of every field of ``options_type`` (a pydantic options model, see
    :mod:`paperfields.options`) after its own parameters; it is called with ``options``, the validated object."""

    def decorate(func: Callable[..., None]) -> Callable[..., None]:
        own = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for name, p in inspect.signature(func, eval_str=True).parameters.items()
            if name != "options"
        ]
        params = cli_parameters(options_type) + own

        def command(**given: Any) -> None:
            from pydantic import ValidationError

            from paperfields.core.errors import field_error

            fields = {k: given.pop(k) for k in list(given) if k in options_type.model_fields}
            try:
                options = options_type(**fields)
            except ValidationError as exc:  # what the parser cannot check: -o KEY=VALUE, an option given twice
                first = exc.errors()[0]
                own = not first["loc"] or first["loc"] == ("provider_options",)  # our message names the option
                fail(first["msg"].removeprefix("Value error, ") if own else field_error(exc))
            func(options, **given)

        command.__name__, command.__doc__ = func.__name__, func.__doc__
        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return decorate


class _RunCommand(TyperCommand):
    """``paperfields run``: its help names the providers, read from the registry, and the strategies, the
    prompt files of ``prompts/``, when the help is shown (so that starting the command line imports no
    backend, and a new provider or prompt file is listed without more)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from paperfields.extract.backends import offered_providers

        for param in self.params:
            if param.name == "backend" and "Providers:" not in (param.help or ""):
                param.help = f"{param.help} Providers: {', '.join(p + '/' for p in offered_providers())}."
            if param.name == "strategy" and "Strategies:" not in (param.help or ""):
                names = sorted(p.stem for p in paths.prompts_dir().glob("*.toml"))
                param.help = f"{param.help} Strategies: {', '.join(names)}."
        super().format_help(ctx, formatter)


def _corpus_beside(gold: Path, corpus: Optional[Path]) -> Path:
    """The corpus ``score`` reads: ``corpus`` when given, else ``corpus.jsonl`` beside the gold file, else the
    benchmark's (what ``--corpus``'s help promises, for imported predictions as for stored runs)."""
    if corpus is not None:
        return corpus
    beside = gold.parent / "corpus.jsonl"
    return beside if beside.is_file() else paths.gold_dir() / "corpus.jsonl"


@app.command(cls=_RunCommand)
@_with_options(RunOptions)
def run(
    options: RunOptions,
    corpus_path: Optional[Path] = typer.Option(
        None,
        "--corpus",
        help="Corpus JSONL to extract (from 'paperfields corpus build --out') [default: gold/corpus.jsonl]. Its "
        "papers have no gold split unless they are benchmark papers: use --split all. A run none of whose papers "
        "has gold is not scored; `show` and `report` show it.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar and no leaderboard; errors still print."),
    as_json: bool = typer.Option(
        False, "--json", help="Print the run's manifest (and scores) as JSON at the end, for scripts."
    ),
) -> None:
    """Extract a record from every abstract of a split, score it against gold, print the leaderboard.

    With no options: the offline local model (Qwen2.5-Coder-0.5B via llama.cpp), zero-shot, test split.
    Interrupted runs resume: run the same command again and finished papers are skipped.
    """
    from paperfields import api
    from paperfields.progress import RunProgress

    if not (quiet or as_json):
        console.print(f"loading backend {options.backend} ...")
    terminated = _Terminated()
    try:
        with terminated, RunProgress(console, disable=quiet or as_json) as progress:
            result = api.run(
                corpus_path,
                options,
                on_start=progress.on_start,
                on_paper=progress.on_paper,
                on_status=progress.on_status,
            )
    except _known_errors() as exc:
        fail(str(exc))
    except KeyboardInterrupt as exc:
        advice = getattr(exc, "advice", "interrupted; finished papers are saved, run the same command again to resume")
        if terminated.received:  # 128 + SIGTERM, as a shell reports a process the signal ended
            fail(advice.replace("interrupted", "terminated (SIGTERM)", 1), 128 + signal.SIGTERM)
        fail(advice, 130)
    _print_run(result, quiet, as_json)


class _Terminated:
    """Within its ``with`` block, SIGTERM (``kill PID``, a job scheduler's stop, a container's shutdown)
    interrupts the run as Ctrl-C does, so the run's folder is closed the same way: the totals so far and
    status ``incomplete`` in its manifest (Python's default action ends the process on the spot, and the
    manifest kept saying ``running``). ``received`` tells the caller which signal it was (exit 143, not 130)."""

    def __init__(self) -> None:
        self.received = False
        self._before: Any = None

    def _on_term(self, signum: int, frame: Any) -> None:
        self.received = True
        # whatever handles SIGINT now: asyncio.run's own (it cancels the main task, then raises
        # KeyboardInterrupt) during the run, Python's default (it raises) before it
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    def __enter__(self) -> _Terminated:
        if threading.current_thread() is threading.main_thread():  # signals can be set only there
            self._before = signal.signal(signal.SIGTERM, self._on_term)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._before is not None:
            signal.signal(signal.SIGTERM, self._before)
            self._before = None


def _print_run(result, quiet: bool, as_json: bool) -> None:
    """After ``paperfields run``: the summary, the advice (exit 1 at an error), the note, then the
    scores and the board (or, with ``--json``, the manifest and scores as JSON)."""
    say = (lambda *a, **k: None) if quiet or as_json else console.print
    say(result.summary, highlight=False, markup=False)
    for advice in result.advice:
        if advice.level == "error":
            fail(advice.message, 1)
        console.print(f"warning: {advice.message}", style="yellow", highlight=False, markup=False)
    if result.note:
        say(result.note, highlight=False, markup=False)
    scores = result.scores
    if as_json:
        import json

        print(
            json.dumps(
                {
                    "manifest": result.manifest.model_dump(mode="json"),
                    "scores": scores.model_dump(mode="json") if scores else None,
                    "note": result.note,
                }
            )
        )
    elif scores is not None and not quiet:
        console.print(_scores_line(scores), highlight=False, markup=False)
        try:
            _print_board_with(scores)
        except _known_errors() as exc:  # another run's files: this run is saved and scored all the same
            console.print(f"warning: no leaderboard: {exc}", style="yellow", highlight=False, markup=False)
    if not result.complete:  # scripts must notice a run that is not finished (the advice above says why)
        raise typer.Exit(1)


# Reply repairs that leave something out (the others read what
# was written another way), as the score command words them.
DROPPING_REPAIRS = {
    "result_dropped": "a result item that did not validate was left out",
    "item_dropped": "a quoted list item that did not validate was left out",
}


def _scores_line(scores) -> str:
    """One line for a scored run: headline (with CI only for a complete run), P/R, valid, papers."""
    from paperfields.scoring.board import fmt, fmt_ci, papers_cell

    ci = scores.headline_ci95 if scores.comparable else None
    note = "" if scores.comparable else " (no CI: partial or unfinished run)"
    return (
        f"{scores.run_id}: headline {fmt_ci(scores.headline, ci)}{note}, P {fmt(scores.precision)}, R "
        f"{fmt(scores.recall)}, per-paper F1 {fmt(scores.per_paper_f1)} (abstention credit), valid "
        f"{scores.valid_rate:.0%}, papers {papers_cell(scores)}"
    )


def _print_board_with(scores) -> None:
    """The published board of the run's split, with this run added (bold) unless it is a published one."""
    from paperfields.scoring.board import Board
    from paperfields.scoring.runs import collect_scores

    published = paths.published_runs_dir()
    board = [s for s in (collect_scores(published) if published.is_dir() else []) if s.split == scores.split]
    if any(s.run_id == scores.run_id and s.predictions_sha256 == scores.predictions_sha256 for s in board):
        _print_leaderboard(Board.of(board), highlight=scores.run_id)  # this run is a published one
        return
    mine = scores.model_copy(
        update={"run_id": scores.run_id + " (yours)"}
    )  # beside a published run of the same id, not instead of it
    _print_leaderboard(Board.of(board + [mine]), highlight=mine.run_id)


def _run_dir(run: str, runs_dir: Optional[Path]) -> Path:
    """A run's folder (see :func:`paperfields.api.find_run`), or exit 2 with the places looked in."""
    from paperfields.api import find_run
    from paperfields.core.runlog import RunError

    try:
        return find_run(run, runs_dir)
    except RunError as exc:
        fail(str(exc))


@app.command("score")
def score_cmd(
    runs: Optional[list[str]] = typer.Argument(
        None, help="Run ids (folders under runs/ or results/runs) or run folder paths."
    ),
    predictions: Optional[Path] = typer.Option(
        None,
        "--predictions",
        help='Score an outside system\'s predictions: a JSONL file with one {"paper_id": ..., "record": {...}} per '
        "line (nothing else required). Imported as a run folder under --runs-dir (default runs/).",
    ),
    name: Optional[str] = typer.Option(
        None,
        "--name",
        help="With --predictions: the system's name, e.g. my-system or annotator/second-blind "
        "(annotator/ and rules/ names are references, never ranked).",
    ),
    split: str = typer.Option(
        "test",
        help="With --predictions: the split the predictions are for (test, dev or all); "
        "papers of it missing from the file make a partial run.",
    ),
    gold_path: Path = typer.Option(
        None,
        "--gold",
        help="Gold JSONL [default: gold/gold.jsonl]. Scores against another gold file are printed only: the run's "
        "scores.json (what the leaderboard reads) is left alone.",
    ),
    corpus_path: Path = typer.Option(
        None,
        "--corpus",
        help="Corpus JSONL with the abstracts (for grounding) [default: "
        "corpus.jsonl beside the gold file, else gold/corpus.jsonl].",
    ),
    runs_dir: Path = typer.Option(None, help=RUNS_DIR_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print each run's scores as a JSON line (for scripts)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors."),
    semantic: bool = typer.Option(
        False,
        "--semantic",
        help="Compute the semantic tier's cosines that a run's semantic.jsonl lacks (an embedding model beside the "
        "headline, never ranked; needs pip install -e '.[semantic]'). Without it the stored cosines are read.",
    ),
) -> None:
    """Re-score stored runs against gold (no model is called); writes scores.json and paper_scores.jsonl.

    Exit 1 when a run has no gold for any of its papers (a corpus of your own: nothing to score; the
    other runs given are scored all the same), 2 on an error."""
    from paperfields import api
    from paperfields.scoring.runs import NoGoldError

    gold = gold_path or paths.gold_dir() / "gold.jsonl"

    if predictions is not None:
        from paperfields.scoring.imported import import_predictions

        if not name:
            fail("--predictions needs --name (what to call the system on the board)")
        if runs:
            fail("give either run ids or --predictions, not both")
        try:
            folder = import_predictions(
                predictions, name, split, runs_dir or paths.user_runs_dir(), gold, _corpus_beside(gold, corpus_path)
            )
        except _known_errors() as exc:
            fail(str(exc))
        console.print(f"imported {predictions} as run folder {folder}", highlight=False, markup=False)
        runs = [str(folder)]
    if not runs:
        fail("give run ids to re-score, or --predictions FILE --name NAME")
    without_gold = False
    for name in runs:
        try:
            run_dir = _run_dir(name, runs_dir)
            scores = api.score(run_dir, gold=gold, corpus=corpus_path, semantic=semantic)
            asked = scores.papers_asked
        except (
            NoGoldError
        ) as exc:  # said once, here (it names the run); the other runs are scored all the same, then exit 1
            console.print(f"error: {exc}", style="bold red", highlight=False, markup=False)
            without_gold = True
            continue
        except _known_errors() as exc:
            fail(str(exc))
        if asked is not None and scores.papers < asked:
            console.print(
                f"warning: {gold} has gold for {scores.papers} of the run's {asked} papers; only those are scored",
                style="yellow",
                highlight=False,
                markup=False,
            )
        dropped = {k: v for k, v in scores.repairs.items() if k in DROPPING_REPAIRS}
        if dropped:  # the other repairs keep what was written; these left items out, which a user should hear of
            console.print(
                f"warning: {scores.run_id}: "
                + "; ".join(
                    f"{DROPPING_REPAIRS[k]} on {v} paper{'s' if v > 1 else ''} ({k})" for k, v in dropped.items()
                )
                + "; each paper's line in predictions.jsonl lists its repairs",
                style="yellow",
                highlight=False,
                markup=False,
            )
        if as_json:
            print(scores.model_dump_json())
        elif not quiet:
            out.print(_scores_line(scores), highlight=False, markup=False)
    if without_gold:
        raise typer.Exit(1)


@app.command("import-inspect")
def import_inspect(
    log: Path = typer.Argument(
        ..., help="An inspect eval log of the paperfields/paperfields task (logs/<...>.eval or .json)."
    ),
    run_id: Optional[str] = typer.Option(
        None, "--run-id", help="Run folder name [default: inspect_<model>__<strategy>__<split>]."
    ),
    runs_dir: Path = typer.Option(None, help="Where to write the run folder [default: runs/]."),
) -> None:
    """Turn an inspect eval log of the paperfields task into a
    run folder (predictions.jsonl, manifest.json), then score it.

    The run is then compared, reported and published like any other. Needs the inspect extra:
    pip install -e '.[inspect]'. Exit 1 when the run has no gold (a corpus of your own) or is incomplete
    (samples that errored or never ran: `inspect eval` itself exits 0 then), 2 on an error."""
    from paperfields import api
    from paperfields.core.runlog import load_manifest
    from paperfields.scoring.runs import NoGoldError

    try:
        from paperfields.integrations.inspect_log import import_inspect_log
    except ImportError as exc:
        fail(f"import-inspect needs inspect_ai ({exc}); install it with: pip install -e '.[inspect]'")
    try:
        folder = import_inspect_log(log, runs_dir, run_id)
        console.print(f"imported {log} as run folder {folder}", highlight=False, markup=False)
        scores = api.score(folder)
    except NoGoldError as exc:
        fail(str(exc), 1)
    except _known_errors() as exc:
        fail(str(exc))
    out.print(_scores_line(scores), highlight=False, markup=False)
    manifest = load_manifest(folder)
    if manifest.status != "complete":  # scripts must notice, as after paperfields run (inspect eval exits 0 here)
        missing = len(manifest.paper_ids) - manifest.papers_done
        fail(
            f"the eval is incomplete: {plural(missing, 'paper')} of {len(manifest.paper_ids)} errored or never ran "
            f"in {log.name}; run `inspect eval-retry {log}`, then import the new log",
            1,
        )


@app.command("inspect-register")
def inspect_register(
    logs: list[Path] = typer.Argument(
        ..., help="Eval logs of the paperfields/paperfields task, complete test-split runs made from one clean commit."
    ),
    repository_url: str = typer.Option(
        ..., "--repository-url", help="Where the PaperFields repository is published (source.repository_url)."
    ),
    maintainers: list[str] = typer.Option(
        ..., "--maintainer", help="GitHub user or org maintaining the repository (repeatable)."
    ),
    out: Path = typer.Option(Path("register/paperfields/eval.yaml"), "--out", help="The register entry to write."),
    logs_out: Optional[Path] = typer.Option(
        None,
        "--logs-out",
        help="Where to keep header-only JSON copies of the logs, from which the "
        "entry is made again [default: logs/ beside --out].",
    ),
) -> None:
    """Write PaperFields' Inspect Evals Register entry (register/<eval>/eval.yaml) with the evaluation report of LOGS.

    The report's rows (model, headline and its 95% CI, valid rate, tokens, time, papers) come from the
    logs, and the entry is pinned to the commit they were made from; the entry is checked against the
    register's format before it is written. Refused (exit 2): a log of another task, an errored,
    unfinished or --limit run, one of the dev split, logs of different commits or of a dirty checkout.
    The logs' headers are kept as JSON beside the entry (--logs-out), so the entry can be made again."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from paperfields.hub import dump_yaml
    from paperfields.integrations.inspect_register import register_entry

    headers = []
    for path in logs:
        try:
            headers.append(read_eval_log(str(path), header_only=True))
        except Exception as exc:  # inspect raises its own and pydantic's errors for a file that is not a log
            fail(f"{path}: not an inspect eval log ({type(exc).__name__}: {str(exc)[:200]})")
    try:
        entry = register_entry(headers, repository_url, maintainers)
    except _known_errors() as exc:
        fail(str(exc))
    _write_text(out, dump_yaml(entry))
    kept = logs_out or out.parent / "logs"
    kept.mkdir(parents=True, exist_ok=True)
    for header in headers:
        target = kept / (header.eval.model.replace("/", "_") + ".json")
        if Path(header.location).resolve() != target.resolve():  # the header without its per-sample reductions
            write_eval_log(header.model_copy(update={"reductions": None}), str(target), format="json")
    rows = entry["evaluation_report"]["results"]
    console.print(
        f"wrote {out}: {plural(len(rows), 'row')} pinned to {entry['source']['repository_commit'][:12]}",
        highlight=False,
        markup=False,
    )


@app.command()
def compare(
    run_a: str = typer.Argument(..., help="Baseline run (id or folder)."),
    run_b: str = typer.Argument(..., help="Run compared with it (id or folder)."),
    top: int = typer.Option(
        5, min=1, help="How many papers with the largest difference to list (papers scored alike are never listed)."
    ),
    runs_dir: Path = typer.Option(None, help=RUNS_DIR_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON (for scripts)."),
) -> None:
    """Paired bootstrap per field (B - A, 95% CI, p-value) on the
    papers both runs scored, and the papers where they differ most.

    The title says on how many papers both runs scored, and of how many each run scored; a warning says
    when a run's scores shown here are over fewer papers than its own scores (the board's). Exit 1 when a
    run has no gold for any of its papers (a corpus of your own: nothing to compare), 2 on an error."""
    from paperfields.scoring.compare import compare
    from paperfields.scoring.runs import NoGoldError

    try:
        dir_a, dir_b = _run_dir(run_a, runs_dir), _run_dir(run_b, runs_dir)
        result = compare(dir_a, dir_b, top, paths.gold_dir() / "gold.jsonl")
    except NoGoldError as exc:  # as score and publish: 1 says the run has no gold, 2 is an error
        fail(str(exc), 1)
    except (ValueError, *_known_errors()) as exc:
        fail(str(exc))
    rows, papers, n = result.fields, result.papers, result.shared_papers
    if result.same_run:
        console.print(f"note: A and B are the same run ({dir_a}): every difference is 0", highlight=False, markup=False)
    elif result.same_predictions:
        console.print(
            f"note: A ({dir_a}) and B ({dir_b}) have identical predictions: every difference is 0",
            highlight=False,
            markup=False,
        )
    for label, run, scored in (("A", run_a, result.scored_papers_a), ("B", run_b, result.scored_papers_b)):
        if scored > n:  # the other run did not score the rest: this run's own (board) scores are over more papers
            console.print(
                f"warning: {label}'s scores here are over {n} of the {scored} papers {run} scored (the papers both "
                "runs scored), not its own scores over all of them",
                style="yellow",
                highlight=False,
                markup=False,
            )
    if as_json:
        import json

        print(
            json.dumps(
                {
                    "a": run_a,
                    "b": run_b,
                    "fields": [r.model_dump() for r in rows],
                    "papers": papers,
                    "shared_papers": n,
                    "scored_papers_a": result.scored_papers_a,
                    "scored_papers_b": result.scored_papers_b,
                    "same_run": result.same_run,
                    "same_predictions": result.same_predictions,
                }
            )
        )
        return
    from paperfields.scoring.board import UNDEFINED, fmt, fmt_p

    on = (
        f"on {plural(n, 'paper')} both runs scored; A has {n} of its "
        f"{result.scored_papers_a}, B {n} of its {result.scored_papers_b}"
        if not result.same_run
        else f"the same run with itself, on its {plural(n, 'scored paper')}"
    )
    table = Table(
        title=f"B = {run_b}  vs  A = {run_a}  ({on}; paired bootstrap over "
        "papers; pooled micro F1 / accuracy, higher is better)"
    )
    for col in ("field", "A", "B", "B - A", "95% CI", "p", "papers differing"):
        table.add_column(col)
    for r in rows:
        ci = UNDEFINED if r.ci95 is None else f"[{r.ci95[0]:+.3f}, {r.ci95[1]:+.3f}]"
        table.add_row(
            r.field,
            fmt(r.a),
            fmt(r.b),
            UNDEFINED if r.diff is None else f"{r.diff:+.3f}",
            ci,
            fmt_p(r.p_value),
            str(r.papers_differing),
        )
    out.print(table)
    if not papers:
        out.print("no paper differs between the two runs", highlight=False)
        return
    listing = Table(
        title=f"Papers where B and A differ most, largest per-paper F1 difference first (at most --top {top})",
        title_justify="left",
    )
    for col in ("paper", "per-paper F1 A", "per-paper F1 B", "B - A", "headline fields whose item counts differ"):
        listing.add_column(
            col, justify="right" if col.startswith(("per-paper", "B - A")) else "left", no_wrap=col == "paper"
        )
    for p in papers:
        listing.add_row(
            p["paper_id"],
            f"{p['a']:.3f}",
            f"{p['b']:.3f}",
            f"{p['b'] - p['a']:+.3f}",
            ", ".join(p["fields"]) or "none: per-paper F1 only",
        )
    out.print(listing)


@app.command()
def report(
    run: str = typer.Argument(..., help="Run id or folder (scored, unless none of its papers has gold)."),
    out_path: Path = typer.Option(None, "--out", help="HTML file [default: <run folder>/report.html]."),
    runs_dir: Path = typer.Option(None, help=RUNS_DIR_HELP),
    corpus_path: Optional[Path] = typer.Option(
        None,
        "--corpus",
        help="Corpus JSONL with the run's abstracts [default: the run's "
        "corpus, as its manifest records, else gold/corpus.jsonl].",
    ),
) -> None:
    """One self-contained HTML report of a run: summary, per-field plot,
    and per paper the highlighted abstract with gold vs prediction.

    A run over a corpus of your own without gold is reported too: each abstract with its prediction."""
    from paperfields.report import write_report

    try:
        target = write_report(_run_dir(run, runs_dir), paths.gold_dir() / "gold.jsonl", corpus_path, out_path)
    except _known_errors() as exc:
        fail(str(exc))
    console.print(f"wrote {target}")


@app.command()
def show(
    paper_id: str = typer.Argument(..., help="Paper id (see gold/corpus.jsonl, or the run's corpus)."),
    run: Optional[str] = typer.Option(None, help="Run id or folder whose prediction to show [default: only gold]."),
    runs_dir: Path = typer.Option(None, help=RUNS_DIR_HELP),
    corpus_path: Optional[Path] = typer.Option(
        None,
        "--corpus",
        help="Corpus JSONL holding the abstract [default: the run's "
        "corpus, as its manifest records, else gold/corpus.jsonl].",
    ),
) -> None:
    """The abstract with gold and prediction side by side in the terminal, matches and misses marked.

    Any run works: a paper of a corpus of your own, with no gold, shows its prediction alone."""
    from rich.text import Text

    from paperfields.api import run_corpus_path
    from paperfields.core.corpus import load_corpus
    from paperfields.core.gold import load_gold
    from paperfields.core.runlog import read_predictions
    from paperfields.report import paper_rows, paper_spans, prediction_rows

    line = None
    try:
        run_dir = _run_dir(run, runs_dir) if run else None
        corpus_path = corpus_path or (run_corpus_path(run_dir) if run_dir else paths.gold_dir() / "corpus.jsonl")
        gold = {g.id: g for g in load_gold(paths.gold_dir() / "gold.jsonl")}
        papers = {p.id: p for p in load_corpus(corpus_path)}
        if run_dir:
            line = next((l for l in read_predictions(run_dir / "predictions.jsonl") if l.paper_id == paper_id), None)
    except _known_errors() as exc:
        fail(str(exc))
    if paper_id not in papers:
        fail(f"no paper '{paper_id}' in {corpus_path}")
    if run and line is None:
        fail(f"run '{run}' has no prediction for {paper_id}")
    if not run and paper_id not in gold:
        fail(
            f"no gold for paper '{paper_id}' in {paths.gold_dir() / 'gold.jsonl'}; "
            "give --run RUN to see a run's prediction for it"
        )
    paper, g = papers[paper_id], gold.get(paper_id)
    styles = {
        "both": "black on green",
        "gold": "black on yellow",
        "pred": "black on red",
        "predicted": "black on magenta",
        "quote": "black on cyan",
    }
    text = Text(paper.text)
    spans = paper_spans(paper.text, g, line)  # the line's stored grounding: the spans the scorer and report read
    for start, end, kind in sorted(
        spans, key=lambda s: s[2] != "quote"
    ):  # a quote first, so the items in it show over it
        text.stylize(styles[kind], start, end)
    out.print(
        Text.assemble(
            (paper_id, "bold"), f" ({paper.source}, #{paper.position}, {f'split {g.split}' if g else 'no gold'})"
        )
    )
    out.print(text)
    if g:
        out.print(
            "[black on green]gold and predicted[/] [black on yellow]gold, "
            "missed[/] [black on red]predicted, not gold[/]"
            + (" [black on cyan]evidence quote[/]" if any(kind == "quote" for _, _, kind in spans) else "")
        )
    else:  # nothing to be right or wrong against: a prediction is only marked where the abstract has it
        out.print(
            "[black on magenta]predicted[/] (no gold for this paper: predictions only)"
            + (" [black on cyan]evidence quote[/]" if any(kind == "quote" for _, _, kind in spans) else "")
        )
    if line and line.failure:
        out.print(
            Text(f"no record: {line.failure.value}: {line.error}", style="red")
        )  # the error text may hold [/...]: never markup
    table = Table(show_lines=True)
    if g is None:
        for col in ("field", "prediction"):
            table.add_column(col)
        for row in prediction_rows(line):
            table.add_row(row["field"], Text(row["pred"]))
        out.print(table)
        return
    for col in ("field", "gold", "prediction" if run else "prediction (no --run)", "F1"):
        table.add_column(col)
    for row in paper_rows(line, g, paper.text):
        mark = "[green]" if row["f1"] == 1 else "[red]"
        table.add_row(
            row["field"],
            Text(row["gold"]),
            Text(row["pred"] if run else "-"),
            f"{mark}{row['f1']:.2f}[/]" if run else "",
        )
    out.print(table)


@app.command()
def export(
    out_dir: Path = typer.Argument(..., help="Folder to write the dataset into (Hub layout)."),
    predictions: bool = typer.Option(
        True,
        help="Also export every published run (results/runs) as a 'predictions' split (an earlier export's "
        "predictions/*.parquet not written again are removed).",
    ),
    runs_dir: Path = typer.Option(None, help="The published runs to export [default: results/runs]."),
    include_partial: list[str] = typer.Option(
        [],
        "--include-partial",
        help="A partial or unfinished run to export all the same (repeatable); others are refused.",
    ),
) -> None:
    """Write the corpus + gold (and the published predictions)
    as a Hugging Face dataset folder with a generated card."""
    from paperfields.export import card_extras, export_dataset

    earlier = set((out_dir / "predictions").glob("*.parquet"))
    try:
        files = export_dataset(
            out_dir,
            paths.gold_dir() / "gold.jsonl",
            paths.gold_dir() / "corpus.jsonl",
            (runs_dir or paths.published_runs_dir()) if predictions else None,
            card_extras(paths.gold_dir(), paths.results_dir()),
            include_partial=set(include_partial),
        )
    except _known_errors() as exc:
        fail(str(exc))
    for f in files:
        console.print(f"wrote {f}")
    for f in sorted(earlier - set(files)):
        console.print(f"removed {f} (predictions of an earlier export that this one does not include)")


@app.command()
def publish(
    run: str = typer.Argument(..., help="Run id (under runs/, or under --runs-dir) or run folder to publish."),
    runs_dir: Path = typer.Option(None, help="Where the run is [default: runs/]: the --runs-dir it was run with."),
    allow_partial: bool = typer.Option(
        False,
        "--allow-partial",
        help="Publish a partial or unfinished run all the same (it is listed apart, never ranked).",
    ),
    allow_dirty: bool = typer.Option(
        False,
        "--allow-dirty",
        help="Publish a run made from a checkout with uncommitted changes (its manifest's git_commit ends in -dirty); "
        "refused by default, because no commit holds the code that made it.",
    ),
) -> None:
    """Move a finished, scored run from runs/ into results/runs
    (the published set that the leaderboard, export and push use).

    Then run `paperfields leaderboard` to regenerate the board and commit both. A run none of whose papers
    has gold (a corpus of your own) has no scores and no place on the board: exit 1 saying so, nothing
    written; 2 on any other refusal or error."""
    from paperfields import api
    from paperfields.scoring.runs import NoGoldError

    source = _run_dir(run, runs_dir)
    try:
        target = api.publish(source, allow_partial=allow_partial, allow_dirty=allow_dirty)
    except NoGoldError as exc:
        fail(str(exc), 1)
    except _known_errors() as exc:
        fail(str(exc))
    console.print(
        f"published {source} -> {target}; now run `paperfields leaderboard` and commit both",
        highlight=False,
        markup=False,
    )


@app.command()
def push(
    repo_id: Optional[str] = typer.Argument(
        None, help="Hub dataset repo, e.g. your-name/paperfields (or give --space)."
    ),
    space_name: Optional[str] = typer.Option(
        None,
        "--space",
        help="Upload the leaderboard Space written by `paperfields space` to this Space, e.g. "
        "your-name/paperfields-board, instead of a dataset.",
    ),
    folder: Optional[Path] = typer.Option(
        None,
        help="Folder to upload [default: dist/paperfields, written by `paperfields export`; with "
        "--space: dist/space, written by `paperfields space`].",
    ),
    private: bool = typer.Option(False, help="Create the repo as private."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the files and the commit it would make; upload nothing."
    ),
    include_partial: list[str] = typer.Option(
        [],
        "--include-partial",
        help="A partial or unfinished run to upload all the same (repeatable); others are refused.",
    ),
) -> None:
    """Upload an exported dataset folder (or, with --space, the leaderboard Space)
    to the Hugging Face Hub (token from HF_TOKEN or `huggingface-cli login`)."""
    import json

    from paperfields.export import push_dataset
    from paperfields.space import push_space

    if (repo_id is None) == (space_name is None):
        fail(
            "give a dataset repo (`paperfields push you/paperfields`) or a Space (`paperfields "
            "push --space you/paperfields-board`), one of them"
        )
    folder = folder or Path("dist/space" if space_name is not None else "dist/paperfields")
    if space_name is None and not (folder / "README.md").is_file():
        fail(f"{folder}: no exported dataset here (run `paperfields export {folder}` first)")
    try:
        plan = (
            push_space(folder, space_name, private, dry_run)
            if space_name is not None
            else push_dataset(folder, repo_id, private, dry_run, set(include_partial))
        )
    except RuntimeError as exc:
        fail(str(exc))
    for warning in plan.get("warnings", []):
        console.print(f"warning: {warning}", style="yellow", highlight=False, markup=False)
    out.print_json(json.dumps(plan))


@app.command("hub-result")
def hub_result(
    run: str = typer.Argument(
        ..., help="A scored, complete run of the test split (id or folder), e.g. a published run."
    ),
    dataset: str = typer.Option(
        ..., "--dataset", help="The benchmark's Hub dataset id (owner/name): where `paperfields push` put the export."
    ),
    out_dir: Path = typer.Option(
        None,
        "--out",
        help="The model repository's folder to write .eval_results/ into [default: dist/eval_results/<run id>].",
    ),
    revision: Optional[str] = typer.Option(
        None, "--revision", help="The benchmark dataset's commit on the Hub the scores are for (dataset.revision)."
    ),
    source_url: Optional[str] = typer.Option(
        None,
        "--source-url",
        help="Where the run's folder can be read (its predictions and manifest), e.g. a commit's tree URL.",
    ),
    runs_dir: Path = typer.Option(None, help=RUNS_DIR_HELP),
) -> None:
    """Write the .eval_results/paperfields_<strategy>.yaml a model
    repository commits to report a run on the Hub benchmark.

    One entry per task of the export's eval.yaml (the headline, then each field's score) with the run's
    value, its 95% CI, the model, prompt and versions in notes, and the run's end as date; checked
    against the Hub's format before it is written. Reference runs (rules/*, annotators), partial and
    unfinished runs and runs of another split than test are refused (exit 2)."""
    from paperfields.core.runlog import load_manifest
    from paperfields.hub import eval_results, write_eval_results
    from paperfields.scoring.runs import load_scored_run

    folder = _run_dir(run, runs_dir)
    try:
        scores, _ = load_scored_run(folder, paths.gold_dir() / "gold.jsonl")
        manifest = load_manifest(folder)
        entries = eval_results(scores, manifest, dataset, revision, source_url)
        target = write_eval_results(
            entries, out_dir or Path("dist/eval_results") / scores.run_id, manifest.config.strategy
        )
    except _known_errors() as exc:
        fail(str(exc))
    console.print(
        f"wrote {target}: {plural(len(entries), 'task')} of {dataset} for {scores.run_id} (headline "
        f"{scores.headline:.4f}); commit it in the model's repository (or open a pull request there)",
        highlight=False,
        markup=False,
    )


def _write_board(board, runs_dir: Path, gold_path: Path, target: Path, plots: bool, html: bool = True) -> list[Path]:
    """Write the board files of ``board`` (the runs of ``runs_dir``): ``target`` (Markdown), the .csv,
    difficulty.md, (``html``) the web page with the reports it links and (``plots``) the PNG plots
    beside it, and for the published board the README's board block; returns the files written."""
    _write_text(target, board.markdown())
    _write_text(target.with_suffix(".csv"), board.csv())
    written = [target, target.with_suffix(".csv")]
    _start_figures(board, target.parent, plots, html)  # drawn in worker processes while the view is computed
    view = _difficulty(runs_dir, gold_path, board.runs)
    written.append(_write_difficulty(view, target.parent / "difficulty.md"))
    if html:
        # the reports show the published runs' most-missed items: this very view when the board is of them
        published = runs_dir.resolve() == paths.published_runs_dir().resolve()
        written += _write_site(
            board,
            runs_dir,
            target.parent,
            target.with_suffix(".html").name,
            target.with_suffix(".csv").name,
            "difficulty.md",
            view if published else None,
        )
    if plots:
        from paperfields.plots import write_plots

        written += write_plots(board, target.parent)
    if target.resolve() == (paths.results_dir() / "leaderboard.md").resolve() and runs_dir.resolve() == (
        paths.published_runs_dir().resolve()
    ):  # the published board: the README's board block follows it
        written += _write_readme_block(board)
    return written


def _start_figures(board, folder: Path, plots: bool, html: bool) -> None:
    """Start drawing the figures the board files will hold (paperfields/figures.py: nothing outside its
    ``drawing`` block, nothing for a figure already in the plot cache): the PNG plots and each report's bars."""
    if plots:
        from paperfields.plots import start_plots

        start_plots(board, folder)
    if html:
        from paperfields import figures
        from paperfields.report import field_bars

        for s in board.runs:
            draw, inputs = field_bars(s)
            figures.submit(draw, *inputs)


def _write_readme_block(board) -> list[Path]:
    """Write the top of ``board`` between the README's markers (paperfields/summary.py); the README
    written, or none when the project has no README with the markers."""
    from paperfields.summary import write_readme_block

    readme = paths.project_root() / "README.md"
    try:
        return [readme] if write_readme_block(readme, board) else []
    except OSError as exc:
        fail(f"cannot write {readme}: {exc.strerror or exc}")


def _difficulty(runs_dir: Path, gold_path: Path, scores):
    """What models get wrong (scoring/difficulty.py) over the board's runs (``scores``, in ``runs_dir``),
    computed once for difficulty.md and every report, or fail naming the problem."""
    from paperfields.scoring.difficulty import load_difficulty

    try:
        return load_difficulty(runs_dir, gold_path, scores=list(scores))
    except _known_errors() as exc:
        fail(str(exc))


def _write_difficulty(view, target: Path) -> Path:
    """Write the difficulty ``view`` as Markdown to ``target``."""
    from paperfields.scoring.difficulty import difficulty_markdown

    _write_text(target, difficulty_markdown(view))
    return target


@app.command()
def leaderboard(
    runs_dir: Path = typer.Option(
        None, help="The published runs [default: results/runs]; your own runs are in runs/ until `paperfields publish`."
    ),
    out_path: Path = typer.Option(
        None,
        "--out",
        help="Markdown file to write [default: results/leaderboard.md]; the .csv, difficulty.md, the web page "
        "(.html), its reports/ and the PNG plots go beside it.",
    ),
    plots: bool = typer.Option(True, help="Also write the PNG plots next to the board."),
    html: bool = typer.Option(
        True,
        help="Also write the web leaderboard (.html beside the Markdown) and each run's "
        "report under reports/ beside it, which the page links.",
    ),
    write: bool = typer.Option(True, help="Write the board files; --no-write only prints."),
    wide: bool = typer.Option(
        False,
        "--wide",
        help="More columns in the terminal: invented rate, dollars, seconds per correct item, "
        "contamination, per-paper F1 and every headline field's score.",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print the board as a JSON array, one object per run (rank, headline, "
        "headline_ci95, reference, papers, ...), instead of a table.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors."),
) -> None:
    """Regenerate results/leaderboard.md, .csv, difficulty.md (what models get wrong), .html (with each
    run's report in results/reports/) and the PNG plots from the published runs, and print the board.

    Ranked by the headline (micro F1 per field, macro over fields); references (rules/*, a blind second
    labeling under annotator/*) and partial or unfinished runs are listed apart with no rank. Open
    results/leaderboard.html in a browser to sort, filter and follow a run to its report."""
    from paperfields.core.readonce import read_once
    from paperfields.figures import drawing

    runs_dir = runs_dir or paths.published_runs_dir()
    gold_path = paths.gold_dir() / "gold.jsonl"
    # each stored file read and each prediction line validated once, for the board and every report; the
    # figures drawn in worker processes meanwhile, or taken from the plot cache
    with read_once(), drawing():
        board = _published_board(runs_dir)
        written = (
            _write_board(board, runs_dir, gold_path, out_path or paths.results_dir() / "leaderboard.md", plots, html)
            if write
            else []
        )
    if as_json:
        print(board.json())
    elif not quiet:
        _print_leaderboard(board, wide=wide)
        for path in written:
            console.print(f"wrote {path}")


def _submissions_dir(folder: Optional[Path]) -> Path:
    return folder or paths.project_root() / "submissions"


def _submission_folder(root: Path, name: str) -> Path:
    """``root/name`` for a plain submission name (a folder directly under the submissions folder), or exit 1
    naming the rule: no path (``../x``, ``/abs``, ``a/b``), nothing but the characters of a run id; an invisible
    character (a bidirectional control, a zero-width one) is named by its code point."""
    from paperfields.scoring.submissions import NAME, invisible_problem

    if hidden := invisible_problem(f"{name!r}:", name, "the name"):
        fail(
            f"{hidden}; a submission is a folder directly under {root}, named with lower-case letters, digits, "
            "'.', '_' or '-'",
            1,
        )
    if not NAME.fullmatch(name):
        fail(
            f"{name!r} is not a submission name: a submission is a folder directly under {root}, named with lower-case "
            "letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit); no path",
            1,
        )
    return root / name


@submission_app.command("check")
def submission_check(
    names: Optional[list[str]] = typer.Argument(
        None, help="Submission names (folders under submissions/) [default: every submission]."
    ),
    folder: Path = typer.Option(None, "--dir", help="The submissions folder [default: submissions/]."),
    runs_dir: Path = typer.Option(
        None, help="The published runs a submission may not copy [default: results/runs]; gold is compared always."
    ),
) -> None:
    """Check submissions (what CI runs over every one): submission.toml, every line of predictions.jsonl against the
    record's JSON Schema and model, every test paper exactly once, no dev paper, known ids, sizes. Writes nothing.

    Prints each problem as file:line: field 'x': what is wrong.
    Exit 1 when a submission has a problem, 2 on an error."""
    from paperfields.scoring.submissions import check_submission

    root = _submissions_dir(folder)
    chosen = (
        [_submission_folder(root, n) for n in names]
        if names  # a link is listed, so that check refuses it rather than skip it
        else sorted(p for p in root.glob("*") if (p.is_dir() or p.is_symlink()) and not p.name.startswith("."))
    )
    if not chosen:
        console.print(f"no submissions under {root}", highlight=False, markup=False)
        return
    bad = 0
    for path in chosen:
        try:
            check = check_submission(
                path,
                paths.gold_dir() / "gold.jsonl",
                paths.gold_dir() / "corpus.jsonl",
                runs_dir or paths.published_runs_dir(),
            )
        except _known_errors() as exc:
            fail(str(exc))
        if check.ok:
            out.print(
                f"ok {check.name}: {check.papers} test papers, "
                f"{check.meta.provider}/{check.meta.model}, {check.meta.strategy}",
                highlight=False,
                markup=False,
            )
            continue
        bad += 1
        for problem in check.problems:
            console.print(f"error: {problem}", style="bold red", highlight=False, markup=False)
    if bad:
        console.print(
            f"{plural(bad, 'submission')} of {len(chosen)} with problems; fix them and check again",
            highlight=False,
            markup=False,
        )
        raise typer.Exit(1)


@submission_app.command("add")
def submission_add(
    name: str = typer.Argument(
        ..., help="Submission name: the folder submissions/<name>/ with submission.toml and predictions.jsonl."
    ),
    folder: Path = typer.Option(None, "--dir", help="The submissions folder [default: submissions/]."),
    runs_dir: Path = typer.Option(
        None, help="The published runs [default: results/runs]; the board files are written to its parent folder."
    ),
    plots: bool = typer.Option(True, help="Also write the PNG plots next to the board."),
) -> None:
    """Check a submission, score it into results/runs/<name>__submitted__test
    and regenerate the board, where it is marked submitted.

    A submission with a problem is refused, each problem named (file:line: field), and nothing changes (exit 1)."""
    from paperfields.scoring.board import Board
    from paperfields.scoring.runs import collect_scores
    from paperfields.scoring.submissions import SubmissionError, add_submission

    runs_dir = runs_dir or paths.published_runs_dir()
    gold_path = paths.gold_dir() / "gold.jsonl"
    try:
        run_dir = add_submission(
            _submission_folder(_submissions_dir(folder), name), gold_path, paths.gold_dir() / "corpus.jsonl", runs_dir
        )
    except SubmissionError as exc:
        fail(str(exc), 1)
    except _known_errors() as exc:
        fail(str(exc))
    try:
        board = Board.of(collect_scores(runs_dir), gold_path)
    except _known_errors() as exc:
        fail(str(exc))
    for path in _write_board(
        board, runs_dir, gold_path, runs_dir.parent / "leaderboard.md", plots
    ):  # results/ beside results/runs
        console.print(f"wrote {path}", highlight=False, markup=False)
    console.print(
        f"scored {name} into {run_dir}; it is on the board marked submitted. Commit "
        f"submissions/{name}, results/ and README.md (its board block) together",
        highlight=False,
        markup=False,
    )


@submission_app.command("from-run")
def submission_from_run(
    run: str = typer.Argument(..., help="A finished run of `paperfields run` over the test split: its id or folder."),
    name: str = typer.Option(
        ...,
        "--name",
        help="The submission's name: the folder submissions/<name>/ and the run id <name>__submitted__test.",
    ),
    runs_dir: Path = typer.Option(None, help="Where the run is [default: runs/, then results/runs]."),
    folder: Path = typer.Option(None, "--dir", help="The submissions folder [default: submissions/]."),
) -> None:
    """Turn a run into a submission: write submissions/<name>/ with the run's predictions in the submission format
    and a submission.toml filled from its manifest (model, provider,
    date, strategy, mode, prompt hash, cutoff when known).

    What only you can say (submitted_by) is marked FILL IN: `submission check` refuses it until filled. Then
    `paperfields submission check NAME` and `paperfields submission add NAME` (CONTRIBUTING.md)."""
    from paperfields.scoring.submissions import PLACEHOLDER, SubmissionError
    from paperfields.scoring.submissions import submission_from_run as from_run

    try:
        made = from_run(
            _run_dir(run, runs_dir),
            name,
            _submissions_dir(folder),
            paths.gold_dir() / "gold.jsonl",
            paths.gold_dir() / "corpus.jsonl",
            paths.published_runs_dir(),  # --name may not read as a reference's name there, as `check` refuses it
        )
    except SubmissionError as exc:
        fail(str(exc), 1)
    except _known_errors() as exc:
        fail(str(exc))
    dir_flag = f" --dir {folder}" if folder else ""
    console.print(
        f"wrote {made}/ (predictions.jsonl, submission.toml). Next: replace {PLACEHOLDER!r} "
        f"in {made / 'submission.toml'}, then `paperfields submission check "
        f"{name}{dir_flag}` and `paperfields submission add {name}{dir_flag}`",
        highlight=False,
        markup=False,
    )


@submission_app.command("schema")
def submission_schema() -> None:
    """Print the JSON Schema of one line of a submission's predictions.jsonl."""
    import json

    from paperfields.scoring.submissions import line_schema

    print(json.dumps(line_schema(), indent=1))


def _published_board(runs_dir: Path):
    """The Board of the scored runs under ``runs_dir``, or fail naming what is wrong."""
    from paperfields.scoring.board import Board
    from paperfields.scoring.runs import collect_scores

    try:
        scores = collect_scores(runs_dir) if runs_dir.is_dir() else []
        if not scores:
            fail(f"no scored runs under {runs_dir} (run `paperfields run`, then `paperfields publish RUN`)")
        return Board.of(scores, paths.gold_dir() / "gold.jsonl")
    except _known_errors() as exc:
        fail(str(exc))


def _write_site(
    board,
    runs_dir: Path,
    out_dir: Path,
    page_name: str,
    csv_name: str,
    difficulty_name: Optional[str] = None,
    published=None,
) -> list[Path]:
    """Write the web page and the reports it links into ``out_dir`` (and a link to ``difficulty_name``, the
    difficulty view written beside it); returns the files written (removed stale reports are said on stderr).
    ``published``: the published runs' difficulty, when computed."""
    from paperfields.web import write_site

    try:
        site = write_site(
            board,
            runs_dir,
            out_dir,
            paths.gold_dir() / "gold.jsonl",
            page_name,
            csv_name,
            difficulty_name=difficulty_name,
            published=published,
        )
    except OSError as exc:
        fail(f"cannot write the web leaderboard into {out_dir}: {exc.strerror or exc}")
    for path in site.removed:
        console.print(f"removed {path} (the report of a run no longer on the board)")
    return site.written


@app.command()
def providers(
    as_json: bool = typer.Option(False, "--json", help="Print the providers and their options as JSON."),
) -> None:
    """List the providers a backend name may start with (provider/model), each with its options.

    An option is given by its flag where it has one (--base-url) and as -o NAME=VALUE otherwise; an
    option that changes the output is part of the run config and of the response cache's key."""
    import json

    from paperfields.extract.backends import providers as registered
    from paperfields.extract.backends.base import option_flag
    from paperfields.extract.backends.openai_compat import OPENAI_COMPATIBLE

    listing = []
    for name, provider in registered().items():
        if provider.hidden:
            continue
        row = OPENAI_COMPATIBLE.get(name)
        options = {
            option_flag(key): {"type": str(field.annotation).replace("typing.", ""), "default": field.default}
            for key, field in provider.options.model_fields.items()
        }
        listing.append(
            {
                "provider": name,
                "about": provider.about,
                "key_variable": provider.key_env,
                "base_url": row.base_url if row else None,
                "options": options,
            }
        )
    if as_json:
        print(json.dumps(listing, indent=1, default=str))
        return
    from rich.markup import escape

    table = Table("provider", "about", "API key", "options", box=None, pad_edge=False, header_style="bold")
    for item in listing:
        table.add_row(
            item["provider"] + "/",
            escape(item["about"] + (f" ({item['base_url']})" if item["base_url"] else "")),
            item["key_variable"] or "–",
            ", ".join(item["options"]) or "none",
        )
    out.print(table)


@app.command()
def space(
    out_dir: Path = typer.Argument(..., help="Folder to write the Space into (e.g. dist/space); made if missing."),
    runs_dir: Path = typer.Option(None, help="The published runs [default: results/runs]."),
) -> None:
    """Write a static Hugging Face Space of the leaderboard: README.md (Space front matter, sdk: static),
    index.html (the web leaderboard), reports/ (each run's report),
    leaderboard.csv, difficulty.md (what models get wrong).

    Upload it with `paperfields push --space NAME --folder DIR` (--dry-run shows what would be sent)."""
    from paperfields.core.readonce import read_once
    from paperfields.space import space_readme

    runs_dir = runs_dir or paths.published_runs_dir()
    with read_once():  # each stored file read once, for the board and every report
        board = _published_board(runs_dir)
        if out_dir.exists() and not out_dir.is_dir():
            fail(f"{out_dir} is a file; give a folder for the Space")
        _write_text(out_dir / "README.md", space_readme(board))
        _write_text(out_dir / "leaderboard.csv", board.csv())
        written = [out_dir / "README.md", out_dir / "leaderboard.csv"]
        view = _difficulty(runs_dir, paths.gold_dir() / "gold.jsonl", board.runs)
        written.append(_write_difficulty(view, out_dir / "difficulty.md"))
        published = runs_dir.resolve() == paths.published_runs_dir().resolve()
        written += _write_site(
            board, runs_dir, out_dir, "index.html", "leaderboard.csv", "difficulty.md", view if published else None
        )
    for path in written:
        console.print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(app())
