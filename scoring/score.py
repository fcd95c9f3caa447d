"""Score a run's predictions against gold: per paper, per field, then aggregated.

Pure functions: :func:`score_paper` maps (prediction, gold) to per-field counts;
:func:`aggregate` pools them. A failed paper (no parsed record) is scored as an empty prediction:
every gold item is missed, and it is also counted apart in the validity layer.

Per field and paper the counts are (tp, fp, fn). The headline per-field F1 is the mean over papers
of per-paper F1, where a paper with nothing in gold and nothing predicted scores 1 (a correct
abstention); micro (pooled) precision, recall and F1 are reported beside it. Single-label fields
(``research_area``, ``training_free``, null being a class of the latter) give tp=1 when right and
fp=fn=1 when wrong, so their F1 equals accuracy.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import numpy as np
from pydantic import BaseModel, Field
from scipy import stats

from paperfields.extract.schema import LIST_FIELDS, SCHEMA_VERSION
from paperfields.scoring.gold import GoldRecord
from paperfields.scoring.match import NAME_THRESHOLD, PHRASE_THRESHOLD, match_results, match_strings, same_name, same_url

SCORER_VERSION = "1.0"
BOOTSTRAP_SEED = 20260
BOOTSTRAP_RESAMPLES = 2000

LIST_THRESHOLDS = {"tasks": PHRASE_THRESHOLD, "metrics": PHRASE_THRESHOLD, "datasets": NAME_THRESHOLD, "models": NAME_THRESHOLD, "baselines": NAME_THRESHOLD}
# Fields in the overall score (macro over fields); results enter at the value+metric level.
HEADLINE_FIELDS = (
    "method_name", "method_full_name", "contribution_types", "research_area", "tasks", "datasets",
    "models", "metrics", "baselines", "results", "code_url", "training_free",
)
REPORTED_FIELDS = HEADLINE_FIELDS + ("results_value", "results_full")


def f1(tp: int, fp: int, fn: int) -> float:
    """F1 = 2tp / (2tp + fp + fn); 1.0 when all three are zero (nothing to find, nothing invented)."""
    return 1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)


def _single(pred: Any, gold: Any, agree: bool) -> tuple[int, int, int]:
    if pred in (None, "") and gold in (None, ""):
        return 0, 0, 0
    if agree:
        return 1, 0, 0
    return (0, int(pred not in (None, "")), int(gold not in (None, "")))


def score_paper(prediction: Optional[dict[str, Any]], gold: GoldRecord) -> dict[str, tuple[int, int, int]]:
    """Per-field (tp, fp, fn) of one prediction (a PaperRecord dict, or None for a failed paper)."""
    p = prediction or {}
    g = gold.record.model_dump(mode="json")
    alt = gold.alternates
    out: dict[str, tuple[int, int, int]] = {}
    for field in ("method_name", "method_full_name"):
        out[field] = _single(p.get(field), g[field], same_name(p.get(field), g[field], alt))
    out["code_url"] = _single(p.get("code_url"), g["code_url"], same_url(p.get("code_url"), g["code_url"]))
    area = p.get("research_area")
    out["research_area"] = (1, 0, 0) if area == g["research_area"] else (0, int(area is not None), 1)
    if prediction is None:
        out["training_free"] = (0, 0, 1)
    else:
        out["training_free"] = (1, 0, 0) if p.get("training_free") == g["training_free"] else (0, 1, 1)
    pred_types, gold_types = set(p.get("contribution_types") or []), set(g["contribution_types"])
    out["contribution_types"] = (len(pred_types & gold_types), len(pred_types - gold_types), len(gold_types - pred_types))
    for field in LIST_FIELDS:
        out[field] = match_strings(p.get(field) or [], g[field], alt, LIST_THRESHOLDS[field])
    results = p.get("results") or []
    out["results_value"] = match_results(results, g["results"], alt, "value")
    out["results"] = match_results(results, g["results"], alt, "value_metric")
    out["results_full"] = match_results(results, g["results"], alt, "full")
    return out


class FieldAggregate(BaseModel):
    """Aggregate of one field over papers. Higher is better for every number here."""

    f1: float = Field(description="mean over papers of per-paper F1 (headline)")
    micro_precision: float
    micro_recall: float
    micro_f1: float
    tp: int
    fp: int
    fn: int


class RunScores(BaseModel):
    """``scores.json``: aggregate scores of one run, with the versions that produced them."""

    scores_version: int = 1
    run_id: str
    split: str
    scorer_version: str = SCORER_VERSION
    schema_version: str = SCHEMA_VERSION
    gold_version: str
    papers: int
    valid_rate: float = Field(description="share of papers with a parsed, schema-valid record")
    failures_by_class: dict[str, int]
    overall_f1: float = Field(description="macro over HEADLINE_FIELDS of the per-field F1")
    overall_ci95: tuple[float, float] = Field(description="95% percentile bootstrap CI of overall_f1, resampling papers")
    bootstrap: dict[str, int] = Field(default_factory=lambda: {"seed": BOOTSTRAP_SEED, "resamples": BOOTSTRAP_RESAMPLES})
    fields: dict[str, FieldAggregate]
    seconds_per_paper: float = 0.0
    tokens_per_paper: float = 0.0
    backend: str = ""
    strategy: str = ""


def aggregate(per_paper: list[dict[str, tuple[int, int, int]]]) -> dict[str, FieldAggregate]:
    """Pool per-paper counts into per-field aggregates (mean per-paper F1, micro P/R/F1)."""
    fields: dict[str, FieldAggregate] = {}
    for field in REPORTED_FIELDS:
        counts = np.array([paper[field] for paper in per_paper]).reshape(-1, 3)
        tp, fp, fn = (int(x) for x in counts.sum(axis=0))
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        fields[field] = FieldAggregate(
            f1=round(float(np.mean([f1(*c) for c in counts])) if len(counts) else 0.0, 4),
            micro_precision=round(precision, 4),
            micro_recall=round(recall, 4),
            micro_f1=round(f1(tp, fp, fn), 4),
            tp=tp, fp=fp, fn=fn,
        )
    return fields


def paper_overall(counts: dict[str, tuple[int, int, int]]) -> float:
    """One paper's overall score: mean of its per-field F1 over HEADLINE_FIELDS."""
    return float(np.mean([f1(*counts[f]) for f in HEADLINE_FIELDS]))


