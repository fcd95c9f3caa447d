"""How the scorer works, written once from the code's own facts.

The board's "How the headline is made" (``results/leaderboard.md`` and the web page), each run's HTML
report and the docs' scorer page all read :data:`HEADLINE_TEXT`; the docs' tables of the field rules,
the failure classes and the repairs are :func:`field_rules_markdown`, :func:`failure_classes_markdown`
and :func:`repairs_markdown`. Each is made from the facts the scorer itself runs on: the fields'
:class:`~paperfields.core.fields.FieldFacts` (which fields, which metric, which matching rule), the
matchers of :data:`~paperfields.scoring.score.MATCHERS` with their settings,
:class:`~paperfields.core.runlog.FailureClass` and :data:`~paperfields.core.repairs.REPAIRS`. A change
to any of them changes every copy at once; ``tests/test_docs.py`` fails when a written copy differs.
"""

from __future__ import annotations

import textwrap
from typing import Any

from pydantic import BaseModel

from paperfields.core.escape import escape_markdown
from paperfields.core.fields import RecordField, record_fields
from paperfields.core.repairs import REPAIRS
from paperfields.core.runlog import FailureClass
from paperfields.core.schema import PaperRecord
from paperfields.scoring.score import MATCHERS, scores_of


def _names(names: list[str]) -> str:
    """`a`, `a` and `b`, `a`, `b` and `c`."""
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def headline_text(model: type[BaseModel] = PaperRecord) -> str:
    """How the headline, its CI, P, R and per-paper F1 are made, for the record fields of ``model``
    (Markdown: `code` spans only, one paragraph). Raises ValueError when ``model`` has no headline field."""
    fields = [f for f in record_fields(model) if f.facts.headline]
    if not fields:
        raise ValueError(f"{model.__name__} has no headline field")
    n = len(fields)
    accuracy = [f.name for f in fields if f.facts.metric == "accuracy"]
    nullable = [f.name for f in fields if f.facts.metric == "accuracy" and f.nullable]
    acc = _names(accuracy) if accuracy else ""
    labels = (
        f", and {acc} {'are' if len(accuracy) > 1 else 'is'} classification accuracy"
        + (f" (null a class of its own for {_names(nullable)}; a failed paper is wrong)" if nullable else "")
        if accuracy
        else ""
    )
    share = f"for {acc} (a share of papers labeled right) the Wilson interval; " if accuracy else ""
    return (
        f"The headline is pooled (micro) F1 per field, macro-averaged over the {n} headline fields: for each field "
        "the true positives, false positives and false negatives are summed over the split's papers before F1 is "
        f"taken (as SciREX and AxCell do){labels}. A field with nothing in gold and nothing predicted over the whole "
        "split is undefined and left out of the mean (never 1.0); a correct null name or URL counts nothing, an "
        "invented one is a false positive. So saying nothing earns nothing: the `rules/empty` reference (the "
        "schema's default record for every paper) scores near 0, and a record with one field right about "
        f"1/{n} of a perfect one. Confidence intervals are 95%. The headline's is a percentile bootstrap interval "
        "over papers, with the pooled counts recomputed on each resample (`paperfields compare` runs a paired "
        "bootstrap the same way). A field's interval is made one of three ways, each keeping its width at 0 and 1 "
        f"(`ci_method` in `scores.json` says which): {share}for a micro-F1 field strictly between 0 and 1 the "
        "percentile bootstrap as above; for a micro-F1 field at exactly 1 or 0, where every resample repeats the "
        "point, the bootstrap would say [1.00, 1.00] or [0.00, 0.00] and BCa is undefined, the Wilson interval of "
        "the share of matched items J = tp / (tp + fp + fn) over the papers the field counts on, carried to "
        "F1 = 2J / (1 + J); papers, not items, are its trials, since the items of one paper are not independent. "
        f"`P` and `R` are micro precision and recall pooled over the items of all {n} fields; `–` marks a number "
        "that is undefined (precision with nothing predicted, recall with nothing in gold; `null` in `scores.json` "
        "and the csv). `per-paper F1` is the older secondary score, the mean over papers of per-paper F1 where an "
        "answered paper with nothing in gold and nothing predicted on a field scores 1 on it (abstention credit): "
        "it rewards leaving fields empty, so it never ranks."
    )


