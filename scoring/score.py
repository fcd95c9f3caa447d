"""Score a run's predictions against gold: per paper, per field, then aggregated.

Pure functions: :func:`score_paper` maps (prediction, gold) to per-field counts and
:func:`diagnose_paper` adds labels, abstention, grounding and result-attribute agreement;
:func:`score_predictions` pools them. A failed paper (no parsed record: no answer) misses every gold
item in the counts, and its per-paper F1 is 0 on every field, also where gold is empty: abstaining
needs an answer, so a run that never answers scores 0 (not the share of empty gold fields). Failures
are also counted apart in the validity layer.

Per field and paper the counts are (tp, fp, fn). The headline (scorer 3) pools them over papers:
each field's score is its micro F1 (2tp / (2tp + fp + fn) over the split), or classification
accuracy for ``research_area`` and ``training_free`` (null is a class of its own for the latter; a
failed paper is wrong); the headline is the macro mean over the HEADLINE_FIELDS (every field) of the defined
field scores, a micro-F1 field with tp + fp + fn = 0 over the split being undefined and left out
(never 1.0). A nullable scalar (``method_name``, ``method_full_name``, ``code_url``) counts a
correct null as nothing, a right value as tp, a wrong value as fp + fn, an invented one as fp. So
the empty record scores near 0 and one field right about 1/HEADLINE_COUNT. The mean over papers of per-paper
F1, where an answered paper with nothing in gold and nothing predicted scores 1 (abstention credit),
is kept as the secondary ``per_paper_f1``. ``method_name`` and ``method_full_name`` are strict
(exact after normalization, with gold alternates); ``method_name_soft`` uses the soft name rule of
:mod:`match` (``SOFT_NAME``: rapidfuzz ratio of at least SOFT_THRESHOLD, or one dropped or added word
when it is a variant mark written after the name, ``FooNet`` ~ ``FooNet-L`` but not ``Flow`` ~
``X-Flow``, with the alternates: "Full Name (ACR)" is soft-correct for "ACR" when the abstract gives
the expansion), ``method_full_name_soft`` the phrase rule (one dropped or added word of any kind).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Optional

import numpy as np
from pydantic import BaseModel, Field, model_serializer

from paperfields.core.errors import field_error
from paperfields.core.fields import RecordField, record_fields, scores_of
from paperfields.core.gold import GoldRecord
from paperfields.core.locate import Grounding, ground_record
from paperfields.core.schema import SCHEMA_VERSION, PaperRecord
from paperfields.scoring.calibration import Calibration
from paperfields.scoring.match import (
    FIELD_RULES,
    MATCH_RULES,
    PHRASE,
    RESULT_ATTRIBUTES,
    MatchRule,
    align_results,
    align_strings,
    describe_rule,
    forms,
    result_pairs,
    same_url,
    similarity,
    strict_name_agrees,
    with_abstract_aliases,
)
from paperfields.scoring.metrics import METRICS
from paperfields.scoring.metrics.accuracy import accuracy_pooled
from paperfields.scoring.metrics.bootstrap import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    bootstrap_ci,
    percentile_interval,
    pooled_bootstrap_ci,
    pooled_distribution,
)
from paperfields.scoring.metrics.f1 import f1, f1_pooled, prf
from paperfields.scoring.metrics.wilson import f1_edge_ci, wilson_ci

# 3.0: the headline is pooled (micro) F1 per field, macro over defined fields; accuracy for the two label fields
# (the field rules called 3.1 in scoring/validity.py were published under 3.0). 3.1: field intervals that keep
# their width at 0 and 1 (Wilson for accuracy, Wilson of J for a micro F1 at a bound: field_interval). 3.2: a year
# written short or long is one name (MATH24 ~ MATH 2024, WMT'23 ~ WMT 2023) and a letter glued to a version is part
# of it (GPT-4 is not GPT-4o); the soft name score takes one word more only as a variant mark after the name
# (FooNet-L, not X-Flow); generic head words on baselines (variants, methods), models (models, series) and inside
# dataset names (-Bench); an approach modifier dropped from a task (LLM-based recommendation); an acronym alone is
# not a task on it (MAS vs MAS generation); a symbol the abstract defines in math names its phrase (Youden's index
# $J=...$). 3.3: 3.1 and 3.2 together. 3.4 (issue 38): rules by kind. The head-word rule (a head word after a lone
# word names another thing unless it states a change or wraps a task; a modifier the prediction invents, or one the
# abstract contrasts, or one that leaves the prediction short of two gold items, makes another item; a neutral
# modifier such as "average" never does); stray words, values and setting phrases around an item dropped; words
# written with underscores are words; a comparator's modifier (ruling 24) and a description before a coined name
# dropped; `performance` ~ `score`; a misspelt name the abstract never writes; result attributes read the
# abstract; the strict method-name level takes the abstract's "Long (SHORT)" forms and commas. 3.5 (issue 38, round
# two): the headline scores results at the `claim` level (value, a compatible unit, the same kind, the metric the same
# or unnamed where the number picks one gold result, no contradicting dataset, model or baseline), where 3.4 used
# `value_metric`; a rate head keeps a measure ("over-refusal rates"); a task's leading activity in -ing is never a
# droppable modifier; "Long (SHORT)" is read by its parts when SHORT abbreviates Long; a coined name misspelt, never
# written in the abstract, is the name at the strict level. 3.6 (issue 38, round three): the matcher is symmetric (the
# invented-modifier rule reads the abstract whichever side is longer); at the claim level a percent-scale score's
# points are percent, a metric slot without a word, holding a placeholder for a measure that is not a score, naming
# a model or compared method of the paper's results, or plain words unlike a named gold metric names another quantity,
# the model's name again as the baseline is redundant, a filler in the dataset and another slot contradicts, an average
# tied to one named benchmark contradicts, a class ("large reasoning models") never contradicts; strings: neutral words
# on both sides leave one measure, "X family of ..." is X; at the strict level a plural last word is its singular and
# "Long (SHORT)" takes repeated parts and a description after it. 3.7 (issue 38, round four): a task head that names
# the one activity ("inference" for "reasoning") where the abstract writes both phrases, a baseline "BASE with METHOD"
# with both defined in the abstract is METHOD; at the claim level plain words the abstract writes only away from the
# number, for a placeholder gold metric, name another quantity (a model in the dataset slot was not taken: it still
# does not contradict). 3.8 (issue 38, round five): at the strict name level "Long (SHORT) for X" is not gold's
# SHORT (a narrower thing; gold's spelt-out long form still is it), and a hyphenated name whose acronym the abstract
# never defines is its initials spelt out in words the abstract writes ("Multi-Head-MoE" ~ "MH-MoE"); a metric's
# generic head glued by a hyphen is cut as a spaced one ("accuracy-score" is "accuracy"); at the claim level a class of
# benchmarks written as the dataset and in another slot is no context, not a contradiction. 3.9 (issue 38, round six):
# at the strict name level "Long (SHORT) with X" (a component joined: with, without, plus) is neither part, gold's
# spelt-out long form included ("for X" still is the long form), and a coined name is one name whatever joins its parts
# ("safe-compass" ~ "SafeCompass": compared without the spaces between them); a metric written with one modifier more
# that is on its own another of gold's metrics joins the two and names neither ("retention_accuracy" where gold lists
# "retention" and "accuracy"). 3.10 (issue 38, round eight): at the claim level a metric slot that names a quantity the
# abstract never writes in any accepted form ("auc" for a paper that reports only "performance", no AUC), sharing no
# word with gold's metric and no dataset of the paper's, names another quantity, gold's metric a placeholder or not.
SCORER_VERSION = "3.10"
SOFT_THRESHOLD = PHRASE.threshold  # the soft name score: the phrase rule on a name

# Derived from the schema's field facts (paperfields.core.fields); each names the fields in schema order.
LIST_RULES = {field: FIELD_RULES[field] for field in FIELD_RULES}  # each list field's matching rule (scoring/match.py)
HEADLINE_FIELDS = tuple(s.name for s in scores_of(PaperRecord) if s.headline)  # in the headline (macro over fields)
# Single-label fields scored by classification accuracy (null is a class of its own where the field is nullable).
ACCURACY_FIELDS = tuple(s.name for s in scores_of(PaperRecord) if s.metric == "accuracy")
REPORTED_FIELDS = tuple(s.name for s in scores_of(PaperRecord))
GROUNDED_FIELDS = tuple(f.name for f in record_fields(PaperRecord) if f.facts.grounded)
HEADLINE_COUNT = len(HEADLINE_FIELDS)  # the "N fields" of every text that says what the headline averages

# Every reported number knows its direction, declared once: a number that is a metric's value takes the
# direction its metric declares (scoring/metrics: @metric(name, higher_is_better=...)), written METRIC here;
# the others declare theirs here. In scores.json's order.
METRIC = None
_DIRECTIONS: dict[str, Optional[bool]] = {
    "headline": True,
    "score": True,
    "f1": METRIC,
    "micro_precision": True,
    "micro_recall": True,
    "micro_f1": True,
    "accuracy": METRIC,
    "macro_f1": True,
    "per_paper_f1": True,
    "valid_rate": True,
    "grounded_rate": True,
    "grounded_correct_rate": True,
    "invented_rate": False,
    "precision": METRIC,
    "recall": METRIC,
    "seconds_per_paper": False,
    "tokens_per_paper": False,
    "input_tokens_per_paper": False,
    "dollars_total": False,
    "correct_items": True,
    "seconds_per_correct": False,
    "dollars_per_correct": False,
    "brier": False,
    "ece": False,
    "aurc": METRIC,
    "errors_caught_20": True,
}
HIGHER_IS_BETTER: dict[str, bool] = {
    name: METRICS[name].higher_is_better if direction is METRIC else direction
    for name, direction in _DIRECTIONS.items()
}


Counts = tuple[int, int, int]
Alternates = dict[str, list[str]]


def _single(pred: Any, gold: Any, agree: bool) -> Counts:
    if pred in (None, "") and gold in (None, ""):
        return 0, 0, 0
    if agree:
        return 1, 0, 0
    return (0, int(pred not in (None, "")), int(gold not in (None, "")))


def _name_agrees(
    pred: Optional[str],
    gold: Optional[str],
    alternates: Alternates,
    rule: Optional[MatchRule],
    text: Optional[str] = None,
) -> bool:
    """Optional names agree: both missing, or the same name at the strict level when ``rule`` is None
    (:func:`~paperfields.scoring.match.strict_name_agrees`: one of gold's accepted forms, the abstract's
    acronyms among them, and a misspelling of it the abstract ``text`` never writes), else similar under ``rule``
    (no abstract read) to one of them."""
    if not pred or not gold:
        return not pred and not gold
    if rule is not None:
        return similarity(pred, forms(gold, alternates), rule) >= rule.threshold
    return strict_name_agrees(pred, gold, alternates, text)


@dataclass(frozen=True)
class Matcher:
    """How a score of a field counts one paper: ``count(field, pred, gold, alternates, abstract,
    answered)`` gives (tp, fp, fn) for the predicted and gold values (``answered`` False: a failed
    paper, its values None); a list matcher's ``align(pred, gold, alternates, abstract)`` gives the
    de-duplicated predictions and the matched (pred, gold) index pairs. ``about`` says it in words
    and ``settings`` gives a similarity rule's parameters, for ``scores.json``'s rule table."""

    about: str
    count: Callable[[RecordField, Any, Any, Alternates, str, bool], Counts]
    align: Optional[Callable[[list, list, Alternates, str], tuple[list, list[tuple[int, int]]]]] = None
    settings: Optional[dict[str, Any]] = None


def _label(field: RecordField, pred: Any, gold: Any, alternates: Alternates, abstract: str, answered: bool) -> Counts:
    if not answered:
        return 0, 0, 1
    if pred == gold:
        return 1, 0, 0
    return 0, int(pred is not None or field.nullable), 1


def _label_set(
    field: RecordField, pred: Any, gold: Any, alternates: Alternates, abstract: str, answered: bool
) -> Counts:
    p, g = set(pred or []), set(gold or [])
    return len(p & g), len(p - g), len(g - p)


def _similar(rule: MatchRule) -> Matcher:
    """A similarity rule of match.py: on a list field, one-to-one alignment (``align_strings``, reading
    the abstract); on a scalar, the best similarity to gold's accepted forms (no abstract)."""

    def align(pred: list, gold: list, alternates: Alternates, abstract: str) -> tuple[list, list[tuple[int, int]]]:
        kept, _, pairs = align_strings(pred, gold, alternates, rule, abstract)
        return kept, pairs

    def count(
        field: RecordField, pred: Any, gold: Any, alternates: Alternates, abstract: str, answered: bool
    ) -> Counts:
        if field.is_list:
            kept, gl, pairs = align_strings(pred or [], gold or [], alternates, rule, abstract)
            return len(pairs), len(kept) - len(pairs), len(gl) - len(pairs)
        return _single(pred, gold, _name_agrees(pred, gold, alternates, rule))

    return Matcher(
        "similarity of strings (scoring/match.py MatchRule): aligned one to one on a list, reading the abstract",
        count,
        align,
        describe_rule(rule),
    )


