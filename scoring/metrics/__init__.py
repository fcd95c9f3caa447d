"""Metrics, one small module each, every one declaring its name and direction (``higher_is_better``;
None for an interval, which takes its statistic's) and returning None where undefined:

- :mod:`.f1`: F1, precision, recall of (tp, fp, fn) counts;
- :mod:`.accuracy`: classification accuracy;
- :mod:`.kappa`: Cohen's kappa (agreement of two labelings);
- :mod:`.bootstrap`: percentile bootstrap CIs over papers (pooled counts, a mean, any statistic);
- :mod:`.paired_bootstrap`: the paired bootstrap difference of two runs, with its p-value.

A new metric is a new module here marked with :func:`~._metric.metric`.
"""

from paperfields.scoring.metrics._metric import METRICS, metric
from paperfields.scoring.metrics.accuracy import accuracy, accuracy_pooled
from paperfields.scoring.metrics.bootstrap import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    bootstrap_ci,
    index_bootstrap_ci,
    pooled_bootstrap_ci,
)
from paperfields.scoring.metrics.f1 import f1, f1_pooled, precision, prf, recall
from paperfields.scoring.metrics.kappa import cohen_kappa
from paperfields.scoring.metrics.paired_bootstrap import COMPARE_RESAMPLES, paired_bootstrap

__all__ = ["METRICS", "metric", "accuracy", "accuracy_pooled", "BOOTSTRAP_RESAMPLES", "BOOTSTRAP_SEED", "bootstrap_ci",
           "index_bootstrap_ci", "pooled_bootstrap_ci", "f1", "f1_pooled", "precision", "prf", "recall", "cohen_kappa",
           "COMPARE_RESAMPLES", "paired_bootstrap"]
