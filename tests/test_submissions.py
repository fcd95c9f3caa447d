"""Submissions from outside (scoring/submissions.py): checked, scored onto the board marked submitted, or refused
naming file, line and field with the board unchanged. The first test is what CI runs over submissions/."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from paperfields.core.gold import load_gold
from paperfields.scoring import submissions
from paperfields.scoring.board import Board
from paperfields.scoring.runs import collect_scores
from paperfields.scoring.submissions import SubmissionError, add_submission, check_submission, line_schema
from tests.cli_in_process import run_cli
from tests.conftest import ROOT

GOLD = ROOT / "gold" / "gold.jsonl"
CORPUS = ROOT / "gold" / "corpus.jsonl"
TOML = """model = "tiny-model-1"
provider = "acme"
date_run = 2026-11-30
strategy = "own pipeline"
submitted_by = "a test"
model_cutoff = "2023-10"
"""


def test_every_submission_in_the_repository_is_valid():
    """What CI runs over submissions/ (the README's test command runs the whole suite): a pull request that adds a
    submission with a problem fails here, the assertion listing each problem as file:line: field."""
    root = ROOT / "submissions"
    assert (root / "README.md").is_file()
    checks = [  # a link is checked (and refused), not skipped; copies are sought among the published runs too
        check_submission(folder, GOLD, CORPUS, ROOT / "results" / "runs")
        for folder in sorted(root.iterdir())
        if (folder.is_dir() or folder.is_symlink()) and not folder.name.startswith(".")
    ]
    problems = [p for check in checks for p in check.problems]
    assert not problems, "\n".join(problems)


def _rows():
    """Real records in the submission format: the gold records of the test split without their full names, code URLs
    and training-free flags (a test fixture, never a submission; 0.897 of the (paper, field) pairs agree with gold,
    under the copy threshold)."""
    return [
        {"paper_id": g.id, "record": _unlike_gold(g.record.model_dump(mode="json"))}
        for g in load_gold(GOLD)
        if g.split == "test"
    ]


def _unlike_gold(record: dict) -> dict:
    return {**record, "method_full_name": None, "code_url": None, "training_free": None}


def _gold_rows():
    """Gold itself in the submission format: a copy."""
    return [
        {"paper_id": g.id, "record": g.record.model_dump(mode="json")} for g in load_gold(GOLD) if g.split == "test"
    ]


def _folder(root: Path, name: str, rows: list, toml: str = TOML) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "submission.toml").write_text(toml, encoding="utf-8")
    (folder / "predictions.jsonl").write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return folder


def _board_dir(tmp_path: Path) -> Path:
    """A results/runs with one reproduced run (the published rules baseline, scores included)."""
    runs = tmp_path / "results" / "runs"
    shutil.copytree(
        ROOT / "results" / "runs" / "rules_baseline__zero_shot__test", runs / "rules_baseline__zero_shot__test"
    )
    return runs


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_valid_submission_lands_on_the_board_marked_submitted(tmp_path):
    runs = _board_dir(tmp_path)
    folder = _folder(tmp_path / "submissions", "acme-tiny", _rows())
    check = check_submission(folder, GOLD, CORPUS)
    assert check.ok and check.papers == 60 and check.meta.strategy == "own pipeline"
    run_dir = add_submission(folder, GOLD, CORPUS, runs)
    assert run_dir == runs / "acme-tiny__submitted__test"
    board = Board.of(collect_scores(runs), GOLD)
    rows = {r["run_id"]: r for r in board.rows}
    mine = rows["acme-tiny__submitted__test"]
    assert mine["provenance"] == "submitted" and rows["rules_baseline__zero_shot__test"]["provenance"] == "reproduced"
    assert (
        mine["backend"] == "acme/tiny-model-1"
        and mine["strategy"] == "own pipeline"
        and mine["rank"] == 1
        and 0.7 < mine["headline"] < 0.99
    )
    # the stated cutoff decides contamination where the table has no entry for the model
    assert mine["contamination"] == "after cutoff" and mine["model_cutoff"] == "2023-10"
    text = board.markdown()
    # the row names its folder and links it (issue 33 item 3), on the Markdown board and in the submitted runs' table
    link = "[submissions/acme-tiny](../submissions/acme-tiny/)"
    assert f"| 1 | acme-tiny__submitted__test (submitted) {link} | acme/tiny-model-1 |" in text
    assert (
        "## Submitted runs" in text
        and f"| acme-tiny__submitted__test | {link} | tiny-model-1 | acme | "
        "2026-11-30 | own pipeline | a test | 2023-10 | contender |"
        in text
    )
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(board.terminal())
    assert "acme/tiny-model-1 (submitted: submissions/acme-tiny)" in console.export_text()
    # re-scored from its folder, as the regeneration check does, it stays submitted; adding it again changes nothing
    before = _snapshot(runs)
    assert add_submission(folder, GOLD, CORPUS, runs) == run_dir and _snapshot(runs) == before
    reproduced = json.loads((runs / "rules_baseline__zero_shot__test" / "scores.json").read_text())
    assert "submitted" not in reproduced  # a reproduced run's scores.json has no such key


def _drop(rows, i):
    return rows[:i] + rows[i + 1 :]


def _dev_row():
    g = next(g for g in load_gold(GOLD) if g.split == "dev")
    return {"paper_id": g.id, "record": g.record.model_dump(mode="json")}


BAD = {
    "missing paper": (
        lambda rows: _drop(rows, 4),
        lambda rows: rf"predictions.jsonl: field 'paper_id': 1 test paper missing: {rows[4]['paper_id']} ",
    ),
    "duplicate": (
        lambda rows: rows + [rows[0]],
        lambda rows: rf"predictions.jsonl:61: field 'paper_id': {rows[0]['paper_id']} already on line 1",
    ),
    "dev paper": (
        lambda rows: rows + [_dev_row()],
        lambda rows: r"predictions.jsonl:61: field 'paper_id': p\w+ is a dev paper",
    ),
    "unknown id": (
        lambda rows: rows[:2] + [{**rows[2], "paper_id": "p_nope"}] + rows[3:],
        lambda rows: r"predictions.jsonl:3: field 'paper_id': 'p_nope' is not a paper of the corpus",
    ),
    "bad record": (
        lambda rows: rows[:6] + [{**rows[6], "record": {**rows[6]["record"], "research_area": "biology"}}] + rows[7:],
        lambda rows: r"predictions.jsonl:7: field 'record.research_area': 'biology' is not one of",
    ),
    "value as text": (
        lambda rows: (
            rows[:1]
            + [
                {
                    **rows[1],
                    "record": {
                        "results": [{"metric": "acc", "value": "56.61%", "unit": "percent", "kind": "absolute"}]
                    },
                }
            ]
            + rows[2:]
        ),
        lambda rows: r"predictions.jsonl:2: field 'record.results\[0\].value': '56.61%' is not of type 'number'",
    ),
    "misspelled key": (
        lambda rows: rows[:1] + [{**rows[1], "record": {"metrcs": ["accuracy"]}}] + rows[2:],
        lambda rows: (
            r"predictions.jsonl:2: field 'record': Additional properties are not allowed \('metrcs' was unexpected\)"
        ),
    ),
    "not JSON": (
        lambda rows: rows[:9] + ['{"paper_id": "x", '] + rows[10:],
        lambda rows: r"predictions.jsonl:10: not JSON",
    ),
    "oversize line": (
        lambda rows: rows[:1] + [{**rows[1], "record": {"tasks": ["x" * 70000]}}] + rows[2:],
        lambda rows: r"predictions.jsonl:2: line of \d+ bytes, more than 65536",
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_submission_is_refused_naming_file_line_and_field_and_the_board_stays(tmp_path, kind):
    runs = _board_dir(tmp_path)
    before = _snapshot(runs.parent)
    make, expected = BAD[kind]
    rows = _rows()
    folder = _folder(tmp_path / "submissions", "bad", make(rows))
    check = check_submission(folder, GOLD, CORPUS)
    assert not check.ok
    assert any(re.search(rf"^{re.escape(str(folder))}/" + expected(rows), p) for p in check.problems), check.problems
    with pytest.raises(SubmissionError) as refused:
        add_submission(folder, GOLD, CORPUS, runs)
    assert all(p in str(refused.value) for p in check.problems)
    assert _snapshot(runs.parent) == before  # the board and the published runs are untouched
    assert not list(runs.parent.glob(".submission-*"))


def test_an_oversize_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "MAX_FILE_BYTES", 1000)
    folder = _folder(tmp_path, "big", _rows())
    size = (folder / "predictions.jsonl").stat().st_size
    assert check_submission(folder, GOLD, CORPUS).problems == [
        f"{folder / 'predictions.jsonl'}: more than the 1000 bytes a "
        f"submission's predictions.jsonl may hold ({size} bytes)"
    ]


@pytest.mark.parametrize(
    "toml, expected",
    [
        (
            TOML.replace("2026-11-30", '"yesterday"'),
            r"submission.toml:3: field 'date_run': Input should be a valid date",
        ),
        (TOML + "temperature = 0\n", r"submission.toml:7: field 'temperature': not a field of submission.toml"),
        (TOML.replace('submitted_by = "a test"\n', ""), r"submission.toml: field 'submitted_by': missing"),
        (
            TOML.replace('"own pipeline"', '"chain_of_magic"'),
            r"submission.toml:4: field 'strategy': 'chain_of_magic' is neither 'own pipeline' nor a strategy",
        ),
        (TOML.replace('"acme"', '"rules"'), r"submission.toml:2: field 'provider': 'rules' names a reference"),
        (TOML.replace('"2023-10"', '"late 2023"'), r"submission.toml:6: field 'model_cutoff': "),
        (TOML.replace("model = ", "model == "), r"submission.toml:1: not TOML"),
    ],
)
def test_a_bad_submission_toml_names_line_and_field(tmp_path, toml, expected):
    folder = _folder(tmp_path, "meta", _rows(), toml)
    problems = check_submission(folder, GOLD, CORPUS).problems
    assert len(problems) == 1 and re.search(expected, problems[0]), problems


def test_the_command_line_checks_adds_and_prints_the_schema(tmp_path):
    root = tmp_path / "submissions"
    _folder(root, "good", _rows())
    _folder(root, "bad", _drop(_rows(), 0))
    runs = _board_dir(tmp_path)
    checked = run_cli("submission", "check", "--dir", root)
    assert checked.returncode == 1, checked.stderr
    assert "ok good: 60 test papers, acme/tiny-model-1, own pipeline" in checked.stdout
    assert f"error: {root / 'bad' / 'predictions.jsonl'}: field 'paper_id': 1 test paper missing" in checked.stderr
    refused = run_cli("submission", "add", "bad", "--dir", root, "--runs-dir", runs, "--no-plots")
    assert (
        refused.returncode == 1
        and "1 test paper missing" in refused.stderr
        and not (runs.parent / "leaderboard.md").exists()
    )
    added = run_cli("submission", "add", "good", "--dir", root, "--runs-dir", runs, "--no-plots")
    assert added.returncode == 0, added.stderr
    assert "good__submitted__test (submitted)" in (runs.parent / "leaderboard.md").read_text()
    assert "good__submitted__test" in (runs.parent / "difficulty.md").read_text()
    schema = run_cli("submission", "schema")
    assert json.loads(schema.stdout) == json.loads(json.dumps(line_schema()))


def test_a_paper_on_a_refused_line_is_named_once_not_also_missing(tmp_path):
    rows = _rows()
    bad = [{**rows[i], "record": {**rows[i]["record"], "research_area": "biology"}} for i in (11, 20)]
    folder = _folder(tmp_path / "submissions", "twice", rows[:11] + [bad[0]] + rows[12:20] + [bad[1]] + rows[21:])
    check = check_submission(folder, GOLD, CORPUS)
    assert len(check.problems) == 2, check.problems
    assert [p.split(": field")[0].rsplit(":", 1)[1] for p in check.problems] == ["12", "21"]
    assert not any("missing" in p for p in check.problems)
    # a paper with no line at all is still missing
    check = check_submission(_folder(tmp_path / "submissions", "gone", _drop(rows, 4)), GOLD, CORPUS)
    assert any(f"1 test paper missing: {rows[4]['paper_id']}" in p for p in check.problems)


def test_a_run_becomes_a_submission_in_one_step_and_lands_with_its_own_scores(tmp_path):
    """Issue 33 item 1, through the CLI: `paperfields run` against the OpenAI-compatible stub (the real openai client
    and instructor over HTTP, one paper's reply cut off) -> `submission from-run` -> `check` refuses the FILL IN
    placeholder, then passes once it is filled -> `add` into a runs
    folder of its own -> the board row's scores are the run's own."""
    from tests.cli_in_process import run_cli
    from tests.openai_stub import StubServer, reply

    runs, subs, board_runs = tmp_path / "runs", tmp_path / "submissions", tmp_path / "results" / "runs"
    with StubServer() as stub:
        stub.script.append(reply('{"method_name": "Stub', finish_reason="length"))  # one paper truncated
        made = run_cli("run", "-b", "openai/m", "--base-url", stub.url, "--runs-dir", str(runs), "--run-id", "r", "-q")
    assert made.returncode == 0, made.stderr
    own = json.loads((runs / "r" / "scores.json").read_text())
    assert own["papers"] == 60 and sum(own["failures_by_class"].values()) == 1

    done = run_cli("submission", "from-run", "r", "--name", "acme-stub", "--runs-dir", str(runs), "--dir", str(subs))
    assert done.returncode == 0, done.stderr
    folder = subs / "acme-stub"
    assert sorted(p.name for p in folder.iterdir()) == ["predictions.jsonl", "submission.toml"]
    lines = [json.loads(x) for x in (folder / "predictions.jsonl").read_text().splitlines()]
    assert len(lines) == 60 and all(
        set(x) in ({"paper_id", "record"}, {"paper_id", "record", "failure"}) for x in lines
    )
    failed = [x for x in lines if x["record"] is None]
    assert [x["failure"] for x in failed] == list(own["failures_by_class"]) and "failure" in failed[0]
    import tomllib

    meta = tomllib.loads((folder / "submission.toml").read_text())
    manifest = json.loads((runs / "r" / "manifest.json").read_text())
    assert meta["model"] == "m" and meta["provider"] == "openai" and meta["strategy"] == "zero_shot"
    assert meta["prompt_sha256"] == manifest["config"]["prompt_sha256"] and meta["mode"] == manifest["config"]["mode"]
    assert (
        str(meta["date_run"]) == manifest["started_at"][:10] and "model_cutoff" not in meta
    )  # openai/m: no cutoff known
    assert meta["submitted_by"].startswith(submissions.PLACEHOLDER)

    refused = run_cli("submission", "check", "acme-stub", "--dir", str(subs))
    assert refused.returncode == 1 and "field 'submitted_by': still 'FILL IN'" in refused.stderr
    toml = (folder / "submission.toml").read_text()
    (folder / "submission.toml").write_text(toml.replace(meta["submitted_by"], "a tester"))
    checked = run_cli("submission", "check", "acme-stub", "--dir", str(subs))
    assert checked.returncode == 0 and "ok acme-stub: 60 test papers, openai/m, zero_shot" in checked.stdout
    added = run_cli("submission", "add", "acme-stub", "--dir", str(subs), "--runs-dir", str(board_runs), "--no-plots")
    assert added.returncode == 0, added.stderr

    rows = json.loads(run_cli("leaderboard", "--runs-dir", str(board_runs), "--no-write", "--json").stdout)
    [row] = rows
    assert row["run_id"] == "acme-stub__submitted__test" and row["provenance"] == "submitted" and row["rank"] == 1
    for key in ("headline", "headline_ci95", "precision", "recall", "per_paper_f1", "valid_rate", "failures_by_class"):
        assert row[key] == own[key], key
    assert row["fields"] == {f: own["fields"][f]["score"] for f in row["fields"]}
    assert row["correct_items"] == own["correct_items"]
    # twice as a safety: from-run does not overwrite a submission folder
    again = run_cli("submission", "from-run", "r", "--name", "acme-stub", "--runs-dir", str(runs), "--dir", str(subs))
    assert again.returncode == 1 and "exists" in again.stderr


def test_a_submitted_rows_unknown_time_and_cost_are_dashes_and_off_the_plots(tmp_path, monkeypatch):
    """Issue 33 item 3: a submission's time, tokens and dollars were not measured here: `–` in every cell (never
    `0.00 s`), None in the rows and the csv, left off the seconds and cost plots (named under them, not drawn at 0 on
    the Pareto front); the web board names and links its folder."""
    import matplotlib.pyplot as plt

    from paperfields import plots
    from paperfields.web import render_page

    runs = _board_dir(tmp_path)
    timed = "local_qwen2.5-coder-0.5b__zero_shot__test"
    shutil.copytree(ROOT / "results" / "runs" / timed, runs / timed)
    add_submission(_folder(tmp_path / "submissions", "acme-tiny", _rows()), GOLD, CORPUS, runs)
    board = Board.of(collect_scores(runs), GOLD)
    row = next(r for r in board.rows if r["provenance"] == "submitted")
    for key in ("seconds_per_paper", "tokens_per_paper", "input_tokens_per_paper", "seconds_per_correct"):
        assert row[key] is None, key
    assert row["dollars_total"] is None and row["correct_items"] > 0
    text = board.markdown()
    assert "| acme-tiny__submitted__test | – | – | – | " in text and "0.00 s" not in text.split("## Cost")[0]
    main = next(line for line in text.splitlines() if line.startswith("| 1 | acme-tiny"))
    assert main.split(" | ")[-2] == "–"  # cost / correct
    csv = board.csv().splitlines()
    header, mine = csv[0].split(","), next(line for line in csv if line.startswith("1,")).split(",")
    assert mine[header.index("seconds_per_paper")] == "" and mine[header.index("seconds_per_correct")] == ""
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(board.terminal())
    line = next(x for x in console.export_text().splitlines() if "acme/tiny-model-1" in x)
    assert line.rstrip().endswith("–")  # s/paper
    drawn: list[tuple[str, int, str]] = []
    close = plt.close
    monkeypatch.setenv("PAPERFIELDS_PLOT_CACHE", "off")  # drawn here, not taken from the plot cache
    monkeypatch.setattr(
        plt,
        "close",
        lambda fig: (
            drawn.append(
                (
                    fig.axes[0].get_title(),
                    len(fig.axes[0].collections[0].get_offsets()) if fig.axes[0].collections else 0,
                    " ".join(t.get_text() for t in fig.texts),
                )
            ),
            close(fig),
        ),
    )
    plots.plot_seconds(board, tmp_path / "s.png")
    plots.plot_seconds_per_correct(board, tmp_path / "c.png")
    assert [(n, "acme-tiny__submitted__test" in notes) for _, n, notes in drawn] == [(1, True), (1, True)]
    page = render_page(board, {})
    assert '<a class="folder" href="../submissions/acme-tiny/">' in page


REFERENCE_TOML = TOML.replace('provider = "acme"', 'provider = "agent-lab"') + (
    'role = "reference"\nreference_reason = "a frontier AI agent session labeling blind, not a model run"\n'
)


def test_a_submission_declared_a_reference_is_shown_among_the_references_marked_and_never_ranked(tmp_path):
    """role = "reference" (with its reason) puts a submission among the references on every board, marked submitted,
    never ranked, even with the best headline; without a reason it is refused, and a contender may not give one."""
    from rich.console import Console

    from paperfields.summary import board_summary
    from paperfields.web import render_page
    from tests.cli_in_process import run_cli

    subs, runs = tmp_path / "submissions", _board_dir(tmp_path)
    contender = "local_qwen2.5-coder-0.5b__zero_shot__test"
    shutil.copytree(ROOT / "results" / "runs" / contender, runs / contender)
    _folder(subs, "agent-ref", _rows(), REFERENCE_TOML)
    _folder(subs, "no-reason", _rows(), REFERENCE_TOML.rsplit("reference_reason", 1)[0])
    _folder(subs, "contender-reason", _rows(), TOML + 'reference_reason = "because I say so, really"\n')
    checked = run_cli("submission", "check", "--dir", str(subs))
    assert checked.returncode == 1 and "ok agent-ref: 60 test papers" in checked.stdout
    assert re.search(
        r"no-reason/submission.toml: field 'reference_reason': role = \"reference\" needs it", checked.stderr
    )
    assert re.search(
        r"contender-reason/submission.toml:7: field 'reference_reason': for role = \"reference\" only", checked.stderr
    )
    added = run_cli("submission", "add", "agent-ref", "--dir", str(subs), "--runs-dir", str(runs), "--no-plots")
    assert added.returncode == 0, added.stderr
    board = Board.of(collect_scores(runs), GOLD)
    row = next(r for r in board.rows if r["run_id"] == "agent-ref__submitted__test")
    assert row["headline"] > 0.7 and row["rank"] is None and row["section"] == "reference" and row["reference"]
    assert row["provenance"] == "submitted" and [r["run_id"] for r in board.rows if r["rank"]] == [contender]
    text = board.markdown()
    references = text.split("## References")[1].split("\n## ")[0]
    assert (
        "| – | agent-ref__submitted__test (submitted) [submissions/agent-ref](../submissions/agent-ref/) |"
        in references
    )
    assert "reference: a frontier AI agent session labeling blind, not a model run |" in text
    assert "agent-lab/tiny-model-1 (reference) (submitted) [submissions/agent-ref](submissions/agent-ref/)" in (
        board_summary(board)
    )
    console = Console(width=200, record=True)
    console.print(board.terminal())
    assert re.search(r"^ref agent-lab/tiny-model-1 \(submitted: submissions/agent-ref\)", console.export_text(), re.M)
    page = render_page(board, {})
    reference_block = page.split('<tbody class="reference">', 1)[1].split("</tbody>", 1)[0]  # the main table's
    assert "agent-ref" in reference_block and '<a class="folder" href="../submissions/agent-ref/">' in reference_block
    assert "agent-ref" not in page.split('<tbody class="contender">', 1)[1].split("</tbody>", 1)[0]


@pytest.mark.parametrize(
    "provider", ["Rules", "RULES", "rules.", "Annotator", "ANNOTATORS", "human_", "h-u-m-a-n", "HumanLabels", "my-gold"]
)
def test_a_provider_spelling_a_reference_is_refused_as_a_contender_and_pointed_to_the_role(tmp_path, provider):
    """Issue 34 item 14: not a case-sensitive prefix test: any spelling of rules/annotator/human/gold is refused for a
    contender (through the CLI), with the way to declare a reference; as role = "reference" the same name is refused
    too (2026-12-02: a submitted reference named rules/baseline stood beside the real row)."""
    from tests.cli_in_process import run_cli

    subs = tmp_path / "submissions"
    _folder(subs, "poser", _rows(), TOML.replace('"acme"', f'"{provider}"'))
    refused = run_cli("submission", "check", "poser", "--dir", str(subs))
    assert refused.returncode == 1
    assert f"submission.toml:2: field 'provider': '{provider}' names a reference" in refused.stderr
    assert 'role = "reference"' in refused.stderr
    _folder(subs, "declared", _rows(), REFERENCE_TOML.replace('"agent-lab"', f'"{provider}"'))
    declared = run_cli("submission", "check", "declared", "--dir", str(subs))
    assert declared.returncode == 1 and f"field 'provider': '{provider}' names a reference" in declared.stderr
    _folder(subs, "named", _rows(), REFERENCE_TOML)
    assert run_cli("submission", "check", "named", "--dir", str(subs)).returncode == 0


@pytest.mark.parametrize(
    "source", ["gold", "rules_baseline__zero_shot__test", "local_qwen2.5-coder-0.5b__zero_shot__test"]
)
def test_a_copy_of_gold_or_of_a_published_run_is_refused_saying_how_near(tmp_path, source):
    """Issue 34 item 14: the records of gold, or of a published run, sent as "acme/smart-7b" (all of them, or all but a
    few papers changed) are refused by check and add, naming the source and the agreement; the board stays."""
    from paperfields.core.runlog import read_predictions
    from tests.cli_in_process import run_cli

    if source == "gold":
        rows = _gold_rows()
    else:
        lines = read_predictions(ROOT / "results" / "runs" / source / "predictions.jsonl")
        rows = [
            {"paper_id": x.paper_id, "record": x.record, **({} if x.record else {"failure": x.failure.value})}
            for x in lines
        ]
    rows = [r if i >= 2 else {**r, "record": {}} for i, r in enumerate(rows)]  # two papers changed: nearly a copy
    subs, runs = tmp_path / "submissions", tmp_path / "results" / "runs"
    runs.mkdir(parents=True)
    for name in ("rules_baseline__zero_shot__test", "local_qwen2.5-coder-0.5b__zero_shot__test"):
        shutil.copytree(ROOT / "results" / "runs" / name, runs / name)
    _folder(subs, "smart", rows, TOML.replace('"tiny-model-1"', '"smart-7b"'))
    before = _snapshot(runs.parent)
    checked = run_cli("submission", "check", "smart", "--dir", str(subs), "--runs-dir", str(runs))
    what = "gold" if source == "gold" else f"the published run {source}"
    found = re.search(
        rf"the records agree with {re.escape(what)} on (\d+\.\d)% of the \(paper, field\) pairs", checked.stderr
    )
    assert checked.returncode == 1 and found, checked.stderr
    assert 95.0 <= float(found.group(1)) < 100.0  # nearly, not exactly: two papers differ
    added = run_cli("submission", "add", "smart", "--dir", str(subs), "--runs-dir", str(runs), "--no-plots")
    assert added.returncode == 1 and what in added.stderr and _snapshot(runs.parent) == before


def test_a_ranked_headline_above_099_is_never_shown_without_a_mark(tmp_path):
    """Issue 34 item 14: however it got there (a copy the check missed, a run of one's own), a ranked row above 0.99
    carries a visible mark on the Markdown, terminal and README boards; a reference that high does not need one."""
    from rich.console import Console

    from paperfields.scoring.board import NEAR_PERFECT_MARK
    from paperfields.summary import board_summary

    runs = _board_dir(tmp_path)
    add_submission(_folder(tmp_path / "submissions", "fine", _rows()), GOLD, CORPUS, runs)
    scores = collect_scores(runs)
    fine = next(s for s in scores if s.submitted)
    perfect = fine.model_copy(update={"run_id": "perfect", "headline": 0.995, "submitted": None})
    board = Board.of([*scores, perfect], GOLD)
    marked = [line for line in board.markdown().splitlines() if NEAR_PERFECT_MARK in line]
    assert len(marked) == 1 and marked[0].startswith("| 1 | perfect |")
    console = Console(width=200, record=True)
    console.print(board.terminal())
    assert sum(NEAR_PERFECT_MARK in line for line in console.export_text().splitlines()) == 1
    assert NEAR_PERFECT_MARK in board_summary(board) and board.rows[0]["run_id"] == "perfect"


@pytest.mark.parametrize("name", ["../outside", "/tmp/outside", "good/../good", "a/b", "Good", ".hidden", "good/"])
def test_a_name_that_is_not_a_folder_directly_under_submissions_is_refused(tmp_path, name):
    """Issue 34 item 13, through the CLI: check and add take plain names only: no way out of the folder."""
    from tests.cli_in_process import run_cli

    subs, runs = tmp_path / "submissions", _board_dir(tmp_path)
    _folder(subs, "good", _rows())
    _folder(tmp_path, "outside", _rows())
    for command in (["check", name], ["add", name, "--runs-dir", str(runs), "--no-plots"]):
        proc = run_cli("submission", *command, "--dir", str(subs))
        assert proc.returncode == 1 and "is not a submission name" in proc.stderr, (command, proc.stderr)
    assert not (runs / "outside__submitted__test").exists() and not (runs.parent / "leaderboard.md").exists()


def test_symlinked_submissions_and_files_are_refused_and_nothing_is_read_through_them(tmp_path):
    """Issue 34 item 13: a link to another submission, to a folder outside, a linked file (to a secret outside: its
    value is never printed) and a folder inside a submission are all refused by check and add; the board stays."""
    from tests.cli_in_process import run_cli

    subs, runs = tmp_path / "submissions", _board_dir(tmp_path)
    _folder(subs, "good", _rows())
    outside = _folder(tmp_path / "elsewhere", "outside", _rows())
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.write_text('model = "sk-proj-THE-SECRET-VALUE-1234567890"\n')
    (subs / "to-good").symlink_to(subs / "good", target_is_directory=True)
    (subs / "to-outside").symlink_to(outside, target_is_directory=True)
    linked = _folder(subs, "linked-file", _rows())
    (linked / "submission.toml").unlink()
    (linked / "submission.toml").symlink_to(secret)
    nested = _folder(subs, "nested", _rows())
    (nested / "more").mkdir()
    before = _snapshot(runs.parent)
    checked = run_cli("submission", "check", "--dir", str(subs))
    assert checked.returncode == 1 and "ok good: 60 test papers" in checked.stdout
    for name in ("to-good", "to-outside"):
        assert (
            f"{subs / name}: a symbolic link; a submission is a real folder directly under submissions/"
            in checked.stderr
        )
    assert f"{linked / 'submission.toml'}: a symbolic link; a submission holds regular files" in checked.stderr
    assert f"{nested / 'more'}: a folder; a submission holds regular files only" in checked.stderr
    assert "THE-SECRET-VALUE" not in checked.stdout + checked.stderr
    for name in ("to-good", "to-outside", "linked-file", "nested"):
        proc = run_cli("submission", "add", name, "--dir", str(subs), "--runs-dir", str(runs), "--no-plots")
        assert proc.returncode == 1 and "THE-SECRET-VALUE" not in proc.stdout + proc.stderr, name
    assert _snapshot(runs.parent) == before


def _result_row(row: dict, value: str) -> str:
    """``row`` as a JSON line whose record holds one result with
    ``value`` written verbatim (a token json.dumps never writes)."""
    result = {"metric": "accuracy", "value": 0.0, "unit": "percent", "kind": "absolute"}
    text = json.dumps({**row, "record": {**row["record"], "results": [result]}})
    return text.replace('"value": 0.0', f'"value": {value}')


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_a_non_finite_number_is_refused_naming_file_line_and_field(tmp_path, token):
    """Issue 34 item 15, through the CLI: the strict reader refuses what Python's json would read as nan or inf."""
    from tests.cli_in_process import run_cli

    rows = _rows()
    rows[2] = _result_row(rows[2], token)
    folder = _folder(tmp_path / "submissions", "nan", rows)
    proc = run_cli("submission", "check", "nan", "--dir", str(tmp_path / "submissions"))
    assert proc.returncode == 1
    assert (
        f"{folder / 'predictions.jsonl'}:3: field 'record.results[0].value': {token} is not a finite JSON number"
        in proc.stderr
    )
    # the paper of the refused line is named once, as invalid there, never also as missing
    assert "missing" not in proc.stderr
    runs = _board_dir(tmp_path)
    added = run_cli("submission", "add", "nan", "--dir", str(tmp_path / "submissions"), "--runs-dir", str(runs))
    assert added.returncode == 1 and not (runs / "nan__submitted__test").exists()


def test_a_deeply_nested_line_an_oversize_toml_and_a_bom_get_clear_errors(tmp_path):
    """Issue 34 item 15 and issue 33: a 20,000-deep line (and one 40 deep) are refused naming the line, no
    RecursionError traceback; submission.toml is capped at 64 KiB before it is parsed; a BOM is named as one."""
    from tests.cli_in_process import run_cli

    subs = tmp_path / "submissions"
    rows = _rows()
    deep = _folder(
        subs, "deep", rows[:5] + ['{"paper_id": "x", "record": ' + "[" * 20000 + "]" * 20000 + "}"] + rows[6:]
    )
    _folder(
        subs, "forty", rows[:5] + ['{"paper_id": "x", "record": {"tasks": ' + "[" * 40 + "]" * 40 + "}}"] + rows[6:]
    )
    _folder(subs, "huge", _rows(), TOML + 'notes = "' + "x" * 70000 + '"\n')
    bom = _folder(subs, "bom", _rows())
    (bom / "submission.toml").write_bytes(b"\xef\xbb\xbf" + TOML.encode())
    deep_toml = _folder(subs, "deep-toml", _rows(), TOML + "x = " + "[" * 20000 + "]" * 20000 + "\n")
    proc = run_cli("submission", "check", "--dir", str(subs))
    assert proc.returncode == 1 and "Traceback" not in proc.output and "RecursionError" not in proc.output
    assert f"{deep / 'predictions.jsonl'}:6: nested too deep to read" in proc.stderr
    assert re.search(r"forty/predictions.jsonl:6: nested more than 32 levels deep", proc.stderr)
    assert "huge/submission.toml: more than the 65536 bytes a submission's submission.toml may hold" in proc.stderr
    assert f"{bom / 'submission.toml'}:1: starts with a byte order mark (BOM" in proc.stderr
    assert f"{deep_toml / 'submission.toml'}: nested too deep to read" in proc.stderr


KEYS = {
    "openai": "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5q",
    "huggingface": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWx",
    "github": "ghp_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "google": "AIza" + "SyA-1234567890abcdefghijklmnopqrstu",
}


@pytest.mark.parametrize("kind", sorted(KEYS))
def test_a_key_shaped_string_in_a_submission_is_refused_and_never_reaches_results(tmp_path, kind):
    """Issue 34 item 17 (submission side), through the CLI: a key in notes (or any text field, or a record's string)
    is refused by check and add, naming file, line and field but never printing the key; nothing is written to the
    runs folder, so it cannot reach scores.json or manifest.json."""
    from tests.cli_in_process import run_cli

    key = KEYS[kind]
    subs, runs = tmp_path / "submissions", _board_dir(tmp_path)
    noted = _folder(subs, "noted", _rows(), TOML + f'notes = "served with {key} at temperature 0"\n')
    rows = _rows()
    rows[3] = {**rows[3], "record": {**rows[3]["record"], "tasks": [f"extraction {key}"]}}
    recorded = _folder(subs, "recorded", rows)
    proc = run_cli("submission", "check", "--dir", str(subs))
    assert proc.returncode == 1 and key not in proc.output
    assert f"{noted / 'submission.toml'}:7: field 'notes': holds what looks like" in proc.stderr
    assert f"{recorded / 'predictions.jsonl'}:4: field 'record.tasks[0]': holds what looks like" in proc.stderr
    for name in ("noted", "recorded"):
        added = run_cli("submission", "add", name, "--dir", str(subs), "--runs-dir", str(runs), "--no-plots")
        assert added.returncode == 1 and key not in added.output and not (runs / f"{name}__submitted__test").exists()
    assert not any(key in p.read_text(errors="replace") for p in runs.parent.rglob("*") if p.is_file())


@pytest.mark.parametrize("kind", ["aws", "openai"])
def test_a_key_in_a_shared_prompt_file_is_refused_too(tmp_path, kind):
    """Found by a new user's walkthrough: a key inside prompt.txt (named by `prompt = "prompt.txt"`) passed check and
    add: results/ kept only its hash, but the pull request would commit the file. Every file of the folder is read
    for key shapes; the problem names file and line, never the key."""
    from tests.cli_in_process import run_cli

    key = KEYS[kind]
    subs = tmp_path / "submissions"
    folder = _folder(subs, "prompted", _rows(), TOML + 'prompt = "prompt.txt"\n')
    (folder / "prompt.txt").write_text(f"Extract the record.\nauth: {key}\n", encoding="utf-8")
    proc = run_cli("submission", "check", "--dir", str(subs))
    assert proc.returncode == 1 and key not in proc.output
    assert f"{folder / 'prompt.txt'}:2: holds what looks like" in proc.stderr
    (folder / "prompt.txt").write_text("Extract the record.\n", encoding="utf-8")
    assert run_cli("submission", "check", "--dir", str(subs)).returncode == 0


def test_add_regenerates_results_and_the_readme_board_block_on_a_clone(tmp_path):
    """Issue 33, CONTRIBUTING step 3: on a fresh clone, `submission add NAME` (default folders) scores the submission
    into results/runs and rewrites results/ and README.md's board block as `paperfields leaderboard` does; the row is
    there, marked submitted and linking its folder; nothing else in the clone changes."""
    import os

    from tests.cli_in_process import run_cli

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    _folder(clone / "submissions", "acme-tiny", _rows())
    env = dict(os.environ, PAPERFIELDS_ROOT=str(clone))
    added = run_cli("submission", "add", "acme-tiny", "--no-plots", env=env)
    assert added.returncode == 0, added.stderr
    readme = (clone / "README.md").read_text()
    block = readme.split("<!-- board:start")[1].split("<!-- board:end -->")[0]
    assert "| 1 | acme/tiny-model-1 (submitted) [submissions/acme-tiny](submissions/acme-tiny/) |" in block
    status = subprocess.run(
        ["git", "-C", str(clone), "status", "--porcelain"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    changed = {line[3:].split("/")[0] for line in status}
    assert changed == {"README.md", "results", "submissions"}, status
    assert " M results/leaderboard.md" in status and "?? results/runs/acme-tiny__submitted__test/" in status


@pytest.mark.parametrize(
    "toml, expected",
    [
        (
            TOML.replace('"tiny-model-1"', '"frontier-llm-agent-session (reference)"'),
            r"submission.toml:1: field 'model': 'frontier-llm-agent-session \(reference\)' is not a plain model id",
        ),
        (
            TOML.replace('"tiny-model-1"', '"annotator/second-blind"'),
            r"submission.toml:1: field 'model': 'annotator/second-blind' names a reference \(annotator",
        ),
        (
            TOML.replace('"tiny-model-1"', '"rules/baseline"'),
            r"submission.toml:1: field 'model': 'rules/baseline' names a reference \(rules",
        ),
        (
            TOML.replace('"tiny-model-1"', '"Qwen//x"'),
            r"submission.toml:1: field 'model': 'Qwen//x' is not a plain model id",
        ),
        (TOML.replace('"tiny-model-1"', '"ruIes"'), r"submission.toml:1: field 'model': 'ruIes' names a reference"),
        (TOML.replace('"tiny-model-1"', '"g0ld-labels"'), r"field 'model': 'g0ld-labels' names a reference \(gold"),
        (TOML.replace('"acme"', '"ruIes"'), r"submission.toml:2: field 'provider': 'ruIes' names a reference \(rules"),
        (TOML.replace('"acme"', '"ru1es"'), r"submission.toml:2: field 'provider': 'ru1es' names a reference \(rules"),
    ],
)
def test_a_model_posing_as_a_reference_or_a_board_mark_is_refused_naming_line_and_field(tmp_path, toml, expected):
    """Walkthrough bug 1: the model field was not checked ("(reference)" reached the board's label; a slash made
    annotator/second-blind a reference's backend) and a capital I or a 1 passed for the l of rules."""
    folder = _folder(tmp_path, "poser", _rows(), toml)
    problems = check_submission(folder, GOLD, CORPUS).problems
    assert len(problems) == 1 and re.search(expected, problems[0]), problems


@pytest.mark.parametrize(
    "model",
    [
        "gpt-4o-2024-08-06",
        "Qwen2.5-Coder-7B-Instruct",
        "llama3:8b",
        "OpenAI-o1",
        "Qwen/Qwen2.5-7B-Instruct",  # a hub id: what from-run writes for vllm/Qwen/Qwen2.5-7B-Instruct
        "meta-llama/llama-3.1-8b-instruct",  # OpenRouter's, from openrouter/meta-llama/llama-3.1-8b-instruct
    ],
)
def test_real_model_ids_and_a_grammar_mode_pass(tmp_path, model):
    """The model check refuses marks, not real ids (a capital I of OpenAI is no reference); the local grammar's mode
    ids (compact-v2, compact-v2+canonical) are modes."""
    toml = TOML.replace('"tiny-model-1"', f'"{model}"') + 'mode = "compact-v2+canonical"\n'
    assert check_submission(_folder(tmp_path, "real", _rows(), toml), GOLD, CORPUS).problems == []


def test_a_contender_may_not_reuse_a_references_backend(tmp_path):
    """Walkthrough bug 1: provider/model agent-session/frontier-llm-agent-session (the published AI agent session
    references' backend) as a contender would be ranked under a reference's name; refused, against the published
    runs and against a reference submission beside it. Declared a reference, the same backend passes."""
    agent = 'model = "frontier-llm-agent-session"\nprovider = "agent-session"\n'
    toml = agent + TOML.split("\n", 2)[2]
    published = check_submission(_folder(tmp_path, "agentish", _rows(), toml), GOLD, CORPUS, ROOT / "results" / "runs")
    assert len(published.problems) == 1 and re.search(
        r"agentish/submission.toml:1: field 'model': 'agent-session/frontier-llm-agent-session' is the backend of "
        r"the published reference run agent-[a-z-]+__submitted__test on the board",
        published.problems[0],
    ), published.problems
    subs = tmp_path / "subs"
    _folder(subs, "the-ref", _rows(), REFERENCE_TOML)
    mine = _folder(subs, "mine", _rows(), TOML.replace('"acme"', '"agent-lab"'))
    assert [
        re.sub(r".*submission.toml", "submission.toml", p) for p in check_submission(mine, GOLD, CORPUS).problems
    ] == [
        "submission.toml:1: field 'model': 'agent-lab/tiny-model-1' is the backend of the reference submission the-ref "
        'on the board; a contender names its own model (or says role = "reference" with its reference_reason)'
    ]
    declared = _folder(subs, "also-ref", _rows(), REFERENCE_TOML)
    assert check_submission(declared, GOLD, CORPUS).problems == []


@pytest.mark.parametrize(
    "name, expected",
    [
        ("rules-baseline", "'rules-baseline' starts with 'rules', which names a reference of the board"),
        ("annotator", "'annotator' starts with 'annotator', which names a reference"),
        ("gold.v2", "'gold.v2' starts with 'gold', which names a reference"),
        ("ru1es-x", "'ru1es-x' starts with 'rules', which names a reference"),
        ("rules_baseline__zero_shot__test", "'rules_baseline__zero_shot__test' holds '__', which separates"),
        ("mine__x", "'mine__x' holds '__', which separates the parts of a run id"),
    ],
)
def test_a_folder_name_posing_as_a_reference_or_a_run_id_is_refused(tmp_path, name, expected):
    """Walkthrough bug 2: rules-baseline and rules_baseline__zero_shot__test passed `submission check`; refused by the
    command, and from-run refuses the same --name."""
    from tests.cli_in_process import run_cli

    subs = tmp_path / "submissions"
    folder = _folder(subs, name, _rows())
    proc = run_cli("submission", "check", name, "--dir", str(subs))
    assert proc.returncode == 1 and f"{folder}: the folder name {expected}" in proc.stderr, proc.stderr
    assert submissions.name_problem("my-rules") is None and submissions.name_problem("goldfish") is None


def test_a_bom_on_the_first_predictions_line_is_refused_like_on_any_other(tmp_path):
    """Walkthrough bug 3: a BOM at the start of predictions.jsonl was decoded away (the same bytes on line 10 are "not
    JSON"); refused like submission.toml's, by `submission check` and by `score --predictions`."""
    from tests.cli_in_process import run_cli

    subs = tmp_path / "submissions"
    folder = _folder(subs, "bommed", _rows())
    path = folder / "predictions.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    bom = f"{path}:1: starts with a byte order mark (BOM, bytes EF BB BF), which JSON Lines does not allow"
    assert check_submission(folder, GOLD, CORPUS).problems == [bom + "; save the file as UTF-8 without BOM"]
    checked = run_cli("submission", "check", "bommed", "--dir", str(subs))
    assert checked.returncode == 1 and bom in checked.stderr
    scored = run_cli("score", "--predictions", str(path), "--name", "bommed", "--runs-dir", str(tmp_path / "runs"))
    assert scored.returncode == 2 and scored.stderr.startswith(f"error: {bom}") and "Traceback" not in scored.output
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_from_run_of_a_local_grammar_run_writes_a_toml_whose_only_problem_is_the_placeholder(tmp_path):
    """Walkthrough bug 4: from-run copied mode = "compact-v2" (the local run's real mode) and its own check refused it
    ("String should match pattern '^[a-z_]+$'"); the pattern now admits the grammar's mode ids."""
    run = ROOT / "results" / "runs" / "local_qwen2.5-coder-0.5b__zero_shot__test"
    subs = tmp_path / "submissions"
    folder = submissions.submission_from_run(run, "my-qwen", subs, GOLD, CORPUS)
    toml = (folder / "submission.toml").read_text()
    assert 'mode = "compact-v2"' in toml and 'provider = "local"' in toml
    problems = check_submission(folder, GOLD, CORPUS).problems
    assert len(problems) == 1 and re.search(r"submission.toml:\d+: field 'submitted_by': still 'FILL IN'", problems[0])
    (folder / "submission.toml").write_text(re.sub(r'submitted_by = ".*"', 'submitted_by = "a tester"', toml))
    assert check_submission(folder, GOLD, CORPUS).problems == []
    with pytest.raises(SubmissionError, match="--name 'rules-qwen' starts with 'rules'"):
        submissions.submission_from_run(run, "rules-qwen", subs, GOLD, CORPUS)


@pytest.mark.parametrize(
    "provider, model, field",
    [("rules", "baseline", "provider"), ("annotator", "second-blind", "provider"), ("human", "x", "provider")],
)
def test_a_submitted_reference_may_not_take_the_name_of_a_row_made_here(tmp_path, provider, model, field):
    """An outsider's attempt: with role = "reference", provider rules and model baseline passed the check and
    stood on the board as a second 'rules/baseline (reference)' row beside the real one. The words that name the
    rows made here are refused whatever the role; a reference that names who made it passes."""
    reference = 'role = "reference"\nreference_reason = "a second labeling by a lab"\n'
    toml = TOML.replace('"tiny-model-1"', f'"{model}"').replace('"acme"', f'"{provider}"') + reference
    problems = check_submission(_folder(tmp_path, "poser", _rows(), toml), GOLD, CORPUS).problems
    assert len(problems) == 1 and f"field '{field}': '{provider}' names a reference" in problems[0], problems
    named = TOML.replace('"acme"', '"acme-lab"') + reference
    assert check_submission(_folder(tmp_path, "named", _rows(), named), GOLD, CORPUS).ok


def test_a_duplicate_key_or_an_integer_beyond_a_float_is_refused_naming_line_and_field(tmp_path):
    """An outsider's attempts: a line ending in `"record": null` after a full record passed as the null (the last
    key won), and a 400-digit integer value passed the check and was then dropped from the record when scored."""
    rows = _rows()
    doubled = json.dumps(rows[0])[:-1] + ', "record": null}'
    huge = json.loads(json.dumps(rows[1]))
    huge["record"]["results"] = [{"metric": "accuracy", "value": 1, "unit": "percent", "kind": "absolute"}]
    big = json.dumps(huge).replace('"value": 1,', '"value": ' + "9" * 400 + ",")
    problems = check_submission(_folder(tmp_path, "tricks", [doubled, big, *rows[2:]], TOML), GOLD, CORPUS).problems
    assert any(
        p.endswith(
            "predictions.jsonl:1: field 'record': the key appears twice in one object; give each key "
            "once (a JSON reader keeps one of the two without a word)"
        )
        for p in problems
    ), problems
    assert any(
        "predictions.jsonl:2: field 'record.results[0].value'" in p and "refused, not mended" in p for p in problems
    ), problems


def test_a_run_date_after_today_is_refused(tmp_path):
    """An outsider's attempt: date_run = 2099-01-01 passed the check."""
    toml = TOML.replace("2026-11-30", "2099-01-01")
    problems = check_submission(_folder(tmp_path, "future", _rows(), toml), GOLD, CORPUS).problems
    assert len(problems) == 1 and "field 'date_run': 2099-01-01 is after today" in problems[0], problems


@pytest.mark.parametrize(
    "char, named", [("\x00", "U+0000 (NUL)"), ("\x1b", "U+001B (escape)"), ("\r", "U+000D (carriage return)")]
)
def test_a_control_character_in_a_string_value_is_refused_naming_file_line_and_field(tmp_path, char, named):
    """An outsider's attempt: "\\u0000" (and other escaped controls) inside a record's string passed the check and
    reached the board invisibly; refused, by `check` and `add`, naming line and field. Tab and newline pass."""
    from tests.cli_in_process import run_cli

    rows = _rows()
    rows[3]["record"]["method_name"] = f"Fast{char}Net"
    subs = tmp_path / "submissions"
    folder = _folder(subs, "ctrl", rows)
    expected = (
        f"{folder / 'predictions.jsonl'}:4: field 'record.method_name': holds the control character {named} at "
        "character 5 of the value; a value is plain text (tab and newline, written \\t and \\n, are the only "
        "controls allowed): remove it"
    )
    assert check_submission(folder, GOLD, CORPUS).problems == [expected]
    runs = _board_dir(tmp_path)
    before = _snapshot(runs.parent)
    added = run_cli("submission", "add", "ctrl", "--dir", str(subs), "--runs-dir", str(runs), "--no-plots")
    assert added.returncode == 1 and expected in added.stderr and _snapshot(runs.parent) == before
    rows[3]["record"]["method_name"] = "Fast\tNet\nv2"
    assert check_submission(_folder(subs, "plain", rows), GOLD, CORPUS).ok


def test_crlf_line_endings_and_blank_lines_are_refused_naming_the_line_by_check_and_add(tmp_path):
    """An outsider's attempt: CR LF line endings and blank lines passed silently. Both are refused, by `check` and
    `add` alike: CR LF once for the file (its first line, how many lines, how to convert), each blank line by its
    number; the line feed ending the last line is no blank line."""
    from tests.cli_in_process import run_cli

    subs = tmp_path / "submissions"
    crlf = _folder(subs, "crlf", _rows())
    path = crlf / "predictions.jsonl"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    windows = (
        f"{path}:1: ends with CR LF (Windows line endings; every line does); a line of JSON Lines ends with LF alone: "
        "convert the file (`dos2unix predictions.jsonl`) or write it with LF (in Python: open(path, 'w', "
        "newline='\\n'))"
    )
    assert check_submission(crlf, GOLD, CORPUS).problems == [windows]
    one = _folder(subs, "one-crlf", _rows())
    lines = (one / "predictions.jsonl").read_text().split("\n")
    (one / "predictions.jsonl").write_text("\n".join(lines[:7] + [lines[7] + "\r"] + lines[8:]))
    assert check_submission(one, GOLD, CORPUS).problems == [
        windows.replace(f"{path}:1:", f"{one / 'predictions.jsonl'}:8:").replace("; every line does", "")
    ]
    rows = _rows()
    blank = _folder(subs, "blank", rows[:3] + ["", "  "] + rows[3:])
    blanks = [
        f"{blank / 'predictions.jsonl'}:{n}: a blank line; every line is one paper's JSON object, blank lines are "
        'refused (a paper your system failed is {"paper_id": ..., "record": null}): remove the line'
        for n in (4, 5)
    ]
    assert check_submission(blank, GOLD, CORPUS).problems == blanks
    runs = _board_dir(tmp_path)
    before = _snapshot(runs.parent)
    for name, expected in (("crlf", windows), ("blank", blanks[0])):
        added = run_cli("submission", "add", name, "--dir", str(subs), "--runs-dir", str(runs), "--no-plots")
        assert added.returncode == 1 and expected in added.stderr, added.stderr
    assert _snapshot(runs.parent) == before


def test_a_hard_link_is_refused_like_a_symbolic_link_and_nothing_is_read_through_it(tmp_path):
    """An outsider's attempt: a hard link passed as a regular file, and a hard link may be another name of a file
    outside the folder (gold). Refused naming the file, for predictions.jsonl, submission.toml and a file beside."""
    import os

    secret = tmp_path / "outside" / "gold-copy.jsonl"
    secret.parent.mkdir()
    secret.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    folder = _folder(tmp_path / "submissions", "linked", [])
    (folder / "predictions.jsonl").unlink()
    os.link(secret, folder / "predictions.jsonl")
    toml = tmp_path / "outside" / "submission.toml"
    toml.write_text(TOML)
    (folder / "submission.toml").unlink()
    os.link(toml, folder / "submission.toml")
    (tmp_path / "outside" / "prompt.txt").write_text("THE-SECRET-VALUE\n")
    os.link(tmp_path / "outside" / "prompt.txt", folder / "prompt.txt")
    problems = check_submission(folder, GOLD, CORPUS).problems
    assert problems == [
        f"{folder / name}: a hard link (one of 2 names of the same file, which may be outside the folder); a "
        "submission holds files of its own: put a copy in its place (cp, not ln)"
        for name in ("submission.toml", "predictions.jsonl", "prompt.txt")
    ]
    assert not any("THE-SECRET-VALUE" in p for p in problems)


def test_a_bom_inside_the_file_names_its_line_and_the_fix(tmp_path):
    """An outsider's attempt: two files saved with a BOM joined by `cat`: the BOM at the start of the second part
    was "not JSON (Unexpected UTF-8 BOM (decode using utf-8-sig))" (no help: the BOM is in the middle) and its paper
    was also "missing". Now one problem: the BOM, its line and how to remove it."""
    rows = _rows()
    folder = _folder(tmp_path, "joined", rows)
    path = folder / "predictions.jsonl"
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:30] + [b"\xef\xbb\xbf" + lines[30]] + lines[31:]))
    assert check_submission(folder, GOLD, CORPUS).problems == [
        f"{path}:31: starts with a byte order mark (BOM, bytes EF BB BF) in the middle of the file, which JSON Lines "
        "does not allow (files saved with a BOM and then joined, as by `cat a.jsonl b.jsonl`, leave one where each "
        "began): delete those three bytes at the start of line 31, or save each part as UTF-8 without BOM before "
        "joining them"
    ]


@pytest.mark.parametrize(
    "kind",
    ["oversize", "not JSON", "nan in a bare token", "duplicate key", "deep"],
)
def test_a_line_refused_unread_is_its_papers_one_problem_not_also_missing(tmp_path, kind):
    """An outsider's attempts: a 70 KB line, a line that is not JSON (a bare nan), a duplicate key each reported
    the line and then its paper as missing: one fault twice. The paper the line names is now reported once."""
    rows = _rows()
    pid = rows[1]["paper_id"]
    line = {
        "oversize": json.dumps({**rows[1], "record": {"tasks": ["x" * 70000]}}),
        "not JSON": _result_row(rows[1], "nan"),
        "nan in a bare token": _result_row(rows[1], "-NaN"),
        "duplicate key": json.dumps(rows[1])[:-1] + ', "record": null}',
        "deep": json.dumps({"paper_id": pid, "record": None})[:-1] + ', "x": ' + "[" * 20000 + "]" * 20000 + "}",
    }[kind]
    problems = check_submission(_folder(tmp_path, "once", [rows[0], line, *rows[2:]]), GOLD, CORPUS).problems
    assert len(problems) == 1 and "predictions.jsonl:2: " in problems[0], problems
    assert "missing" not in problems[0]


@pytest.mark.parametrize(
    "name, provider, model, expected",
    [
        ("mine", "agent_session", "tiny-model-1", "field 'provider': 'agent_session' reads as 'agent-session'"),
        ("mine", "Agent-Session", "tiny-model-1", "field 'provider': 'Agent-Session' reads as 'agent-session'"),
        ("mine", "AgentSession", "tiny-model-1", "field 'provider': 'AgentSession' reads as 'agent-session'"),
        ("mine", "agent-sessi0n", "tiny-model-1", "field 'provider': 'agent-sessi0n' reads as 'agent-session'"),
        ("mine", "agent-sesion", "tiny-model-1", "field 'provider': 'agent-sesion' reads as 'agent-session'"),
        ("mine", "agent-session", "gpt-4o", "field 'provider': 'agent-session' reads as 'agent-session'"),
        (
            "mine",
            "acme",
            "frontier-llm-agent-sessi0n",
            "field 'model': 'frontier-llm-agent-sessi0n' reads as 'frontier-llm-agent-session'",
        ),
        ("mine", "acme", "agent-session-v2", "field 'model': 'agent-session-v2' reads as 'agent-session'"),
        ("agent-zero-sh0t", "acme", "tiny-model-1", "the folder name 'agent-zero-sh0t' reads as 'agent-zero-shot'"),
        ("my-agent-session", "acme", "tiny-model-1", "the folder name 'my-agent-session' reads as 'agent-session'"),
        # a confusable (Cyrillic а) never reaches the board: provider and model are plain ASCII ids
        ("mine", "\u0430gent-session", "tiny-model-1", "field 'provider': String should match pattern"),
    ],
)
def test_a_contender_whose_name_reads_as_an_agent_reference_is_refused(tmp_path, name, provider, model, expected):
    """An outsider's attempt: agent_session, Agent-Session, agent-sessi0n as a contender's provider (or a model or
    folder named like the AI agent session references) passed: only the exact backend was refused. Case,
    separators, look-alike letters and near spellings (rapidfuzz) are refused now, once, on the field's line; the
    same names declared a reference pass."""
    from tests.cli_in_process import run_cli

    subs = tmp_path / "submissions"
    toml = TOML.replace('"acme"', json.dumps(provider)).replace('"tiny-model-1"', f'"{model}"')
    folder = _folder(subs, name, _rows(), toml)
    problems = check_submission(folder, GOLD, CORPUS, ROOT / "results" / "runs").problems
    assert len(problems) == 1 and expected in problems[0], problems
    if "reads as" in expected:
        assert "a name of" in problems[0] and 'role = "reference"' in problems[0]
        checked = run_cli("submission", "check", name, "--dir", str(subs))
        assert checked.returncode == 1 and expected in checked.stderr, checked.stderr
        reference = toml + 'role = "reference"\nreference_reason = "a second labeling by an agent"\n'
        (folder / "submission.toml").write_text(reference)
        assert check_submission(folder, GOLD, CORPUS, ROOT / "results" / "runs").problems == []


@pytest.mark.parametrize(
    "backend",
    [
        "openai/gpt-4o-mini",
        "local/qwen2.5-coder-1.5b",
        "anthropic/claude-3-5-sonnet",
        "meta-llama/Llama-3.1-8B-Instruct",
        "vllm/Qwen/Qwen2.5-7B-Instruct",
        "mistralai/Mistral-7B-Instruct-v0.3",
    ],
)
def test_real_model_ids_beside_the_agent_references_pass(tmp_path, backend):
    """The look-alike check refuses names posing as a reference, not real ids (against the published runs and a
    reference submission beside it)."""
    provider, _, model = backend.partition("/")
    subs = tmp_path / "submissions"
    _folder(subs, "the-ref", _rows(), REFERENCE_TOML)
    toml = TOML.replace('"acme"', f'"{provider}"').replace('"tiny-model-1"', f'"{model}"')
    folder = _folder(subs, provider.replace("/", "-").lower() + "-run", _rows(), toml)
    assert check_submission(folder, GOLD, CORPUS, ROOT / "results" / "runs").problems == []


def test_a_control_character_in_a_submission_toml_value_is_refused_naming_line_and_field(tmp_path):
    """submitted_by and notes reach the board: "\\u0000" (TOML allows the escape) or an escape sequence there is
    refused like in a prediction line; a multi-line prompt's newlines pass."""
    toml = TOML.replace('"a test"', '"a\\u001b[31mtest"') + 'prompt = """line one\n\tline two"""\n'
    folder = _folder(tmp_path, "ctrl-toml", _rows(), toml)
    assert check_submission(folder, GOLD, CORPUS).problems == [
        f"{folder / 'submission.toml'}:5: field 'submitted_by': holds the control character U+001B (escape) at "
        "character 2 of the value; a value is plain text (tab and newline, written \\t and \\n, are the only "
        "controls allowed): remove it"
    ]


def _strict_case(kind: str) -> bytes:
    """A predictions file (the test papers' rows) with one fault the strict reader refuses, or none (``plain``)."""
    rows = _rows()
    lines = [json.dumps(r) for r in rows]
    if kind == "control":
        lines[3] = json.dumps({**rows[3], "record": {**rows[3]["record"], "method_name": "Fast\u0000Net"}})
    elif kind == "escape sequence":
        lines[3] = json.dumps({**rows[3], "record": {**rows[3]["record"], "tasks": ["\u001b[31mred"]}})
    elif kind == "nan":
        lines[3] = _result_row(rows[3], "NaN")
    elif kind == "duplicate key":
        lines[3] = lines[3][:-1] + ', "record": null}'
    elif kind == "bom inside":
        lines[3] = "\ufeff" + lines[3]
    elif kind == "key":
        lines[3] = json.dumps(
            {**rows[3], "record": {**rows[3]["record"], "tasks": ["sk-proj-" + "Ab3dEf6hIj9kLm2nOp5q"]}}
        )
    elif kind == "deep":
        lines[3] = lines[3][:-1] + ', "x": ' + "[" * 40 + "]" * 40 + "}"
    text = "\n".join(lines) + "\n"
    if kind == "crlf":
        text = text.replace("\n", "\r\n")
    elif kind == "one crlf":
        text = text.replace("\n", "\r\n", 8).replace("\r\n", "\n", 7)
    elif kind == "blank":
        text = text.replace("\n", "\n\n", 4).replace("\n\n", "\n", 3)
    elif kind == "blank at the end":
        text += "\n"
    return text.encode("utf-8")


STRICT = [
    ("crlf", ":1: ends with CR LF (Windows line endings; every line does)"),
    ("one crlf", ":8: ends with CR LF (Windows line endings); a line of JSON Lines ends with LF alone"),
    ("blank", ":5: a blank line; every line is one paper's JSON object"),
    ("blank at the end", ":61: a blank line"),
    ("control", ":4: field 'record.method_name': holds the control character U+0000 (NUL) at character 5"),
    ("escape sequence", ":4: field 'record.tasks[0]': holds the control character U+001B (escape) at character 1"),
    ("nan", ":4: field 'record.results[0].value': NaN is not a finite JSON number"),
    ("duplicate key", ":4: field 'record': the key appears twice in one object"),
    ("bom inside", ":4: starts with a byte order mark (BOM, bytes EF BB BF) in the middle of the file"),
    ("key", ":4: field 'record.tasks[0]': holds what looks like an OpenAI or Anthropic key"),
    ("deep", ":4: nested more than 32 levels deep"),
]


@pytest.mark.parametrize("kind, expected", STRICT)
def test_score_predictions_refuses_what_the_submission_check_refuses_with_the_same_error(tmp_path, kind, expected):
    """Hole 1 of the submission door: `paperfields score --predictions FILE` read CR LF line ends, blank lines and
    control characters in strings that `submission check` refuses (all three scored and written as a run). One reader
    (scoring.imported.strict_lines) now serves both: the same error, naming file, line and field, from `check`, from
    `score --predictions` (exit 2, nothing written) and from the Python API's `paperfields.score(FILE)`."""
    from paperfields import api
    from paperfields.core.runlog import RunError
    from tests.cli_in_process import run_cli

    folder = _folder(tmp_path / "submissions", "strict", [])
    path = folder / "predictions.jsonl"
    path.write_bytes(_strict_case(kind))
    problems = check_submission(folder, GOLD, CORPUS).problems
    assert len(problems) == 1 and problems[0].startswith(f"{path}{expected}"), problems
    runs = tmp_path / "runs"
    scored = run_cli("score", "--predictions", str(path), "--name", "strict", "--runs-dir", str(runs))
    assert scored.returncode == 2 and scored.stderr.startswith(f"error: {problems[0]}"), scored.stderr
    assert "Traceback" not in scored.output and not runs.exists()
    with pytest.raises(RunError) as info:
        api.score(path)
    assert str(info.value) == problems[0]


@pytest.mark.parametrize("kind", ["plain", "tab and newline", "no line feed at the end"])
def test_score_predictions_accepts_what_the_submission_check_accepts(tmp_path, kind):
    """The near misses of the strict reading pass both doors: LF line ends, a tab and a newline inside a string
    (written \\t and \\n), a last line without its line feed."""
    from tests.cli_in_process import run_cli

    rows = _rows()
    if kind == "tab and newline":
        rows[3]["record"]["method_name"] = "Fast\tNet\nv2"
    folder = _folder(tmp_path / "submissions", "plain", rows)
    path = folder / "predictions.jsonl"
    if kind == "no line feed at the end":
        path.write_bytes(path.read_bytes().removesuffix(b"\n"))
    assert check_submission(folder, GOLD, CORPUS).problems == []
    runs = tmp_path / "runs"
    scored = run_cli("score", "--predictions", str(path), "--name", "plain", "--runs-dir", str(runs), "--json")
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["papers"] == 60 and (runs / "outside_plain__imported__test").is_dir()


@pytest.mark.parametrize("swap", ["rewritten", "replaced by a link"])
def test_add_scores_the_bytes_it_checked_and_a_file_swapped_after_the_check_never_lands(tmp_path, monkeypatch, swap):
    """Hole 2 of the submission door: `submission add` checked the folder, then opened predictions.jsonl again to
    import it, so a file swapped between the check and the import landed unchecked (here: a record holding a NUL and
    a key, or a link to a copy of gold outside the folder). The bytes read once by the check are what is imported,
    and the manifest's imported_sha256 is theirs."""
    import hashlib

    subs = tmp_path / "submissions"
    rows = _rows()
    folder = _folder(subs, "swapper", rows)
    path = folder / "predictions.jsonl"
    checked = path.read_bytes()
    swapped = _rows()
    swapped[0]["record"]["method_name"] = "SWAPPED\u0000IN sk-proj-" + "Ab3dEf6hIj9kLm2nOp5q"
    outside = tmp_path / "outside" / "gold.jsonl"
    outside.parent.mkdir()
    outside.write_text("".join(json.dumps(r) + "\n" for r in _gold_rows()))
    real = submissions.check_submission

    def check_then_swap(*args, **kwargs):
        found = real(*args, **kwargs)
        assert found.ok  # the file as it was when checked
        if swap == "rewritten":
            path.write_text("".join(json.dumps(r) + "\n" for r in swapped))
        else:
            path.unlink()
            path.symlink_to(outside)
        return found

    monkeypatch.setattr(submissions, "check_submission", check_then_swap)
    runs = _board_dir(tmp_path)
    run_dir = add_submission(folder, GOLD, CORPUS, runs)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["import"]["imported_sha256"] == hashlib.sha256(checked).hexdigest()
    landed = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    by_id = {line["paper_id"]: line["record"] for line in landed}
    assert len(by_id) == 60 and all(by_id[r["paper_id"]]["method_full_name"] is None for r in rows)  # not gold's
    assert by_id[rows[0]["paper_id"]]["method_name"] == rows[0]["record"]["method_name"]
    assert not any("SWAPPED" in p.read_text(errors="replace") for p in runs.parent.rglob("*") if p.is_file())


def test_check_and_add_read_each_file_of_a_submission_once(tmp_path, monkeypatch):
    """Hole 2, the other half: after its check read submission.toml, the contender check opened it again (for line
    numbers, following a link), and add opened predictions.jsonl twice more (its lines, its hash). Each file now goes
    the moment it has been read (size limit, regular file, no link) and check and add still succeed on what was read."""
    real = submissions._read_regular
    read: list[str] = []

    def read_then_remove(path, *args):
        data = real(path, *args)
        read.append(path.name)
        path.unlink()
        return data

    monkeypatch.setattr(submissions, "_read_regular", read_then_remove)
    runs = _board_dir(tmp_path)
    folder = _folder(tmp_path / "submissions", "once-only", _rows(), TOML + 'prompt = "prompt.txt"\n')
    (folder / "prompt.txt").write_text("Extract the record.\n")
    run_dir = add_submission(folder, GOLD, CORPUS, runs)
    assert read == ["submission.toml", "predictions.jsonl", "prompt.txt"] and not any(folder.iterdir())
    assert run_dir == runs / "once-only__submitted__test" and (run_dir / "scores.json").is_file()


RUN_TO_SUBMIT = ROOT / "results" / "runs" / "local_qwen2.5-coder-0.5b__zero_shot__test"


@pytest.mark.parametrize(
    "name, expected",
    [
        ("agent-sessi0n", "'agent-sessi0n' reads as 'agent-session', a name of the AI agent session references"),
        ("agent_session", "'agent_session' reads as 'agent-session', a name of the AI agent session references"),
        ("my-agent-session", "'my-agent-session' reads as 'agent-session'"),
        ("agent-zero-sh0t", "'agent-zero-sh0t' reads as 'agent-zero-shot', a name of the published reference run"),
        ("agent-sesion", "'agent-sesion' reads as 'agent-session'"),
        ("rules-x", "'rules-x' starts with 'rules', which names a reference of the board"),
        ("annotator2", "'annotator2' starts with 'annotator', which names a reference of the board"),
        ("hum4n-labels", "'hum4n-labels' starts with 'human', which names a reference of the board"),
    ],
)
def test_from_run_refuses_a_name_posing_as_a_reference_with_the_error_check_gives(tmp_path, name, expected):
    """Hole 3 of the submission door: `submission from-run --name agent-sessi0n` (or agent_session, a name reading as
    a published reference run's) wrote the folder that `submission check` then refused. The same check (one
    function, lookalike_problem, against the same names) refuses it first with the same words, writing nothing;
    check refuses the folder of that name with them too."""
    from tests.cli_in_process import run_cli

    subs = tmp_path / "submissions"
    with pytest.raises(SubmissionError) as info:
        submissions.submission_from_run(RUN_TO_SUBMIT, name, subs, GOLD, CORPUS, ROOT / "results" / "runs")
    assert str(info.value).startswith(f"--name {expected}"), str(info.value)
    assert not subs.exists() or not any(subs.iterdir())
    made = run_cli("submission", "from-run", str(RUN_TO_SUBMIT), "--name", name, "--dir", str(subs))
    assert made.returncode == 1 and f"error: --name {expected}" in made.stderr and not (subs / name).exists()
    folder = _folder(tmp_path / "elsewhere", name, _rows())
    problems = check_submission(folder, GOLD, CORPUS, ROOT / "results" / "runs").problems
    said = str(info.value).removeprefix("--name ")
    assert any(p.startswith(f"{folder}: the folder name {said}") for p in problems), (said, problems)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("\u0430gent-session", "--name '\u0430gent-session': a submission name is lower-case letters"),  # Cyrillic а
        ("rules/baseline", "--name 'rules/baseline': a submission name is lower-case letters"),
        ("annotator/second-blind", "--name 'annotator/second-blind': a submission name is lower-case letters"),
        ("acme\u202eyfed", "--name 'acme\\u202eyfed': holds the invisible character U+202E (right-to-left override)"),
    ],
)
def test_from_run_refuses_a_name_that_is_no_plain_folder_name(tmp_path, name, expected):
    """The other names of hole 3 (a Cyrillic letter, a reference's rules/ or annotator/ path) and of hole 4 (a
    bidirectional control): refused by from-run before anything is written."""
    subs = tmp_path / "submissions"
    with pytest.raises(SubmissionError) as info:
        submissions.submission_from_run(RUN_TO_SUBMIT, name, subs, GOLD, CORPUS, ROOT / "results" / "runs")
    assert str(info.value).startswith(expected), str(info.value)
    assert not subs.exists()


