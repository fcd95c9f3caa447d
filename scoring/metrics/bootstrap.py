"""Percentile bootstrap over papers (Efron & Tibshirani 1993, An Introduction to the Bootstrap, ch. 13).

One place draws the resampled papers: :func:`draws`, the draws ``scipy.stats.bootstrap`` makes
(``Generator.integers(0, n, (resamples, n))`` from ``default_rng(seed)``), in bounded chunks of rows
(chunked draws give the same rows as one draw). A statistic of pooled counts is computed on each
resample's totals, ``multiplicity @ counts``, never on a gathered copy of the counts (which took
resamples x papers x fields x 3 numbers: gigabytes at 7,600 papers).

Two readings of a distribution, each kept for the numbers already published with it:
:func:`percentile_interval` (``numpy.percentile`` over the defined resamples: the scorer's pooled CIs
and the paired comparison) and :func:`scipy_interval` (``scipy.stats.quantile`` at the levels
``scipy.stats.bootstrap`` uses: the CI of a mean and the agreement figures). Every CI is None under 2
papers: one paper's resamples all repeat it, which says nothing about spread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Optional

import numpy as np

from paperfields.scoring.metrics._metric import metric

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController

BOOTSTRAP_SEED = 20260
BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95
CHUNK_CELLS = 1 << 20  # resampled paper indices held at once (8 MiB of int64): bounds memory at any corpus size

Interval = Optional[tuple[float, float]]


def draws(n: int, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> Iterator[np.ndarray]:
    """The resampled paper indices, row r being resample r: int64 arrays of shape (chunk, n) whose rows
    concatenate to the (resamples, n) draw ``scipy.stats.bootstrap`` makes with ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    chunk = max(1, min(resamples, CHUNK_CELLS // max(n, 1)))
    for start in range(0, resamples, chunk):
        yield rng.integers(0, n, size=(min(chunk, resamples - start), n))


def multiplicities(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each of ``n`` papers is drawn in each resample: (chunk, n) float64 from (chunk, n) indices."""
    rows = indices.shape[0]
    flat = (indices + (np.arange(rows) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)


@lru_cache(maxsize=8)
def _small_weights(n: int, resamples: int, seed: int) -> np.ndarray:
    # a whole draw that fits one chunk is kept (at most 8 MiB each): every field and run of a size reuses it
    (indices,) = draws(n, resamples, seed)
    weights = multiplicities(indices, n)
    weights.setflags(write=False)
    return weights


def _weights(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    if n * resamples <= CHUNK_CELLS:
        yield _small_weights(n, resamples, seed)
    else:
        for indices in draws(n, resamples, seed):
            yield multiplicities(indices, n)


def distribution(
    n: int,
    statistic: Callable[[np.ndarray], np.ndarray],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> np.ndarray:
    """``statistic`` on every resample of ``n`` papers: it maps a (chunk, n) array of paper indices to
    values of shape (chunk, ...); returns shape (resamples, ...)."""
    return np.concatenate([np.asarray(statistic(chunk)) for chunk in draws(n, resamples, seed)])


def pooled_distribution(
    counts: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> np.ndarray:
    """``statistic`` of the counts pooled over each resample's papers. ``counts`` holds one row per
    paper (shape (n, ...), integers); ``statistic`` maps summed counts of shape (chunk, ...) to values
    of shape (chunk, ...), NaN where undefined. Returns shape (resamples, ...)."""
    n = counts.shape[0]
    flat = counts.reshape(n, -1).astype(np.float64)  # exact: sums of small integers stay far below 2**53
    integer = np.issubdtype(counts.dtype, np.integer)

    values = []
    for weights in _weights(n, resamples, seed):
        with _blas().limit(limits=1, user_api="blas"):
            totals = (weights @ flat).reshape((weights.shape[0],) + counts.shape[1:])
        values.append(np.asarray(statistic(np.rint(totals).astype(counts.dtype) if integer else totals)))
    return np.concatenate(values)


@lru_cache(maxsize=1)
def _blas() -> ThreadpoolController:
    # One thread for these products: they take a millisecond, and BLAS worker threads spin between calls, which
    # doubled the CPU time of scoring on 2 idle cores and slowed it on a busy machine (bench/bench_scoring.py).
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def percentile_interval(values: np.ndarray) -> Interval:
    """The 95% percentile interval (``numpy.percentile`` at 2.5 and 97.5) of the defined (non-NaN)
    ``values`` of a 1-D distribution, rounded to 4 digits; None when none is defined."""
    defined = values[~np.isnan(values)]
    if not len(defined):
        return None
    low, high = np.percentile(defined, [2.5, 97.5])
    return (round(float(low), 4), round(float(high), 4))


def scipy_interval(values: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of a 1-D distribution as ``scipy.stats.bootstrap`` reads it
    (``scipy.stats.quantile`` at (1 - 0.95) / 2 and its complement), unrounded; NaN ends when
    ``values`` hold a NaN."""
    alpha = np.asarray((1 - CONFIDENCE) / 2)
    from scipy import stats  # imported here: scipy.stats costs about 0.7 s, and only this quantile needs it

    low, high = stats.quantile(values, np.stack((alpha, 1 - alpha), axis=-1), axis=-1)
    return float(low), float(high)


@metric("pooled_bootstrap_ci", higher_is_better=None, source="Efron & Tibshirani 1993, ch. 13 (percentile interval)")
def pooled_bootstrap_ci(counts: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray]) -> Interval:
    """95% percentile bootstrap CI of a statistic of pooled counts, resampling papers (see
    :func:`pooled_distribution` for the shapes). Resamples where the statistic is undefined are left
    out. None under 2 papers, or when the statistic is undefined on every resample."""
    if counts.shape[0] < 2:
        return None
    return percentile_interval(pooled_distribution(counts, statistic))


@metric("bootstrap_ci", higher_is_better=None, source="Efron & Tibshirani 1993, ch. 13 (percentile interval)")
def bootstrap_ci(values: list[float] | np.ndarray) -> Interval:
    """95% percentile bootstrap CI of the mean of per-paper ``values``, resampling papers, rounded to 4
    digits. None under 2 values; (m, m) when all values are m."""
    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        return None
    if np.all(data == data[0]):
        return (round(float(data[0]), 4), round(float(data[0]), 4))
    low, high = scipy_interval(distribution(len(data), lambda indices: data[indices].mean(axis=-1)))
    return (round(low, 4), round(high, 4))


@metric("index_bootstrap_ci", higher_is_better=None, source="Efron & Tibshirani 1993, ch. 13 (percentile interval)")
def index_bootstrap_ci(
    statistic: Callable[[np.ndarray], float],
    n: int,
    rows: Optional[Callable[[np.ndarray], np.ndarray]] = None,
) -> Interval:
    """95% percentile bootstrap CI of ``statistic(paper indices)`` (one resample's indices, shape (n,)
    -> a number), resampling ``n`` papers, rounded to 4 digits; for statistics that are not sums of
    counts. ``rows``, where given, is the same statistic over a chunk of resamples at once ((chunk, n)
    indices -> (chunk,) floats) and must give, row for row, the very float ``statistic`` gives (it is
    what the distribution is built from; ``statistic`` gives the point value). None under 2 papers; the
    point value twice when the interval is NaN (a NaN resample)."""
    if n < 2:
        return None
    point = round(float(statistic(np.arange(n))), 4)
    if rows is None:
        rows = lambda indices: np.array([statistic(row) for row in indices], dtype=float)  # noqa: E731
    low, high = scipy_interval(distribution(n, rows))
    if np.isnan(low) or np.isnan(high):
        return (point, point)
    return (round(low, 4), round(high, 4))
