from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Optional

import pytest

import paperfields as pf
from paperfields.core.runlog import RunConfig, RunError, load_manifest, read_predictions
from paperfields.extract.backends import get_backend
from paperfields.extract.runner import run_extraction
from paperfields.extract.strategies import Strategy
from tests.cli_in_process import run_cli


def _config(**overrides) -> RunConfig:
    strategy = Strategy("zero_shot")
    base = dict(
        backend="fake/scripted",
        strategy="zero_shot",
        prompt_version=strategy.template.version,
        prompt_sha256=strategy.sha256,
        split="test",
    )
    return RunConfig(**(base | overrides))


# The gated/ runs below stay real processes: they are killed (-9), interrupted (SIGINT) or hold a run
# folder's lock while another run tries it, which needs a process of their own (and the gated/ backend
# is registered only in that process).
CHILD = Path(__file__).parent / "cli_child.py"  # the CLI with a gated/ backend that holds still after N papers
GUARD_S = 600  # how long a test waits for a state before it fails: a guard against a hang, never a speed assumption


def _gated(tmp_path: Path, after: Optional[int], *args: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment of a CLI run whose gated/ backend answers ``after`` requests at once and
    then waits for ``tmp_path / 'gate'`` to exist (``after`` None: never waits)."""
    env = dict(os.environ, PF_GATE_FILE=str(tmp_path / "gate"))
    env.pop("PF_GATE_AFTER", None)
    if after is not None:
        env["PF_GATE_AFTER"] = str(after)
    return [sys.executable, str(CHILD), *args], env


def _wait_until(condition: Callable[[], bool], what: str, proc: Optional[subprocess.Popen] = None) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` if ``proc`` exits first or GUARD_S pass."""
    deadline = time.monotonic() + GUARD_S
    while not condition():
        if proc is not None and proc.poll() is not None:
            pytest.fail(
                f"the run exited ({proc.returncode}) before {what}: {proc.stderr.read() if proc.stderr else ''}"
            )
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {GUARD_S} s")
        time.sleep(0.02)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_killed_run_resumes_and_ends_with_every_paper_once(tmp_path):
    runs = tmp_path / "runs"
    cmd, held = _gated(
        tmp_path, 4, "run", "--backend", "gated/x", "--limit", "12", "--runs-dir", str(runs), "--no-score"
    )
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=held)
    pred = runs / "gated_x__zero_shot__test" / "predictions.jsonl"
    _wait_until(lambda: _lines(pred) >= 4, "4 papers written", proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = read_predictions(pred)
    assert len(first) == 4  # the fifth paper was held: it cannot have been written
    assert (pred.parent / ".lock").read_text().strip() == str(proc.pid)  # a killed run leaves its lock file ...
    _, free = _gated(tmp_path, None)
    # A crash in the middle of a write leaves a cut-off line: it must be dropped and its paper redone.
    with pred.open("a") as fh:
        fh.write('{"paper_id": "p-cut-off", "record": {"method_na')
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=GUARD_S, env=free
    )  # ... which the next run takes over
    assert done.returncode == 0, done.stderr
    lines = read_predictions(pred)
    ids = [line.paper_id for line in lines]
    assert len(ids) == 12 and len(set(ids)) == 12
    assert [l.paper_id for l in lines[: len(first)]] == [l.paper_id for l in first]  # finished papers not redone
    manifest = load_manifest(pred.parent)
    assert manifest.status == "complete" and manifest.papers_done == 12 and manifest.papers_total == 12
    assert not (pred.parent / ".lock").exists()
    # A rerun of a finished run does no work.
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=GUARD_S, env=free)
    assert again.returncode == 0 and len(read_predictions(pred)) == 12


def test_bad_replies_are_stored_as_failures_and_the_run_goes_on(tmp_path, corpus):
    replies = [
        '{"method_name": "X", "research_area": "reasoning", "contribution_types": ["method"]}',
        '{"method_name": "X", "tasks": [',
        ('{"method_name": "X", "tasks": ["a", "b', "length"),
        "I'm sorry, but I can't help with that.",
        '```json\n{"method_name": "Fenced", "research_area": "other"}\n```',
        '{"research_area": "astrology"}',
        "",
    ]
    backend = get_backend("fake/scripted", replies=replies)
    run_dir = tmp_path / "run"
    manifest = asyncio.run(run_extraction(corpus[:7], backend, Strategy("zero_shot"), _config(), run_dir))
    lines = {l.paper_id: l for l in read_predictions(run_dir / "predictions.jsonl")}
    got = [(lines[p.id].failure.value if lines[p.id].failure else None) for p in corpus[:7]]
    assert got == [None, "malformed_json", "truncated", "refusal", None, "schema_invalid", "empty_reply"]
    assert lines[corpus[4].id].record["method_name"] == "Fenced" and lines[corpus[4].id].repairs == ["fenced"]
    assert lines[corpus[1].id].raw_text == replies[1]
    assert manifest.failures_by_class == {
        "empty_reply": 1,
        "malformed_json": 1,
        "refusal": 1,
        "schema_invalid": 1,
        "truncated": 1,
    }
    assert manifest.papers_valid == 2 and manifest.status == "complete"