def _results(level: str) -> Matcher:
    def align(pred: list, gold: list, alternates: Alternates, abstract: str) -> tuple[list, list[tuple[int, int]]]:
        return pred, align_results(pred, gold, alternates, level, abstract)

    def count(
        field: RecordField, pred: Any, gold: Any, alternates: Alternates, abstract: str, answered: bool
    ) -> Counts:
        pred, gold = pred or [], gold or []
        tp = len(align_results(pred, gold, alternates, level, abstract))
        return tp, len(pred) - tp, len(gold) - tp

    return Matcher(
        f"result tuples aligned one to one, agreeing at the '{level}' level (scoring/match.py RESULT_LEVELS)",
        count,
        align,
    )


# Every matcher by the name a field's facts give: the similarity rules of match.py and the rules
# that are not about strings. The one table that resolves FieldFacts.match (and Level.match).
MATCHERS: dict[str, Matcher] = {
    "exact": Matcher(
        "the same name: equal after normalization (commas and stray words at the ends aside) to gold or one of its "
        "accepted forms, the abstract's acronyms among them, or written as 'Long (SHORT)' with the pair the abstract "
        "defines, or a coined name before a setting phrase; a correct null counts nothing",
        lambda field, p, g, alt, text, ok: _single(p, g, _name_agrees(p, g, alt, None, text)),
    ),
    "url": Matcher(
        "equal after URL normalization (scheme, www., .git, fragment, trailing punctuation)",
        lambda field, p, g, alt, text, ok: _single(p, g, same_url(p, g)),
    ),
    "label": Matcher(
        "one label, right or wrong (null a class of its own on a nullable field; a failed paper is wrong)", _label
    ),
    "label_set": Matcher("a set of labels: shared labels are true positives", _label_set),
    **{name: _similar(rule) for name, rule in MATCH_RULES.items()},
    **{f"results_{level}": _results(level) for level in ("value", "value_metric", "claim", "full")},
}
# A located number is judged right on its value alone; any other located item by its field's own rule.
_GROUNDING_MATCH = {"number": "results_value"}


