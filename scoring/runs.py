"""Glue between stored runs and the scorer: re-score any run folder, build the leaderboard.

Nothing here calls a model: a run is scored from its ``predictions.jsonl`` and ``manifest.json``.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Optional

from paperfields.core.corpus import load_corpus
from paperfields.core.errors import InputError
from paperfields.core.gold import gold_fingerprint, load_gold
from paperfields.core.plural import any_of, plural
from paperfields.core.runlog import FailureClass, RunError, iter_predictions, load_manifest, read_predictions
from paperfields.core.fields import scores_of
from paperfields.core.schema import SCHEMA_VERSION, PaperRecord
from paperfields.scoring.calibration import SOURCES as CALIBRATION_SOURCES
from paperfields.scoring.calibration import run_calibration
from paperfields.scoring.contamination import run_contamination
from paperfields.scoring.score import (
    GROUNDED_FIELDS,
    HEADLINE_FIELDS,
    SCORER_VERSION,
    RunScores,
    is_reference_backend,
    score_predictions,
    write_scores,
)


class MixedVersionsError(InputError):
    """Runs scored with different schema, scorer or gold versions cannot share one board."""


class NoGoldError(RunError):
    """None of a run's papers has a gold record (a corpus of one's own): there is nothing to score.
    ``paperfields show`` and ``report`` still show its predictions."""


def no_gold_error(run_dir: Path, papers: int, gold_path: Path) -> NoGoldError:
    """The NoGoldError of the run in ``run_dir``, whose ``papers`` papers have no record in ``gold_path``:
    why it has no scores, and the commands that show its predictions. One wording for every command
    (score, compare, load_scores), so none of them advises scoring a run that cannot be scored."""
    which = any_of(papers, "paper", "the run's")
    return NoGoldError(f"{run_dir}: no gold for {which} in {gold_path} (a corpus of your own), "
                       f"so there is nothing to score and the run has no scores; `paperfields show PAPER --run {run_dir.name}` and "
                       f"`paperfields report {run_dir.name}` show its predictions")


def score_run(run_dir: Path, gold_path: Path, corpus_path: Path | None = None, write: bool = True) -> RunScores:
    """Score the run in ``run_dir`` against ``gold_path`` and (``write``) write its scores files.

    ``corpus_path`` (default: ``corpus.jsonl`` beside the gold file) supplies the abstracts for
    grounding. Raises NoGoldError (a RunError) when no paper of the run has gold, RunError (bad run
    folder or prediction line, ``predictions.jsonl`` missing) or GoldError (bad gold line).
    """
    manifest = load_manifest(run_dir)
    if not (run_dir / "predictions.jsonl").is_file():
        raise RunError(f"{run_dir / 'predictions.jsonl'}: no such file; the run's predictions are gone, so there is nothing to score")
    scored_sha256 = predictions_sha256(run_dir)
    lines = read_predictions(run_dir / "predictions.jsonl")
    predictions = {line.paper_id: line.record for line in lines}
    failures = {line.paper_id: line.failure.value for line in lines if line.failure}
    asked = set(manifest.paper_ids)
    all_gold = load_gold(gold_path)
    gold = [g for g in all_gold if g.id in asked]
    if not gold:
        raise no_gold_error(run_dir, len(asked), gold_path)
    corpus = load_corpus(corpus_path or gold_path.parent / "corpus.jsonl")
    texts = {p.id: p.text for p in corpus}
    repairs = Counter(r for line in lines for r in line.repairs)
    scores, detail = score_predictions(
        predictions, gold, failures=failures, run_id=manifest.run_id, split=manifest.config.split,
        gold_version=gold_fingerprint(gold_path),
        abstracts={p.id: p.text for p in corpus}, repairs=dict(repairs),
        groundings={line.paper_id: line.located(texts[line.paper_id]) for line in lines if line.record is not None and line.paper_id in texts},
    )
    # a transport error is no answer yet (a rerun asks again): the run is unfinished until it has one
    scores.papers_done = len({line.paper_id for line in lines if line.failure != FailureClass.transport_error} & {g.id for g in gold})
    split = manifest.config.split
    # a run over the benchmark corpus is partial when it asked fewer of the split's papers (--limit);
    # a corpus of one's own is its own whole
    scores.papers_in_split = (len([g for g in all_gold if split == "all" or g.split == split]) if manifest.config.corpus is None
                              else scores.papers)
    scores.reference = is_reference_backend(manifest.config.backend)
    n = max(1, len(lines))
    scores.seconds_per_paper = round(manifest.model_seconds_total / n, 2)
    answered = manifest.usage + manifest.cached_usage  # what a paper takes, whether the model or the cache answered it
    scores.tokens_per_paper = round((answered.input_tokens + answered.output_tokens) / n, 1)
    scores.input_tokens_per_paper = round(answered.input_tokens / n, 1)
    scores.mode = manifest.config.mode
    scores.grammar = manifest.config.grammar or manifest.config.backend.startswith("local/")  # local/ always decodes under a grammar
    scores.dollars_total = manifest.dollars_total
    scores.backend = manifest.config.backend
    scores.strategy = manifest.config.strategy
    scores.predictions_sha256 = scored_sha256
    add_cost_and_contamination(scores, run_dir)
    scores.calibration = run_calibration({line.paper_id: line.notes for line in lines if line.record is not None}, detail, HEADLINE_FIELDS)
    if write:
        write_scores(run_dir, scores, detail)
    return scores


def add_cost_and_contamination(scores: RunScores, run_dir: Path) -> None:
    """Set ``correct_items``, ``model_seconds`` (every attempt, retry and re-ask of every line in
    ``predictions.jsonl``, superseded lines included, cache hits excluded), seconds and dollars per
    correct item, and the contamination status of ``scores`` (in place)."""
    scores.correct_items = sum(scores.fields[f].tp for f in HEADLINE_FIELDS)
    scores.model_seconds = round(sum(line.latency_s for line in iter_predictions(run_dir / "predictions.jsonl") if not line.cached), 3)
    if scores.correct_items:
        # stored unrounded: every view rounds once, to its own digits (rounding here first turned 16.48504 into 16.485, shown as 16.48)
        scores.seconds_per_correct = scores.model_seconds / scores.correct_items
        scores.dollars_per_correct = None if scores.dollars_total is None else scores.dollars_total / scores.correct_items
    scores.contamination = run_contamination(load_manifest(run_dir), scores.reference).model_dump()


def predictions_sha256(run_dir: Path) -> str:
    """sha256 (hex) of ``run_dir/predictions.jsonl``'s bytes: what ``scores.json`` records as scored."""
    return hashlib.sha256((run_dir / "predictions.jsonl").read_bytes()).hexdigest()


