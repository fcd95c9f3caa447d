"""Per-run HTML report (one self-contained file, no network) and the terminal side-by-side view.

All abstract and model text is escaped: the HTML is rendered by Jinja2 with autoescaping, and the
highlighted abstract is built from escaped segments, so ``<script>`` in an abstract or a prediction
shows as text.

The per-run table of cost per correct item and contamination status is rendered from
:data:`RUN_COLUMNS`, a list of (column name, formatter) pairs shared with the dataset card
(``paperfields/export.py``): one more entry adds a column to both.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import jinja2
from markupsafe import Markup

from paperfields import figures
from paperfields.core.corpus import Paper
from paperfields.core.gold import GoldRecord
from paperfields.core.locate import Grounding, ground_record, marks
from paperfields.core.runlog import Manifest, PredictionLine
from paperfields.core.schema import Result
from paperfields.markup import inline_markdown
from paperfields.scoring.board import BOARD_COLUMNS, UNDEFINED, fmt
from paperfields.scoring.contamination import OWN_CORPUS_SOURCE, Contamination, load_cutoffs, run_contamination
from paperfields.scoring.method import HEADLINE_TEXT  # written once: the board's and the docs' scorer page too
from paperfields.scoring.score import HEADLINE_COUNT, HEADLINE_FIELDS, RunScores, paper_f1, score_paper

if TYPE_CHECKING:
    from paperfields.scoring.difficulty import Difficulty

# FieldAggregate.ci_method as a report cell
CI_NAMES = {
    "wilson": "Wilson",
    "percentile_bootstrap": "percentile bootstrap",
    "wilson_f1_edge": "Wilson of J (F1 at 0 or 1)",
}
_PRIORITY = {"both": 2, "gold": 1, "pred": 0, "predicted": 0}

# What each highlight kind of :func:`grounding_spans` means, as the legend says it. ``pred`` is a
# prediction judged against gold (not in it); ``predicted`` a prediction of a paper without gold:
# nothing to judge it against, so it has its own neutral colour.
HIGHLIGHTS = {
    "both": "gold and predicted",
    "gold": "gold, missed",
    "pred": "predicted, not gold",
    "predicted": "predicted (no gold to check it against)",
    "quote": "evidence quote",
}


def legend(with_gold: bool, without_gold: bool, quotes: bool) -> list[tuple[str, str]]:
    """(kind, label) of each highlight a report shows: the gold kinds when some paper has gold, the
    neutral ``predicted`` when some paper has none, ``quote`` when some prediction has evidence quotes."""
    kinds = (
        (["both", "gold", "pred"] if with_gold else [])
        + (["predicted"] if without_gold else [])
        + (["quote"] if quotes else [])
    )
    return [(kind, HIGHLIGHTS[kind]) for kind in kinds]


@dataclass(frozen=True)
class RunFacts:
    """What a per-run column reads: the run's id and backend, whether it is a reference (rules/,
    annotator/: no trained model, never ranked), its stored scores (None for a run that is not scored:
    no paper has gold) and its contamination status."""

    run_id: str
    backend: str
    reference: bool
    scores: Optional[RunScores]
    contamination: Contamination

    @property
    def local(self) -> bool:
        """True for an in-process local model: it costs no dollars, its cost is model seconds."""
        return self.backend.startswith("local/")


def run_facts(manifest: Manifest, scores: Optional[RunScores], papers: Optional[list[Paper]] = None) -> RunFacts:
    """The :class:`RunFacts` of a run: the contamination status stored with its scores (what the board
    shows), or for a run without scores (or scored before the whole status was stored: no date sources)
    the status computed now from its manifest and ``papers`` (default: the corpus file the manifest
    records; :func:`~paperfields.scoring.contamination.run_contamination`)."""
    from paperfields.scoring.score import is_reference_backend

    reference = scores.reference if scores is not None else is_reference_backend(manifest.config.backend)
    stored = (scores.contamination or {}) if scores is not None else {}
    if set(Contamination.model_fields) <= set(stored):
        contamination = Contamination.model_validate(stored)
    else:
        contamination = run_contamination(manifest, reference, papers)
    return RunFacts(
        run_id=manifest.run_id,
        backend=manifest.config.backend,
        reference=reference,
        scores=scores,
        contamination=contamination,
    )


def cost_per_correct(r: RunFacts) -> str:
    """The run's cost per correct item in its own unit: model seconds for a local model (``11.04 s``),
    dollars when the run is priced (``$0.000123``), seconds with ``(no price)`` when the price is
    unknown; ``–`` without scores, without a correct item, or for a reference (it calls no model)."""
    s = r.scores
    if s is None or not s.correct_items or r.reference:
        return UNDEFINED
    seconds = (
        s.model_seconds / s.correct_items
    )  # recomputed: a scores.json written before 2026-12-01 stored it rounded to 4 decimals
    if r.local:
        return f"{seconds:.2f} s"
    if s.dollars_per_correct is None:
        return f"{seconds:.2f} s (no price)"
    return f"${s.dollars_per_correct:.6f}"


def _dollars_per_correct(r: RunFacts) -> str:
    s = r.scores
    if s is None or not s.correct_items or r.reference:  # a reference calls no priced model
        return UNDEFINED
    if r.local:
        return "0 (local)"
    return "? (no price)" if s.dollars_per_correct is None else f"{s.dollars_per_correct:.6f}"


def _status(r: RunFacts) -> str:
    c = r.contamination
    return c.status + (f" ({c.note})" if c.note else "")


def _corpus_date(r: RunFacts) -> str:
    """``2026-01 (cutoffs.toml)`` for the benchmark corpus (its full source is in :func:`run_table_text`),
    ``2025-03 (corpus build --date)`` for a date a corpus of one's own states, ``not stated`` without one."""
    c = r.contamination
    if c.corpus_earliest_public is None:
        return "not stated"
    where = "corpus build --date" if c.corpus_source == OWN_CORPUS_SOURCE else (c.corpus_source or "").split(":")[0]
    return c.corpus_earliest_public + (f" ({where})" if where else "")


