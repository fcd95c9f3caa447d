"""Paired comparison of two scored runs on the same papers.

Paired bootstrap (Koehn 2004; Berg-Kirkpatrick et al. 2012): resample papers with replacement, and
on each resample recompute both runs' pooled scores (the headline, or a field's micro F1 / accuracy,
from the counts summed over the resampled papers) and their difference B - A; the 95% CI is the
percentile interval of those differences (scipy.stats.bootstrap over paper indices) and the
two-sided p-value is ``2 (k + 1) / (B + 1)``, capped at 1, where ``k`` of the ``B`` resampled
differences lie on the other side of zero from the observed one (or on zero): the Monte Carlo
p-value of Davison & Hinkley (1997), *Bootstrap Methods and their Application*, ch. 4, whose floor
``2 / (B + 1)`` says that B resamples cannot show a p-value below it (``k / B`` would say 0). A
resample where a field is undefined for either run is left out of ``B``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Optional

import numpy as np
from pydantic import BaseModel
from scipy import stats

from paperfields.core.runlog import RunError
from paperfields.scoring.runs import load_scored_run
from paperfields.scoring.score import BOOTSTRAP_SEED, HEADLINE_FIELDS, REPORTED_FIELDS, field_scores, headline_of

COMPARE_RESAMPLES = 10000


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
    return np.array([[rows[i]["fields"][f] for f in fields] for i in ids], dtype=np.int64).reshape(len(ids), len(fields), 3)


def paired_bootstrap(a: np.ndarray, b: np.ndarray, statistic) -> tuple[Optional[tuple[float, float]], Optional[float]]:
    """95% CI of statistic(B) - statistic(A) and the two-sided paired-bootstrap p-value, seeded.

    ``a`` and ``b`` hold per-paper counts (shape (papers, ...)) in the same paper order; ``statistic``
    maps counts summed over papers (shape (batch, ...)) to values (batch,), NaN when undefined.
    The p-value is ``min(1, 2 (k + 1) / (B + 1))`` over the ``B`` defined resamples, ``k`` of them at or
    beyond zero against the observed sign (Davison & Hinkley 1997, ch. 4): never 0; 1 when the runs
    do not differ. Returns (None, None) when the difference is undefined on every resample, and under
    2 papers (unless the runs' counts are equal): one paper's resamples are all the observed
    difference, so neither a CI nor a p-value can be told from them."""
    n = len(a)

    def diff(index: np.ndarray, axis: int = -1) -> np.ndarray:
        index = index.astype(int)
        axis_of_papers = -a.ndim
        return statistic(b[index].sum(axis=axis_of_papers)) - statistic(a[index].sum(axis=axis_of_papers))

    observed = float(diff(np.arange(n)))
    if np.isnan(observed):
        return None, None
    if np.array_equal(a, b):
        return (observed, observed), 1.0
    if n < 2:  # one paper: every resample is the observed difference, which says nothing about its spread
        return None, None
    with warnings.catch_warnings():  # undefined resamples are NaN: dropped below, scipy's own interval unused
        warnings.simplefilter("ignore")
        res = stats.bootstrap((np.arange(n),), diff, vectorized=True, n_resamples=COMPARE_RESAMPLES, method="percentile",
                              random_state=np.random.default_rng(BOOTSTRAP_SEED))
    dist = res.bootstrap_distribution[~np.isnan(res.bootstrap_distribution)]
    if not len(dist):
        return None, None
    low, high = np.percentile(dist, [2.5, 97.5])
    if np.all(dist == observed):
        return (observed, observed), (1.0 if observed == 0 else 2 / (len(dist) + 1))
    other_side = int(np.sum(dist <= 0) if observed > 0 else np.sum(dist >= 0))
    return (float(low), float(high)), float(min(1.0, 2 * (other_side + 1) / (len(dist) + 1)))


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
        raise RunError(f"{run_a.name} was scored with scorer {sa.scorer_version} and gold {sa.gold_version}, {run_b.name} with "
                       f"scorer {sb.scorer_version} and gold {sb.gold_version}: re-score both with `paperfields score` to compare them")
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
        rows.append(FieldComparison(field=field, a=_r(score_a), b=_r(score_b), diff=_r(score_b - score_a),
                                    ci95=None if ci is None else (round(ci[0], 4), round(ci[1], 4)), p_value=_r(p),
                                    papers_differing=int(np.sum(np.any(ca != cb, axis=(1, 2))))))
    per_paper = lambda row: row.get("per_paper_f1", row.get("overall", 0.0))  # noqa: E731  (rows before scorer 3 say "overall")
    differing = []
    for i in sorted(shared, key=lambda i: -abs(per_paper(pb[i]) - per_paper(pa[i]))):
        fields = [f for f in HEADLINE_FIELDS if pa[i]["fields"][f] != pb[i]["fields"][f] or pa[i].get("answered", True) != pb[i].get("answered", True)]
        differing.append({"paper_id": i, "a": per_paper(pa[i]), "b": per_paper(pb[i]), "fields": fields})
    return Comparison(fields=rows, papers=[d for d in differing if d["fields"] or d["a"] != d["b"]][:top], shared_papers=n,
                      scored_papers_a=len(pa), scored_papers_b=len(pb), same_run=run_a.resolve() == run_b.resolve(),
                      same_predictions=sa.predictions_sha256 is not None and sa.predictions_sha256 == sb.predictions_sha256)
