"""Field intervals at the edges (issue 27 item 5): a field every paper gets right (or wrong) gets an
interval with width, never [1, 1] or [0, 0]; the values are checked against the closed forms by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from paperfields.scoring import metrics
from paperfields.scoring.score import ACCURACY_FIELDS, REPORTED_FIELDS, aggregate, field_interval
from tests.conftest import ROOT

Z = 1.959963984540054  # the 97.5% point of the standard normal


def _wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    # Wilson 1927: (k + z^2 / 2 -+ z sqrt(k (n - k) / n + z^2 / 4)) / (n + z^2)
    centre, half = k + Z * Z / 2, Z * math.sqrt(k * (n - k) / n + Z * Z / 4)
    return (centre - half) / (n + Z * Z), (centre + half) / (n + Z * Z)


def test_the_wilson_interval_is_the_closed_form():
    assert metrics.wilson_ci(3, 10) == pytest.approx((0.1078, 0.6032), abs=1e-4)  # the textbook 3 of 10
    assert metrics.wilson_ci(3, 10) == pytest.approx(_wilson_by_hand(3, 10), abs=5e-5)
    # at the bounds the interval keeps its width: n / (n + z^2) below 1, z^2 / (n + z^2) above 0
    assert (
        metrics.wilson_ci(60, 60) == pytest.approx((60 / (60 + Z * Z), 1.0), abs=5e-5)
        and metrics.wilson_ci(60, 60)[0] == 0.9398
    )
    assert (
        metrics.wilson_ci(0, 60) == pytest.approx((0.0, Z * Z / (60 + Z * Z)), abs=5e-5)
        and metrics.wilson_ci(0, 60)[1] == 0.0602
    )
    assert metrics.wilson_ci(0, 0) is None
    with pytest.raises(ValueError, match="11 of 10"):
        metrics.wilson_ci(11, 10)


def test_an_f1_at_a_bound_gets_the_wilson_interval_of_the_matched_share_carried_to_f1():
    # 20 papers all right: J in [L, 1], L = 20 / (20 + z^2) = 0.83888; F1 = 2J / (1 + J) -> [0.9124, 1]
    low = 20 / (20 + Z * Z)
    assert (
        metrics.f1_edge_ci(1.0, 20) == pytest.approx((2 * low / (1 + low), 1.0), abs=5e-5)
        and metrics.f1_edge_ci(1.0, 20)[0] == 0.9124
    )
    # 20 papers all wrong: J in [0, U], U = z^2 / (20 + z^2) = 0.16112 -> F1 in [0, 0.2775]
    high = Z * Z / (20 + Z * Z)
    assert (
        metrics.f1_edge_ci(0.0, 20) == pytest.approx((0.0, 2 * high / (1 + high)), abs=5e-5)
        and metrics.f1_edge_ci(0.0, 20)[1] == 0.2775
    )
    assert metrics.f1_edge_ci(1.0, 0) is None
    with pytest.raises(ValueError, match="0 or 1"):
        metrics.f1_edge_ci(0.5, 20)


def _papers(field_counts: dict[str, list[tuple[int, int, int]]], n: int) -> list[dict[str, tuple[int, int, int]]]:
    """n papers' counts: the given fields as given, every other field an interior mix (right on even papers)."""
    filler = [(1, 0, 0) if i % 2 == 0 else (0, 1, 1) for i in range(n)]
    return [{f: (field_counts[f][i] if f in field_counts else filler[i]) for f in REPORTED_FIELDS} for i in range(n)]


