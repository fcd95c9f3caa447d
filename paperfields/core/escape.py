"""Text that comes from a run or a submission (model names, run ids, strategies, notes, gold and
predicted strings, abstract sentences), made safe for the Markdown files the project writes:
``results/leaderboard.md``, ``results/difficulty.md``, the README's board block, the Space's README,
the dataset card.

Such text is hostile input (a submission names its own model): ``a|b`` would split a table row,
``<script>`` or ``<img onerror=...>`` would be raw HTML, ``[x](https://...)`` a link, ``*x*`` emphasis.
:func:`escape_markdown` writes it as literal text on one line; :func:`markdown_code` as a code span
when it is plain (a run id), else as that literal text. HTML pages are escaped by jinja2's autoescape
instead (``paperfields/web.py``, ``paperfields/report.py``); our own explanatory Markdown goes through
:func:`paperfields.markup.inline_markdown`.
"""

from __future__ import annotations

import re
from typing import Any

# Each is written with a backslash before it (CommonMark: any ASCII punctuation may be escaped so).
_BACKSLASHED = set("\\`*[]|~")
# HTML's own: as entities, so no tag survives (a backslash before "<" keeps the text a tag to the eye).
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_LINE_BREAKS = re.compile(r"[\r\n\v\f\x85\u2028\u2029]")
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+=@/:,-]*")


def escape_markdown(value: Any) -> str:
    """``value`` (``str()`` of it) as literal Markdown text on one line, for a table cell, a heading or
    a sentence: line breaks become spaces; ``\\ ` * [ ] | ~`` get a backslash; ``& < >`` become HTML
    entities; ``_`` gets a backslash unless it stands between two letters or digits (``rules_baseline``,
    ``zero_shot__test``), where CommonMark never reads it as emphasis, so ordinary run ids read as they
    are. Text with none of these characters comes back unchanged."""
    text = _LINE_BREAKS.sub(" ", str(value))
    out: list[str] = []
    for i, char in enumerate(text):
        if char in _ENTITIES:
            out.append(_ENTITIES[char])
        elif char in _BACKSLASHED:
            out.append("\\" + char)
        elif char == "_" and not _inside_word(text, i):
            out.append("\\_")
        else:
            out.append(char)
    return "".join(out)


def _inside_word(text: str, i: int) -> bool:
    """True when the run of underscores at ``i`` has a letter or digit on both sides."""
    start, end = i, i
    while start > 0 and text[start - 1] == "_":
        start -= 1
    while end < len(text) - 1 and text[end + 1] == "_":
        end += 1
    return start > 0 and end < len(text) - 1 and text[start - 1].isalnum() and text[end + 1].isalnum()


def markdown_code(value: Any) -> str:
    """``value`` as a Markdown code span (`` `local_qwen2.5-coder-0.5b__zero_shot__test` ``) when it is
    plain (letters, digits and ``_ . + = @ / : , -``, starting with a letter or digit), else as
    :func:`escape_markdown` text: a code span shows ``<script>`` literally on GitHub, but a backtick
    in the text would close it and a ``|`` still splits a table row, so other text is written escaped."""
    text = str(value)
    return f"`{text}`" if _PLAIN.fullmatch(text) else escape_markdown(text)


_UNESCAPED_PIPE = re.compile(r"(?<!\\)((?:\\\\)*)\|")


def table_cell(markdown: Any) -> str:
    """``markdown`` (our own Markdown, or text already passed through :func:`escape_markdown`) as one
    cell of a Markdown table: line breaks become spaces and each ``|`` not already escaped gets a
    backslash, so a cell never splits its row and an escaped ``\\|`` is not escaped twice."""
    return _UNESCAPED_PIPE.sub(r"\1\\|", _LINE_BREAKS.sub(" ", str(markdown)))
