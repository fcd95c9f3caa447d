"""What models get wrong: the difficulty of each gold item and paper, and a taxonomy of errors per field.

Every number comes from the stored runs: each run's predictions (the latest line per paper) are aligned
with gold by the scorer's own matchers (:data:`~paperfields.scoring.score.MATCHERS`, the alignments of
:mod:`~paperfields.scoring.match`), and the result is checked against the run's stored per-paper counts
(``paper_scores.jsonl``): a run whose counts disagree is stale and refused, so these views and the board
always describe the same verdicts.

**Gold items.** A gold item is what a run can get right on a paper, one unit of ``tp + fn`` in the
scorer's counts: each (de-duplicated) string of a list field, each result tuple, each label of
``contribution_types``, a non-null name or URL, and the label of ``research_area`` and of
``training_free`` (null included: null is a class of its own there). A correct null name counts nothing
in the scores and is no item here.

**Difficulty** (:class:`Difficulty`): for each gold item, the share of the complete contenders (finished,
over the whole split, not a reference: the ranked runs of the board) that get it right; for each paper,
the share of (contender, gold item) pairs that are right. The most-missed items come with the sentence of
the abstract that holds them (the item located by :func:`~paperfields.core.locate.locate`, the abstract
split into sentences by pysbd).

**Error taxonomy** (:func:`judge_paper`): every error of a run on a field is one of

- ``missed``: a gold item no prediction stands for (also every gold item of a failed paper);
- ``invented``: a predicted item that stands for no gold item (a name where gold is null, an extra list item);
- ``wrong_value``: a prediction in the place of a gold item, but another one (a different name; a result
  with the right number on another metric, or the right metric with another number);
- ``near_miss``: a predicted item close to an unmatched gold item that the field's matching rule still
  refuses (rapidfuzz token-set ratio of the normalized forms at least :data:`NEAR_MISS`; on a result, the
  same number with such a metric);
- ``wrong_unit_or_qualifier``: a result matched on value and metric (right for the headline) whose unit or
  qualifier disagrees with gold's: an error at the ``results: full`` level only;
- ``wrong_class``: a label field labeled with another class (on ``contribution_types``, a wrong label
  paired with a missing one).

So per field and paper, ``missed + near_miss + wrong_value + wrong_class`` is the scorer's ``fn`` and
``invented + near_miss + wrong_value + wrong_class`` its ``fp``; ``wrong_unit_or_qualifier`` is apart. Note
that the board's ``invented`` rate is another number: the share of papers with empty gold where the
field was filled in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
from rapidfuzz import fuzz

from paperfields.core.escape import escape_markdown, markdown_code
from paperfields.core.fields import RecordField, record_fields
from paperfields.core.gold import GoldRecord
from paperfields.core.locate import locate, locate_result, locate_url
from paperfields.core.normalize import normalize
from paperfields.core.runlog import RunError
from paperfields.scoring.match import (
    METRIC_NAMES,
    _same_objects,
    accepted_forms,
    assign,
    dedupe,
    same_name,
    same_value,
    unit_agrees,
    with_abstract_aliases,
)
from paperfields.scoring.score import MATCHERS

if TYPE_CHECKING:
    from paperfields.scoring.score import RunScores

NEAR_MISS = 0.8  # token-set ratio / 100 at or above which a refused pair is a near miss, not a plain miss
ERROR_KINDS = ("missed", "invented", "wrong_value", "near_miss", "wrong_unit_or_qualifier", "wrong_class")
ERROR_TITLES = {
    "missed": "missed",
    "invented": "invented",
    "wrong_value": "wrong value",
    "near_miss": "near miss",
    "wrong_unit_or_qualifier": "wrong unit/qualifier",
    "wrong_class": "wrong class",
}
MOST_MISSED = 20


@dataclass(frozen=True)
class ItemVerdict:
    """One gold item of a paper and whether a run got it right: ``field``, ``index`` (its place among the
    field's gold items of the paper), ``text`` (how it reads: the string, ``metric = value unit`` for a
    result, the label), ``value`` (the gold value itself, for locating it) and ``right``."""

    field: str
    index: int
    text: str
    value: Any
    right: bool
    grounded: Optional[str] = (
        None  # how the field's items are written in the abstract (FieldFacts.grounded); None for labels
    )


@dataclass(frozen=True)
class PaperJudgment:
    """A run's verdict on one paper: each gold item (:class:`ItemVerdict`) and per field the count of
    each error kind (:data:`ERROR_KINDS`; kinds that did not occur are absent)."""

    items: list[ItemVerdict]
    errors: dict[str, Counter]


def _near(predicted: Any, gold: Any, alternates: dict[str, list[str]]) -> bool:
    """A predicted string is close to a gold string or one of its accepted forms (:data:`NEAR_MISS`)."""
    if not isinstance(predicted, str) or not isinstance(gold, str) or not predicted.strip() or not gold.strip():
        return False
    key = normalize(predicted)
    return any(
        fuzz.token_set_ratio(key, normalize(form)) / 100.0 >= NEAR_MISS for form in accepted_forms(gold, alternates)
    )


def _pair_off(unmatched_pred: list[int], unmatched_gold: list[int], allowed) -> list[tuple[int, int]]:
    """The most (pred, gold) pairs among the unmatched indices for which ``allowed(i, j)`` holds, one to one."""
    if not unmatched_pred or not unmatched_gold:
        return []
    matrix = np.array([[bool(allowed(i, j)) for j in unmatched_gold] for i in unmatched_pred], dtype=bool)
    return [(unmatched_pred[r], unmatched_gold[c]) for r, c in assign(matrix)]


def _result_text(result: dict[str, Any]) -> str:
    value = f"{result.get('value'):g}" if isinstance(result.get("value"), (int, float)) else str(result.get("value"))
    if result.get("value_upper") is not None:
        value += f"-{result['value_upper']:g}"
    where = f" on {result['dataset']}" if result.get("dataset") else ""
    return f"{result.get('metric') or '(no metric)'} = {value} {result.get('unit') or ''}".rstrip() + where


def _label_text(value: Any) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _judge_field(
    field: RecordField, pred: Any, gold: Any, alt: dict[str, list[str]], abstract: str, answered: bool
) -> tuple[list[ItemVerdict], Counter]:
    errors: Counter = Counter()
    name = field.name
    if field.is_label and not field.is_list:
        # one label: an item whatever its value (null is a class where the field is nullable)
        right = answered and pred == gold
        if not answered:
            errors["missed"] += 1
        elif not right:
            errors["wrong_class"] += 1
        return [ItemVerdict(name, 0, _label_text(gold), gold, right)], errors
    if field.is_label:
        p, g = set(pred or []), sorted(set(gold or []), key=str)
        extra, lacking = len(p - set(g)), len(set(g) - p)
        swapped = min(extra, lacking)
        errors.update({"wrong_class": swapped, "missed": lacking - swapped, "invented": extra - swapped})
        return [ItemVerdict(name, i, _label_text(v), v, v in p) for i, v in enumerate(g)], +errors
    matcher = MATCHERS[field.facts.match]
    if not field.is_list:
        tp, fp, fn = matcher.count(field, pred, gold, alt, abstract, answered)
        items = [] if gold in (None, "") else [ItemVerdict(name, 0, str(gold), gold, tp == 1, field.facts.grounded)]
        if fp and fn:
            errors["near_miss" if _near(pred, gold, alt) else "wrong_value"] += 1
        elif fp:
            errors["invented"] += 1
        elif fn:
            errors["missed"] += 1
        return items, errors
    if field.is_record_list:
        predicted, gold_items = list(pred or []), list(gold or [])
        kept, pairs = matcher.align(predicted, gold_items, alt, abstract)
        for i, j in pairs:
            p_i, g_j = predicted[i], gold_items[j]
            if not unit_agrees(p_i, g_j, abstract) or (p_i.get("qualifier") or "exact") != (
                g_j.get("qualifier") or "exact"
            ):
                errors["wrong_unit_or_qualifier"] += 1
        left_p = [i for i in range(len(predicted)) if i not in {a for a, _ in pairs}]
        left_g = [j for j in range(len(gold_items)) if j not in {b for _, b in pairs}]
        near = _pair_off(
            left_p,
            left_g,
            lambda i, j: (
                same_value(predicted[i], gold_items[j], abstract)
                and _near(predicted[i].get("metric"), gold_items[j].get("metric"), alt)
            ),
        )
        left_p = [i for i in left_p if i not in {a for a, _ in near}]
        left_g = [j for j in left_g if j not in {b for _, b in near}]
        wrong = _pair_off(
            left_p,
            left_g,
            lambda i, j: (
                same_value(predicted[i], gold_items[j], abstract)
                or same_name(predicted[i].get("metric"), gold_items[j].get("metric"), alt, METRIC_NAMES)
            ),
        )
        errors.update(
            {
                "near_miss": len(near),
                "wrong_value": len(wrong),
                "invented": len(left_p) - len(wrong),
                "missed": len(left_g) - len(wrong),
            }
        )
        matched = {j for _, j in pairs}
        return [
            ItemVerdict(name, j, _result_text(g), g, j in matched, field.facts.grounded)
            for j, g in enumerate(gold_items)
        ], +errors
    kept, pairs = matcher.align(list(pred or []), list(gold or []), alt, abstract)
    gold_items = dedupe(gold or [])
    left_p = [i for i in range(len(kept)) if i not in {a for a, _ in pairs}]
    left_g = [j for j in range(len(gold_items)) if j not in {b for _, b in pairs}]
    near = _pair_off(left_p, left_g, lambda i, j: _near(kept[i], gold_items[j], alt))
    errors.update({"near_miss": len(near), "invented": len(left_p) - len(near), "missed": len(left_g) - len(near)})
    matched = {j for _, j in pairs}
    return [ItemVerdict(name, j, g, g, j in matched, field.facts.grounded) for j, g in enumerate(gold_items)], +errors


# Kept by the identity of its arguments: `paperfields leaderboard` judges each run's papers for the difficulty view
# and again for the run's report, with the very same objects (read once: paperfields/core/readonce.py).
@_same_objects(1 << 14)
def judge_paper(prediction: Optional[dict[str, Any]], gold: GoldRecord, abstract: str = "") -> PaperJudgment:
    """A run's verdict on one paper: every gold item right or not, and the errors per field by kind (see
    the module docstring). ``prediction`` is a record dict, or None for a failed paper (every gold item
    missed); ``abstract`` is read as the scorer reads it (written numbers, defined acronyms). Pure; the
    verdict is shared with a later call on the same objects: read it, do not change it."""
    p = prediction or {}
    g = gold.record.model_dump(mode="json")
    alt = with_abstract_aliases(gold.alternates, abstract)
    items: list[ItemVerdict] = []
    errors: dict[str, Counter] = {}
    for field in record_fields(type(gold.record)):
        if not field.facts.headline:
            continue
        found, errs = _judge_field(field, p.get(field.name), g[field.name], alt, abstract, prediction is not None)
        items += found
        errors[field.name] = errs
    return PaperJudgment(items, errors)


def counts_of(errors: Counter) -> tuple[int, int]:
    """(fp, fn) that a field's error counts stand for (see the module docstring)."""
    paired = errors["near_miss"] + errors["wrong_value"] + errors["wrong_class"]
    return errors["invented"] + paired, errors["missed"] + paired


