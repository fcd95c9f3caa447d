"""Issue 33 item 6: the smaller faults a new user met on the way in, each as the user met it (the
Python API, the real command line, a real child process for a signal)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import paperfields as pf
from paperfields.core.runlog import load_manifest, read_predictions
from tests.cli_in_process import run_cli
from tests.conftest import ROOT

CHILD = Path(__file__).parent / "cli_child.py"  # the CLI with a gated/ backend that holds still after N papers
GUARD_S = 600  # how long a test waits for a state before it fails: a guard against a hang, never a speed assumption


# --- pf.run(pf.RunOptions(...)) ------------------------------------------------------------------------------


def test_run_takes_its_options_as_the_first_argument(tmp_path):
    options = pf.RunOptions(backend="rules/baseline", limit=2, runs_dir=tmp_path / "runs", run_id="first", score=False)
    result = pf.run(options)  # what the README and the API's docstring offer: the benchmark corpus, test split
    assert result.run_dir == tmp_path / "runs" / "first"
    assert result.manifest.papers_total == 2 and result.manifest.config.split == "test"
    assert result.manifest.papers_valid == 2
    with pytest.raises(TypeError, match="options twice.*options="):
        pf.run(options, options)
    with pytest.raises(TypeError, match=r"options=pf\.RunOptions"):
        pf.run(pf.ExtractOptions(backend="rules/baseline"))
    # a dict first would be iterated as abstracts ("backend", "limit"): refused, naming options=
    with pytest.raises(TypeError, match=r"not a dict; give the options as options="):
        pf.run({"backend": "rules/baseline", "limit": 1})
    assert not (tmp_path / "runs" / "rules_baseline__zero_shot__test").exists()


# --- --price on a rerun of a finished run ----------------------------------------------------------------------


def test_a_price_given_to_a_finished_run_recomputes_its_dollars_from_the_stored_usage(tmp_path, stub, monkeypatch):
    from tests.openai_stub import reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    stub.default = reply(prompt_tokens=2000, completion_tokens=100)
    runs = tmp_path / "runs"
    base = ["run", "-b", "openai/my-model", "--base-url", stub.url, "--runs-dir", str(runs), "--limit", "2"]
    first = run_cli(*base, "--run-id", "mine", "-q")
    assert first.returncode == 0, first.stderr
    assert load_manifest(runs / "mine").dollars_total is None  # a model the price table does not know
    asked = len(stub.requests)
    again = run_cli(*base, "--run-id", "mine", "--price", "0.2,0.8", env=dict(os.environ, COLUMNS="250"))
    assert again.returncode == 0, again.stderr
    assert len(stub.requests) == asked  # nothing asked again: the run was finished
    manifest = load_manifest(runs / "mine")
    assert manifest.dollars_total == pytest.approx(2 * (2000 * 0.2 + 100 * 0.8) / 1e6)
    assert (manifest.price["input"], manifest.price["output"]) == (0.2, 0.8) and manifest.status == "complete"
    said = " ".join(again.stderr.split())
    assert "dollars recomputed from the stored usage at --price 0.2,0.8: $0.000960" in said
    # the board reads the run's scores, re-scored by the rerun
    assert pf.load_scores is not None and pf.score(runs / "mine").dollars_total == pytest.approx(0.00096)


# --- hints after a --runs-dir run ------------------------------------------------------------------------------


def test_the_hints_after_a_run_in_another_folder_name_that_folder(tmp_path):
    corpus = tmp_path / "mine.jsonl"
    corpus.write_text(
        json.dumps({"id": "p-own-1", "text": "We propose FooNet for bar, reaching 91.2% accuracy on ImageNet."}) + "\n"
    )
    runs = tmp_path / "my runs"
    done = run_cli(
        "run", "-b", "fake/a", "--corpus", str(corpus), "--split", "all", "--runs-dir", str(runs), "--run-id", "own"
    )
    assert done.returncode == 0, done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    hint = f"`paperfields report own --runs-dir '{runs}'`"
    assert hint in said and f"`paperfields show PAPER --run own --runs-dir '{runs}'`" in said
    # and the hint works as printed
    report = run_cli("report", "own", "--runs-dir", str(runs), "--out", str(tmp_path / "r.html"))
    assert report.returncode == 0, report.stderr
    # the same hints from score and publish, which read the run again
    for args in (("score", "own", "--runs-dir", str(runs)), ("publish", "own", "--runs-dir", str(runs))):
        refused = run_cli(*args)
        assert refused.returncode == 1, refused.stderr
        assert f"paperfields report own --runs-dir '{runs}'" in " ".join(refused.stderr.split())
    # a run in runs/ (the default) is named by its id alone
    default = run_cli("run", "-b", "fake/a", "--corpus", str(corpus), "--split", "all", "--run-id", "own2")
    assert "`paperfields report own2`" in " ".join((default.stdout + default.stderr).split())


# --- publish --runs-dir -----------------------------------------------------------------------------------------


def test_publish_takes_the_runs_dir_the_run_was_made_in(tmp_path, hermetic):
    runs = tmp_path / "elsewhere"
    made = run_cli("run", "-b", "fake/a", "--runs-dir", str(runs), "--run-id", "mine", "-q")
    assert made.returncode == 0, made.stderr
    # hermetic's results/runs is the committed one (read-only by intent): publish into a root of our own
    project = tmp_path / "project"
    (project / "results" / "runs").mkdir(parents=True)
    env = dict(os.environ, PAPERFIELDS_ROOT=str(project))
    before = run_cli("publish", "mine", "--allow-dirty", env=env)
    assert before.returncode == 2 and "no run folder 'mine'" in before.stderr  # runs/ has no such run
    done = run_cli("publish", "mine", "--runs-dir", str(runs), "--allow-dirty", env=env)
    assert done.returncode == 0, done.stderr
    assert (project / "results" / "runs" / "mine" / "scores.json").is_file() and not (runs / "mine").exists()


# --- SIGTERM ----------------------------------------------------------------------------------------------------


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_sigterm_leaves_the_manifest_incomplete_and_exits_143(tmp_path):
    runs = tmp_path / "runs"
    env = dict(os.environ, PF_GATE_FILE=str(tmp_path / "gate"), PF_GATE_AFTER="3")
    cmd = [sys.executable, str(CHILD), "run", "-b", "gated/x", "--limit", "20", "--runs-dir", str(runs), "--no-score"]
    # a real process: the test sends it a signal
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    run_dir = runs / "gated_x__zero_shot__test"
    deadline = time.monotonic() + GUARD_S
    while _lines(run_dir / "predictions.jsonl") < 3:  # the fourth paper is held until the signal
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, f"no 3 papers written within {GUARD_S} s"
        time.sleep(0.02)
    assert load_manifest(run_dir).status == "running"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=GUARD_S)
    assert proc.returncode == 143, err
    assert "terminated (SIGTERM); finished papers are saved, run the same command again to resume" in err
    manifest = load_manifest(run_dir)
    assert manifest.status == "incomplete" and manifest.papers_done == len(
        read_predictions(run_dir / "predictions.jsonl")
    )
    assert manifest.papers_done == 3 and not (run_dir / ".lock").exists()


# --- the difficulty view, linked from both boards ----------------------------------------------------------------


def test_the_markdown_and_web_boards_link_the_difficulty_view_beside_them(tmp_path):
    import shutil

    runs = tmp_path / "runs"
    for kept in ("rules_baseline__zero_shot__test", "rules_empty__zero_shot__test"):
        shutil.copytree(ROOT / "results" / "runs" / kept, runs / kept)
    out = tmp_path / "board" / "leaderboard.md"
    done = run_cli("leaderboard", "--runs-dir", str(runs), "--out", str(out), "--no-plots", "-q")
    assert done.returncode == 0, done.stderr
    assert (out.parent / "difficulty.md").is_file()
    assert "[difficulty.md](difficulty.md)" in out.read_text(encoding="utf-8")
    assert '<a href="difficulty.md">difficulty.md</a>' in out.with_suffix(".html").read_text(encoding="utf-8")


# --- one speed for the default run in the README, from the board ------------------------------------------------


def test_the_readme_types_no_speed_of_its_own():
    from paperfields.summary import END, START

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    before, rest = readme.split(START, 1)
    block, after = rest.split(END, 1)
    # every figure of time per paper or per run is in the block `paperfields leaderboard` writes, none typed around it
    speed = re.compile(r"\d[\d.,]*\s*(?:s|sec|seconds?|min|minutes?)\b(?:\s*(?:per|/)\s*paper)?", re.IGNORECASE)
    assert not speed.search(before + after), speed.search(before + after).group()
    assert block.count(" s per paper") == 1