def match_table(model: type[BaseModel] = PaperRecord) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The rule table of a record model, for ``scores.json``: (field -> its facts, as
    :meth:`~paperfields.core.fields.RecordField.table`; matcher name -> what it does and a similarity
    rule's settings) for the matchers the fields use. Raises KeyError naming a matcher that no table holds."""
    fields = {f.name: f.table() for f in record_fields(model)}
    used = [s.match for s in scores_of(model)]
    unknown = [m for m in used if m not in MATCHERS]
    if unknown:
        raise KeyError(f"matching rule '{unknown[0]}' is not one of {', '.join(MATCHERS)}")
    return fields, {
        name: {"about": MATCHERS[name].about, **({"rule": MATCHERS[name].settings} if MATCHERS[name].settings else {})}
        for name in dict.fromkeys(used)
    }


def score_paper(prediction: Optional[dict[str, Any]], gold: GoldRecord, abstract: str = "") -> dict[str, Counts]:
    """Per-score (tp, fp, fn) of one prediction (a record dict, or None for a failed paper), for every
    score of the gold record's model (:func:`~paperfields.core.fields.scores_of`), each counted by the
    matcher its field's facts name (:data:`MATCHERS`)."""
    return _score(_Paper.of(prediction, gold, abstract))


@dataclass(frozen=True)
class _Paper:
    """One paper as the matchers read it, built once for its scores and its diagnostics: the same list
    objects then reach the matchers' memo (scoring/match.py ``_same_objects``), so each pair is judged once."""

    prediction: Optional[dict[str, Any]]
    g: dict[str, Any]
    alt: Alternates
    abstract: str
    model: type[BaseModel]

    @classmethod
    def of(cls, prediction: Optional[dict[str, Any]], gold: GoldRecord, abstract: str) -> _Paper:
        return cls(
            prediction,
            gold.record.model_dump(mode="json"),
            with_abstract_aliases(gold.alternates, abstract),
            abstract,
            type(gold.record),
        )

    @property
    def p(self) -> dict[str, Any]:
        """The prediction, or an empty record for a failed paper (its values read as None)."""
        return self.prediction or {}


def _score(paper: _Paper) -> dict[str, Counts]:
    p, g, alt, abstract = paper.p, paper.g, paper.alt, paper.abstract
    out: dict[str, Counts] = {}
    for field in record_fields(paper.model):
        for score in field.scores():
            out[score.name] = MATCHERS[score.match].count(
                field, p.get(field.name), g[field.name], alt, abstract, paper.prediction is not None
            )
    return out


def diagnose_paper(
    prediction: Optional[dict[str, Any]], gold: GoldRecord, abstract: str, grounding: Optional[Grounding] = None
) -> dict[str, Any]:
    """Everything about one paper beyond counts (pure):

    - ``labels``: per label field (an enum or a boolean), predicted and gold (a failed paper's
      prediction is ``"(failed)"`` where null is a class, else null);
    - ``invented``: per field gold may leave empty, 1 when gold is null/empty and the prediction is
      not (0 otherwise; None when gold is not empty, so the rate is over papers whose gold is empty);
    - ``grounding``: per grounded field, [grounded, grounded_and_correct, predicted] item counts, an
      item being grounded when :mod:`~paperfields.core.locate` finds it written in the abstract (exact
      or normalized; results: its value as a number and its metric as a string; a URL whole). The
      prediction line's stored ``grounding`` is read when given and still fits, else it is located here;
    - ``result_attributes``: per attribute, [agree, pairs] over result pairs matched on value.
    """
    return _diagnose(_Paper.of(prediction, gold, abstract), grounding)


def _diagnose(paper: _Paper, grounding: Optional[Grounding] = None) -> dict[str, Any]:
    prediction, p, g, alt, abstract, model = paper.prediction, paper.p, paper.g, paper.alt, paper.abstract, paper.model
    fields = record_fields(model)
    labels = {}
    for field in (f for f in fields if f.is_label):
        value = p.get(field.name)
        if field.is_list:
            value = sorted(set(value or []))
        elif prediction is None and field.nullable:
            value = "(failed)"
        labels[field.name] = [value, g[field.name]]
    invented = {
        f.name: (int(p.get(f.name) not in (None, [], "")) if g[f.name] in (None, [], "") else None)
        for f in fields
        if f.can_be_empty
    }
    if grounding is None or not grounding.fits(prediction, abstract, model):
        grounding = ground_record(prediction, abstract, model=model)
    counts: dict[str, list[int]] = {}
    for field in (f for f in fields if f.facts.grounded):
        matcher = MATCHERS[_GROUNDING_MATCH.get(field.facts.grounded, field.facts.match)]
        value = p.get(field.name)
        if not field.is_list:
            located = grounding.of(field.name)
            ok = bool(value) and value in located and located[value].grounded
            correct = matcher.count(field, value, g[field.name], alt, abstract, True)[0] == 1
            counts[field.name] = [int(ok), int(ok and correct), 1] if value else [0, 0, 0]
            continue
        kept, pairs = matcher.align(value or [], g[field.name], alt, abstract)
        matched = {i for i, _ in pairs}
        if field.facts.grounded == "number":  # one location per item, in order (every result has a value)
            locations = grounding.fields.get(field.name, [])
            ok = [i < len(locations) and locations[i].grounded for i in range(len(kept))]
        else:
            located = grounding.of(field.name)
            ok = [item in located and located[item].grounded for item in kept]
        counts[field.name] = [sum(ok), sum(1 for i, o in enumerate(ok) if o and i in matched), len(kept)]
    attributes: dict[str, list[int]] = {}
    for field in (f for f in fields if f.is_record_list):
        results, gold_results = p.get(field.name) or [], g[field.name]
        pairs = align_results(results, gold_results, alt, "value", abstract)
        judged = result_pairs(results, gold_results, alt, abstract) if pairs else None
        attributes = {
            a: [sum(int(judged.attributes[a][i, j]) for i, j in pairs) if judged else 0, len(pairs)]
            for a in RESULT_ATTRIBUTES
        }
    return {"labels": labels, "invented": invented, "grounding": counts, "result_attributes": attributes}


class FieldAggregate(BaseModel):
    """Aggregate of one field over the papers of a split (higher is better for all but ``invented_rate``).

    ``score`` is the field's headline number: micro F1 (tp, fp, fn pooled over papers) for list and
    name fields, classification accuracy for ``ACCURACY_FIELDS``; None when undefined (a micro-F1
    field with tp + fp + fn = 0 over the split: nothing in gold and nothing predicted). Precision is
    None when nothing was predicted, recall None when gold is empty.
    """

    metric: str = Field(description="'micro_f1' or 'accuracy': what `score` is")
    score: Optional[float] = Field(description="the field's headline score; None when undefined")
    ci95: Optional[tuple[float, float]] = Field(
        default=None, description="95% interval of score, made as ci_method says (field_interval)"
    )
    ci_method: Optional[str] = Field(
        default=None,
        description="how ci95 was made: 'wilson' (accuracy: papers right of papers), "
        "'percentile_bootstrap' (a micro F1 strictly between 0 and 1: papers resampled, counts pooled per "
        "resample) or 'wilson_f1_edge' (a micro F1 of 0 or 1: Wilson of the matched share over the papers "
        "the field counts on, carried to F1); None without an interval",
    )
    micro_precision: Optional[float] = None
    micro_recall: Optional[float] = None
    micro_f1: Optional[float] = None
    accuracy: Optional[float] = Field(
        default=None, description="share of papers labeled right (ACCURACY_FIELDS only; a failed paper is wrong)"
    )
    per_paper_f1: float = Field(
        description="mean over papers of per-paper F1 with abstention credit (see paper_f1); secondary"
    )
    tp: int
    fp: int
    fn: int
    invented_rate: Optional[float] = Field(
        default=None, description="share of papers with empty gold where something was predicted (lower is better)"
    )


class ClassScores(BaseModel):
    """Per-class precision/recall/F1 of a categorical or multi-label field, and their macro mean.

    Precision or recall of a class is None where undefined (never predicted, or absent from gold)."""

    accuracy: Optional[float] = None
    macro_f1: Optional[float]
    per_class: dict[str, tuple[Optional[float], Optional[float], Optional[float], int]] = Field(
        description="class -> (precision, recall, F1, gold support)"
    )


class SemanticScores(BaseModel):
    """``scores.json``'s ``semantic``: the run's headline with the contested band decided by the semantic
    tier (:mod:`paperfields.scoring.semantic`), shown beside the deterministic headline, never ranked."""

    model: str = Field(description="the embedding model that decided the band")
    threshold: float = Field(description="cosine at or above which a band pair is the same item")
    headline: Optional[float] = Field(description="the headline with the band's verdicts from the embedding model")
    headline_ci95: Optional[tuple[float, float]] = None
    band_pairs: int = Field(description="pairs of the contested band the model decided")
    changed: int = Field(description="band pairs whose semantic verdict differs from the deterministic one")


class RunScores(BaseModel):
    """``scores.json``: aggregate scores of one run, with the versions that produced them.

    The headline (:func:`headline`) is the macro mean over the defined HEADLINE_FIELDS of each
    field's ``score`` (pooled micro F1, or accuracy), so an empty record scores near 0 and a record
    with one field right about 1/HEADLINE_COUNT of a perfect one. ``per_paper_f1`` is the older mean of per-paper
    F1, which credits an empty prediction on empty gold with 1 (abstention credit): secondary.
    """

    scores_version: int = 3
    run_id: str
    split: str
    scorer_version: str = SCORER_VERSION
    schema_version: str = SCHEMA_VERSION
    gold_version: str
    papers: int = Field(description="gold papers of the split that this run asked")
    papers_in_split: int = Field(
        default=0, description="gold papers in the split; more than `papers` means a partial run (--limit)"
    )
    papers_done: int = Field(
        default=0,
        description="papers with a prediction line that is an answer; fewer than `papers` means an unfinished run",
    )
    papers_asked: Optional[int] = Field(
        default=None,
        exclude=True,
        description="papers the run asked, gold or not (not written: "
        "`papers` counts those with gold); None when not scored from a run folder",
    )
    reference: bool = Field(
        default=False,
        description="a reference run (rules/*, a second annotator): shown apart from contenders, never ranked",
    )
    valid_rate: float = Field(description="share of papers with a parsed, schema-valid record")
    failures_by_class: dict[str, int]
    repairs: dict[str, int] = Field(
        default_factory=dict, description="tolerated deviations in parsed replies (fenced, think, escapes)"
    )
    headline: Optional[float] = Field(
        description="macro mean over defined HEADLINE_FIELDS of the field scores (micro F1 / accuracy)"
    )
    headline_ci95: Optional[tuple[float, float]] = Field(
        description="95% percentile bootstrap CI of headline, resampling papers with counts pooled per resample"
    )
    undefined_fields: list[str] = Field(
        default_factory=list, description="headline fields left out of the mean: nothing in gold and nothing predicted"
    )
    precision: Optional[float] = Field(
        default=None, description="micro precision pooled over the headline fields' items"
    )
    recall: Optional[float] = Field(default=None, description="micro recall pooled over the headline fields' items")
    per_paper_f1: float = Field(
        description="mean over papers of per-paper F1 macro over fields, with abstention credit (secondary)"
    )
    per_paper_f1_ci95: Optional[tuple[float, float]] = Field(description="95% percentile bootstrap CI of per_paper_f1")
    bootstrap: dict[str, Any] = Field(
        default_factory=lambda: {"seed": BOOTSTRAP_SEED, "resamples": BOOTSTRAP_RESAMPLES, "method": "percentile"}
    )
    fields: dict[str, FieldAggregate]
    field_rules: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="the rule table: each record field's facts as "
        "the schema declares them (paperfields.core.fields): list, nullable, matching rule, "
        "headline, metric, grounding, board name, more scores; empty in scores written before it",
    )
    match_rules: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="what each matching rule the fields name does (scoring.score.MATCHERS)"
    )
    classes: dict[str, ClassScores] = Field(default_factory=dict)
    result_attribute_accuracy: dict[str, Optional[float]] = Field(default_factory=dict)
    grounding: dict[str, dict[str, Optional[float]]] = Field(
        default_factory=dict, description="field -> grounded_rate, grounded_correct_rate over predicted items"
    )
    seconds_per_paper: float = 0.0
    tokens_per_paper: Optional[float] = Field(
        default=0.0,
        description="input and output tokens per paper, answers from the cache included; None when the server did "
        "not report a count (unknown, not zero)",
    )
    input_tokens_per_paper: Optional[float] = Field(
        default=None,
        description="prompt (input) tokens per paper, answers from the cache included: how much the model was sent "
        "(a schema in the prompt, md_json, costs more than a grammar); None for scores written before it was recorded",
    )
    mode: Optional[str] = Field(
        default=None,
        description="the run's instructor mode (OpenAI-compatible providers: md_json, json, tools, json_schema); "
        "None for backends without modes",
    )
    grammar: Optional[bool] = Field(
        default=None,
        description="output constrained to the schema by a grammar: --grammar (a llama.cpp "
        "server) or local/ (in-process, always); None for scores written before it was recorded",
    )
    dollars_total: Optional[float] = Field(default=None, description="USD for the run; None when the price is unknown")
    correct_items: int = Field(
        default=0, description="true positives pooled over the headline fields (correctly extracted items)"
    )
    model_seconds: float = Field(
        default=0.0,
        description="seconds the model spent on this run's requests, every attempt, retry and "
        "re-ask included, answers served from the response cache excluded",
    )
    seconds_per_correct: Optional[float] = Field(
        default=None, description="model_seconds / correct_items (lower is better); None with no correct item"
    )
    dollars_per_correct: Optional[float] = Field(
        default=None,
        description="dollars_total / correct_items (lower is better); None when the price "
        "is unknown or no item is correct",
    )
    contamination: Optional[dict[str, Any]] = Field(
        default=None,
        description="contamination status (scoring.contamination): "
        "after cutoff, possible overlap, unknown or n/a, with the dates and their sources",
    )
    calibration: dict[str, Calibration] = Field(
        default_factory=dict,
        description="per confidence source (asked: the model states a "
        "confidence per field; logprob: from token log-probabilities) the Brier score and ECE of the "
        "per-field confidences against exact correctness (scoring.calibration); empty without confidences",
    )
    backend: str = ""
    strategy: str = ""
    predictions_sha256: Optional[str] = Field(
        default=None,
        description="sha256 of the predictions.jsonl bytes that were "
        "scored; when the file changes, these scores are stale",
    )
    higher_is_better: dict[str, bool] = Field(default_factory=lambda: dict(HIGHER_IS_BETTER))
    semantic: Optional[SemanticScores] = Field(
        default=None,
        description="the semantic tier (scoring/semantic.py): the headline with the contested band decided by an "
        "embedding model, shown beside the headline and never ranked; absent when not computed",
    )
    submitted: Optional[dict[str, Any]] = Field(
        default=None,
        description="a run submitted from outside (submissions/<name>/, scoring/submissions.py): its "
        "submission.toml (model, provider, date run, strategy, who submits, model cutoff): scored "
        "here, not reproduced here. Absent for reproduced runs",
    )

    @model_serializer(mode="wrap")
    def _without_absent_submission(self, handler: Any) -> Any:
        # a reproduced run's scores.json stays as it was before submissions existed: no "submitted": null
        data = handler(self)
        if isinstance(data, dict):
            for key in ("submitted", "semantic"):  # absent rather than null: older scores files stay as they were
                if data.get(key) is None:
                    data.pop(key, None)
        return data

    @property
    def partial(self) -> bool:
        """True when the run asked fewer papers than its split holds (``--limit``)."""
        return self.papers < self.papers_in_split

    @property
    def unfinished(self) -> bool:
        """True when some asked paper has no answer yet (not run, or a transport error)."""
        return self.papers_done < self.papers

    @property
    def comparable(self) -> bool:
        """True when a CI means something: a finished run over its whole split, or a finished second
        labeling (``annotator/``, ``human/``) over its own sample of papers; a ``--limit`` run of a
        ``rules/`` reference is partial like any other."""
        sample = self.reference and not self.backend.startswith("rules/")
        return not self.unfinished and (sample or not self.partial)

    @property
    def rankable(self) -> bool:
        """True for a complete contender: finished, over the whole split, and not a reference."""
        return not (self.reference or self.partial or self.unfinished)