def test_other_config_in_same_folder_is_refused(tmp_path, corpus):
    run_dir = tmp_path / "run"
    asyncio.run(run_extraction(corpus[:1], get_backend("fake/a"), Strategy("zero_shot"), _config(), run_dir))
    with pytest.raises(RunError, match=r"another config \(differs in: params\)"):
        asyncio.run(
            run_extraction(
                corpus[:1], get_backend("fake/a"), Strategy("zero_shot"), _config(params={"temperature": 0.7}), run_dir
            )
        )


def test_corrupt_line_in_the_middle_names_file_and_line(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"paper_id": "a"}\nnot json\n{"paper_id": "b"}\n')
    with pytest.raises(RunError, match=rf"{path}:2: bad prediction line: not valid JSON \("):
        read_predictions(path)
    path.write_bytes(b'{"paper_id": "a"}\n{"paper_id": "\xff"}\n{"paper_id": "b"}\n')
    with pytest.raises(RunError, match=rf"{path}:2: bad prediction line: not UTF-8 text"):
        read_predictions(path)
    path.write_text('{"paper_id": "a"}\n{"paper_id": "b", "attempts": "many"}\n')
    with pytest.raises(RunError, match=rf"{path}:2: bad prediction line: field 'attempts'"):
        read_predictions(path)


def test_run_without_score_then_score_and_leaderboard_cli(tmp_path):
    runs = tmp_path / "runs"
    assert run_cli("run", "-b", "fake/empty", "--limit", "3", "--runs-dir", str(runs), "--no-score").returncode == 0
    scored = run_cli("score", "fake_empty__zero_shot__test", "--runs-dir", str(runs))
    assert scored.returncode == 0, scored.stderr
    scores = json.loads((runs / "fake_empty__zero_shot__test" / "scores.json").read_text())
    assert scores["papers"] == 3 and scores["valid_rate"] == 1.0 and scores["scorer_version"]
    # Against a gold file covering only some of the run's papers: says how many were scored.
    gold_lines = (Path(__file__).parent.parent / "gold" / "gold.jsonl").read_text().splitlines()
    ids = json.loads((runs / "fake_empty__zero_shot__test" / "manifest.json").read_text())["paper_ids"]
    subset = tmp_path / "subset.jsonl"
    subset.write_text("".join(l + "\n" for l in gold_lines if json.loads(l)["id"] == ids[0]))
    partial = run_cli("score", "fake_empty__zero_shot__test", "--runs-dir", str(runs), "--gold", str(subset))
    assert (
        partial.returncode == 0
        and f"warning: {subset} has gold for 1 of the run's 3 papers" in partial.stderr
        and ", papers 1" in partial.stdout
    )
    board = tmp_path / "board.md"
    out = run_cli("leaderboard", "--runs-dir", str(runs), "--out", str(board))
    assert out.returncode == 0, out.stderr
    assert "| – | fake_empty__zero_shot__test | fake/empty |" in board.read_text()  # 3 of 60 papers: partial, no rank


def test_a_broken_scores_file_or_missing_predictions_is_an_error_naming_the_file(tmp_path):
    runs = tmp_path / "runs"
    assert run_cli("run", "-b", "fake/a", "--limit", "2", "--runs-dir", str(runs)).returncode == 0
    broken = runs / "other" / "scores.json"
    broken.parent.mkdir()
    for content in (b'{"broken', b"{}", b"\xff\xfe"):
        broken.write_bytes(content)
        board = run_cli("leaderboard", "--runs-dir", str(runs), "--no-plots", "--out", str(tmp_path / "b.md"))
        assert (
            board.returncode == 2
            and f"{broken}: not a readable scores file" in board.stderr
            and "Traceback" not in board.stderr
        )
        assert "paperfields score other" in board.stderr
    # A run still finishes, is saved and scored: the board it prints beside it is the published one, not this folder's.
    ran = run_cli("run", "-b", "fake/b", "--limit", "2", "--runs-dir", str(runs))
    assert (
        ran.returncode == 0
        and (runs / "fake_b__zero_shot__test" / "scores.json").exists()
        and "Traceback" not in ran.stderr
    )
    # Scoring a run whose predictions are gone is an error, and its scores.json is left as it was.
    run_dir = runs / "fake_a__zero_shot__test"
    before = (run_dir / "scores.json").read_bytes()
    (run_dir / "predictions.jsonl").unlink()
    scored = run_cli("score", "fake_a__zero_shot__test", "--runs-dir", str(runs))
    assert scored.returncode == 2 and f"{run_dir / 'predictions.jsonl'}: no such file" in scored.stderr
    assert (run_dir / "scores.json").read_bytes() == before