def stale_reason(run_dir: Path, scores: RunScores) -> str | None:
    """Why the run's stored scores no longer describe its predictions, or None when they still do
    (also None for scores written before the fingerprint was recorded: nothing to check)."""
    if scores.predictions_sha256 is None:
        return None
    if not (run_dir / "predictions.jsonl").is_file():
        return f"{run_dir / 'predictions.jsonl'} is gone"
    if predictions_sha256(run_dir) != scores.predictions_sha256:
        return f"{run_dir / 'predictions.jsonl'} changed since the run was scored"
    return None


def load_scored_run(run_dir: Path, gold_path: Path | None = None) -> tuple[RunScores, dict[str, dict]]:
    """A scored run's ``scores.json`` and its ``paper_scores.jsonl`` rows by paper id, for the commands
    that show stored scores (compare, report). Raises RunError naming the file: not scored yet, a bad
    line, fewer or more rows than ``scores.json`` counts, or stale scores (the predictions changed
    since scoring, or, given ``gold_path``, the run was scored against another version of that gold);
    NoGoldError (given ``gold_path``) for an unscored run none of whose papers has gold there, which
    scoring would not mend."""
    if gold_path is not None and not (run_dir / "scores.json").is_file() and (run_dir / "manifest.json").is_file():
        asked = set(load_manifest(run_dir).paper_ids)
        if asked and not any(g.id in asked for g in load_gold(gold_path)):
            raise no_gold_error(run_dir, len(asked), gold_path)
    scores = _read_scores(run_dir / "scores.json")
    stale = stale_reason(run_dir, scores)
    if stale is None and gold_path is not None and scores.gold_version != gold_fingerprint(gold_path):
        stale = f"it was scored against gold {scores.gold_version}, and {gold_path} is now {gold_fingerprint(gold_path)}"
    if stale:
        raise RunError(f"{run_dir.name}: its scores are stale: {stale}; re-score it with `paperfields score {run_dir}`")
    path = run_dir / "paper_scores.jsonl"
    if not path.is_file():
        raise RunError(f"{path}: no such file; re-score the run with `paperfields score {run_dir}`")
    rows: dict[str, dict] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        try:
            row = json.loads(line)
            rows[row["paper_id"]] = row
        except (ValueError, KeyError, TypeError) as exc:
            raise RunError(f"{path}:{number}: bad paper scores line ({type(exc).__name__}: {exc}); "
                           f"re-score the run with `paperfields score {run_dir}`") from None
    if len(rows) != scores.papers:
        raise RunError(f"{path}: {plural(len(rows), 'paper row')}, but {run_dir / 'scores.json'} counts {plural(scores.papers, 'paper')}; "
                       f"re-score the run with `paperfields score {run_dir}`")
    return scores, rows


