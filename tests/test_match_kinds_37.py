"""Scorer 3.7's rules, by kind (issue 38 item 1, round four), each with its near miss the other way. The kinds come
from the disagreements left on the judged tuning sets (the third stratified set, read once at scorer 3.6, and the
first two); every example here is written for the test, with the shape of the judged pair it stands for."""

from __future__ import annotations

import pytest

from paperfields.scoring.match import (
    BASELINES,
    METRIC_NAMES,
    TASKS,
    context_agrees,
    explain,
    metric_verdict,
    result_pairs,
    similarity,
    with_abstract_aliases,
)


def _same(pred: str, golds: list[str], rule, text: str) -> bool:
    return similarity(pred, golds, rule, text) >= rule.threshold


# --- A head that names the one activity, where the abstract writes both -------------------------------------------

SEARCH_TEXT = (
    "Tree search organizes inference over partial paths. KV reuse in ToT-style inference follows the search, and on "
    "ToT-style reasoning benchmarks our method keeps its accuracy while agentic coding and agentic testing both gain."
)
ONE_WAY_TEXT = "KV reuse in ToT-style inference follows the search, and the reasoning it does stays as accurate."
PREFERENCE_TEXT = (
    "Direct Preference Optimization is the usual way of aligning language models with human preferences; we study "
    "representation learning beside it."
)
PREFERENCE_ALTERNATES = {"preference alignment": ["aligning language models with human preferences"]}


@pytest.mark.parametrize(
    "pred, gold, alternates, text, same",
    [
        ("ToT-style inference", "ToT-style reasoning", {}, SEARCH_TEXT, True),  # the abstract writes both
        ("ToT-style reasoning", "ToT-style inference", {}, SEARCH_TEXT, True),  # either side
        ("ToT-style inference", "ToT-style reasoning", {}, ONE_WAY_TEXT, False),  # 'ToT-style reasoning' never written
        ("ToT-style inference", "ToT-style reasoning", {}, "", False),  # no abstract, no reading
        ("agentic testing", "agentic coding", {}, SEARCH_TEXT, False),  # two activities, both written
        ("preference_optimization", "preference alignment", PREFERENCE_ALTERNATES, PREFERENCE_TEXT, True),
        ("preference_optimization", "preference alignment", {}, PREFERENCE_TEXT, False),  # gold's phrase not written
        ("representation optimization", "representation learning", {}, PREFERENCE_TEXT, False),  # not one group
    ],
)
def test_a_head_that_names_the_one_activity(pred, gold, alternates, text, same):
    forms = [gold] + alternates.get(gold, [])
    assert _same(pred, forms, TASKS, text) is same
    if same:
        assert "names the one activity" in explain(pred, forms, TASKS, text)


def test_the_rule_table_lists_the_activity_groups_in_one_order():
    """scores.json's rule table must not depend on the hash seed: each group of heads is a sorted list."""
    from paperfields.scoring.match import describe_rule

    assert describe_rule(TASKS)["activities"] == [["inference", "reasoning"], ["alignment", "optimization"]]
    assert describe_rule(BASELINES)["activities"] == [] and describe_rule(BASELINES)["applied"] is True


def test_the_activity_rule_is_not_a_metric_rule():
    """A measure's head is not an activity: 'memory efficiency' and 'memory consumption' stay two measures even
    where the abstract writes both."""
    text = "It cuts memory consumption by half, so memory efficiency doubles."
    assert not _same("memory efficiency", ["memory consumption"], METRIC_NAMES, text)


# --- A method written with what it is applied to ----------------------------------------------------------------

EXPERTS_TEXT = (
    "Sparse Mixture of Experts (MoE) scales language models, with Expert Parallel (EP) as the standard training "
    "method. Compared to MoE with EP, our method trains 1.8x faster; GRPO with a KL penalty is slower."
)


