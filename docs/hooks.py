"""MkDocs hook: the generated parts of the pages, written at build time from the code, never typed.

A page line ``<!-- generated: NAME -->`` is replaced by the block NAME:

- ``cli``: the whole command line reference, made by typer's own generator
  (``python -m typer paperfields.cli utils docs``) from the app the ``paperfields`` command runs;
- ``board``: the top of the published board (``paperfields.summary.board_summary``), the same table
  ``paperfields leaderboard`` writes into the README, from ``results/runs``;
- ``headline``, ``field-rules``, ``failure-classes``, ``repairs``: the scoring method and the scorer's
  tables (``paperfields.scoring.method.DOCS_BLOCKS``), made from the code's own facts; the board and the
  reports read the same text.

An unknown name, or typer failing, stops the build with the reason.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache

from mkdocs.exceptions import PluginError

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)


@cache
def cli_reference() -> str:
    """Every command of the ``paperfields`` app with its help and options (Markdown, headings from ``##``)."""
    done = subprocess.run(
        [sys.executable, "-m", "typer", "paperfields.cli", "utils", "docs", "--name", "paperfields"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise PluginError(f"typer could not write the CLI reference: {done.stderr.strip()[-500:]}")
    text = done.stdout.strip()
    # The page has its own title: the app's heading becomes a section, every command one level below it.
    text = re.sub(r"^(#+) ", lambda m: "#" + m.group(1) + " ", text, flags=re.MULTILINE)
    return _escape_html(text)


def _escape_html(markdown: str) -> str:
    """``<`` and ``>`` of help text as text, outside code: ``submissions/<name>/`` would be read as a tag."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            parts = line.split("`")  # odd parts are code spans, shown as written
            line = "`".join(p if i % 2 else p.replace("<", "&lt;").replace(">", "&gt;") for i, p in enumerate(parts))
        out.append(line)
    return "\n".join(out)


@cache
def board() -> str:
    """The summary of the published board, as the README's block holds it."""
    from paperfields.core import paths
    from paperfields.scoring.board import Board
    from paperfields.scoring.runs import collect_scores
    from paperfields.summary import board_summary

    scores = collect_scores(paths.published_runs_dir())
    if not scores:
        raise PluginError(f"no scored runs under {paths.published_runs_dir()}")
    return board_summary(Board.of(scores, paths.gold_dir() / "gold.jsonl"), folder_links=False)


def block(name: str) -> str:
    """The generated Markdown of block ``name``. Raises PluginError for a name no generator has."""
    from paperfields.scoring.method import DOCS_BLOCKS

    if name == "cli":
        return cli_reference()
    if name == "board":
        return board()
    if name not in DOCS_BLOCKS:
        raise PluginError(f"unknown generated block '{name}' (known: cli, board, {', '.join(DOCS_BLOCKS)})")
    return DOCS_BLOCKS[name]()


def on_page_markdown(markdown: str, page, config, files) -> str:
    return MARKER.sub(lambda m: block(m.group(1)), markdown)