def collect_scores(runs_dir: Path) -> list[RunScores]:
    """``scores.json`` of every run folder under ``runs_dir``, in board order (see :func:`board_order`).
    Raises RunError naming the file when a ``scores.json`` cannot be read; warns (UserWarning) for
    each run whose scores are stale."""
    found = []
    for path in sorted(runs_dir.glob("*/scores.json")):
        found.append(_read_scores(path))
        stale = stale_reason(path.parent, found[-1])
        if stale:
            warnings.warn(f"the scores of {path.parent.name} are stale: {stale}; re-score it with `paperfields score {path.parent}`", stacklevel=2)
    return board_order(found)


def board_order(scores: list[RunScores]) -> list[RunScores]:
    """Contenders over the whole split, best headline first; then references (``rules/*``, a second
    annotator), best first; then partial (``--limit``) and unfinished runs, which get no rank."""
    def section(s: RunScores) -> int:
        return {"contender": 0, "reference": 1, "partial": 2}[section_of(s)]
    return sorted(scores, key=lambda s: (section(s), -(s.headline if s.headline is not None else -1), s.run_id))


def ranks(scores: list[RunScores]) -> dict[str, Optional[int]]:
    """Rank (1 = best headline) of each complete contender by run id; None for references and for
    partial or unfinished runs. Ties share a rank (competition ranking: 1, 2, 2, 4)."""
    contenders = [s for s in scores if s.rankable]
    out: dict[str, Optional[int]] = {s.run_id: None for s in scores}
    for s in contenders:
        out[s.run_id] = 1 + sum(1 for o in contenders if (o.headline or 0) > (s.headline or 0))
    return out


def _read_scores(path: Path) -> RunScores:
    if not path.is_file():
        raise RunError(f"{path}: run not scored yet (run `paperfields score {path.parent}`)")
    try:
        return RunScores.model_validate_json(path.read_bytes())
    except ValueError as exc:  # pydantic's ValidationError (bad JSON or fields, non-UTF-8) is a ValueError
        first = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
        raise RunError(f"{path}: not a readable scores file ({first}); re-score the run with "
                       f"`paperfields score {path.parent.name}` or move the folder out of the runs folder") from None


