"""The field guide (prompts/field_guide.jinja) of the zero-shot (version 4) and few-shot (version 3) prompts: nothing in
it that the 0.5B model copied into records (issue 15): example strings, every enum value in a row."""

from __future__ import annotations

import re

import pytest

from paperfields.core.corpus import Paper
from paperfields.core.schema import ContributionType, ResearchArea
from paperfields.extract.strategies import Strategy

PAPER = Paper(id="x", text="An abstract.", source="s", position=1, line=1)


@pytest.mark.parametrize("name, version", [("zero_shot", "4"), ("few_shot", "3")])
def test_the_guide_holds_no_example_value_the_model_copied(name, version):
    strategy = Strategy(name)
    assert strategy.template.version == version
    guide = strategy.messages(PAPER)[0]["content"]
    for copied in (
        "math benchmarks",
        "LLMs",
        "56.61",
        "58-63",
        "3x",
        "reasoning",
    ):  # written into records by the 0.5B model
        assert copied not in guide
    assert not all(
        area.value in guide for area in ResearchArea
    )  # listed in a row, the first one was picked for every paper
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
    """The few-shot prompt (version 3) keeps its own contribution-types
    line: its worked examples show real contribution types."""
    line = _contribution_line(Strategy("few_shot").messages(PAPER)[0]["content"])
    assert "usually just method" in line and all(t.value in line for t in ContributionType)
    assert line.index("method") < min(line.index(t.value) for t in ContributionType if t.value != "method")


STRATEGIES = ("zero_shot", "few_shot", "evidence", "reasoning_first", "self_consistency", "confidence")


@pytest.mark.parametrize("name", STRATEGIES)
def test_every_prompt_includes_the_one_field_guide(name):
    strategy = Strategy(name)
    assert [p.name for p in strategy.included] == ["field_guide.jinja"]
    system = strategy.messages(PAPER)[0]["content"]
    assert "- training_free: false if the method trains" in system and "{%" not in system


def _copy_prompts(tmp_path):
    import shutil

    from paperfields.core.paths import prompts_dir

    folder = tmp_path / "prompts"
    shutil.copytree(prompts_dir(), folder)
    return folder


def test_the_guide_bytes_are_in_every_prompt_hash(tmp_path):
    folder = _copy_prompts(tmp_path)
    before = {name: Strategy(name, directory=folder).sha256 for name in ("zero_shot", "evidence")}
    guide = folder / "field_guide.jinja"
    guide.write_text(guide.read_text() + "- an extra line.\n")
    after = {name: Strategy(name, directory=folder).sha256 for name in ("zero_shot", "evidence")}
    assert all(before[n] != after[n] for n in before)
    assert "- an extra line." in Strategy("zero_shot", directory=folder).messages(PAPER)[0]["content"]


def test_a_missing_guide_is_named(tmp_path):
    from paperfields.extract.strategies import PromptError

    folder = _copy_prompts(tmp_path)
    (folder / "field_guide.jinja").unlink()
    with pytest.raises(PromptError, match=r"zero_shot\.toml: includes field_guide\.jinja, which is not in"):
        Strategy("zero_shot", directory=folder)