# The words a reference's provider spells, however written (``Rules``, ``RULES``, ``rules.``, ``Annotator``,
# ``human_``, ``Human-Labels``): a submission naming one is refused as a contender (role = "reference" is the way).
REFERENCE_WORDS = frozenset(
    {"rules", "rule", "annotator", "annotators", "annotation", "human", "humans", "gold", "reference", "oracle"}
)


def reference_spelling(name: str) -> Optional[str]:
    """The reference word (:data:`REFERENCE_WORDS`) that ``name`` (a provider, a model, a folder name) spells, or
    None: :func:`~paperfields.core.confusables.spelled_word`, which folds with the one table of look-alikes
    (:data:`~paperfields.core.confusables.LOOKALIKES`), so case, compatibility forms (NFKC: full-width letters),
    punctuation, separators and look-alikes do not matter (``Rules``, ``rules.``, ``human_``, ``h-u-m-a-n``,
    ``HumanLabels``, ``my-gold``, ``ruIes``, ``ru1es``, ``g0ld``, ``hum4n``)."""
    from paperfields.core.confusables import spelled_word

    return spelled_word(name, REFERENCE_WORDS)


def is_reference_backend(backend: str) -> bool:
    """References are shown apart from contenders: the model-free ``rules/`` runs and ``annotator/``
    or ``human/`` runs (a second annotator's labels scored as a run)."""
    return backend.startswith(("rules/", "human/", "annotator/"))


