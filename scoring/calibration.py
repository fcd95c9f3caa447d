"""Per-field confidence and its calibration: is a field the model is 80% sure of right 80% of the time?

Two confidences per (paper, field), both in [0, 1], kept in the prediction line's ``notes`` and never
in the scored record:

- ``asked``: the model states it (the ``confidence`` strategy, ``prompts/confidence.toml``), one number
  per field next to the record (``notes["confidence"]``).
- ``logprob``: derived without asking, where the backend exposes token log-probabilities (the
  in-process llama.cpp backend does): the geometric mean probability of the tokens that write the
  field's value, ``exp(mean log p)`` (``notes["logprob_confidence"]``,
  :func:`paperfields.core.confidence.value_confidences`).

The outcome a confidence is checked against is whether the field is exactly right on that paper: no
false positive and no false negative in the scorer's per-paper counts (for a list field every gold
item found and nothing extra; an empty prediction on empty gold is right; a failed paper has no
confidence and is left out).

Metrics (lower is better; undefined, ``None``, without any confidence):

- Brier score: the mean of ``(confidence - outcome)^2`` (Brier 1950, "Verification of forecasts
  expressed in terms of probability", Monthly Weather Review 78(1)).
- Expected calibration error with ``ECE_BINS`` equal-width bins over [0, 1] (a confidence of exactly
  1.0 falls in the last bin): ``sum_b n_b / N * |accuracy_b - mean confidence_b|`` (Naeini, Cooper and
  Hauskrecht 2015, "Obtaining Well Calibrated Probabilities Using Bayesian Binning", AAAI; Guo et al.
  2017, "On Calibration of Modern Neural Networks", ICML).
- The reliability diagram plots accuracy against mean confidence per bin (DeGroot and Fienberg 1983;
  Niculescu-Mizil and Caruana 2005), see :func:`paperfields.plots.plot_reliability`.

Calibrated is not the same as useful for finding errors: a model that states 0.35 everywhere and is
right 35% of the time has ECE 0 and tells a user nothing about which fields to check. So beside
them, selective prediction (:mod:`paperfields.scoring.metrics.risk_coverage`, Geifman & El-Yaniv
2017): the risk–coverage curve (error rate of the fields kept when only the most confident are
kept), its area AURC (lower is better; equal to the error rate when the confidence ranks nothing)
and the share of wrong fields caught by flagging the least confident 20% (higher is better; 0.2 at
random), ties in confidence in expected value over their orders. Plotted beside the reliability
diagram by :func:`paperfields.plots.plot_risk_coverage`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional

import numpy as np
from pydantic import BaseModel, Field

from paperfields.scoring.metrics.risk_coverage import FLAG_SHARE, aurc, errors_caught, risk_coverage_curve

ECE_BINS = 10
CURVE_POINTS = 20  # the stored risk–coverage curve: risk at coverage 5%, 10%, ..., 100%
SOURCES = ("asked", "logprob")
NOTE_KEYS = {"asked": "confidence", "logprob": "logprob_confidence"}


def field_outcome(counts: Iterable[int]) -> int:
    """1 when a field is exactly right on one paper, from its per-paper ``(tp, fp, fn)``: no false
    positive and no false negative (an empty answer on empty gold is right), else 0."""
    _, fp, fn = counts
    return int(fp == 0 and fn == 0)


def brier_score(confidences: np.ndarray, outcomes: np.ndarray) -> Optional[float]:
    """Mean squared difference between confidences in [0, 1] and 0/1 outcomes (Brier 1950); None when empty."""
    if len(confidences) == 0:
        return None
    return float(np.mean((np.asarray(confidences, dtype=float) - np.asarray(outcomes, dtype=float)) ** 2))


def reliability_bins(confidences: np.ndarray, outcomes: np.ndarray, bins: int = ECE_BINS) -> list[dict[str, float]]:
    """The non-empty equal-width bins over [0, 1]: ``{"low", "high", "count", "confidence", "accuracy"}``
    (mean confidence and share of outcomes that are 1 in the bin); a confidence of 1.0 is in the last bin."""
    c = np.asarray(confidences, dtype=float)
    o = np.asarray(outcomes, dtype=float)
    index = np.minimum((c * bins).astype(int), bins - 1)
    out = []
    for b in range(bins):
        inside = index == b
        if inside.any():
            out.append(
                {
                    "low": b / bins,
                    "high": (b + 1) / bins,
                    "count": int(inside.sum()),
                    "confidence": float(c[inside].mean()),
                    "accuracy": float(o[inside].mean()),
                }
            )
    return out


def expected_calibration_error(confidences: np.ndarray, outcomes: np.ndarray, bins: int = ECE_BINS) -> Optional[float]:
    """ECE over ``bins`` equal-width bins: ``sum_b n_b / N * |accuracy_b - confidence_b|`` (Naeini et al.
    2015; Guo et al. 2017). In [0, 1], lower is better; None when empty."""
    n = len(confidences)
    if n == 0:
        return None
    return float(
        sum(
            b["count"] / n * abs(b["accuracy"] - b["confidence"]) for b in reliability_bins(confidences, outcomes, bins)
        )
    )


class Calibration(BaseModel):
    """Calibration of one confidence source over a run's answered papers and the headline fields."""

    pairs: int = Field(description="(paper, field) pairs with a confidence")
    brier: Optional[float] = Field(description="Brier score over the pairs (lower is better)")
    ece: Optional[float] = Field(
        description=f"expected calibration error, {ECE_BINS} equal-width bins (lower is better)"
    )
    mean_confidence: Optional[float] = None
    accuracy: Optional[float] = Field(default=None, description="share of the pairs whose field is exactly right")
    aurc: Optional[float] = Field(
        default=None,
        description="area under the risk–coverage curve (Geifman & El-Yaniv 2017), lower is "
        "better; equals the error rate when the confidence ranks nothing; ties in expected value over their orders",
    )
    errors_caught_20: Optional[float] = Field(
        default=None,
        description=f"share of the wrong pairs among the least confident "
        f"{FLAG_SHARE:.0%} (higher is better; {FLAG_SHARE} at random); None without a wrong pair",
    )
    per_field: dict[str, dict[str, Optional[float]]] = Field(
        default_factory=dict, description="field -> pairs, brier, ece, aurc, errors_caught_20"
    )
    bins: list[dict[str, float]] = Field(default_factory=list, description="reliability diagram: non-empty bins")
    risk_coverage: list[tuple[float, float]] = Field(
        default_factory=list,
        description=f"risk–coverage curve at {CURVE_POINTS} coverages "
        "(k / N for k = ceil(j N / 20)): (coverage, error rate of the k most confident pairs)",
    )