@pytest.mark.parametrize("name", ["acme-session", "agentic-qwen", "my-agent", "zero-shot-qwen", "goldfish-7b"])
def test_from_run_accepts_a_name_near_a_references_that_check_accepts(tmp_path, name):
    """Near misses of the look-alike check pass from-run, and check finds nothing but the placeholder."""
    subs = tmp_path / "submissions"
    folder = submissions.submission_from_run(RUN_TO_SUBMIT, name, subs, GOLD, CORPUS, ROOT / "results" / "runs")
    problems = check_submission(folder, GOLD, CORPUS, ROOT / "results" / "runs").problems
    assert len(problems) == 1 and "field 'submitted_by': still 'FILL IN'" in problems[0], problems


# Every character the submission door refuses as invisible: the bidirectional controls and the zero-width ones.
INVISIBLE_CODES = [0x061C, *range(0x200B, 0x2010), *range(0x202A, 0x202F), 0x2060, *range(0x2066, 0x206A), 0xFEFF]


@pytest.mark.parametrize("code", INVISIBLE_CODES, ids=lambda c: f"U+{c:04X}")
def test_an_invisible_character_in_a_submission_toml_text_is_refused_naming_line_field_and_code_point(tmp_path, code):
    """Hole 4 of the submission door: a right-to-left override or a zero-width character in submitted_by (a text
    the board shows) passed the check: a name can render as another (``a\\u202etset`` is drawn as ``attest``).
    Refused naming file, line, field and the code point, never printing the character."""
    import unicodedata

    toml = TOML.replace('"a test"', f'"a{chr(code)}test"')
    folder = _folder(tmp_path, "hidden", _rows(), toml)
    problems = check_submission(folder, GOLD, CORPUS).problems
    assert problems == [
        f"{folder / 'submission.toml'}:5: field 'submitted_by': holds the invisible character U+{code:04X} "
        f"({unicodedata.name(chr(code)).lower()}) at character 2 of the value; drawn as nothing, it can make one name "
        "read as another (bidirectional controls and zero-width characters are refused): remove it"
    ]
    assert chr(code) not in problems[0]


