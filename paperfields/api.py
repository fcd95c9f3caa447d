"""The Python API: extract one abstract, run a corpus, score predictions, load a run's scores.

Everything the command line does is a call here (the CLI parses flags, calls, prints)::

    import paperfields as pf

    record = pf.extract_record("We propose FooNet, ...", backend="rules/baseline")    # a PaperRecord, or an ExtractionFailure
    result = pf.run("mine.jsonl", backend="openai/my-model", base_url="http://127.0.0.1:8000/v1", split="all")
    result.run_dir, result.manifest, result.scores, result.note                 # scores None (note says why) without gold
    scores = pf.score(result.run_dir)                                          # or pf.score({paper_id: record_dict})
    frame = pf.load_scores(result.run_dir)                                     # pandas: one row per paper and field

Every argument after the first is keyword-only. Errors are exceptions whose message names the file,
line, paper or field: :class:`~paperfields.core.runlog.RunError` (run folders, corpus/split
choices, a dev abstract where dev papers may not be), :class:`~paperfields.scoring.runs.NoGoldError`
(a RunError: nothing to score), :class:`~paperfields.extract.backends.base.BackendError` (backend
and options), :class:`~paperfields.extract.strategies.PromptError`,
:class:`~paperfields.core.corpus.CorpusError`, :class:`~paperfields.core.gold.GoldError`, and
ValueError for a prediction that is not a valid record. The functions work inside a running event
loop (a Jupyter notebook) too: the work then runs on a thread of its own.
"""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Coroutine, Iterable, Optional, TypeVar, Union

from pydantic import BaseModel

from paperfields.core import paths
from paperfields.core.plural import none_has, plural

if TYPE_CHECKING:  # the heavy modules load on first use, so `import paperfields` stays fast
    import pandas

    from paperfields.core.corpus import Paper
    from paperfields.core.runlog import GenerationParams, Manifest, PredictionLine
    from paperfields.core.schema import PaperRecord
    from paperfields.extract.backends.base import Backend
    from paperfields.extract.backends.prices import Price
    from paperfields.extract.strategies import Strategy
    from paperfields.scoring.score import RunScores

__all__ = [
    "DEFAULT_BACKEND", "ExtractionFailure", "RunResult", "extract_record", "run", "score", "load_scores", "find_run",
    "check_no_dev_papers",
]

DEFAULT_BACKEND = "local/qwen2.5-coder-0.5b"
DEFAULT_MAX_TOKENS = 1536
IN_MEMORY_SOURCE = "<python>"  # Paper.source of abstracts given as strings

Corpus = Union[str, Path, Iterable["Paper"], Iterable[str], None]
T = TypeVar("T")


class ExtractionFailure(BaseModel):
    """What :func:`extract` returns when the backend gave no valid record: the failure class
    (``truncated``, ``malformed_json``, ... see the README's table), the error message and the reply."""

    failure: str
    error: Optional[str] = None
    raw_text: Optional[str] = None


@dataclass
class RunResult:
    """What :func:`run` returns: the run folder, its manifest, and its scores (None with ``score=False``,
    or when no paper of the run has gold: ``note`` then says so)."""

    run_dir: Path
    manifest: "Manifest"
    scores: Optional["RunScores"] = None
    note: Optional[str] = None


def _sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion: with asyncio.run, or on a thread of its own when this thread
    already runs an event loop (a notebook), where asyncio.run is refused."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # handed to the caller's thread as it is
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="paperfields-api")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _gold_path(gold: Union[str, Path, None]) -> Path:
    return Path(gold) if gold is not None else paths.gold_dir() / "gold.jsonl"


def _benchmark_corpus() -> Path:
    return paths.gold_dir() / "corpus.jsonl"


