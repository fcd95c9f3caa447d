"""Difficulty and error taxonomy (scoring/difficulty.py) on hand-made runs whose every number is counted by hand."""

from __future__ import annotations

import pytest

from paperfields.core.gold import GoldRecord
from paperfields.core.runlog import RunError
from paperfields.core.schema import PaperRecord
from paperfields.scoring.difficulty import (
    ERROR_KINDS,
    RunPredictions,
    counts_of,
    difficulty,
    difficulty_markdown,
    judge_paper,
    load_difficulty,
)
from paperfields.scoring.score import score_paper
from tests.conftest import ROOT

ABSTRACTS = {
    "pa": "We propose FooNet. It does image classification and object detection with 56.6% accuracy.",
    "pb": "We release a benchmark. Models are tested on MMLU.",
}
RESULT = {"metric": "accuracy", "value": 56.6, "unit": "percent", "kind": "absolute"}
GOLD = [
    GoldRecord(
        id="pa",
        split="test",
        record=PaperRecord(
            method_name="FooNet",
            contribution_types=["method"],
            research_area="reasoning",
            tasks=["image classification", "object detection"],
            results=[RESULT],
            training_free=False,
        ),
    ),
    GoldRecord(
        id="pb",
        split="test",
        record=PaperRecord(
            contribution_types=["benchmark"], research_area="other", datasets=["MMLU"], training_free=None
        ),
    ),
]
R1 = {g.id: g.record.model_dump(mode="json") for g in GOLD}  # gold itself: every item right
R2 = {
    "pa": PaperRecord(
        method_name="BarNet",
        contribution_types=["method", "analysis"],
        research_area="agents_tool_use",
        tasks=["image classification", "speech recognition"],
        results=[{**RESULT, "qualifier": "up_to"}],  # a qualifier off: right at the claim level (3.5: a unit is not)
        training_free=True,
    ).model_dump(mode="json"),
    "pb": None,  # a failed paper
}
R3 = {"pa": PaperRecord().model_dump(mode="json"), "pb": PaperRecord(datasets=["MMLU Pro"]).model_dump(mode="json")}


def _stored(records):
    return {g.id: {f: list(c) for f, c in score_paper(records[g.id], g, ABSTRACTS[g.id]).items()} for g in GOLD}


def _view():
    runs = [
        RunPredictions("r1", True, R1, _stored(R1)),
        RunPredictions("r2", True, R2, _stored(R2)),
        RunPredictions("annotator_r3", False, R3, _stored(R3)),
    ]
    return difficulty(runs, GOLD, ABSTRACTS)


def _totals(taxonomy):
    return {k: sum(by_kind[k] for by_kind in taxonomy.values()) for k in ERROR_KINDS}


def test_item_and_paper_difficulty_counted_by_hand():
    view = _view()
    assert view.contenders == ["r1", "r2"]  # the reference is not a contender
    shares = {(i.paper_id, i.field, i.text): (i.right, i.contenders) for i in view.items}
    assert shares == {
        ("pa", "method_name", "FooNet"): (1, 2),
        ("pa", "contribution_types", "method"): (2, 2),
        ("pa", "research_area", "reasoning"): (1, 2),
        ("pa", "tasks", "image classification"): (2, 2),
        ("pa", "tasks", "object detection"): (1, 2),
        ("pa", "results", "accuracy = 56.6 percent"): (2, 2),
        ("pa", "training_free", "false"): (1, 2),
        ("pb", "contribution_types", "benchmark"): (1, 2),
        ("pb", "research_area", "other"): (1, 2),
        ("pb", "datasets", "MMLU"): (1, 2),
        ("pb", "training_free", "null"): (1, 2),
    }
    papers = {p.paper_id: (p.items, p.right, p.share) for p in view.papers}
    assert papers == {"pa": (7, 10, 10 / 14), "pb": (4, 4, 0.5)}
    assert [p.paper_id for p in view.hardest_papers()] == ["pb", "pa"]
    missed = view.most_missed(3)
    assert [(i.paper_id, i.field) for i in missed] == [("pa", "method_name"), ("pa", "research_area"), ("pa", "tasks")]
    # the sentence that writes the item; none for a label
    assert missed[0].sentence == "We propose FooNet."
    assert missed[2].text == "object detection" and missed[2].sentence.startswith(
        "It does image classification and object detection"
    )
    assert missed[1].sentence is None