def paper_f1(counts: tuple[int, int, int], answered: bool = True) -> float:
    """One paper's F1 on one field with abstention credit: 1.0 when gold and prediction are both
    empty (tp = fp = fn = 0), 0.0 when the paper has no answer (a failure), even if gold is empty
    there, else :func:`f1`. Only the secondary ``per_paper_f1`` uses it."""
    if not answered:
        return 0.0
    value = f1(*counts)
    return 1.0 if value is None else value


@cache
def headline_fields(model: type[BaseModel] = PaperRecord) -> tuple[str, ...]:
    """The scores of a record model that enter its headline (HEADLINE_FIELDS for PaperRecord)."""
    return tuple(s.name for s in scores_of(model) if s.headline)


def paper_overall(
    counts: dict[str, tuple[int, int, int]], answered: bool = True, model: type[BaseModel] = PaperRecord
) -> float:
    """One paper's per-paper F1: mean of :func:`paper_f1` over
    the headline fields of ``model`` (0.0 without an answer)."""
    return float(np.mean([paper_f1(counts[f], answered) for f in headline_fields(model)]))


def field_scores(
    totals: np.ndarray, papers: int, fields: tuple[str, ...], model: type[BaseModel] = PaperRecord
) -> np.ndarray:
    """Each field's score from pooled counts: ``totals`` of shape (..., len(fields), 3) holding
    (tp, fp, fn) summed over ``papers`` papers. Micro F1, or accuracy (tp / papers) for the scores
    of ``model`` whose facts say accuracy (ACCURACY_FIELDS for PaperRecord); NaN where a micro-F1
    field is undefined (tp + fp + fn = 0). Shape (..., len(fields))."""
    accuracy_fields = {s.name for s in scores_of(model) if s.metric == "accuracy"}
    is_accuracy = np.array([f in accuracy_fields for f in fields])
    return np.where(is_accuracy, accuracy_pooled(totals[..., 0], papers), f1_pooled(totals))


