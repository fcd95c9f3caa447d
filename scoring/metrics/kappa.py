"""Cohen's kappa: agreement of two raters' labels beyond chance (Cohen 1960)."""

from __future__ import annotations

from collections import Counter
from typing import Optional

import numpy as np

from paperfields.scoring.metrics._metric import metric


@metric(
    "cohen_kappa",
    higher_is_better=True,
    source="Cohen 1960, A coefficient of agreement for nominal scales, Educational and Psychological Measurement 20(1)",
)
def cohen_kappa(pairs: list[tuple[object, object]]) -> Optional[float]:
    """(p_o - p_e) / (1 - p_e) of (first rater, second rater) label pairs; 1.0 when p_e == 1 and the
    raters agree everywhere; None for no pairs."""
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[k] * second[k] for k in first) / (n * n)
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)


def cohen_kappa_of_resamples(pairs: list[tuple[object, object]], indices: np.ndarray) -> np.ndarray:
    """:func:`cohen_kappa` of each resample of ``pairs``: ``indices`` (shape (chunk, n), each row one
    resample's pair indices) -> (chunk,) float64, row for row the very float ``cohen_kappa`` gives on
    ``[pairs[i] for i in row]`` (the same integer counts, the same divisions; a bootstrap of kappa over
    thousands of resamples in one pass). Raises ValueError for an empty row."""
    if indices.shape[-1] == 0:
        raise ValueError("a resample of no pairs has no kappa")
    codes: dict[object, int] = {}
    first = np.array([codes.setdefault(a, len(codes)) for a, _ in pairs], dtype=np.int64)
    second = np.array([codes.setdefault(b, len(codes)) for _, b in pairs], dtype=np.int64)
    a, b = first[indices], second[indices]
    n = indices.shape[-1]
    observed = (a == b).sum(axis=-1) / n
    agreeing_by_chance = sum((a == k).sum(axis=-1) * (b == k).sum(axis=-1) for k in range(len(codes)))
    expected = agreeing_by_chance / (n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected == 1, 1.0, (observed - expected) / (1 - expected))