def load_papers(corpus: Corpus = None) -> tuple[list["Paper"], Optional[Path], bool]:
    """(papers, corpus file or None, own corpus?) from: None (the benchmark's ``gold/corpus.jsonl``), a
    corpus JSONL path (``paperfields corpus build --out``), :class:`Paper` objects, or abstracts as
    strings (ids from their text, as ``corpus build`` makes them). Raises CorpusError for a bad file,
    a duplicate id or a duplicate abstract."""
    from paperfields.core.corpus import Paper, check_unique, load_corpus, paper_id

    if corpus is None:
        return load_corpus(_benchmark_corpus()), None, False
    if isinstance(corpus, (str, Path)):
        path = Path(corpus)
        own = path.resolve() != _benchmark_corpus().resolve()
        return load_corpus(path), (path if own else None), own
    papers = []
    for number, item in enumerate(corpus, start=1):
        papers.append(item if isinstance(item, Paper) else
                      Paper(id=paper_id(str(item)), text=str(item), source=IN_MEMORY_SOURCE, position=number, line=number))
    check_unique(papers)
    return papers, None, True


def select_split(papers: list["Paper"], split: str, gold_path: Path, corpus_name: str = "the corpus") -> list["Paper"]:
    """The papers of ``split``: every paper for ``"all"``, else those whose gold record is in ``split``
    (``test`` or ``dev``). Raises RunError when the split has no gold papers, or none of ``papers``."""
    from paperfields.core.gold import load_gold
    from paperfields.core.runlog import RunError

    if split == "all":
        return papers
    in_split = {g.id for g in load_gold(gold_path) if g.split == split}
    if not in_split:
        raise RunError(f"split '{split}' has no papers in {gold_path} (choose dev, test or all)")
    chosen = [p for p in papers if p.id in in_split]
    if not chosen:
        raise RunError(f"no paper of {corpus_name} is in the '{split}' split of {gold_path}; use --split all for a corpus of your own")
    return chosen


def check_no_dev_papers(papers: list["Paper"], why: str, corpus_name: str = "the corpus", gold_path: Optional[Path] = None) -> None:
    """Raise RunError when one of ``papers`` is a benchmark dev abstract, by id or by text (whitespace and
    case aside: a reflowed line or an id of one's own must not hide one). ``why`` starts the message
    (what uses the dev split); the message names the paper, where it is, and the dev abstract it is."""
    from paperfields.core.corpus import load_corpus
    from paperfields.core.gold import load_gold
    from paperfields.core.runlog import RunError

    gold_path = gold_path or _gold_path(None)
    dev_ids = {g.id for g in load_gold(gold_path) if g.split == "dev"}
    plain = lambda text: "".join(text.split()).casefold()  # noqa: E731
    dev_texts = {plain(p.text): p.id for p in load_corpus(_benchmark_corpus()) if p.id in dev_ids}
    leak = next((p for p in papers if p.id in dev_ids or plain(p.text) in dev_texts), None)
    if leak is not None:
        raise RunError(f"{why}, so it may only run on the test split or on a corpus of your own without dev papers; {corpus_name} has "
                       f"{leak.id} ({leak.source}:{leak.line}), which is the dev abstract {dev_texts.get(plain(leak.text), leak.id)}")


def _price(price: Union[str, tuple[float, float], "Price", None]) -> Optional["Price"]:
    from paperfields.core.runlog import RunError
    from paperfields.extract.backends.prices import Price, parse_price

    if price is None or isinstance(price, Price):
        return price
    try:
        return parse_price(price if isinstance(price, str) else ",".join(str(v) for v in price))
    except ValueError as exc:
        raise RunError(str(exc)) from None


def _backend(backend: str, *, base_url: Optional[str], mode: Optional[str], grammar: bool, threads: Optional[int],
             temperature: float, max_tokens: int, reasoning_effort: Optional[str]) -> tuple["Backend", "GenerationParams"]:
    from paperfields.core.runlog import GenerationParams
    from paperfields.extract.backends import get_backend
    from paperfields.extract.backends.base import check_params

    # Only the options given: each backend refuses those that do not apply to it, and a default must not trip that.
    options = {"base_url": base_url, "mode": mode, "grammar": grammar or None, "n_threads": threads}
    engine = get_backend(backend, **{k: v for k, v in options.items() if v is not None})
    params = GenerationParams(temperature=temperature, max_tokens=max_tokens, reasoning_effort=reasoning_effort)
    check_params(engine, params)
    return engine, params


