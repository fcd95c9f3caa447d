"""F1, precision and recall from (tp, fp, fn) counts (van Rijsbergen 1979), each None where undefined.

:func:`f1` takes one triple of counts; :func:`f1_pooled` the same formula over arrays of pooled
counts (a bootstrap's resamples at once), NaN where undefined.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from paperfields.scoring.metrics._metric import metric


@metric("f1", higher_is_better=True, source="van Rijsbergen 1979, Information Retrieval, ch. 7")
def f1(tp: int, fp: int, fn: int) -> Optional[float]:
    """F1 = 2tp / (2tp + fp + fn); None when all three are zero (nothing in gold and nothing
    predicted: undefined, never 1.0)."""
    denominator = 2 * tp + fp + fn
    return None if denominator == 0 else 2 * tp / denominator


def f1_pooled(totals: np.ndarray) -> np.ndarray:
    """:func:`f1` over pooled counts: ``totals`` of shape (..., 3) holding (tp, fp, fn); shape (...),
    NaN where undefined (tp + fp + fn = 0)."""
    tp, fp, fn = totals[..., 0], totals[..., 1], totals[..., 2]
    denominator = 2 * tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, 2 * tp / np.where(denominator > 0, denominator, 1), np.nan)


@metric("precision", higher_is_better=True, source="van Rijsbergen 1979")
def precision(tp: int, fp: int, fn: int = 0) -> Optional[float]:
    """tp / (tp + fp); None when nothing was predicted (tp + fp = 0).
    ``fn`` is ignored (one signature for the three)."""
    return tp / (tp + fp) if tp + fp else None


@metric("recall", higher_is_better=True, source="van Rijsbergen 1979")
def recall(tp: int, fp: int, fn: int) -> Optional[float]:
    """tp / (tp + fn); None when gold is empty (tp + fn = 0). ``fp`` is ignored."""
    return tp / (tp + fn) if tp + fn else None


def prf(tp: int, fp: int, fn: int) -> tuple[Optional[float], Optional[float], Optional[float]]:
    """(precision, recall, F1) of one triple of counts, each None where undefined."""
    return precision(tp, fp, fn), recall(tp, fp, fn), f1(tp, fp, fn)