# --- sentences -------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False, char_span=True)


@lru_cache(maxsize=512)
def sentences(abstract: str) -> tuple[tuple[int, int], ...]:
    """The abstract's sentences as ``[start, end)`` character spans, in order (pysbd, rule-based)."""
    return tuple((s.start, s.end) for s in _segmenter().segment(abstract))


def item_span(item: ItemVerdict, abstract: str, alternates: dict[str, list[str]]) -> Optional[tuple[int, int]]:
    """Where a gold item is first written in the abstract (:mod:`~paperfields.core.locate`: the string or
    one of its accepted forms, a result's number, a URL), exact or normalized; None when it is not
    written there (a label, a paraphrased item)."""
    if item.grounded is None:
        return None
    if item.grounded == "number":
        where = locate_result(item.value, abstract)
        return tuple(where.spans[0]) if where.spans else None
    if item.grounded == "url":
        candidates = [locate_url(item.value, abstract)]
    else:
        candidates = [locate(form, abstract) for form in accepted_forms(item.value, alternates)]
    for where in candidates:
        if where.grounded and where.spans:
            return tuple(where.spans[0])
    return None


def sentence_of(item: ItemVerdict, abstract: str, alternates: dict[str, list[str]]) -> Optional[str]:
    """The sentence of the abstract that holds the gold item (:func:`item_span`), stripped; None when the
    item is not written in the abstract."""
    span = item_span(item, abstract, alternates)
    if span is None:
        return None
    for start, end in sentences(abstract):
        if start <= span[0] < end:
            return abstract[start:end].strip()
    return None


