"""Properties of the scorer (hypothesis): identity, order invariance, monotone precision."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from paperfields.core.gold import load_gold
from paperfields.core.schema import LIST_FIELDS
from paperfields.scoring.score import HEADLINE_FIELDS, REPORTED_FIELDS, f1, prf, score_paper
from tests.conftest import ROOT

GOLD = load_gold(ROOT / "gold" / "gold.jsonl")
papers = st.sampled_from(GOLD)
SCORED_LISTS = LIST_FIELDS + ("results",)


@given(papers)
@settings(max_examples=len(GOLD), deadline=None)
def test_gold_against_itself_is_perfect_on_every_field(g):
    counts = score_paper(g.record.model_dump(mode="json"), g)
    for field in REPORTED_FIELDS:
        assert f1(*counts[field]) in (1.0, None), (
            g.id,
            field,
            counts[field],
        )  # None: nothing in gold, nothing predicted
        assert counts[field][1] == counts[field][2] == 0, (g.id, field, counts[field])


@given(papers, st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None)
def test_list_order_never_changes_a_score(g, rnd):
    pred = g.record.model_dump(mode="json")
    # A prediction that is partly wrong, so order could matter for a greedy matcher.
    pred["datasets"] = pred["datasets"] + ["Made-Up Bench"]
    pred["results"] = pred["results"] + [{"metric": "accuracy", "value": 1.0, "unit": "percent", "kind": "absolute"}]
    before = score_paper(pred, g)
    shuffled = dict(pred)
    for field in SCORED_LISTS:
        items = list(pred[field])
        rnd.shuffle(items)
        shuffled[field] = items
    assert score_paper(shuffled, g) == before


invented = st.text(alphabet="abcdefghijklmnopqrstuvwxyz -", min_size=3, max_size=20).filter(lambda s: s.strip())


@given(papers, st.sampled_from(LIST_FIELDS), invented)
@settings(max_examples=120, deadline=None)
def test_adding_an_invented_item_never_raises_precision(g, field, item):
    pred = g.record.model_dump(mode="json")
    pred[field] = pred[field][:1]  # start from a partial prediction
    p_before = prf(*score_paper(pred, g)[field])[0]
    pred[field] = pred[field] + ["zz " + item]
    p_after = prf(*score_paper(pred, g)[field])[0]
    assert p_after is not None  # something is predicted now
    assert p_before is None or p_after <= p_before


@given(papers, papers)
@settings(max_examples=80, deadline=None)
def test_scores_are_bounded_and_failed_prediction_is_worst(g, other):
    counts = score_paper(other.record.model_dump(mode="json"), g)
    empty = score_paper(None, g)
    for field in HEADLINE_FIELDS:
        value = f1(*counts[field])
        assert value is None or 0.0 <= value <= 1.0
        assert empty[field][0] == 0 and empty[field][1] == 0  # a failed paper finds nothing and invents nothing


@given(
    st.integers(1, 5).flatmap(
        lambda rows: st.integers(1, 5).flatmap(
            lambda cols: st.tuples(
                st.lists(st.lists(st.booleans(), min_size=cols, max_size=cols), min_size=rows, max_size=rows),
                st.lists(
                    st.lists(st.sampled_from([0.0, 0.5, 0.9, 1.0]), min_size=cols, max_size=cols),
                    min_size=rows,
                    max_size=rows,
                ),
            )
        )
    )
)
@settings(max_examples=300, deadline=None)
def test_assign_is_the_hungarian_matching_also_where_it_skips_scipy(matrices):
    """assign's shortcut (no two allowed pairs share a row or a column) gives what linear_sum_assignment gives."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    from paperfields.scoring.match import assign

    allowed, weight = np.array(matrices[0], dtype=bool), np.array(matrices[1], dtype=float)
    rows, cols = linear_sum_assignment(allowed.astype(float) * (1.0 + weight * 1e-3), maximize=True)
    assert assign(allowed, weight) == [(int(r), int(c)) for r, c in zip(rows, cols) if allowed[r, c]]
