"""Score a run's predictions against gold: per paper, per field, then aggregated.

Pure functions: :func:`score_paper` maps (prediction, gold) to per-field counts and
:func:`diagnose_paper` adds labels, abstention, grounding and result-attribute agreement;
:func:`score_predictions` pools them. A failed paper (no parsed record: no answer) misses every gold
item in the counts, and its per-paper F1 is 0 on every field, also where gold is empty: abstaining
needs an answer, so a run that never answers scores 0 (not the share of empty gold fields). Failures
are also counted apart in the validity layer.

Per field and paper the counts are (tp, fp, fn). The headline per-field F1 is the mean over papers
of per-paper F1, where an answered paper with nothing in gold and nothing predicted scores 1 (a
correct abstention); micro (pooled) precision, recall and F1 are reported beside it. Single-label fields
(``research_area``, ``training_free``, null being a class of the latter) give tp=1 when right and
fp=fn=1 when wrong, so their F1 is accuracy. ``method_name`` and ``method_full_name`` are strict
(exact after normalization, with gold alternates); ``*_soft`` variants use the phrase rule of
:mod:`match` (rapidfuzz ratio of at least SOFT_THRESHOLD, or one dropped or added token, with the
alternates: "Full Name (ACR)" is soft-correct for "ACR" when the abstract gives the expansion).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Optional

import numpy as np
from pydantic import BaseModel, Field
from scipy import stats

from paperfields.extract.schema import LIST_FIELDS, SCHEMA_VERSION, ContributionType, ResearchArea
from paperfields.scoring.gold import GoldRecord, findable, url_in_text
from paperfields.scoring.match import (
    NAME,
    PHRASE,
    RESULT_ATTRIBUTES,
    align_results,
    align_strings,
    attribute_agrees,
    forms,
    same_url,
    similarity,
)
from paperfields.scoring.normalize import normalize, numbers_in, same_number

SCORER_VERSION = "2.2"  # 2.2: a failed paper (no answer) scores 0 on every field, also where gold is empty
BOOTSTRAP_SEED = 20260
BOOTSTRAP_RESAMPLES = 2000
SOFT_THRESHOLD = 0.85

LIST_RULES = {"tasks": PHRASE, "metrics": PHRASE, "datasets": NAME, "models": NAME, "baselines": NAME}
# Fields in the overall score (macro over fields); results enter at the value+metric level.
HEADLINE_FIELDS = (
    "method_name", "method_full_name", "contribution_types", "research_area", "tasks", "datasets",
    "models", "metrics", "baselines", "results", "code_url", "training_free",
)
REPORTED_FIELDS = HEADLINE_FIELDS + ("method_name_soft", "method_full_name_soft", "results_value", "results_full")
GROUNDED_FIELDS = ("method_name", "method_full_name", "tasks", "datasets", "models", "metrics", "baselines", "results", "code_url")

# Every reported number knows its direction.
HIGHER_IS_BETTER = {
    "f1": True, "micro_precision": True, "micro_recall": True, "micro_f1": True, "accuracy": True, "macro_f1": True,
    "valid_rate": True, "grounded_rate": True, "grounded_correct_rate": True, "invented_rate": False,
    "overall_f1": True, "seconds_per_paper": False, "tokens_per_paper": False, "dollars_total": False,
}


def f1(tp: int, fp: int, fn: int) -> float:
    """F1 = 2tp / (2tp + fp + fn); 1.0 when all three are zero (nothing to find, nothing invented)."""
    return 1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """(precision, recall, F1) from counts; an empty denominator gives 1.0."""
    return (tp / (tp + fp) if tp + fp else 1.0, tp / (tp + fn) if tp + fn else 1.0, f1(tp, fp, fn))


def _single(pred: Any, gold: Any, agree: bool) -> tuple[int, int, int]:
    if pred in (None, "") and gold in (None, ""):
        return 0, 0, 0
    if agree:
        return 1, 0, 0
    return (0, int(pred not in (None, "")), int(gold not in (None, "")))


def _name_agrees(pred: Optional[str], gold: Optional[str], alternates: dict[str, list[str]], soft: bool) -> bool:
    if not pred or not gold:
        return not pred and not gold
    if soft:
        return similarity(pred, forms(gold, alternates), PHRASE) >= SOFT_THRESHOLD
    return normalize(pred) in forms(gold, alternates)


def score_paper(prediction: Optional[dict[str, Any]], gold: GoldRecord) -> dict[str, tuple[int, int, int]]:
    """Per-field (tp, fp, fn) of one prediction (a PaperRecord dict, or None for a failed paper)."""
    p = prediction or {}
    g = gold.record.model_dump(mode="json")
    alt = gold.alternates
    out: dict[str, tuple[int, int, int]] = {}
    for field in ("method_name", "method_full_name"):
        out[field] = _single(p.get(field), g[field], _name_agrees(p.get(field), g[field], alt, soft=False))
        out[f"{field}_soft"] = _single(p.get(field), g[field], _name_agrees(p.get(field), g[field], alt, soft=True))
    out["code_url"] = _single(p.get("code_url"), g["code_url"], same_url(p.get("code_url"), g["code_url"]))
    area = p.get("research_area")
    out["research_area"] = (1, 0, 0) if area == g["research_area"] else (0, int(area is not None), 1)
    if prediction is None:
        out["training_free"] = (0, 0, 1)
    else:
        out["training_free"] = (1, 0, 0) if p.get("training_free") == g["training_free"] else (0, 1, 1)
    pred_types, gold_types = set(p.get("contribution_types") or []), set(g["contribution_types"])
    out["contribution_types"] = (len(pred_types & gold_types), len(pred_types - gold_types), len(gold_types - pred_types))
    for field in LIST_FIELDS:
        pred, gl, pairs = align_strings(p.get(field) or [], g[field], alt, LIST_RULES[field])
        out[field] = (len(pairs), len(pred) - len(pairs), len(gl) - len(pairs))
    results = p.get("results") or []
    for name, level in (("results_value", "value"), ("results", "value_metric"), ("results_full", "full")):
        tp = len(align_results(results, g["results"], alt, level))
        out[name] = (tp, len(results) - tp, len(g["results"]) - tp)
    return out


def _grounded_string(text: str, abstract: str, field: str) -> bool:
    if field == "code_url":
        return url_in_text(text, abstract)
    return findable(text, abstract)


def diagnose_paper(prediction: Optional[dict[str, Any]], gold: GoldRecord, abstract: str) -> dict[str, Any]:
    """Everything about one paper beyond counts (pure):

    - ``labels``: predicted and gold ``research_area``, ``contribution_types``, ``training_free``;
    - ``invented``: per field, 1 when gold is null/empty and the prediction is not (0 otherwise;
      None when gold is not empty, so the rate is over papers whose gold is empty);
    - ``grounding``: per field, [grounded, grounded_and_correct, predicted] item counts, an item
      being grounded when it can be found in the abstract after normalization (results: its value
      is a number written in the abstract, its metric a string in it);
    - ``result_attributes``: per attribute, [agree, pairs] over result pairs matched on value.
    """
    p = prediction or {}
    g = gold.record.model_dump(mode="json")
    alt = gold.alternates
    labels = {
        "research_area": [p.get("research_area"), g["research_area"]],
        "contribution_types": [sorted(set(p.get("contribution_types") or [])), g["contribution_types"]],
        "training_free": [p.get("training_free") if prediction is not None else "(failed)", g["training_free"]],
    }
    invented: dict[str, Optional[int]] = {}
    for field in ("method_name", "method_full_name", "code_url", "training_free") + LIST_FIELDS + ("results", "contribution_types"):
        gold_empty = g[field] in (None, [], "")
        pred_empty = p.get(field) in (None, [], "")
        invented[field] = (int(not pred_empty) if gold_empty else None)
    grounding: dict[str, list[int]] = {}
    for field in ("method_name", "method_full_name", "code_url"):
        value = p.get(field)
        if value:
            ok = _grounded_string(value, abstract, field)
            correct = _name_agrees(value, g[field], alt, soft=False) if field != "code_url" else same_url(value, g[field])
            grounding[field] = [int(ok), int(ok and correct), 1]
        else:
            grounding[field] = [0, 0, 0]
    for field in LIST_FIELDS:
        pred, _, pairs = align_strings(p.get(field) or [], g[field], alt, LIST_RULES[field])
        matched = {i for i, _ in pairs}
        ok = [findable(item, abstract) for item in pred]
        grounding[field] = [sum(ok), sum(1 for i, o in enumerate(ok) if o and i in matched), len(pred)]
    results = p.get("results") or []
    written = numbers_in(abstract)
    pairs = align_results(results, g["results"], alt, "value")
    matched = {i for i, _ in pairs}
    ok = [
        r.get("value") is not None and any(same_number(abs(r["value"]), n) for n in written)
        and (not r.get("metric") or findable(r["metric"], abstract))
        for r in results
    ]
    grounding["results"] = [sum(ok), sum(1 for i, o in enumerate(ok) if o and i in matched), len(results)]
    attributes = {a: [sum(attribute_agrees(results[i], g["results"][j], a, alt) for i, j in pairs), len(pairs)] for a in RESULT_ATTRIBUTES}
    return {"labels": labels, "invented": invented, "grounding": grounding, "result_attributes": attributes}


class FieldAggregate(BaseModel):
    """Aggregate of one field over papers (higher is better for all but ``invented_rate``)."""

    f1: float = Field(description="mean over papers of per-paper F1 (headline)")
    ci95: tuple[float, float] = Field(description="95% percentile bootstrap CI of f1, resampling papers")
    micro_precision: float
    micro_recall: float
    micro_f1: float
    tp: int
    fp: int
    fn: int
    invented_rate: Optional[float] = Field(default=None, description="share of papers with empty gold where something was predicted (lower is better)")


class ClassScores(BaseModel):
    """Per-class precision/recall/F1 of a categorical or multi-label field, and their macro mean."""

    accuracy: Optional[float] = None
    macro_f1: float
    per_class: dict[str, tuple[float, float, float, int]] = Field(description="class -> (precision, recall, F1, gold support)")


class RunScores(BaseModel):
    """``scores.json``: aggregate scores of one run, with the versions that produced them."""

    scores_version: int = 2
    run_id: str
    split: str
    scorer_version: str = SCORER_VERSION
    schema_version: str = SCHEMA_VERSION
    gold_version: str
    papers: int
    papers_done: int = Field(default=0, description="papers with a prediction line; fewer than `papers` means an unfinished run")
    valid_rate: float = Field(description="share of papers with a parsed, schema-valid record")
    failures_by_class: dict[str, int]
    repairs: dict[str, int] = Field(default_factory=dict, description="tolerated deviations in parsed replies (fenced, think, escapes)")
    overall_f1: float = Field(description="macro over HEADLINE_FIELDS of the per-field F1")
    overall_ci95: tuple[float, float] = Field(description="95% percentile bootstrap CI of overall_f1, resampling papers")
    bootstrap: dict[str, Any] = Field(default_factory=lambda: {"seed": BOOTSTRAP_SEED, "resamples": BOOTSTRAP_RESAMPLES, "method": "percentile"})
    fields: dict[str, FieldAggregate]
    classes: dict[str, ClassScores] = Field(default_factory=dict)
    result_attribute_accuracy: dict[str, Optional[float]] = Field(default_factory=dict)
    grounding: dict[str, dict[str, Optional[float]]] = Field(default_factory=dict, description="field -> grounded_rate, grounded_correct_rate over predicted items")
    seconds_per_paper: float = 0.0
    tokens_per_paper: float = 0.0
    dollars_total: Optional[float] = Field(default=None, description="USD for the run; None when the price is unknown")
    backend: str = ""
    strategy: str = ""
    predictions_sha256: Optional[str] = Field(
        default=None, description="sha256 of the predictions.jsonl bytes that were scored; when the file changes, these scores are stale")
    higher_is_better: dict[str, bool] = Field(default_factory=lambda: dict(HIGHER_IS_BETTER))


def paper_f1(counts: tuple[int, int, int], answered: bool = True) -> float:
    """One paper's F1 on one field: :func:`f1` of its counts, or 0.0 when the paper has no answer
    (a failure), even if gold is empty there."""
    return f1(*counts) if answered else 0.0


def paper_overall(counts: dict[str, tuple[int, int, int]], answered: bool = True) -> float:
    """One paper's overall score: mean of its per-field F1 over HEADLINE_FIELDS (0.0 without an answer)."""
    return float(np.mean([paper_f1(counts[f], answered) for f in HEADLINE_FIELDS]))