@pytest.mark.parametrize(
    "pred, gold, text, same",
    [
        ("MoE with EP", "EP", EXPERTS_TEXT, True),  # EP, the compared method, applied to MoE
        ("EP", "MoE with EP", EXPERTS_TEXT, True),  # either side
        ("MoE with EP", "MoE", EXPERTS_TEXT, False),  # what it is applied to is not the compared method
        ("MoE with EP", "EP", "", False),  # without the abstract nothing is defined
        ("MoE with EP", "EP", "We compare to MoE with EP and train 1.8x faster.", False),  # neither defined
        ("GRPO with KL", "KL", EXPERTS_TEXT, False),  # not written so, not defined
    ],
)
def test_a_method_written_with_what_it_is_applied_to(pred, gold, text, same):
    alternates = with_abstract_aliases({}, text)
    forms = [gold] + alternates.get(gold, [])
    assert _same(pred, forms, BASELINES, text) is same


# --- Left alone: a model in the dataset slot -----------------------------------------------------------------------

MODEL_TEXT = "Across five datasets with Llama 3-8B and Qwen 2.5-7B, DiSP improves accuracy by up to 3.4% over GPT-4o."


def R(value, metric, unit="percent", kind="improvement", **context):
    return {"metric": metric, "value": value, "unit": unit, "kind": kind, **context}


GAIN = R(3.4, "accuracy", qualifier="up_to")


@pytest.mark.parametrize(
    "pred, agrees",
    [
        (R(3.4, "accuracy", dataset="Llama 3-8B", model="DiSP"), True),  # a model misplaced: not a contradiction
        (R(3.4, "accuracy", dataset="Llama 3-8B"), True),
        (R(3.4, "accuracy", dataset="MMLU-Pro", model="DiSP"), True),
    ],
)
def test_a_model_in_the_dataset_slot_is_left_to_the_number(pred, agrees):
    """Scorer 3.7 does not refuse a model written as the dataset where gold's result names none: the third set's judge
    called one such pair different, while the second set's judge called six of that paper's the same ('Llama 3-8B'
    or 'Qwen 2.5-7B' as the dataset of its 3.4% and 23x gains) and the first and second called 'GPT-4o' as the
    dataset of a refusal rate the same: a rule refusing them flipped eight judged pairs the wrong way to fix one, so
    it was not taken."""
    assert context_agrees(pred, GAIN, [GAIN], {}, MODEL_TEXT) is agrees
    assert bool(result_pairs([pred], [GAIN], {}, MODEL_TEXT).claim()[0, 0]) is agrees


# --- A metric slot that holds what the paper says elsewhere ------------------------------------------------------

ELSEWHERE_TEXT = (
    "We identify attention sink heads in state-space models. A steering step improves performance by an average of "
    "8.27% on six benchmarks. It also shows superior cross-domain generalization, outperforming the baseline by "
    "16.32%."
)
PERFORMANCE = R(8.27, "performance", qualifier="average")
SCORE = R(16.32, "score")


@pytest.mark.parametrize(
    "metric, gold, verdict",
    [
        ("attention sink heads", PERFORMANCE, "other"),  # what the method targets, written in another sentence
        ("attention_sink_heads", PERFORMANCE, "other"),
        ("steering gains", PERFORMANCE, "unnamed"),  # a word of the number's own sentence
        ("task success", PERFORMANCE, "other"),  # written nowhere: a quantity the paper never reports (scorer 3.10)
        ("six-benchmark steering", PERFORMANCE, "unnamed"),  # its words written in the number's sentence
        ("cross-domain generalization", SCORE, "unnamed"),  # the number's sentence writes it
        ("attention sink heads", R(8.27, "accuracy", qualifier="average"), "other"),  # 3.6: plain words for a measure
    ],
)
def test_a_metric_slot_that_holds_what_the_paper_says_elsewhere(metric, gold, verdict):
    pred = {**gold, "metric": metric, "qualifier": "exact"}
    assert metric_verdict(pred, gold, {}, ELSEWHERE_TEXT, [gold]) == verdict
    assert bool(result_pairs([pred], [gold], {}, ELSEWHERE_TEXT).claim()[0, 0]) is (verdict != "other")


def test_without_the_abstract_the_slot_stays_unnamed():
    pred = {**PERFORMANCE, "metric": "attention sink heads"}
    assert metric_verdict(pred, PERFORMANCE, {}, None, [PERFORMANCE]) == "unnamed"