# --- across runs -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ItemDifficulty:
    """One gold item across the contenders: ``right`` of ``contenders`` got it; ``share`` = right /
    contenders (None without contenders); ``sentence`` the abstract's sentence holding it (None when
    the item is not written there)."""

    paper_id: str
    field: str
    index: int
    text: str
    right: int
    contenders: int
    sentence: Optional[str] = None

    @property
    def share(self) -> Optional[float]:
        return self.right / self.contenders if self.contenders else None


@dataclass(frozen=True)
class PaperDifficulty:
    """One paper across the contenders: ``items`` gold items, ``right`` (contender, item) pairs right out
    of ``items * contenders``; ``share`` their ratio (None when the paper has no gold item or there is
    no contender)."""

    paper_id: str
    items: int
    right: int
    contenders: int

    @property
    def share(self) -> Optional[float]:
        total = self.items * self.contenders
        return self.right / total if total else None


@dataclass
class Difficulty:
    """Difficulty and error taxonomy of a set of runs, built by :func:`difficulty`.

    ``contenders`` are the run ids difficulty is over; ``items`` and ``papers`` are in gold order;
    ``taxonomy`` maps every run given (contenders and others) to field -> error kind -> count, every
    kind present (0 when none), over the papers the run scored; ``verdicts`` maps run id -> (paper id,
    field, index) -> right, for views that mark one run's answers."""

    contenders: list[str]
    items: list[ItemDifficulty]
    papers: list[PaperDifficulty]
    taxonomy: dict[str, dict[str, dict[str, int]]]
    verdicts: dict[str, dict[tuple[str, str, int], bool]] = dc_field(default_factory=dict)

    def most_missed(self, n: int = MOST_MISSED) -> list[ItemDifficulty]:
        """The ``n`` gold items the fewest contenders got right (lowest share first; ties in gold order),
        among those at least one contender missed."""
        ranked = [i for i in self.items if i.share is not None and i.share < 1]
        return sorted(ranked, key=lambda i: i.share)[:n]

    def hardest_papers(self, n: int = 10) -> list[PaperDifficulty]:
        """The ``n`` papers with the lowest share of right (contender, item) pairs (ties in gold order)."""
        return sorted([p for p in self.papers if p.share is not None], key=lambda p: p.share)[:n]

    def data(self) -> dict[str, Any]:
        """Everything as plain JSON-ready data (for a page or a script): contenders, items (with share),
        papers (with share), the most-missed items, and the taxonomy."""

        def item(i: Any) -> dict[str, Any]:
            return {
                "paper_id": i.paper_id,
                "field": i.field,
                "index": i.index,
                "text": i.text,
                "right": i.right,
                "contenders": i.contenders,
                "share": i.share,
                "sentence": i.sentence,
            }

        return {
            "contenders": self.contenders,
            "items": [item(i) for i in self.items],
            "papers": [
                {
                    "paper_id": p.paper_id,
                    "items": p.items,
                    "right": p.right,
                    "contenders": p.contenders,
                    "share": p.share,
                }
                for p in self.papers
            ],
            "most_missed": [item(i) for i in self.most_missed()],
            "taxonomy": self.taxonomy,
        }