def _strategy(name: str, split: str, own_corpus: bool, papers: list["Paper"], backend: str, corpus_name: str,
              gold_path: Path) -> "Strategy":
    """The strategy, after the checks that keep dev papers out of what learned from them: rules/baseline
    (its gazetteer) and few-shot prompts (their examples) run on the test split, or on a corpus of
    one's own with no dev abstract in it."""
    from paperfields.core.runlog import RunError
    from paperfields.extract.strategies import Strategy

    own_all = own_corpus and split == "all"
    strat = Strategy(name, split=None if own_all else split)
    if strat.kind == "few_shot" and own_all:
        check_no_dev_papers(papers, "few-shot examples come from the dev split", corpus_name, gold_path)
    if backend == "rules/baseline" and split != "test":
        why = "rules/baseline builds its gazetteer from the dev split"
        if not own_corpus:
            raise RunError(f"{why}, so it may only run on the test split or on a corpus of your own without dev papers")
        check_no_dev_papers(papers, why, corpus_name, gold_path)
    return strat


def extract_record(
    abstract: str,
    *,
    backend: str = DEFAULT_BACKEND,
    strategy: str = "zero_shot",
    base_url: Optional[str] = None,
    mode: Optional[str] = None,
    grammar: bool = False,
    temperature: Optional[float] = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    reasoning_effort: Optional[str] = None,
    threads: Optional[int] = None,
    cache: bool = True,
) -> Union["PaperRecord", ExtractionFailure]:
    """Extract the record of one abstract (text) with ``backend`` (``provider/model``, as ``paperfields
    run -b``) and ``strategy`` (a ``prompts/<name>.toml``: zero_shot, few_shot, ...).

    Returns a :class:`~paperfields.core.schema.PaperRecord`, or an :class:`ExtractionFailure` when
    the model gave no valid record. The options are those of ``paperfields run`` (``temperature`` None:
    the strategy's own, else 0); ``cache`` answers a request seen before from the response cache.
    few_shot and rules/baseline refuse a benchmark dev abstract (RunError: their examples or gazetteer
    come from it). Raises BackendError (unknown backend, an option it does not take, missing
    weights or SDK), PromptError, RunError.
    """
    from paperfields.core.corpus import Paper, paper_id
    from paperfields.core.schema import PaperRecord
    from paperfields.extract.backends.base import GenerationRequest
    from paperfields.extract.runner import _generate

    paper = Paper(id=paper_id(abstract), text=abstract, source=IN_MEMORY_SOURCE, position=1, line=1)
    strat = _strategy(strategy, "all", True, [paper], backend, "the abstract", _gold_path(None))
    if temperature is None:
        temperature = strat.template.temperature or 0.0
    engine, params = _backend(backend, base_url=base_url, mode=mode, grammar=grammar, threads=threads, temperature=temperature,
                              max_tokens=max_tokens, reasoning_effort=reasoning_effort)
    identity = {"backend": backend, "base_url": base_url, "mode": getattr(engine, "mode", None), "grammar": grammar}
    response_cache = _open_cache() if cache else None

    async def go():
        samples = []
        for index in range(strat.samples):
            request = GenerationRequest(messages=strat.messages(paper), paper_text=paper.text, params=params,
                                        response_model=strat.response_model, sample_index=index)
            samples.append(await _generate(engine, request, response_cache, identity))
        return strat.finalize(paper, samples)

    try:
        generation = _sync(go())
    finally:
        if response_cache is not None:
            response_cache.close()
    if generation.record is None:
        return ExtractionFailure(failure=generation.failure.value if generation.failure else "malformed_json",
                                 error=generation.error, raw_text=generation.raw_text)
    return PaperRecord.model_validate(generation.record)


def _open_cache():
    from paperfields.extract.cache import ResponseCache, default_cache_path

    return ResponseCache(default_cache_path())