@pytest.mark.parametrize(
    "key, line",
    [
        ("model", 1),
        ("provider", 2),
        ("strategy", 4),
        ("notes", 7),
        ("prompt", 7),
        ("mode", 7),
        ("model_cutoff", 6),
        ("reference_reason", 8),
    ],
)
def test_an_invisible_character_is_refused_in_every_name_and_text_of_submission_toml(tmp_path, key, line):
    """Hole 4 in every field of submission.toml that holds a name or a text (provider and model would otherwise be
    refused as "should match pattern", which does not say what is wrong): one problem, naming line and field."""
    toml = TOML
    if key in ("model", "provider", "strategy", "model_cutoff"):
        value = {"model": "tiny-model-1", "provider": "acme", "strategy": "own pipeline", "model_cutoff": "2023-10"}[
            key
        ]
        toml = toml.replace(f'{key} = "{value}"', f'{key} = "{value[:2]}\u2067{value[2:]}"')
    elif key == "reference_reason":
        toml += 'role = "reference"\nreference_reason = "a second labeling\u200d by a lab"\n'
    else:
        toml += f'{key} = "zero\u200bshot"\n'
    folder = _folder(tmp_path, "hidden", _rows(), toml)
    problems = check_submission(folder, GOLD, CORPUS).problems
    assert len(problems) == 1, problems
    assert problems[0].startswith(
        f"{folder / 'submission.toml'}:{line}: field '{key}': holds the invisible character U+"
    )
    hidden = '"not\u200ba-key" = "x"\n'
    problems = check_submission(_folder(tmp_path, "keyed", _rows(), TOML + hidden), GOLD, CORPUS).problems
    assert problems == [
        f"{tmp_path / 'keyed' / 'submission.toml'}:7: a key holds the invisible character U+200B (zero width space) at "
        "character 4 of the key; drawn as nothing, it can make one name read as another (bidirectional controls and "
        "zero-width characters are refused): remove it"
    ]