@dataclass(frozen=True)
class RunPredictions:
    """What :func:`difficulty` reads of one run: its id, whether it is a complete contender, and its
    record (None: failed) per scored paper."""

    run_id: str
    contender: bool
    records: dict[str, Optional[dict[str, Any]]]
    stored_counts: Optional[dict[str, dict[str, list[int]]]] = (
        None  # paper -> field -> [tp, fp, fn] (paper_scores.jsonl)
    )


def taxonomy_of(judgments: Sequence[PaperJudgment], fields: Sequence[str]) -> dict[str, dict[str, int]]:
    """Field -> error kind -> count summed over a run's paper judgments (every kind present)."""
    out = {f: {k: 0 for k in ERROR_KINDS} for f in fields}
    for judgment in judgments:
        for f, errs in judgment.errors.items():
            for kind, n in errs.items():
                out[f][kind] += n
    return out


def difficulty(runs: Sequence[RunPredictions], gold: Sequence[GoldRecord], abstracts: dict[str, str]) -> Difficulty:
    """Difficulty over the contenders among ``runs`` and the error taxonomy of every run, on the ``gold``
    papers each run scored (a paper absent from a run's ``records`` is not counted for that run).

    Raises RunError naming the run and the paper when a run's ``stored_counts`` disagree with the
    verdicts (its stored scores are stale, or were written by another scorer)."""
    fields = [f.name for f in record_fields(type(gold[0].record)) if f.facts.headline] if gold else []
    by_paper: dict[str, dict[tuple[str, int], list[int]]] = {}
    texts: dict[tuple[str, str, int], ItemVerdict] = {}
    taxonomy: dict[str, dict[str, dict[str, int]]] = {}
    verdicts: dict[str, dict[tuple[str, str, int], bool]] = {}
    contenders = [r.run_id for r in runs if r.contender]
    for run in runs:
        judgments = []
        verdicts[run.run_id] = {}
        for g in gold:
            if g.id not in run.records:
                continue
            abstract = abstracts.get(g.id, "")
            judgment = judge_paper(run.records[g.id], g, abstract)
            judgments.append(judgment)
            if run.stored_counts is not None:
                _check(run, g.id, judgment, run.stored_counts.get(g.id))
            for item in judgment.items:
                key = (g.id, item.field, item.index)
                texts.setdefault(key, item)
                verdicts[run.run_id][key] = item.right
                if run.contender:
                    by_paper.setdefault(g.id, {}).setdefault((item.field, item.index), []).append(int(item.right))
        taxonomy[run.run_id] = taxonomy_of(judgments, fields)
    items, papers = [], []
    n = len(contenders)
    for g in gold:
        got = by_paper.get(g.id, {})
        if not got and n:
            continue
        alt = with_abstract_aliases(g.alternates, abstracts.get(g.id, ""))
        for (field, index), marks in got.items():
            item = texts[(g.id, field, index)]
            items.append(
                ItemDifficulty(
                    g.id,
                    field,
                    index,
                    item.text,
                    sum(marks),
                    len(marks),
                    sentence_of(item, abstracts.get(g.id, ""), alt),
                )
            )
        if got:
            papers.append(PaperDifficulty(g.id, len(got), sum(sum(m) for m in got.values()), n))
    return Difficulty(contenders=contenders, items=items, papers=papers, taxonomy=taxonomy, verdicts=verdicts)