def papers_cell(s: RunScores) -> str:
    """``60``, ``41/60 (unfinished)``, ``3 of 60 (partial)``, or ``25 of 60 (sample)`` for a second
    labeling's sample, for the papers column of a board."""
    if s.unfinished:
        return f"{s.papers_done}/{s.papers} (unfinished)"
    if not s.partial:
        return str(s.papers)
    return f"{s.papers} of {s.papers_in_split} ({'sample' if s.comparable else 'partial'})"  # a second labeling covers a sample


def check_versions(scores: list[RunScores], gold_path: Path | None = None) -> None:
    """Raise MixedVersionsError naming the runs to move elsewhere when they score different splits,
    or the runs to re-score when their (schema, scorer, gold) versions are not the current ones: this
    code's schema and scorer, and ``gold_path``'s fingerprint (without it, the most common gold
    version; then runs that all agree pass)."""
    splits = Counter(s.split for s in scores)
    if len(splits) > 1:
        main = splits.most_common(1)[0][0]
        raise MixedVersionsError(
            f"runs score different splits {dict(splits)}; one board compares one split: move these out of the runs folder "
            f"(or use --runs-dir): {' '.join(s.run_id for s in scores if s.split != main)}"
        )
    versions = Counter((s.schema_version, s.scorer_version, s.gold_version) for s in scores)
    current_gold = gold_fingerprint(gold_path) if gold_path is not None else versions.most_common(1)[0][0][2]
    current = (SCHEMA_VERSION, SCORER_VERSION, current_gold)
    stale = [s.run_id for s in scores if (s.schema_version, s.scorer_version, s.gold_version) != current]
    if stale and (len(versions) > 1 or gold_path is not None):
        raise MixedVersionsError(
            f"runs were scored with (schema, scorer, gold) versions {sorted(versions)}, and the current ones are {current}; "
            f"re-score these with `paperfields score`: {' '.join(stale)}"
        )


# From the schema's field facts: each score's board name, the scores that are board columns (the
# headline fields, then more scores such as results: value), and the rows of the per-field table with CIs.
SHORT = {s.name: s.short for s in scores_of(PaperRecord)}
BOARD_COLUMNS = tuple(s.name for s in scores_of(PaperRecord) if s.board == "column")
BOARD_TABLE = tuple(s.name for s in scores_of(PaperRecord) if s.board in ("column", "table"))
DASH = "–"  # an undefined number (nothing predicted, nothing in gold) is shown as a dash, never as 1.0 or 0.0


def fmt(value: Optional[float], digits: int = 3) -> str:
    """A score for a board cell: ``0.512``, or ``–`` when undefined (None)."""
    return DASH if value is None else f"{value:.{digits}f}"


def fmt_ci(value: Optional[float], ci: Optional[tuple[float, float]], digits: int = 3) -> str:
    """``0.512 [0.470, 0.551]``; the bare value when there is no CI; ``–`` when undefined."""
    if value is None:
        return DASH
    return fmt(value, digits) + (f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "")


def _pooled_grounding(s: RunScores) -> str:
    predicted = sum((s.grounding.get(f) or {}).get("predicted") or 0 for f in GROUNDED_FIELDS)
    if not predicted:
        return DASH
    grounded = sum(((s.grounding.get(f) or {}).get("grounded_rate") or 0) * ((s.grounding.get(f) or {}).get("predicted") or 0) for f in GROUNDED_FIELDS)
    return f"{grounded / predicted:.0%}"


def mean_invented(s: RunScores) -> Optional[float]:
    """Mean over fields of the invented-value rate (share of papers with empty gold where something was
    predicted); lower is better; None when no field has a paper with empty gold."""
    rates = [a.invented_rate for a in s.fields.values() if a.invented_rate is not None]
    return sum(rates) / len(rates) if rates else None


def section_of(s: RunScores) -> str:
    """``contender``, ``reference`` (also over a sample of papers) or ``partial`` (a partial or unfinished
    contender, an unfinished reference: not comparable, never ranked)."""
    if not s.comparable:
        return "partial"
    return "reference" if s.reference else "contender"


