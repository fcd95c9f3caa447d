"""Glue between stored runs and the scorer: re-score any run folder, build the leaderboard.

Nothing here calls a model: a run is scored from its ``predictions.jsonl`` and ``manifest.json``.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections import Counter
from pathlib import Path

from paperfields.extract.corpus import load_corpus
from paperfields.extract.backends.base import FailureClass
from paperfields.extract.runner import RunError, load_manifest, read_predictions
from paperfields.extract.schema import SCHEMA_VERSION
from paperfields.scoring.gold import gold_fingerprint, load_gold
from paperfields.scoring.score import GROUNDED_FIELDS, HEADLINE_FIELDS, SCORER_VERSION, RunScores, score_predictions, write_scores


class MixedVersionsError(ValueError):
    """Runs scored with different schema, scorer or gold versions cannot share one board."""


def score_run(run_dir: Path, gold_path: Path, corpus_path: Path | None = None, write: bool = True) -> RunScores:
    """Score the run in ``run_dir`` against ``gold_path`` and (``write``) write its scores files.

    ``corpus_path`` (default: ``corpus.jsonl`` beside the gold file) supplies the abstracts for
    grounding. Raises RunError (bad run folder or prediction line, or no paper of the run has gold) or
    GoldError (bad gold line); RunError also when ``predictions.jsonl`` is missing.
    """
    manifest = load_manifest(run_dir)
    if not (run_dir / "predictions.jsonl").is_file():
        raise RunError(f"{run_dir / 'predictions.jsonl'}: no such file; the run's predictions are gone, so there is nothing to score")
    scored_sha256 = predictions_sha256(run_dir)
    lines = read_predictions(run_dir / "predictions.jsonl")
    predictions = {line.paper_id: line.record for line in lines}
    failures = {line.paper_id: line.failure.value for line in lines if line.failure}
    asked = set(manifest.paper_ids)
    gold = [g for g in load_gold(gold_path) if g.id in asked]
    if not gold:
        raise RunError(f"{run_dir}: none of the run's papers has a gold record in {gold_path}, so there is nothing to score "
                       "(a corpus of your own: run with --no-score)")
    corpus = load_corpus(corpus_path or gold_path.parent / "corpus.jsonl")
    repairs = Counter(r for line in lines for r in line.repairs)
    scores, detail = score_predictions(
        predictions, gold, failures, manifest.run_id, manifest.config.split, gold_fingerprint(gold_path),
        abstracts={p.id: p.text for p in corpus}, repairs=dict(repairs),
    )
    # a transport error is no answer yet (a rerun asks again): the run is unfinished until it has one
    scores.papers_done = len({line.paper_id for line in lines if line.failure != FailureClass.transport_error} & {g.id for g in gold})
    n = max(1, len(lines))
    scores.seconds_per_paper = round(manifest.model_seconds_total / n, 2)
    scores.tokens_per_paper = round((manifest.usage.input_tokens + manifest.usage.output_tokens) / n, 1)
    scores.dollars_total = manifest.dollars_total
    scores.backend = manifest.config.backend
    scores.strategy = manifest.config.strategy
    scores.predictions_sha256 = scored_sha256
    if write:
        write_scores(run_dir, scores, detail)
    return scores


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
    since scoring, or, given ``gold_path``, the run was scored against another version of that gold)."""
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
        raise RunError(f"{path}: {len(rows)} paper rows, but {run_dir / 'scores.json'} counts {scores.papers} papers; "
                       f"re-score the run with `paperfields score {run_dir}`")
    return scores, rows


def collect_scores(runs_dir: Path) -> list[RunScores]:
    """``scores.json`` of every run folder under ``runs_dir``: runs over the whole split first (best
    overall F1 first), then unfinished runs and runs over fewer papers (``--limit``), which are not
    comparable with them. Raises RunError naming the file when a ``scores.json`` cannot be read;
    warns (UserWarning) for each run whose scores are stale."""
    found = []
    for path in sorted(runs_dir.glob("*/scores.json")):
        found.append(_read_scores(path))
        stale = stale_reason(path.parent, found[-1])
        if stale:
            warnings.warn(f"the scores of {path.parent.name} are stale: {stale}; re-score it with `paperfields score {path.parent}`", stacklevel=2)
    return sorted(found, key=lambda s: (not is_full(s, found), -s.overall_f1, s.run_id))


