"""Calibration of per-field confidences (issue 17): Brier score, ECE, token-derived confidence, the
confidence strategy end to end through the real openai client and instructor."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from paperfields.core.confidence import value_confidences, value_spans
from paperfields.core.corpus import Paper
from paperfields.core.runlog import Generation
from paperfields.extract.strategies import Strategy
from paperfields.scoring.calibration import (
    brier_score,
    calibration_of,
    expected_calibration_error,
    field_outcome,
    reliability_bins,
    run_calibration,
)
from paperfields.scoring.score import HEADLINE_FIELDS
from tests.cli_in_process import run_cli
from tests.openai_stub import StubServer, reply


def test_a_perfectly_calibrated_toy_has_zero_ece():
    # 10 answers at 0.8, 8 right: accuracy equals confidence in the one bin
    conf, out = np.full(10, 0.8), np.array([1] * 8 + [0] * 2)
    assert expected_calibration_error(conf, out) == pytest.approx(0.0, abs=1e-12)
    assert brier_score(conf, out) == pytest.approx(8 * 0.2**2 / 10 + 2 * 0.8**2 / 10)  # 0.16


def test_an_overconfident_toy():
    # 4 answers at 0.95, half right: ECE = |0.5 - 0.95|, Brier = (2 * 0.05^2 + 2 * 0.95^2) / 4
    conf, out = np.full(4, 0.95), np.array([1, 0, 1, 0])
    assert expected_calibration_error(conf, out) == pytest.approx(0.45)
    assert brier_score(conf, out) == pytest.approx(0.4525)


def test_ece_weights_bins_by_count_and_puts_one_in_the_last_bin():
    conf, out = np.array([0.1, 0.1, 0.9, 1.0]), np.array([0, 1, 1, 1])
    bins = reliability_bins(conf, out)
    assert [(b["low"], b["count"]) for b in bins] == [(0.1, 2), (0.9, 2)]
    # bin [0.1, 0.2): accuracy 0.5, confidence 0.1; bin [0.9, 1.0]: accuracy 1, confidence 0.95
    assert expected_calibration_error(conf, out) == pytest.approx(0.5 * 0.4 + 0.5 * 0.05)
    assert (
        brier_score(np.array([]), np.array([])) is None
        and expected_calibration_error(np.array([]), np.array([])) is None
    )


def test_field_outcome_is_exact_correctness():
    assert field_outcome((0, 0, 0)) == 1  # empty on empty gold: right
    assert field_outcome((2, 0, 0)) == 1
    assert field_outcome((2, 1, 0)) == 0 and field_outcome((2, 0, 1)) == 0 and field_outcome((0, 1, 1)) == 0


def test_value_spans_reads_top_level_values_only():
    text = '{"a": "x, }", "b": [{"c": 1}, 2], "d": null}'
    spans = value_spans(text)
    assert {k: text[s:e] for k, (s, e) in spans.items()} == {"a": '"x, }"', "b": '[{"c": 1}, 2]', "d": "null"}
    cut = value_spans('{"a": 1, "b": [1, 2')  # truncated: what was read before the fault
    assert cut == {"a": (6, 7)}
    assert value_spans("no json") == {} and value_spans("") == {}


def test_value_confidences_is_the_geometric_mean_of_the_value_tokens():
    pieces = [b'{"a": ', b'"x', b'y"', b', "b": ', b"null", b', "c": "', "é".encode(), b'"}']
    logprobs = [0.0, math.log(0.5), math.log(0.125), 0.0, math.log(0.25), math.log(0.9), math.log(0.4), 0.0]
    conf = value_confidences(pieces, logprobs, ["a", "b", "c", "missing"])
    assert conf["a"] == pytest.approx(0.25)  # sqrt(0.5 * 0.125)
    assert conf["b"] == pytest.approx(0.25)
    # "c"'s value '"é"' starts inside the token ', "c": "' and covers the two after it
    assert conf["c"] == pytest.approx((0.9 * 0.4 * 1.0) ** (1 / 3), abs=1e-6)
    assert conf["missing"] is None
    with pytest.raises(ValueError, match="2 token pieces but 1"):
        value_confidences([b"{", b"}"], [0.0], ["a"])


def test_run_calibration_counts_answered_papers_and_valid_confidences_only():
    detail = [
        {"paper_id": "p1", "answered": True, "fields": {"method_name": (1, 0, 0), "datasets": (1, 1, 0)}},
        {"paper_id": "p2", "answered": True, "fields": {"method_name": (0, 1, 1), "datasets": (0, 0, 0)}},
        {"paper_id": "p3", "answered": False, "fields": {"method_name": (0, 0, 1), "datasets": (0, 0, 0)}},
    ]
    notes = {
        "p1": {
            "confidence": {"method_name": 0.9, "datasets": 0.6},
            "logprob_confidence": {"method_name": 0.99, "datasets": None},
        },
        "p2": {"confidence": {"method_name": 1.7, "datasets": 0.5}},  # 1.7 is not a probability: left out
        "p3": {"confidence": {"method_name": 0.2, "datasets": 0.2}},  # no answer: left out
    }
    cal = run_calibration(notes, detail, ["method_name", "datasets"])
    asked = cal["asked"]
    # pairs: p1 method 0.9 right, p1 datasets 0.6 wrong, p2 datasets 0.5 right
    assert asked.pairs == 3
    assert asked.brier == pytest.approx(round((0.1**2 + 0.6**2 + 0.5**2) / 3, 4))
    assert asked.per_field["datasets"]["pairs"] == 2 and asked.per_field["method_name"]["brier"] == pytest.approx(0.01)
    assert cal["logprob"].pairs == 1 and cal["logprob"].brier == pytest.approx(round(0.01**2, 4))
    assert run_calibration({}, detail, ["method_name"]) == {}


def test_calibration_of_reports_bins_and_accuracy():
    cal = calibration_of([("a", 0.95, 1), ("a", 0.95, 0), ("b", 0.15, 0), ("b", 0.15, 0)])
    assert cal.accuracy == 0.25 and cal.mean_confidence == 0.55
    assert cal.ece == pytest.approx(0.5 * 0.45 + 0.5 * 0.15)
    assert [b["count"] for b in cal.bins] == [2, 2]


def test_the_confidence_strategy_keeps_confidences_out_of_the_record():
    strategy = Strategy("confidence")
    paper = Paper(id="p", text="We propose FooNet.", source="t.txt", position=1, line=1)
    record = {f: None for f in ("method_name", "method_full_name", "code_url", "training_free")}
    record.update(
        method_name="FooNet",
        research_area="other",
        contribution_types=["method"],
        **{f: [] for f in ("tasks", "datasets", "models", "metrics", "baselines", "results")},
    )
    conf = {f: 0.5 for f in HEADLINE_FIELDS}
    answer = strategy.response_model.model_validate({**record, "confidence": conf}).model_dump(mode="json")
    gen = strategy.finalize(paper, [Generation(record=answer, notes={"logprob_confidence": {"method_name": 0.7}})])
    assert "confidence" not in gen.record and gen.record["method_name"] == "FooNet"
    assert gen.notes["confidence"] == conf and gen.notes["logprob_confidence"] == {"method_name": 0.7}
    with pytest.raises(ValueError):  # a confidence outside [0, 1] is not a valid answer
        strategy.response_model.model_validate({**record, "confidence": {**conf, "method_name": 1.5}})


def test_a_confidence_run_is_scored_for_calibration(tmp_path):
    """The confidence strategy through the real openai client and instructor to a local server: the
    confidences land in the prediction line's notes, not in the record, and scores.json has the asked
    calibration. Every confidence is 1.0, so Brier = ECE = 1 - accuracy over the 3 x 12 pairs; all tied, the
    confidence ranks nothing: AURC = 1 - accuracy, and flagging ceil(0.2 * 36) = 8 pairs catches 8 / 36 of the
    errors in expectation."""
    answer = {
        "method_name": "StubNet",
        "research_area": "reasoning",
        "contribution_types": ["method"],
        "datasets": ["GSM8K"],
        "confidence": {
            f: 1.0
            for f in (
                "method_name",
                "method_full_name",
                "contribution_types",
                "research_area",
                "tasks",
                "datasets",
                "models",
                "metrics",
                "baselines",
                "results",
                "code_url",
                "training_free",
            )
        },
    }
    with StubServer(default=reply(json.dumps(answer))) as stub:
        env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite"))
        cmd = [
            "run",
            "-b",
            "openai/m",
            "--base-url",
            stub.url,
            "-s",
            "confidence",
            "--limit",
            "3",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-id",
            "c",
        ]
        proc = run_cli(*cmd, env=env)
    assert proc.returncode == 0, proc.stderr
    run = tmp_path / "runs" / "c"
    lines = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and all("confidence" not in line["record"] for line in lines)
    assert all(line["notes"]["confidence"]["datasets"] == 1.0 for line in lines)
    scores = json.loads((run / "scores.json").read_text())
    asked = scores["calibration"]["asked"]
    rows = [json.loads(x) for x in (run / "paper_scores.jsonl").read_text().splitlines()]
    right = sum(field_outcome(row["fields"][f]) for row in rows for f in HEADLINE_FIELDS)
    assert asked["pairs"] == 36 and 0 < right < 36
    assert asked["brier"] == pytest.approx(round(1 - right / 36, 4)) and asked["ece"] == pytest.approx(
        round(1 - right / 36, 4)
    )
    assert asked["aurc"] == pytest.approx(round(1 - right / 36, 4)) and asked["errors_caught_20"] == pytest.approx(
        round(8 / 36, 4)
    )
    assert asked["risk_coverage"][-1] == [1.0, pytest.approx(round(1 - right / 36, 4))]
    assert "logprob" not in scores["calibration"]  # the openai backend gives no token log-probabilities here
    # the same numbers on the board, the report's run table and the reliability diagram
    from paperfields.plots import plot_reliability, plot_risk_coverage
    from paperfields.report import write_report
    from paperfields.scoring.board import leaderboard_markdown
    from paperfields.scoring.score import RunScores
    from tests.conftest import ROOT
    from tests.test_report import _run_table

    run_scores = RunScores.model_validate(scores)
    board = leaderboard_markdown([run_scores])
    brier = f"{asked['brier']:.3f}"
    assert f"| {brier} / – | {asked['ece']:.3f} / – | {asked['aurc']:.3f} / – | {8 / 36:.3f} / – |" in board
    head, row = _run_table(write_report(run, ROOT / "gold" / "gold.jsonl").read_text(encoding="utf-8"))
    cells = dict(zip(head, row))
    assert cells["Brier (asked confidence)"] == brier and cells["Brier (logprob confidence)"] == "–"
    assert cells["AURC (asked confidence)"] == f"{asked['aurc']:.3f}" and cells["AURC (logprob confidence)"] == "–"
    assert cells["errors caught in least confident 20% (asked confidence)"] == f"{8 / 36:.3f}"
    png = plot_reliability(run_scores, tmp_path / "reliability.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot_reliability(run_scores.model_copy(update={"calibration": {}}), tmp_path / "none.png") is None
    curve = plot_risk_coverage(run_scores, tmp_path / "risk_coverage.png")
    assert curve.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot_risk_coverage(run_scores.model_copy(update={"calibration": {}}), tmp_path / "none.png") is None


def test_the_confidence_prompt_is_the_zero_shot_prompt_plus_the_confidence_request():
    """Calibration is measured on the default prompt's answers: the confidence prompt must not drift from it."""
    zero, conf = Strategy("zero_shot").template, Strategy("confidence").template
    assert conf.system.startswith(zero.system) and "fill confidence" in conf.system[len(zero.system) :]
    assert conf.user == zero.user and f"zero_shot v{zero.version}" in conf.description