# Wrapped for the Markdown board (a paragraph: the web page and the reports join the lines again).
HEADLINE_TEXT = textwrap.fill(headline_text(), width=110, break_long_words=False, break_on_hyphens=False)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _kind(field: RecordField) -> str:
    """What a field holds, from its type: a list of strings, a label, a nullable scalar, ..."""
    item = field.item
    if field.is_record_list:
        what = f"list of {item.__name__} tuples"
    elif field.is_label:
        what = (
            ("list of labels" if field.is_list else "one label")
            + " ("
            + ", ".join("null" if c is None else str(c).lower() for c in field.classes)
            + ")"
        )
    else:
        what = "list of strings" if field.is_list else "string"
    return what + (" or null" if field.nullable and not field.is_label else "")


def _settings(settings: dict[str, Any] | None) -> str:
    """A similarity rule's settings that differ from nothing, in words: threshold and what it reduces."""
    if not settings:
        return ""
    parts = [f"threshold {settings['threshold']}"]
    parts += [
        key
        for key in ("containment", "compounds", "contrast", "word_forms", "approach", "bare_acronym")
        if settings.get(key)
    ]
    for key in ("heads", "restrictions"):
        if settings.get(key):
            parts.append(f"{key}: " + ", ".join(settings[key]))
    if settings.get("abbreviations"):
        parts.append(f"{len(settings['abbreviations'])} abbreviations")
    if settings.get("added"):
        parts.append(f"{len(settings['added'])} added words")
    return "; ".join(parts)


def field_rules_markdown(model: type[BaseModel] = PaperRecord) -> str:
    """Two Markdown tables from the fields' facts and :data:`~paperfields.scoring.score.MATCHERS`: every
    reported score of ``model``'s records (each field's own, then its levels) with what the field holds,
    its metric and its matching rule; then each rule used, with what it does and its settings."""
    by_name = {f.name: f for f in record_fields(model)}
    lines = ["| score | holds | metric | rule |", "|---|---|---|---|"]
    used: list[str] = []
    for score in scores_of(model):
        field = by_name[score.field]
        metric = "accuracy" if score.metric == "accuracy" else "micro F1"
        if score.name == field.name:
            holds = _kind(field)
        else:
            holds = f"a level of `{field.name}`, reported beside it"
        if not score.headline:
            metric += ", not in the headline"
        lines.append("| " + " | ".join(_cell(c) for c in (f"`{score.name}`", holds, metric, f"`{score.match}`")) + " |")
        used += [score.match] if score.match not in used else []
    lines += ["", "| rule | how a prediction matches gold |", "|---|---|"]
    for name in used:
        matcher = MATCHERS[name]
        how = matcher.about + (f" ({_settings(matcher.settings)})" if matcher.settings else "")
        lines.append(f"| `{name}` | {_cell(how)} |")
    return "\n".join(lines)


def failure_classes_markdown() -> str:
    """The table of every :class:`~paperfields.core.runlog.FailureClass`: what happened and what a rerun does
    (each member's ``what`` and ``rerun``)."""
    lines = ["| class | what happened | rerun |", "|---|---|---|"]
    lines += [f"| `{failure.value}` | {_cell(failure.what)} | {_cell(failure.rerun)} |" for failure in FailureClass]
    return "\n".join(lines)


def repairs_markdown() -> str:
    """The table of every repair of :data:`~paperfields.core.repairs.REPAIRS`: what the reply had, what is stored."""
    lines = ["| repair | what the reply had | what is stored |", "|---|---|---|"]
    lines += [f"| `{name}` | {_cell(r.reply_had)} | {_cell(r.stored)} |" for name, r in REPAIRS.items()]
    return "\n".join(lines)


# The generated parts of the docs, by the name a page's marker gives (docs/hooks.py).
DOCS_BLOCKS = {
    "headline": lambda: HEADLINE_TEXT,
    "field-rules": field_rules_markdown,
    "failure-classes": failure_classes_markdown,
    "repairs": repairs_markdown,
}


