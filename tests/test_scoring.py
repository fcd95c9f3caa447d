from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperfields.extract.schema import PaperRecord
from paperfields.scoring.gold import GoldRecord
from paperfields.scoring.score import REPORTED_FIELDS, aggregate, f1, score_paper, score_predictions

CASES = [json.loads(l) for l in (Path(__file__).parent / "data" / "scorer_cases.jsonl").read_text().splitlines() if l.strip()]
SCORED_AS = {"results_value": "results", "results_full": "results", "method_name_soft": "method_name", "method_full_name_soft": "method_full_name"}


def _gold(field: str, value, alternates=None) -> GoldRecord:
    record = PaperRecord.model_validate({SCORED_AS.get(field, field): value} if value is not None or field not in ("research_area",) else {})
    return GoldRecord(id="p1", split="test", record=record, alternates=alternates or {})


def _pred(field: str, value) -> dict:
    record = PaperRecord.model_validate({SCORED_AS.get(field, field): value}).model_dump(mode="json")
    if SCORED_AS.get(field, field) in ("method_name", "method_full_name", "code_url", "training_free"):
        record[SCORED_AS.get(field, field)] = value
    return record


def test_case_table_is_large_enough():
    assert len(CASES) >= 120
    covered = {c["field"] for c in CASES}
    assert covered >= {"method_name", "method_name_soft", "method_full_name", "research_area", "contribution_types", "training_free",
                       "tasks", "datasets", "models", "metrics", "baselines", "code_url", "results", "results_value", "results_full"}


@pytest.mark.parametrize("case", CASES, ids=[c["note"] for c in CASES])
def test_hand_made_case(case):
    counts = score_paper(_pred(case["field"], case["pred"]), _gold(case["field"], case["gold"], case.get("alternates")))
    assert list(counts[case["field"]]) == case["expect"]


def test_swapping_prediction_and_gold_swaps_precision_and_recall():
    for case in CASES:
        if case["field"] not in ("datasets", "models", "tasks", "metrics", "baselines", "contribution_types"):
            continue
        tp, fp, fn = score_paper(_pred(case["field"], case["pred"]), _gold(case["field"], case["gold"]))[case["field"]]
        stp, sfp, sfn = score_paper(_pred(case["field"], case["gold"]), _gold(case["field"], case["pred"]))[case["field"]]
        if case.get("alternates"):
            continue
        assert (stp, sfp, sfn) == (tp, fn, fp), case["note"]


def test_f1_definition():
    assert f1(0, 0, 0) == 1.0
    assert f1(1, 2, 0) == pytest.approx(0.5)
    assert f1(0, 1, 1) == 0.0


def test_every_gold_record_scored_against_itself_is_perfect(gold):
    predictions = {g.id: g.record.model_dump(mode="json") for g in gold}
    scores, detail = score_predictions(predictions, gold, {}, "self", "all", "test")
    assert scores.overall_f1 == 1.0
    assert all(row["overall"] == 1.0 for row in detail)
    assert all(scores.fields[f].f1 == 1.0 for f in scores.fields)


def test_failed_paper_counts_as_empty_prediction(gold):
    paper = next(g for g in gold if g.record.datasets and g.record.method_name)
    counts = score_paper(None, paper)
    assert counts["datasets"] == (0, 0, len({d.casefold() for d in paper.record.datasets}))
    assert counts["method_name"] == (0, 0, 1)
    assert counts["research_area"] == (0, 0, 1)


def test_a_run_that_never_answers_scores_zero_not_the_share_of_empty_gold_fields(gold):
    # Before scorer 2.2 a failed paper got F1 1.0 on every field whose gold is empty (0.41 overall).
    failures = {g.id: "transport_error" for g in gold}
    scores, detail = score_predictions({}, gold, failures, "dead", "test", "t")
    assert scores.overall_f1 == 0.0 and scores.overall_ci95 == (0.0, 0.0)
    assert all(scores.fields[f].f1 == 0.0 for f in scores.fields)
    assert all(row["overall"] == 0.0 and row["answered"] is False for row in detail)
    # An answered empty record still earns its correct abstentions.
    empty, _ = score_predictions({g.id: {} for g in gold}, gold, {}, "empty", "test", "t")
    assert empty.fields["code_url"].f1 == pytest.approx(sum(g.record.code_url is None for g in gold if g.split == "test") / 60, abs=1e-4)


