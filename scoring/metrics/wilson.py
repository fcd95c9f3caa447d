"""Wilson score intervals: a 95% interval for a proportion that keeps its width at 0 and at 1.

The percentile bootstrap cannot: when every paper gets a field right (or wrong), every resample
repeats the point and the interval is [1, 1] (or [0, 0]), a certainty the sample does not give; the
BCa bootstrap is undefined there (``scipy.stats.bootstrap(method="BCa")`` returns NaN for a
degenerate distribution). Two intervals, both from ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``:

- :func:`wilson_ci`: a proportion of ``successes`` out of ``trials`` (an accuracy field: papers
  labeled right out of papers), Wilson 1927;
- :func:`f1_edge_ci`: a pooled (micro) F1 of exactly 0 or 1. F1 = 2J / (1 + J), where J = tp / (tp +
  fp + fn) is a proportion (the Jaccard share of matched items), and J is 1 (or 0) on every paper
  the field counts anything on; the Wilson interval of J over those papers (all right, or all wrong),
  carried to F1 through that increasing map. Papers, not items, are the trials: a paper's items are
  not independent, and a sample at a bound says nothing about how much they share, so the smaller
  count is the side that claims less.
"""

from __future__ import annotations

import functools

from paperfields.scoring.metrics._metric import metric
from paperfields.scoring.metrics.bootstrap import CONFIDENCE, Interval

WILSON_SOURCE = (
    "Wilson 1927, Probable inference, the law of succession, and statistical inference, JASA 22(158); "
    "Brown, Cai & DasGupta 2001, Interval estimation for a binomial proportion, Statistical Science 16(2)"
)


# pure, and scipy's binomtest costs about 2 ms: the runs of a board and the fields of a run ask the same counts often
@functools.lru_cache(maxsize=4096)
def _wilson(successes: int, trials: int) -> tuple[float, float]:
    from scipy import stats  # imported here: scipy.stats costs about 0.7 s of every command that imports this module

    interval = stats.binomtest(successes, trials).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return float(interval.low), float(interval.high)


@metric("wilson_ci", higher_is_better=None, source=WILSON_SOURCE)
def wilson_ci(successes: int, trials: int) -> Interval:
    """95% Wilson score interval of ``successes`` / ``trials``, rounded to 4 digits; (lower, 1.0) at
    ``successes == trials`` with lower = trials / (trials + z^2), (0.0, upper) at 0. None with no
    trial. Raises ValueError when ``successes`` is negative or above ``trials``."""
    if trials <= 0:
        return None
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must lie in [0, trials], got {successes} of {trials}")
    low, high = _wilson(successes, trials)
    return (round(low, 4), round(high, 4))


@metric(
    "f1_edge_ci",
    higher_is_better=None,
    source=WILSON_SOURCE + "; F1 = 2J / (1 + J) of the Jaccard share J (van Rijsbergen 1979)",
)
def f1_edge_ci(score: float, papers: int) -> Interval:
    """95% interval of a pooled F1 that is exactly 1 (no false positive nor negative, some true
    positive) or exactly 0 (no true positive), over the ``papers`` papers where the field counts
    anything (tp + fp + fn > 0): the Wilson interval of J = tp / (tp + fp + fn) with all ``papers``
    right (or none), each end mapped to F1 = 2J / (1 + J); rounded to 4 digits. At 1:
    (2L / (1 + L), 1.0), L = papers / (papers + z^2). None with no such paper. Raises ValueError for a
    score strictly between 0 and 1 (the bootstrap's case)."""
    if score not in (0.0, 1.0):
        raise ValueError(f"f1_edge_ci is for an F1 of 0 or 1, got {score}")
    if papers <= 0:
        return None
    low, high = _wilson(papers if score == 1.0 else 0, papers)
    return (round(2 * low / (1 + low), 4), round(2 * high / (1 + high), 4))
