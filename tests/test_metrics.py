"""Metrics (scoring/metrics/): each declares its direction, returns None where undefined, and the
bootstrap draws the same resamples and gives the same intervals as scipy.stats.bootstrap did."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from paperfields.scoring import metrics
from paperfields.scoring.metrics import bootstrap as bootstrap_module
from paperfields.scoring.score import _DIRECTIONS, HIGHER_IS_BETTER, METRIC, field_scores, headline_of

SEED, RESAMPLES = metrics.BOOTSTRAP_SEED, metrics.BOOTSTRAP_RESAMPLES


def test_every_metric_declares_its_direction_and_source():
    assert {
        "f1",
        "precision",
        "recall",
        "accuracy",
        "cohen_kappa",
        "bootstrap_ci",
        "pooled_bootstrap_ci",
        "paired_bootstrap",
    } <= set(metrics.METRICS)
    for name, function in metrics.METRICS.items():
        assert function.higher_is_better in (True, False, None), name
        assert function.source, name
    for name in ("f1", "precision", "recall", "accuracy", "cohen_kappa"):
        assert metrics.METRICS[name].higher_is_better is True
    for name in ("bootstrap_ci", "pooled_bootstrap_ci", "index_bootstrap_ci", "paired_bootstrap"):
        assert metrics.METRICS[name].higher_is_better is None  # an interval takes its statistic's direction
    for name, function in metrics.METRICS.items():  # scores.json's table takes a metric's direction from it
        if name in HIGHER_IS_BETTER:
            assert _DIRECTIONS[name] is METRIC, f"{name}'s direction is declared twice"
            assert HIGHER_IS_BETTER[name] is function.higher_is_better, name
    with pytest.raises(ValueError, match="declared twice"):
        metrics.metric("f1", True, "again")(lambda: None)


def test_each_metric_is_none_where_undefined():
    assert metrics.f1(0, 0, 0) is None and metrics.f1(1, 2, 0) == pytest.approx(0.5) and metrics.f1(0, 1, 1) == 0.0
    assert metrics.precision(0, 0, 3) is None and metrics.recall(0, 2, 0) is None
    assert metrics.prf(0, 0, 0) == (None, None, None)
    assert metrics.accuracy(0, 0) is None and metrics.accuracy(3, 4) == 0.75
    assert metrics.cohen_kappa([]) is None
    assert metrics.bootstrap_ci([0.4]) is None and metrics.bootstrap_ci([]) is None
    one_paper = np.array([[[1, 0, 1]]])
    assert metrics.pooled_bootstrap_ci(one_paper, lambda t: metrics.f1_pooled(t)[..., 0]) is None
    assert metrics.index_bootstrap_ci(lambda idx: 0.5, 1) is None  # was (point, point) under two papers
    nothing = np.zeros((5, 1, 3), dtype=np.int64)  # nothing in gold, nothing predicted on any paper
    assert metrics.pooled_bootstrap_ci(nothing, lambda t: metrics.f1_pooled(t)[..., 0]) is None
    assert metrics.paired_bootstrap(nothing, nothing, lambda t: metrics.f1_pooled(t)[..., 0]) == (None, None)
    assert metrics.paired_bootstrap(np.array([[0, 1, 1]]), np.array([[1, 0, 0]]), metrics.f1_pooled) == (None, None)
    assert np.isnan(metrics.accuracy_pooled(np.array([0, 0]), 0)).all()


def test_the_pooled_f1_is_the_f1_of_each_triple():
    counts = np.random.default_rng(1).integers(0, 4, size=(500, 3))
    pooled = metrics.f1_pooled(counts)
    for row, value in zip(counts, pooled):
        expected = metrics.f1(*(int(x) for x in row))
        assert (expected is None and np.isnan(value)) or value == expected


def _old_pooled_ci(counts, statistic):
    """The scorer's CI before scoring/metrics: scipy.stats.bootstrap
    over paper indices, counts gathered per resample."""
    n = counts.shape[0]

    def pooled(index, axis=-1):
        return statistic(counts[index.astype(int)].sum(axis=-1 - (counts.ndim - 1)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.bootstrap(
            (np.arange(n),),
            pooled,
            vectorized=True,
            n_resamples=RESAMPLES,
            method="percentile",
            random_state=np.random.default_rng(SEED),
        )
    dist = res.bootstrap_distribution[~np.isnan(res.bootstrap_distribution)]
    low, high = np.percentile(dist, [2.5, 97.5])
    return (round(float(low), 4), round(float(high), 4)), res.bootstrap_distribution


@pytest.mark.parametrize("papers", [2, 3, 60, 211])
def test_the_bootstrap_draws_scipys_resamples_in_bounded_chunks(papers, monkeypatch):
    expected = np.random.default_rng(SEED).integers(0, papers, size=(RESAMPLES, papers))
    monkeypatch.setattr(bootstrap_module, "CHUNK_CELLS", 1000)  # many small chunks
    chunks = list(bootstrap_module.draws(papers))
    assert len(chunks) > 1 and max(c.size for c in chunks) <= max(1000, papers)
    assert np.array_equal(np.concatenate(chunks), expected)


@pytest.mark.parametrize("papers", [2, 7, 60, 150])
def test_the_pooled_bootstrap_equals_the_old_one_on_a_fixed_seed(papers, monkeypatch):
    rng = np.random.default_rng(papers)
    counts = rng.integers(0, 3, size=(papers, 12, 3))
    counts[:, 4] = 0  # one field undefined everywhere
    counts[: papers // 2, 7] = 0  # one field undefined on many resamples
    statistic = lambda t: headline_of(t, papers)  # noqa: E731
    old_ci, old_dist = _old_pooled_ci(counts, statistic)
    monkeypatch.setattr(bootstrap_module, "CHUNK_CELLS", 97)
    new_dist = bootstrap_module.pooled_distribution(counts, statistic)
    assert np.array_equal(new_dist, old_dist, equal_nan=True)  # every resample, bit for bit
    assert metrics.pooled_bootstrap_ci(counts, statistic) == old_ci
    one_field = counts[:, 7:8]
    old_field, _ = _old_pooled_ci(one_field, lambda t: field_scores(t, papers, ("baselines",))[..., 0])
    assert (
        metrics.pooled_bootstrap_ci(one_field, lambda t: field_scores(t, papers, ("baselines",))[..., 0]) == old_field
    )


def test_the_mean_and_index_bootstraps_equal_scipys_intervals():
    values = np.random.default_rng(3).random(40).round(3)
    res = stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=RESAMPLES,
        confidence_level=0.95,
        method="percentile",
        random_state=np.random.default_rng(SEED),
    )
    assert metrics.bootstrap_ci(values) == (
        round(float(res.confidence_interval.low), 4),
        round(float(res.confidence_interval.high), 4),
    )
    assert metrics.bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5)
    statistic = lambda idx: float(values[idx].max() - values[idx].min())  # noqa: E731  (no sum of counts)
    res = stats.bootstrap(
        (np.arange(40),),
        statistic,
        vectorized=False,
        n_resamples=RESAMPLES,
        confidence_level=0.95,
        method="percentile",
        random_state=np.random.default_rng(SEED),
    )
    assert metrics.index_bootstrap_ci(statistic, 40) == (
        round(float(res.confidence_interval.low), 4),
        round(float(res.confidence_interval.high), 4),
    )


def test_the_paired_bootstrap_equals_the_old_one_on_a_fixed_seed():
    rng = np.random.default_rng(11)
    a, b = rng.integers(0, 3, size=(45, 12, 3)), rng.integers(0, 3, size=(45, 12, 3))
    statistic = lambda t: headline_of(t, 45)  # noqa: E731

    def diff(index, axis=-1):
        index = index.astype(int)
        return statistic(b[index].sum(axis=-3)) - statistic(a[index].sum(axis=-3))

    res = stats.bootstrap(
        (np.arange(45),),
        diff,
        vectorized=True,
        n_resamples=metrics.COMPARE_RESAMPLES,
        method="percentile",
        random_state=np.random.default_rng(SEED),
    )
    dist = res.bootstrap_distribution
    observed = float(diff(np.arange(45)))
    other_side = int(np.sum(dist <= 0) if observed > 0 else np.sum(dist >= 0))
    low, high = np.percentile(dist, [2.5, 97.5])
    assert metrics.paired_bootstrap(a, b, statistic) == (
        (float(low), float(high)),
        min(1.0, 2 * (other_side + 1) / (len(dist) + 1)),
    )


def test_agreement_gives_no_interval_under_two_papers():
    from paperfields.scoring.agreement import field_agreement

    one = field_agreement(np.array([[2, 1, 0], [0, 0, 0]]))  # one paper defines the field
    assert one.papers == 1 and one.pooled == 0.8 and one.pooled_ci95 is None and one.per_paper_ci95 is None


@pytest.mark.parametrize("seed", range(6))
def test_the_resample_statistics_give_the_per_resample_floats_bit_for_bit(seed):
    """The chunked forms the agreement figures bootstrap with (kappa, a field's pooled and per-paper F1, the macro
    over fields) give, row for row, the very float the per-resample statistic gives: the published intervals stay
    byte for byte what they were when each resample was computed on its own."""
    from paperfields.scoring import agreement, validity
    from paperfields.scoring.metrics.kappa import cohen_kappa, cohen_kappa_of_resamples

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    indices = rng.integers(0, n, size=(300, n))
    labels = [(bool(a), bool(b)) for a, b in rng.random((n, 2)) < [0.8, 0.9 if seed % 2 else 1.0]]
    labels += [(True, True)] * (seed == 0)  # n+1 pairs: some resamples hold one rater's label only
    kappa_indices = rng.integers(0, len(labels), size=(300, len(labels)))
    assert cohen_kappa_of_resamples(labels, kappa_indices).tolist() == [
        cohen_kappa([labels[i] for i in row]) for row in kappa_indices
    ]
    constant = [(True, True)] * 5  # p_e = 1 everywhere: Cohen's convention of 1.0, as cohen_kappa
    assert cohen_kappa_of_resamples(constant, np.zeros((3, 5), dtype=int)).tolist() == [1.0, 1.0, 1.0]
    # validity's kappa CI (the or-0.0 statistic) through both paths gives one interval
    by_row = metrics.index_bootstrap_ci(lambda idx: cohen_kappa([labels[i] for i in idx]) or 0.0, len(labels))
    assert validity._kappa_ci(labels)[1] == by_row
    counts = {name: rng.integers(0, 3, size=(n, 3)) * (rng.random((n, 1)) < 0.6) for name in agreement.HEADLINE_FIELDS}
    for pooled in (True, False):
        assert agreement._macro_of_resamples(counts, indices, pooled).tolist() == [
            agreement._macro(counts, row, pooled) for row in indices
        ]
    defined = counts[agreement.HEADLINE_FIELDS[0]]
    defined = defined[defined.sum(axis=1) > 0]
    fa = agreement.field_agreement(defined)
    per = np.array([agreement._f1(row) for row in defined])
    assert fa.pooled_ci95 == metrics.index_bootstrap_ci(lambda idx: agreement._f1(defined[idx].sum(axis=0)), len(per))
    assert fa.per_paper_ci95 == metrics.index_bootstrap_ci(lambda idx: float(per[idx].mean()), len(per))
