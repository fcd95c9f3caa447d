"""``rules/baseline``: a deterministic extractor with no model, the floor every model must beat.

Patterns: a coined name introduced by "we propose/introduce/present", its expansion when written as
"Full Name (ACRONYM)", URLs, numbers with units (%, ×, x), "training-free"; a gazetteer of dataset,
model, metric, task and baseline names built from the **dev** split of the gold only (never test);
research area by keyword, in the guidelines' precedence order. Runs in well under a second per paper.
"""

from __future__ import annotations

import re
import time
from functools import lru_cache
from typing import Any, Optional

from paperfields.extract.backends.base import BackendError, Generation, GenerationRequest, Usage, register_provider
from paperfields.extract.schema import PaperRecord
from paperfields.paths import gold_dir
from paperfields.scoring.normalize import strip_markup

_INTRO = re.compile(r"\b(?:we|We|this paper|This paper)\s+(?:propose|introduce|present|develop)s?\s+(?:a\s+|an\s+|the\s+)?(?:new\s+|novel\s+)?(\*{0,2}[A-Z][A-Za-z0-9]*(?:[-+.][A-Za-z0-9]+)*\+*\*{0,2})")
_EXPANSION = re.compile(r"((?:[A-Z][\w-]*\s+){1,8}?(?:[A-Za-z][\w-]*))\s+\(([A-Z][A-Za-z0-9-]*[A-Z0-9][A-Za-z0-9-]*)\)")
_URL = re.compile(r"https?://[^\s)\]}>,;]+")
_NUMBER_UNIT = re.compile(r"(\d+(?:,\d{3})*(?:\.\d+)?)\s*(\\?%|×|\$\\times\$|x\b|-fold)")
_AREAS = [  # guidelines precedence order; first keyword hit wins
    ("diffusion_lms", ("diffusion language", "dllm", "masked diffusion")),
    ("evaluation_benchmarks", ("we introduce a benchmark", "we present a benchmark", "new benchmark", "benchmark for", "we present **", "evaluation framework")),
    ("code_software_engineering", ("code", "program", "software", "repository", "repair")),
    ("agents_tool_use", ("agent", "tool use", "tool-use", "multi-agent")),
    ("alignment_safety", ("safety", "jailbreak", "harmful", "unsafe", "alignment", "refusal")),
    ("interpretability", ("interpretab", "mechanistic", "probing", "steering")),
    ("inference_efficiency", ("latency", "speedup", "kv cache", "kv-cache", "throughput", "inference cost", "decoding")),
    ("retrieval_long_context_knowledge", ("retrieval", "long-context", "long context", "rag", "knowledge")),
    ("rl_post_training", ("reinforcement learning", "rlvr", "grpo", "reward", "fine-tuning", "post-training", "distillation")),
    ("reasoning", ("reasoning", "math", "chain-of-thought")),
    ("architecture_pretraining", ("pretraining", "pre-training", "architecture", "attention", "scaling law", "mixture-of-experts")),
]
_METRIC_WORDS = ("accuracy", "pass rate", "pass@1", "success rate", "speedup", "throughput", "latency", "F1", "win rate", "perplexity")


@lru_cache(maxsize=1)
def dev_gazetteer() -> dict[str, tuple[str, ...]]:
    """Names per list field from the dev split of ``gold/gold.jsonl`` (never the test split)."""
    from paperfields.scoring.gold import load_gold

    path = gold_dir() / "gold.jsonl"
    if not path.is_file():
        raise BackendError(f"rules/baseline builds its gazetteer from {path}, which does not exist")
    names: dict[str, set[str]] = {f: set() for f in ("tasks", "datasets", "models", "metrics", "baselines")}
    for g in load_gold(path):
        if g.split != "dev":
            continue
        for field in names:
            names[field].update(s for s in getattr(g.record, field) if len(s) >= 3)
    names["metrics"].update(_METRIC_WORDS)
    return {f: tuple(sorted(v, key=len, reverse=True)) for f, v in names.items()}