def _check(run: RunPredictions, paper_id: str, judgment: PaperJudgment, stored: Optional[dict[str, list[int]]]) -> None:
    if stored is None:
        raise RunError(
            f"{run.run_id}: paper {paper_id} has no row in "
            "paper_scores.jsonl; re-score the run with `paperfields score`"
        )
    unscored = [f for f in judgment.errors if f not in stored]
    if unscored:  # scored before the field was in the schema: its paper_scores.jsonl is older than scores.json
        raise RunError(
            f"{run.run_id}: paper {paper_id} has no stored counts for {', '.join(repr(f) for f in unscored)} in "
            "paper_scores.jsonl (scored with another schema); re-score the run with `paperfields score`"
        )
    for f, errs in judgment.errors.items():
        tp, fp, fn = stored[f]
        right = sum(1 for i in judgment.items if i.field == f and i.right)
        if (right, *counts_of(errs)) != (tp, fp, fn):
            raise RunError(
                f"{run.run_id}: paper {paper_id}, field '{f}': the stored counts (tp, fp, fn) = {(tp, fp, fn)} "
                f"disagree with the predictions' {(right, *counts_of(errs))}; re-score the run with `paperfields score`"
            )


def load_difficulty(
    runs_dir: Path, gold_path: Path, corpus_path: Optional[Path] = None, scores: Optional[Sequence[RunScores]] = None
) -> Difficulty:
    """:func:`difficulty` of the scored runs in ``runs_dir`` (the published runs: ``results/runs``):
    contenders are the complete contenders of the board (``RunScores.rankable``); the taxonomy covers
    every run that is not partial or unfinished. ``scores`` are the runs' stored scores when the caller
    has read them (the board), else read here. A run whose scores are stale (its predictions changed
    since scoring: the board warns about it) is left out; each other run's predictions are checked
    against its stored per-paper counts (RunError when they disagree). ``corpus_path`` defaults to
    ``corpus.jsonl`` beside the gold file."""
    from paperfields.core.corpus import load_corpus
    from paperfields.core.gold import load_gold
    from paperfields.core.runlog import read_predictions
    from paperfields.scoring.board import board_order
    from paperfields.scoring.runs import _read_scores, load_scored_run, stale_reason

    if scores is None:
        scores = board_order([_read_scores(path) for path in sorted(runs_dir.glob("*/scores.json"))])
    runs = []
    for s in scores:
        run_dir = runs_dir / s.run_id
        if not s.comparable or stale_reason(run_dir, s) is not None:
            continue
        _, rows = load_scored_run(run_dir, gold_path)
        records = {line.paper_id: line.record for line in read_predictions(run_dir / "predictions.jsonl")}
        runs.append(
            RunPredictions(
                s.run_id,
                s.rankable,
                {pid: records.get(pid) for pid in rows},
                {pid: row["fields"] for pid, row in rows.items()},
            )
        )
    gold = load_gold(gold_path)
    split = {g.split for g in gold if any(g.id in r.records for r in runs)}
    abstracts = {p.id: p.text for p in load_corpus(corpus_path or gold_path.parent / "corpus.jsonl")}
    return difficulty(runs, [g for g in gold if g.split in split], abstracts)


