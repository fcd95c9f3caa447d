"""Matching rules, one per field type. Every rule is a pure function of prediction and gold.

Lists are aligned one to one with the Hungarian algorithm (Kuhn 1955; scipy
``linear_sum_assignment``) on a similarity matrix, as in the slot-filling and IE literature
(e.g. SciREX, Jain et al. 2020); a pair counts only at or above the field's threshold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
from rapidfuzz import fuzz
from scipy.optimize import linear_sum_assignment

from paperfields.scoring.normalize import normalize, normalize_url, same_number

_DIGIT_TOKEN = re.compile(r"[a-z0-9.]*\d[a-z0-9.]*")


@dataclass(frozen=True)
class MatchRule:
    """When two strings count as the same item.

    ``threshold``: rapidfuzz ratio / 100 at or above which they match. ``containment``: a phrase also
    matches when the tokens of one are a subset of the other's with at most one token more (one
    modifier dropped: "accuracy" ~ "mean accuracy", "throughput" ~ "inference throughput"). Chosen
    against 170 hand-judged pairs from real runs (gold/AGREEMENT.md): on tasks and metrics it raised
    scorer-human agreement from 105 to 110 of 118, at the price of accepting "success rate" for
    "attack success rate".
    """

    threshold: float
    containment: bool = False


NAME = MatchRule(0.9)  # datasets, models, baselines, result dataset/model/baseline: versions must agree
PHRASE = MatchRule(0.85, containment=True)  # tasks, metrics, result metric: descriptive noun phrases


def forms(gold: str, alternates: dict[str, list[str]]) -> list[str]:
    """Normalized accepted forms of a gold string: itself plus its alternates."""
    keys = {normalize(k): v for k, v in alternates.items()}
    return [normalize(gold)] + [normalize(a) for a in keys.get(normalize(gold), [])]


def similarity(predicted: str, accepted: Sequence[str], rule: MatchRule = NAME) -> float:
    """Similarity in [0, 1] of a prediction to the accepted forms of one gold item.

    1.0 when the normalized strings are equal, or (``rule.containment``) when one's tokens are a
    subset of the other's with at most one more; 0.0 when their tokens containing digits differ
    (so ``GPT-4o`` never matches ``GPT-4`` and ``Qwen2.5-7B`` never ``Qwen2.5-14B``); otherwise the
    rapidfuzz ratio of the normalized strings, best over the accepted forms.
    """
    p = normalize(predicted)
    best = 0.0
    for form in accepted:
        if p == form:
            return 1.0
        if set(_DIGIT_TOKEN.findall(p)) != set(_DIGIT_TOKEN.findall(form)):
            continue
        if rule.containment:
            a, b = set(p.split()), set(form.split())
            short, long_ = (a, b) if len(a) <= len(b) else (b, a)
            if short and short <= long_ and len(long_) - len(short) <= 1:
                return 1.0
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


def same_value(pred: dict, gold: dict) -> bool:
    """A result's value (and upper value, for ranges) agrees within half a unit of gold's last decimal."""
    if pred.get("value") is None or not same_number(abs(pred["value"]), abs(gold["value"])):
        return False
    if gold.get("value_upper") is None:
        return pred.get("value_upper") is None or same_number(pred["value_upper"], gold["value"])
    return pred.get("value_upper") is not None and same_number(pred["value_upper"], gold["value_upper"])


RESULT_LEVELS: dict[str, Callable[[dict, dict, dict], bool]] = {
    "value": lambda p, g, alt: same_value(p, g),
    "value_metric": lambda p, g, alt: same_value(p, g) and same_name(p.get("metric"), g.get("metric"), alt, PHRASE),
    "full": lambda p, g, alt: same_value(p, g)
    and same_name(p.get("metric"), g.get("metric"), alt, PHRASE)
    and all(same_name(p.get(k), g.get(k), alt) for k in ("dataset", "model", "baseline"))
    and p.get("kind") == g.get("kind"),
}


RESULT_ATTRIBUTES = ("metric", "unit", "kind", "qualifier", "dataset", "model", "baseline")


def attribute_agrees(pred: dict, gold: dict, attribute: str, alternates: dict[str, list[str]]) -> bool:
    """One attribute of a matched result pair agrees (names by :func:`same_name`, enums exactly)."""
    if attribute == "metric":
        return same_name(pred.get("metric"), gold.get("metric"), alternates, PHRASE)
    if attribute in ("dataset", "model", "baseline"):
        return same_name(pred.get(attribute), gold.get(attribute), alternates)
    return pred.get(attribute) == gold.get(attribute)


def align_results(predicted: list[dict], gold: list[dict], alternates: dict[str, list[str]], level: str) -> list[tuple[int, int]]:
    """Matched (pred, gold) index pairs of result tuples at a level: ``value``, ``value_metric`` or
    ``full`` (value, metric, dataset, model, baseline and kind). One-to-one, maximum matching; among
    matchings of equal size, the one agreeing on most attributes."""
    if not predicted or not gold:
        return []
    agree = RESULT_LEVELS[level]
    allowed = np.array([[agree(p, g, alternates) for g in gold] for p in predicted], dtype=bool)
    weight = np.array([[sum(attribute_agrees(p, g, a, alternates) for a in RESULT_ATTRIBUTES) for g in gold] for p in predicted], dtype=float)
    return assign(allowed, weight)


def match_results(predicted: list[dict], gold: list[dict], alternates: dict[str, list[str]], level: str) -> tuple[int, int, int]:
    """(tp, fp, fn) of result tuples at a level (see :func:`align_results`)."""
    tp = len(align_results(predicted, gold, alternates, level))
    return tp, len(predicted) - tp, len(gold) - tp