def test_unknown_provider_lists_known_ones():
    proc = run_cli("run", "-b", "nosuch/model", "--limit", "1", "--no-score")
    assert proc.returncode == 2
    from paperfields.extract.backends import offered_providers

    assert (
        "unknown provider 'nosuch'" in proc.stderr
        and f"known providers: {', '.join(offered_providers())}\n" in proc.stderr
        and "fake" not in proc.stderr
    )  # fake/ is for tests: never offered


def test_anthropic_without_sdk_or_key_is_a_clear_error(monkeypatch):
    from paperfields.extract.backends import BackendError

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(BackendError, match=r"pip install -e '\.\[anthropic\]'|ANTHROPIC_API_KEY is not set"):
        get_backend("anthropic/claude-3-5-haiku-latest")


def test_complete_last_line_without_newline_is_closed_before_appending(tmp_path, corpus):
    run_dir = tmp_path / "run"
    asyncio.run(run_extraction(corpus[:2], get_backend("fake/a"), Strategy("zero_shot"), _config(), run_dir))
    pred = run_dir / "predictions.jsonl"
    pred.write_bytes(pred.read_bytes().rstrip(b"\n"))
    asyncio.run(run_extraction(corpus[:4], get_backend("fake/a"), Strategy("zero_shot"), _config(), run_dir))
    assert [l.paper_id for l in read_predictions(pred)] == [p.id for p in corpus[:4]]


def test_rerun_of_a_finished_run_leaves_its_manifest_untouched(tmp_path, corpus):
    run_dir = tmp_path / "run"
    asyncio.run(run_extraction(corpus[:2], get_backend("fake/a"), Strategy("zero_shot"), _config(), run_dir))
    before = (run_dir / "manifest.json").read_bytes()
    asyncio.run(run_extraction(corpus[:2], get_backend("fake/a"), Strategy("zero_shot"), _config(), run_dir))
    assert (run_dir / "manifest.json").read_bytes() == before


@pytest.mark.parametrize(
    "args, message",
    [
        (["--run-id", "../escape"], "must be a plain folder name"),
        (["--run-id=-x"], "must be a plain folder name"),
        (["--run-id", "a*b"], "must be a plain folder name"),
        (["--run-id", "two\nlines"], "must be a plain folder name"),
        (["-b", "rules/baseline", "--split", "dev"], "may only run on the test split"),
        (["--max-tokens", "0"], "Invalid value for '--max-tokens'"),
        (["--limit", "0"], "Invalid value for '--limit'"),
    ],
)
def test_bad_run_options_are_refused_before_any_work(tmp_path, args, message):
    proc = run_cli("run", "-b", "fake/empty", "--runs-dir", str(tmp_path / "runs"), *args)
    assert proc.returncode == 2 and message in proc.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_board_refuses_runs_of_different_splits(tmp_path):
    runs = tmp_path / "runs"
    for split in ("test", "dev"):
        assert (
            run_cli(
                "run", "-b", "fake/empty", "--split", split, "--limit", "2", "--runs-dir", str(runs), "-q"
            ).returncode
            == 0
        )
    proc = run_cli("leaderboard", "--runs-dir", str(runs), "--out", str(tmp_path / "b.md"))
    assert proc.returncode == 2 and "different splits" in proc.stderr


