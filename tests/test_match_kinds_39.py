"""Scorer 3.9's rules, by kind (issue 38, round six), each with its near miss the other way. The kinds come from the
disagreements left on the judged tuning sets (the fifth stratified set, read once at scorer 3.8, and the four before
it); every example here is written for the test, with the shape of the judged pair it stands for."""

from __future__ import annotations

import pytest

from paperfields.scoring.match import (
    METRIC_NAMES,
    TASKS,
    adds_item,
    similarity,
    strict_name_agrees,
    string_similarities,
    with_abstract_aliases,
)

# --- "Long (SHORT)" and then a component joined to it ----------------------------------------------------------

POLICY_TEXT = (
    "We propose Grid-Trained Value Nets (GTVN), a planner adapted to new domains in one stage, and evaluate it on "
    "robot navigation across four backbones; naive value replay is what GTVN avoids."
)
LONG, SHORT = "Grid-Trained Value Nets", "GTVN"


@pytest.mark.parametrize(
    "pred, gold, same",
    [
        ("Grid-Trained Value Nets (GTVN) with Value Replay", LONG, False),  # the method and a part: a longer name
        ("Grid-Trained Value Nets (GTVN) with Value Replay", SHORT, False),  # nor the short form (as in 3.8)
        ("Grid-Trained Value Nets (GTVN) without Value Replay", LONG, False),  # a part taken out: another variant
        ("Grid-Trained Value Nets (GTVN) plus Value Replay", LONG, False),
        ("GTVN (Grid-Trained Value Nets) with Value Replay", LONG, False),  # the definition either way round
        ("Grid-Trained Value Nets (GTVN) for Robot Navigation", LONG, True),  # what it is for: still the name spelt out
        ("Grid-Trained Value Nets (GTVN) across four backbones", LONG, True),  # a setting
        ("Grid-Trained Value Nets (GTVN) framework", LONG, True),  # a generic word
        ("Grid-Trained Value Nets (GTVN)", LONG, True),  # the definition alone
        ("Grid-Trained Value Nets (GTVN) with Value Replay", "Grid-Trained Value Nets (GTVN) with Value Replay", True),
    ],
)
def test_a_component_after_the_definition_makes_a_longer_name(pred, gold, same):
    alternates = with_abstract_aliases({}, POLICY_TEXT)
    assert strict_name_agrees(pred, gold, alternates, POLICY_TEXT) is same


def test_a_component_without_the_definition_was_already_another_name():
    """The bare long form with a component after it had a word more and was another name before 3.9 too."""
    alternates = with_abstract_aliases({}, POLICY_TEXT)
    assert not strict_name_agrees("Grid-Trained Value Nets with Value Replay", LONG, alternates, POLICY_TEXT)
    assert not strict_name_agrees("GTVN with Value Replay", SHORT, alternates, POLICY_TEXT)


# --- A measure joined to another of gold's measures -------------------------------------------------------------

TRADE_OFF_TEXT = (
    "Across ten suites, GridNet improves the forgetting--accuracy trade-off over the baselines, keeps latency low and "
    "holds across model sizes."
)


def _named(pred: str, golds: list[str], rule=METRIC_NAMES, text: str = TRADE_OFF_TEXT) -> list[str]:
    sim = string_similarities([pred], golds, {}, rule, text)
    return [g for g, s in zip(golds, sim[0]) if s >= rule.threshold]


@pytest.mark.parametrize(
    "pred, golds, named",
    [
        ("forgetting_accuracy", ["forgetting", "accuracy"], []),  # two of gold's measures in one: neither
        ("forgetting-accuracy", ["forgetting", "accuracy"], []),  # glued by a hyphen: one word, a head added (3.8 too)
        ("forgetting accuracy", ["forgetting", "accuracy"], []),  # or written apart: the kind is not the spelling
        ("latency_accuracy", ["latency", "accuracy", "forgetting"], []),
        ("forgetting_accuracy", ["forgetting rate", "accuracy"], []),  # the other item in another accepted form
        ("model_accuracy", ["forgetting", "accuracy"], ["accuracy"]),  # a modifier that is no item of gold's
        ("average_accuracy", ["forgetting", "accuracy"], ["accuracy"]),  # a neutral modifier
        ("accuracy", ["forgetting", "accuracy"], ["accuracy"]),
        ("forgetting_accuracy", ["accuracy"], ["accuracy"]),  # gold lists no forgetting: the 3.7 rules decide
        ("forgetting", ["forgetting", "accuracy"], ["forgetting"]),
    ],
)
def test_a_modifier_that_is_another_gold_measure_joins_two(pred, golds, named):
    assert _named(pred, golds) == named