def test_an_invisible_character_in_a_folder_name_is_named_by_check_and_the_command(tmp_path):
    """Hole 4 for the folder name: refused (it always was, as not a plain name) now naming the code point, by
    check_submission, by `submission check` over the folder and by `submission check NAME`."""
    from tests.cli_in_process import run_cli

    subs = tmp_path / "submissions"
    folder = _folder(subs, "acme\u2066tiny", _rows())
    expected = (
        f"{folder}: the folder name holds the invisible character U+2066 (left-to-right isolate) at character 5 of "
        "the name; drawn as nothing, it can make one name read as another"
    )
    problems = check_submission(folder, GOLD, CORPUS).problems
    assert len(problems) == 1 and problems[0].startswith(expected), problems
    checked = run_cli("submission", "check", "--dir", str(subs))
    assert checked.returncode == 1 and expected in checked.stderr, checked.stderr
    named = run_cli("submission", "check", "acme\u2066tiny", "--dir", str(subs))
    assert named.returncode == 1 and "'acme\\u2066tiny': holds the invisible character U+2066" in named.stderr


def test_visible_characters_beside_the_invisible_ones_pass(tmp_path):
    """Near misses of hole 4: letters of any script, and the visible spaces and signs on either side of the refused
    ranges (U+200A hair space, U+2010 hyphen, U+202F narrow no-break space, U+205F, U+2070 superscript zero)."""
    toml = TOML.replace('"a test"', '"Zoë Łukasz 山田 a\u200ab\u2010c\u202fd\u205fe\u2070"')
    toml += 'notes = "tab\\tand\\nnewline, → and ⁰"\n'
    assert check_submission(_folder(tmp_path, "visible", _rows(), toml), GOLD, CORPUS).problems == []