def test_transport_errors_are_asked_again_on_resume_and_the_later_line_counts(tmp_path, corpus):
    from paperfields.extract.backends.fake import FakeBackend

    class Flaky(FakeBackend):
        """Raises (a transport failure) for the papers in ``down`` until ``down`` is emptied."""

        def __init__(self, down: set[str]) -> None:
            super().__init__("scripted")
            self.down = down

        async def generate(self, request):
            if request.paper_text in self.down:
                raise ConnectionError("server went away")
            return await super().generate(request)

    papers = corpus[:4]
    backend = Flaky({papers[1].text, papers[3].text})
    run_dir = tmp_path / "run"
    first = asyncio.run(run_extraction(papers, backend, Strategy("zero_shot"), _config(), run_dir))
    assert (
        first.failures_by_class == {"transport_error": 2} and first.papers_valid == 2 and first.status == "incomplete"
    )
    assert first.papers_done == 2  # a transport error is not done: the paper is asked again
    backend.down.clear()
    backend.requests.clear()
    started: list[int] = []  # what the progress bar starts from: papers with an answer, not the transport errors
    second = asyncio.run(
        run_extraction(papers, backend, Strategy("zero_shot"), _config(), run_dir, on_start=started.append)
    )
    assert started == [2]
    assert sorted(r.paper_text for r in backend.requests) == sorted(
        [papers[1].text, papers[3].text]
    )  # only the failed two
    assert second.failures_by_class == {} and second.papers_valid == 4 and second.papers_done == 4
    raw_lines = (run_dir / "predictions.jsonl").read_text().splitlines()
    assert len(raw_lines) == 6  # the failed lines stay in the file: nothing is lost
    latest = read_predictions(run_dir / "predictions.jsonl")
    assert [l.paper_id for l in latest] == [p.id for p in papers] and all(l.failure is None for l in latest)
    backend.requests.clear()
    third = asyncio.run(
        run_extraction(papers, backend, Strategy("zero_shot"), _config(), run_dir, on_start=started.append)
    )
    assert backend.requests == [] and third.papers_valid == 4 and started == [2, 4]