def test_the_joined_item_may_be_on_either_side():
    """Swapping predictions and gold transposes the verdicts: gold's joined measure is neither of two predictions."""
    preds, golds = ["forgetting", "accuracy"], ["forgetting_accuracy", "latency"]
    forward = string_similarities(preds, golds, {}, METRIC_NAMES, TRADE_OFF_TEXT)
    backward = string_similarities(golds, preds, {}, METRIC_NAMES, TRADE_OFF_TEXT)
    assert (forward == backward.T).all() and (forward < METRIC_NAMES.threshold).all()
    one = string_similarities(["accuracy"], ["forgetting_accuracy"], {}, METRIC_NAMES, TRADE_OFF_TEXT)
    assert (one >= METRIC_NAMES.threshold).all()  # no other prediction names forgetting: the modifier rules decide


def test_another_task_before_a_task_head_is_where_it_is_done():
    """On tasks the rule is off: another of gold's tasks written before a task's head says where that task is done
    ("post-training data selection" was judged data selection beside a post-training task)."""
    text = "We study retrieval over long documents and question answering that reads what retrieval returns."
    golds = ["retrieval", "question answering"]
    assert _named("retrieval question answering", golds, TASKS, text) == ["question answering"]


@pytest.mark.parametrize(
    "pred, gold, others, joins",
    [
        ("forgetting_accuracy", "accuracy", [["forgetting"]], True),
        ("forgetting_accuracy", "accuracy", [["latency"]], False),  # the modifier is not the other item
        ("forgetting_accuracy", "accuracy", [], False),  # no other item
        ("mean_accuracy", "accuracy", [["mean"]], False),  # a neutral modifier never counts
        ("forgetting_accuracy", "forgetting", [["accuracy"]], False),  # the head added, not a modifier
        ("forgetting_accuracy", "accuracy", [["forgetting"]], True),
    ],
)
def test_adds_item(pred, gold, others, joins):
    assert adds_item(pred, gold, others, METRIC_NAMES, TRADE_OFF_TEXT) is joins
    assert not adds_item(pred, gold, others, TASKS, TRADE_OFF_TEXT)  # a rule without ``joined``


def test_the_pair_alone_is_still_read_by_the_modifier_rules():
    """Without gold's list the pair is what it was: a modifier the abstract writes, beside the one accuracy."""
    assert similarity("forgetting_accuracy", ["accuracy"], METRIC_NAMES, TRADE_OFF_TEXT) >= METRIC_NAMES.threshold


# --- A coined name with its parts written apart -----------------------------------------------------------------

COINED_TEXT = "This paper introduces *TrailMark*, a plug-and-play framework for steering reasoning with safety signals."


@pytest.mark.parametrize(
    "pred, gold, same",
    [
        ("trail-mark", "TrailMark", True),  # the parts apart, by a hyphen
        ("trail_mark", "TrailMark", True),  # by an underscore
        ("Trail Mark", "TrailMark", True),  # by a space
        ("TRAILMARK", "TrailMark", True),
        ("TrailMark", "Trail-Mark", True),  # either way round
        ("GridTrained Value Nets", "Grid-Trained Value Nets", True),  # a spelt-out name too
        ("trail-mark-net", "TrailMark", False),  # a word more
        ("trail-mask", "TrailMark", False),  # a letter different
        ("mark-trail", "TrailMark", False),  # the parts in another order
        ("trail-mark-2", "TrailMark", False),  # a version more
        ("trail-mark++", "TrailMark", False),  # a symbol mark more
    ],
)
def test_a_coined_name_is_one_name_whatever_joins_its_parts(pred, gold, same):
    assert strict_name_agrees(pred, gold, {}, COINED_TEXT) is same
    assert strict_name_agrees(pred, gold, {}) is same  # no abstract needed