def _figure(f: dict[str, Any]) -> str:
    """An agreement with its interval, or "–" (undefined) when the band holds no pair."""
    if f.get("agreement") is None or not f.get("ci95"):
        return "–"
    low, high = f["ci95"]
    return f"{f['agreement']:.3f} [{low:.3f}, {high:.3f}]"


def _kappa(f: dict[str, Any]) -> str:
    """Cohen's kappa to two places, or "–" where it is undefined (no pair, or one verdict only on both sides)."""
    return "–" if f.get("kappa") is None else f"{f['kappa']:.2f}"


def validity_figures(gold_dir: Any = None) -> dict[str, Any] | None:
    """The held-out scorer-validity figures ``paperfields gold agreement`` wrote (``gold/validity.json``:
    overall, contested band, results, the semantic tier, who judged), or None before the held-out set is read."""
    import json
    from pathlib import Path

    from paperfields.core import paths

    path = Path(gold_dir or paths.gold_dir()) / "validity.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def validity_text(figures: dict[str, Any] | None, short: bool = False) -> str:
    """One paragraph on how far the scorer's verdicts agree with a blind judge's on the held-out pairs
    (``figures``: :func:`validity_figures`), for the board and (``short``) the README's board block."""
    if not figures:
        return (
            "Scorer validity: the held-out judged pairs are not read yet; the figures on the tuning pairs are in "
            "`gold/AGREEMENT.md`."
        )
    o, c, r = figures["overall"], figures["contested"], figures["results"]
    met = "met" if figures["target"]["met"] else "not met"
    text = (
        f"Scorer validity: on {o['pairs']} held-out (prediction, gold) pairs judged blind by "
        + ("a separate AI agent session (not a person)" if short else figures["judge"])
        + f", scorer {figures['scorer_version']} agrees with the judge on {_figure(o)} of pairs (Cohen's kappa "
        f"{_kappa(o)}): on {_figure(c)} of the {c['pairs']} contested string pairs, those a rule decides by a "
        f"word or a letter, and on {_figure(r)} of the {r['pairs']} result tuples, judged at the headline's "
        + (
            "value-and-metric level, which does not ask the unit or the kind "
            if figures["scorer_version"] in ("3.3", "3.4")
            else "claim level (value, unit, kind, metric and no contradicting context) "
        )
        + f"(targets {figures['target']['overall']:.2f} overall and "
        f"{figures['target']['contested']:.2f} contested: {met})."
    )
    semantic = figures.get("semantic") or {}
    if semantic:
        text += (
            " The semantic tier (an embedding model deciding the contested band, shown beside the headline "
            f"and never ranked) agrees on {_figure(semantic['overall'])}, and on "
            f"{_figure(semantic['contested'])} of the contested pairs."
        )
    return text + " Every disagreement is listed in `gold/AGREEMENT.md`."


def semantic_markdown(runs: list[Any]) -> list[str]:
    """The board's lines on the semantic tier: each run's deterministic headline beside the headline with the
    contested band decided by the embedding model (``scores.semantic``); no line when no run has it."""
    chosen = [s for s in runs if getattr(s, "semantic", None) is not None]
    if not chosen:
        return []
    s0 = chosen[0].semantic
    lines = [
        "## Semantic tier (beside the headline, never ranked)",
        "",
        f"The same runs with the contested band (pairs a rule decides by a word or a letter) decided by `{s0.model}` "
        f"(cosine at least {s0.threshold:.2f}; scoring/semantic.py) instead of the rules. The headline above stays the "
        "ranked number.",
        "",
        "| run | headline | semantic headline [95% CI] | band pairs | verdicts changed |",
        "|---|---|---|---|---|",
    ]
    for s in chosen:
        ci = s.semantic.headline_ci95
        value = "–" if s.semantic.headline is None else f"{s.semantic.headline:.3f}"
        cells = [
            s.run_id,
            "–" if s.headline is None else f"{s.headline:.3f}",
            value + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""),
            str(s.semantic.band_pairs),
            str(s.semantic.changed),
        ]
        lines.append("| " + " | ".join([escape_markdown(cells[0])] + [_cell(c) for c in cells[1:]]) + " |")
    return lines + [""]