def test_run_on_a_corpus_of_ones_own(tmp_path):
    seeds = tmp_path / "mine.txt"
    seeds.write_text(
        "My abstracts\n\nWe propose FooNet for bar, reaching 91.2% accuracy on "
        "ImageNet.\n\nWe introduce BazBench, a benchmark.\n"
    )
    corpus = tmp_path / "big.jsonl"
    assert run_cli("corpus", "build", str(seeds), "--out", str(corpus)).returncode == 0
    runs = tmp_path / "runs"
    wrong_split = run_cli("run", "-b", "fake/x", "--corpus", str(corpus), "--runs-dir", str(runs))
    assert (
        wrong_split.returncode == 2
        and "is in the 'test' split" in wrong_split.stderr
        and "--split all" in wrong_split.stderr
    )
    ok = run_cli(
        "run", "-b", "fake/x", "--corpus", str(corpus), "--split", "all", "--no-score", "--runs-dir", str(runs)
    )
    assert ok.returncode == 0, ok.stderr
    [x_dir] = runs.glob(
        "fake_x__zero_shot__all__big-*"
    )  # the default run id carries a tag of the corpus: its stem and 6 hex
    manifest = load_manifest(x_dir)
    assert (
        re.fullmatch(r"big\.jsonl papers:[0-9a-f]{12}", manifest.config.corpus)
        and manifest.papers_done == 2
        and manifest.status == "complete"
    )
    assert x_dir.name == "fake_x__zero_shot__all__big-" + manifest.config.corpus[-12:-6]
    # Another file of the same name with other abstracts is another corpus: it gets a run folder of its own ...
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mine.txt").write_text("Other abstracts\n\nWe present QuxNet, a model.\n")
    assert (
        run_cli("corpus", "build", str(elsewhere / "mine.txt"), "--out", str(elsewhere / "big.jsonl")).returncode == 0
    )
    other = run_cli(
        "run",
        "-b",
        "fake/x",
        "--corpus",
        str(elsewhere / "big.jsonl"),
        "--split",
        "all",
        "--no-score",
        "--runs-dir",
        str(runs),
    )
    assert other.returncode == 0, other.stderr
    assert len(list(runs.glob("fake_x__zero_shot__all__big-*"))) == 2
    # ... and may not continue this run under its id.
    taken = run_cli(
        "run",
        "-b",
        "fake/x",
        "--corpus",
        str(elsewhere / "big.jsonl"),
        "--split",
        "all",
        "--no-score",
        "--runs-dir",
        str(runs),
        "--run-id",
        x_dir.name,
    )
    assert taken.returncode == 2 and "differs in: corpus" in taken.stderr
    # A JSONL corpus of the same name that keeps the ids but changes the texts is another corpus too.
    same_ids = [json.loads(l) for l in corpus.read_text().splitlines()]
    (elsewhere / "big.jsonl").write_text(
        "".join(json.dumps(p | {"text": p["text"] + " Revised."}) + "\n" for p in same_ids)
    )
    reworded = run_cli(
        "run",
        "-b",
        "fake/x",
        "--corpus",
        str(elsewhere / "big.jsonl"),
        "--split",
        "all",
        "--no-score",
        "--runs-dir",
        str(runs),
    )
    assert reworded.returncode == 0 and len(list(runs.glob("fake_x__zero_shot__all__big-*"))) == 3
    assert len(read_predictions(x_dir / "predictions.jsonl")) == 2
    # The same corpus run first with --limit 1, then without: one run, continued.
    limited = ("run", "-b", "fake/y", "--corpus", str(corpus), "--split", "all", "--no-score", "--runs-dir", str(runs))
    assert run_cli(*limited, "--limit", "1").returncode == 0
    assert run_cli(*limited).returncode == 0
    assert load_manifest(runs / x_dir.name.replace("fake_x", "fake_y")).papers_done == 2
    scored = run_cli("score", x_dir.name, "--runs-dir", str(runs))
    assert scored.returncode != 0 and "nothing to score" in scored.stderr and "Traceback" not in scored.stderr
    # The rules baseline learned its gazetteer from the dev split: it runs on a corpus without dev papers ...
    rules = run_cli(
        "run", "-b", "rules/baseline", "--corpus", str(corpus), "--split", "all", "--no-score", "--runs-dir", str(runs)
    )
    assert rules.returncode == 0, rules.stderr
    first = read_predictions(runs / x_dir.name.replace("fake_x", "rules_baseline") / "predictions.jsonl")[0]
    assert first.record["method_name"] == "FooNet" and [(r["metric"], r["value"]) for r in first.record["results"]] == [
        ("accuracy", 91.2)
    ]
    # ... and refuses one holding a dev paper.
    gold_dir = Path(__file__).parent.parent / "gold"
    dev_id = next(
        json.loads(l)["id"]
        for l in (gold_dir / "gold.jsonl").read_text().splitlines()
        if json.loads(l)["split"] == "dev"
    )
    dev_line = next(l for l in (gold_dir / "corpus.jsonl").read_text().splitlines() if json.loads(l)["id"] == dev_id)
    with_dev = tmp_path / "with_dev.jsonl"
    with_dev.write_text(corpus.read_text() + dev_line + "\n")
    refused = run_cli(
        "run",
        "-b",
        "rules/baseline",
        "--corpus",
        str(with_dev),
        "--split",
        "all",
        "--no-score",
        "--runs-dir",
        str(runs),
    )
    assert (
        refused.returncode == 2
        and "without dev papers" in refused.stderr
        and f"which is the dev abstract {dev_id}" in refused.stderr
    )
    # The same dev abstract under an id of one's own, reflowed with extra spaces: still refused, by its text.
    disguised = json.loads(dev_line) | {"id": "mine-1"}
    disguised["text"] = (
        "  " + disguised["text"].replace(" ", "  ", 3).replace(" ", "\n", 1).replace("-", "-\n", 1) + " "
    )
    (tmp_path / "disguised.jsonl").write_text(corpus.read_text() + json.dumps(disguised) + "\n")
    hidden = run_cli(
        "run",
        "-b",
        "rules/baseline",
        "--corpus",
        str(tmp_path / "disguised.jsonl"),
        "--split",
        "all",
        "--no-score",
        "--runs-dir",
        str(runs),
    )
    assert (
        hidden.returncode == 2
        and "has mine-1 (" in hidden.stderr
        and f"which is the dev abstract {dev_id}" in hidden.stderr
    )


def test_readers_warn_about_a_cut_off_last_line(tmp_path, corpus):
    runs = tmp_path / "runs"
    run_dir = pf.run(backend="fake/a", limit=2, runs_dir=runs, run_id="cut", cache=False, score=False).run_dir
    with (run_dir / "predictions.jsonl").open("a") as fh:
        fh.write('{"paper_id": "' + corpus[2].id + '", "rec')
    proc = run_cli("score", "cut", "--runs-dir", str(runs))
    assert proc.returncode == 0, proc.stderr
    assert f"warning: {run_dir / 'predictions.jsonl'}:3: last line is cut off" in proc.stderr
    with pytest.warns(RuntimeWarning, match="last line is cut off"):
        assert len(read_predictions(run_dir / "predictions.jsonl")) == 2


