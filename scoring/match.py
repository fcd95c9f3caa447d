"""Matching rules, one per field type. Every rule is a pure function of prediction and gold, and
symmetric: swapping the two swaps precision and recall (gold ``alternates``, written by hand for
gold strings, are the one exception).

Lists are aligned one to one with the Hungarian algorithm (Kuhn 1955; scipy
``linear_sum_assignment``) on a similarity matrix, as in the slot-filling and IE literature
(e.g. SciREX, Jain et al. 2020); a pair counts only at or above the field's threshold.

Strings are compared by their :func:`~paperfields.scoring.normalize.normalize` key (markup, invisible
characters, Greek letters, case, hyphens, glued versions). Two guards hold before any similarity:
the digit sequences must be the same (``Qwen3-4B`` is not ``Qwen3-30B-A3B``, ``AIME24`` not
``AIME25``) and so must the symbol marks (``AnyEdit++`` is not ``AnyEdit``). Numbers agree by
:func:`~paperfields.scoring.normalize.numbers_agree`, with the precision they are written with in
the abstract when it is given.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional, Sequence

import numpy as np
from rapidfuzz import fuzz
from scipy.optimize import linear_sum_assignment

from paperfields.scoring.normalize import normalize, normalize_url, number_precision, numbers_agree, strip_markup

_DIGITS = re.compile(r"\d+(?:\.\d+)*")
_MARKS = re.compile(r"\++|#")


@dataclass(frozen=True)
class MatchRule:
    """When two strings count as the same item.

    ``threshold``: rapidfuzz ratio / 100 at or above which they match. ``containment``: a phrase also
    matches when the tokens of one are a subset of the other's with at most one token more (one
    modifier dropped: "accuracy" ~ "mean accuracy", "throughput" ~ "inference throughput"). Chosen
    against 170 hand-judged pairs from real runs (gold/AGREEMENT.md): on tasks and metrics it raised
    scorer-human agreement from 105 to 110 of 118, at the price of accepting "success rate" for
    "attack success rate". Without ``containment`` the opposite holds: a name with a token more or
    less is another name (``GPT-4o mini`` is not ``GPT-4o``, ``MMLU Pro`` not ``MMLU``), however high
    the ratio.
    """

    threshold: float
    containment: bool = False


NAME = MatchRule(0.9)  # datasets, models, baselines, result dataset/model/baseline: versions must agree
PHRASE = MatchRule(0.85, containment=True)  # tasks, metrics, result metric: descriptive noun phrases


def forms(gold: str, alternates: dict[str, list[str]]) -> list[str]:
    """Normalized accepted forms of a gold string: itself plus its alternates."""
    keys: dict[str, list[str]] = {}
    for key, values in alternates.items():
        keys.setdefault(normalize(key), []).extend(values)
    return [normalize(gold)] + [normalize(a) for a in keys.get(normalize(gold), [])]


def _signature(key: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What two names must share exactly: their digit sequences and their symbol marks (``++``, ``#``)."""
    return tuple(_DIGITS.findall(key)), tuple(_MARKS.findall(key))


def similarity(predicted: str, accepted: Sequence[str], rule: MatchRule = NAME) -> float:
    """Similarity in [0, 1] of a prediction to the accepted (normalized) forms of one gold item.

    1.0 when the normalized strings are equal or differ only in spaces (``SWE-bench`` ~ ``SWEBench``).
    0.0 when their digit sequences differ (``GPT-4o`` never matches ``GPT-4``, ``Qwen2.5-7B`` never
    ``Qwen2.5-14B``, but ``Llama3.1-8B`` is ``Llama-3.1-8B``) or their symbol marks do (``AnyEdit++``
    vs ``AnyEdit``). With ``rule.containment``, 1.0 when one's tokens are a subset of the other's with
    at most one more; without it, 0.0 when they are a strict subset (a name with a token added). Else
    the rapidfuzz ratio of the normalized strings, best over the accepted forms.
    """
    p = normalize(predicted)
    best = 0.0
    for form in accepted:
        if _signature(p) != _signature(form):
            continue
        if p.replace(" ", "") == form.replace(" ", ""):
            return 1.0
        a, b = set(p.split()), set(form.split())
        short, long_ = (a, b) if len(a) <= len(b) else (b, a)
        if short and short <= long_:
            if rule.containment and len(long_) - len(short) <= 1:
                return 1.0
            if not rule.containment and short != long_:
                continue
        best = max(best, fuzz.ratio(p, form) / 100.0)
    return best


