"""Paired comparison of two scored runs on the same papers.

The paired bootstrap (:mod:`paperfields.scoring.metrics.paired_bootstrap`) on each run's pooled scores:
the headline, or a field's micro F1 / accuracy, from the counts summed over the resampled papers. A
resample where a field is undefined for either run is left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import numpy as np
from pydantic import BaseModel

from paperfields.core.runlog import RunError
from paperfields.scoring.metrics.paired_bootstrap import paired_bootstrap
from paperfields.scoring.runs import load_scored_run
from paperfields.scoring.score import HEADLINE_FIELDS, REPORTED_FIELDS, field_scores, headline_of


class FieldComparison(BaseModel):
    """One field (or ``headline``): each run's pooled score on the shared papers, B - A, its 95% CI
    and paired-bootstrap p-value; scores are None (and so are diff, CI and p) where undefined."""

    field: str
    a: Optional[float]
    b: Optional[float]
    diff: Optional[float]
    ci95: Optional[tuple[float, float]]
    p_value: Optional[float]
    papers_differing: int


def _counts(rows: dict[str, dict], ids: list[str], fields: tuple[str, ...]) -> np.ndarray:
    """(tp, fp, fn) of ``fields`` for papers ``ids`` from paper_scores.jsonl rows: shape (papers, fields, 3)."""
    return np.array([[rows[i]["fields"][f] for f in fields] for i in ids], dtype=np.int64).reshape(
        len(ids), len(fields), 3
    )


def _r(value: Optional[float]) -> Optional[float]:
    return None if value is None or np.isnan(value) else round(float(value), 4)


class Comparison(BaseModel):
    """What :func:`compare` finds: ``fields`` (the headline, then every reported field) and ``papers``
    (those that differ most, see :func:`compare`), computed on the ``shared_papers`` both runs scored;
    ``scored_papers_a``/``_b`` are how many each run scored in all, so a score shown here is over fewer
    papers than the run's own scores when its count exceeds ``shared_papers``. ``same_run``: A and B are
    one run folder; ``same_predictions``: their predictions files are identical (every difference is 0)."""

    fields: list[FieldComparison]
    papers: list[dict[str, Any]]
    shared_papers: int
    scored_papers_a: int
    scored_papers_b: int
    same_run: bool
    same_predictions: bool


def compare(run_a: Path, run_b: Path, top: int = 5, gold_path: Path | None = None) -> Comparison:
    """Paired comparison of two scored runs on the papers both scored: the headline first, then every
    reported field; and up to ``top`` papers that differ (in a headline field's counts or in
    per-paper F1), largest per-paper F1 difference first; papers both runs scored alike are never
    listed; with how many papers both runs and each run scored. Raises ValueError when they share no
    paper and RunError when a run is not scored, its scores files are unreadable or stale (given
    ``gold_path``: scored against another version of it), or the two were scored with different
    scorer or gold versions."""
    (sa, pa), (sb, pb) = load_scored_run(run_a, gold_path), load_scored_run(run_b, gold_path)
    if (sa.scorer_version, sa.gold_version) != (sb.scorer_version, sb.gold_version):
        raise RunError(
            f"{run_a.name} was scored with scorer {sa.scorer_version} and gold "
            f"{sa.gold_version}, {run_b.name} with scorer {sb.scorer_version} and gold "
            f"{sb.gold_version}: re-score both with `paperfields score` to compare them"
        )
    shared = sorted(set(pa) & set(pb))
    if not shared:
        raise ValueError(f"{run_a.name} and {run_b.name} share no scored paper")
    n = len(shared)
    rows = []
    for field in ("headline",) + REPORTED_FIELDS:
        fields = HEADLINE_FIELDS if field == "headline" else (field,)
        ca, cb = _counts(pa, shared, fields), _counts(pb, shared, fields)
        if field == "headline":
            statistic = lambda t: headline_of(t, n)  # noqa: E731
        else:
            statistic = lambda t, f=field: field_scores(t, n, (f,))[..., 0]  # noqa: E731
        score_a, score_b = float(statistic(ca.sum(axis=0)[None])[0]), float(statistic(cb.sum(axis=0)[None])[0])
        ci, p = paired_bootstrap(ca, cb, statistic)
        rows.append(
            FieldComparison(
                field=field,
                a=_r(score_a),
                b=_r(score_b),
                diff=_r(score_b - score_a),
                ci95=None if ci is None else (round(ci[0], 4), round(ci[1], 4)),
                p_value=_r(p),
                papers_differing=int(np.sum(np.any(ca != cb, axis=(1, 2)))),
            )
        )
    per_paper = lambda row: row.get("per_paper_f1", row.get("overall", 0.0))  # noqa: E731  (rows before scorer 3 say "overall")
    differing = []
    for i in sorted(shared, key=lambda i: -abs(per_paper(pb[i]) - per_paper(pa[i]))):
        fields = [
            f
            for f in HEADLINE_FIELDS
            if pa[i]["fields"][f] != pb[i]["fields"][f] or pa[i].get("answered", True) != pb[i].get("answered", True)
        ]
        differing.append({"paper_id": i, "a": per_paper(pa[i]), "b": per_paper(pb[i]), "fields": fields})
    return Comparison(
        fields=rows,
        papers=[d for d in differing if d["fields"] or d["a"] != d["b"]][:top],
        shared_papers=n,
        scored_papers_a=len(pa),
        scored_papers_b=len(pb),
        same_run=run_a.resolve() == run_b.resolve(),
        same_predictions=sa.predictions_sha256 is not None and sa.predictions_sha256 == sb.predictions_sha256,
    )