def headline_of(totals: np.ndarray, papers: int, model: type[BaseModel] = PaperRecord) -> np.ndarray:
    """The headline from pooled counts of the headline fields of ``model`` (HEADLINE_FIELDS), shape
    (..., 12, 3) -> (...): the mean of the defined field scores (NaN when none is defined)."""
    scores = field_scores(totals, papers, headline_fields(model), model)
    defined = ~np.isnan(scores)
    with np.errstate(invalid="ignore"):
        return np.where(defined.any(axis=-1), np.nansum(scores, axis=-1) / np.maximum(defined.sum(axis=-1), 1), np.nan)


def _round(value: Any) -> Optional[float]:
    return None if value is None or np.isnan(value) else round(float(value), 4)


CI_METHODS = ("wilson", "percentile_bootstrap", "wilson_f1_edge")


def field_interval(
    is_accuracy: bool, counts: np.ndarray, resampled: Optional[np.ndarray]
) -> tuple[Optional[tuple[float, float]], Optional[str]]:
    """The 95% interval of one field's score and the name of the method that made it (one of
    :data:`CI_METHODS`), from its per-paper ``counts`` (shape (papers, 3): tp, fp, fn):

    - accuracy (papers labeled right out of papers, tp / papers): the Wilson interval
      (:func:`~paperfields.scoring.metrics.wilson.wilson_ci`), a closed form for a proportion that
      keeps its width at 0 and 1;
    - micro F1 strictly between 0 and 1: the percentile bootstrap over papers, ``resampled`` being the
      field's score on each resample (shape (resamples,), NaN where undefined);
    - micro F1 of exactly 1 (no fp, no fn) or 0 (no tp): every resample repeats it, so the bootstrap
      would say [1, 1] or [0, 0]; instead :func:`~paperfields.scoring.metrics.wilson.f1_edge_ci` over
      the papers where the field counts anything.

    (None, None) under 2 papers (one paper says nothing about spread) or when the score is undefined
    (a micro F1 with tp + fp + fn = 0)."""
    papers = counts.shape[0]
    tp, fp, fn = (int(x) for x in counts.sum(axis=0))
    if papers < 2:
        return None, None
    if is_accuracy:
        return wilson_ci(tp, papers), "wilson"
    if tp + fp + fn == 0:
        return None, None
    if tp == 0 or fp + fn == 0:
        counted = int(np.count_nonzero(counts.sum(axis=1)))
        return f1_edge_ci(1.0 if tp else 0.0, counted), "wilson_f1_edge"
    return (None, None) if resampled is None else (percentile_interval(resampled), "percentile_bootstrap")


