"""Issue 34 item 16: every generated Markdown file escapes Markdown and HTML in every text that comes
from a run or a submission (model names, run ids, strategies, who submitted, gold and abstract text in
the difficulty view); HTML pages escape through jinja2's autoescape. Tried as a hostile contributor
would: a submission whose model name is ``a|b<script>alert(1)</script>``, added with the real CLI."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from paperfields.core.escape import escape_markdown, markdown_code, table_cell
from tests.cli_in_process import run_cli
from tests.conftest import ROOT

HOSTILE_MODEL = "a|b<script>alert(1)</script>*bold* [x](https://evil.example) `tick` _under_ [/]rich[bold]"
HOSTILE_BY = '<img src=x onerror="alert(2)">|me'
RAW_TAGS = re.compile(r"<\s*(script|img|iframe|svg)\b", re.IGNORECASE)


def _cells(row: str) -> int:
    """The cells of one Markdown table row: its ``|`` separators not escaped by a backslash, less one."""
    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", row)) - 1


def _tables_keep_their_columns(text: str, where: str) -> int:
    """Assert that every row of every table in ``text`` has as many cells as its header; return the rows seen."""
    rows, header = 0, None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        if header is None:
            header = _cells(line)
            continue
        assert _cells(line) == header, f"{where}: a row splits: {line}"
        rows += 1
    return rows


def test_escape_markdown_writes_hostile_text_literally_and_leaves_plain_text_alone():
    assert escape_markdown("local/qwen2.5-coder-0.5b") == "local/qwen2.5-coder-0.5b"
    assert escape_markdown("rules_baseline__zero_shot__test") == "rules_baseline__zero_shot__test"
    assert escape_markdown("a|b") == "a\\|b" and _cells(f"| {escape_markdown('a|b|c')} |") == 1
    assert escape_markdown("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert escape_markdown("*x* [l](u) `c` ~~s~~") == "\\*x\\* \\[l\\](u) \\`c\\` \\~\\~s\\~\\~"
    assert escape_markdown("_x_ __init__ a_b") == "\\_x\\_ \\_\\_init\\_\\_ a_b"
    assert escape_markdown("a\\|b") == "a\\\\\\|b"  # a backslash of the text cannot undo the escape of the pipe
    assert escape_markdown("one\ntwo\r\nthree") == "one two  three"
    assert escape_markdown("AT&T") == "AT&amp;T"
    assert markdown_code("local_qwen2.5-coder-0.5b__zero_shot__test") == "`local_qwen2.5-coder-0.5b__zero_shot__test`"
    assert markdown_code("a`b|c") == "a\\`b\\|c"  # not plain: no code span a backtick could close
    assert table_cell("`a|b` and \\| and x") == "`a\\|b` and \\| and x"


def _submission(root, name: str) -> None:
    from paperfields.core.gold import load_gold

    folder = root / name
    folder.mkdir(parents=True)
    test = [g for g in load_gold(ROOT / "gold" / "gold.jsonl") if g.split == "test"]
    lines = [json.dumps({"paper_id": g.id, "record": {"method_name": f"Net{i}"}}) for i, g in enumerate(test)]
    (folder / "predictions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    toml = {
        # the model is a plain id (the check refuses markup there: test below); the hostile text rides in
        # submitted_by, a free text the board's submitted runs' table shows
        "model": "tiny-model-1",
        "provider": "acme",
        "date_run": "2026-11-30",
        "strategy": "zero_shot",
        "submitted_by": HOSTILE_BY,
        "notes": "<script>alert(3)</script> | *notes*",
    }
    (folder / "submission.toml").write_text(
        "".join(f"{k} = {json.dumps(v)}\n" for k, v in toml.items()).replace(
            'date_run = "2026-11-30"', "date_run = 2026-11-30"
        ),
        encoding="utf-8",
    )


def test_a_hostile_submission_keeps_every_generated_table_whole_and_writes_no_tag(tmp_path):
    from paperfields.scoring.board import Board
    from paperfields.scoring.runs import collect_scores
    from paperfields.summary import board_summary

    results = tmp_path / "results"
    for kept in ("rules_baseline__zero_shot__test", "local_qwen2.5-coder-0.5b__zero_shot__test"):  # a board beside it
        shutil.copytree(ROOT / "results" / "runs" / kept, results / "runs" / kept)
    subs = tmp_path / "submissions"
    _submission(subs, "acme-run")
    checked = run_cli("submission", "check", "acme-run", "--dir", str(subs))
    assert checked.returncode == 0, checked.output
    added = run_cli(
        "submission", "add", "acme-run", "--dir", str(subs), "--runs-dir", str(results / "runs"), "--no-plots"
    )
    assert added.returncode == 0, added.output
    board_md = (results / "leaderboard.md").read_text(encoding="utf-8")
    difficulty_md = (results / "difficulty.md").read_text(encoding="utf-8")
    board = Board.of(collect_scores(results / "runs"), ROOT / "gold" / "gold.jsonl")
    readme_block = board_summary(board, top=50)
    for where, text in (("leaderboard.md", board_md), ("difficulty.md", difficulty_md), ("README block", readme_block)):
        assert not RAW_TAGS.search(text), f"{where}: a raw tag: {RAW_TAGS.search(text).group()}"
        assert not re.search(r"(?<!\\)\]\(https://evil", text), where  # no link made of the name
        assert _tables_keep_their_columns(text, where) > 0
    assert f"| {escape_markdown(HOSTILE_BY)} |" in board_md  # the submitted runs' table
    assert "alert(3)" not in board_md  # the notes are not on the board at all
    # the terminal board shows the name as written (rich markup in it is text, not a crash)
    shown = run_cli(
        "leaderboard", "--runs-dir", str(results / "runs"), "--no-write", env=dict(os.environ, COLUMNS="300")
    )
    assert shown.returncode == 0, shown.output
    # the web board: jinja2's autoescape writes the name as text
    page = (results / "leaderboard.html").read_text(encoding="utf-8")
    assert '<img src=x onerror="alert(2)">' not in page
    for report in (results / "reports").glob("*.html"):
        assert "<script>alert(1)" not in report.read_text(encoding="utf-8"), report.name


def test_markup_in_a_submitted_model_is_refused_by_the_check(tmp_path):
    """What reached the board's model cell before the check read the model field (the escaping above kept it
    text); now it never gets that far: refused naming file, line and field."""
    _submission(tmp_path, "acme-run")
    toml = tmp_path / "acme-run" / "submission.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('"tiny-model-1"', json.dumps(HOSTILE_MODEL)))
    checked = run_cli("submission", "check", "acme-run", "--dir", str(tmp_path))
    assert checked.returncode == 1 and "submission.toml:1: field 'model':" in checked.output, checked.output


def test_jinja_autoescape_is_on_for_every_page():
    import inspect

    from paperfields import report, web

    for module in (web, report):
        assert "autoescape=True" in inspect.getsource(module), module.__name__


@pytest.mark.parametrize("hostile", [HOSTILE_MODEL, "x_y__z", "plain"])
def test_escaped_text_renders_as_the_text_itself(hostile):
    from markdown_it import MarkdownIt

    rendered = (
        MarkdownIt("commonmark")
        .enable(["table", "strikethrough"])
        .render(f"| h |\n|---|\n| {escape_markdown(hostile)} |\n")
    )
    assert "<script>" not in rendered and "<a " not in rendered and "<em>" not in rendered and "<code>" not in rendered
    cell = re.search(r"<td>(.*)</td>", rendered).group(1)
    import html

    assert html.unescape(cell) == hostile
