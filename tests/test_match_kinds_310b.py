"""Scorer 3.10's rule, by kind (issue 38, round eight), with its near misses the other way. The kind comes from the two
disagreements of the seventh stratified set (read once at scorer 3.9, a tuning set now): a result whose metric slot
names a quantity the abstract never writes ("auc", "roc_auc") for gold's average 8.27% gain in "performance", accepted
at the claim level because gold's metric names no quantity; the judge: the abstract never mentions AUC, so the
quantity differs. Every example but the last test's is written for the test, with the shape of the judged pair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperfields.core.gold import load_gold
from paperfields.scoring.match import metric_verdict, result_pairs, unwritten_metric, with_abstract_aliases
from paperfields.scoring.validity import headline_verdict

ROOT = Path(__file__).resolve().parent.parent

TEXT = (
    "We locate gating bottlenecks in recurrent language models with probing tools. A scaling intervention on the "
    "identified gates improves performance by an average of 6.45% across 5 models and 4 benchmarks, without any "
    "tuning, and the attack success rate (ASR) of jailbreak prompts drops by 12.5% on JailSuite."
)
GAIN = {
    "metric": "performance",
    "value": 6.45,
    "value_upper": None,
    "unit": "percent",
    "kind": "improvement",
    "qualifier": "average",
    "dataset": None,
    "model": None,
    "baseline": None,
}
DROP = {**GAIN, "metric": "ASR", "value": 12.5, "kind": "reduction", "qualifier": "exact", "dataset": "JailSuite"}


def _verdict(metric: str, gold: dict = GAIN, text: str | None = TEXT, golds: tuple = ()) -> str:
    pred = {**gold, "metric": metric, "qualifier": "exact", "model": "GateNet"}
    return metric_verdict(pred, gold, with_abstract_aliases({}, text or ""), text, list(golds) or [gold])


def _claimed(metric: str, gold: dict = GAIN, text: str = TEXT) -> bool:
    pred = {**gold, "metric": metric, "qualifier": "exact"}
    return bool(result_pairs([pred], [gold], with_abstract_aliases({}, text), text).claim()[0, 0])


@pytest.mark.parametrize(
    "metric",
    [
        "auc",  # the judged shape: a measure the abstract never writes, for gold's placeholder
        "roc_auc",
        "AUC",  # the same measure capitalized: an acronym is no benchmark's name when the abstract never writes it
        "ROC-AUC",
        "mAP",
        "BLEU score",  # the placeholder word beside it names nothing; "BLEU" names the quantity
        "win rate",
        "task success",  # plain words, written nowhere (the 3.7 near miss, now refused)
    ],
)
def test_a_quantity_the_abstract_never_writes_is_another_quantity(metric):
    assert _verdict(metric) == "other"
    assert not _claimed(metric)


@pytest.mark.parametrize(
    "metric",
    [
        "performance",  # gold's placeholder itself: the same
        "average improvement",  # placeholders and change words only: names no quantity, left to the number
        "scaling gains",  # a word of the number's own sentence (3.7: unnamed)
        "gate scaling",  # its words written ("gates", "scaling") though not as one phrase: a reader's wording
        "4-benchmark performance",  # a setting and a placeholder
        "few-shot transfer",  # a setting (3.6), written nowhere: still names where, not what
    ],
)
def test_near_miss_a_slot_the_abstract_writes_or_that_names_no_quantity_is_left_to_the_number(metric):
    assert _verdict(metric) in ("unnamed", "same")
    assert _claimed(metric)


def test_near_miss_a_measure_the_abstract_writes_is_not_refused():
    """Where the abstract writes the measure (an acronym it defines, its long form, any case or hyphenation), the
    slot is judged as before 3.10."""
    text = TEXT.replace("without any tuning", "raising ROC-AUC without any tuning")
    for metric in ("auc", "roc_auc", "ROC AUC"):
        assert _verdict(metric, text=text) == "unnamed"
        assert _claimed(metric, text=text)
    # "ASR" and "attack success rate" are one measure: the abstract defines the acronym
    assert _verdict("attack success rate", DROP) == "same"
    assert _verdict("asr", DROP) == "same"


def test_near_miss_the_rule_needs_the_abstract_and_spares_gold_s_words_and_datasets():
    assert _verdict("auc", text=None) == "unnamed"  # without the abstract nothing says what it writes
    # a slot sharing a content word with gold's metric is gold's quantity, worded more fully (3.6, kept)
    workloads = {**GAIN, "metric": "gate workloads", "value": 6.45}
    assert _verdict("community-maintained workloads", workloads) == "unnamed"
    # a name of one of the paper's gold datasets (an alternate the abstract never writes) as the metric: a
    # benchmark's name, which names no quantity (3.6, kept)
    bench = {**GAIN, "dataset": "Jail Suite v2"}
    alternates = with_abstract_aliases({"Jail Suite v2": ["JSv2"]}, TEXT)
    pred = {**bench, "metric": "JSv2", "qualifier": "exact"}
    assert not unwritten_metric("JSv2", ["jsv2"], alternates, TEXT, [bench])
    assert metric_verdict(pred, bench, alternates, TEXT, [bench]) == "unnamed"
    assert unwritten_metric("JSv2", ["jsv2"], alternates, TEXT, [GAIN])


def test_a_coined_slot_unwritten_is_refused_whatever_gold_s_metric():
    """Gold's metric named ("ASR" for the 12.5% drop): an unwritten coined slot ("HarmBench-ASR") is no benchmark of
    the paper and names another quantity; a coined name the abstract writes ("JailSuite") stays a benchmark's name."""
    assert _verdict("HarmBench", DROP) == "other"
    assert _verdict("JailSuite", DROP) == "unnamed"


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (ROOT / "gold" / name).read_text(encoding="utf-8").splitlines() if line]


def test_the_seventh_set_s_two_disagreements_are_decided_as_the_judge_did():
    """The judged pairs themselves (gold/scorer_stratified7_judgments.jsonl, read and published): every result of
    paper pb4e5a1b402 that names a measure the abstract never writes ("loss", "f1", ..., "auc", "roc_auc") is another
    quantity, as the judge called all eight; 3.9 accepted "auc" and "roc_auc"."""
    paper = "pb4e5a1b402"
    record = {g.id: g for g in load_gold(ROOT / "gold" / "gold.jsonl")}[paper]
    abstract = next(r["text"] for r in _rows("corpus.jsonl") if r["id"] == paper)
    judged = [r for r in _rows("scorer_stratified7_judgments.jsonl") if r["paper_id"] == paper]
    assert {r["prediction"]["metric"] for r in judged} >= {"auc", "roc_auc"}
    for row in judged:
        assert row["same"] is False
        assert headline_verdict("results", row["prediction"], row["gold"], record, abstract)[0] is False
