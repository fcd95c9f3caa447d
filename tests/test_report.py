"""Reports and plots: the HTML escapes every abstract and model text (checked in real headless
Chromium), the board regenerates byte for byte, mixed versions are refused, plots are written."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from paperfields.core.corpus import Paper
from paperfields.core.gold import GoldRecord
from paperfields.core.runlog import Manifest, PredictionLine, RunConfig
from paperfields.report import highlighted_html, paper_spans, render_report
from paperfields.scoring.board import MixedVersionsError, leaderboard_markdown
from paperfields.scoring.runs import collect_scores
from paperfields.scoring.score import score_predictions
from tests.cli_in_process import run_cli
from tests.conftest import ROOT

SCRIPT = "<script>document.body.setAttribute('data-pwned','script')</script>"
IMG = "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">"


def _malicious_report() -> str:
    text = f"We propose EvilNet {SCRIPT} reaching 41.5% accuracy on GSM8K {IMG}."
    paper = Paper(id="pevil", text=text, source="evil.txt", position=1, line=1)
    gold = GoldRecord(id="pevil", split="test", record={"method_name": "EvilNet", "datasets": ["GSM8K"]})
    line = PredictionLine(
        paper_id="pevil",
        record={"method_name": "EvilNet " + IMG, "datasets": [SCRIPT], "research_area": "other"},
        raw_text="raw " + SCRIPT,
    )
    scores, detail = score_predictions(
        {"pevil": line.record},
        [gold],
        failures={},
        run_id="evil-run",
        split="test",
        gold_version="t",
        abstracts={"pevil": text},
    )
    manifest = Manifest(
        run_id="evil-run",
        started_at="now",
        papers_total=1,
        paper_ids=["pevil"],
        config=RunConfig(
            backend="fake/evil", strategy="zero_shot", prompt_version="1", prompt_sha256="0", split="test"
        ),
    )
    return render_report(manifest, scores, [line], [gold], [paper], {r["paper_id"]: r for r in detail})


def test_highlighted_abstract_escapes_every_segment():
    text = "A <b>bold</b> claim about GSM8K & more"
    gold = GoldRecord(id="p", split="test", record={"datasets": ["GSM8K"]})
    line = PredictionLine(paper_id="p", record={"datasets": ["<b>bold</b>"]})
    html = str(highlighted_html(text, paper_spans(text, gold, line)))
    assert "<b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html
    assert '<mark class="both">' not in html and '<mark class="gold">GSM8K</mark>' in html and "&amp; more" in html


def test_report_html_escapes_injected_markup_as_text():
    html = _malicious_report()
    assert SCRIPT not in html and IMG not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=" in html
    assert "http://" not in html and "https://" not in html  # self-contained: no network, no CDN


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_report_in_headless_chromium_runs_no_injected_script(tmp_path):
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs Debian's chromium for this test")
        pytest.skip("chromium not installed (apt-get install chromium)")
    page = tmp_path / "report.html"
    page.write_text(_malicious_report(), encoding="utf-8")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    ).stdout
    assert "PaperFields report: evil-run" in dom  # the page rendered
    assert "EvilNet" in dom and "&lt;script&gt;document.body.setAttribute" in dom  # the injected text shows as text
    body_tag = dom[dom.index("<body") : dom.index(">", dom.index("<body")) + 1]
    assert "data-pwned" not in body_tag  # neither the script nor the onerror handler ran
    shot = tmp_path / "report.png"
    subprocess.run(
        [browser, *flags, "--window-size=1200,1600", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
    )
    assert shot.is_file() and shot.stat().st_size > 10_000


def _committed_runs(tmp_path: Path) -> Path:
    """A copy of the runs git tracks (a user's own uncommitted runs in results/runs are left out)."""
    tracked = subprocess.run(
        ["git", "ls-files", "results/runs"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked, "no committed runs"
    for name in tracked:
        target = tmp_path / "runs" / Path(name).relative_to("results/runs")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, target)
    return tmp_path / "runs"


def test_committed_board_regenerates_byte_for_byte(tmp_path):
    board = ROOT / "results" / "leaderboard.md"
    scores = collect_scores(_committed_runs(tmp_path))
    assert scores, "no committed scored runs"
    assert leaderboard_markdown(scores) == board.read_text(encoding="utf-8")


def test_mixed_versions_are_refused_with_the_runs_to_rescore(tmp_path):
    scores = collect_scores(_committed_runs(tmp_path))
    old = scores[-1].model_copy(update={"scorer_version": "0.9", "run_id": "old-run"})
    with pytest.raises(MixedVersionsError, match=r"re-score these with `paperfields score`: old-run"):
        leaderboard_markdown(scores + [old])


def test_leaderboard_cli_writes_plots(tmp_path):
    runs = _committed_runs(tmp_path)
    proc = run_cli("leaderboard", "--runs-dir", str(runs), "--out", str(tmp_path / "board.md"), "--no-html")
    assert proc.returncode == 0, proc.stderr
    confident = (
        "local_qwen2.5-coder-0.5b__confidence__test"  # a run with per-field confidences: its two diagrams side by side
    )
    for name in (
        "leaderboard_overall.png",
        "leaderboard_fields.png",
        "leaderboard_seconds.png",
        f"reliability_{confident}.png",
        f"risk_coverage_{confident}.png",
    ):
        png = tmp_path / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5_000
    assert not list(tmp_path.glob("risk_coverage_rules_*.png"))  # no confidences, no curve
    assert (tmp_path / "board.md").read_text() == (ROOT / "results" / "leaderboard.md").read_text()


def test_show_with_a_bad_prediction_line_is_a_clean_error(tmp_path):
    import json as _json

    run_dir = _committed_runs(tmp_path) / "rules_baseline__zero_shot__test"
    pred = run_dir / "predictions.jsonl"
    lines = pred.read_text().splitlines()
    first_id = _json.loads(lines[0])["paper_id"]
    bad = _json.loads(lines[2])
    bad["record"] = {"research_area": "astrology"}
    lines[2] = _json.dumps(bad)
    pred.write_text("\n".join(lines) + "\n")
    proc = run_cli("show", first_id, "--run", str(run_dir))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"error: {pred}:3: bad prediction line: field 'record")
    assert "record.research_area" in proc.stderr
    # score and report say the same.
    for cmd in (["score", str(run_dir)], ["report", str(run_dir), "--out", str(tmp_path / "r.html")]):
        other = run_cli(*cmd)
        assert other.returncode == 2 and other.stderr.startswith(f"error: {pred}:3: bad prediction line: field 'record")


def test_leaderboard_out_creates_missing_folders(tmp_path):
    runs = _committed_runs(tmp_path)
    target = tmp_path / "new" / "dir" / "lb.md"
    proc = run_cli("leaderboard", "--runs-dir", str(runs), "--out", str(target), "--no-plots", "--no-html", "-q")
    assert proc.returncode == 0, proc.stderr
    assert target.read_text() == (ROOT / "results" / "leaderboard.md").read_text()
    assert target.with_suffix(".csv").read_text() == (ROOT / "results" / "leaderboard.csv").read_text()


def test_compare_lists_only_papers_that_differ(tmp_path):
    import json as _json

    from paperfields.scoring.compare import compare

    runs = _committed_runs(tmp_path)
    a = runs / "rules_baseline__zero_shot__test"
    b = shutil.copytree(a, runs / "b")  # the same run, but paper 3's tasks all wrong and paper 5's overall moved
    rows = [_json.loads(l) for l in (b / "paper_scores.jsonl").read_text().splitlines()]
    assert rows[2]["fields"]["tasks"][0] > 0  # some task found in A
    rows[2]["fields"]["tasks"], rows[2]["per_paper_f1"] = [0, 3, 3], rows[2]["per_paper_f1"] - 0.25
    rows[4]["per_paper_f1"] = rows[4]["per_paper_f1"] + 0.01
    (b / "paper_scores.jsonl").write_text("".join(_json.dumps(r) + "\n" for r in rows))
    papers = compare(a, b, top=5).papers
    assert [(p["paper_id"], p["fields"]) for p in papers] == [
        (rows[2]["paper_id"], ["tasks"]),
        (rows[4]["paper_id"], []),
    ]
    assert [p["paper_id"] for p in compare(a, b, top=1).papers] == [rows[2]["paper_id"]]

    def cli(*args):
        return run_cli("compare", *args)

    text = cli(str(a), str(b)).stdout
    # the listing is a table whose heading says what each column is
    assert "Papers where B and A differ most, largest per-paper F1 difference first (at most --top 5)" in text
    assert re.search(
        r"┃ paper +┃ per-paper F1 A ┃ per-paper F1 B ┃ +B - A ┃ headline fields whose item counts differ +┃", text
    )
    for p, fields in zip(papers, ["tasks", "none: per-paper F1 only"]):
        cells = [p["paper_id"], f"{p['a']:.3f}", f"{p['b']:.3f}", f"{p['b'] - p['a']:+.3f}", fields]
        assert re.search(r" +│ +".join(map(re.escape, cells)) + " +│", text), text
    assert text.count("│ p") == 2
    # A run compared with itself: no paper is listed.
    same = cli(str(a), str(a))
    assert (
        same.returncode == 0
        and "Papers where" not in same.stdout
        and "no paper differs between the two runs" in same.stdout
    )
    assert _json.loads(cli(str(a), str(a), "--json").stdout)["papers"] == []


@pytest.mark.parametrize("top", ["-3", "0"])
def test_compare_top_must_be_at_least_1(top):
    proc = run_cli(
        "compare", "rules_baseline__zero_shot__test", "local_qwen2.5-coder-0.5b__zero_shot__test", "--top", top
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert "Invalid value for '--top': Input should be greater than or equal to 1" in proc.stderr


def test_compare_paired_bootstrap_on_committed_runs():
    import json as _json

    a, b = "rules_baseline__zero_shot__test", "local_qwen2.5-coder-0.5b__zero_shot__test"
    proc = run_cli("compare", a, b, "--json")
    assert proc.returncode == 0, proc.stderr
    result = _json.loads(proc.stdout)
    overall = next(r for r in result["fields"] if r["field"] == "headline")
    assert result["fields"][0] is overall  # the headline comes first
    sa = _json.loads((ROOT / "results" / "runs" / a / "scores.json").read_text())["headline"]
    sb = _json.loads((ROOT / "results" / "runs" / b / "scores.json").read_text())["headline"]
    assert overall["a"] == pytest.approx(sa, abs=1e-4) and overall["b"] == pytest.approx(sb, abs=1e-4)
    assert overall["diff"] == pytest.approx(sb - sa, abs=1e-3)
    assert overall["ci95"][0] <= overall["diff"] <= overall["ci95"][1] and overall["p_value"] < 0.05
    same = run_cli("compare", a, a, "--json")
    assert all(
        (r["diff"] == 0 and r["p_value"] == 1.0) or r["diff"] is None for r in _json.loads(same.stdout)["fields"]
    )


def test_partial_and_unfinished_runs_are_marked_and_listed_after_full_runs(tmp_path):
    from paperfields.scoring.board import board_rows

    runs = _committed_runs(tmp_path)
    full = json.loads((runs / "local_qwen2.5-coder-0.5b__zero_shot__test" / "scores.json").read_text())
    for name, papers, done, value in (("tiny", 6, 6, 0.99), ("half", 60, 30, 0.95)):
        (runs / name).mkdir()
        (runs / name / "scores.json").write_text(
            json.dumps(
                dict(full, run_id=name, papers=papers, papers_done=done, headline=value, predictions_sha256=None)
            )
        )
    scores = collect_scores(runs)
    order = [s.run_id for s in scores]
    complete = [s.run_id for s in scores if s.papers_done == s.papers == 60]
    # better headline than every complete run, but not comparable with them: listed after all of them
    assert min(order.index("tiny"), order.index("half")) > max(order.index(r) for r in complete)
    assert order.index("tiny") < order.index("half")  # among the rest, best headline first
    best = max(
        (s for s in scores if s.run_id in complete and not s.reference),  # a submission may be a reference too
        key=lambda s: s.headline,
    )
    assert (
        order[0] == best.run_id
    )  # the best contender, whichever the published runs make it; references follow the contenders
    rows = {r["run_id"]: r for r in board_rows(scores)}
    assert (
        rows["tiny"]["rank"] is None and rows["tiny"]["headline_ci95"] is None and rows["tiny"]["section"] == "partial"
    )
    assert rows["half"]["rank"] is None and rows["half"]["headline_ci95"] is None
    assert rows["tiny"]["papers"] == 6 and rows["tiny"]["papers_total"] == 60
    assert (
        rows["rules_empty__zero_shot__test"]["rank"] is None
        and rows["rules_empty__zero_shot__test"]["reference"] is True
    )
    ranks = [r["rank"] for r in board_rows(scores) if r["rank"] is not None]
    assert len(ranks) >= 2 and ranks == list(range(1, len(ranks) + 1))  # the complete contenders, ranked 1..n
    board = leaderboard_markdown(scores)
    assert "| 6 of 60 (partial) |" in board and "| 30/60 (unfinished) |" in board
    assert board.index("## References") < board.index("## Partial and unfinished runs")
    assert "| – | tiny |" in board  # no rank
    assert "0.990 |" in board and "0.990 [" not in board  # no CI for a partial run


def test_scoring_against_another_gold_file_prints_and_leaves_the_runs_scores_alone(tmp_path):
    runs = _committed_runs(tmp_path)
    run_dir = runs / "rules_baseline__zero_shot__test"
    before = (run_dir / "scores.json").read_bytes()
    other = tmp_path / "elsewhere" / "gold.jsonl"  # no corpus.jsonl beside it: the benchmark corpus is used
    other.parent.mkdir()
    other.write_text("".join((ROOT / "gold" / "gold.jsonl").read_text().splitlines(keepends=True)[:70]))
    proc = run_cli("score", str(run_dir), "--gold", str(other), "--json")
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed["papers"] == sum(1 for line in other.read_text().splitlines() if json.loads(line)["split"] == "test")
    assert (run_dir / "scores.json").read_bytes() == before


def test_compare_and_report_refuse_stale_scores_and_the_board_warns(tmp_path):
    from paperfields.core.runlog import RunError
    from paperfields.report import write_report
    from paperfields.scoring.compare import compare
    from paperfields.scoring.runs import collect_scores

    runs = _committed_runs(tmp_path)
    a, b = runs / "rules_baseline__zero_shot__test", runs / "local_qwen2.5-coder-0.5b__zero_shot__test"
    assert compare(a, b).fields[0].field == "headline"  # committed scores match their predictions
    # Predictions edited after scoring: the stored paper scores no longer describe them.
    lines = (b / "predictions.jsonl").read_text().splitlines()
    (b / "predictions.jsonl").write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(
        RunError, match="scores are stale: .*predictions.jsonl changed since the run was scored; re-score"
    ):
        compare(a, b)
    with pytest.raises(RunError, match="scores are stale"):
        write_report(b, ROOT / "gold" / "gold.jsonl", ROOT / "gold" / "corpus.jsonl", tmp_path / "r.html")
    with pytest.warns(UserWarning, match=f"the scores of {b.name} are stale"):
        collect_scores(runs)
    board = run_cli("leaderboard", "--runs-dir", str(runs), "--no-plots", "--out", str(tmp_path / "b.md"))
    assert board.returncode == 0 and board.stderr.count(f"warning: the scores of {b.name} are stale") == 1
    # Re-scored, it compares again.
    assert run_cli("score", str(b)).returncode == 0
    assert compare(a, b).fields[0].field == "headline"
    # A cut-off paper_scores.jsonl is an error naming file and line, not a traceback.
    rows = (a / "paper_scores.jsonl").read_text().splitlines()
    (a / "paper_scores.jsonl").write_text("\n".join(rows[:2] + [rows[2][:40]]) + "\n")
    cli = run_cli("compare", str(a), str(b))
    assert (
        cli.returncode == 2
        and f"{a / 'paper_scores.jsonl'}:3: bad paper scores line" in cli.stderr
        and "Traceback" not in cli.stderr
    )
    # report --out into a folder that does not exist yet
    target = write_report(
        b, ROOT / "gold" / "gold.jsonl", ROOT / "gold" / "corpus.jsonl", tmp_path / "new" / "dir" / "r.html"
    )
    assert target.is_file() and "<html" in target.read_text()[:200].lower()


def test_scores_from_another_gold_or_with_missing_rows_are_refused_naming_the_run_to_rescore(tmp_path):
    from paperfields.core.runlog import RunError
    from paperfields.scoring.board import check_versions
    from paperfields.scoring.compare import compare

    runs = _committed_runs(tmp_path)
    a, b = runs / "rules_baseline__zero_shot__test", runs / "rules_empty__zero_shot__test"
    gold = ROOT / "gold" / "gold.jsonl"
    assert compare(a, b, gold_path=gold).fields[0].field == "headline"
    # Gold edited since: both runs are stale against it.
    edited = tmp_path / "gold" / "gold.jsonl"
    edited.parent.mkdir()
    lines = gold.read_text().splitlines()
    first = json.loads(lines[0])
    first["record"]["research_area"] = "other" if first["record"]["research_area"] != "other" else "reasoning"
    edited.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    shutil.copy(ROOT / "gold" / "corpus.jsonl", edited.parent / "corpus.jsonl")
    with pytest.raises(RunError, match=r"scored against gold 1\.\d+\+[0-9a-f]{12}, and .* is now"):
        compare(a, b, gold_path=edited)
    # Only one of them re-scored against the edited gold: compare refuses to mix, the board names the other.
    from paperfields.scoring.runs import score_run

    rescored = score_run(a, edited)
    with pytest.raises(RunError, match="re-score both"):
        compare(a, b)
    others = [s for s in collect_scores(runs) if s.run_id != a.name]
    with pytest.raises(MixedVersionsError) as err:
        check_versions([rescored] + others, edited)
    assert a.name not in str(err.value).split("paperfields score`: ")[1] and b.name in str(err.value)
    # A paper_scores.jsonl cut short (a crash mid-write) does not silently shrink the comparison.
    score_run(a, gold)
    rows = (b / "paper_scores.jsonl").read_text().splitlines()
    (b / "paper_scores.jsonl").write_text("\n".join(rows[:5]) + "\n")
    with pytest.raises(RunError, match=r"5 paper rows, but .*scores.json counts 60 papers"):
        compare(a, b, gold_path=gold)


def test_output_paths_that_are_folders_or_unwritable_are_clean_errors(tmp_path):
    runs = _committed_runs(tmp_path)

    def cli(*args):
        return run_cli(*args)

    board = cli("leaderboard", "--runs-dir", str(runs), "--no-plots", "--out", str(tmp_path))
    assert board.returncode == 2 and f"--out {tmp_path} is a folder" in board.stderr and "Traceback" not in board.stderr
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    agreement = cli("gold", "agreement", "--out", str(blocked / "AGREEMENT.md"))
    assert (
        agreement.returncode == 2
        and f"cannot write {blocked / 'AGREEMENT.md'}" in agreement.stderr
        and "Traceback" not in agreement.stderr
    )
    nested = cli("gold", "agreement", "--out", str(tmp_path / "new" / "dir" / "AGREEMENT.md"))
    assert (
        nested.returncode == 0
        and (tmp_path / "new" / "dir" / "AGREEMENT.md").read_text() == (ROOT / "gold" / "AGREEMENT.md").read_text()
    )


# --- cost per correct item and contamination status in the report (issue 17) ------------------------------------

GOLD = ROOT / "gold" / "gold.jsonl"


def _run_table(html: str) -> list[list[str]]:
    """The rows (header first) of the report's per-run tables (cost and contamination, then confidence),
    joined side by side on the run column, each cell as the text a reader sees."""
    import html as html_lib
    import re

    joined: list[list[str]] = []
    for table in re.findall(r'<table class="run">(.*?)</table>', html, re.S):
        rows = [
            [html_lib.unescape(c) for c in re.findall(r"<t[hd]>(.*?)</t[hd]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)
        ]
        joined = rows if not joined else [a + b[1:] for a, b in zip(joined, rows)]
    return joined


def _hand_run(tmp_path: Path, backend: str, dollars: float | None, latencies: list[float]) -> Path:
    """A scored run folder of ``backend`` whose answers are the gold records of the first test papers."""
    from paperfields.core.gold import load_gold
    from paperfields.scoring.runs import score_run

    test = [g for g in load_gold(GOLD) if g.split == "test"][: len(latencies)]
    run_dir = tmp_path / backend.replace("/", "_")
    run_dir.mkdir()
    config = RunConfig(backend=backend, strategy="zero_shot", prompt_version="1", prompt_sha256="x", split="test")
    manifest = Manifest(
        run_id=run_dir.name,
        config=config,
        started_at="2026-12-01T00:00:00+00:00",
        paper_ids=[g.id for g in test],
        papers_total=len(test),
        papers_done=len(test),
        dollars_total=dollars,
    )
    (run_dir / "manifest.json").write_text(manifest.model_dump_json())
    lines = [
        PredictionLine(paper_id=g.id, record=g.record.model_dump(mode="json"), latency_s=s)
        for g, s in zip(test, latencies)
    ]
    (run_dir / "predictions.jsonl").write_text("".join(line.model_dump_json() + "\n" for line in lines))
    score_run(run_dir, GOLD)
    return run_dir


def _report(run_dir: Path) -> tuple[str, dict]:
    from paperfields.report import write_report

    html = write_report(run_dir, GOLD).read_text(encoding="utf-8")
    return html, json.loads((run_dir / "scores.json").read_text())


def test_report_shows_dollars_per_correct_item_and_contamination_of_a_priced_run(tmp_path):
    html, scores = _report(_hand_run(tmp_path, "openai/gpt-4o-mini", 0.5, [3.0, 5.0]))
    head, row = _run_table(html)
    assert head == [
        "run",
        "correct items",
        "cost / correct item",
        "model s / correct",
        "$ / correct",
        "contamination",
        "model cutoff",
        "cutoff source",
        "corpus first public",
        "Brier (asked confidence)",
        "ECE (asked confidence)",
        "Brier (logprob confidence)",
        "ECE (logprob confidence)",
        "AURC (asked confidence)",
        "errors caught in least confident 20% (asked confidence)",
        "AURC (logprob confidence)",
        "errors caught in least confident 20% (logprob confidence)",
    ]
    correct = scores["correct_items"]
    assert correct > 10  # two papers answered with their own gold
    cells = dict(zip(head, row))
    assert cells["correct items"] == str(correct)
    assert cells["cost / correct item"] == f"${0.5 / correct:.6f}" and cells["$ / correct"] == f"{0.5 / correct:.6f}"
    assert cells["model s / correct"] == f"{8.0 / correct:.2f}"
    assert (cells["contamination"], cells["model cutoff"], cells["corpus first public"]) == (
        "after cutoff",
        "2023-10",
        "2026-01 (cutoffs.toml)",
    )
    assert cells["cutoff source"].startswith("OpenAI model page, knowledge cutoff Oct 01, 2023")
    assert cells["Brier (asked confidence)"] == cells["ECE (logprob confidence)"] == "–"  # no confidences in this run
    assert (
        "(a reference run" not in html and "ICML 2026 dates page" in html
    )  # the benchmark corpus date's source under the table


def test_report_shows_model_seconds_per_correct_item_for_a_local_run_and_no_cost_for_a_reference(tmp_path):
    html, scores = _report(_hand_run(tmp_path, "local/qwen2.5-coder-0.5b", 0.0, [20.0, 10.5, 4.5]))
    cells = dict(zip(*_run_table(html)))
    correct = scores["correct_items"]
    assert cells["cost / correct item"] == f"{35.0 / correct:.2f} s" and cells["$ / correct"] == "0 (local)"
    assert (cells["contamination"], cells["model cutoff"]) == ("after cutoff", "2024-09")
    assert "Qwen2.5-Coder technical report (arXiv:2409.12186)" in cells["cutoff source"]

    html, scores = _report(_hand_run(tmp_path, "rules/baseline", 0.0, [0.0]))
    cells = dict(zip(*_run_table(html)))
    assert "Cost and contamination (a reference run: not ranked, no trained model)" in html
    assert cells["correct items"] == str(scores["correct_items"]) and scores["correct_items"] > 0
    assert [
        cells[k]
        for k in (
            "cost / correct item",
            "model s / correct",
            "$ / correct",
            "contamination",
            "model cutoff",
            "cutoff source",
        )
    ] == ["–", "–", "–", "n/a", "–", "–"]


def _own_report(tmp_path: Path, backend: str, date: str | None, scores=None, columns=None) -> str:
    papers = [
        Paper(
            id="mine-1",
            text="We propose FooNet, reaching 91.2% accuracy on ImageNet.",
            source="mine.txt",
            position=1,
            line=1,
            public_date=date,
        )
    ]
    config = RunConfig(
        backend=backend,
        strategy="zero_shot",
        prompt_version="1",
        prompt_sha256="0",
        split="all",
        corpus="mine.jsonl papers:0",
    )
    manifest = Manifest(run_id="mine", started_at="now", papers_total=1, paper_ids=["mine-1"], config=config)
    return render_report(
        manifest, scores, [PredictionLine(paper_id="mine-1", record={"method_name": "FooNet"})], [], papers, {}
    )


def test_report_of_an_unscored_run_on_ones_own_corpus_checks_the_corpus_date():
    cells = dict(zip(*_run_table(_own_report(Path(), "local/qwen2.5-coder-0.5b", "2025-04"))))
    assert cells["correct items"] == "–" and cells["cost / correct item"] == "–"
    assert (cells["contamination"], cells["model cutoff"], cells["corpus first public"]) == (
        "after cutoff",
        "2024-09",
        "2025-04 (corpus build --date)",
    )
    cells = dict(zip(*_run_table(_own_report(Path(), "local/qwen2.5-coder-0.5b", "2025-03"))))
    assert cells["contamination"] == "possible overlap"  # 6 months after the 2024-09 cutoff: within the margin
    cells = dict(zip(*_run_table(_own_report(Path(), "local/qwen2.5-coder-0.5b", None))))
    assert (
        cells["contamination"].startswith("unknown (the corpus states no public date")
        and cells["corpus first public"] == "not stated"
    )
    assert cells["model cutoff"] == "2024-09"


def test_report_escapes_the_contamination_sources():
    from paperfields.scoring.score import score_predictions

    gold = GoldRecord(id="pevil", split="test", record={"method_name": "EvilNet"})
    scores, _ = score_predictions(
        {"pevil": {"method_name": "EvilNet"}}, [gold], failures={}, run_id="evil", split="test", gold_version="t"
    )
    scores.contamination = {
        "status": "possible overlap",
        "model_cutoff": "2025-01",
        "cutoff_source": SCRIPT,
        "corpus_earliest_public": "2025-02",
        "corpus_source": IMG,
        "note": None,
    }
    paper = Paper(id="pevil", text="We propose EvilNet.", source="evil.txt", position=1, line=1)
    manifest = Manifest(
        run_id="evil",
        started_at="now",
        papers_total=1,
        paper_ids=["pevil"],
        config=RunConfig(backend="x/evil", strategy="zero_shot", prompt_version="1", prompt_sha256="0", split="test"),
    )
    html = render_report(
        manifest, scores, [PredictionLine(paper_id="pevil", record={"method_name": "EvilNet"})], [gold], [paper], {}
    )
    assert SCRIPT not in html and IMG not in html and "&lt;script&gt;document.body" in html
    cells = dict(zip(*_run_table(html)))
    assert (cells["contamination"], cells["cutoff source"]) == ("possible overlap", SCRIPT)


def test_one_more_run_column_appears_in_the_report_and_the_card(monkeypatch):
    """The calibration hook: an entry appended to RUN_COLUMNS is a column of both per-run tables."""
    import paperfields.report as report
    from paperfields.export import run_cost_section
    from paperfields.scoring.score import score_predictions

    monkeypatch.setattr(report, "RUN_COLUMNS", report.RUN_COLUMNS + [("Brier (asked)", lambda r: f"0.125 {r.run_id}")])
    head, row = _run_table(_own_report(Path(), "local/qwen2.5-coder-0.5b", "2025-04"))
    assert head[-1] == "Brier (asked)" and row[-1] == "0.125 mine"
    gold = GoldRecord(id="p", split="test", record={"method_name": "FooNet"})
    scores, _ = score_predictions(
        {"p": {"method_name": "FooNet"}}, [gold], failures={}, run_id="r1", split="test", gold_version="t"
    )
    scores.papers_in_split = scores.papers_done = scores.papers
    facts = report.RunFacts(
        run_id="r1", backend="x/m", reference=False, scores=scores, contamination=report.Contamination(status="unknown")
    )
    card = run_cost_section([facts])
    assert "| run | correct items |" in card and "| Brier (asked) |" in card and "| 0.125 r1 |" in card


# --- a report on a corpus of one's own, and the per-run table's width (issue 28, items 4 and 9a) -----------------

OWN_ABSTRACTS = [
    "We introduce LatticeFormer, a sparse attention transformer for long-document question answering. On NarrativeQA "
    "and QuALITY, LatticeFormer improves exact match by 3.1 points over Longformer while using 40% less memory.",
    "We propose RouteLoRA, which routes tokens between low-rank adapters for low-resource machine translation. On "
    "FLORES-200, RouteLoRA reaches 27.4 BLEU, outperforming LoRA, without any additional training data.",
]

# Runs in the page after layout: what the tests read back from the dumped DOM (the report's own policy
# forbids scripts, so the measured copy allows this one inline script and nothing else).
_MEASURE = """<script>
const tables = [...document.querySelectorAll('table.run')];
const table = tables.reduce((a, b) => (b.scrollWidth - b.parentElement.clientWidth > a.scrollWidth - \
a.parentElement.clientWidth ? b : a)), box = table.parentElement;
const style = m => getComputedStyle(m).backgroundColor;
const legend = document.querySelector('p.legend');
document.body.setAttribute('data-measured', JSON.stringify({
  table: table.scrollWidth, box: box.clientWidth, boxRight: box.getBoundingClientRect().right,
  page: document.documentElement.scrollWidth, window: innerWidth,
  spans: [...document.querySelectorAll('section.paper mark')].map(m => [m.className, style(m), m.textContent]),
  legend: legend ? legend.textContent : null,
  legendSpans: legend ? [...legend.querySelectorAll('mark')].map(m => [m.className, style(m), m.textContent]) : []}));
</script>"""


def _measured_in_chromium(html: str, tmp_path: Path, window: str = "1400,900") -> dict:
    """Render ``html`` in headless Chromium at ``window`` (width,height) and return what :data:`_MEASURE` read."""
    import html as html_lib

    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs Debian's chromium for this test")
        pytest.skip("chromium not installed (apt-get install chromium)")
    policy = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    assert policy in html  # the report's own policy, widened below for the measuring script only
    page = tmp_path / f"measured-{window.replace(',', 'x')}.html"
    page.write_text(
        html.replace(policy, policy + "; script-src 'unsafe-inline'").replace("</body>", _MEASURE + "</body>"),
        encoding="utf-8",
    )
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--window-size={window}",
    ]
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    ).stdout
    found = re.search(r'data-measured="([^"]*)"', dom)
    assert found, dom[:2000]
    return json.loads(html_lib.unescape(found.group(1)))


def _own_run_report(tmp_path: Path, with_benchmark_paper: bool = False) -> str:
    """The HTML report of a rules/baseline run (through the CLI) on a corpus built from ``OWN_ABSTRACTS``,
    plus the first benchmark test paper (which has gold) when ``with_benchmark_paper``."""
    seeds = tmp_path / "mine.txt"
    seeds.write_text("\n\n".join(OWN_ABSTRACTS) + "\n", encoding="utf-8")
    corpus = tmp_path / "mine.jsonl"

    cli = run_cli

    built = cli("corpus", "build", str(seeds), "--out", str(corpus))
    assert built.returncode == 0, built.stderr
    if with_benchmark_paper:
        test_id = next(json.loads(l)["id"] for l in GOLD.read_text().splitlines() if json.loads(l)["split"] == "test")
        benchmark = next(
            l for l in (ROOT / "gold" / "corpus.jsonl").read_text().splitlines() if json.loads(l)["id"] == test_id
        )
        corpus.write_text(corpus.read_text() + benchmark + "\n")
    runs = tmp_path / "runs"
    ran = cli("run", "-b", "rules/baseline", "--corpus", str(corpus), "--split", "all", "--runs-dir", str(runs))
    assert ran.returncode == 0, ran.stderr
    [run_dir] = runs.iterdir()
    reported = cli("report", str(run_dir), "--out", str(tmp_path / "report.html"))
    assert reported.returncode == 0, reported.stderr
    return (tmp_path / "report.html").read_text(encoding="utf-8")


def test_a_report_without_gold_marks_predictions_in_one_neutral_style_in_chromium(tmp_path):
    html = _own_run_report(tmp_path)
    seen = _measured_in_chromium(html, tmp_path)
    assert (
        seen["legend"] == "Highlights: predicted (no gold to check it against)"
    )  # no gold kinds, no quote: none in this run
    [(kind, colour, _)] = seen["legendSpans"]
    assert kind == "predicted"
    assert len(seen["spans"]) >= 6 and {"LatticeFormer", "RouteLoRA"} <= {text for _, _, text in seen["spans"]}
    assert {(k, c) for k, c, _ in seen["spans"]} == {("predicted", colour)}  # every span the legend's one style
    # that style is none of the judged ones (red: predicted, not gold; yellow: missed; green: matched)
    (tmp_path / "judged").mkdir()
    judged = _measured_in_chromium(_malicious_report(), tmp_path / "judged")
    judged_colours = {c for _, c, _ in judged["legendSpans"]}
    assert [k for k, _, _ in judged["legendSpans"]] == ["both", "gold", "pred"] and colour not in judged_colours
    assert "predicted, not gold" in judged["legend"] and "gold, missed" in judged["legend"]


def test_a_report_mixing_papers_with_and_without_gold_judges_only_the_first(tmp_path):
    from paperfields.core.gold import load_gold

    html = _own_run_report(tmp_path, with_benchmark_paper=True)
    sections = re.findall(r'<section class="paper" id="([^"]+)">(.*?)</section>', html, re.S)
    gold_ids = {g.id for g in load_gold(GOLD)}
    kinds = {pid: set(re.findall(r'<mark class="([a-z]+)">', body)) for pid, body in sections}
    assert len(kinds) == 3
    for pid, found in kinds.items():
        assert found, pid  # every paper has some highlighted prediction
        assert found <= ({"both", "gold", "pred"} if pid in gold_ids else {"predicted"}), (pid, found)
    legend = re.search(r'<p class="legend">(.*?)</p>', html).group(1)
    assert re.sub(r"<[^>]+>", "", legend) == (
        "Highlights: gold and predicted gold, missed predicted, not gold predicted (no gold to check it against)"
    )


def test_show_without_gold_marks_predictions_in_the_neutral_colour(tmp_path):
    html = _own_run_report(tmp_path)  # leaves the run in tmp_path/runs
    [run_dir] = (tmp_path / "runs").iterdir()
    paper_id = json.loads((run_dir / "predictions.jsonl").read_text().splitlines()[0])["paper_id"]
    assert paper_id in html
    proc = run_cli("show", paper_id, "--run", run_dir, env={**os.environ, "FORCE_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[30;45m" in proc.stdout and "\x1b[30;41m" not in proc.stdout  # black on magenta, never black on red
    assert "predicted, not gold" not in proc.stdout and "gold, missed" not in proc.stdout


@pytest.mark.parametrize(
    "run", ["local_qwen2.5-coder-0.5b__confidence__test", "annotator_second-blind__imported__test", None]
)
def test_the_cost_and_contamination_table_fits_a_1400_px_window(tmp_path, run):
    from paperfields.report import write_report

    html = (
        write_report(ROOT / "results" / "runs" / run, GOLD, out=tmp_path / "r.html").read_text(encoding="utf-8")
        if run
        else _own_run_report(tmp_path)
    )
    seen = _measured_in_chromium(html, tmp_path)
    assert seen["window"] == 1400
    assert seen["table"] <= seen["box"], seen  # the table fits the box it is in: nothing to scroll sideways
    assert seen["page"] <= seen["window"], seen  # nor does the page
    narrow = _measured_in_chromium(html, tmp_path, "700,900")
    # narrower than the table can go: it scrolls inside its box,
    # which stays in the window (whatever else on the page does)
    assert narrow["table"] > narrow["box"] and narrow["boxRight"] <= narrow["window"], narrow