def test_a_field_every_paper_gets_right_or_wrong_has_an_interval_with_width():
    n = 10
    per_paper = _papers(
        {
            # 6 papers with a URL, all right, 4 with a correct null
            # (counting nothing): F1 1 over the 6 papers it counts on
            "code_url": [(1, 0, 0)] * 6 + [(0, 0, 0)] * 4,
            # every paper's datasets missed or wrong: F1 0 over all 10
            "datasets": [(0, 0, 2)] * 5 + [(0, 1, 1)] * 5,
            # every paper's area right: accuracy 10 of 10
            "research_area": [(1, 0, 0)] * n,
            # training_free right on 7 of 10 papers: an interior accuracy, also Wilson
            "training_free": [(1, 0, 0)] * 7 + [(0, 1, 1)] * 3,
            # an interior micro F1: 2tp / (2tp + fp + fn) = 10 / 15
            "tasks": [
                (1, 0, 0),
                (1, 1, 0),
                (0, 0, 1),
                (1, 0, 0),
                (0, 1, 1),
                (1, 0, 0),
                (1, 0, 0),
                (0, 0, 0),
                (0, 1, 0),
                (0, 0, 0),
            ],
            # nothing in gold and nothing predicted anywhere: undefined, no interval
            "models": [(0, 0, 0)] * n,
        },
        n,
    )
    fields = aggregate(per_paper)

    url = fields["code_url"]
    low = 6 / (6 + Z * Z)  # J: 6 of 6 papers right
    assert url.score == 1.0 and url.ci_method == "wilson_f1_edge"
    assert url.ci95 == pytest.approx((2 * low / (1 + low), 1.0), abs=5e-5) and url.ci95[0] == 0.7575  # was [1.0, 1.0]

    datasets = fields["datasets"]
    high = Z * Z / (10 + Z * Z)  # J: 0 of 10 papers
    assert datasets.score == 0.0 and datasets.ci_method == "wilson_f1_edge"
    assert datasets.ci95 == pytest.approx((0.0, 2 * high / (1 + high)), abs=5e-5)  # was [0.0, 0.0]

    area = fields["research_area"]
    assert (
        area.score == 1.0
        and area.ci_method == "wilson"
        and area.ci95 == pytest.approx((10 / (10 + Z * Z), 1.0), abs=5e-5)
    )
    free = fields["training_free"]
    assert (
        free.score == 0.7
        and free.ci_method == "wilson"
        and free.ci95 == pytest.approx(_wilson_by_hand(7, 10), abs=5e-5)
    )

    # an interior micro F1 keeps its percentile bootstrap interval, drawn as before
    tasks = fields["tasks"]
    counts = np.array([paper["tasks"] for paper in per_paper], dtype=np.int64)
    assert tasks.score == pytest.approx(round(10 / 15, 4)) and tasks.ci_method == "percentile_bootstrap"
    assert tasks.ci95 == metrics.pooled_bootstrap_ci(counts[:, None, :], lambda t: metrics.f1_pooled(t)[..., 0])

    assert fields["models"].score is None and fields["models"].ci95 is None and fields["models"].ci_method is None
    for name, field in fields.items():
        if field.ci95 is not None:
            assert field.ci95[0] <= field.score <= field.ci95[1] and field.ci95[0] < field.ci95[1], name


def test_one_paper_gets_no_interval_of_any_kind():
    counts = np.array([[1, 0, 0]])
    assert field_interval(True, counts, None) == (None, None) and field_interval(False, counts, None) == (None, None)


def test_no_published_field_interval_has_zero_width():
    for path in sorted((ROOT / "results" / "runs").glob("*/scores.json")):
        scores = json.loads(path.read_text(encoding="utf-8"))
        for name, field in scores["fields"].items():
            if field["ci95"] is None:
                continue
            low, high = field["ci95"]
            assert low < high, f"{path.parent.name} {name}: {field['ci95']}"
            assert field["ci_method"] == (
                "wilson"
                if name in ACCURACY_FIELDS
                else "wilson_f1_edge"
                if field["score"] in (0.0, 1.0)
                else "percentile_bootstrap"
            ), name
    board = (ROOT / "results" / "leaderboard.md").read_text(encoding="utf-8")
    assert "1.00 [1.00, 1.00]" not in board and "0.00 [0.00, 0.00]" not in board and "Wilson" in board  # no such cell
    from paperfields.scoring.method import HEADLINE_TEXT

    assert "Wilson" in HEADLINE_TEXT and "<!-- generated: headline -->" in (ROOT / "docs" / "scorer.md").read_text()