def run(
    corpus: Corpus = None,
    *,
    backend: str = DEFAULT_BACKEND,
    strategy: str = "zero_shot",
    split: str = "test",
    limit: Optional[int] = None,
    concurrency: int = 1,
    base_url: Optional[str] = None,
    mode: Optional[str] = None,
    grammar: bool = False,
    temperature: Optional[float] = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    reasoning_effort: Optional[str] = None,
    threads: Optional[int] = None,
    price: Union[str, tuple[float, float], "Price", None] = None,
    run_id: Optional[str] = None,
    runs_dir: Union[str, Path, None] = None,
    cache: bool = True,
    batch: bool = False,
    poll_interval: float = 30.0,
    score: bool = True,
    on_start: Optional[Callable[[int, int], None]] = None,
    on_paper: Optional[Callable[["PredictionLine"], None]] = None,
    on_status: Optional[Callable[[Any], None]] = None,
) -> RunResult:
    """Extract a record from every paper of ``corpus`` in ``split`` into a run folder, then score it.

    ``corpus``: None (the benchmark's 76 abstracts), a corpus JSONL path, :class:`Paper` objects or
    abstracts as strings (a corpus of one's own has no gold split: use ``split="all"``). ``split``:
    ``test``, ``dev`` or ``all``; ``limit``: the first N papers (a later, larger run continues the same
    folder). The run folder is ``runs_dir/run_id`` (default ``runs/<provider>_<model>__<strategy>__<split>``);
    running the same call again resumes it. ``price``: ``"IN,OUT"`` or ``(IN, OUT)``, USD per million
    input and output tokens, for a model not in ``prices.toml`` (recorded in the manifest). ``batch``:
    one OpenAI Batch API job (openai/ backends), polled every ``poll_interval`` seconds. The other
    options are those of ``paperfields run``. ``on_start(already_done, papers)`` (once, before any
    work), ``on_paper(line)`` (after each paper) and ``on_status(batch_state)`` report progress.

    The manifest records the corpus file (absolute path; papers given in Python are written to
    ``corpus.jsonl`` in the run folder), so ``show`` and ``report`` find the abstracts. With ``score``
    the run is scored against gold; a run none of whose papers has gold, or none of whose papers got an
    answer from the model, is left unscored, ``note`` saying so. Raises RunError (split, run id, options of --batch, a dev abstract for rules/baseline or
    few-shot, a folder holding another run), BackendError, PromptError, CorpusError, GoldError, and
    KeyboardInterrupt unchanged (finished papers are saved: run again to resume).
    """
    from paperfields.core.corpus import write_corpus
    from paperfields.core.runlog import RunConfig, RunError, corpus_identity, default_run_id, load_manifest
    from paperfields.extract.runner import run_extraction
    from paperfields.scoring.runs import NoGoldError, score_run

    gold_path = _gold_path(None)
    runs_dir = Path(runs_dir) if runs_dir is not None else paths.user_runs_dir()
    all_papers, corpus_file, own = load_papers(corpus)
    corpus_name = str(corpus_file) if corpus_file else "the papers given" if own else str(_benchmark_corpus())
    papers = select_split(all_papers, split, gold_path, corpus_name)
    # the fingerprint before the limit: a run with a larger --limit continues the same folder
    corpus_id = corpus_identity(corpus_file or Path("papers"), papers) if own else None
    strat = _strategy(strategy, split, own, papers, backend, corpus_name, gold_path)
    if limit is not None:
        papers = papers[: max(0, limit)]
    if papers:
        strat.messages(papers[0])  # a template error (unknown variable) stops here, before any run folder exists
    if temperature is None:
        temperature = strat.template.temperature or 0.0
    if run_id is not None and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+=@-]*", run_id):
        raise RunError(f"--run-id {run_id!r} must be a plain folder name: letters, digits and _ . + = @ -, not starting with '.' or '-'")
    if batch and not backend.startswith("openai/"):
        raise RunError(f"--batch works only with openai/ backends (it uses the OpenAI Batch API); got '{backend}'")
    if batch and (mode or grammar):
        raise RunError("--mode and --grammar do not apply to --batch: batch requests always carry the strict JSON schema")
    price_given = _price(price)
    engine, params = _backend(backend, base_url=base_url, mode=mode, grammar=grammar, threads=threads, temperature=temperature,
                              max_tokens=max_tokens, reasoning_effort=reasoning_effort)
    config = RunConfig(
        backend=backend, base_url=base_url, mode=None if batch else getattr(engine, "mode", None), grammar=grammar, strategy=strategy,
        prompt_version=strat.template.version, prompt_sha256=strat.sha256, example_ids=strat.example_ids(), split=split,
        params=params, batch=batch, corpus=corpus_id,
    )
    run_dir = runs_dir / (run_id or default_run_id(backend, strategy, split, batch))
    recorded = str(corpus_file.resolve()) if corpus_file else None
    if own and corpus_file is None:  # papers given in Python: the run folder keeps their abstracts
        target = run_dir / "corpus.jsonl"
        lines = run_dir / "predictions.jsonl"
        # never over the abstracts of another run in the folder (the runner refuses that run's config next)
        if not lines.is_file() or lines.stat().st_size == 0 or load_manifest(run_dir).config.corpus == corpus_id:
            write_corpus(all_papers, target)
        recorded = str(target.resolve())
    started = (lambda done: on_start(done, len(papers))) if on_start else None
    response_cache = _open_cache() if cache else None
    try:
        if batch:
            from paperfields.extract.batch import run_batch

            manifest = _sync(run_batch(papers, strat, config, run_dir, engine.raw_client, response_cache, poll_interval, on_paper,
                                       on_status, started, price=price_given, corpus_path=recorded))
        else:
            manifest = _sync(run_extraction(papers, engine, strat, config, run_dir, concurrency, on_paper, response_cache, started,
                                            price=price_given, corpus_path=recorded))
    finally:
        if response_cache is not None:
            response_cache.close()
    result = RunResult(run_dir=run_dir, manifest=manifest)
    # the server never answered (transport errors) or refused every request as sent: nothing the model said to score
    refused = sum(n for c, n in manifest.failures_by_class.items() if c in ("request_rejected", "context_overflow"))
    if score and manifest.papers_done - refused <= 0 and manifest.papers_total:
        result.note = "not scored: no paper got an answer from the model"
    elif score:
        try:
            result.scores = score_run(run_dir, gold_path)
        except NoGoldError:
            no_gold = none_has(manifest.papers_total, "paper", "the run's", "gold record")
            result.note = (f"not scored: {no_gold} (a corpus of your own); "
                           f"see its predictions with `paperfields show PAPER --run {run_dir.name}` or `paperfields report {run_dir.name}`")
    return result


