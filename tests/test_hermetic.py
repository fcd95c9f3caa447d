"""What a user has run changes neither the tests nor what a run id means (issue 28, item 1).

The Python snippet of docs/getting-started.md ``pf.run(backend="rules/baseline", limit=3)`` writes
``runs/rules_baseline__zero_shot__test``, the id of a published run. The tests must pass after it, and
a bare id naming both runs must be refused with both folders, not silently mean one of them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

import paperfields as pf
from paperfields.core.runlog import RunError
from tests.cli_in_process import run_cli
from tests.conftest import ROOT

RUN_ID = "rules_baseline__zero_shot__test"
# The suite's tests that read the board or compare runs through the default project root, by bare
# published ids (test_board's clone tests set a root of their own).
BOARD_AND_COMPARE = [
    "tests/test_board.py",
    "tests/test_report.py",
    "tests/test_cli_messages.py",
    "-k",
    "leaderboard_json or board_reads or compare",
]


def test_a_bare_id_of_a_user_run_and_a_published_run_is_refused_naming_both(hermetic):
    mine = pf.run(backend="rules/baseline", limit=3).run_dir  # the getting-started snippet
    published = hermetic / "results" / "runs" / RUN_ID
    assert mine == hermetic / "runs" / RUN_ID and published.is_dir()
    message = (
        f"run id '{RUN_ID}' names two runs: yours, {mine}, and the published one, {published}; "
        "give the folder of the one you mean instead of the id"
    )
    with pytest.raises(RunError) as err:
        pf.find_run(RUN_ID)
    assert str(err.value) == message
    for command in (
        ["compare", RUN_ID, "rules_empty__zero_shot__test"],
        ["score", RUN_ID],
        ["report", RUN_ID],
        ["show", "x", "--run", RUN_ID],
    ):
        refused = run_cli(*command)
        assert refused.returncode == 2 and refused.stderr == f"error: {message}\n" and refused.stdout == "", command
    # either folder, given, names its run
    assert pf.find_run(mine) == mine and pf.find_run(published) == published
    assert pf.load_scores(mine)["paper_id"].nunique() == 3 and pf.load_scores(published)["paper_id"].nunique() == 60
    # an id in one place only is still found there
    assert pf.find_run("rules_empty__zero_shot__test") == hermetic / "results" / "runs" / "rules_empty__zero_shot__test"
    shutil.rmtree(mine)
    assert pf.find_run(RUN_ID) == published


def test_the_board_and_compare_tests_pass_with_a_users_run_of_the_same_id_in_the_checkout(monkeypatch):
    """The getting-started snippet run in the checkout (its git-ignored runs/), then the suite's board and
    compare tests: they read the published run, never the user's."""
    user_runs = ROOT / "runs"
    made_folder = not user_runs.exists()
    made_run = not (user_runs / RUN_ID).exists()
    if made_run:
        pf.run(backend="rules/baseline", limit=3, runs_dir=user_runs)
    try:
        monkeypatch.delenv("PAPERFIELDS_ROOT")  # the checkout's own root, as a developer's shell has it
        with pytest.raises(RunError, match="names two runs"):
            pf.find_run(RUN_ID)  # the id is ambiguous there: a test reading the checkout's runs/ would trip
        env = {k: v for k, v in os.environ.items() if k != "PAPERFIELDS_ROOT"}
        # a pytest of its own: the tests under check set up their environment in their own conftest.
        # Its temporary folders get a short name: some of its tests print their paths in 160-column tables.
        with tempfile.TemporaryDirectory(prefix="pf") as inner_tmp:
            inner = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "-m",
                    "not model",
                    "--basetemp",
                    inner_tmp,
                    *BOARD_AND_COMPARE,
                ],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
            )
        assert inner.returncode == 0, inner.stdout[-4000:] + inner.stderr[-2000:]
        assert " passed" in inner.stdout and " failed" not in inner.stdout
    finally:
        if made_run:
            shutil.rmtree(user_runs / RUN_ID)
        if made_folder and user_runs.is_dir() and not any(user_runs.iterdir()):
            user_runs.rmdir()


def test_an_in_process_cli_run_leaves_this_process_as_it_was(tmp_path):
    import logging
    import warnings

    environ, cwd = dict(os.environ), os.getcwd()
    filters, showwarning = list(warnings.filters), warnings.showwarning
    root_handlers = logging.getLogger().handlers[:]
    levels = {name: lg.level for name, lg in logging.root.manager.loggerDict.items() if isinstance(lg, logging.Logger)}
    elsewhere = run_cli("leaderboard", "--no-write", env=dict(os.environ, COLUMNS="100"), cwd=tmp_path)
    here = run_cli("leaderboard", "--no-write")
    assert elsewhere.returncode == 0 and elsewhere.stdout == here.stdout and "rules/empty" in here.stdout, (
        elsewhere.stderr
    )
    assert dict(os.environ) == environ and os.getcwd() == cwd
    assert list(warnings.filters) == filters and warnings.showwarning is showwarning
    assert logging.getLogger().handlers == root_handlers
    assert {
        name: lg.level
        for name, lg in logging.root.manager.loggerDict.items()
        if isinstance(lg, logging.Logger) and name in levels
    } == levels


def test_a_path_that_is_not_a_run_says_so(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RunError) as err:
        pf.find_run(empty)
    assert str(err.value) == f"{empty} is not a run folder (no manifest.json in it)"
    lines = tmp_path / "mine.jsonl"
    lines.write_text("{}\n")
    with pytest.raises(
        RunError,
        match=r"mine\.jsonl is a file, not a run folder; to score a file of "
        r"predictions: paperfields score --predictions FILE --name NAME",
    ):
        pf.find_run(lines)
    with pytest.raises(RunError, match=r"^no run folder .*nowhere/at_all$"):
        pf.find_run(tmp_path / "nowhere" / "at_all")
    refused = run_cli("score", str(empty))
    assert (
        refused.returncode == 2 and refused.stderr == f"error: {empty} is not a run folder (no manifest.json in it)\n"
    )


@pytest.mark.parametrize("limit", [0, -1])
def test_the_api_refuses_a_limit_the_command_line_refuses(tmp_path, limit):
    with pytest.raises(ValueError, match="field 'limit': Input should be greater than or equal to 1"):
        pf.run(backend="rules/baseline", limit=limit, runs_dir=tmp_path)
    assert not any(tmp_path.iterdir())  # no run folder written
