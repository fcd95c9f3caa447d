"""The Inspect Evals Register entry: built from eval logs of the task (the report is what the runs gave), valid
against the register's model of an entry, refusing logs that are not complete test-split runs of one clean commit;
and the committed register/paperfields/eval.yaml is such an entry, pinned to a commit of this repository."""

from __future__ import annotations

import subprocess

import pytest
import yaml

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval

from paperfields.integrations.inspect_register import RegisterError, register_entry, register_problems
from paperfields.integrations.inspect_task import paperfields_task
from tests.cli_in_process import run_cli
from tests.conftest import ROOT

COMMIT = "0123456789abcdef0123456789abcdef01234567"
URL = "https://github.com/someone/paperfields"


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    out = []
    for backend in ("rules/empty", "rules/baseline"):
        (log,) = inspect_eval(paperfields_task(), model=f"paperfields/{backend}", log_dir=str(folder), display="none")
        log.eval.metadata["git_commit"] = COMMIT  # as a run from a clean checkout of that commit records it
        out.append(log)
    return out


def test_the_entry_carries_what_the_runs_gave(logs):
    entry = register_entry(logs, URL, ["someone"])
    assert register_problems(entry) == []
    assert entry["source"] == {"repository_url": URL, "repository_commit": COMMIT, "maintainers": ["someone"]}
    (task,) = entry["tasks"]
    assert task == {
        "name": "paperfields",
        "dataset_samples": 60,
        "task_path": "paperfields/integrations/inspect_task.py",
    }
    assert (ROOT / task["task_path"]).is_file()
    report = entry["evaluation_report"]
    assert report["commit"] == COMMIT and [r["model"] for r in report["results"]] == [
        "paperfields/rules/baseline",
        "paperfields/rules/empty",
    ]  # best first
    for row in report["results"]:
        log = next(log for log in logs if log.eval.model == row["model"])
        metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
        values = {m["key"]: m["value"] for m in row["metrics"]}
        assert values["headline"] == round(metrics["headline"], 4) and values["valid_rate"] == metrics["valid_rate"]
        assert (values["headline_ci95_low"], values["headline_ci95_high"]) == (
            round(metrics["headline_ci95_low"], 4),
            round(metrics["headline_ci95_high"], 4),
        )
        assert row["samples"] == "60/60" and row["task"] == "paperfields" and row["date"] == log.stats.completed_at[:10]
    from paperfields.extract.strategies import Strategy

    prompt = Strategy("zero_shot")
    assert f"prompt {prompt.template.version} (sha256 {prompt.sha256[:12]})" in report["version"]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda log: log.eval.metadata.update(git_commit=COMMIT + "-dirty"), "rerun from a clean commit"),
        (lambda log: log.eval.metadata.update(git_commit=None), "made from no commit"),
        (lambda log: log.eval.metadata.update(split="dev"), "complete runs of the test split"),
        (lambda log: setattr(log, "status", "error"), "the eval did not finish"),
        (lambda log: log.eval.metadata.pop("paperfields_task"), "not of paperfields/paperfields"),
    ],
)
def test_a_log_that_is_no_complete_clean_test_run_is_refused(logs, change, message):
    bad = logs[0].model_copy(deep=True)
    change(bad)
    with pytest.raises(RegisterError, match=message):
        register_entry([bad, logs[1]], URL, ["someone"])


def test_logs_of_two_commits_are_refused(logs):
    other = logs[1].model_copy(deep=True)
    other.eval.metadata["git_commit"] = "f" * 40
    with pytest.raises(RegisterError, match="different commits"):
        register_entry([logs[0], other], URL, ["someone"])


@pytest.mark.parametrize(
    "change, problem",
    [
        (lambda e: e["tasks"][0].pop("task_path"), "'task_path' is a required property"),
        (lambda e: e["source"].pop("repository_commit"), "'repository_commit' is a required property"),
        (lambda e: e.update(description="two\nlines"), "does not match"),
        (lambda e: e.update(external_assets=[]), "Additional properties are not allowed ('external_assets'"),
        (lambda e: e["evaluation_report"]["results"][0].update(task="other"), "'other' is not a declared task"),
        (lambda e: e["evaluation_report"]["results"][0].update(metrics=[]), "should be non-empty"),
    ],
)
def test_an_entry_off_the_format_is_caught(logs, change, problem):
    entry = register_entry(logs, URL, ["someone"])
    change(entry)
    assert any(problem in p for p in register_problems(entry)), register_problems(entry)


def test_the_entry_s_texts_are_read_from_the_code_never_typed():
    """The CI note said 1000 resamples, seed 0, where the headline's bootstrap draws 2000 with seed 20260; the
    field count and the accuracy fields come from the schema's facts, the papers from the logs."""
    from paperfields.integrations.inspect_register import description, headline_note
    from paperfields.scoring.metrics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
    from paperfields.scoring.score import ACCURACY_FIELDS, HEADLINE_COUNT

    assert (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED) == (2000, 20260)
    note = headline_note(60)
    assert "(2000 resamples, seed 20260)" in note and "1000" not in note
    assert f"macro mean over {HEADLINE_COUNT} fields" in note and "over the 60 test papers" in note
    assert "(accuracy for research_area and training_free)" in note and ACCURACY_FIELDS == (
        "research_area",
        "training_free",
    )
    assert f"macro mean over {HEADLINE_COUNT} fields of pooled micro F1." in description(60)
    assert "each of 40 ICML 2026 abstracts" in description(40)


def test_the_committed_entry_is_the_one_its_kept_logs_make(tmp_path):
    """register/paperfields/eval.yaml was written by `paperfields inspect-register` from eval logs whose headers are
    kept beside it: made again from them, it is the same file
    byte for byte, and its commit is one of this repository."""
    folder = ROOT / "register" / "paperfields"
    entry = yaml.safe_load((folder / "eval.yaml").read_text(encoding="utf-8"))
    assert register_problems(entry) == []
    kept = sorted((folder / "logs").glob("*.json"))
    again = tmp_path / "eval.yaml"
    result = run_cli(
        "inspect-register", *kept, "--repository-url", entry["source"]["repository_url"],
        *[arg for m in entry["source"]["maintainers"] for arg in ("--maintainer", m)],
        "--out", again, "--logs-out", folder / "logs",
    )  # fmt: skip
    assert result.returncode == 0, result.output
    assert again.read_bytes() == (folder / "eval.yaml").read_bytes()
    commit = entry["source"]["repository_commit"]
    known = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True)
    assert known.returncode == 0, f"{commit} is not a commit of this repository"
    models = [row["model"] for row in entry["evaluation_report"]["results"]]
    assert {"paperfields/rules/baseline", "paperfields/rules/empty"} <= set(models)
    assert any(m.startswith("paperfields/local/") for m in models) and len(kept) == len(models)