def dedupe(items: Sequence[str]) -> list[str]:
    """Items with normalized duplicates and empties removed, first occurrence kept."""
    seen, out = set(), []
    for item in items:
        key = normalize(item) if isinstance(item, str) else None
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def assign(allowed: np.ndarray, weight: Optional[np.ndarray] = None) -> list[tuple[int, int]]:
    """Maximum one-to-one matching of rows (predictions) to columns (gold) among allowed pairs.

    ``allowed`` is a boolean matrix (n_pred x n_gold); ``weight`` breaks ties among matchings of the
    same size (higher is preferred). Returns (pred_index, gold_index) pairs, all allowed.
    """
    if allowed.size == 0:
        return []
    score = allowed.astype(float) * (1.0 + (weight if weight is not None else 0.0) * 1e-3)
    rows, cols = linear_sum_assignment(score, maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, cols) if allowed[r, c]]


def align_strings(
    predicted: Sequence[str], gold: Sequence[str], alternates: dict[str, list[str]], rule: MatchRule
) -> tuple[list[str], list[str], list[tuple[int, int]]]:
    """De-duplicated predictions and gold, and the one-to-one matched (pred, gold) index pairs."""
    pred, gold = dedupe(predicted), dedupe(gold)
    if not pred or not gold:
        return pred, gold, []
    sim = np.array([[similarity(p, forms(g, alternates), rule) for g in gold] for p in pred])
    return pred, gold, assign(sim >= rule.threshold, sim)


def match_strings(
    predicted: Sequence[str], gold: Sequence[str], alternates: dict[str, list[str]], rule: MatchRule
) -> tuple[int, int, int]:
    """(tp, fp, fn) of a list of strings against gold, after normalization and de-duplication."""
    pred, gold, pairs = align_strings(predicted, gold, alternates, rule)
    return len(pairs), len(pred) - len(pairs), len(gold) - len(pairs)


def same_name(predicted: Optional[str], gold: Optional[str], alternates: dict[str, list[str]], rule: MatchRule = NAME) -> bool:
    """Optional names agree: both missing, or both present and similar enough under ``rule``."""
    if not predicted or not gold:
        return not predicted and not gold
    return similarity(predicted, forms(gold, alternates), rule) >= rule.threshold


def same_url(predicted: Optional[str], gold: Optional[str]) -> bool:
    """URLs agree after :func:`normalize_url` (scheme, ``www.``, ``.git``, fragment, trailing punctuation)."""
    if not predicted or not gold:
        return not predicted and not gold
    return normalize_url(predicted) == normalize_url(gold)


# --- Acronyms the abstract defines -----------------------------------------------------------------


def _schwartz_hearst():
    # The package calls logging.basicConfig(level=INFO) on import, which would switch on INFO logs
    # for the whole program; basicConfig does nothing while the root logger has a handler.
    root = logging.getLogger()
    guard = logging.NullHandler()
    root.addHandler(guard)
    try:
        from abbreviations import schwartz_hearst
    finally:
        root.removeHandler(guard)
    return schwartz_hearst


