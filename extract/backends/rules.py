"""``rules/baseline``: a deterministic extractor with no model, the floor every model must beat.

Where the patterns come from. Every pattern was written by reading only the 16 **dev** abstracts
(``gold/corpus.jsonl``) with their gold (``gold/gold.jsonl`` lines whose ``split`` is ``dev``),
the field definitions in ``gold/GUIDELINES.md``, and ordinary English; never a test abstract or test
gold. Each pattern below names what motivated it: dev paper ids (``p…``), "guidelines", or "generic"
(a common English phrasing that no dev paper shows, added so unseen text is not misread). The
gazetteer of dataset, model, metric, task and baseline names is built from the dev gold only
(:func:`dev_gazetteer`), which is why the CLI refuses to run this backend on the dev split.

Patterns, and what motivated each:

- method name ``we propose/introduce/present/develop NAME`` (``_INTRO``): p495b8ac5c3 "we propose
  NormBT", p097de25d15 "we propose NSPI", p59349ff425 "we present CausalGame", p5840fb4073 "we present
  AnyEdit++", pe1ee2bb9ec "we propose DC-Leap", pc74505138d "we propose CSMR".
- full name ``Full Name (ACRONYM)`` (``_EXPANSION``): p814ff3def0 "Adaptive Virtual Sample Policy
  Optimization (AVSPO)", pf9564a42b1 "Self-Aware Scheduling (SAS)", pe43f366303 "REAlignment Reward (REAR)".
- contribution type benchmark, "we present NAME, a benchmark" (``_BENCHMARK``): p59349ff425; the
  unnamed "we introduce a new benchmark" and "testbed"/"evaluation suite": generic. Type dataset,
  "we release/curate … dataset" (``_DATASET``): guidelines; otherwise method.
- URL (``_URL``): p814ff3def0, p708dc2807d (plain), pb17e85082e (markdown ``[here](url)``),
  pe1ee2bb9ec (``<url>``); bare ``name.github.io`` (``_PAGES_URL``): p59349ff425. Trailing
  ``" ' ) ] } > . , ; : *`` and LaTeX ``\\url{…}`` braces are cut: generic.
- numbers with a unit (``_RESULT``): ``%`` p63a4070ad6, ``\\%`` p5e6c9dda93, ``$\\times$``
  pe1ee2bb9ec, "percentage points" p814ff3def0; ``x``, ``-fold``, ``pp``, "percent", "points": guidelines.
  Ranges ``lo–hi`` with the unit after the upper end or on both ends (``58–63%``, ``4–6 percentage
  points``): p814ff3def0; ``∼``/``~`` between two numbers (``1.7×∼2.0×``): guidelines. "from A to B" is
  two results, never a range: pf9564a42b1. A sign written before a number (``+11.78%``: p63a4070ad6,
  ``−3%``: generic) is kept. Numbers are read with ``float`` after dropping thousands commas and
  mapping Unicode minus signs and dashes to ``-``.
- qualifier, from the words right before the number (``_HEDGES``): ``up to`` pe1ee2bb9ec,
  p708dc2807d, p1463ea37b5; ``over`` p495b8ac5c3 ("gains of over 5%"); ``at least``, ``more than``,
  ``exceeding``, ``above`` (over), ``less than``, ``fewer than``, ``under``, ``below``, ``within``
  (under), ``about``, ``around``, ``approximately``, ``roughly``, ``nearly``, ``~`` (about),
  ``on average``, ``an average of`` (average, also "on average" after the number): guidelines' list
  and generic English; no dev paper uses them.
- kind, from the nearest cue word before the number in its clause, else the first after it
  (``_REDUCTION``, ``_IMPROVEMENT``): "reduces" p814ff3def0; "gains" p814ff3def0, p495b8ac5c3,
  p5e6c9dda93 ("accuracy gain"); "outperform" p1463ea37b5, p63a4070ad6; "speedups" pe1ee2bb9ec; "more
  … efficient" p1463ea37b5; "cuts", "drops", "lowers", "decreases", "fewer", "less", "saves", "shorter",
  "cheaper" (reduction), "improves", "raises", "increases", "boosts", "higher", "faster", "better"
  (improvement): generic. A cue in the three words right after the number ("11.03% absolute
  improvement", p708dc2807d) beats one earlier in the sentence; a cue after "and"/"while" belongs to the
  next claim (generic); a negative number with no cue is a reduction (generic). "from A to B"
  and "to B" are absolute (pf9564a42b1), as is a number with no cue ("achieves 50.37% ASR",
  p63a4070ad6); a number with no cue of its own after another one in the same sentence takes that
  one's kind and metric ("up to 53.19× on MBPP …, and up to 105.02×", pe1ee2bb9ec).
- result metric, in order: a known metric name right after the number ("25.99% accuracy gain"
  p5e6c9dda93, "50.37% ASR" p63a4070ad6); "N% improvement in METRIC" p708dc2807d; "reduces/improves
  METRIC by/from N" p814ff3def0 ("reduces advantage collapse by"), pf9564a42b1 ("improves puzzle
  accuracy from"); "METRIC is/reaches/drops (by/from) N" and "N% of/fewer METRIC": generic, as
  written ("Accuracy drops by 9%" gives "Accuracy"); the nearest known metric name before the number
  in its sentence (pf9564a42b1, p814ff3def0); the previous number's metric in the same sentence (pe1ee2bb9ec);
  ``speedup`` for a ``×`` number (pe1ee2bb9ec); else ``score`` (p1463ea37b5's gold).
- training_free true: "training-free" pe1ee2bb9ec, pe43f366303; "without (re)training", "no
  (additional) training", "plug-and-play": generic. False: "fine-tuning" p1463ea37b5, pf9564a42b1,
  p5e6c9dda93; "train with SFT" p26f8d3af4a; "reinforcement learning" p814ff3def0; "distill": guidelines.
- research area (``_AREAS``): keywords match whole words only, case-insensitively, after removing URLs,
  "to the best of our knowledge" and "code is available …" sentences (generic). Diffusion keywords
  win outright and a benchmark contribution is ``evaluation_benchmarks`` (the guidelines put both
  first); otherwise the first area in the guidelines' order with at least two keyword hits (a single
  hit is a mention in passing: "code generation" in p5840fb4073), else the first with one hit, else
  ``other``. Keywords per area, and their sources:

  - diffusion_lms: "diffusion language model", "dLLM", "masked diffusion" (pe1ee2bb9ec, pf9564a42b1).
  - code_software_engineering: "code generation", "program synthesis/repair", "software engineering",
    "code LLM", "repository": guidelines (no dev paper is in this area). Bare "code" is not a keyword.
  - agents_tool_use: "agent(s)", "agentic", "multi-agent", "tool use/calling": guidelines (p59349ff425
    has agents but is a benchmark).
  - alignment_safety: "alignment", "aligning", "align", "safety", "jailbreak(ing)", "red-teaming"
    (pb17e85082e, pe43f366303, p63a4070ad6); "harmful", "refusal", "privacy", "watermark": guidelines.
  - interpretability: "mechanistic" (p708dc2807d); "interpretability", "probing", "circuits",
    "steering": guidelines.
  - inference_efficiency: "latency" (p26f8d3af4a); "speedup", "throughput", "KV cache", "quantization",
    "early exit", "inference cost", "token budget": guidelines.
  - retrieval_long_context_knowledge: "retrieval", "RAG", "retriever" (p5e6c9dda93); "knowledge",
    "knowledge editing" (p5840fb4073); "long context", "factuality": guidelines.
  - rl_post_training: "reinforcement learning", "RLVR", "GRPO", "reward(s)" (p814ff3def0); "RLHF",
    "reward model" (p495b8ac5c3); "fine-tuning", "SFT" (p1463ea37b5); "fine-tune(d)": generic; "RL" (p26f8d3af4a);
    "DPO", "preference optimization" (p5e6c9dda93); "post-training", "distillation": guidelines.
  - reasoning: "reasoning", "chain-of-thought", "CoT" (p847589794e, pc74505138d); "mathematical",
    "proving", "proof" (p097de25d15); "math", "test-time scaling": guidelines.
  - architecture_pretraining: "pretraining", "architecture", "attention", "scaling law",
    "mixture-of-experts", "MoE", "transformer": guidelines (no dev paper is in this area).

Runs in well under a second per paper.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Optional

from paperfields.core.normalize import strip_markup
from paperfields.core.paths import gold_dir
from paperfields.core.runlog import Generation, Usage
from paperfields.core.schema import LIST_FIELDS, PaperRecord, parse_number
from paperfields.extract.backends.base import BackendError, GenerationRequest, register_provider

_INTRO = re.compile(
    r"\b(?:we|We|this paper|This paper)\s+(?:propose|introduce|present|develop)s?\s+(?:a\s+|an\s+|the\s+)?(?:new\s+|"
    r"novel\s+)?(\*{0,2}[A-Z][A-Za-z0-9]*(?:[-+.][A-Za-z0-9]+)*\+*\*{0,2})"
)
_EXPANSION = re.compile(r"((?:[A-Z][\w-]*\s+){1,8}?(?:[A-Za-z][\w-]*))\s+\(([A-Z][A-Za-z0-9-]*[A-Z0-9][A-Za-z0-9-]*)\)")
_BENCHMARK = re.compile(
    r"\b(?:we|this (?:paper|work))\s+(?:introduce|present|propose|release|build|construct|"
    r"develop)s?\b[^.]{0,80}?\b(?:benchmark|testbed|evaluation suite)\b",
    re.I,
)
_DATASET = re.compile(
    r"\b(?:we|this (?:paper|work))\s+(?:introduce|present|release|build|construct|curate)s?\b[^.]{0,80}?\bdataset\b",
    re.I,
)

# A URL ends before whitespace, quotes, brackets and angle brackets; trailing sentence punctuation is cut after.
_URL = re.compile(r"https?://[^\s\"'<>()\[\]{}]+")
_PAGES_URL = re.compile(r"(?<![\w./-])[\w-]+\.github\.io(?:/[^\s\"'<>()\[\]{}]*)?")
_URL_TAIL = ".,;:!?*`'\")]}>"

_UNSIGNED = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_NUM = r"[-+]?" + _UNSIGNED
_UNIT = r"%|×|x(?![\w])|-?fold\b|\s*percentage\s+points?\b|\s*pp\b|\s*percent\b|\s*points?\b"
# lo [unit] (- | ~) hi unit, or a single number and unit; the
# lookbehind keeps "2.5" in "Qwen2.5-7B" and "@1" digits out.
_RESULT = re.compile(
    rf"(?<![\w.@])(?P<lo>{_NUM})(?:\s*(?P<lo_unit>{_UNIT}))?(?:\s*[-~∼]\s*(?P<hi>{_UNSIGNED}))?\s*(?P<unit>{_UNIT})"
)

_HEDGES = (  # (qualifier, words that end right before the number, allowing "a/an/by/of" in between)
    ("up_to", r"up to"),
    ("over", r"at least|more than|greater than|exceeding|above|over"),
    ("under", r"less than|fewer than|under|below|within"),
    ("average", r"on average|an average of|average of|averaging"),
    ("about", r"about|around|approximately|roughly|nearly|almost|~|≈|∼"),
)
_HEDGE_TAIL = [(q, re.compile(rf"(?:^|(?<=[\s(]))(?:{w})\s*(?:(?:an?|by|of)\s+)?$", re.I)) for q, w in _HEDGES]
_REDUCTION = (
    r"reduc\w*|cut(?:s|ting)?|drop(?:s|ped|ping)?|lower(?:s|ed|ing)?|decreas\w*|fewer|less|sav(?:e|es|ed|ing|ings)|"
    r"shrink\w*|declin\w*|smaller|shorten\w*|shorter|cheaper"
)
_IMPROVEMENT = (
    r"improv\w*|rais(?:e|es|ed|ing)|outperform\w*|gain(?:s|ed|ing)?|boost\w*|increas\w*|higher|faster|speed-?ups?|"
    r"better|more|surpass\w*|exceed\w*|enhanc\w*|accelerat\w*"
)
_CUE = re.compile(rf"\b(?:(?P<red>{_REDUCTION})|(?P<imp>{_IMPROVEMENT}))\b", re.I)
_METRIC_VERB = re.compile(
    r"\b(?:reduc|improv|increas|boost|rais|lower|decreas|cut)\w*\s+(?:the\s+|its\s+|their\s+)?(?P<m>[\w@-]+(?:\s+[\w@-]+){0,3}?)\s+(?:by|from)\s+$",
    re.I,
)
_METRIC_AFTER_GAIN = re.compile(
    r"^\s*(?:absolute\s+|relative\s+)?(?:improvement|gain|increase|reduction|drop|decrease)s?\s+(?:in|on)\s+(?P<m>[\w@-]+(?:\s+[\w@-]+){0,2})",
    re.I,
)
_METRIC_AFTER_OF = re.compile(
    r"^\s*(?:of|fewer|less|more|lower|higher)\s+(?:the\s+|its\s+|their\s+)?(?P<m>[\w@-]+(?:\s+[\w@-]+){0,2})", re.I
)
_METRIC_SUBJECT = re.compile(
    r"(?P<m>(?:[\w@-]+\s+){0,3}[\w@-]+)\s+(?:is|are|was|were|reaches|reached|stays|remains|rises|rose|drops|dropped|falls|fell|grows|changes|improves|increases|decreases)\s+(?:(?:by|from|to|at)\s+)?$",
    re.I,
)
_NOT_METRIC = {
    "on",
    "in",
    "for",
    "of",
    "across",
    "with",
    "over",
    "by",
    "from",
    "and",
    "to",
    "at",
    "while",
    "compared",
    "relative",
    "than",
    "is",
    "are",
    "was",
    "were",
    "its",
    "the",
    "our",
    "their",
    "this",
    "that",
    "a",
    "an",
    "we",
    "it",
    "which",
    "who",
}

_AREA_NOISE = re.compile(
    r"https?://\S+|\S+\.github\.io\S*|to the best of our knowledge|"
    r"\b(?:our\s+|the\s+)?code\b[^.]{0,40}?\b(?:is|are|will be)\s+(?:publicly\s+|freely\s+)?(?:available|"
    r"released)[^.]*|\bcode\b[^.]{0,20}\bcan be found[^.]*",
    re.I,
)
_AREAS = [  # the guidelines' order; each keyword is a whole word or phrase (regex), case-insensitive
    ("diffusion_lms", r"diffusion language models?|dllms?|masked diffusion"),
    (
        "code_software_engineering",
        r"code generation|program synthesis|program repair|software engineering|code llms?|repositor(?:y|ies)",
    ),
    ("agents_tool_use", r"agents?|agentic|multi-agent|tool[- ]use|tool calling"),
    (
        "alignment_safety",
        r"alignment|aligning|align|safety|jailbreak(?:s|ing)?|"
        r"red[- ]teaming|harmful|refusals?|privacy|watermark(?:s|ing)?",
    ),
    ("interpretability", r"interpretability|interpretable|mechanistic|probing|circuits?|steering"),
    (
        "inference_efficiency",
        r"latency|speed-?ups?|throughput|kv[- ]cache|quantization|early exit|inference cost|token budgets?",
    ),
    (
        "retrieval_long_context_knowledge",
        r"retrieval|retrievers?|rag|knowledge(?: editing)?|long[- ]context|factuality",
    ),
    (
        "rl_post_training",
        r"reinforcement learning|rl|rlhf|rlvr|grpo|ppo|dpo|rewards?|reward models?|fine-tun(?:e|es|ed|ing)|sft|"
        r"post-training|preference optimization|distillation",
    ),
    ("reasoning", r"reasoning|chain-of-thought|cot|mathematical|math|proving|proofs?|test-time scaling"),
    (
        "architecture_pretraining",
        r"pre-?training|architectures?|attention|scaling laws?|mixture-of-experts|moe|transformers?",
    ),
]
_AREA_PATTERNS = [(area, re.compile(rf"(?<![\w-])(?:{words})(?![\w-])", re.I)) for area, words in _AREAS]
# Metric names every abstract may use: the guidelines' metric examples (accuracy, pass rate, attack success
# rate, pass@1, latency, throughput, speedup) and generic ML usage (success rate, F1, win rate, perplexity).
_METRIC_WORDS = (
    "accuracy",
    "pass rate",
    "pass@1",
    "success rate",
    "attack success rate",
    "speedup",
    "throughput",
    "latency",
    "F1",
    "win rate",
    "perplexity",
)


@lru_cache(maxsize=1)
def dev_gazetteer() -> dict[str, tuple[str, ...]]:
    """Names per list field (``tasks``, ``datasets``, ``models``, ``metrics``, ``baselines``) from
    the dev split of ``gold/gold.jsonl`` only, longest first; names shorter than 3 characters are
    dropped. Raises BackendError if the gold file is missing."""
    from paperfields.core.gold import load_gold

    path = gold_dir() / "gold.jsonl"
    if not path.is_file():
        raise BackendError(f"rules/baseline builds its gazetteer from {path}, which does not exist")
    names: dict[str, set[str]] = {f: set() for f in LIST_FIELDS}  # a gazetteer per list of names
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


def _unit(raw: str) -> str:
    raw = raw.strip().lower()
    if raw == "%" or raw == "percent":
        return "percent"
    if raw in ("×", "x") or raw.endswith("fold"):
        return "times"
    if raw == "pp" or raw.startswith("percentage"):
        return "percentage_points"
    return "points"


def _qualifier(before: str, after: str) -> str:
    for qualifier, tail in _HEDGE_TAIL:
        if tail.search(before):
            return qualifier
    if re.search(r"\bon average\b", before, re.I) or re.match(r"^[^,;:]{0,40}?\bon average\b", after, re.I):
        return "average"
    return "exact"


def _kind(before: str, after: str, value: float) -> Optional[str]:
    """The result kind from the nearest cue, None when the clause has no cue."""
    for _qualifier, tail in _HEDGE_TAIL:  # "less than 5%" is a bound, not a cut; "up to" is no "to"
        before = tail.sub("", before)
    if re.search(r"\b(?:from|to)\s*$", before, re.I):
        return "absolute"
    after = re.split(r"[,;:()]|\s(?:and|while|but|whereas)\s", after, maxsplit=1)[0]
    close = _CUE.search(" ".join(after.split()[:3]))  # "11% absolute improvement" beats a cue far before
    cues = list(_CUE.finditer(before))
    cue = close or (cues[-1] if cues else None) or _CUE.search(after)
    if cue:
        return "reduction" if cue.group("red") else "improvement"
    if value < 0:
        return "reduction"
    return None


def _metric_phrase(words: str) -> Optional[str]:
    kept = []
    for word in words.split():
        if word.lower() in _NOT_METRIC:
            break
        kept.append(word)
    return " ".join(kept) or None


def _known_metric(names: tuple[str, ...], text: str, last: bool) -> Optional[str]:
    best: Optional[tuple[int, int, str]] = None
    for name in names:
        for m in re.finditer(r"(?<![\w-])" + re.escape(name) + r"(?:e?s)?(?![\w-])", text, flags=re.IGNORECASE):
            key = (m.start() if last else -m.start(), len(name), name)
            if best is None or key > best:
                best = key
    return best[2] if best else None


def _metric(before: str, after: str, names: tuple[str, ...]) -> Optional[str]:
    head = re.match(r"^\s*(\S+(?:\s+\S+)?)", after)
    if head:
        right_after = _known_metric(names, head.group(1), last=False)
        if right_after and re.match(r"^\s*" + re.escape(right_after), after, re.I):
            return right_after
    gain = _METRIC_AFTER_GAIN.match(after)
    if gain and _metric_phrase(gain.group("m")):
        return _metric_phrase(gain.group("m"))
    hedges = "|".join(w for _, w in _HEDGES)
    bare = re.sub(rf"(?:{hedges})\s*(?:(?:an?|of)\s+)?$", "", before, flags=re.I)
    verb = _METRIC_VERB.search(bare)
    if verb and _metric_phrase(verb.group("m")):
        return _metric_phrase(verb.group("m"))
    subject = _METRIC_SUBJECT.search(bare)
    if subject and _subject_phrase(subject.group("m")):
        return _subject_phrase(subject.group("m"))
    of = _METRIC_AFTER_OF.match(after)
    if of and _metric_phrase(of.group("m")):
        return _metric_phrase(of.group("m"))
    return _known_metric(names, before, last=True)


def _subject_phrase(words: str) -> Optional[str]:
    kept: list[str] = []
    for word in reversed(words.split()):
        if word.lower() in _NOT_METRIC:
            break
        kept.insert(0, word)
    return " ".join(kept) or None


def extract_results(plain: str, metric_names: tuple[str, ...]) -> list[dict[str, Any]]:
    """Result tuples (Result dicts) for every number with a unit in ``plain`` (text already through
    ``strip_markup``). A range gives one tuple with ``value`` the lower and ``value_upper`` the upper
    end; ``metric_names`` are the names to look for around each number."""
    results: list[dict[str, Any]] = []
    matches = list(_RESULT.finditer(plain))
    prev_end, prev_sentence = 0, -1
    for i, m in enumerate(matches):
        sentence = max((s.end() for s in re.finditer(r"[.!?;]\s", plain[: m.start()])), default=0)
        start = max(sentence, prev_end)
        before = plain[start : m.start()]
        stop = matches[i + 1].start() if i + 1 < len(matches) else len(plain)
        after = re.split(r"(?<=[.!?;])\s", plain[m.end() : stop], maxsplit=1)[0][:80]
        same_sentence = prev_sentence == sentence and results
        value = parse_number(m.group("lo"))
        upper = parse_number(m.group("hi")) if m.group("hi") else None
        values = [(value, upper)]
        if upper is not None and upper <= value:  # "80%-5%" is two numbers, not a range
            values = [(value, None), (upper, None)]
        kind = _kind(before, after, value)
        metric = _metric(before, after, metric_names)
        if (
            metric is None and same_sentence
        ):  # "up to 53.19× on MBPP, and up to 105.02×"; "50.37% ASR ..., with +11.78% gains"
            metric = results[-1]["metric"]
            kind = kind or results[-1]["kind"]
        kind = kind or "absolute"
        if metric is None:
            metric = "speedup" if _unit(m.group("unit")) == "times" and kind == "improvement" else "score"
        for lo, hi in values:
            results.append(
                {
                    "metric": metric,
                    "value": lo,
                    "value_upper": hi,
                    "unit": _unit(m.group("unit")),
                    "kind": kind,
                    "qualifier": _qualifier(before, after),
                }
            )
        prev_end, prev_sentence = m.end(), sentence
    return results


def find_code_url(text: str) -> Optional[str]:
    """The first URL of ``text`` (``http(s)://…``, else a bare ``name.github.io``), without
    trailing punctuation, quotes or closing brackets; None when there is none."""
    text = text.replace("\\_", "_").replace("\\#", "#").replace("\\%", "%").replace("\\&", "&")
    found = _URL.search(text) or _PAGES_URL.search(text)
    if not found:
        return None
    url = found.group(0).rstrip(_URL_TAIL)
    return url or None


def research_area(plain: str, benchmark: bool) -> str:
    """One research area for ``plain`` text (see the module docstring for the rule and keywords)."""
    text = _AREA_NOISE.sub(" ", plain)
    hits = {area: len(pattern.findall(text)) for area, pattern in _AREA_PATTERNS}
    if hits["diffusion_lms"]:
        return "diffusion_lms"
    if benchmark:
        return "evaluation_benchmarks"
    for least in (2, 1):
        for area, _ in _AREAS:
            if hits[area] >= least:
                return area
    return "other"


def baseline_record(text: str) -> dict[str, Any]:
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
    types = []
    if _BENCHMARK.search(plain):
        types.append("benchmark")
    if _DATASET.search(plain):
        types.append("dataset")
    types = types or ["method"]
    metrics = _found(gaz["metrics"], plain)
    training_free: Optional[bool] = None
    if re.search(r"training-free|without (?:any )?(?:re)?training|no (?:additional )?training|plug-and-play", lower):
        training_free = True
    elif re.search(r"\b(?:fine-tun|we train|train with|reinforcement learning|rl\b|sft\b|distill)", lower):
        training_free = False
    return PaperRecord.model_validate(
        {
            "method_name": name,
            "method_full_name": full,
            "contribution_types": types,
            "research_area": research_area(plain, "benchmark" in types),
            "tasks": _found(gaz["tasks"], plain),
            "datasets": _found(gaz["datasets"], plain),
            "models": _found(gaz["models"], plain),
            "metrics": metrics,
            "baselines": [b for b in _found(gaz["baselines"], plain) if b != name],
            "results": extract_results(plain, gaz["metrics"]),
            "code_url": find_code_url(text),
            "training_free": training_free,
        }
    ).model_dump(mode="json")


class RulesBackend:
    """Deterministic, model-free extraction from the paper text.

    ``rules/baseline`` runs :func:`baseline_record`. ``rules/empty`` answers the schema's default
    record (empty lists, nulls, research_area ``other``) for every paper: the score a model gets by saying nothing,
    which is above zero because an abstention is right on a field whose gold is empty. A model run should beat both.
    """

    MODELS = ("baseline", "empty")

    def __init__(self, model: str) -> None:
        if model not in self.MODELS:
            raise BackendError(f"unknown rules model '{model}'; known: {', '.join(self.MODELS)}")
        self.name = f"rules/{model}"
        self.model = model

    async def generate(self, request: GenerationRequest) -> Generation:
        if request.paper_text is None:
            raise BackendError(f"{self.name} needs the paper text in the request")
        record = PaperRecord().model_dump(mode="json") if self.model == "empty" else baseline_record(request.paper_text)
        return Generation(
            record=record, raw_text=None, finish_reason="stop", usage=Usage(), attempts=0
        )  # no model was asked


@register_provider(
    "rules", about="model-free references: baseline (rules and a dev gazetteer), empty (the default record)"
)  # no options: get_backend refuses any (--base-url, --threads, ...) before this runs
def _factory(model: str) -> RulesBackend:
    return RulesBackend(model)