def test_the_one_lookalike_table_folds_alike_in_every_check():
    """Hole 5 of the submission door: two tables folded look-alikes, submissions._SKELETON (the skeleton names are
    compared by) and score._LOOKALIKES (the reference words a name may not spell), and had drifted: hum4n, rul3s and
    annot4tion passed as a provider or a name while agent-sessi0n was refused. One table
    (paperfields.core.confusables.LOOKALIKES) now folds for both: every character it folds is folded by the skeleton
    and by the reference-word check, and score.py's older table is gone."""
    from paperfields.core.confusables import LOOKALIKES, fold_lookalikes
    from paperfields.scoring import score
    from paperfields.scoring.score import REFERENCE_WORDS

    assert not hasattr(submissions, "_SKELETON") and not hasattr(score, "_LOOKALIKES")
    assert submissions.skeleton is __import__("paperfields.core.confusables", fromlist=["skeleton"]).skeleton
    in_words = set()
    for char, letter in LOOKALIKES.items():
        assert submissions.skeleton(f"x{char}y") == submissions.skeleton(f"x{letter}y"), char
        assert fold_lookalikes(char) == fold_lookalikes(char.upper()) == letter, char
        reserved = {f"agent-{letter * 3}-session": "a test reference"}
        assert submissions.looks_like(f"agent-{char * 3}-session", reserved) == f"agent-{letter * 3}-session", char
        for word in sorted(REFERENCE_WORDS):
            if letter in word:
                posed = word.replace(letter, char, 1)
                assert submissions.reference_word(posed) is not None, posed
                assert submissions.reference_word(posed.upper()) is not None, posed.upper()
                in_words.add(char)
    assert set("0134i|!5$@оεа") <= in_words  # the digits and signs a plain id may hold among them
    assert {c: score.reference_spelling(f"ru{c}es") for c in "I1|"} == dict.fromkeys("I1|", "rules")  # the old table's
    assert score.reference_spelling("g0ld") == "gold"
    # near misses: real words and ids are no reference words
    for name in ("goldfish", "humane", "ruler", "gpt-4o", "Qwen2.5-Coder-1.5B", "o1-mini", "deepseek-r1", "h2o"):
        assert submissions.reference_word(name) is None, name


@pytest.mark.parametrize(
    "provider, model, field, word",
    [
        ("hum4n", "tiny-model-1", "provider", "human"),
        ("rul3s", "tiny-model-1", "provider", "rules"),
        ("acme", "annot4tion-v1", "model", "annotation"),
        ("MyHum4n", "tiny-model-1", "provider", "human"),
    ],
)
def test_a_provider_or_model_spelling_a_reference_word_with_a_lookalike_is_refused(
    tmp_path, provider, model, field, word
):
    """Hole 5 through the check: a look-alike digit in a reference word (the skeleton folded it, the reference-word
    check did not) is refused as the word itself is."""
    toml = TOML.replace('"acme"', f'"{provider}"').replace('"tiny-model-1"', f'"{model}"')
    problems = check_submission(_folder(tmp_path, "poser", _rows(), toml), GOLD, CORPUS).problems
    value = provider if field == "provider" else model
    assert len(problems) == 1 and f"field '{field}': '{value}' names a reference ({word}:" in problems[0], problems