@lru_cache(maxsize=1 << 12)
def abstract_aliases(abstract: str) -> dict[str, list[str]]:
    """Acronym <-> expansion pairs the abstract defines, "advantage collapse rate (ACR)" giving
    ``{"advantage collapse rate": ["ACR"], "ACR": ["advantage collapse rate"]}`` (the Schwartz & Hearst
    2003 algorithm, package ``abbreviations``, on the markup-stripped abstract). Empty for an empty
    abstract. Both directions, so the aliases stay symmetric between prediction and gold.

    Two kinds of pair the algorithm gets wrong on the corpus are dropped: a short form without a
    capital or a digit ("ii" -> "informative during decoding, and") and a short form of three or more
    characters given as one word ("REAR" -> "Reward", "ToT" -> "Thoughts")."""
    if not abstract.strip():
        return {}
    pairs = _schwartz_hearst().extract_abbreviation_definition_pairs(doc_text=strip_markup(abstract))
    out: dict[str, list[str]] = {}
    for short, long_ in pairs.items():
        if not re.search(r"[A-Z\d]", short) or (len(short) > 2 and len(re.split(r"[\s-]+", long_.strip())) < 2):
            continue
        out.setdefault(short, []).append(long_)
        out.setdefault(long_, []).append(short)
    return out


def with_abstract_aliases(alternates: dict[str, list[str]], abstract: str) -> dict[str, list[str]]:
    """Gold ``alternates`` extended with :func:`abstract_aliases` (guideline ruling 6: an acronym and
    the expansion the abstract gives are the same item), as a new dict; ``alternates`` is unchanged."""
    merged = {key: list(values) for key, values in alternates.items()}
    for key, values in abstract_aliases(abstract).items():
        merged.setdefault(key, []).extend(v for v in values if v not in merged[key])
    return merged


# --- Result tuples ---------------------------------------------------------------------------------

FRACTION_UNITS = ("other", "points")  # units a fraction (0.5661) of a percentage (56.61%) may carry


def _number(result: dict, key: str, text: Optional[str]) -> Optional[tuple[float, tuple[int, bool]]]:
    value = result.get(key)
    return None if value is None else (float(value), number_precision(float(value), text))


def _ends(result: dict, text: Optional[str]) -> Optional[tuple]:
    """(lower, upper or None) with precisions; a range whose ends agree ("58-58%") is a point."""
    low, high = _number(result, "value", text), _number(result, "value_upper", text)
    if low is None:
        return None
    if high is not None and numbers_agree(*low, *high):
        high = None
    return low, high


def _ends_agree(a: tuple, b: tuple) -> bool:
    (a_low, a_high), (b_low, b_high) = a, b
    if (a_high is None) != (b_high is None):
        return False
    return numbers_agree(*a_low, *b_low) and (a_high is None or numbers_agree(*a_high, *b_high))


def _as_percent(ends: tuple) -> tuple:
    """A fraction's ends as percentages, 0.5661 -> 56.61 with two decimals fewer; never written."""
    return tuple(None if end is None else (end[0] * 100, (max(0, end[1][0] - 2), False)) for end in ends)


def _is_fraction(result: dict, ends: tuple, text: Optional[str]) -> bool:
    """A result states a fraction of a percentage: every end in [0, 1] and the unit is ``other`` or
    ``points``, or ``percent`` when the abstract is given and does not write the number (so the
    percent label is a mistake: "0.5661%" is not in the text). Without an abstract a percent-labeled
    0.85 is taken as written (0.85%)."""
    if any(end is not None and abs(end[0]) > 1 for end in ends):
        return False
    if result.get("unit") in FRACTION_UNITS:
        return True
    return result.get("unit") == "percent" and bool(text) and not ends[0][1][1]


def value_agreement(pred: dict, gold: dict, text: Optional[str] = None) -> Optional[str]:
    """How the values (and upper values, for ranges) of two results agree: ``"same"`` (as written, see
    :func:`~paperfields.scoring.normalize.numbers_agree`), ``"converted"`` (one is a fraction of the
    other's percentage: 0.5661 ~ 56.61%, see :func:`_is_fraction`), or None (they do not). Signs are
    ignored (a reduction may be written -30 or 30). Symmetric.

    ``text`` is the abstract: each number's tolerance comes from how it is written there ("2.0×"
    accepts 2.0 ± 0.05, not ± 0.5). Without it numbers agree only when equal.
    """
    p, g = _ends(pred, text), _ends(gold, text)
    if p is None or g is None:
        return None
    if _ends_agree(p, g):
        return "same"
    for fraction, fraction_ends, percent, percent_ends in ((pred, p, gold, g), (gold, g, pred, p)):
        if percent.get("unit") == "percent" and _is_fraction(fraction, fraction_ends, text) and _ends_agree(_as_percent(fraction_ends), percent_ends):
            return "converted"
    return None