def test_aggregate_micro_and_macro_differ():
    # Paper A: 1 of 1 found. Paper B: 0 of 3 found, 1 invented.
    per_paper = [{f: (0, 0, 0) for f in REPORTED_FIELDS} for _ in range(2)]
    per_paper[0]["datasets"] = (1, 0, 0)
    per_paper[1]["datasets"] = (0, 1, 3)
    agg = aggregate(per_paper)["datasets"]
    assert agg.f1 == pytest.approx(0.5)  # mean of 1.0 and 0.0
    assert agg.micro_precision == pytest.approx(0.5)
    assert agg.micro_recall == pytest.approx(0.25)
    assert agg.micro_f1 == pytest.approx(2 / 6, abs=1e-4)


def test_bootstrap_interval_contains_the_mean_and_is_seeded(gold):
    predictions = {g.id: (g.record.model_dump(mode="json") if i % 2 else None) for i, g in enumerate(gold)}
    a, _ = score_predictions(predictions, gold, {}, "half", "all", "t")
    b, _ = score_predictions(predictions, gold, {}, "half", "all", "t")
    low, high = a.overall_ci95
    assert low < a.overall_f1 < high
    assert a.overall_ci95 == b.overall_ci95
    assert a.valid_rate == pytest.approx(38 / 76, abs=1e-4)


def test_scorer_agrees_with_hand_judged_pairs_and_known_disagreements_are_explained(gold):
    """gold/scorer_judgments.jsonl: 170 item pairs from real runs judged by a person. The scorer's
    agreement must not fall, and the remaining disagreements are the explained ones."""
    from paperfields.scoring.validity import load_judgments, validity_report

    report = validity_report(load_judgments(Path(__file__).parent.parent / "gold" / "scorer_judgments.jsonl"), gold)
    assert report["pairs"] == 170
    assert report["agreement"] >= 161 / 170
    from paperfields.scoring.validity import KNOWN_DISAGREEMENTS

    assert {(d["field"], d["prediction"], d["gold"]) for d in report["disagreements"]} == set(KNOWN_DISAGREEMENTS)


def test_overall_micro_f1_gives_abstention_no_credit(gold):
    from paperfields.scoring.runs import overall_micro_f1

    test = [g for g in gold if g.split == "test"]
    perfect, _ = score_predictions({g.id: g.record.model_dump(mode="json") for g in test}, test, {}, "self", "test", "t")
    assert overall_micro_f1(perfect) == 1.0
    # The schema's default record: per-paper F1 rewards its abstentions, micro F1 only its hits.
    empty, _ = score_predictions({g.id: PaperRecord().model_dump(mode="json") for g in test}, test, {}, "empty", "test", "t")
    others = sum(g.record.research_area == "other" for g in test)
    assert empty.fields["research_area"].micro_f1 == pytest.approx(others / 60, abs=1e-4)  # 'other' is its only true positive
    assert all(empty.fields[f].micro_f1 == 0.0 for f in ("datasets", "models", "metrics", "baselines", "tasks", "results", "code_url"))
    unstated = sum(g.record.training_free is None for g in test)  # training_free null ("not stated") is a class of its own
    assert empty.fields["training_free"].micro_f1 == pytest.approx(unstated / 60, abs=1e-4)
    assert overall_micro_f1(empty) == pytest.approx((others + unstated) / 60 / 12, abs=1e-4)
    assert empty.overall_f1 > 0.4  # what abstaining earns under the per-paper mean