RunColumn = tuple[str, Callable[[RunFacts], str]]

# One (column name, formatter) per column of the per-run tables of the report and the dataset card.
_CALIBRATION_NAMES = {
    "brier": "Brier",
    "ece": "ECE",
    "aurc": "AURC",
    "errors_caught_20": "errors caught in least confident 20%",
}


def _calibration(source: str, metric: str) -> RunColumn:
    """A column of one calibration or selective-prediction metric (RunScores.calibration: Brier, ECE,
    AURC lower is better; errors caught higher) of one confidence source."""

    def cell(r: Any) -> str:
        cal = (r.scores.calibration if r.scores is not None else {}).get(source)
        return UNDEFINED if cal is None else fmt(getattr(cal, metric), 3)

    return (f"{_CALIBRATION_NAMES[metric]} ({source} confidence)", cell)


RUN_COST_COLUMNS: list[RunColumn] = [
    ("correct items", lambda r: UNDEFINED if r.scores is None else str(r.scores.correct_items)),
    ("cost / correct item", cost_per_correct),
    (
        "model s / correct",
        lambda r: (
            UNDEFINED
            if r.scores is None or r.reference
            else (UNDEFINED if not r.scores.correct_items else fmt(r.scores.model_seconds / r.scores.correct_items, 2))
        ),
    ),
    ("$ / correct", _dollars_per_correct),
    ("contamination", _status),
    ("model cutoff", lambda r: r.contamination.model_cutoff or (UNDEFINED if r.reference else "unknown")),
    ("cutoff source", lambda r: r.contamination.cutoff_source or UNDEFINED),
    ("corpus first public", _corpus_date),
]
# Confidence in a table of its own: beside cost and contamination, 17 columns do not fit a 1,400 px window.
RUN_CONFIDENCE_COLUMNS: list[RunColumn] = [
    *(_calibration(source, metric) for source in ("asked", "logprob") for metric in ("brier", "ece")),
    *(_calibration(source, metric) for source in ("asked", "logprob") for metric in ("aurc", "errors_caught_20")),
]
RUN_COLUMNS: list[RunColumn] = RUN_COST_COLUMNS + RUN_CONFIDENCE_COLUMNS


def run_table(facts: list[RunFacts], columns: Optional[list[RunColumn]] = None) -> tuple[list[str], list[list[str]]]:
    """(header, one row of cells per run) of the per-run table: ``run`` then each column of ``columns``
    (default :data:`RUN_COLUMNS`); plain text, escaped by whoever renders it."""
    columns = RUN_COLUMNS if columns is None else columns
    return ["run"] + [name for name, _ in columns], [[r.run_id] + [cell(r) for _, cell in columns] for r in facts]


