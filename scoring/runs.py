"""Glue between stored runs and the scorer: re-score any run folder, read stored scores (the board
itself is :mod:`paperfields.scoring.board`).

Nothing here calls a model: a run is scored from its ``predictions.jsonl`` and ``manifest.json``.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections import Counter
from pathlib import Path

from paperfields.core.corpus import load_corpus
from paperfields.core.gold import gold_fingerprint, load_gold
from paperfields.core.paths import run_reference
from paperfields.core.plural import any_of, plural
from paperfields.core.readonce import file_bytes, parsed
from paperfields.core.runlog import (
    FailureClass,
    Manifest,
    PredictionLine,
    RunError,
    iter_predictions,
    latest_lines,
    load_manifest,
)
from paperfields.scoring.board import board_order
from paperfields.scoring.calibration import run_calibration
from paperfields.scoring.contamination import Contamination, run_contamination, with_stated_cutoff
from paperfields.scoring.score import (
    HEADLINE_FIELDS,
    RunScores,
    is_reference_backend,
    score_predictions,
    validate_predictions,
    write_scores,
)
from paperfields.scoring.semantic import SEMANTIC_FILE


class NoGoldError(RunError):
    """None of a run's papers has a gold record (a corpus of one's own): there is nothing to score.
    ``paperfields show`` and ``report`` still show its predictions."""


def no_gold_error(run_dir: Path, papers: int, gold_path: Path) -> NoGoldError:
    """The NoGoldError of the run in ``run_dir``, whose ``papers`` papers have no record in ``gold_path``:
    why it has no scores, and the commands that show its predictions. One wording for every command
    (score, compare, load_scores), so none of them advises scoring a run that cannot be scored."""
    which = any_of(papers, "paper", "the run's")
    ref = run_reference(run_dir)
    return NoGoldError(
        f"{run_dir}: no gold for {which} in {gold_path} (a corpus of your own), "
        f"so there is nothing to score and the run has no scores; `paperfields show PAPER --run {ref}` and "
        f"`paperfields report {ref}` show its predictions"
    )


def score_run(
    run_dir: Path, gold_path: Path, corpus_path: Path | None = None, write: bool = True, semantic: bool = False
) -> RunScores:
    """Score the run in ``run_dir`` against ``gold_path`` and (``write``) write its scores files.

    ``corpus_path`` (default: ``corpus.jsonl`` beside the gold file) supplies the abstracts for
    grounding. The semantic tier (:mod:`~paperfields.scoring.semantic`) is computed beside the headline
    from the cosines the run's ``semantic.jsonl`` stores; ``semantic`` computes the missing ones with the
    embedding model (the ``semantic`` extra), else the tier is left out while one is missing. Raises
    NoGoldError (a RunError) when no paper of the run has gold, RunError (bad run folder or prediction
    line, ``predictions.jsonl`` missing), GoldError (bad gold line) or SemanticUnavailable (``semantic``
    without the extra).
    """
    manifest = load_manifest(run_dir)
    path = run_dir / "predictions.jsonl"
    if not path.is_file():
        raise RunError(f"{path}: no such file; the run's predictions are gone, so there is nothing to score")
    data = path.read_bytes()  # read once: hashed as scored, then parsed
    every_line = list(iter_predictions(path, data=data))
    lines = latest_lines(every_line)
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
        predictions,
        gold,
        failures=failures,
        run_id=manifest.run_id,
        split=manifest.config.split,
        gold_version=gold_fingerprint(gold_path),
        abstracts={p.id: p.text for p in corpus},
        repairs=dict(repairs),
        groundings={
            line.paper_id: line.located(texts[line.paper_id])
            for line in lines
            if line.record is not None and line.paper_id in texts
        },
    )
    # a transport error is no answer yet (a rerun asks again): the run is unfinished until it has one
    scores.papers_done = len(
        {line.paper_id for line in lines if line.failure != FailureClass.transport_error} & {g.id for g in gold}
    )
    split = manifest.config.split
    # a run over the benchmark corpus is partial when it asked fewer of the split's papers (--limit);
    # a corpus of one's own is its own whole
    scores.papers_in_split = (
        len([g for g in all_gold if split == "all" or g.split == split])
        if manifest.config.corpus is None
        else scores.papers
    )
    scores.submitted = submission_of(run_dir)
    # a reference: a rules/ or second-labeling backend, or a submission declared one (role = "reference")
    scores.reference = (
        is_reference_backend(manifest.config.backend) or (scores.submitted or {}).get("role") == "reference"
    )
    n = max(1, len(lines))
    scores.seconds_per_paper = round(manifest.model_seconds_total / n, 2)
    answered = manifest.usage + manifest.cached_usage  # what a paper takes, whether the model or the cache answered it
    # a count the server never sent is unknown, not zero: so is the run's figure
    scores.tokens_per_paper = round((answered.input_tokens + answered.output_tokens) / n, 1) if answered.known else None
    scores.input_tokens_per_paper = None if answered.input_tokens is None else round(answered.input_tokens / n, 1)
    scores.mode = manifest.config.mode
    scores.grammar = manifest.config.grammar or manifest.config.backend.startswith(
        "local/"
    )  # local/ always decodes under a grammar
    scores.dollars_total = manifest.dollars_total
    scores.backend = manifest.config.backend
    scores.strategy = manifest.config.strategy
    scores.predictions_sha256 = hashlib.sha256(data).hexdigest()
    scores.papers_asked = manifest.papers_total
    add_cost_and_contamination(scores, manifest, every_line)
    if scores.submitted and scores.submitted.get("model_cutoff"):
        scores.contamination = with_stated_cutoff(
            Contamination.model_validate(scores.contamination),
            scores.submitted["model_cutoff"],
            "stated by the submitter (submission.toml)",
        ).model_dump()
    scores.calibration = run_calibration(
        {line.paper_id: line.notes for line in lines if line.record is not None}, detail, HEADLINE_FIELDS
    )
    rows = _semantic_tier(run_dir, scores, predictions, gold, texts, semantic)
    if write:
        write_scores(run_dir, scores, detail)
        if rows is not None:
            (run_dir / SEMANTIC_FILE).write_text(rows, encoding="utf-8")
    return scores


def _semantic_tier(
    run_dir: Path, scores: RunScores, predictions: dict, gold: list, abstracts: dict[str, str], embed: bool
) -> str | None:
    """Set ``scores.semantic`` (None while a cosine is missing and ``embed`` is off); the band rows to write
    as ``semantic.jsonl``, or None when the tier was not computed."""
    from paperfields.scoring.match import with_abstract_aliases
    from paperfields.scoring.semantic import Embedder, read_cosines, rows_with_cosines, semantic_scores

    papers = [g for g in gold if scores.split == "all" or g.split == scores.split]
    cosines = read_cosines(run_dir / SEMANTIC_FILE)
    checked = validate_predictions({k: v for k, v in predictions.items() if k in {g.id for g in papers}})
    scores.semantic, rows = semantic_scores(checked, papers, abstracts, cosines, Embedder() if embed else None)
    if scores.semantic is None:
        return None
    by_id = {g.id: g for g in papers}
    return rows_with_cosines(
        rows, cosines, lambda pid: with_abstract_aliases(by_id[pid].alternates, abstracts.get(pid, ""))
    )


def add_cost_and_contamination(scores: RunScores, manifest: Manifest, every_line: list[PredictionLine]) -> None:
    """Set ``correct_items``, ``model_seconds`` (every attempt, retry and re-ask of ``every_line`` of
    ``predictions.jsonl``, superseded lines included, cache hits excluded), seconds and dollars per
    correct item, and the contamination status of ``scores`` (in place) from the run's ``manifest``."""
    scores.correct_items = sum(scores.fields[f].tp for f in HEADLINE_FIELDS)
    scores.model_seconds = round(sum(line.latency_s for line in every_line if not line.cached), 3)
    if scores.correct_items:
        # stored unrounded: every view rounds once, to its own digits
        # (rounding here first turned 16.48504 into 16.485, shown as 16.48)
        scores.seconds_per_correct = scores.model_seconds / scores.correct_items
        scores.dollars_per_correct = (
            None if scores.dollars_total is None else scores.dollars_total / scores.correct_items
        )
    scores.contamination = run_contamination(manifest, scores.reference).model_dump()


