"""Every row of the published board comes from where it says (found by an outsider's attempts, 2026-12-02): a
submitted row holds exactly the predictions of its checked folder, every submission folder is on the board, and no
run is imported onto the board except a submission or a gold-side annotator reference. A pull request that edits a
submitted run's stored predictions, forgets `paperfields submission add`, or scores a predictions file straight into
results/runs (`score --predictions --runs-dir results/runs`: ranked and unmarked) fails here, saying what to do."""

from __future__ import annotations

import hashlib
import json

import pytest

from paperfields.core.runlog import read_predictions
from paperfields.scoring.submissions import check_submission
from tests.conftest import ROOT

RUNS = ROOT / "results" / "runs"
FOLDERS = sorted(p for p in (ROOT / "submissions").iterdir() if (p / "submission.toml").is_file())
IMPORTED = sorted(p for p in RUNS.iterdir() if (p / "manifest.json").is_file() and "__imported__" in p.name)


def _manifest(run) -> dict:
    return json.loads((run / "manifest.json").read_text(encoding="utf-8"))


def test_the_published_board_holds_submissions_and_an_imported_reference():
    assert len(FOLDERS) >= 5 and IMPORTED  # a glob that finds none would make the tests below vacuous


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_a_submitted_row_holds_exactly_its_checked_folders_predictions(folder):
    run = RUNS / f"{folder.name}__submitted__test"
    assert (run / "manifest.json").is_file(), (
        f"{folder} is not on the board: run `paperfields submission add {folder.name}` and commit results/ with it"
    )
    check = check_submission(folder, ROOT / "gold" / "gold.jsonl", ROOT / "gold" / "corpus.jsonl", RUNS)
    assert check.ok, check.problems
    made = _manifest(run)["import"]
    assert made["submission"]["name"] == folder.name
    assert made["imported_sha256"] == hashlib.sha256((folder / "predictions.jsonl").read_bytes()).hexdigest(), (
        f"{run} was scored from another predictions file than {folder}'s: run `paperfields submission add "
        f"{folder.name}` again"
    )
    stored = {line.paper_id: line.record for line in read_predictions(run / "predictions.jsonl")}
    assert stored == check.records, (
        f"{run / 'predictions.jsonl'} differs from {folder / 'predictions.jsonl'}: a submitted run is scored as "
        "given; never edit results/ by hand, run `paperfields submission add` again"
    )


@pytest.mark.parametrize("run", IMPORTED, ids=[p.name for p in IMPORTED])
def test_an_imported_run_on_the_board_is_an_annotator_reference_from_gold(run):
    """The one way onto the board without a submission folder is a second labeling kept in gold/ (annotator/*,
    always a reference): its file is there and is the one scored."""
    manifest = _manifest(run)
    backend, source = manifest["config"]["backend"], manifest["import"]["imported_from"]
    assert backend.startswith("annotator/"), (
        f"{run} was imported as {backend!r} with no submission folder: it would be ranked and shown as reproduced "
        "here; send it as submissions/<name>/ (`paperfields submission add`) instead"
    )
    labels = ROOT / "gold" / source
    assert labels.is_file(), f"{run} names {source}, which gold/ does not hold"
    assert manifest["import"]["imported_sha256"] == hashlib.sha256(labels.read_bytes()).hexdigest()
