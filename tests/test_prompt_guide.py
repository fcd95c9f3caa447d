"""The field guide of the zero-shot and few-shot prompts (version 2): nothing in it that the 0.5B model
copied into records (issue 15): example strings, every enum value in a row."""

from __future__ import annotations

import pytest

from paperfields.extract.corpus import Paper
from paperfields.extract.schema import ContributionType, ResearchArea
from paperfields.extract.strategies import Strategy

PAPER = Paper(id="x", text="An abstract.", source="s", position=1, line=1)


@pytest.mark.parametrize("name", ["zero_shot", "few_shot"])
def test_the_guide_holds_no_example_value_the_model_copied(name):
    strategy = Strategy(name)
    assert strategy.template.version == "2"
    guide = strategy.messages(PAPER)[0]["content"]
    for copied in ("math benchmarks", "LLMs", "56.61", "58-63", "3x", "reasoning"):  # written into records by the 0.5B model
        assert copied not in guide
    assert not all(area.value in guide for area in ResearchArea)  # listed in a row, the first one was picked for every paper
    assert "usually just method" in guide and "one item for each number" in guide


def test_few_shot_uses_the_zero_shot_guide():
    zero, few = (Strategy(name).messages(PAPER)[0]["content"] for name in ("zero_shot", "few_shot"))
    assert zero == few
    assert all(t.value in zero for t in ContributionType)  # each type is described, method first as the usual case
    assert zero.index("method") < min(zero.index(t.value) for t in ContributionType if t.value != "method")