def _round(x: Optional[float]) -> Optional[float]:
    return None if x is None else round(x, 4)


def curve_points(
    confidences: np.ndarray, outcomes: np.ndarray, points: int = CURVE_POINTS
) -> list[tuple[float, float]]:
    """The risk–coverage curve (:func:`~paperfields.scoring.metrics.risk_coverage.risk_coverage_curve`)
    at ``points`` coverages, k = ceil(j N / points) for j = 1..points (repeated k kept once), as
    (coverage, risk) rounded to 4 digits; [] without pairs."""
    coverage, risk = risk_coverage_curve(confidences, outcomes)
    n = len(risk)
    ks = dict.fromkeys(min(n, -(-j * n // points)) for j in range(1, points + 1)) if n else {}
    return [(round(float(coverage[k - 1]), 4), round(float(risk[k - 1]), 4)) for k in ks]


def calibration_of(pairs: list[tuple[str, float, int]]) -> Calibration:
    """Brier score, ECE, reliability bins, AURC, errors caught and the risk–coverage curve of
    ``(field, confidence, outcome)`` pairs, pooled (and all but the bins and curve per field)."""
    conf = np.array([c for _, c, _ in pairs], dtype=float)
    out = np.array([o for _, _, o in pairs], dtype=float)
    per_field = {}
    for field in dict.fromkeys(f for f, _, _ in pairs):
        sel = np.array([f == field for f, _, _ in pairs])
        per_field[field] = {
            "pairs": int(sel.sum()),
            "brier": _round(brier_score(conf[sel], out[sel])),
            "ece": _round(expected_calibration_error(conf[sel], out[sel])),
            "aurc": _round(aurc(conf[sel], out[sel])),
            "errors_caught_20": _round(errors_caught(conf[sel], out[sel])),
        }
    return Calibration(
        pairs=len(pairs),
        brier=_round(brier_score(conf, out)),
        ece=_round(expected_calibration_error(conf, out)),
        aurc=_round(aurc(conf, out)),
        errors_caught_20=_round(errors_caught(conf, out)),
        risk_coverage=curve_points(conf, out),
        mean_confidence=_round(float(conf.mean())) if len(pairs) else None,
        accuracy=_round(float(out.mean())) if len(pairs) else None,
        per_field=per_field,
        bins=[
            {k: round(v, 4) if isinstance(v, float) else v for k, v in b.items()} for b in reliability_bins(conf, out)
        ],
    )


def run_calibration(
    notes: dict[str, dict[str, Any]], detail: list[dict[str, Any]], fields: Iterable[str]
) -> dict[str, Calibration]:
    """Calibration per confidence source (``asked``, ``logprob``) present in a run.

    ``notes`` maps paper id to the prediction line's notes; ``detail`` is the scorer's per-paper rows
    (``paper_id``, ``answered``, ``fields``: field -> (tp, fp, fn)). Only answered papers count, and
    only (paper, field) pairs with a confidence that is a number in [0, 1]. A source no paper has is
    left out of the result.
    """
    fields = tuple(fields)
    out: dict[str, Calibration] = {}
    for source in SOURCES:
        pairs = []
        for row in detail:
            given = (notes.get(row["paper_id"]) or {}).get(NOTE_KEYS[source])
            if not row.get("answered") or not isinstance(given, dict):
                continue
            for field in fields:
                c = given.get(field)
                if isinstance(c, (int, float)) and not isinstance(c, bool) and 0.0 <= c <= 1.0:
                    pairs.append((field, float(c), field_outcome(row["fields"][field])))
        if pairs:
            out[source] = calibration_of(pairs)
    return out
