"""Issue 38, round seven: the one disagreement left on the sixth stratified set (read once at scorer 3.9, a tuning set
now) is a result tied to a model the abstract never names ("Alpaca" for a paper that writes only "AlpacaEval 2.0",
gold's model empty). A rule refusing that kind (a particular name the abstract never writes, in a slot gold leaves
empty) was written and measured (branch rules310-candidate) and not taken: the second stratified set holds the same
tuple, with the benchmark's name as its metric, judged the same ("a fragment of the benchmark name"), and the rule
turns that judged-right pair wrong to fix the other; across every published run it decides only those two tuples.
These tests pin the verdict kept, one verdict for the kind, and the rules around it that still hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperfields.core.gold import load_gold
from paperfields.scoring.match import context_agrees, result_pairs, with_abstract_aliases
from paperfields.scoring.validity import headline_verdict

ROOT = Path(__file__).resolve().parent.parent

# A paper that names one benchmark whose name starts with another word ("PandaEval"), never a model "Panda".
TEXT = (
    "Preference tuning (PT) aligns LLMs with what people prefer. We propose GRIP, which tunes each layer at its own "
    "pace. Experiments on FeedbackMix show consistent gains, with GRIP outperforming PT by 4.1% on PandaEval 2.0."
)
GOLD = {
    "metric": "score",
    "value": 4.1,
    "value_upper": None,
    "unit": "percent",
    "kind": "improvement",
    "qualifier": "exact",
    "dataset": "PandaEval 2.0",
    "model": None,
    "baseline": "PT",
}


def _pred(**slots) -> dict:
    return {**GOLD, "metric": "improvement", **slots}


def _agrees(pred: dict, gold: dict = GOLD) -> bool:
    return context_agrees(pred, gold, [gold], with_abstract_aliases({}, TEXT), TEXT)


@pytest.mark.parametrize(
    "slots",
    [
        {"model": "Panda"},  # written only inside "PandaEval": the kind the judges split on
        {"model": "Panda-7B"},
        {"model": "LLM"},  # a generic word (the sixth set's judge: "generic", same)
        {"model": "GRIP"},  # the paper's own method, written
    ],
)
def test_a_name_in_a_slot_gold_leaves_empty_contradicts_nothing(slots):
    """Kept from scorer 3.5: a context gold leaves empty is contradicted only by a role clash in the paper's gold."""
    assert _agrees(_pred(**slots))
    alternates = with_abstract_aliases({}, TEXT)
    assert result_pairs([_pred(**slots)], [GOLD], alternates, TEXT).claim()[0, 0]


def test_near_miss_a_name_against_a_named_gold_slot_is_still_judged_by_content_words():
    gold = {**GOLD, "model": "Qwen2.5-7B"}
    assert not _agrees(_pred(model="Panda"), gold)  # no content word shared: another model
    assert _agrees(_pred(model="Qwen2.5-7B Instruct"), gold)  # one shared: the same model, more precisely


def _judged(name: str, pair_id: str) -> dict:
    for line in (ROOT / "gold" / name).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["pair_id"] == pair_id:
            return row
    raise KeyError(pair_id)


def test_the_judges_split_on_one_kind_and_the_scorer_gives_it_one_verdict():
    """The two judged tuples differ only in their metric slot, each naming no quantity ("AlpacaEval 2.0",
    "improvement"); the second set's judge called one the same, the sixth set's the other different. One verdict for
    both is right on one of them whichever it is, so the verdict of the rules before is kept."""
    second = _judged("scorer_stratified2_judgments.jsonl", "83fa3d837edd")
    sixth = _judged("scorer_stratified6_judgments.jsonl", "bfe9a617f0fd")
    assert (second["same"], sixth["same"]) == (True, False)
    assert second["gold"] == sixth["gold"] and second["paper_id"] == sixth["paper_id"]
    differ = {k for k in second["prediction"] if second["prediction"][k] != sixth["prediction"][k]}
    assert differ == {"metric"}
    record = {g.id: g for g in load_gold(ROOT / "gold" / "gold.jsonl")}[second["paper_id"]]
    abstract = next(
        json.loads(line)["text"]
        for line in (ROOT / "gold" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line)["id"] == second["paper_id"]
    )
    verdicts = {headline_verdict("results", r["prediction"], r["gold"], record, abstract)[0] for r in (second, sixth)}
    assert verdicts == {True}