# --- views -----------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return escape_markdown(text)  # a gold item, an abstract's sentence, a run id: text, never Markdown


def _pct(value: Optional[float]) -> str:
    from paperfields.scoring.board import UNDEFINED

    return UNDEFINED if value is None else f"{value:.0%}"


def taxonomy_rows(taxonomy: dict[str, dict[str, int]]) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of one run's taxonomy: one row per field, one column per error kind, and a total row."""
    head = ["field"] + [ERROR_TITLES[k] for k in ERROR_KINDS]
    rows = [[f] + [str(by_kind[k]) for k in ERROR_KINDS] for f, by_kind in taxonomy.items()]
    rows.append(["all fields"] + [str(sum(by_kind[k] for by_kind in taxonomy.values())) for k in ERROR_KINDS])
    return head, rows


TAXONOMY_TEXT = (
    "Each error of a run on a field is one kind: `missed` (a gold item nothing stands for; every item of a failed "
    "paper), `invented` (a predicted item that stands for no gold item), `wrong value` (a prediction in the place of "
    "a gold item but another one: another name; a result with the right number on another metric, or the right metric "
    f"with another number), `near miss` (close to a gold item, token-set ratio at least {NEAR_MISS:.0%}, yet refused "
    "by the field's matching rule), `wrong unit/qualifier` (a result right on value and metric whose unit or "
    "qualifier is wrong: an error of the `results: full` level only), `wrong class` (a label field given another "
    "class). Per field, missed + near miss + wrong value + wrong class is the scorer's false negatives and invented + "
    "near miss + wrong value + wrong class its false positives, so these counts add up to the stored scores."
)