def same_value(pred: dict, gold: dict, text: Optional[str] = None) -> bool:
    """A result's value (and upper value, for ranges) agrees with gold's (:func:`value_agreement`)."""
    return value_agreement(pred, gold, text) is not None


def unit_agrees(pred: dict, gold: dict, text: Optional[str] = None) -> bool:
    """The units state the same quantity: equal units, or a percentage and its fraction written
    with a fraction's unit (56.61 ``percent`` ~ 0.5661 ``other``; 0.5661 labeled ``percent`` is not)."""
    if value_agreement(pred, gold, text) == "converted":
        return pred.get("unit") in FRACTION_UNITS or gold.get("unit") in FRACTION_UNITS
    return pred.get("unit") == gold.get("unit")


def _same_qualifier(pred: dict, gold: dict) -> bool:
    return (pred.get("qualifier") or "exact") == (gold.get("qualifier") or "exact")


RESULT_LEVELS: dict[str, Callable[[dict, dict, dict, Optional[str]], bool]] = {
    "value": lambda p, g, alt, text: same_value(p, g, text),
    "value_metric": lambda p, g, alt, text: same_value(p, g, text) and same_name(p.get("metric"), g.get("metric"), alt, PHRASE),
    "full": lambda p, g, alt, text: same_value(p, g, text)
    and same_name(p.get("metric"), g.get("metric"), alt, PHRASE)
    and all(same_name(p.get(k), g.get(k), alt) for k in ("dataset", "model", "baseline"))
    and p.get("kind") == g.get("kind")
    and _same_qualifier(p, g)
    and unit_agrees(p, g, text),
}


RESULT_ATTRIBUTES = ("metric", "unit", "kind", "qualifier", "dataset", "model", "baseline")


def attribute_agrees(pred: dict, gold: dict, attribute: str, alternates: dict[str, list[str]], text: Optional[str] = None) -> bool:
    """One attribute of a matched result pair agrees (names by :func:`same_name`, the unit by
    :func:`unit_agrees`, a missing qualifier read as ``exact``, other enums exactly)."""
    if attribute == "metric":
        return same_name(pred.get("metric"), gold.get("metric"), alternates, PHRASE)
    if attribute in ("dataset", "model", "baseline"):
        return same_name(pred.get(attribute), gold.get(attribute), alternates)
    if attribute == "unit":
        return unit_agrees(pred, gold, text)
    if attribute == "qualifier":
        return _same_qualifier(pred, gold)
    return pred.get(attribute) == gold.get(attribute)


def align_results(
    predicted: list[dict], gold: list[dict], alternates: dict[str, list[str]], level: str, text: Optional[str] = None
) -> list[tuple[int, int]]:
    """Matched (pred, gold) index pairs of result tuples at a level: ``value``, ``value_metric`` or
    ``full`` (value, metric, dataset, model, baseline, kind, qualifier and unit). One-to-one, maximum
    matching; among matchings of equal size, the one agreeing on most attributes. ``text`` is the
    abstract, for the written precision of numbers (:func:`value_agreement`)."""
    if not predicted or not gold:
        return []
    agree = RESULT_LEVELS[level]
    allowed = np.array([[agree(p, g, alternates, text) for g in gold] for p in predicted], dtype=bool)
    weight = np.array([[sum(attribute_agrees(p, g, a, alternates, text) for a in RESULT_ATTRIBUTES) for g in gold] for p in predicted], dtype=float)
    return assign(allowed, weight)


def match_results(
    predicted: list[dict], gold: list[dict], alternates: dict[str, list[str]], level: str, text: Optional[str] = None
) -> tuple[int, int, int]:
    """(tp, fp, fn) of result tuples at a level (see :func:`align_results`)."""
    tp = len(align_results(predicted, gold, alternates, level, text))
    return tp, len(predicted) - tp, len(gold) - tp