def bootstrap_ci(values: list[float] | np.ndarray) -> tuple[float, float]:
    """95% percentile bootstrap CI of the mean (Efron & Tibshirani 1993; scipy.stats.bootstrap),
    resampling papers, seeded with BOOTSTRAP_SEED."""
    data = np.asarray(values, dtype=float)
    if len(data) < 2 or np.all(data == data[0]):
        m = float(data.mean()) if len(data) else 0.0
        return (round(m, 4), round(m, 4))
    res = stats.bootstrap((data,), np.mean, n_resamples=BOOTSTRAP_RESAMPLES, confidence_level=0.95,
                          method="percentile", random_state=np.random.default_rng(BOOTSTRAP_SEED))
    return (round(float(res.confidence_interval.low), 4), round(float(res.confidence_interval.high), 4))


def aggregate(per_paper: list[dict[str, tuple[int, int, int]]], diagnostics: Optional[list[dict[str, Any]]] = None,
              answered: Optional[list[bool]] = None) -> dict[str, FieldAggregate]:
    """Pool per-paper counts into per-field aggregates (mean per-paper F1 with CI, micro P/R/F1,
    invented-value rate when diagnostics are given). ``answered[i]`` False marks paper i as a
    failure (per-paper F1 0, see :func:`paper_f1`); all answered by default."""
    answered = answered if answered is not None else [True] * len(per_paper)
    fields: dict[str, FieldAggregate] = {}
    for field in REPORTED_FIELDS:
        counts = np.array([paper[field] for paper in per_paper]).reshape(-1, 3)
        tp, fp, fn = (int(x) for x in counts.sum(axis=0))
        precision, recall, micro = prf(tp, fp, fn)
        per = [paper_f1(tuple(c), ok) for c, ok in zip(counts, answered)]
        invented = None
        if diagnostics is not None and field in diagnostics[0]["invented"]:
            flags = [d["invented"][field] for d in diagnostics if d["invented"][field] is not None]
            invented = round(float(np.mean(flags)), 4) if flags else None
        fields[field] = FieldAggregate(
            f1=round(float(np.mean(per)) if per else 0.0, 4), ci95=bootstrap_ci(per),
            micro_precision=round(precision, 4), micro_recall=round(recall, 4), micro_f1=round(micro, 4),
            tp=tp, fp=fp, fn=fn, invented_rate=invented,
        )
    return fields


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
    per_class = {name(c): (*(round(x, 4) for x in prf(*counts[c])), counts[c][0] + counts[c][2]) for c in classes}
    supported = [v[2] for v in per_class.values() if v[3] > 0]
    accuracy = None if multi else round(float(np.mean([p == g for p, g in pairs])), 4)
    return ClassScores(accuracy=accuracy, macro_f1=round(float(np.mean(supported)) if supported else 0.0, 4), per_class=per_class)