@pytest.mark.parametrize(
    "change, field",
    [
        ({"datasets": "SWE-Bench Lite"}, "record.datasets"),
        ({"research_area": "astrology"}, "record.research_area"),
        ({"method_name": 5}, "record.method_name"),
        ({"results": [{"metric": "accuracy", "value": "lots"}]}, "record.results.0.value"),
    ],
)
def test_a_hand_written_record_that_is_not_a_paper_record_is_an_error_naming_line_and_field(tmp_path, change, field):
    run_dir = pf.run(backend="fake/a", limit=3, runs_dir=tmp_path, run_id="hand", cache=False, score=False).run_dir
    pred = run_dir / "predictions.jsonl"
    lines = pred.read_text().splitlines()
    second = json.loads(lines[1])
    second["record"] = {"method_name": "X", **change}
    lines[1] = json.dumps(second)
    pred.write_text("\n".join(lines) + "\n")
    with pytest.raises(RunError, match=rf"{pred}:2: bad prediction line: .*field '{field}'"):
        read_predictions(pred)
    proc = run_cli("score", "hand", "--runs-dir", str(tmp_path))
    assert proc.returncode != 0 and f"{pred}:2" in proc.stderr and "Traceback" not in proc.stderr


def test_a_hand_written_number_as_text_is_read_as_the_number(tmp_path):
    run_dir = pf.run(backend="fake/a", limit=1, runs_dir=tmp_path, run_id="hand", cache=False, score=False).run_dir
    pred = run_dir / "predictions.jsonl"
    line = json.loads(pred.read_text())
    line["record"] = {"results": [{"metric": "accuracy", "value": "12.5", "unit": "percent", "kind": "absolute"}]}
    pred.write_text(json.dumps(line) + "\n")
    assert read_predictions(pred)[0].record["results"][0]["value"] == 12.5


def test_a_folder_with_no_prediction_yet_takes_a_new_config(tmp_path, corpus):
    run_dir = tmp_path / "run"
    asyncio.run(run_extraction([], get_backend("fake/a"), Strategy("zero_shot"), _config(), run_dir))
    assert (run_dir / "manifest.json").exists() and not (run_dir / "predictions.jsonl").read_text()
    manifest = asyncio.run(
        run_extraction(
            corpus[:1], get_backend("fake/a"), Strategy("zero_shot"), _config(params={"temperature": 0.7}), run_dir
        )
    )
    assert manifest.config.params.temperature == 0.7 and manifest.papers_done == 1


def test_an_interrupted_run_leaves_its_totals_in_the_manifest(tmp_path):
    runs = tmp_path / "runs"
    cmd, env = _gated(
        tmp_path, 3, "run", "--backend", "gated/x", "--limit", "20", "--runs-dir", str(runs), "--no-score"
    )
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    pred = runs / "gated_x__zero_shot__test" / "predictions.jsonl"
    _wait_until(lambda: _lines(pred) >= 3, "3 papers written", proc)  # the fourth is held until the signal
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=GUARD_S)
    assert proc.returncode == 130, err
    assert "interrupted; finished papers are saved" in err
    manifest = load_manifest(runs / "gated_x__zero_shot__test")
    assert manifest.status == "incomplete" and manifest.papers_done == len(read_predictions(pred)) == 3
    assert not (pred.parent / ".lock").exists()


def test_a_template_error_stops_the_run_before_any_folder_exists(tmp_path):
    import shutil

    root = Path(__file__).resolve().parent.parent
    for folder in ("gold", "prompts"):
        shutil.copytree(root / folder, tmp_path / folder)
    (tmp_path / "prompts" / "typo.toml").write_text(
        'name = "typo"\nversion = "1"\nsystem = "x"\nuser = "{{ paper.txet }}"\n'
    )
    runs = tmp_path / "runs"
    proc = run_cli(
        "run",
        "-b",
        "fake/x",
        "-s",
        "typo",
        "--runs-dir",
        str(runs),
        env=dict(os.environ, PAPERFIELDS_ROOT=str(tmp_path)),
    )
    assert proc.returncode == 2 and "typo.toml: template uses an unknown variable" in proc.stderr
    assert not runs.exists()


def test_the_board_printed_after_a_run_holds_only_runs_of_its_split(tmp_path):
    runs = tmp_path / "runs"
    wide = os.environ | {"COLUMNS": "250"}  # so rich does not cut run ids short
    test_run = run_cli("run", "-b", "fake/a", "--limit", "1", "--runs-dir", str(runs), env=wide)
    assert (
        test_run.returncode == 0 and "fake/a" in test_run.stdout and "rules/empty" in test_run.stdout
    )  # beside the published test board
    dev_run = run_cli("run", "-b", "fake/a", "--split", "dev", "--limit", "1", "--runs-dir", str(runs), env=wide)
    assert dev_run.returncode == 0, dev_run.stderr
    assert (
        "dev split" in dev_run.stdout and "fake/a" in dev_run.stdout and "rules/empty" not in dev_run.stdout
    )  # no test-split run


