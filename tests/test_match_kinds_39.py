"""Scorer 3.9's rules, by kind (issue 38, round six), each with its near miss the other way. The kinds come from the
disagreements left on the judged tuning sets (the fifth stratified set, read once at scorer 3.8, and the four before
it); every example here is written for the test, with the shape of the judged pair it stands for."""

from __future__ import annotations

import pytest

from paperfields.scoring.match import (
    strict_name_agrees,
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