def find_run(run: Union[str, Path], runs_dir: Union[str, Path, None] = None) -> Path:
    """A run's folder: ``run`` itself when it is a run folder (holds ``manifest.json``), else ``run``
    under ``runs_dir`` when given, else under ``runs/`` (your runs) or ``results/runs`` (the published
    ones). Raises RunError when it is in none of them, and when a bare id is in both: a run of yours
    may share its id with a published one (``pf.run(backend="rules/baseline", limit=3)`` writes
    ``runs/rules_baseline__zero_shot__test``), and an id that silently meant one of the two would
    compare, score or report the other run than the one meant. The message gives both folders: pass
    the one meant (or ``runs_dir``) instead of the id."""
    from paperfields.core.runlog import RunError

    candidate = Path(run)
    if candidate.is_dir() and (candidate / "manifest.json").exists():
        return candidate
    places = [Path(runs_dir)] if runs_dir else [paths.user_runs_dir(), paths.published_runs_dir()]
    found = [place / str(run) for place in places if (place / str(run)).is_dir()]
    if len(found) > 1:
        raise RunError(f"run id '{run}' names two runs: yours, {found[0]}, and the published one, {found[1]}; "
                       "give the folder of the one you mean instead of the id")
    if found:
        return found[0]
    raise RunError(f"no run folder '{run}' (looked for {candidate} and in {', '.join(str(p) for p in places)})")


def run_corpus_path(run_dir: Path, manifest: Optional["Manifest"] = None) -> Path:
    """The corpus file a run's papers were read from: the path its manifest records, else (a run over
    the benchmark corpus) ``gold/corpus.jsonl``. Raises RunError when the run used a corpus of one's own
    that its manifest does not locate (written before the path was recorded) or that is gone."""
    from paperfields.core.runlog import RunError, load_manifest

    manifest = manifest or load_manifest(run_dir)
    if manifest.corpus_path:
        path = Path(manifest.corpus_path)
        if not path.is_file():
            raise RunError(f"{run_dir / 'manifest.json'}: the run's corpus {path} is gone; give its new place with --corpus FILE")
        return path
    if manifest.config.corpus is not None:
        raise RunError(f"{run_dir / 'manifest.json'}: the run used a corpus of your own ({manifest.config.corpus}) whose place it does "
                       "not record (a run made before PaperFields recorded it); give the file with --corpus FILE")
    return _benchmark_corpus()