def _read_scores(path: Path) -> RunScores:
    if not path.is_file():
        raise RunError(f"{path}: run not scored yet (run `paperfields score {path.parent}`)")
    try:
        return RunScores.model_validate_json(path.read_bytes())
    except ValueError as exc:  # pydantic's ValidationError (bad JSON or fields, non-UTF-8) is a ValueError
        first = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
        raise RunError(f"{path}: not a readable scores file ({first}); re-score the run with "
                       f"`paperfields score {path.parent.name}` or move the folder out of the runs folder") from None


def is_full(s: RunScores, scores: list[RunScores]) -> bool:
    """True when ``s`` is finished and covers as many papers as the largest run on the board."""
    return s.papers_done >= s.papers >= max(x.papers for x in scores)


def papers_cell(s: RunScores, scores: list[RunScores]) -> str:
    """``60``, ``41/60 (unfinished)`` or ``6 of 60 (partial)`` for the papers column of a board."""
    if s.papers_done < s.papers:
        return f"{s.papers_done}/{s.papers} (unfinished)"
    most = max(x.papers for x in scores)
    return str(s.papers) if s.papers >= most else f"{s.papers} of {most} (partial)"


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


SHORT = {
    "method_name": "name", "method_full_name": "full name", "contribution_types": "contrib", "research_area": "area",
    "tasks": "tasks", "datasets": "datasets", "models": "models", "metrics": "metrics", "baselines": "baselines",
    "results": "results", "code_url": "url", "training_free": "train-free",
}


def _pooled_grounding(s: RunScores) -> str:
    predicted = sum((s.grounding.get(f) or {}).get("predicted") or 0 for f in GROUNDED_FIELDS)
    if not predicted:
        return "-"
    grounded = sum(((s.grounding.get(f) or {}).get("grounded_rate") or 0) * ((s.grounding.get(f) or {}).get("predicted") or 0) for f in GROUNDED_FIELDS)
    return f"{grounded / predicted:.0%}"


def _mean_invented(s: RunScores) -> str:
    rates = [a.invented_rate for a in s.fields.values() if a.invented_rate is not None]
    return f"{sum(rates) / len(rates):.0%}" if rates else "-"


def overall_micro_f1(s: RunScores) -> float:
    """Mean over HEADLINE_FIELDS of each field's micro F1 (counts pooled over papers), rounded to 4
    places. Unlike ``overall_f1`` (a mean of per-paper F1, where an empty prediction on empty gold
    scores 1) it gives an empty list or a null name no credit; ``training_free`` null ("not stated") is
    still a class that can be right. Higher is better."""
    return round(sum(s.fields[f].micro_f1 for f in HEADLINE_FIELDS) / len(HEADLINE_FIELDS), 4)


