"""The published board: what is ranked, what is shown apart, and what a user's own run changes (nothing tracked)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli_in_process import CliResult, run_cli
from tests.conftest import PUBLISHED_RUNS as PUBLISHED
from tests.conftest import ROOT


def _cli(*args: str, root: Path | None = None, check: bool = False) -> CliResult:
    env = dict(os.environ, **({"PAPERFIELDS_ROOT": str(root)} if root else {}))
    proc = run_cli(*args, env=env)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture
def clone(tmp_path) -> Path:
    """A fresh clone of the committed project (what a new user gets), used as PAPERFIELDS_ROOT."""
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True)
    return target


def _status(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True, check=True
    ).stdout


SUBMISSION_COUNTS = (0, 1, 30)  # issue 33 item 2: the board's tests hold for no submission, one, and many


def made_up_submissions(runs: Path, count: int) -> list[str]:
    """Write ``count`` made-up submitted runs into ``runs`` (copies of the published rules baseline's folder,
    its scores relabeled as a submission with a long name and model, headlines spread over 0.05 to 0.95);
    returns their run ids. Nothing is scored: the board reads ``scores.json``."""
    source = PUBLISHED / "rules_baseline__zero_shot__test"
    base = json.loads((source / "scores.json").read_text())
    made = []
    for i in range(count):
        name = f"lab-{i:02d}-an-outside-team-with-a-long-folder-name-for-its-submission"[:64]
        run_id = f"{name}__submitted__test"
        folder = runs / run_id
        folder.mkdir(parents=True)
        for file in ("predictions.jsonl", "manifest.json"):
            shutil.copyfile(source / file, folder / file)
        headline = round(0.05 + 0.9 * i / max(count - 1, 1), 4)
        meta = {
            "name": name,
            "model": f"frontier-model-{i}-instruct-2026-11-30",
            "provider": "some-provider",
            "date_run": "2026-11-30",
            "strategy": "own pipeline",
            "submitted_by": "a test",
        }
        scores = {
            **base,
            "run_id": run_id,
            "backend": f"{meta['provider']}/{meta['model']}",
            "strategy": "own pipeline",
            "reference": False,
            "headline": headline,
            "headline_ci95": [max(headline - 0.05, 0.0), min(headline + 0.05, 1.0)],
            "seconds_per_paper": 0.0,
            "model_seconds": 0.0,
            "submitted": meta,
        }
        (folder / "scores.json").write_text(json.dumps(scores))
        made.append(run_id)
    return made


def board_with_submissions(tmp_path: Path, count: int) -> tuple[Path, list[str]]:
    """A runs folder holding every published run (linked) and
    ``count`` made-up submissions; the folder and their ids."""
    runs = tmp_path / "board-runs"
    runs.mkdir()
    for folder in sorted(PUBLISHED.iterdir()):
        if (folder / "scores.json").is_file():
            (runs / folder.name).symlink_to(folder, target_is_directory=True)
    return runs, made_up_submissions(runs, count)


@pytest.mark.parametrize("count", SUBMISSION_COUNTS)
def test_the_boards_invariants_hold_for_any_rows(tmp_path, count):
    """The committed board's invariants, with 0, 1 and 30 made-up submissions added: every published run and every
    submission has one row, references and partial runs are unranked, the ranks run 1.. by headline over complete
    contenders only, and every submission is marked submitted."""
    runs, submitted = board_with_submissions(tmp_path, count)
    rows = json.loads(_cli("leaderboard", "--runs-dir", str(runs), "--no-write", "--json", check=True).stdout)
    by_id = {r["run_id"]: r for r in rows}
    stored = [json.loads(p.read_text()) for p in PUBLISHED.glob("*/scores.json")]
    published = {s["run_id"] for s in stored}
    assert len(rows) == len(by_id) == len(published) + count and set(by_id) == published | set(submitted)
    # the published board's own submissions (the agent reference was the first) and the made-up ones
    every_submission = set(submitted) | {s["run_id"] for s in stored if s.get("submitted")}
    for row in rows:
        assert {"run_id", "headline", "headline_ci95", "rank", "reference", "papers", "papers_total"} <= set(row)
        assert (row["provenance"] == "submitted") == (row["run_id"] in every_submission)
        if row["reference"] or row["section"] != "contender":
            assert row["rank"] is None, row["run_id"]
    ranked = sorted((r for r in rows if r["rank"] is not None), key=lambda r: (r["rank"], -r["headline"]))
    assert ranked and all(not r["reference"] and r["papers"] == r["papers_total"] for r in ranked)
    assert [r["headline"] for r in ranked] == sorted((r["headline"] for r in ranked), reverse=True)
    for r in ranked:  # competition ranking: 1 + the number of rows with a higher headline
        assert r["rank"] == 1 + sum(1 for o in ranked if o["headline"] > r["headline"])
    # the empty record's floor is a reference near zero whatever else is on the board
    empty = by_id["rules_empty__zero_shot__test"]
    assert empty["headline"] <= 0.05 and empty["reference"] is True and empty["rank"] is None


def test_no_committed_score_has_precision_one_with_nothing_predicted():
    for path in sorted((ROOT / "results" / "runs").glob("*/scores.json")):
        scores = json.loads(path.read_text())
        for name, field in scores["fields"].items():
            if field["tp"] + field["fp"] == 0:
                assert field["micro_precision"] is None, (path.parent.name, name)
            if field["tp"] + field["fn"] == 0:
                assert field["micro_recall"] is None, (path.parent.name, name)
        for cls in scores["classes"]["contribution_types"]["per_class"].values():
            assert cls[0] != 1.0 or cls[3] > 0


@pytest.mark.parametrize("count", SUBMISSION_COUNTS)
def test_the_board_reads_at_100_columns(tmp_path, count):
    """Within 100 columns because the model column wraps, not because the rows are few: with 0, 1 and 30 made-up
    submissions of long names and models, every line fits, nothing is cut to "…", and every run's model is whole."""
    runs, submitted = board_with_submissions(tmp_path, count)
    proc = run_cli("leaderboard", "--runs-dir", str(runs), "--no-write", env=dict(os.environ, COLUMNS="100"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(len(line.rstrip()) <= 100 for line in lines), max(lines, key=len)
    assert "…" not in proc.stdout
    # the model column wraps (a name longer than the column folds onto the next lines, nothing cut): read down it,
    # every run's model and every submission's folder are there whole
    header = next(line for line in lines if line.lstrip().startswith("# model"))
    start, end = header.index("model"), header.index("strategy")
    column = "".join(line[start:end].strip() for line in lines[lines.index(header) + 1 :])
    backends = {json.loads(p.read_text())["backend"] for p in runs.glob("*/scores.json")}
    assert all(b in column for b in backends), sorted(b for b in backends if b not in column)
    assert all(f"(submitted:submissions/{run_id.split('__')[0]})" in column for run_id in submitted)
    words = set(proc.stdout.split())  # a name that fits the column is never broken
    assert "local/qwen2.5-coder-1.5b" in words and "rules/empty" in words


def test_a_users_run_goes_to_runs_not_the_published_board_and_leaves_git_clean(clone):
    board_before = (clone / "results" / "leaderboard.md").read_text()
    proc = _cli("run", "-b", "rules/empty", "--limit", "3", root=clone)
    assert proc.returncode == 0, proc.stderr
    assert (clone / "runs" / "rules_empty__zero_shot__test" / "predictions.jsonl").is_file()
    assert _status(clone) == ""  # runs/ is git-ignored; nothing tracked changed
    # printed beside the published board, marked partial, with no rank and no CI
    assert (
        "rules_empty__zero_shot__test: headline 0.0" in proc.stderr
        and "no CI: partial or unfinished run" in proc.stderr
    )
    assert "3 of 60" in proc.stdout and "part" in proc.stdout
    # the published board, csv, export and push know nothing of it
    rows = json.loads(_cli("leaderboard", "--json", "--no-write", root=clone, check=True).stdout)
    assert all(r["section"] != "partial" for r in rows) and len(rows) == len(
        list((clone / "results" / "runs").glob("*/scores.json"))
    )
    assert next(r for r in rows if r["run_id"] == "rules_empty__zero_shot__test")["papers"] == 60
    _cli("leaderboard", "-q", root=clone, check=True)
    assert (clone / "results" / "leaderboard.md").read_text() == board_before
    exported = clone / "dist"
    _cli("export", str(exported), root=clone, check=True)
    listing = json.loads((exported / "predictions" / "runs.json").read_text())
    assert all(entry["complete"] for entry in listing.values()) and len(listing) == len(rows)
    shutil.rmtree(exported)
    assert _status(clone) == ""


def test_publish_refuses_a_partial_run_unless_asked_and_the_board_shows_it_apart(clone):
    _cli("run", "-b", "rules/empty", "--limit", "2", "--run-id", "tiny", "-q", root=clone, check=True)
    refused = _cli("publish", "tiny", root=clone)
    assert (
        refused.returncode == 2
        and "tiny is partial" in refused.stderr
        and not (clone / "results" / "runs" / "tiny").exists()
    )
    _cli(
        "publish", "tiny", "--allow-partial", "--allow-dirty", root=clone, check=True
    )  # --allow-dirty: tests may run on an edited checkout
    rows = {
        r["run_id"]: r for r in json.loads(_cli("leaderboard", "--json", "--no-write", root=clone, check=True).stdout)
    }
    assert (
        rows["tiny"]["rank"] is None and rows["tiny"]["headline_ci95"] is None and rows["tiny"]["section"] == "partial"
    )
    assert rows["tiny"]["papers"] == 2 and rows["tiny"]["papers_total"] == 60
    # export and push refuse it unless it is named on purpose
    out = clone / "dist"
    refused = _cli("export", str(out), root=clone)
    assert refused.returncode == 2 and "--include-partial tiny" in refused.stderr
    _cli("export", str(out), "--include-partial", "tiny", root=clone, check=True)
    push = _cli("push", "someone/pf", "--folder", str(out), "--dry-run", root=clone)
    assert push.returncode == 2 and "--include-partial tiny" in push.stderr
    ok = _cli(
        "push", "someone/pf", "--folder", str(out), "--dry-run", "--include-partial", "tiny", root=clone, check=True
    )
    assert "predictions/tiny.parquet" in ok.stdout


@pytest.mark.model
def test_the_readme_first_command_leaves_git_status_clean_on_a_fresh_clone(clone):
    """README line 1 is `./install.sh && .venv/bin/paperfields run`; here with --limit 1 (the install is this venv)."""
    readme = (ROOT / "README.md").read_text().splitlines()
    first = next(line for line in readme if line.startswith("./install.sh &&"))
    command = first.split("#")[0].split("&&", 1)[1].split()
    assert command[0] == ".venv/bin/paperfields" and command[1] == "run"
    proc = _cli(*command[1:], "--limit", "1", root=clone)
    assert proc.returncode == 0, proc.stderr
    assert _status(clone) == ""
    assert list((clone / "runs").glob("*/predictions.jsonl"))


def test_the_field_heatmap_says_how_many_papers_a_row_covers(tmp_path, monkeypatch):
    """Issue 28, item 9c: a reference over a sample, a --limit run
    and an unfinished one say their papers in the row label."""
    import matplotlib.pyplot as plt

    from paperfields import plots
    from paperfields.scoring.board import Board
    from paperfields.scoring.runs import collect_scores

    scores = collect_scores(ROOT / "results" / "runs")
    annotator = next(s for s in scores if s.run_id.startswith("annotator_"))
    assert annotator.papers < annotator.papers_in_split  # a second labeling of a sample of the test papers
    full = next(s for s in scores if s.run_id == "local_qwen2.5-coder-0.5b__zero_shot__test")
    limited = full.model_copy(update={"run_id": "limited", "papers": 6, "papers_done": 6})
    unfinished = full.model_copy(update={"run_id": "unfinished", "papers_done": 30})
    drawn: list[list[str]] = []
    close = plt.close
    monkeypatch.setenv("PAPERFIELDS_PLOT_CACHE", "off")  # drawn here, not taken from the plot cache
    monkeypatch.setattr(
        plt,
        "close",
        lambda fig: (drawn.append([t.get_text() for t in fig.axes[0].get_yticklabels()]), close(fig)),
    )
    plots.plot_fields(Board.of(scores + [limited, unfinished]), tmp_path / "fields.png")
    [labels] = drawn
    assert f"{annotator.run_id} [reference, {annotator.papers} of {annotator.papers_in_split} papers]" in labels
    assert "rules_baseline__zero_shot__test [reference]" in labels  # a reference over the whole split: no count
    assert full.run_id in labels  # a contender over the whole split: its id alone
    assert f"limited [partial, 6 of {full.papers_in_split} papers]" in labels
    assert f"unfinished [partial, 30/{full.papers} papers answered]" in labels