def score(
    predictions: Union[str, Path, dict[str, Optional[dict[str, Any]]]],
    *,
    gold: Union[str, Path, None] = None,
    corpus: Union[str, Path, None] = None,
    split: str = "test",
    name: Optional[str] = None,
    runs_dir: Union[str, Path, None] = None,
    write: bool = True,
) -> "RunScores":
    """Score predictions against gold (no model is called) and return the aggregate scores.

    ``predictions`` is one of:

    - a run folder or run id (``runs/`` then ``results/runs``, or under ``runs_dir``): scored as
      ``paperfields score RUN``; with ``write`` (and the benchmark's gold) its ``scores.json`` and
      ``paper_scores.jsonl`` are written;
    - a predictions JSONL file (``{"paper_id": ..., "record": {...}}`` per line, the README's format):
      with ``name``, imported as the run folder ``runs_dir/outside_<name>__imported__<split>`` and
      scored (``paperfields score --predictions FILE --name NAME``); without, scored in memory;
    - a dict ``{paper_id: record dict or None}``: scored in memory.

    Papers of ``split`` missing from in-memory predictions are failures (0 on every field). ``gold``
    defaults to the benchmark's ``gold/gold.jsonl``, ``corpus`` (abstracts, for grounding) to
    ``gold/corpus.jsonl``. Raises NoGoldError (no paper of a run has gold), RunError (bad run folder or
    predictions line), ValueError (a record that is not valid: unknown field, value outside the
    schema, naming the paper and field), GoldError.
    """
    from paperfields.core.corpus import load_corpus
    from paperfields.core.gold import gold_fingerprint, load_gold
    from paperfields.scoring.runs import score_run
    from paperfields.scoring.score import score_predictions

    gold_path = _gold_path(gold)
    own_gold = gold_path.resolve() != _gold_path(None).resolve()
    corpus_path = Path(corpus) if corpus is not None else None
    if corpus_path is None:
        beside = gold_path.parent / "corpus.jsonl"
        corpus_path = beside if beside.is_file() else _benchmark_corpus()
    failures: dict[str, str] = {}
    if isinstance(predictions, (str, Path)):
        path = Path(predictions)
        if path.suffix in (".jsonl", ".json") and not path.exists():
            from paperfields.core.runlog import RunError

            raise RunError(f"{path}: no such file")
        if path.is_file():
            if name is not None:
                from paperfields.scoring.imported import import_predictions

                folder = import_predictions(path, name, split, Path(runs_dir) if runs_dir else paths.user_runs_dir(), gold_path, corpus_path)
                return score_run(folder, gold_path, corpus_path, write=write and not own_gold)
            from paperfields.scoring.imported import read_outside_predictions

            lines = read_outside_predictions(path, {p.id for p in load_corpus(corpus_path)})
            failures = {line.paper_id: line.failure.value for line in lines if line.failure}
            predictions = {line.paper_id: line.record for line in lines}
        else:
            return score_run(find_run(path, runs_dir), gold_path, corpus_path, write=write and not own_gold)
    abstracts = {p.id: p.text for p in load_corpus(corpus_path)}
    scores, _ = score_predictions(predictions, load_gold(gold_path), failures=failures, run_id=name or "predictions", split=split,
                                  gold_version=gold_fingerprint(gold_path), abstracts=abstracts)
    return scores