def submission_of(run_dir: Path) -> dict | None:
    """The ``submission.toml`` a submitted run was made from (kept in its manifest as ``import.submission``
    by :func:`~paperfields.scoring.imported.import_predictions`), or None for a reproduced run."""
    raw = json.loads(file_bytes(run_dir / "manifest.json").decode("utf-8"))
    found = (raw.get("import") or {}).get("submission") if isinstance(raw, dict) else None
    return found if isinstance(found, dict) else None


def predictions_sha256(run_dir: Path) -> str:
    """sha256 (hex) of ``run_dir/predictions.jsonl``'s bytes: what ``scores.json`` records as scored."""
    return parsed(run_dir / "predictions.jsonl", "sha256", lambda data: hashlib.sha256(data).hexdigest())


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
        stale = (
            f"it was scored against gold {scores.gold_version}, and {gold_path} is now {gold_fingerprint(gold_path)}"
        )
    if stale:
        raise RunError(f"{run_dir.name}: its scores are stale: {stale}; re-score it with `paperfields score {run_dir}`")
    path = run_dir / "paper_scores.jsonl"
    if not path.is_file():
        raise RunError(f"{path}: no such file; re-score the run with `paperfields score {run_dir}`")
    rows: dict[str, dict] = {}
    for number, line in enumerate(file_bytes(path).decode("utf-8", errors="replace").splitlines(), start=1):
        try:
            row = json.loads(line)
            rows[row["paper_id"]] = row
        except (ValueError, KeyError, TypeError) as exc:
            raise RunError(
                f"{path}:{number}: bad paper scores line ({type(exc).__name__}: {exc}); "
                f"re-score the run with `paperfields score {run_dir}`"
            ) from None
    if len(rows) != scores.papers:
        raise RunError(
            f"{path}: {plural(len(rows), 'paper row')}, but {run_dir / 'scores.json'} counts "
            f"{plural(scores.papers, 'paper')}; re-score the run with `paperfields score {run_dir}`"
        )
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
            warnings.warn(
                f"the scores of {path.parent.name} are stale: {stale}; "
                f"re-score it with `paperfields score {path.parent}`",
                stacklevel=2,
            )
    return board_order(found)


def _read_scores(path: Path) -> RunScores:
    if not path.is_file():
        raise RunError(f"{path}: run not scored yet (run `paperfields score {path.parent}`)")
    try:
        return RunScores.model_validate_json(file_bytes(path))
    except ValueError as exc:  # pydantic's ValidationError (bad JSON or fields, non-UTF-8) is a ValueError
        first = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
        raise RunError(
            f"{path}: not a readable scores file ({first}); re-score the run with "
            f"`paperfields score {path.parent.name}` or move the folder out of the runs folder"
        ) from None