def test_error_taxonomy_counted_by_hand():
    view = _view()
    assert _totals(view.taxonomy["r1"]) == dict.fromkeys(ERROR_KINDS, 0)
    r2 = view.taxonomy["r2"]
    assert r2["method_name"]["wrong_value"] == 1  # BarNet for FooNet: far apart
    assert (r2["tasks"]["missed"], r2["tasks"]["invented"]) == (1, 1)
    assert r2["research_area"]["wrong_class"] == 1 and r2["training_free"]["wrong_class"] == 1
    assert r2["contribution_types"] == {
        **dict.fromkeys(ERROR_KINDS, 0),
        "invented": 1,
        "missed": 1,
    }  # analysis extra on pa; pb failed
    assert (
        r2["results"]["wrong_unit_or_qualifier"] == 1 and r2["results"]["missed"] == 0
    )  # right for the headline, wrong unit
    assert _totals(r2) == {
        "missed": 5,
        "invented": 2,
        "wrong_value": 1,
        "near_miss": 0,
        "wrong_unit_or_qualifier": 1,
        "wrong_class": 2,
    }
    r3 = view.taxonomy["annotator_r3"]
    assert r3["datasets"]["near_miss"] == 1  # MMLU Pro is another name for the rule, yet close to MMLU
    assert _totals(r3) == {
        "missed": 6,
        "invented": 0,
        "wrong_value": 0,
        "near_miss": 1,
        "wrong_unit_or_qualifier": 0,
        "wrong_class": 2,
    }


@pytest.mark.parametrize("records", [R1, R2, R3])
def test_errors_add_up_to_the_scorers_counts(records):
    for g in GOLD:
        counts = score_paper(records[g.id], g, ABSTRACTS[g.id])
        judgment = judge_paper(records[g.id], g, ABSTRACTS[g.id])
        for field, errors in judgment.errors.items():
            tp = sum(1 for i in judgment.items if i.field == field and i.right)
            assert (tp, *counts_of(errors)) == counts[field], (g.id, field)


def test_stale_stored_counts_are_refused():
    stored = _stored(R2)
    stored["pa"]["tasks"] = [2, 0, 0]
    with pytest.raises(RunError, match="r2: paper pa, field 'tasks': the stored counts"):
        difficulty([RunPredictions("r2", True, R2, stored)], GOLD, ABSTRACTS)


def test_stored_counts_without_a_field_of_the_schema_are_refused_by_name():
    """A run whose paper_scores.jsonl predates a field of the schema (scores.json re-written, the rows not) was a
    KeyError out of `paperfields leaderboard`; it is a RunError naming the run, the paper and the field."""
    stored = {pid: {f: c for f, c in fields.items() if f != "tasks"} for pid, fields in _stored(R2).items()}
    with pytest.raises(RunError, match="r2: paper pa has no stored counts for 'tasks' in paper_scores.jsonl"):
        difficulty([RunPredictions("r2", True, R2, stored)], GOLD, ABSTRACTS)


def test_markdown_and_data_views():
    view = _view()
    text = difficulty_markdown(view)
    assert "| pa | method_name | FooNet | 1/2 (50%) | We propose FooNet. |" in text
    assert "| annotator_r3 | 6 | 0 | 0 | 1 | 0 | 2 |" in text
    data = view.data()
    assert data["contenders"] == ["r1", "r2"] and len(data["most_missed"]) == 8  # the 8 items at 1/2
    assert data["taxonomy"]["r2"]["results"]["wrong_unit_or_qualifier"] == 1


def test_published_runs_agree_with_their_stored_scores():
    """Every published run's verdicts add up to its stored per-paper counts (load_difficulty checks)."""
    view = load_difficulty(ROOT / "results" / "runs", ROOT / "gold" / "gold.jsonl")
    assert view.contenders and all(i.contenders == len(view.contenders) for i in view.items)
    assert (ROOT / "results" / "difficulty.md").read_text(encoding="utf-8") == difficulty_markdown(view)