DIFFICULTY_TEXT = (
    "A gold item is what a run can get right on a paper: each string of a list field, each result, each "
    "label of `contribution_types`, a non-null name or URL, the label of `research_area` and of "
    "`training_free`. Its difficulty is the share of the complete contenders (the ranked runs of the board: "
    "finished, whole split, not references) that get it right under the scorer's matching rules; a paper's "
    "is the share of its (contender, item) pairs that are right."
)


def difficulty_markdown(view: Difficulty, n: int = MOST_MISSED) -> str:
    """``results/difficulty.md``: how the numbers are made, the ``n`` most-missed gold items with their
    sentence, the hardest papers, and one error-taxonomy table per field (columns: runs) and per run total."""
    from paperfields.scoring.board import UNDEFINED

    lines = [
        "# What models get wrong",
        "",
        "Generated by `paperfields leaderboard` from the published runs in `results/runs`; do not edit by hand.",
        "",
        DIFFICULTY_TEXT,
        "",
        f"Complete contenders: {', '.join(markdown_code(c) for c in view.contenders) or 'none'}.",
        "",
    ]
    lines += [
        f"## The {n} most-missed gold items",
        "",
        "Lowest share of contenders right first; the sentence is the abstract's sentence that writes the item "
        f"({UNDEFINED} when the item is not written there, as for a label).",
        "",
        "| paper | field | gold item | contenders right | sentence |",
        "|---|---|---|---|---|",
    ]
    for i in view.most_missed(n):
        lines.append(
            f"| {_cell(i.paper_id)} | {i.field} | {_cell(i.text)} | {i.right}/{i.contenders} "
            f"({_pct(i.share)}) | {_cell(i.sentence or UNDEFINED)} |"
        )
    lines += [
        "",
        "## The hardest papers",
        "",
        "Share of (contender, gold item) pairs right, lowest first (10 papers).",
        "",
        "| paper | gold items | right | share |",
        "|---|---|---|---|",
    ]
    for p in view.hardest_papers():
        lines.append(f"| {_cell(p.paper_id)} | {p.items} | {p.right}/{p.items * p.contenders} | {_pct(p.share)} |")
    lines += ["", "## Errors by kind, per run", "", TAXONOMY_TEXT, ""]
    runs = list(view.taxonomy)
    lines += ["| run | " + " | ".join(ERROR_TITLES[k] for k in ERROR_KINDS) + " |", "|---|" + "---|" * len(ERROR_KINDS)]
    for run in runs:
        totals = [sum(by_kind[k] for by_kind in view.taxonomy[run].values()) for k in ERROR_KINDS]
        lines.append(f"| {_cell(run)} | " + " | ".join(str(t) for t in totals) + " |")
    for run in runs:
        head, rows = taxonomy_rows(view.taxonomy[run])
        lines += [
            "",
            f"## Errors of {_cell(run)}, per field",
            "",
            f"Count of each kind of error over the papers {markdown_code(run)} scored.",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
        ]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