def run_table_text() -> str:
    """The sentence under a per-run table saying what its cost and contamination columns mean."""
    corpus = load_cutoffs()[0]
    margin = corpus.margin_months
    return (
        "Cost per correct item: model seconds (a local model, which costs no dollars) or dollars (a priced API run) "
        f"per true positive pooled over the {HEADLINE_COUNT} fields, every attempt, retry and re-ask included, answers "
        "served from the response cache excluded; lower is better. Contamination: the model's training-data cutoff "
        "against the corpus's first public date (paperfields/core/tables/cutoffs.toml, or the date a corpus of your "
        f"own states with corpus build --date): after cutoff (the corpus was public more than {margin} months after "
        "the cutoff, so the model cannot have seen it), possible overlap (less), unknown (no cutoff, or no corpus "
        "date), n/a for references (rules/, annotator/: no trained model). The benchmark corpus was first public "
        f"{corpus.earliest_public} (cutoffs.toml: {corpus.source}). Confidence (asked: stated by the model; logprob: "
        "from token log-probabilities), checked per (paper, field) against exact correctness: Brier and ECE (10 bins) "
        "say whether it is calibrated (lower is better); AURC, the area under the risk–coverage curve (Geifman & "
        "El-Yaniv 2017: the error rate of the answers kept when only the most confident are kept), and the share of "
        "wrong fields among the least confident 20% say whether it finds the errors (AURC lower is better and equals "
        "the error rate when the confidence ranks nothing; errors caught higher is better, 0.2 at random); tied "
        "confidences count in expected value over their orders."
    )


