"""The top of the board in a few lines: the README's board block and the docs' start page.

``paperfields leaderboard`` writes :func:`board_summary` of the published board between the README's
markers (:func:`write_readme_block`), so every number the README gives comes from the published runs;
the docs build writes the same summary into its start page.
"""

from __future__ import annotations

import re
from pathlib import Path

from paperfields.core.escape import escape_markdown
from paperfields.options import DEFAULT_BACKEND
from paperfields.scoring.board import (
    SUBMITTED_MARK,
    UNDEFINED,
    Board,
    fmt_ci,
    headline_cell,
    papers_cell,
    submission_folder,
    submission_link,
    time_known,
)
from paperfields.scoring.method import validity_figures, validity_text

START = "<!-- board:start: written by `paperfields leaderboard` from results/runs; do not edit -->"
END = "<!-- board:end -->"
_BLOCK = re.compile(re.escape(START) + r"\n.*?" + re.escape(END), re.DOTALL)
TOP = 5  # contenders shown; the references always follow them


def _folder(s, link: bool) -> str:
    """A submitted row's folder: linked from the README (a path of the repository), or as code where the page is
    not in the repository's tree (the docs site), so no link can point nowhere."""
    if link:
        return submission_link(s, base="")
    folder = submission_folder(s)
    return f" `{folder}`" if folder else ""


def board_summary(board: Board, top: int = TOP, folder_links: bool = True) -> str:
    """The ``top`` ranked contenders and every reference of ``board`` as one Markdown table (rank, model,
    strategy, papers, valid, headline with its 95% CI, the semantic tier's headline, seconds per paper),
    then one line on the default model's zero-shot run when the board holds it, then the scorer's validity
    on the held-out judged pairs and who judged (``gold/validity.json``). Raises ValueError when ``top`` < 1."""
    if top < 1:
        raise ValueError(f"top must be at least 1, not {top}")
    pairs = list(zip(board.runs, board.rows))
    chosen = [p for p in pairs if p[1]["section"] == "contender"][:top]
    chosen += [p for p in pairs if p[1]["section"] == "reference"]
    lines = [
        "| rank | model | strategy | papers | valid | headline [95% CI] | semantic | s/paper |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s, r in chosen:
        known = not s.reference and time_known(s)  # a submission's time is unknown (0 in its scores), never 0 s
        seconds = f"{s.seconds_per_paper:.1f}" if known else UNDEFINED
        cells = [
            UNDEFINED if r["rank"] is None else str(r["rank"]),
            escape_markdown(s.backend)
            + (" (reference)" if s.reference else "")
            + (SUBMITTED_MARK + _folder(s, folder_links) if s.submitted else ""),
            escape_markdown(s.strategy),
            papers_cell(s),
            f"{s.valid_rate:.0%}",
            headline_cell(s, r),
            UNDEFINED if s.semantic is None or s.semantic.headline is None else f"{s.semantic.headline:.3f}",
            seconds,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    contenders = sum(1 for _, r in pairs if r["section"] == "contender")
    lines += [
        "",
        f"{min(top, contenders)} of {contenders} ranked runs shown, then the references (never ranked). `semantic`: "
        "the headline with the contested band decided by an embedding model, beside the headline, never ranked.",
    ]
    default = next(
        (
            (s, r)
            for s, r in pairs
            if s.backend == DEFAULT_BACKEND and s.strategy == "zero_shot" and r["section"] == "contender"
        ),
        None,
    )
    if default:
        s, r = default
        lines[-1] += (
            f" The default, `{DEFAULT_BACKEND}` zero-shot, scored {fmt_ci(s.headline, r['headline_ci95'])} "
            f"at {s.seconds_per_paper:.1f} s per paper over the {s.split} split's {s.papers} papers."
        )
    lines += ["", validity_text(validity_figures(), short=True)]
    return "\n".join(lines)


def readme_block(board: Board) -> str:
    """The README's board block: the markers around :func:`board_summary`."""
    return f"{START}\n{board_summary(board)}\n{END}"


def write_readme_block(readme: Path, board: Board) -> bool:
    """Replace the block between the markers of ``readme`` by :func:`readme_block` of ``board``; False
    (nothing written) when the file is missing or has no markers (a wheel install's working folder).
    Raises OSError when the file cannot be written."""
    if not readme.is_file():
        return False
    text = readme.read_text(encoding="utf-8")
    if not _BLOCK.search(text):
        return False
    new = _BLOCK.sub(lambda _: readme_block(board), text, count=1)
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return True