def leaderboard_markdown(scores: list[RunScores], gold_path: Path | None = None) -> str:
    """The leaderboard as Markdown, sorted by overall F1. Raises MixedVersionsError as :func:`check_versions`."""
    check_versions(scores, gold_path)
    head = ["rank", "run", "backend", "strategy", "split", "papers", "valid", "failures", "overall F1 [95% CI]", "overall micro F1"]
    head += [SHORT[f] for f in HEADLINE_FIELDS]
    head += ["results: value", "results: full", "invented", "grounded", "s/paper", "tokens/paper", "$/run"]
    lines = [
        "# PaperFields leaderboard",
        "",
        "Generated by `paperfields leaderboard` from `results/runs/*/scores.json`; do not edit by hand.",
        "Per-field F1 is the mean over papers of per-paper F1 (an answered paper with nothing in gold and",
        "nothing predicted scores 1; a failed paper, with no answer, scores 0 on every field); overall is the",
        "macro mean over the 12 fields; CIs are 95% percentile bootstrap",
        "intervals over papers. `results` is scored at the value+metric level, `results: value` on the value",
        "alone and `results: full` on the whole tuple. `valid` is the share of papers with a schema-valid",
        "record; `invented` the mean over fields of the share of papers with empty gold where something was",
        "predicted (lower is better); `grounded` the share of predicted strings and numbers found in the",
        "abstract; `$/run` from `extract/backends/prices.toml` (`?` when the price is unknown). Higher is",
        "better everywhere else except s/paper, tokens/paper and $/run. Unfinished runs (papers `done/asked`;",
        "their missing papers score 0) and partial runs (fewer papers than the others, `--limit`) are listed",
        "last: they are not comparable with the runs above them.",
        "",
        "`overall micro F1` is the macro mean over the same 12 fields of micro F1 (true positives, false",
        "positives and false negatives pooled over papers), which gives an empty list or a missing name no",
        "credit (`training_free` null, \"not stated\", stays a class of its own). The `rules/empty` run answers",
        "the schema's default record (empty lists, nulls, area `other`) for every paper: its overall F1 is",
        "what saying nothing earns, because most papers have empty gold on some fields; a model run should",
        "beat it on both columns.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for rank, s in enumerate(scores, start=1):
        failures = ", ".join(f"{k} {v}" for k, v in s.failures_by_class.items()) or "-"
        papers = papers_cell(s, scores)
        row = [str(rank), s.run_id, s.backend, s.strategy, s.split, papers, f"{s.valid_rate:.0%}", failures,
               f"{s.overall_f1:.3f} [{s.overall_ci95[0]:.3f}, {s.overall_ci95[1]:.3f}]", f"{overall_micro_f1(s):.3f}"]
        row += [f"{s.fields[f].f1:.3f}" for f in HEADLINE_FIELDS]
        row += [f"{s.fields['results_value'].f1:.3f}", f"{s.fields['results_full'].f1:.3f}", _mean_invented(s), _pooled_grounding(s)]
        row += [f"{s.seconds_per_paper:.1f}", f"{s.tokens_per_paper:.0f}", "?" if s.dollars_total is None else f"{s.dollars_total:.4f}"]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## Per-field F1 with 95% bootstrap CI", "", "| field | " + " | ".join(s.run_id for s in scores) + " |",
              "|---|" + "---|" * len(scores)]
    for field in HEADLINE_FIELDS + ("method_name_soft", "results_value", "results_full"):
        cells = [f"{s.fields[field].f1:.3f} [{s.fields[field].ci95[0]:.2f}, {s.fields[field].ci95[1]:.2f}]" for s in scores]
        lines.append(f"| {field} | " + " | ".join(cells) + " |")
    s0 = scores[0]
    lines += ["", f"Versions: schema {s0.schema_version}, scorer {s0.scorer_version}, gold {s0.gold_version}.", ""]
    return "\n".join(lines)


def leaderboard_csv(scores: list[RunScores], gold_path: Path | None = None) -> str:
    """The leaderboard as CSV (pandas), one row per run, same order and numbers as the Markdown."""
    import pandas as pd

    check_versions(scores, gold_path)
    rows = []
    for rank, s in enumerate(scores, start=1):
        row = {"rank": rank, "run_id": s.run_id, "backend": s.backend, "strategy": s.strategy, "split": s.split, "papers": s.papers,
               "valid_rate": s.valid_rate, "overall_f1": s.overall_f1, "overall_ci95_low": s.overall_ci95[0], "overall_ci95_high": s.overall_ci95[1],
               "overall_micro_f1": overall_micro_f1(s)}
        for field in HEADLINE_FIELDS + ("results_value", "results_full"):
            row[f"{field}_f1"] = s.fields[field].f1
        row.update({f"failures_{k}": v for k, v in s.failures_by_class.items()})
        row.update({"seconds_per_paper": s.seconds_per_paper, "tokens_per_paper": s.tokens_per_paper, "dollars_total": s.dollars_total,
                    "schema_version": s.schema_version, "scorer_version": s.scorer_version, "gold_version": s.gold_version})
        rows.append(row)
    return pd.DataFrame(rows).to_csv(index=False, lineterminator="\n")