def test_a_backend_crash_echoing_a_key_is_stored_masked(tmp_path, corpus):
    from paperfields.extract.backends.fake import FakeBackend

    class Crashing(FakeBackend):
        async def generate(self, request):
            raise RuntimeError("auth failed for key sk-planted-0123456789abc")

    manifest = asyncio.run(
        run_extraction(corpus[:1], Crashing("scripted"), Strategy("zero_shot"), _config(), tmp_path / "run")
    )
    assert manifest.failures_by_class == {"transport_error": 1}
    text = (tmp_path / "run" / "predictions.jsonl").read_text()
    assert "sk-planted" not in text and "RuntimeError: auth failed for key sk-***" in text


class _Refusing:
    """A backend whose server refuses some requests outright: ``refuse`` maps a paper's text to the failure class."""

    def __init__(self, refuse: dict[str, str]) -> None:
        from paperfields.extract.backends.fake import FakeBackend

        self.name = "fake/refusing"
        self.refuse = refuse
        self.inner = FakeBackend("refusing")
        self.asked: list[str] = []

    async def generate(self, request):
        from paperfields.core.runlog import FailureClass, Generation

        self.asked.append(request.paper_text)
        if request.paper_text in self.refuse:
            return Generation(
                failure=FailureClass(self.refuse[request.paper_text]), error="refused before the model saw it"
            )
        return await self.inner.generate(request)


def test_requests_that_can_never_succeed_are_final_for_the_run_and_never_cached(tmp_path, corpus):
    from paperfields.extract.cache import ResponseCache

    papers = corpus[:3]
    backend = _Refusing({papers[0].text: "request_rejected", papers[1].text: "context_overflow"})
    cache = ResponseCache(tmp_path / "cache.sqlite")
    run_dir = tmp_path / "run"
    first = asyncio.run(run_extraction(papers, backend, Strategy("zero_shot"), _config(), run_dir, cache=cache))
    assert first.failures_by_class == {"context_overflow": 1, "request_rejected": 1}
    assert first.papers_done == 3 and first.papers_valid == 1 and first.status == "complete"
    assert len(cache) == 1  # only the model's answer: a refused request is not an answer
    # A rerun asks nothing again: the same request would be refused again.
    backend.asked.clear()
    started: list[int] = []
    again = asyncio.run(
        run_extraction(papers, backend, Strategy("zero_shot"), _config(), run_dir, cache=cache, on_start=started.append)
    )
    assert backend.asked == [] and started == [3] and again.status == "complete"
    assert len((run_dir / "predictions.jsonl").read_text().splitlines()) == 3
    # Another folder with the same cache: the answer comes from the cache, the refused requests are sent again.
    other = asyncio.run(
        run_extraction(papers, backend, Strategy("zero_shot"), _config(), tmp_path / "other", cache=cache)
    )
    assert sorted(backend.asked) == sorted([papers[0].text, papers[1].text]) and other.cache_hits == 1


def test_tokens_served_from_the_cache_are_kept_apart_from_the_model_tokens_and_cost_nothing(tmp_path, corpus):
    from paperfields.extract.backends.prices import dollars, price_for
    from paperfields.extract.cache import ResponseCache

    priced = _config(backend="openai/gpt-4o-mini")  # the fake backend answers; the config's backend sets the price
    cache = ResponseCache(tmp_path / "cache.sqlite")
    fresh = asyncio.run(
        run_extraction(corpus[:2], get_backend("fake/a"), Strategy("zero_shot"), priced, tmp_path / "one", cache=cache)
    )
    lines = read_predictions(tmp_path / "one" / "predictions.jsonl")
    spent = lines[0].usage + lines[1].usage
    assert spent.input_tokens > 0 and fresh.usage == spent and fresh.cached_usage.input_tokens == 0
    # each line's dollars are rounded to 6 places before they are summed: up to 0.5e-6 apart per line
    assert fresh.dollars_total == pytest.approx(
        dollars(spent, price_for("openai/gpt-4o-mini")), abs=len(lines) * 0.5e-6 + 1e-9
    )
    assert fresh.dollars_total > 0
    # The same papers and one more in another folder: two answers from the cache, one from the model.
    mixed = asyncio.run(
        run_extraction(corpus[:3], get_backend("fake/a"), Strategy("zero_shot"), priced, tmp_path / "two", cache=cache)
    )
    two = read_predictions(tmp_path / "two" / "predictions.jsonl")
    assert [l.cached for l in two] == [True, True, False] and mixed.cache_hits == 2 and mixed.model_requests == 1
    assert mixed.cached_usage == spent and mixed.usage == two[2].usage
    assert [l.dollars for l in two[:2]] == [0.0, 0.0] and two[2].dollars > 0
    assert mixed.dollars_total == pytest.approx(two[2].dollars, abs=1e-6)


