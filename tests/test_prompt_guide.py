"""The field guide of the zero-shot (version 3) and few-shot (version 2) prompts: nothing in it that the
0.5B model copied into records (issue 15): example strings, every enum value in a row."""

from __future__ import annotations

import re

import pytest

from paperfields.core.corpus import Paper
from paperfields.core.schema import ContributionType, ResearchArea
from paperfields.extract.strategies import Strategy

PAPER = Paper(id="x", text="An abstract.", source="s", position=1, line=1)


@pytest.mark.parametrize("name, version", [("zero_shot", "3"), ("few_shot", "2")])
def test_the_guide_holds_no_example_value_the_model_copied(name, version):
    strategy = Strategy(name)
    assert strategy.template.version == version
    guide = strategy.messages(PAPER)[0]["content"]
    for copied in ("math benchmarks", "LLMs", "56.61", "58-63", "3x", "reasoning"):  # written into records by the 0.5B model
        assert copied not in guide
    assert not all(area.value in guide for area in ResearchArea)  # listed in a row, the first one was picked for every paper
    assert "one item for each number" in guide


def _contribution_line(guide: str) -> str:
    return next(line for line in guide.splitlines() if line.startswith("- contribution_types:"))


def test_zero_shot_names_no_contribution_type_but_method():
    """Version 2 named theory, analysis and benchmark in a row, and the 0.5B model wrote exactly
    ['theory', 'analysis', 'benchmark'] on 9 of 10 test papers: the other kinds are described in words."""
    line = _contribution_line(Strategy("zero_shot").messages(PAPER)[0]["content"])
    assert '["method"]' in line
    assert not [t.value for t in ContributionType if t.value != "method" and re.search(rf"\b{t.value}\b", line)]


def test_few_shot_describes_each_type_with_method_first():
    """The few-shot prompt (version 2) keeps its guide: its worked examples show real contribution types."""
    line = _contribution_line(Strategy("few_shot").messages(PAPER)[0]["content"])
    assert "usually just method" in line and all(t.value in line for t in ContributionType)
    assert line.index("method") < min(line.index(t.value) for t in ContributionType if t.value != "method")
