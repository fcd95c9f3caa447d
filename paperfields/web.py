"""The web leaderboard: one self-contained static page rendered from the board's rows, each run linked
to its HTML report written beside it, and the Hugging Face Space folder that serves them.

:func:`render_page` turns a :class:`~paperfields.scoring.board.Board` into the page (Jinja2 template
``templates/leaderboard.html.jinja`` with autoescaping: every run id, model name and label is escaped
text). The tables are the board's own columns (:data:`~paperfields.scoring.board.MAIN_COLUMNS`,
:data:`~paperfields.scoring.board.DETAIL_TABLES`): the page shows the same cells as the Markdown and
adds what only a browser can: sorting, filters (strategy, model family, contamination), CI whiskers
(inline SVG) and a per-field heatmap. Nothing is fetched at view time: the page carries its CSS and one
static script, which the page's Content-Security-Policy allows by its sha256 and nothing else.

:func:`write_site` writes the page and the reports it links (``reports/<run>.html``, written by
:func:`paperfields.report.write_report`) into one folder, so the links resolve wherever the folder
goes: ``results/`` (``paperfields leaderboard``, committed) or a Space folder (:func:`write_space`).
The bytes depend only on the published runs and the code: no timestamp, no absolute path.

A later view (submissions, what models get wrong) adds a :class:`PageSection` to ``sections``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from paperfields.core.readonce import file_bytes
from paperfields.markup import inline_markdown as _inline_markdown
from paperfields.scoring.board import (
    COLUMNS_TEXT,
    DETAIL_TABLES,
    FIELD_COLUMNS,
    HEADLINE_TEXT,
    MAIN_COLUMNS,
    SECTIONS,
    UNDEFINED,
    Board,
    Column,
    fmt_ci,
)

if TYPE_CHECKING:
    from paperfields.scoring.difficulty import Difficulty

REPORTS_DIR = "reports"  # the reports' folder, beside the page: links are relative, so the folder moves as one


@dataclass(frozen=True)
class PageSection:
    """One more section of the page: its anchor ``id``, ``title`` (escaped) and ``html`` (a
    :class:`~markupsafe.Markup` its maker escaped), listed in the navigation and rendered after the
    board's own tables, in the order given."""

    id: str
    title: str
    html: Markup


@dataclass
class Site:
    """What :func:`write_site` wrote: the ``page``, the ``reports`` by run id, ``skipped`` (run id ->
    why it has no report, so no link) and ``removed`` (reports of runs no longer on the board)."""

    page: Path
    reports: dict[str, Path] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    removed: list[Path] = field(default_factory=list)

    @property
    def written(self) -> list[Path]:
        """Every file written: the reports, then the page."""
        return [*self.reports.values(), self.page]