def _disjoint(candidates: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Spans that do not overlap, taken by kind priority, then the longer, then the earlier."""
    chosen: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(candidates, key=lambda m: (-_PRIORITY.get(m[2], 0), -(m[1] - m[0]), m[0])):
        if all(end <= s or start >= e for s, e, _ in chosen):
            chosen.append((start, end, kind))
    return chosen


def grounding_spans(gold: Optional[Grounding], predicted: Optional[Grounding]) -> list[tuple[int, int, str]]:
    """(start, end, kind) spans of an abstract, in order, from the grounding of its gold record and of
    a prediction (:mod:`~paperfields.core.locate`: only what is written there, exact or
    normalized). Items: ``both`` (a span located for a gold item and for a predicted one), ``gold``
    (missed), ``pred`` (predicted, not gold); with no gold record (``gold`` None) every predicted item
    is ``predicted``, neither right nor wrong. Where item spans overlap, both > gold > pred, then the
    longer. Quotes: ``quote`` (the prediction's evidence quotes, the longer first). Items never overlap
    items, nor quotes quotes; a quote may hold items."""
    gold_spans = {(s, e) for s, e, what in marks(gold) if what == "item"} if gold else set()
    pred_marks = marks(predicted) if predicted else []
    pred_spans = {(s, e) for s, e, what in pred_marks if what == "item"}
    items = [(s, e, "both" if (s, e) in pred_spans else "gold") for s, e in gold_spans]
    items += [(s, e, "pred" if gold else "predicted") for s, e in pred_spans - gold_spans]
    quotes = {(s, e, "quote") for s, e, what in pred_marks if what == "quote"}
    return sorted(_disjoint(items) + _disjoint(sorted(quotes)))


def paper_spans(text: str, gold: Optional[GoldRecord], line: Optional[PredictionLine]) -> list[tuple[int, int, str]]:
    """:func:`grounding_spans` of one paper: its gold record (None: no gold) located in ``text``, and
    the prediction line's stored grounding (located now for a line written before it was stored)."""
    gold_grounding = ground_record(gold.record.model_dump(mode="json"), text) if gold else None
    predicted = line.located(text) if line is not None and line.record is not None else None
    return grounding_spans(gold_grounding, predicted)


def highlighted_html(text: str, spans: list[tuple[int, int, str]]) -> Markup:
    """The abstract as HTML: every segment escaped, spans wrapped in ``<mark class=kind>``; an item
    inside a quote (see :func:`grounding_spans`) is marked inside the quote's mark."""
    cuts = sorted({0, len(text)} | {i for s, e, _ in spans for i in (s, e)})
    parts = []
    for start, end in zip(cuts, cuts[1:]):
        covering = [kind for s, e, kind in spans if s <= start and end <= e]
        piece = str(escape(text[start:end]))
        for kind in sorted(covering, key=lambda k: k == "quote"):  # the quote outermost
            piece = f'<mark class="{kind}">{piece}</mark>'
        parts.append(piece)
    return Markup("".join(parts))


def field_bars(scores: RunScores) -> tuple[figures.Draw, tuple[Any, ...]]:
    """The report's per-field bar chart of ``scores``: its draw function and inputs (paperfields/figures.py), the
    headline fields' scores and 95% intervals."""
    values = [scores.fields[f].score for f in HEADLINE_FIELDS]
    return draw_field_bars, (values, [scores.fields[f].ci95 for f in HEADLINE_FIELDS])


def _field_bar_png(scores: RunScores) -> str:
    draw, inputs = field_bars(scores)
    return base64.b64encode(figures.png(draw, *inputs)).decode("ascii")


def draw_field_bars(values: list[Optional[float]], cis: list[Optional[tuple[float, float]]]) -> bytes:
    """PNG bytes of bars of the headline fields' ``values`` (None: undefined, marked) with their 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.bar(
        HEADLINE_FIELDS,
        [v or 0.0 for v in values],
        color="#4c72b0",
        yerr=[
            [(v - c[0]) if v is not None and c else 0 for v, c in zip(values, cis)],
            [(c[1] - v) if v is not None and c else 0 for v, c in zip(values, cis)],
        ],
        capsize=3,
    )
    for i, v in enumerate(values):
        if v is None:
            ax.text(i, 0.02, "undefined", rotation=90, ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("micro F1 / accuracy\n(higher is better)")
    ax.tick_params(axis="x", rotation=40)
    for label in ax.get_xticklabels():
        label.set_ha("right")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


_TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>PaperFields report: {{ manifest.run_id }}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em \
.6em;vertical-align:top;text-align:left}
mark.both{background:#b7e4b0}mark.gold{background:#ffe08a}mark.pred{background:#f6b0b0}\
mark.predicted{background:#ddd6ea}mark.quote{background:#b0d4f6}
.run-wrap{overflow-x:auto;margin:1em 0}table.run{width:100%;margin:0;font-size:.8em}table.run th,table.run \
td{padding:.25em .35em}
table.run td{overflow-wrap:anywhere}table.run td:first-child{min-width:10em}
.ok{color:#1a7f37}.bad{color:#b42318}.paper{border-top:2px solid #888;margin-top:2em}
</style></head><body>
<h1>PaperFields report: {{ manifest.run_id }}</h1>
{% if scores %}<p>Backend <b>{{ manifest.config.backend }}</b>, strategy <b>{{ manifest.config.strategy }}</b>, split \
<b>{{ scores.split }}</b>,
{{ plural(scores.papers, "paper") }}. Versions: schema {{ scores.schema_version }}, scorer \
{{ scores.scorer_version }}, gold {{ scores.gold_version }};
commit {{ manifest.git_commit or "unknown" }}.</p>{% else %}<p>Backend <b>{{ manifest.config.backend }}</b>, strategy \
<b>{{ manifest.config.strategy }}</b>,
split <b>{{ manifest.config.split }}</b>, {{ plural(manifest.papers_total, "paper") }} ({{ manifest.papers_valid }} \
with a record); commit {{ manifest.git_commit or "unknown" }}.</p>
<p>Not scored: none of the run's papers has a gold record (a corpus of your own). Below are the predictions, each \
beside its abstract.</p>{% endif %}
{% if scores %}<p>{{ method }}</p>
<table><tr><th>headline [95% CI]</th><th>micro P</th><th>micro R</th><th>per-paper F1 (abstention \
credit)</th><th>valid</th><th>failures</th><th>s/paper</th><th>tokens/paper</th></tr>
<tr><td>{{ num(scores.headline) }}{% if scores.headline_ci95 and scores.comparable %} \
[{{ "%.3f"|format(scores.headline_ci95[0]) }}, {{ "%.3f"|format(scores.headline_ci95[1]) }}]{% endif %}</td>
<td>{{ num(scores.precision) }}</td><td>{{ num(scores.recall) }}</td><td>{{ num(scores.per_paper_f1) }}</td>
<td>{{ "%.0f"|format(scores.valid_rate * 100) }}%</td><td>{% for k, v in scores.failures_by_class.items() %}{{ k }} \
{{ v }}{% if not loop.last %}, {% endif %}{% else %}none{% endfor %}</td>
<td>{{ "%.1f"|format(scores.seconds_per_paper) }}</td><td>{{ "unknown" if scores.tokens_per_paper is none else \
"%.0f"|format(scores.tokens_per_paper) }}</td></tr></table>
<table><tr><th>field</th><th>score [95% CI]</th><th>metric</th><th>CI</th><th>micro P</th><th>micro R</th><th>invented \
rate</th></tr>
{% for f in fields %}<tr><td>{{ f }}</td><td>{{ num(scores.fields[f].score) }}{% if scores.fields[f].ci95 %} \
[{{ "%.2f"|format(scores.fields[f].ci95[0]) }}, {{ "%.2f"|format(scores.fields[f].ci95[1]) }}]{% endif %}</td>
<td>{{ scores.fields[f].metric }}</td><td>{{ ci_names.get(scores.fields[f].ci_method, "–") }}</td><td>\
{{ num(scores.fields[f].micro_precision) }}</td><td>{{ num(scores.fields[f].micro_recall) }}</td>
<td>{{ num(scores.fields[f].invented_rate, 2) }}</td></tr>{% endfor %}
</table>
<img alt="per-field F1 with 95% CI" src="data:image/png;base64,{{ plot }}">{% endif %}
<h2 id="cost-contamination">Cost and contamination{% if facts.reference %} (a reference run: not ranked, no trained \
model){% endif %}</h2>
{% for head, rows in run_tables %}<div class="run-wrap"><table class="run">
<tr>{% for name in head %}<th>{{ name }}</th>{% endfor %}</tr>
{% for row in rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}
</table></div>
{% endfor %}<p>{{ run_text }}</p>
{% if errors_head %}<h2 id="errors">What this run gets wrong</h2>
<p>{{ errors_text }}</p>
<table class="errors"><tr>{% for name in errors_head %}<th>{{ name }}</th>{% endfor %}</tr>
{% for row in errors_rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}
</table>{% endif %}
{% if missed %}<h3 id="most-missed">The gold items the published contenders miss most, and this run</h3>
<p>{{ difficulty_text }}</p>
<table class="missed"><tr><th>paper</th><th>field</th><th>gold item</th><th>contenders right</th><th>this \
run</th><th>sentence of the abstract</th></tr>
{% for i in missed %}<tr><td>{{ i.paper_id }}</td><td>{{ i.field }}</td><td>{{ i.text }}</td><td>{{ i.right }}\
/{{ i.contenders }}</td><td>{{ i.mine }}</td><td>{{ i.sentence }}</td></tr>{% endfor %}
</table>{% endif %}
{% if highlights %}<p class="legend">Highlights: {% for kind, label in highlights %}<mark class="{{ kind }}">\
{{ label }}</mark>{% if not loop.last %} {% endif %}{% endfor %}</p>{% endif %}
{% for p in papers %}<section class="paper" id="{{ p.id }}">
<h2>{{ p.id }} <small>({{ p.source }}, #{{ p.position }}; {% if p.gold %}per-paper F1 \
{{ "%.3f"|format(p.overall) }}{% else %}no gold{% endif %})</small></h2>
{% if p.failure %}<p class="bad">No record: {{ p.failure }}: {{ p.error }}</p><pre>{{ p.raw_text }}</pre>{% endif %}
<p>{{ p.abstract }}</p>
{% if p.gold %}<table><tr><th>field</th><th>gold</th><th>prediction</th><th>F1</th></tr>
{% for row in p.rows %}<tr><td>{{ row.field }}</td><td>{{ row.gold }}</td><td>{{ row.pred }}</td>\
<td class="{{ 'ok' if row.f1 == 1 else 'bad' }}">{{ "%.2f"|format(row.f1) }}</td></tr>{% endfor %}
</table>{% else %}<table><tr><th>field</th><th>prediction</th></tr>
{% for row in p.rows %}<tr><td>{{ row.field }}</td><td>{{ row.pred }}</td></tr>{% endfor %}
</table>{% endif %}</section>{% endfor %}
</body></html>
"""


def _show(value: Any) -> str:
    if value in (None, [], ""):
        return "-"
    if isinstance(value, list):
        return "; ".join(_show(v) for v in value)
    if isinstance(value, dict):  # a result tuple
        return "(" + ", ".join(f"{k}={value[k]}" for k in Result.model_fields if value.get(k) not in (None, "")) + ")"
    return str(value)


def paper_rows(line: Optional[PredictionLine], gold: GoldRecord, abstract: str = "") -> list[dict[str, Any]]:
    """One row per headline field: gold, prediction (as display text) and the paper's F1 on it
    (``abstract`` gives the scorer the written numbers and defined acronyms, as in the stored scores)."""
    record = line.record if line else None
    counts = score_paper(record, gold, abstract)
    g = gold.record.model_dump(mode="json")
    return [
        {
            "field": f,
            "gold": _show(g[f]),
            "pred": _show((record or {}).get(f)),
            "f1": paper_f1(counts[f], record is not None),
        }
        for f in HEADLINE_FIELDS
    ]


def prediction_rows(line: Optional[PredictionLine]) -> list[dict[str, Any]]:
    """One row per headline field for a paper with no gold: the field and the prediction as display text."""
    record = (line.record if line else None) or {}
    return [{"field": f, "pred": _show(record.get(f))} for f in HEADLINE_FIELDS]


def error_section(
    lines: list[PredictionLine], gold: list[GoldRecord], papers: list[Paper], published: Optional[Difficulty] = None
) -> dict[str, Any]:
    """What the report shows of :mod:`~paperfields.scoring.difficulty` for one run: its error taxonomy per
    field (``errors_head``, ``errors_rows``, over its papers with gold) and, given the ``published`` runs'
    difficulty, their most-missed gold items with this run's verdict on each (``missed``: ``right`` or
    ``missed``, ``–`` for a paper the run did not score)."""
    from paperfields.scoring.difficulty import (
        DIFFICULTY_TEXT,
        MOST_MISSED,
        TAXONOMY_TEXT,
        judge_paper,
        taxonomy_of,
        taxonomy_rows,
    )

    texts = {p.id: p.text for p in papers}
    records = {line.paper_id: line.record for line in lines}
    judged = {g.id: judge_paper(records.get(g.id), g, texts.get(g.id, "")) for g in gold}
    fields = list(next(iter(judged.values())).errors) if judged else []
    head, rows = taxonomy_rows(taxonomy_of(list(judged.values()), fields)) if judged else ([], [])
    mine = {(pid, i.field, i.index): i.right for pid, j in judged.items() for i in j.items}
    missed = []
    for item in published.most_missed(MOST_MISSED) if published is not None else []:
        key = (item.paper_id, item.field, item.index)
        missed.append(
            {
                "paper_id": item.paper_id,
                "field": item.field,
                "text": item.text,
                "right": item.right,
                "contenders": item.contenders,
                "mine": UNDEFINED if key not in mine else "right" if mine[key] else "missed",
                "sentence": item.sentence or UNDEFINED,
            }
        )
    return {
        "errors_head": head,
        "errors_rows": rows,
        "errors_text": TAXONOMY_TEXT,
        "missed": missed,
        "difficulty_text": DIFFICULTY_TEXT,
    }


@lru_cache(maxsize=1)
def _report_template() -> jinja2.Template:
    """The report's template, compiled once per process (a board writes a report per run: compiling it for each
    was a tenth of the board's time)."""
    from paperfields.core.plural import plural

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.globals["num"] = fmt  # an undefined score shows as a dash, never as 1.000
    env.globals["plural"] = plural
    return env.from_string(_TEMPLATE)


def render_report(
    manifest: Manifest,
    scores: Optional[RunScores],
    lines: list[PredictionLine],
    gold: list[GoldRecord],
    papers: list[Paper],
    detail: dict[str, dict[str, Any]],
    published: Optional[Difficulty] = None,
) -> str:
    """The self-contained HTML report of one run: every paper the run asked (``manifest.paper_ids``, else
    the ``gold`` papers) that is in ``papers``, with gold and F1 where the paper has gold, the
    prediction alone where it has none; ``scores`` None (no paper has gold) leaves out the summary. The
    run's cost per correct item and contamination status are a table of :data:`RUN_COLUMNS`; what it
    gets wrong is :func:`error_section` (with ``published``, the published runs' difficulty)."""
    by_line = {l.paper_id: l for l in lines}
    by_paper = {p.id: p for p in papers}
    by_gold = {g.id: g for g in gold}
    items, kinds = [], set()
    for paper_id in manifest.paper_ids or list(by_gold):
        paper, line, g = by_paper[paper_id], by_line.get(paper_id), by_gold.get(paper_id)
        spans = paper_spans(paper.text, g, line)
        kinds |= {kind for _, _, kind in spans}
        items.append(
            {
                "id": paper_id,
                "source": paper.source,
                "position": paper.position,
                "gold": g is not None,
                "overall": detail.get(paper_id, {}).get("per_paper_f1", 0.0),
                "failure": line.failure.value if line and line.failure else None,
                "error": line.error if line else "not run",
                "raw_text": (line.raw_text or "") if line and line.failure else "",
                "abstract": highlighted_html(paper.text, spans),
                "rows": paper_rows(line, g, paper.text) if g else prediction_rows(line),
            }
        )
    facts = run_facts(manifest, scores, papers)
    split = len(RUN_COST_COLUMNS)  # cost and contamination, then confidence and any column added after it
    run_tables = [run_table([facts], RUN_COLUMNS[:split]), run_table([facts], RUN_COLUMNS[split:])]
    return _report_template().render(
        manifest=manifest,
        scores=scores,
        fields=BOARD_COLUMNS,
        ci_names=CI_NAMES,
        method=inline_markdown(HEADLINE_TEXT),
        plot=_field_bar_png(scores) if scores else "",
        papers=items,
        facts=facts,
        run_tables=run_tables,
        run_text=run_table_text(),
        highlights=legend(any(p["gold"] for p in items), not all(p["gold"] for p in items), "quote" in kinds),
        **error_section(lines, gold if scores else [], papers, published if scores else None),
    )


def published_difficulty(gold_path: Path, runs_dir: Optional[Path] = None) -> Optional[Difficulty]:
    """The difficulty of the published runs (``results/runs``; :func:`~paperfields.scoring.difficulty.load_difficulty`),
    or None when there are none, they hold no complete contender, or their scores cannot be read (the
    report then leaves the most-missed items out rather than fail on runs it is not about)."""
    from paperfields.core import paths
    from paperfields.core.runlog import RunError
    from paperfields.scoring.difficulty import load_difficulty

    try:
        view = load_difficulty(runs_dir or paths.published_runs_dir(), gold_path)
    except (RunError, ValueError, OSError):
        return None
    return view if view.contenders else None


def write_report(
    run_dir: Path,
    gold_path: Path,
    corpus_path: Optional[Path] = None,
    out: Optional[Path] = None,
    published: Optional[Callable[[], Optional[Difficulty]]] = None,
) -> Path:
    """Write ``report.html`` for a run folder; returns its path. ``corpus_path`` defaults to the run's
    corpus (:func:`paperfields.api.run_corpus_path`). ``published`` gives the published runs' difficulty
    when the report needs it (default: :func:`published_difficulty` of ``gold_path``): a caller writing
    many reports (the web board) computes it once for all. A run with gold for some of its papers must be
    scored; a run with none (a corpus of one's own) is reported without scores. Raises RunError when
    such a run is not scored, its scores files are unreadable or stale (predictions changed since
    scoring), the corpus is not found, or a paper of the run is not in it."""
    from paperfields.api import run_corpus_path
    from paperfields.core.corpus import load_corpus
    from paperfields.core.gold import load_gold
    from paperfields.core.runlog import RunError, load_manifest, read_predictions
    from paperfields.scoring.runs import load_scored_run

    manifest = load_manifest(run_dir)
    lines = read_predictions(run_dir / "predictions.jsonl")  # a bad line is named before any staleness
    asked = set(manifest.paper_ids)
    gold = [g for g in load_gold(gold_path) if g.id in asked]
    scores, detail = load_scored_run(run_dir, gold_path) if gold else (None, {})
    corpus_path = corpus_path or run_corpus_path(run_dir, manifest)
    papers = load_corpus(corpus_path)
    missing = sorted(asked - {p.id for p in papers})
    if missing:
        raise RunError(
            f"{corpus_path}: paper {missing[0]} of the run {run_dir.name} is not in this corpus"
            f"{f' (nor {len(missing) - 1} more)' if len(missing) > 1 else ''}; give the run's corpus with --corpus FILE"
        )
    html = render_report(
        manifest,
        scores,
        lines,
        gold,
        papers,
        detail,
        ((published or (lambda: published_difficulty(gold_path)))() if scores else None),
    )
    target = out or run_dir / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html, encoding="utf-8")
    return target
