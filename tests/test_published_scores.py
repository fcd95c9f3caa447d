"""Every published run scores again to the very bytes results/ holds: the guard of any change to the scorer's speed
(caches, fewer validations, a faster assignment) that must leave every score as it was (issue 39 item 5)."""

from __future__ import annotations

import shutil

import pytest

from paperfields.scoring.runs import score_run
from tests.conftest import ROOT

RUNS = sorted(p for p in (ROOT / "results" / "runs").iterdir() if (p / "scores.json").is_file())


def test_the_published_runs_are_found():
    assert len(RUNS) >= 10  # today's board holds 14 runs: a glob that finds none would make the test below vacuous


@pytest.mark.parametrize("run", RUNS, ids=[p.name for p in RUNS])
def test_a_published_run_scores_again_to_its_stored_files_byte_for_byte(run, tmp_path):
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    score_run(copy, ROOT / "gold" / "gold.jsonl")  # the stored cosines suffice: no embedding model is loaded
    for name in ("scores.json", "paper_scores.jsonl"):
        assert (copy / name).read_text(encoding="utf-8") == (run / name).read_text(encoding="utf-8"), name