def board_rows(scores: list[RunScores], gold_path: Path | None = None) -> list[dict[str, Any]]:
    """One plain dict per run in board order, the data behind every rendering of the board (Markdown,
    CSV, ``--json``, the terminal): ``run_id``, ``rank`` (None for references and for partial or
    unfinished runs), ``reference``, ``section``, ``headline`` and ``headline_ci95`` (the CI None for
    partial or unfinished runs), ``papers``, ``papers_total`` (the split's papers), ``papers_done``,
    micro ``precision``/``recall``, the secondary ``per_paper_f1``, per-field ``fields`` scores, how the
    record was asked for (``mode``, ``grammar``, the board cell ``output_constraint``), tokens
    (``input_tokens_per_paper``: the prompt), cost and versions. Raises MixedVersionsError as :func:`check_versions`."""
    check_versions(scores, gold_path)
    scores = board_order(scores)
    rank = ranks(scores)
    rows = []
    for s in scores:
        rows.append({
            "rank": rank[s.run_id], "run_id": s.run_id, "backend": s.backend, "strategy": s.strategy, "split": s.split,
            "reference": s.reference, "section": section_of(s),
            "headline": s.headline, "headline_ci95": list(s.headline_ci95) if s.comparable and s.headline_ci95 else None,
            "papers": s.papers, "papers_total": s.papers_in_split, "papers_done": s.papers_done,
            "valid_rate": s.valid_rate, "failures_by_class": s.failures_by_class,
            "precision": s.precision, "recall": s.recall, "invented_rate": _round4(mean_invented(s)),
            "per_paper_f1": s.per_paper_f1, "undefined_fields": s.undefined_fields,
            "fields": {f: s.fields[f].score for f in BOARD_COLUMNS},
            "mode": s.mode, "grammar": s.grammar, "output_constraint": output_constraint(s),
            "seconds_per_paper": s.seconds_per_paper, "tokens_per_paper": s.tokens_per_paper,
            "input_tokens_per_paper": s.input_tokens_per_paper, "dollars_total": s.dollars_total,
            "correct_items": s.correct_items, "seconds_per_correct": _round4(s.seconds_per_correct),
            "dollars_per_correct": None if s.dollars_per_correct is None else round(s.dollars_per_correct, 8),
            "contamination": (s.contamination or {}).get("status", "unknown"),
            "model_cutoff": (s.contamination or {}).get("model_cutoff"),
            **{f"{metric}_{source}": (getattr(s.calibration[source], metric) if source in s.calibration else None)
               for source in CALIBRATION_SOURCES for metric in ("brier", "ece")},
            "schema_version": s.schema_version, "scorer_version": s.scorer_version, "gold_version": s.gold_version,
        })
    return rows


def output_constraint(s: RunScores) -> str:
    """How the run asked for a record, for a board cell: the instructor mode, ``+grammar`` when a
    grammar constrained the output (``md_json+grammar``), ``grammar`` for local/ (in-process), ``–``
    for a backend with neither (rules/, imported predictions), ``?`` for scores written before it
    was recorded. Rows with different cells are not like-for-like (md_json puts the schema in the prompt)."""
    if s.grammar is None:
        return "?"
    if s.mode:
        return s.mode + ("+grammar" if s.grammar else "")
    return "grammar" if s.grammar else DASH


def _contamination_cell(row: dict[str, Any]) -> str:
    return row["contamination"] + (f" (cutoff {row['model_cutoff']})" if row.get("model_cutoff") else "")


def _round4(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 4)