def _found(names: tuple[str, ...], text: str) -> list[str]:
    hits = []
    for name in names:
        if re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text, flags=re.IGNORECASE):
            if not any(name.lower() in h.lower() for h in hits):
                hits.append(name)
    return hits


def extract_record(text: str) -> dict[str, Any]:
    """The rule-based record of one abstract (a PaperRecord dict)."""
    plain = strip_markup(text)
    lower = plain.lower()
    gaz = dev_gazetteer()
    name: Optional[str] = None
    match = _INTRO.search(plain)
    if match:
        candidate = match.group(1).strip("*")
        if any(c.isupper() for c in candidate[1:]) or re.search(r"\d", candidate):
            name = candidate
    full = None
    for exp in _EXPANSION.finditer(plain):
        if name and exp.group(2) == name:
            full = exp.group(1).strip()
        elif not name and match and exp.start() >= match.start():
            name, full = exp.group(2), exp.group(1).strip()
    area = next((a for a, words in _AREAS if any(w in lower for w in words)), "other")
    types = ["benchmark"] if re.search(r"\b(?:benchmark|dataset)\b", lower[match.start():match.end() + 80] if match else "") else ["method"]
    metrics = _found(gaz["metrics"], plain)
    results = []
    for m in _NUMBER_UNIT.finditer(text):
        unit = "percent" if "%" in m.group(2) else "times"
        before = text[max(0, m.start() - 120): m.start()].lower()
        metric = next((x for x in metrics if x.lower() in before), metrics[0] if metrics else "score")
        kind = "reduction" if re.search(r"reduc|lower|fewer|less|cut", before) else "improvement" if re.search(r"improv|outperform|gain|by\s*$|faster|speedup", before) else "absolute"
        qualifier = "up_to" if "up to" in before[-30:] else "average" if "average" in before[-40:] else "exact"
        results.append({"metric": metric, "value": float(m.group(1).replace(",", "")), "unit": unit, "kind": kind, "qualifier": qualifier})
    url = _URL.search(text)
    training_free: Optional[bool] = None
    if re.search(r"training-free|without (?:any )?(?:re)?training|no (?:additional )?training|plug-and-play", lower):
        training_free = True
    elif re.search(r"\b(?:fine-tun|we train|reinforcement learning|rl\b|sft\b|distill)", lower):
        training_free = False
    return PaperRecord.model_validate({
        "method_name": name, "method_full_name": full, "contribution_types": types, "research_area": area,
        "tasks": _found(gaz["tasks"], plain), "datasets": _found(gaz["datasets"], plain), "models": _found(gaz["models"], plain),
        "metrics": metrics, "baselines": [b for b in _found(gaz["baselines"], plain) if b != name], "results": results,
        "code_url": url.group(0).rstrip(".") if url else None, "training_free": training_free,
    }).model_dump(mode="json")


class RulesBackend:
    """Deterministic, model-free extraction from the paper text.

    ``rules/baseline`` runs :func:`extract_record`. ``rules/empty`` answers the schema's default
    record (empty lists, nulls, research_area ``other``) for every paper: the score a model gets by saying nothing, which is above zero
    because an abstention is right on a field whose gold is empty. A model run should beat both.
    """

    MODELS = ("baseline", "empty")

    def __init__(self, model: str) -> None:
        if model not in self.MODELS:
            raise BackendError(f"unknown rules model '{model}'; known: {', '.join(self.MODELS)}")
        self.name = f"rules/{model}"
        self.model = model

    async def generate(self, request: GenerationRequest) -> Generation:
        start = time.perf_counter()
        if request.paper_text is None:
            raise BackendError(f"{self.name} needs the paper text in the request")
        record = PaperRecord().model_dump(mode="json") if self.model == "empty" else extract_record(request.paper_text)
        gen = Generation(record=record, raw_text=None, finish_reason="stop", usage=Usage())
        gen.latency_s = time.perf_counter() - start
        return gen


@register_provider("rules")
def _factory(model: str, **options: Any) -> RulesBackend:
    return RulesBackend(model)