def score_predictions(
    predictions: dict[str, Optional[dict[str, Any]]],
    gold: list[GoldRecord],
    failures: dict[str, str],
    run_id: str,
    split: str,
    gold_version: str,
    abstracts: Optional[dict[str, str]] = None,
    repairs: Optional[dict[str, int]] = None,
) -> tuple[RunScores, list[dict[str, Any]]]:
    """Score predictions ``{paper_id: record-or-None}`` against the gold papers of ``split``
    (``"all"`` for every gold paper given).

    A paper missing from ``predictions`` counts as an empty prediction. ``failures`` maps paper id
    to failure class; ``abstracts`` (paper id -> text) enables grounding. Returns the aggregate and
    one detail row per paper. Raises ValueError if ``split`` has no gold papers.
    """
    papers = [g for g in gold if split == "all" or g.split == split]
    if not papers:
        raise ValueError(f"no gold papers in split '{split}'")
    abstracts = abstracts or {}
    per_paper = [score_paper(predictions.get(g.id), g) for g in papers]
    answered = [predictions.get(g.id) is not None for g in papers]
    diagnostics = [diagnose_paper(predictions.get(g.id), g, abstracts.get(g.id, "")) for g in papers]
    detail = [
        {"paper_id": g.id, "overall": round(paper_overall(c, ok), 4), "answered": ok, "failure": failures.get(g.id),
         "fields": {k: list(v) for k, v in c.items()}, **d}
        for g, c, ok, d in zip(papers, per_paper, answered, diagnostics)
    ]
    fields = aggregate(per_paper, diagnostics, answered)
    valid = sum(1 for g in papers if predictions.get(g.id) is not None)
    ids = {g.id for g in papers}
    grounding: dict[str, dict[str, Optional[float]]] = {}
    if abstracts:
        for field in GROUNDED_FIELDS:
            grounded, correct, total = (sum(d["grounding"][field][k] for d in diagnostics) for k in range(3))
            grounding[field] = {"grounded_rate": round(grounded / total, 4) if total else None,
                                "grounded_correct_rate": round(correct / total, 4) if total else None, "predicted": total}
    attr = {a: [sum(d["result_attributes"][a][k] for d in diagnostics) for k in range(2)] for a in RESULT_ATTRIBUTES}
    scores = RunScores(
        run_id=run_id, split=split, gold_version=gold_version, papers=len(papers),
        valid_rate=round(valid / len(papers), 4),
        failures_by_class=dict(sorted(Counter(f for pid, f in failures.items() if pid in ids).items())),
        repairs=dict(sorted((repairs or {}).items())),
        overall_f1=round(float(np.mean([fields[f].f1 for f in HEADLINE_FIELDS])), 4),
        overall_ci95=bootstrap_ci([paper_overall(c, ok) for c, ok in zip(per_paper, answered)]),
        fields=fields,
        classes={
            "research_area": class_scores([tuple(d["labels"]["research_area"]) for d in diagnostics], [a.value for a in ResearchArea], multi=False),
            "contribution_types": class_scores([tuple(d["labels"]["contribution_types"]) for d in diagnostics], [c.value for c in ContributionType], multi=True),
            "training_free": class_scores([tuple(d["labels"]["training_free"]) for d in diagnostics], [True, False, None], multi=False),
        },
        result_attribute_accuracy={a: (round(k / n, 4) if n else None) for a, (k, n) in attr.items()},
        grounding=grounding,
    )
    return scores, detail


def write_scores(run_dir: Path, scores: RunScores, detail: list[dict[str, Any]]) -> None:
    """Write ``paper_scores.jsonl`` (one row per paper), then ``scores.json`` (aggregate), each
    through a temporary file and a rename, so a crash never leaves a half-written scores file."""
    for name, text in (("paper_scores.jsonl", "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in detail)),
                       ("scores.json", scores.model_dump_json(indent=2) + "\n")):
        tmp = run_dir / (name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(run_dir / name)