def report_name(run_id: str) -> str:
    """The file name of a run's report under ``reports/``: the run id when it is a plain file name
    (letters, digits, ``.``, ``_``, ``-``: every published id), else its plain characters plus a short
    hash of the id, so no two runs share a file and no id can leave the folder."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", run_id).strip(".")
    if safe != run_id:
        safe = f"{safe or 'run'}-{hashlib.sha256(run_id.encode('utf-8')).hexdigest()[:10]}"
    return safe + ".html"


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "col"


def _sort_value(key: Any) -> str:
    if key is None:
        return ""
    if isinstance(key, bool):
        return str(int(key))
    return repr(key) if isinstance(key, (int, float)) else str(key)


def _column_type(column: Column, pairs: list[tuple[Any, dict[str, Any]]]) -> str:
    keys = [column.key(s, r) for s, r in pairs]
    return "num" if all(isinstance(k, (int, float)) or k is None for k in keys) else "text"


def ci_whisker(value: Optional[float], ci: Optional[Sequence[float]]) -> Markup:
    """An inline SVG of a score on a 0 to 1 scale: a dot at ``value`` and, given ``ci`` (low, high),
    a whisker with caps across it. Numbers only, no text from the runs; empty when ``value`` is None."""
    if value is None:
        return Markup("")
    x = lambda v: f"{2 + 80 * min(max(v, 0.0), 1.0):.1f}"  # noqa: E731
    label = f"{value:.3f}" + (f", 95% CI {ci[0]:.3f} to {ci[1]:.3f}" if ci else ", no CI")
    parts = [
        f'<svg class="ci" width="84" height="12" viewBox="0 0 84 12" role="img" aria-label="{label}">',
        '<line x1="2" y1="6" x2="82" y2="6" stroke="#d0d7de"/>',
    ]
    if ci:
        lo, hi = x(ci[0]), x(ci[1])
        parts += [
            f'<line x1="{lo}" y1="6" x2="{hi}" y2="6" stroke="#1f6feb" stroke-width="2"/>',
            f'<line x1="{lo}" y1="2" x2="{lo}" y2="10" stroke="#1f6feb"/>',
            f'<line x1="{hi}" y1="2" x2="{hi}" y2="10" stroke="#1f6feb"/>',
        ]
    parts += [f'<circle cx="{x(value)}" cy="6" r="3" fill="#0b3d91"/>', "</svg>"]
    return Markup("".join(parts))


def breakable(text: str) -> Markup:
    """``text`` escaped, its parts (split after each ``__`` and ``/``) in unbreakable spans with a
    line-break opportunity (``<wbr>``) between them: a long run id or model name wraps at its parts,
    never inside one (``qwen2.5-coder-1.5b`` stays whole)."""
    return Markup("<wbr>").join(Markup("<span>%s</span>") % part for part in re.split(r"(?<=__)|(?<=/)", text) if part)


def _heat(value: Optional[float]) -> str:
    """Background and text colour of a heatmap cell for a score in [0, 1] (matplotlib's Blues, kept
    light enough at the low end to read); empty for an undefined score."""
    if value is None:
        return ""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    shade = 0.05 + 0.8 * min(max(value, 0.0), 1.0)
    return f"background:{to_hex(colormaps['Blues'](shade))};color:{'#fff' if shade > 0.55 else '#1f2328'}"


def _scale() -> str:
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    return ",".join(to_hex(colormaps["Blues"](0.05 + 0.8 * i / 5)) for i in range(6))


SHORT_TITLES = {
    "contender": "Contenders",
    "reference": "References (not ranked)",
    "partial": "Partial and unfinished runs (not ranked)",
}


def _table(
    columns: Sequence[Column],
    board: Board,
    links: dict[str, str],
    sections: Sequence[str],
    heat: bool = False,
    titles: Optional[dict[str, str]] = None,
) -> dict[str, Any]:
    """A table of the page: its columns (name, sort key, type) and one block of rows per board section,
    headed by ``titles`` (default: the board's section headings) when there is more than one."""
    pairs = [(s, r) for s, r in zip(board.runs, board.rows) if r["section"] in sections]
    head = [{"name": c.name, "key": _slug(c.name), "type": _column_type(c, pairs)} for c in columns]
    for h in head:
        h["cls"] = "num" if h["type"] == "num" and h["key"] not in ("rank",) else ""
    blocks = []
    titles = titles or dict(SECTIONS)
    for key in sections:
        rows = []
        for s, r in ((s, r) for s, r in pairs if r["section"] == key):
            cells = []
            for c, h in zip(columns, head):
                cell = {
                    "text": c.cell(s, r),
                    "v": _sort_value(c.key(s, r)),
                    "cls": h["cls"],
                    "href": None,
                    "svg": None,
                    "style": "",
                    "title": "",
                    "wrap": False,
                    "folder": None,
                }
                if c.name in ("run", "model"):
                    cell["cls"], cell["wrap"] = "brk", True  # long ids break after "__" and "/", not mid-word
                if c.name == "run":
                    cell["href"] = links.get(s.run_id)
                if c.folder and r["submission_folder"]:  # a submission names and links its folder
                    cell["folder"] = {"text": r["submission_folder"], "href": f"../{quote(r['submission_folder'])}/"}
                if c.name.startswith("headline"):
                    cell["svg"] = ci_whisker(s.headline, r["headline_ci95"])
                if heat and h["type"] == "num":
                    score = c.key(s, r)
                    cell["style"], cell["cls"] = _heat(score), "cell num"
                    name = next((f for f in r["fields"] if c.name == _short(f)), None)
                    ci = (
                        r["fields_ci95"].get(name)
                        if name
                        else (list(s.per_paper_f1_ci95) if s.per_paper_f1_ci95 and s.comparable else None)
                    )
                    cell["title"] = (
                        f"{c.name}: {fmt_ci(score, ci if s.comparable else None, 2)}"
                        if score is not None
                        else f"{c.name}: {UNDEFINED} (undefined)"
                    )
                    if score is None:
                        cell["text"] = ""
                cells.append(cell)
            rows.append(
                {
                    "run_id": s.run_id,
                    "section": key,
                    "strategy": s.strategy,
                    "family": r["model_family"],
                    "contamination": r["contamination"],
                    "cells": cells,
                }
            )
        if rows:
            blocks.append({"key": key, "title": titles[key] if len(sections) > 1 else "", "rows": rows})
    return {"columns": head, "blocks": blocks}


def _short(name: str) -> str:
    from paperfields.scoring.board import SHORT

    return SHORT.get(name, name)


def _template_text(name: str) -> str:
    return resources.files("paperfields").joinpath("templates", name).read_text(encoding="utf-8")


def render_page(
    board: Board,
    links: dict[str, str],
    csv_name: str = "leaderboard.csv",
    sections: Sequence[PageSection] = (),
    difficulty_name: Optional[str] = None,
) -> str:
    """The web leaderboard of ``board`` as one HTML page: the main table (contenders, then references
    and partial runs apart) sortable, filterable, with CI whiskers; the per-field heatmap; the cost,
    calibration and mode tables; then ``sections``. ``links`` maps a run id to its report's relative
    URL (a run without one is not linked); ``csv_name`` is the csv beside the page, ``difficulty_name``
    the difficulty view beside it (``difficulty.md``: what models get wrong; None: not linked)."""
    script = _template_text("leaderboard.js")
    script_hash = "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["breakable"] = breakable
    all_sections = tuple(key for key, _ in SECTIONS)
    detail = [
        {
            "id": _slug(title),
            "title": title,
            "text": _inline_markdown(text),
            **_table(columns, board, links, kept, titles=SHORT_TITLES),
        }
        for title, columns, kept, text in DETAIL_TABLES
        if columns is not FIELD_COLUMNS
    ]
    values = lambda key: sorted({r[key] for r in board.rows})  # noqa: E731
    filters = [
        {"key": "strategy", "label": "strategy", "options": values("strategy")},
        {"key": "family", "label": "model family", "options": values("model_family")},
        {"key": "contamination", "label": "contamination", "options": values("contamination")},
    ]
    s0 = board.runs[0]
    return env.from_string(_template_text("leaderboard.html.jinja")).render(
        split=s0.split,
        versions={"schema": s0.schema_version, "scorer": s0.scorer_version, "gold": s0.gold_version},
        csv_name=csv_name,
        difficulty_name=difficulty_name,
        intro=_inline_markdown(COLUMNS_TEXT),
        filters=filters,
        runs=board.rows,
        main=_table(MAIN_COLUMNS, board, links, all_sections),
        heat=_table(FIELD_COLUMNS, board, links, all_sections, heat=True),
        scale=_scale(),
        detail_tables=detail,
        sections=list(sections),
        headline_text=_inline_markdown(HEADLINE_TEXT),
        script=Markup(script),
        script_hash=script_hash,
    )


def run_folders(runs_dir: Path) -> dict[str, Path]:
    """Run id (as its ``scores.json`` says) -> run folder, for every scored run under ``runs_dir``."""
    found = {}
    for path in sorted(runs_dir.glob("*/scores.json")):
        try:
            found[json.loads(file_bytes(path).decode("utf-8"))["run_id"]] = path.parent
        except (ValueError, KeyError, TypeError):
            continue  # collect_scores has already named an unreadable scores file
    return found


def write_site(
    board: Board,
    runs_dir: Path,
    out_dir: Path,
    gold_path: Path,
    page_name: str = "leaderboard.html",
    csv_name: str = "leaderboard.csv",
    sections: Sequence[PageSection] = (),
    difficulty_name: Optional[str] = None,
    published: Optional[Difficulty] = None,
) -> Site:
    """Write each run's report into ``out_dir/reports/`` and the page linking them to ``out_dir/page_name``.

    The reports' most-missed items come from ``published``, the published runs' difficulty when the caller
    has it (the board's own view, when the board is of the published runs; none when it holds no complete
    contender), else computed once here
    (:func:`~paperfields.report.published_difficulty`) for every report: computing it per report made a
    board's regeneration quadratic in its runs.

    A run whose report cannot be written (stale scores, a paper missing from its corpus) keeps its
    row, unlinked, and is listed in :attr:`Site.skipped` with the reason (also warned). Reports under
    ``reports/`` of runs no longer on the board are removed (:attr:`Site.removed`). Raises OSError
    when a file cannot be written. ``difficulty_name``: the difficulty view beside the page, linked from it."""
    from paperfields.core.errors import PaperFieldsError
    from paperfields.report import published_difficulty, write_report

    view: list[Optional[Difficulty]] = [] if published is None else [published if published.contenders else None]

    def difficulty_once() -> Optional[Difficulty]:
        if not view:
            view.append(published_difficulty(gold_path))
        return view[0]

    folders = run_folders(runs_dir)
    reports_dir = out_dir / REPORTS_DIR
    site = Site(page=out_dir / page_name)
    for s in board.runs:
        folder = folders.get(s.run_id)
        if folder is None:
            site.skipped[s.run_id] = f"no run folder under {runs_dir} holds its scores"
            continue
        try:
            site.reports[s.run_id] = write_report(
                folder, gold_path, out=reports_dir / report_name(s.run_id), published=difficulty_once
            )
        except PaperFieldsError as exc:
            site.skipped[s.run_id] = str(exc)
            warnings.warn(f"no report for {s.run_id} on the web board: {exc}", stacklevel=2)
    if reports_dir.is_dir():
        keep = set(site.reports.values())
        site.removed = [p for p in sorted(reports_dir.glob("*.html")) if p not in keep]
        for path in site.removed:
            path.unlink()
    links = {run_id: f"{REPORTS_DIR}/{quote(path.name)}" for run_id, path in site.reports.items()}
    site.page.parent.mkdir(parents=True, exist_ok=True)
    site.page.write_text(render_page(board, links, csv_name, sections, difficulty_name), encoding="utf-8")
    return site