def aggregate(
    per_paper: list[dict[str, tuple[int, int, int]]],
    diagnostics: Optional[list[dict[str, Any]]] = None,
    answered: Optional[list[bool]] = None,
    model: type[BaseModel] = PaperRecord,
) -> dict[str, FieldAggregate]:
    """Pool per-paper counts into per-field aggregates, one per score of ``model`` (REPORTED_FIELDS):
    the field score (micro F1, or accuracy where the field's facts say so) with its 95% interval
    (:func:`field_interval`), micro P/R/F1, the secondary per-paper F1, and the invented-value rate when diagnostics are
    given. ``answered[i]`` False marks paper i as a failure (per-paper F1 0, see :func:`paper_f1`); all
    answered by default."""
    answered = answered if answered is not None else [True] * len(per_paper)
    n = len(per_paper)
    reported_scores = scores_of(model)
    names = tuple(s.name for s in reported_scores)
    every = np.array([[paper[field] for field in names] for paper in per_paper], dtype=np.int64).reshape(
        n, len(names), 3
    )
    # one draw of resampled papers serves every field (each field's CI used the same seeded draw)
    resampled = pooled_distribution(every, lambda t: field_scores(t, n, names, model)) if n >= 2 else None
    fields: dict[str, FieldAggregate] = {}
    for column, reported in enumerate(reported_scores):
        field = reported.name
        counts = every[:, column, :]
        tp, fp, fn = (int(x) for x in counts.sum(axis=0))
        precision, recall, micro = prf(tp, fp, fn)
        is_accuracy = reported.metric == "accuracy"
        score = field_scores(counts.sum(axis=0)[None, :], n, (field,), model)[0]
        ci, ci_method = field_interval(is_accuracy, counts, None if resampled is None else resampled[:, column])
        per = [paper_f1(tuple(c), ok) for c, ok in zip(counts, answered)]
        invented = None
        if diagnostics is not None and field in diagnostics[0]["invented"]:
            flags = [d["invented"][field] for d in diagnostics if d["invented"][field] is not None]
            invented = round(float(np.mean(flags)), 4) if flags else None
        fields[field] = FieldAggregate(
            metric="accuracy" if is_accuracy else "micro_f1",
            score=_round(score),
            ci95=ci,
            ci_method=ci_method,
            micro_precision=_round(precision),
            micro_recall=_round(recall),
            micro_f1=_round(micro),
            accuracy=_round(tp / n) if is_accuracy and n else None,
            per_paper_f1=round(float(np.mean(per)) if per else 0.0, 4),
            tp=tp,
            fp=fp,
            fn=fn,
            invented_rate=invented,
        )
    return fields


def headline(
    per_paper: list[dict[str, tuple[int, int, int]]], model: type[BaseModel] = PaperRecord
) -> tuple[Optional[float], Optional[tuple[float, float]], list[str]]:
    """(headline, its 95% bootstrap CI, undefined fields) of per-paper counts: the macro mean over the
    headline fields of ``model`` (HEADLINE_FIELDS) of pooled micro F1 (accuracy where the field's facts
    say so), leaving out fields with tp + fp + fn = 0 over the papers (SciREX, Jain et al. 2020, and
    AxCell, Kardas et al. 2020, pool counts over documents the same way). The CI recomputes the
    pooled counts per resample."""
    n = len(per_paper)
    names = headline_fields(model)
    counts = np.array([[paper[f] for f in names] for paper in per_paper], dtype=np.int64).reshape(n, len(names), 3)
    totals = counts.sum(axis=0)
    value = headline_of(totals, n, model)
    undefined = [f for f, s in zip(names, field_scores(totals, n, names, model)) if np.isnan(s)]
    return _round(value), pooled_bootstrap_ci(counts, lambda t: headline_of(t, n, model)), undefined


def class_scores(pairs: list[tuple[Any, Any]], classes: list[str], multi: bool) -> ClassScores:
    """Per-class P/R/F1 (one-vs-rest) from (predicted, gold) labels; ``multi`` for label sets."""
    counts: dict[Any, list[int]] = defaultdict(lambda: [0, 0, 0])
    for pred, gold in pairs:
        p = set(pred) if multi else {json.dumps(pred)}
        g = set(gold) if multi else {json.dumps(gold)}
        for c in classes:
            key = c if multi else json.dumps(c)
            counts[c][0] += key in p and key in g
            counts[c][1] += key in p and key not in g
            counts[c][2] += key not in p and key in g
    name = lambda c: c if isinstance(c, str) else json.dumps(c)  # noqa: E731  (true/false/null)
    per_class = {name(c): (*(_round(x) for x in prf(*counts[c])), counts[c][0] + counts[c][2]) for c in classes}
    # macro F1 over the classes present in gold; an absent class predicted anyway counts 0 (not left out)
    supported = [v[2] or 0.0 for v in per_class.values() if v[3] > 0]
    accuracy = None if multi or not pairs else round(float(np.mean([p == g for p, g in pairs])), 4)
    return ClassScores(
        accuracy=accuracy, macro_f1=round(float(np.mean(supported)), 4) if supported else None, per_class=per_class
    )


def validate_predictions(
    predictions: dict[str, Optional[dict[str, Any]]], model: type[BaseModel] = PaperRecord
) -> dict[str, Optional[dict[str, Any]]]:
    """``predictions`` with every record checked and normalized as a ``model`` (:class:`PaperRecord`: ``"12.5"``
    read as 12.5; None stays None). Raises ValueError naming the paper and the field for a record that
    is not an object, a key that is not a field of the record (``method_nam``: never scored as an
    empty ``method_name``) or a value the schema refuses (a ``research_area`` outside its enum)."""
    from pydantic import ValidationError

    checked: dict[str, Optional[dict[str, Any]]] = {}
    for paper_id, record in predictions.items():
        if record is None:
            checked[paper_id] = None
            continue
        if not isinstance(record, dict):
            raise ValueError(
                f"paper {paper_id}: the record must be a dict (a "
                f"PaperRecord's fields) or None, got {type(record).__name__}"
            )
        unknown = sorted(set(record) - set(model.model_fields))
        if unknown:
            raise ValueError(
                f"paper {paper_id}: field '{unknown[0]}': not a field of the "
                f"record (fields: {', '.join(model.model_fields)})"
            )
        try:
            checked[paper_id] = model.model_validate(record).model_dump(mode="json")
        except ValidationError as exc:
            raise ValueError(f"paper {paper_id}: {field_error(exc)}") from None
    return checked