def bootstrap_ci(values: list[float]) -> tuple[float, float]:
    """95% percentile bootstrap CI of the mean (Efron & Tibshirani 1993; scipy.stats.bootstrap),
    resampling papers, seeded with BOOTSTRAP_SEED."""
    data = np.asarray(values, dtype=float)
    if len(data) < 2 or np.all(data == data[0]):
        m = float(data.mean()) if len(data) else 0.0
        return (round(m, 4), round(m, 4))
    res = stats.bootstrap((data,), np.mean, n_resamples=BOOTSTRAP_RESAMPLES, confidence_level=0.95,
                          method="percentile", random_state=np.random.default_rng(BOOTSTRAP_SEED))
    return (round(float(res.confidence_interval.low), 4), round(float(res.confidence_interval.high), 4))


def score_predictions(
    predictions: dict[str, Optional[dict[str, Any]]],
    gold: list[GoldRecord],
    failures: dict[str, str],
    run_id: str,
    split: str,
    gold_version: str,
) -> tuple[RunScores, list[dict[str, Any]]]:
    """Score predictions ``{paper_id: record-or-None}`` against the gold papers of ``split``.

    Every gold paper of the split is scored; a paper missing from ``predictions`` counts as an
    empty prediction. ``failures`` maps paper id to failure class. Returns the aggregate and one
    detail row per paper (``paper_id``, ``overall``, ``failure``, per-field counts).
    Raises ValueError if ``split`` has no gold papers.
    """
    papers = [g for g in gold if split == "all" or g.split == split]
    if not papers:
        raise ValueError(f"no gold papers in split '{split}'")
    per_paper = [score_paper(predictions.get(g.id), g) for g in papers]
    detail = [
        {"paper_id": g.id, "overall": round(paper_overall(c), 4), "failure": failures.get(g.id),
         "fields": {k: list(v) for k, v in c.items()}}
        for g, c in zip(papers, per_paper)
    ]
    fields = aggregate(per_paper)
    valid = sum(1 for g in papers if predictions.get(g.id) is not None)
    scores = RunScores(
        run_id=run_id,
        split=split,
        gold_version=gold_version,
        papers=len(papers),
        valid_rate=round(valid / len(papers), 4),
        failures_by_class=dict(sorted(Counter(f for pid, f in failures.items() if pid in {g.id for g in papers}).items())),
        overall_f1=round(float(np.mean([fields[f].f1 for f in HEADLINE_FIELDS])), 4),
        overall_ci95=bootstrap_ci([paper_overall(c) for c in per_paper]),
        fields=fields,
    )
    return scores, detail


def write_scores(run_dir: Path, scores: RunScores, detail: list[dict[str, Any]]) -> None:
    """Write ``scores.json`` (aggregate) and ``paper_scores.jsonl`` (one row per paper)."""
    (run_dir / "scores.json").write_text(scores.model_dump_json(indent=2) + "\n", encoding="utf-8")
    with (run_dir / "paper_scores.jsonl").open("w", encoding="utf-8") as fh:
        for row in detail:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
