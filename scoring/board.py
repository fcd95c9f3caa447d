"""The leaderboard's one home: rows built once from the runs' scores, and every view rendered from them.

:meth:`Board.of` checks the runs can share a board (one split, current versions), orders them
(contenders by headline, then references, then partial and unfinished runs), ranks them and builds
one plain row per run; :meth:`Board.markdown`, :meth:`Board.csv`, :meth:`Board.json` and
:meth:`Board.terminal` render those rows, and the plots (:mod:`paperfields.plots`) and the web page
(:mod:`paperfields.web`) draw from the same board. The tables' columns (:data:`MAIN_COLUMNS`,
:data:`DETAIL_TABLES`) are declared once here, for the Markdown and the web page
alike. An undefined number is printed one way everywhere: :data:`UNDEFINED`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional

from paperfields.core.errors import InputError
from paperfields.core.escape import escape_markdown
from paperfields.core.fields import scores_of
from paperfields.core.gold import gold_fingerprint
from paperfields.core.paths import SUBMISSION_NAME
from paperfields.core.schema import SCHEMA_VERSION, PaperRecord
from paperfields.scoring.calibration import SOURCES as CALIBRATION_SOURCES
from paperfields.scoring.method import (  # written once: also the report's and the docs' scorer page
    HEADLINE_TEXT,
    semantic_markdown,
    validity_figures,
    validity_text,
)
from paperfields.scoring.score import (
    GROUNDED_FIELDS,
    HEADLINE_COUNT,
    HEADLINE_FIELDS,
    SCORER_VERSION,
    RunScores,
    is_reference_backend,
)

if TYPE_CHECKING:
    from rich.table import Table

CALIBRATION_METRICS = (
    "brier",
    "ece",
    "aurc",
    "errors_caught_20",
)  # Calibration's numbers on the board, per confidence source
# an undefined number (nothing predicted, nothing in gold, no CI) on every board, report and table, never 1.0 or 0.0
UNDEFINED = "–"


class MixedVersionsError(InputError):
    """Runs scored with different schema, scorer or gold versions cannot share one board."""


def board_order(scores: list[RunScores]) -> list[RunScores]:
    """Contenders over the whole split, best headline first; then references (``rules/*``, a second
    annotator), best first; then partial (``--limit``) and unfinished runs, which get no rank."""

    def section(s: RunScores) -> int:
        return {"contender": 0, "reference": 1, "partial": 2}[section_of(s)]

    return sorted(scores, key=lambda s: (section(s), -(s.headline if s.headline is not None else -1), s.run_id))


def ranks(scores: list[RunScores]) -> dict[str, Optional[int]]:
    """Rank (1 = best headline) of each complete contender by run id; None for references and for
    partial or unfinished runs. Ties share a rank (competition ranking: 1, 2, 2, 4)."""
    contenders = [s for s in scores if s.rankable]
    out: dict[str, Optional[int]] = {s.run_id: None for s in scores}
    for s in contenders:
        out[s.run_id] = 1 + sum(1 for o in contenders if (o.headline or 0) > (s.headline or 0))
    return out


def papers_cell(s: RunScores) -> str:
    """``60``, ``41/60 (unfinished)``, ``3 of 60 (partial)``, or ``25 of 60 (sample)`` for a second
    labeling's sample, for the papers column of a board."""
    if s.unfinished:
        return f"{s.papers_done}/{s.papers} (unfinished)"
    if not s.partial:
        return str(s.papers)
    # a second labeling covers a sample
    return f"{s.papers} of {s.papers_in_split} ({'sample' if s.comparable else 'partial'})"


def check_versions(scores: list[RunScores], gold_path: Path | None = None) -> None:
    """Raise MixedVersionsError naming the runs to move elsewhere when they score different splits,
    or the runs to re-score when their (schema, scorer, gold) versions are not the current ones: this
    code's schema and scorer, and ``gold_path``'s fingerprint (without it, the most common gold
    version; then runs that all agree pass)."""
    splits = Counter(s.split for s in scores)
    if len(splits) > 1:
        main = splits.most_common(1)[0][0]
        raise MixedVersionsError(
            f"runs score different splits {dict(splits)}; one board compares one split: move these out of the runs "
            f"folder (or use --runs-dir): {' '.join(s.run_id for s in scores if s.split != main)}"
        )
    versions = Counter((s.schema_version, s.scorer_version, s.gold_version) for s in scores)
    current_gold = gold_fingerprint(gold_path) if gold_path is not None else versions.most_common(1)[0][0][2]
    current = (SCHEMA_VERSION, SCORER_VERSION, current_gold)
    stale = [s.run_id for s in scores if (s.schema_version, s.scorer_version, s.gold_version) != current]
    if stale and (len(versions) > 1 or gold_path is not None):
        raise MixedVersionsError(
            f"runs were scored with (schema, scorer, gold) versions {sorted(versions)}, and the current ones are "
            f"{current}; re-score these with `paperfields score`: {' '.join(stale)}"
        )


# From the schema's field facts: each score's board name, the scores that are board columns (the
# headline fields, then more scores such as results: value), and the rows of the per-field table with CIs.
SHORT = {s.name: s.short for s in scores_of(PaperRecord)}
BOARD_COLUMNS = tuple(s.name for s in scores_of(PaperRecord) if s.board == "column")
BOARD_TABLE = tuple(s.name for s in scores_of(PaperRecord) if s.board in ("column", "table"))


def fmt(value: Optional[float], digits: int = 3) -> str:
    """A score for a board cell: ``0.512``, or ``–`` when undefined (None)."""
    return UNDEFINED if value is None else f"{value:.{digits}f}"


def fmt_ci(value: Optional[float], ci: Optional[tuple[float, float]], digits: int = 3) -> str:
    """``0.512 [0.470, 0.551]``; the bare value when there is no CI; ``–`` when undefined."""
    if value is None:
        return UNDEFINED
    return fmt(value, digits) + (f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "")


def _pooled_grounding_rate(s: RunScores) -> Optional[float]:
    """Share of the predicted strings and numbers of the grounded
    fields found in the abstract; None with nothing predicted."""
    predicted = sum((s.grounding.get(f) or {}).get("predicted") or 0 for f in GROUNDED_FIELDS)
    if not predicted:
        return None
    grounded = sum(
        ((s.grounding.get(f) or {}).get("grounded_rate") or 0) * ((s.grounding.get(f) or {}).get("predicted") or 0)
        for f in GROUNDED_FIELDS
    )
    return grounded / predicted


def _pooled_grounding(s: RunScores) -> str:
    return _percent(_pooled_grounding_rate(s))


def mean_invented(s: RunScores) -> Optional[float]:
    """Mean over fields of the invented-value rate (share of papers with empty gold where something was
    predicted); lower is better; None when no field has a paper with empty gold."""
    rates = [a.invented_rate for a in s.fields.values() if a.invented_rate is not None]
    return sum(rates) / len(rates) if rates else None


def model_family(backend: str) -> str:
    """The family a backend's model belongs to, for the web board's filter: the model name without its
    provider and without a trailing size (``local/qwen2.5-coder-1.5b`` -> ``qwen2.5-coder``,
    ``openai/gpt-4o-mini`` -> ``gpt-4o-mini``, ``local/path/to/x-7B-Q4.gguf`` -> ``x``); the provider
    itself for references (``rules``, ``annotator``), which have no model."""
    provider, _, name = backend.partition("/")
    if not name or is_reference_backend(backend):
        return provider or backend
    name = name.rsplit("/", 1)[-1].removesuffix(".gguf")
    return re.split(r"[-_.]\d+(?:\.\d+)?[bBmM](?![a-zA-Z])", name, maxsplit=1)[0] or name


def section_of(s: RunScores) -> str:
    """``contender``, ``reference`` (also over a sample of papers) or ``partial`` (a partial or unfinished
    contender, an unfinished reference: not comparable, never ranked)."""
    if not s.comparable:
        return "partial"
    return "reference" if s.reference else "contender"


def _row(s: RunScores, rank: Optional[int]) -> dict[str, Any]:
    # In the csv's column order (Board.csv flattens the row): the run, its numbers, then ROW_ONLY.
    return {
        "rank": rank,
        "section": section_of(s),
        "run_id": s.run_id,
        "backend": s.backend,
        "strategy": s.strategy,
        "mode": s.mode,
        "grammar": s.grammar,
        "split": s.split,
        "reference": s.reference,
        "papers": s.papers,
        "papers_total": s.papers_in_split,
        "papers_done": s.papers_done,
        "valid_rate": s.valid_rate,
        "headline": s.headline,
        "headline_ci95": list(s.headline_ci95) if s.comparable and s.headline_ci95 else None,
        "precision": s.precision,
        "recall": s.recall,
        "per_paper_f1": s.per_paper_f1,
        "invented_rate": _round4(mean_invented(s)),
        "fields": {f: s.fields[f].score for f in BOARD_TABLE},
        "fields_ci95": {f: list(s.fields[f].ci95) if s.fields[f].ci95 else None for f in BOARD_TABLE},
        "failures_by_class": s.failures_by_class,
        # a submission's time, tokens and dollars are unknown here (None), never 0
        "seconds_per_paper": s.seconds_per_paper if time_known(s) else None,
        "tokens_per_paper": s.tokens_per_paper if time_known(s) else None,
        "input_tokens_per_paper": s.input_tokens_per_paper if time_known(s) else None,
        "dollars_total": s.dollars_total if time_known(s) else None,
        "correct_items": s.correct_items,
        "seconds_per_correct": _round4(s.seconds_per_correct) if time_known(s) else None,
        "dollars_per_correct": None
        if s.dollars_per_correct is None or not time_known(s)
        else round(s.dollars_per_correct, 8),
        "contamination": (s.contamination or {}).get("status", "unknown"),
        "model_cutoff": (s.contamination or {}).get("model_cutoff"),
        **{
            f"{metric}_{source}": (getattr(s.calibration[source], metric) if source in s.calibration else None)
            for group in (CALIBRATION_METRICS[:2], CALIBRATION_METRICS[2:])
            for source in CALIBRATION_SOURCES
            for metric in group
        },
        "schema_version": s.schema_version,
        "scorer_version": s.scorer_version,
        "gold_version": s.gold_version,
        "undefined_fields": s.undefined_fields,
        "model_family": model_family(s.backend),
        "output_constraint": output_constraint(s),
        "provenance": provenance(s),
        "submission": s.submitted,
        "submission_folder": submission_folder(s),
    }


# Row entries that are for the pages (a filter's value, a cell's text, a list), not columns of the csv.
ROW_ONLY = ("undefined_fields", "model_family", "output_constraint", "provenance", "submission", "submission_folder")
# How the csv names the entries of a row's nested numbers (a CI [low, high] becomes <name>_low, <name>_high).
NESTED_COLUMNS = {"fields": "{key}_score", "fields_ci95": "{key}_ci95", "failures_by_class": "failures_{key}"}


def csv_columns(row: dict[str, Any]) -> dict[str, Any]:
    """A board row as the csv's columns, in row order: every entry but :data:`ROW_ONLY`, a nested dict
    one column per key (:data:`NESTED_COLUMNS`), a ``*_ci95`` pair two (``_low``, ``_high``; empty
    cells without a CI). A number added to the row is a column of the csv without more."""
    out: dict[str, Any] = {}

    def put(name: str, value: Any) -> None:
        if name.endswith("_ci95"):
            out[f"{name}_low"], out[f"{name}_high"] = value if value else (None, None)
        else:
            out[name] = value

    for key, value in row.items():
        if key in ROW_ONLY:
            continue
        if key in NESTED_COLUMNS:
            for sub, item in value.items():
                put(NESTED_COLUMNS[key].format(key=sub), item)
        else:
            put(key, value)
    return out


@dataclass(frozen=True)
class Board:
    """The board of a set of runs, built once by :meth:`of`: ``runs`` (their scores) and ``rows`` (one
    plain dict per run, JSON-ready), both in board order, and every rendering of them.

    A row holds ``run_id``, ``rank`` (None for references and for partial or unfinished runs),
    ``reference``, ``section`` (:func:`section_of`), ``headline`` and ``headline_ci95`` (the CI None for
    partial or unfinished runs), ``papers``, ``papers_total`` (the split's papers), ``papers_done``,
    micro ``precision``/``recall``, the secondary ``per_paper_f1``, per-field ``fields`` scores, how the
    record was asked for (``mode``, ``grammar``, the board cell ``output_constraint``), tokens
    (``input_tokens_per_paper``: the prompt), cost, calibration and versions.
    """

    runs: tuple[RunScores, ...]
    rows: tuple[dict[str, Any], ...]

    @classmethod
    def of(cls, scores: list[RunScores], gold_path: Path | None = None) -> Board:
        """The board of ``scores``. Raises MixedVersionsError as :func:`check_versions`."""
        check_versions(scores, gold_path)
        ordered = board_order(scores)
        rank = ranks(ordered)
        return cls(runs=tuple(ordered), rows=tuple(_row(s, rank[s.run_id]) for s in ordered))

    def section(self, key: str) -> list[RunScores]:
        """The runs of one section (``contender``, ``reference``, ``partial``), in board order."""
        return [s for s, r in zip(self.runs, self.rows) if r["section"] == key]

    def markdown(self) -> str:
        """The board as Markdown (``results/leaderboard.md``), to read on GitHub: the main table
        (:data:`MAIN_COLUMNS`) of ranked contenders, then references, then partial and
        unfinished runs (no rank, no CI); then :data:`DETAIL_TABLES` (per-field scores, cost,
        calibration, mode), and how the headline is made."""
        return _markdown(self)

    def csv(self) -> str:
        """The board as CSV (pandas), one row per run, same order and numbers as the Markdown; an
        undefined number is an empty cell."""
        return _csv(self)

    def json(self) -> str:
        """The rows as a JSON array (``paperfields leaderboard --json``)."""
        return json.dumps(list(self.rows), indent=1)

    def terminal(self, highlight: Optional[str] = None, wide: bool = False) -> Table:
        """The board as a rich Table for the terminal: ranked contenders, then references and partial
        runs (no rank), a blank line between sections; the run ``highlight`` in bold. The default
        columns (:data:`TERMINAL_COLUMNS`) fit 100 columns; ``wide`` adds :data:`TERMINAL_WIDE_COLUMNS` (invented
        rate, dollars, seconds per correct item, contamination, per-paper F1 and every headline field's score).
        :data:`TERMINAL_LEGEND` explains it."""
        return _terminal(self, highlight, wide)


def board_rows(scores: list[RunScores], gold_path: Path | None = None) -> list[dict[str, Any]]:
    """The rows of :meth:`Board.of` as a list (see :class:`Board`).
    Raises MixedVersionsError as :func:`check_versions`."""
    return list(Board.of(scores, gold_path).rows)


def output_constraint(s: RunScores) -> str:
    """How the run asked for a record, for a board cell: the instructor mode, ``+grammar`` when a
    grammar constrained the output (``md_json+grammar``), ``grammar`` for local/ (in-process), ``–``
    for a backend with neither (rules/, imported predictions), ``?`` for scores written before it
    was recorded. Rows with different cells are not like-for-like (md_json puts the schema in the prompt)."""
    if s.grammar is None:
        return "?"
    if s.mode:
        return s.mode + ("+grammar" if s.grammar else "")
    return "grammar" if s.grammar else UNDEFINED


def provenance(s: RunScores) -> str:
    """``submitted`` for a run scored here from predictions sent by others (``submissions/<name>/``: not
    reproduced here), ``reproduced`` for a run made by this project's commands."""
    return "submitted" if s.submitted else "reproduced"


SUBMITTED_MARK = " (submitted)"  # after the run id of a submitted run, on every board
SUBMISSIONS_FROM_RESULTS = "../"  # the project root seen from results/, where the Markdown and web boards are


NEAR_PERFECT = 0.99  # a ranked headline above this is marked: no extraction model is that good; a copy of gold is
NEAR_PERFECT_MARK = " (above 0.99: check it is not a copy of gold)"


def headline_cell(s: RunScores, r: dict[str, Any]) -> str:
    """The headline with its CI (:func:`fmt_ci`), and :data:`NEAR_PERFECT_MARK` after it on a ranked row above
    :data:`NEAR_PERFECT`: never ranked that high without a visible mark."""
    marked = r["rank"] is not None and s.headline is not None and s.headline > NEAR_PERFECT
    return fmt_ci(s.headline, r["headline_ci95"]) + (NEAR_PERFECT_MARK if marked else "")


def time_known(s: RunScores) -> bool:
    """False for a submitted run: its model time, tokens and dollars were not measured here (its scores hold 0),
    so every board shows them as :data:`UNDEFINED` and the time and cost plots leave it off, never at 0."""
    return not s.submitted


def submission_folder(s: RunScores) -> Optional[str]:
    """``submissions/<name>``, the folder a submitted run was scored from (relative to the project root), or
    None for a reproduced run (or a name that is not a plain submission name: never a path elsewhere)."""
    name = (s.submitted or {}).get("name")
    return f"submissions/{name}" if isinstance(name, str) and SUBMISSION_NAME.fullmatch(name) else None


def submission_link(s: RunScores, base: str = SUBMISSIONS_FROM_RESULTS) -> str:
    """The Markdown link to a submitted run's folder, `` [submissions/x](../submissions/x/)`` (``base``: the
    project root from where the Markdown is), after its mark on the Markdown boards; empty for a reproduced run."""
    folder = submission_folder(s)
    return f" [{folder}]({base}{folder}/)" if folder else ""


def submitted_markdown(board: Board) -> list[str]:
    """The board's Markdown lines about submitted runs: what the mark means and one row of provenance per
    submitted run (model, provider, date run, strategy, who submits, model cutoff); no line when none is."""
    chosen = [s for s in board.runs if s.submitted]
    if not chosen:
        return []
    lines = [
        "## Submitted runs",
        "",
        f"A run marked `{SUBMITTED_MARK.strip()}` was scored here, by the same scorer, from predictions sent by others "
        "(`submissions/<name>/`, checked by `paperfields submission check`): scored here, not reproduced here. Every "
        f'other run was reproduced here by the project\'s own commands. A submission of `role = "reference"` is shown '
        "among the references, never ranked, with the reason it gave.",
        "",
        "| run | folder | model | provider | date run | strategy | submitted by | model cutoff | role |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in chosen:
        m = s.submitted or {}
        folder = submission_folder(s)
        link = f"[{folder}]({SUBMISSIONS_FROM_RESULTS}{folder}/)" if folder else UNDEFINED  # a plain name only
        cells = [
            m.get("model"),
            m.get("provider"),
            m.get("date_run"),
            m.get("strategy"),
            m.get("submitted_by"),
            m.get("model_cutoff") or "unknown",
            f"reference: {m.get('reference_reason')}" if m.get("role") == "reference" else "contender",
        ]
        lines.append("| " + " | ".join([escape_markdown(s.run_id), link] + [escape_markdown(c) for c in cells]) + " |")
    return lines


def _contamination_cell(row: dict[str, Any]) -> str:
    return row["contamination"] + (f" (cutoff {row['model_cutoff']})" if row.get("model_cutoff") else "")


def _round4(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 4)


# The board's sections, in order: (row section, heading). The reference heading's wording is the
# project's: the second labeling is by a separate AI agent session, never a human ceiling.
SECTIONS = (
    ("contender", "Contenders (ranked by headline)"),
    (
        "reference",
        "References (not ranked): model-free floors and a blind second labeling by a "
        "separate AI agent session (not a human ceiling), for scale",
    ),
    ("partial", "Partial and unfinished runs (not ranked, no CI): fewer papers than the split, not comparable"),
)


def cost_per_correct_cell(s: RunScores) -> str:
    """The run's cost per correct item in its own unit: model seconds for a local model (``5.66 s``),
    dollars when the run is priced (``$0.000123``), seconds with ``(no price)`` when the price is
    unknown; ``–`` for a reference (it calls no model) or without a correct item."""
    if s.reference or not s.correct_items or not time_known(s):
        return UNDEFINED
    seconds = (
        s.model_seconds / s.correct_items
    )  # recomputed: a scores.json written before 2026-12-01 stored it rounded to 4 decimals
    if s.backend.startswith("local/"):
        return f"{seconds:.2f} s"
    if s.dollars_per_correct is None:
        return f"{seconds:.2f} s (no price)"
    return f"${s.dollars_per_correct:.6f}"


def _cost_key(s: RunScores) -> Optional[float]:
    """What the cost cell sorts by: dollars when priced, else model seconds (a board mixes them only
    when it mixes local and priced runs, whose cells say their unit)."""
    if s.reference or not s.correct_items or not time_known(s):
        return None
    if not s.backend.startswith("local/") and s.dollars_per_correct is not None:
        return s.dollars_per_correct
    return s.model_seconds / s.correct_items


def _percent(value: Optional[float]) -> str:
    return UNDEFINED if value is None else f"{value:.0%}"


@dataclass(frozen=True)
class Column:
    """One column of a board table: its ``name``, the ``cell`` text of a run (its scores and board
    row) and the ``key`` it sorts by on the web page (a number, a string, or None when undefined:
    sorted last). The Markdown board escapes every cell (:func:`~paperfields.core.escape.escape_markdown`:
    a run id or model name comes from a run or a submission) but those of a column whose ``markdown``
    is True, which holds only our own formatting (the CI's brackets)."""

    name: str
    cell: Callable[[RunScores, dict[str, Any]], str]
    key: Callable[[RunScores, dict[str, Any]], Any]
    folder: bool = False  # a submitted run's folder (submission_folder) is linked after the cell
    markdown: bool = False  # the cell is Markdown already (escape_markdown is not applied to it)
    justify: Literal["left", "right"] = "left"  # the terminal's alignment of the column


def number(key: str, name: str, text: Callable[[Optional[float]], str] = fmt) -> Column:
    """The column of the number ``key`` of the board's rows (:func:`_row`), headed ``name``, its cell
    ``text(value)`` (:func:`fmt`: three decimals, ``–`` when undefined), sorted by the value: the one
    declaration a new number needs for the Markdown and web tables and the terminal (the csv has every
    number of the row already). Its direction is its metric's (``scores.json``'s ``higher_is_better``)."""
    return Column(name, lambda s, r: text(r[key]), lambda s, r: r[key], justify="right")


def _known(s: RunScores, text: str) -> str:
    """``text``, or :data:`UNDEFINED` for a number the run's board row does not know (a submission's time)."""
    return text if time_known(s) else UNDEFINED


def _rank_cell(s: RunScores, r: dict[str, Any]) -> str:
    return UNDEFINED if r["rank"] is None else str(r["rank"])


# The main table: what a reader compares first. Every other number is in the tables below it and in the csv.
MAIN_COLUMNS: tuple[Column, ...] = (
    Column("rank", _rank_cell, lambda s, r: r["rank"]),
    Column("run", lambda s, r: s.run_id + (SUBMITTED_MARK if s.submitted else ""), lambda s, r: s.run_id, folder=True),
    Column("model", lambda s, r: s.backend, lambda s, r: s.backend),
    Column("strategy", lambda s, r: s.strategy, lambda s, r: s.strategy),
    Column("papers", lambda s, r: papers_cell(s), lambda s, r: s.papers),
    Column("valid", lambda s, r: _percent(s.valid_rate), lambda s, r: s.valid_rate),
    Column("headline [95% CI]", headline_cell, lambda s, r: s.headline, markdown=True),
    Column("P", lambda s, r: fmt(s.precision), lambda s, r: s.precision),
    Column("R", lambda s, r: fmt(s.recall), lambda s, r: s.recall),
    number("invented_rate", "invented", _percent),
    Column("cost / correct", lambda s, r: cost_per_correct_cell(s), lambda s, r: _cost_key(s)),
    Column("contamination", lambda s, r: r["contamination"], lambda s, r: r["contamination"]),
)


def _field_column(field: str) -> Column:
    """The board's column of one field's headline score (a function, so each column keeps its own field)."""
    return Column(SHORT[field], lambda s, r: fmt(s.fields[field].score, 2), lambda s, r: s.fields[field].score)


FIELD_COLUMNS: tuple[Column, ...] = (
    Column("run", lambda s, r: s.run_id, lambda s, r: s.run_id),
    *(_field_column(f) for f in BOARD_TABLE),
    Column("per-paper F1", lambda s, r: fmt(s.per_paper_f1, 2), lambda s, r: s.per_paper_f1),
)


def _unknown_cost(s: Any) -> Optional[str]:
    """The cost cell of a run whose dollars are unknown: ``unknown`` when the server reported no token
    counts (a price does not make unknown tokens cost $0), ``?`` when the price is unknown; None when known."""
    if s.dollars_total is not None:
        return None
    return "unknown" if s.tokens_per_paper is None else "?"


COST_COLUMNS: tuple[Column, ...] = (
    Column("run", lambda s, r: s.run_id, lambda s, r: s.run_id),
    Column(
        "s/paper",
        lambda s, r: _known(s, f"{s.seconds_per_paper:.1f}"),
        lambda s, r: s.seconds_per_paper if time_known(s) else None,
    ),
    Column(
        "tokens/paper",
        lambda s, r: _known(s, "unknown" if s.tokens_per_paper is None else f"{s.tokens_per_paper:.0f}"),
        lambda s, r: s.tokens_per_paper if time_known(s) else None,
    ),
    Column(
        "$/run",
        lambda s, r: _known(s, _unknown_cost(s) or f"{s.dollars_total:.4f}"),
        lambda s, r: s.dollars_total if time_known(s) else None,
    ),
    Column("correct items", lambda s, r: str(s.correct_items), lambda s, r: s.correct_items),
    Column(
        "s/correct",
        lambda s, r: _known(s, fmt(s.seconds_per_correct, 2)),
        lambda s, r: s.seconds_per_correct if time_known(s) else None,
    ),
    Column(
        "$/correct",
        lambda s, r: _known(s, _unknown_cost(s) or fmt(s.dollars_per_correct, 6)),
        lambda s, r: s.dollars_per_correct if time_known(s) else None,
    ),
)

CALIBRATION_NAMES = {"brier": "Brier", "ece": "ECE", "aurc": "AURC", "errors_caught_20": "caught@20%"}


def _calibration_column(metric: str) -> Column:
    """One calibration metric, asked confidence / logprob confidence; sorted by the first that is defined."""
    keys = [f"{metric}_{source}" for source in CALIBRATION_SOURCES]
    return Column(
        f"{CALIBRATION_NAMES[metric]} asked / logprob",
        lambda s, r: " / ".join(fmt(r[key]) for key in keys),
        lambda s, r: next((r[key] for key in keys if r[key] is not None), None),
    )


CALIBRATION_COLUMNS: tuple[Column, ...] = (
    Column("run", lambda s, r: s.run_id, lambda s, r: s.run_id),
    *(_calibration_column(metric) for metric in CALIBRATION_METRICS),
)

MODE_COLUMNS: tuple[Column, ...] = (
    Column("run", lambda s, r: s.run_id, lambda s, r: s.run_id),
    Column("mode", lambda s, r: r["output_constraint"], lambda s, r: r["output_constraint"]),
    Column(
        "prompt tokens/paper",
        lambda s, r: _known(s, "?" if s.input_tokens_per_paper is None else f"{s.input_tokens_per_paper:.0f}"),
        lambda s, r: s.input_tokens_per_paper if time_known(s) else None,
    ),
    Column(
        "failures",
        lambda s, r: ", ".join(f"{k} {v}" for k, v in s.failures_by_class.items()) or UNDEFINED,
        lambda s, r: sum(s.failures_by_class.values()),
    ),
    Column("grounded", lambda s, r: _pooled_grounding(s), lambda s, r: _pooled_grounding_rate(s)),
    Column("contamination (model cutoff)", lambda s, r: _contamination_cell(r), lambda s, r: r["contamination"]),
)

# The tables after the main one: (heading, columns, which sections' runs, the paragraph under the heading).
DETAIL_TABLES: tuple[tuple[str, tuple[Column, ...], tuple[str, ...], str], ...] = (
    (
        "Per-field scores",
        FIELD_COLUMNS,
        ("contender", "reference"),
        "Micro F1 per field (accuracy for `research_area` and `training_free`; higher is better), `–` where "
        "undefined; `results` is scored at the value+metric level, `results: value` on the value alone and "
        "`results: full` on the whole tuple, `name (soft)` under the looser name rule. The 95% CI of every field "
        "is in the csv (`<field>_ci95_low`, `_high`) and on the web page: Wilson for the two accuracy fields, "
        "percentile bootstrap over papers for micro F1 between 0 and 1, and at exactly 0 or 1 the Wilson "
        "interval of the matched share over the papers the field counts on, carried to F1 (see the end). "
        "`per-paper F1` is the secondary score with abstention credit.",
    ),
    (
        "Cost",
        COST_COLUMNS,
        ("contender", "reference", "partial"),
        f"`correct items` are the true positives pooled over the {HEADLINE_COUNT} fields; `s/correct` is model seconds "
        "and `$/correct` dollars per correct item, every attempt, retry and re-ask included and answers served from "
        "the response cache excluded. `$/run` from `paperfields/core/tables/prices.toml` (`?` when the price is "
        "unknown; `paperfields run --price IN,OUT` gives one). Lower is better in every column.",
    ),
    (
        "Calibration",
        CALIBRATION_COLUMNS,
        ("contender", "reference", "partial"),
        "`Brier` and `ECE` (lower is better) check per-field confidences against whether the field is exactly right on "
        "the paper: `asked` where the model stated a confidence per field (the `confidence` strategy), `logprob` where "
        "it was derived from the tokens' log-probabilities (local models); ECE over 10 equal-width bins; `–` without "
        "confidences. Reliability diagrams: `results/reliability_<run>.png`. Calibrated is not the same as useful for "
        "finding errors, so beside them is selective prediction (Geifman & El-Yaniv 2017): keep only the most "
        "confident (paper, field) answers and measure the error rate of those kept. `AURC` is the area under that "
        "risk–coverage curve (lower is better; a confidence that ranks nothing scores the error rate), `caught@20%` "
        "the share of wrong fields among the least confident 20% (higher is better; 0.2 at random); tied confidences "
        "count in expected value over their orders. Risk–coverage curves: `results/risk_coverage_<run>.png`.",
    ),
    (
        "Mode, failures, grounding and contamination",
        MODE_COLUMNS,
        ("contender", "reference", "partial"),
        "`mode` is how the record was asked for: the instructor mode of an `openai/` run (`md_json` puts the schema "
        "in the prompt, `json_schema` and `tools` send it in the request), `+grammar` when a grammar built from the "
        "schema constrained the output (`grammar` alone: a `local/` model in-process); `prompt tokens/paper` is what "
        "the model was sent per paper, so rows that differ in mode are not like-for-like. `grounded` is the share of "
        "predicted strings and numbers found in the abstract. `contamination` compares the model's training-data "
        "cutoff with the corpus's first public date (`paperfields/core/tables/cutoffs.toml`, with the source of each "
        "date): `after cutoff` (the model cannot have seen the abstracts), `possible overlap`, `unknown` (no "
        "published cutoff in the table), `n/a` for references.",
    ),
)

BROWSE_TEXT = """\
Generated by `paperfields leaderboard` from the published runs in `results/runs/*/scores.json`; do not edit by hand.
Sortable and filterable, with CI whiskers, a per-field heatmap and each run's report: `results/leaderboard.html`
(open it in a browser from a clone; GitHub shows its source). Every column is in `results/leaderboard.csv`.
What models get wrong (the most-missed gold items, the hardest papers, each run's errors by kind):
[difficulty.md](difficulty.md)."""

COLUMNS_TEXT = f"""\
**headline**: pooled (micro) F1 per field, macro-averaged over the {HEADLINE_COUNT} fields, with its 95% bootstrap CI \
over papers
(higher is better; how it is made is at the end). `P`, `R`: micro precision and recall over all fields' items.
`valid`: share of papers with a schema-valid record. `invented`: mean over fields of the share of papers with empty
gold where something was predicted (lower is better). `cost / correct`: model seconds (`s`, a local model) or dollars
(`$`, a priced API) per correct item (lower is better). `contamination`: the model's training-data cutoff against the
corpus's first public date. `–`: undefined."""


def leaderboard_markdown(scores: list[RunScores], gold_path: Path | None = None) -> str:
    """:meth:`Board.markdown` of ``scores``. Raises MixedVersionsError as :func:`check_versions`."""
    return Board.of(scores, gold_path).markdown()


def leaderboard_csv(scores: list[RunScores], gold_path: Path | None = None) -> str:
    """:meth:`Board.csv` of ``scores``. Raises MixedVersionsError as :func:`check_versions`."""
    return Board.of(scores, gold_path).csv()


def _table(columns: tuple[Column, ...], pairs: list[tuple[RunScores, dict[str, Any]]]) -> list[str]:
    lines = ["| " + " | ".join(c.name for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += [
        "| "
        + " | ".join(
            (c.cell(s, r) if c.markdown else escape_markdown(c.cell(s, r))) + (submission_link(s) if c.folder else "")
            for c in columns
        )
        + " |"
        for s, r in pairs
    ]
    return lines


def _markdown(board: Board) -> str:
    pairs = list(zip(board.runs, board.rows))
    lines = ["# PaperFields leaderboard", "", BROWSE_TEXT, "", COLUMNS_TEXT, ""]
    for key, title in SECTIONS:
        chosen = [(s, r) for s, r in pairs if r["section"] == key]
        if key == "reference" and any(s.submitted for s, _ in chosen):
            title += "; submitted references marked (submitted), their reasons under Submitted runs"
        if chosen:
            lines += [f"## {title}", "", *_table(MAIN_COLUMNS, chosen), ""]
    for title, columns, sections, text in DETAIL_TABLES:
        chosen = [(s, r) for s, r in pairs if r["section"] in sections]
        if chosen:
            lines += [f"## {title}", "", text, "", *_table(columns, chosen), ""]
    lines += submitted_markdown(board) + ([""] if any(s.submitted for s in board.runs) else [])
    lines += ["## How the headline is made", "", HEADLINE_TEXT, ""]
    lines += ["## Scorer validity", "", validity_text(validity_figures()), ""] + semantic_markdown(list(board.runs))
    s0 = board.runs[0]
    lines += [f"Versions: schema {s0.schema_version}, scorer {s0.scorer_version}, gold {s0.gold_version}.", ""]
    return "\n".join(lines)


def _csv(board: Board) -> str:
    import pandas as pd

    frame = pd.DataFrame([csv_columns(r) for r in board.rows])
    frame["rank"] = frame["rank"].astype("Int64")  # an unranked run's rank is an empty cell, not 'nan' or a float
    return frame.to_csv(index=False, lineterminator="\n")


TERMINAL_WIDTH = 100  # the default terminal board's widest line, however many rows: the model column wraps
TERMINAL_LEGEND = (
    "#: rank among complete contenders. ref: reference (rules/*, annotator/*, or a submission that\n"
    "declares itself one), not ranked. part: partial or unfinished run (no rank, no CI). P/R: micro\n"
    f"precision/recall over all fields' items. {UNDEFINED}: undefined. paperfields leaderboard --wide: more columns."
)


def _terminal_rank(s: RunScores, r: dict[str, Any]) -> str:
    if r["rank"] is not None:
        return str(r["rank"])
    return {"contender": UNDEFINED, "reference": "ref", "partial": "part"}[r["section"]]


def _terminal_model(s: RunScores, r: dict[str, Any]) -> str:
    """The model, and which run it is when the row alone does not say: a submission's folder, a run id of
    one's own, ``(yours)`` for a run of one's own runs folder."""
    model = s.backend or s.run_id
    own_id = s.run_id.removesuffix(" (yours)")
    if s.submitted:
        model += f" (submitted: {submission_folder(s) or own_id})"  # the folder it was scored from
    elif own_id != f"{model.replace('/', '_')}__{s.strategy}__{s.split}":
        model += f" ({own_id})"  # a run id of one's own says which run this is
    if own_id != s.run_id:
        model += " (yours)"
    return model


def _terminal_papers(s: RunScores, r: dict[str, Any]) -> str:
    if s.unfinished:
        return f"{s.papers_done}/{s.papers} done"
    return f"{s.papers} of {s.papers_in_split}" if s.partial else str(s.papers)


def _terminal_field(field: str) -> Column:
    """A headline field's score in the terminal (a function, so each column keeps its own field)."""
    return Column(SHORT[field], lambda s, r: fmt(s.fields[field].score), lambda s, r: s.fields[field].score)


# The terminal board's columns, declared as the Markdown's are (a Column's ``key`` is unused here): the default
# ones fit TERMINAL_WIDTH, ``--wide`` adds TERMINAL_WIDE_COLUMNS. Numbers are right-aligned where ``justify`` says.
TERMINAL_COLUMNS: tuple[Column, ...] = (
    Column("#", _terminal_rank, lambda s, r: r["rank"], justify="right"),
    Column("model", _terminal_model, lambda s, r: s.backend),
    Column("strategy", lambda s, r: s.strategy, lambda s, r: s.strategy),
    Column("papers", _terminal_papers, lambda s, r: s.papers, justify="right"),
    Column("valid", lambda s, r: f"{s.valid_rate:.0%}", lambda s, r: s.valid_rate, justify="right"),
    Column("headline [95% CI]", headline_cell, lambda s, r: s.headline),
    Column("P/R", lambda s, r: f"{fmt(s.precision, 2)}/{fmt(s.recall, 2)}", lambda s, r: s.precision),
    Column(
        "s/paper",
        lambda s, r: _known(s, f"{s.seconds_per_paper:.1f}"),
        lambda s, r: s.seconds_per_paper,
        justify="right",
    ),
)
TERMINAL_WIDE_COLUMNS: tuple[Column, ...] = (
    Column("invented", lambda s, r: _percent(mean_invented(s)), lambda s, r: r["invented_rate"]),
    Column(
        "$",
        lambda s, r: _known(s, _unknown_cost(s) or f"{s.dollars_total:.2f}"),
        lambda s, r: s.dollars_total,
        justify="right",
    ),
    Column("s/correct", lambda s, r: _known(s, fmt(s.seconds_per_correct, 2)), lambda s, r: s.seconds_per_correct),
    Column("contamination", lambda s, r: r["contamination"], lambda s, r: r["contamination"]),
    Column("per-paper F1", lambda s, r: fmt(s.per_paper_f1), lambda s, r: s.per_paper_f1),
    *(_terminal_field(f) for f in HEADLINE_FIELDS),
)


def _terminal(board: Board, highlight: Optional[str], wide: bool) -> Table:
    from rich.table import Table
    from rich.text import Text

    split = board.runs[0].split if board.runs else ""
    table = Table(
        title=f"PaperFields, {split} split. Headline: micro F1 per field, macro over fields (higher is better)",
        title_justify="left",
        box=None,
        pad_edge=False,
        padding=(0, 1),
        collapse_padding=True,
        header_style="bold",
    )
    columns = TERMINAL_COLUMNS + (TERMINAL_WIDE_COLUMNS if wide else ())
    for column in columns:
        table.add_column(column.name, no_wrap=column.name != "model", overflow="fold", justify=column.justify)
    section = None
    for s, r in zip(board.runs, board.rows):
        if r["section"] != section and section is not None:
            table.add_row()  # a blank line between contenders, references and partial runs
        section = r["section"]
        # Text: a run id or model name is shown as written, never read as rich markup ("x[/]y" would raise)
        table.add_row(*(Text(c.cell(s, r)) for c in columns), style="bold" if s.run_id == highlight else None)
    return table


def fmt_p(p: Optional[float]) -> str:
    """A p-value for a table cell: ``0.012``; ``< 0.001`` below 0.001 (three decimals would round it to
    ``0.000``, which no bootstrap p-value is); :data:`UNDEFINED` when undefined (None)."""
    if p is None:
        return UNDEFINED
    return "< 0.001" if p < 0.001 else f"{p:.3f}"