def score_predictions(
    predictions: dict[str, Optional[dict[str, Any]]],
    gold: list[GoldRecord],
    *,
    failures: Optional[dict[str, str]] = None,
    run_id: str = "predictions",
    split: str = "test",
    gold_version: str = "unknown",
    abstracts: Optional[dict[str, str]] = None,
    repairs: Optional[dict[str, int]] = None,
    groundings: Optional[dict[str, Grounding]] = None,
) -> tuple[RunScores, list[dict[str, Any]]]:
    """Score predictions ``{paper_id: record-or-None}`` against the gold papers of ``split``
    (``"test"``, ``"dev"``, or ``"all"`` for every gold paper given).

    Every record is validated first (:func:`validate_predictions`: ValueError naming the paper and the
    field). A paper of the split missing from ``predictions``, or mapped to None, is scored as a
    failure (no answer), never as an empty prediction: it misses every gold item, is wrong on the
    accuracy fields and scores 0 on every field, also where gold is empty. ``failures`` maps paper id
    to failure class (counted in ``failures_by_class``); ``run_id`` and ``gold_version`` label the
    result (pass :func:`~paperfields.core.gold.gold_fingerprint` of the gold file to compare with
    stored runs); ``abstracts`` (paper id -> text) enables grounding and the abstract-aware matching
    rules; ``repairs`` counts tolerated reply deviations; ``groundings`` (paper id -> the prediction line's
    :class:`~paperfields.core.locate.Grounding`) is read for the grounding diagnostics (located here
    when missing). Returns the aggregate (:class:`RunScores`; ``papers_in_split`` and ``papers_done``
    set to the papers scored, which :func:`score_run` refines) and one detail row per paper. Raises
    ValueError if ``split`` has no gold papers.
    """
    failures = failures or {}
    papers = [g for g in gold if split == "all" or g.split == split]
    if not papers:
        raise ValueError(f"no gold papers in split '{split}'")
    model = type(papers[0].record)
    predictions = validate_predictions(predictions, model)
    abstracts = abstracts or {}
    answered = [predictions.get(g.id) is not None for g in papers]
    groundings = groundings or {}
    per_paper, diagnostics = [], []
    for gold_paper in papers:  # a paper's scores and diagnostics one after the other: they share its judged pairs
        paper = _Paper.of(predictions.get(gold_paper.id), gold_paper, abstracts.get(gold_paper.id, ""))
        per_paper.append(_score(paper))
        diagnostics.append(_diagnose(paper, groundings.get(gold_paper.id)))
    per_paper_values = [paper_overall(c, ok, model) for c, ok in zip(per_paper, answered)]
    detail = [
        {
            "paper_id": g.id,
            "per_paper_f1": round(overall, 4),
            "answered": ok,
            "failure": failures.get(g.id),
            "fields": {k: list(v) for k, v in c.items()},
            **d,
        }
        for g, c, ok, d, overall in zip(papers, per_paper, answered, diagnostics, per_paper_values)
    ]
    fields = aggregate(per_paper, diagnostics, answered, model)
    valid = sum(1 for g in papers if predictions.get(g.id) is not None)
    rules, matchers = match_table(model)
    ids = {g.id for g in papers}
    grounding: dict[str, dict[str, Optional[float]]] = {}
    if abstracts:
        for field in (f.name for f in record_fields(model) if f.facts.grounded):
            grounded, correct, total = (sum(d["grounding"][field][k] for d in diagnostics) for k in range(3))
            grounding[field] = {
                "grounded_rate": round(grounded / total, 4) if total else None,
                "grounded_correct_rate": round(correct / total, 4) if total else None,
                "predicted": total,
            }
    attr = {a: [sum(d["result_attributes"][a][k] for d in diagnostics) for k in range(2)] for a in RESULT_ATTRIBUTES}
    value, ci, undefined = headline(per_paper, model)
    names = headline_fields(model)
    precision, recall, _ = prf(*(sum(getattr(fields[f], k) for f in names) for k in ("tp", "fp", "fn")))
    scores = RunScores(
        run_id=run_id,
        split=split,
        gold_version=gold_version,
        papers=len(papers),
        papers_in_split=len(papers),
        papers_done=len(papers),
        valid_rate=round(valid / len(papers), 4),
        failures_by_class=dict(sorted(Counter(f for pid, f in failures.items() if pid in ids).items())),
        repairs=dict(sorted((repairs or {}).items())),
        headline=value,
        headline_ci95=ci,
        undefined_fields=undefined,
        precision=_round(precision),
        recall=_round(recall),
        per_paper_f1=round(float(np.mean(per_paper_values)), 4),
        per_paper_f1_ci95=bootstrap_ci(per_paper_values),
        fields=fields,
        field_rules=rules,
        match_rules=matchers,
        classes={
            f.name: class_scores([tuple(d["labels"][f.name]) for d in diagnostics], f.classes, multi=f.is_list)
            for f in record_fields(model)
            if f.is_label
        },
        result_attribute_accuracy={a: (round(k / n, 4) if n else None) for a, (k, n) in attr.items()},
        grounding=grounding,
    )
    return scores, detail


def write_scores(run_dir: Path, scores: RunScores, detail: list[dict[str, Any]]) -> None:
    """Write ``paper_scores.jsonl`` (one row per paper), then ``scores.json`` (aggregate), each
    through a temporary file and a rename, so a crash never leaves a half-written scores file."""
    for name, text in (
        ("paper_scores.jsonl", "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in detail)),
        ("scores.json", scores.model_dump_json(indent=2) + "\n"),
    ):
        tmp = run_dir / (name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(run_dir / name)