def load_scores(run: Union[str, Path], *, runs_dir: Union[str, Path, None] = None, gold: Union[str, Path, None] = None) -> "pandas.DataFrame":
    """A scored run's per-paper scores as a pandas DataFrame with one row per paper and field.

    Columns: ``paper_id``, ``field`` (the 12 headline fields and the ``*_soft``, ``results_value`` and
    ``results_full`` variants), ``tp``, ``fp``, ``fn`` (item counts), ``f1`` (2tp / (2tp + fp + fn);
    NaN when all three are 0: nothing in gold, nothing predicted; for ``research_area`` and
    ``training_free`` 1.0 right, 0.0 wrong), ``answered`` (False: the paper failed, 0 everywhere) and
    ``failure`` (its class, or None). Raises RunError when the run is not scored yet, or its scores
    are stale (predictions or ``gold`` changed since), NoGoldError's advice included for a run without
    gold.
    """
    import pandas as pd

    from paperfields.scoring.runs import load_scored_run

    run_dir = find_run(run, runs_dir)
    _, rows = load_scored_run(run_dir, _gold_path(gold))  # NoGoldError for a run without gold
    records = []
    for paper_id, row in rows.items():
        for field, (tp, fp, fn) in row["fields"].items():
            records.append({"paper_id": paper_id, "field": field, "tp": tp, "fp": fp, "fn": fn,
                            "f1": float("nan") if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn),
                            "answered": row.get("answered", True), "failure": row.get("failure")})
    return pd.DataFrame.from_records(records, columns=["paper_id", "field", "tp", "fp", "fn", "f1", "answered", "failure"])


def publish(run: Union[str, Path], *, allow_partial: bool = False, runs_dir: Union[str, Path, None] = None,
            gold: Union[str, Path, None] = None, published_dir: Union[str, Path, None] = None) -> Path:
    """Move a finished, scored run (found by :func:`find_run`) into the published set, the runs the
    leaderboard, export and push read (``published_dir``, default ``results/runs``); returns its new
    folder. Nothing is written when it refuses.

    Raises NoGoldError (a RunError) when none of the run's papers has a gold record in ``gold`` (a run
    over a corpus of one's own: it has no scores, so it has no place on the board); RunError when the
    run is already published, not scored or its scores are stale, partial or unfinished (unless
    ``allow_partial``), or the target folder exists.
    """
    import shutil

    from paperfields.core.gold import load_gold
    from paperfields.core.runlog import RunError, load_manifest
    from paperfields.scoring.runs import NoGoldError, load_scored_run

    source = find_run(run, runs_dir)
    published = Path(published_dir) if published_dir is not None else paths.published_runs_dir()
    target = published / source.name
    if source.resolve() == target.resolve():
        raise RunError(f"{source} is already published")
    gold_path = _gold_path(gold)
    manifest = load_manifest(source)
    if manifest.paper_ids and not set(manifest.paper_ids) & {g.id for g in load_gold(gold_path)}:
        corpus = f" (its corpus: {manifest.corpus_path})" if manifest.corpus_path else ""
        config = manifest.config
        raise NoGoldError(
            f"cannot publish {source.name}: {none_has(len(manifest.paper_ids), 'paper', 'its', 'gold record')} in {gold_path}"
            f"{corpus}, so the run has no scores and cannot be placed on the board, which ranks runs by their scores against "
            f"the benchmark's gold; nothing was written to {published}. The run stays in {source}: `paperfields report {source.name}` "
            f"and `paperfields show PAPER --run {source.name}` show its predictions. To put {config.backend} on the board, run it on "
            f"the benchmark's test split (`paperfields run -b {config.backend} -s {config.strategy}`, with the same backend options), "
            "then publish that run")
    scores, _ = load_scored_run(source, gold_path)
    if not scores.comparable and not allow_partial:
        # the advice must work when followed: the same command keeps its --limit, so it never completes a partial run
        if manifest.config.strategy == "imported":
            advice = "import a predictions file that holds every paper of the split (`paperfields score --predictions FILE --name NAME`)"
        elif scores.papers < scores.papers_in_split:
            advice = ("run its `paperfields run` command again without --limit (or with a larger one), which continues this run over "
                      "the whole split")
        else:
            advice = "finish it by running the same `paperfields run` command again (it resumes where it stopped)"
        raise RunError(f"{source.name} is {'unfinished' if scores.unfinished else 'partial'} ({scores.papers_done}/{plural(scores.papers, 'paper')} "
                       f"done, {scores.papers} of {scores.papers_in_split} in the split): {advice}, or publish it apart with --allow-partial")
    if target.exists():
        raise RunError(f"{target} exists already; remove it first to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.tmp", "report.html", ".lock", "*.lock"))
    shutil.rmtree(source)  # moved, not copied: one run id names one folder
    return target