HEADLINE_TEXT = """\
The headline is pooled (micro) F1 per field, macro-averaged over the 12 fields: for each field the true
positives, false positives and false negatives are summed over the split's papers before F1 is taken
(as SciREX and AxCell do), and `research_area` and `training_free` are classification accuracy (null a
class of its own for `training_free`; a failed paper is wrong). A field with nothing in gold and nothing
predicted over the whole split is undefined and left out of the mean (never 1.0); a correct null name or
URL counts nothing, an invented one is a false positive. So saying nothing earns nothing: the
`rules/empty` reference (the schema's default record for every paper) scores near 0, and a record with
one field right about 1/12 of a perfect one. CIs are 95% percentile bootstrap intervals over papers,
with the pooled counts recomputed per resample. `P` and `R` are micro precision and recall pooled over
the items of all 12 fields; `–` marks a number that is undefined (precision with nothing predicted,
recall with nothing in gold). `per-paper F1` is the older secondary score, the mean over papers of
per-paper F1 where an answered paper with nothing in gold and nothing predicted on a field scores 1 on
it (abstention credit): it rewards leaving fields empty, so it never ranks."""


def leaderboard_markdown(scores: list[RunScores], gold_path: Path | None = None) -> str:
    """The leaderboard as Markdown: ranked contenders, then references, then partial and unfinished runs
    (no rank, no CI), then per-field scores with CIs. Raises MixedVersionsError as :func:`check_versions`."""
    rows = board_rows(scores, gold_path)
    by_id = {s.run_id: s for s in scores}
    head = ["rank", "run", "backend", "strategy", "mode", "papers", "valid", "failures", "headline [95% CI]", "P", "R", "per-paper F1"]
    head += [SHORT[f] for f in BOARD_COLUMNS]
    head += ["invented", "grounded", "s/paper", "tokens/paper", "prompt tokens/paper", "$/run", "correct items",
             "s/correct", "$/correct", "contamination", "Brier asked / logprob", "ECE asked / logprob"]
    lines = [
        "# PaperFields leaderboard",
        "",
        "Generated by `paperfields leaderboard` from the published runs in `results/runs/*/scores.json`; do not edit by hand.",
        "",
        HEADLINE_TEXT,
        "",
        "`results` is scored at the value+metric level, `results: value` on the value alone and `results: full` on",
        "the whole tuple. `valid` is the share of papers with a schema-valid record; `invented` the mean over fields",
        "of the share of papers with empty gold where something was predicted (lower is better); `grounded` the",
        "share of predicted strings and numbers found in the abstract; `$/run` from `extract/backends/prices.toml`",
        "(`?` when the price is unknown; `paperfields run --price IN,OUT` gives one). Higher is better everywhere else except",
        "s/paper, tokens/paper, prompt tokens/paper, $/run and the cost per correct item.",
        "",
        "`mode` is how the record was asked for: the instructor mode of an `openai/` run (`md_json` puts the schema in the",
        "prompt, `json_schema` and `tools` send it in the request), `+grammar` when a grammar built from the schema",
        "constrained the output (`grammar` alone: a `local/` model in-process). `prompt tokens/paper` is what the model was",
        "sent per paper: rows that differ in mode are not like-for-like.",
        "",
        "`correct items` are the true positives pooled over the 12 fields; `s/correct` is model seconds and `$/correct` dollars",
        "per correct item, every attempt, retry and re-ask included and answers served from the response cache excluded",
        "(lower is better). `contamination` compares the model's training-data cutoff with the corpus's first public date",
        "(`extract/backends/cutoffs.toml`, with the source of each date): `after cutoff` (the model cannot have seen the",
        "abstracts), `possible overlap`, `unknown` (no published cutoff in the table), `n/a` for references.",
        "",
        "`Brier` and `ECE` (lower is better) check per-field confidences against whether the field is exactly right on the",
        "paper: `asked` where the model stated a confidence per field (the `confidence` strategy), `logprob` where it was",
        "derived from the tokens' log-probabilities (local models); ECE over 10 equal-width bins; `–` without confidences.",
        "Reliability diagrams: `results/reliability_<run>.png`.",
        "",
    ]
    sections = (("contender", "Contenders (ranked by headline)"),
                ("reference", "References (not ranked): model-free floors and a second annotator's labels, for scale"),
                ("partial", "Partial and unfinished runs (not ranked, no CI): fewer papers than the split, not comparable"))
    for key, title in sections:
        chosen = [r for r in rows if r["section"] == key]
        if not chosen:
            continue
        lines += [f"## {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in chosen:
            s = by_id[r["run_id"]]
            failures = ", ".join(f"{k} {v}" for k, v in s.failures_by_class.items()) or DASH
            row = [DASH if r["rank"] is None else str(r["rank"]), s.run_id, s.backend, s.strategy, r["output_constraint"], papers_cell(s),
                   f"{s.valid_rate:.0%}",
                   failures, fmt_ci(s.headline, r["headline_ci95"]), fmt(s.precision), fmt(s.recall), fmt(s.per_paper_f1)]
            row += [fmt(s.fields[f].score) for f in BOARD_COLUMNS]
            row += [DASH if r["invented_rate"] is None else f"{r['invented_rate']:.0%}", _pooled_grounding(s)]
            row += [f"{s.seconds_per_paper:.1f}", f"{s.tokens_per_paper:.0f}", "?" if s.input_tokens_per_paper is None else f"{s.input_tokens_per_paper:.0f}",
                    "?" if s.dollars_total is None else f"{s.dollars_total:.4f}"]
            row += [str(s.correct_items), fmt(s.seconds_per_correct, 2),
                    "?" if s.dollars_total is None else fmt(s.dollars_per_correct, 6), _contamination_cell(r)]
            row += [" / ".join(fmt(r[f"{metric}_{source}"]) for source in CALIBRATION_SOURCES) for metric in ("brier", "ece")]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    ordered = [by_id[r["run_id"]] for r in rows if r["section"] != "partial"]
    if ordered:
        lines += ["## Per-field scores with 95% bootstrap CI", "",
                  "Micro F1 (accuracy for `research_area` and `training_free`); `–` where undefined.", "",
                  "| field | " + " | ".join(s.run_id for s in ordered) + " |", "|---|" + "---|" * len(ordered)]
        for field in BOARD_TABLE:
            cells = [fmt_ci(s.fields[field].score, s.fields[field].ci95, 2) for s in ordered]
            lines.append(f"| {field} | " + " | ".join(cells) + " |")
    s0 = scores[0]
    lines += ["", f"Versions: schema {s0.schema_version}, scorer {s0.scorer_version}, gold {s0.gold_version}.", ""]
    return "\n".join(lines)


def leaderboard_csv(scores: list[RunScores], gold_path: Path | None = None) -> str:
    """The leaderboard as CSV (pandas), one row per run, same order and numbers as the Markdown; an
    undefined number is an empty cell. Raises MixedVersionsError as :func:`check_versions`."""
    import pandas as pd

    rows = []
    for r in board_rows(scores, gold_path):
        ci = r["headline_ci95"] or [None, None]
        row = {k: r[k] for k in ("rank", "section", "run_id", "backend", "strategy", "mode", "grammar", "split", "reference", "papers", "papers_total",
                                 "papers_done", "valid_rate", "headline")}
        row.update({"headline_ci95_low": ci[0], "headline_ci95_high": ci[1], "precision": r["precision"], "recall": r["recall"],
                    "per_paper_f1": r["per_paper_f1"], "invented_rate": r["invented_rate"]})
        row.update({f"{field}_score": value for field, value in r["fields"].items()})
        row.update({f"failures_{k}": v for k, v in r["failures_by_class"].items()})
        row.update({k: r[k] for k in ("seconds_per_paper", "tokens_per_paper", "input_tokens_per_paper", "dollars_total", "correct_items", "seconds_per_correct",
                                      "dollars_per_correct", "contamination", "model_cutoff", "brier_asked", "ece_asked", "brier_logprob",
                                      "ece_logprob", "schema_version", "scorer_version", "gold_version")})
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame["rank"] = frame["rank"].astype("Int64")  # an unranked run's rank is an empty cell, not 'nan' or a float
    return frame.to_csv(index=False, lineterminator="\n")
