"""Paired comparison of two scored runs on the same papers.

Paired bootstrap (Koehn 2004; Berg-Kirkpatrick et al. 2012): resample papers with replacement,
recompute the mean per-paper difference B - A per field; the 95% CI is the percentile interval of
those means (scipy.stats.bootstrap, paired) and the two-sided p-value is twice the share of
resampled differences on the other side of zero from the observed one (capped at 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel
from scipy import stats

from paperfields.extract.runner import RunError
from paperfields.scoring.runs import load_scored_run
from paperfields.scoring.score import BOOTSTRAP_SEED, HEADLINE_FIELDS, REPORTED_FIELDS, paper_f1

COMPARE_RESAMPLES = 10000


class FieldComparison(BaseModel):
    """One field: mean per-paper F1 of each run, B - A, its 95% CI and paired-bootstrap p-value."""

    field: str
    a: float
    b: float
    diff: float
    ci95: tuple[float, float]
    p_value: float
    papers_differing: int




def _field_f1(row: dict[str, Any], field: str) -> float:
    """A paper's F1 on a field from its paper_scores.jsonl row (0 for a failed paper; rows of
    scorer versions before 2.2 have no ``answered`` and count as answered)."""
    return paper_f1(tuple(row["fields"][field]), row.get("answered", True))


def paired_bootstrap(a: np.ndarray, b: np.ndarray) -> tuple[tuple[float, float], float]:
    """95% CI of mean(b - a) and the two-sided paired-bootstrap p-value, seeded."""
    diff = b - a
    if np.all(diff == diff[0]):
        return (float(diff[0]), float(diff[0])), (1.0 if diff[0] == 0 else 0.0)
    res = stats.bootstrap((a, b), lambda x, y, axis=-1: np.mean(y - x, axis=axis), paired=True, vectorized=True,
                          n_resamples=COMPARE_RESAMPLES, method="percentile", random_state=np.random.default_rng(BOOTSTRAP_SEED))
    dist = res.bootstrap_distribution
    observed = diff.mean()
    other_side = np.mean(dist <= 0) if observed > 0 else np.mean(dist >= 0)
    return (float(res.confidence_interval.low), float(res.confidence_interval.high)), float(min(1.0, 2 * other_side))


def compare_runs(run_a: Path, run_b: Path, top: int = 5, gold_path: Path | None = None) -> tuple[list[FieldComparison], list[dict[str, Any]]]:
    """Per-field paired comparison of two scored runs on the papers both scored, and up to ``top``
    papers that differ (in overall score or in a headline field's F1), largest overall difference
    first; papers both runs scored alike are never listed. Raises ValueError when they share no paper
    and RunError when a run is not scored, its scores files are unreadable or stale (given
    ``gold_path``: scored against another version of it), or the two were scored with different
    scorer or gold versions."""
    (sa, pa), (sb, pb) = load_scored_run(run_a, gold_path), load_scored_run(run_b, gold_path)
    if (sa.scorer_version, sa.gold_version) != (sb.scorer_version, sb.gold_version):
        raise RunError(f"{run_a.name} was scored with scorer {sa.scorer_version} and gold {sa.gold_version}, {run_b.name} with "
                       f"scorer {sb.scorer_version} and gold {sb.gold_version}: re-score both with `paperfields score` to compare them")
    shared = sorted(set(pa) & set(pb))
    if not shared:
        raise ValueError(f"{run_a.name} and {run_b.name} share no scored paper")
    rows = []
    for field in ("overall",) + REPORTED_FIELDS:
        if field == "overall":
            a = np.array([pa[i]["overall"] for i in shared])
            b = np.array([pb[i]["overall"] for i in shared])
        else:
            a = np.array([_field_f1(pa[i], field) for i in shared])
            b = np.array([_field_f1(pb[i], field) for i in shared])
        ci, p = paired_bootstrap(a, b)
        rows.append(FieldComparison(field=field, a=round(a.mean(), 4), b=round(b.mean(), 4), diff=round(b.mean() - a.mean(), 4),
                                    ci95=(round(ci[0], 4), round(ci[1], 4)), p_value=round(p, 4),
                                    papers_differing=int(np.sum(a != b))))
    papers = sorted(shared, key=lambda i: -abs(pb[i]["overall"] - pa[i]["overall"]))
    differing = []
    for i in papers:
        fields = [f for f in HEADLINE_FIELDS if _field_f1(pa[i], f) != _field_f1(pb[i], f)]
        differing.append({"paper_id": i, "a": pa[i]["overall"], "b": pb[i]["overall"], "fields": fields})
    return rows, [d for d in differing if d["fields"] or d["a"] != d["b"]][:top]