class _Held:
    """A backend that answers once ``gate`` is set, and says when a request is waiting on it."""

    def __init__(self) -> None:
        from paperfields.extract.backends.fake import FakeBackend

        self.name = "fake/held"
        self.inner = FakeBackend("held")
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    async def generate(self, request):
        self.waiting.set()
        await self.gate.wait()
        return await self.inner.generate(request)


def test_a_second_run_of_a_folder_in_use_is_refused_naming_the_folder_and_the_holder(tmp_path, corpus):
    run_dir = tmp_path / "run"

    async def two_at_once() -> None:
        backend = _Held()
        first = asyncio.ensure_future(run_extraction(corpus[:2], backend, Strategy("zero_shot"), _config(), run_dir))
        await backend.waiting.wait()  # the first run holds the folder and waits on its first paper
        assert (run_dir / ".lock").read_text().strip() == str(os.getpid())
        with pytest.raises(
            RunError, match=rf"^{re.escape(str(run_dir))}: another run \(PID {os.getpid()}\) is using this run folder"
        ):
            await run_extraction(corpus[:2], get_backend("fake/a"), Strategy("zero_shot"), _config(), run_dir)
        backend.gate.set()
        manifest = await first
        assert manifest.status == "complete" and manifest.papers_done == 2

    asyncio.run(two_at_once())
    assert not (run_dir / ".lock").exists()
    assert len((run_dir / "predictions.jsonl").read_text().splitlines()) == 2
    # Released: the next run takes the folder (a finished run: nothing to do, and the lock is let go again).
    asyncio.run(run_extraction(corpus[:2], get_backend("fake/a"), Strategy("zero_shot"), _config(), run_dir))
    assert not (run_dir / ".lock").exists()


def test_two_identical_cli_runs_at_once_the_second_fails_fast_and_each_paper_is_asked_once(tmp_path):
    runs = tmp_path / "runs"
    cmd, env = _gated(tmp_path, 2, "run", "--backend", "gated/x", "--limit", "5", "--runs-dir", str(runs), "--no-score")
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    run_dir = runs / "gated_x__zero_shot__test"
    _wait_until(lambda: _lines(run_dir / "predictions.jsonl") >= 2, "2 papers written", first)  # the third is held
    second = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=GUARD_S)
    assert second.returncode == 2, second.stderr
    assert (
        f"{run_dir}: another run (PID {first.pid}) is using this run folder" in second.stderr
        and "Traceback" not in second.stderr
    )
    (tmp_path / "gate").touch()
    _, err = first.communicate(timeout=GUARD_S)
    assert first.returncode == 0, err
    ids = [json.loads(line)["paper_id"] for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    assert len(ids) == 5 == len(set(ids)) and load_manifest(run_dir).papers_done == 5


def test_a_backend_error_during_a_run_stops_it_instead_of_failing_each_paper(tmp_path):
    from paperfields.core.corpus import load_corpus
    from paperfields.core.runlog import RunConfig
    from paperfields.extract.backends.base import BackendError
    from paperfields.extract.backends.fake import FakeBackend
    from paperfields.extract.runner import run_extraction
    from paperfields.extract.strategies import Strategy
    from tests.conftest import ROOT

    class Unusable(FakeBackend):
        async def generate(self, request):
            raise BackendError("the model cannot be loaded")

    strategy = Strategy("zero_shot")
    config = RunConfig(
        backend="fake/x",
        strategy="zero_shot",
        prompt_version=strategy.template.version,
        prompt_sha256=strategy.sha256,
        split="test",
    )
    with pytest.raises(BackendError, match="cannot be loaded"):
        asyncio.run(
            run_extraction(
                load_corpus(ROOT / "gold" / "corpus.jsonl")[:3], Unusable("x"), strategy, config, tmp_path / "run"
            )
        )
    lines = tmp_path / "run" / "predictions.jsonl"
    assert not lines.exists() or lines.read_text() == ""  # no paper recorded as a transport error to be asked again
