"""Matching rules, by the name each field's facts give (``MATCH_RULES``). Every rule is a pure function of prediction,
gold and the abstract, and symmetric: swapping the two swaps precision and recall (gold ``alternates``,
written by hand for gold strings, are the one exception).

Lists are aligned one to one with the Hungarian algorithm (Kuhn 1955; scipy
``linear_sum_assignment``) on a similarity matrix, as in the slot-filling and IE literature
(e.g. SciREX, Jain et al. 2020); a pair counts only at or above the field's threshold.

Strings are compared by their :func:`~paperfields.core.normalize.normalize` key (markup, invisible
characters, Greek letters, case, hyphens, glued versions), after the field's reduction (generic head
words, restricting phrases, abbreviations: see :class:`MatchRule`). Two guards hold before any
similarity: the digit sequences must be the same (``Qwen3-4B`` is not ``Qwen3-30B-A3B``, ``AIME24``
not ``AIME25``) and so must the symbol marks (``AnyEdit++`` is not ``AnyEdit``). Numbers agree by
:func:`~paperfields.core.normalize.numbers_agree`, with the precision they are written with in
the abstract when it is given.

The rules were chosen against two sets of pairs judged by hand (``gold/scorer_judgments.jsonl``,
``gold/scorer_validation_judgments.jsonl``; see :mod:`paperfields.scoring.validity`), each mechanism
kept only where it fixed a kind of disagreement on both without adding a wrong "same".
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import lru_cache, wraps
from typing import Any, Optional

import numpy as np
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from paperfields.core.fields import record_fields
from paperfields.core.normalize import normalize, normalize_url, number_precision, numbers_agree, strip_markup
from paperfields.core.schema import PaperRecord


def _same_objects(size: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Keep a pure function's last ``size`` results by the identity of its arguments. The scorer asks
    about the same lists several times per paper (a field's score, its levels, its grounding) and
    judging every pair again took most of its time; values equal by content but not the same objects
    are simply judged again. An entry holds its arguments, so their ids cannot be reused while it
    lives; callers must not mutate a list between two calls (the scorer never does). The memo is
    emptied when full (thread-safe under the GIL: a race only costs a miss)."""

    def wrap(function: Callable[..., Any]) -> Callable[..., Any]:
        entries: dict[tuple[int, ...], tuple[tuple[Any, ...], Any]] = {}

        @wraps(function)
        def cached(*args: Any) -> Any:
            key = tuple(map(id, args))
            hit = entries.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[0], args)):
                return hit[1]
            value = function(*args)
            if len(entries) >= size:
                entries.clear()
            entries[key] = (args, value)
            return value

        return cached

    return wrap


# A version: its digits with the letters glued after them ("4o" is not "4", "7b" not "7"); a lone
# "x" after a number is a multiplication sign, not part of a version ("2x speedup").
_DIGITS = re.compile(r"\d+(?:\.\d+)*(?:(?!x(?![a-z]))[a-z]+(?![\d.]))?")
# A year written after a name, long or short: "MATH 2024" (glued to "math2024" by normalize), "MATH24",
# "WMT'23", "WMT '23". Both read as the two last digits, so the short and the long form are one name
# while two different years stay apart (the digit guard then compares "24" with "23"). Only after a
# letter or an apostrophe, and never inside a longer number, so "2048 tokens" keeps its 2048.
_YEAR = re.compile(r"(?<=[^\W\d_])(?:'|(?:19|20)(?=\d\d(?![\d.])))(\d\d)(?![\d.])")
_MARKS = re.compile(r"\++|#")
_ENDS_IN_LETTER = re.compile(r"[^\W\d_]$")

# Prepositions that attach a setting to a generic head word ("nanoGPT baseline on pre-training",
# "verifiable programming tasks under synthetic noise") or, on a metric, restrict where it is
# measured ("EM on generation"). "of", "in", "with", "per", "at" are left out: they carry the
# argument or a component ("reduction in latency", "MoE with EP", "tokens per second", "recall at 10").
RESTRICTING_PREPOSITIONS = frozenset({"on", "for", "under", "after", "across", "over"})
# Quantifying adjectives that wrap a head word without narrowing it: "core X tasks", "diverse X tasks".
GENERIC_QUANTIFIERS = frozenset({"core", "diverse", "various", "several", "multiple", "many", "different"})
# Metric abbreviations common across ML abstracts (a paper's own acronyms come from the abstract
# instead, see :func:`abstract_aliases`). A key is a whole word after normalization ("Acc." -> "acc").
METRIC_ABBREVIATIONS = (("acc", "accuracy"), ("em", "exact match"), ("ppl", "perplexity"))
# The same for task words: "math" is written for "mathematics" ("symbolic math").
TASK_ABBREVIATIONS = (("math", "mathematics"),)
# Words a named comparator is written with that do not change which method it is (gold/GUIDELINES.md,
# ruling 24: `GRPO` from "vanilla GRPO", `SFT` from "standalone SFT"); dropped before a baseline's name.
# "pure" is not among them: `pure RL` is a named comparator of its own.
COMPARATOR_MODIFIERS = frozenset({"vanilla", "standard", "standalone", "original", "plain", "naive", "conventional"})
# Words that make a variant of one method when written after its name: a size or edition ("FooNet-L",
# "FooNet Large", "FooNet-Lite"), and the generic words a name may carry ("CodeChemist framework").
# Any other word added to a name names something else ("X-Flow" is not "Flow", "DC-Prompt" not
# "Prompt", "Multi-Head LatentMoE" not "Multi-Head"): see ``MatchRule.added``.
VARIANT_MARKS = frozenset(
    {
        "s",
        "m",
        "l",
        "xs",
        "xl",
        "xxl",
        "base",
        "small",
        "medium",
        "large",
        "tiny",
        "mini",
        "nano",
        "lite",
        "light",
        "plus",
        "pro",
        "max",
        "ultra",
        "full",
    }
)
# Stray words a list item may keep from the sentence it was cut from ("And GridWorld", "e.g. GSM8K", "both
# accuracy"): dropped at either end before matching, never inside a name ("Chain of Thought" keeps its "of").
STRAY_WORDS = frozenset(
    {"and", "or", "also", "both", "plus", "e.g", "eg", "i.e", "ie", "including", "namely", "a", "an"}
)
# Prepositions that attach a setting to a name ("GridWorld across three seeds", "HumanEval on Python"):
# the phrase they open is dropped from a dataset, model or baseline. "for", "of", "with" and "in" are not
# among them: they are inside names ("Attention Influence for Reasoning", "MoE with EP").
NAME_SETTINGS = frozenset({"on", "across", "under", "over", "after"})
# Modifiers that aggregate or scope a measure or task without naming another one: "average accuracy" is
# the accuracy the abstract reports, averaged (gold/GUIDELINES.md, ruling 34). Any other modifier may name
# another quantity ("global accuracy" beside "mean accuracy", "attack success rate"): see ``MatchRule.modifiers``.
NEUTRAL_MODIFIERS = frozenset(
    {
        "average",
        "averaged",
        "mean",
        "overall",
        "total",
        "peak",
        "final",
        "max",
        "maximum",
        "min",
        "minimum",
        "median",
        "cumulative",
        "aggregate",
        "absolute",
        "relative",
        "end to end",
        "wall clock",
    }
)
# Head words that state a change of a measure, not another measure ("accuracy improvement" is accuracy,
# "TTFT speedup" the change of TTFT): a lone metric word may take one of them after it.
CHANGE_HEADS = frozenset(
    {
        "improvement",
        "improvements",
        "gain",
        "gains",
        "reduction",
        "reductions",
        "increase",
        "increases",
        "decrease",
        "decreases",
        "decay",
        "drop",
        "drops",
        "degradation",
        "change",
        "changes",
        "speedup",
        "boost",
    }
)
# Head words that state a measure as a rate of what it counts (scorer 3.5): "over-refusal rates" is the
# over-refusal the abstract measures, as "attack success rate" is attack success.
MEASURE_FORM_HEADS = frozenset({"rate", "rates"})
# Head words that wrap a task without naming another one ("mathematical reasoning problems").
TASK_WRAPPERS = frozenset(
    {"task", "tasks", "problem", "problems", "benchmark", "benchmarks", "workload", "workloads", "setting", "settings"}
)
# A metric the sentence does not name (gold/GUIDELINES.md, ruling 10 writes `score`) and the vague words the
# metrics rule keeps out of the list ("performance", "effectiveness", "quality"): one placeholder, the same item.
PLACEHOLDER_METRICS = frozenset({"score", "scores", "performance", "effectiveness", "quality"})
# Head words that name one activity at the generic level the field writes it (scorer 3.7): "ToT-style inference"
# and "ToT-style reasoning" are the one tree search, "preference optimization" and "preference alignment" the one
# fitting of a model to preferences. Two task phrases the same but for one of these heads are one task only where
# the abstract writes both (see ``MatchRule.activities``); any other head is another activity ("agentic testing" is
# not "agentic coding", "factual learning" not "factual recall").
ACTIVITY_SYNONYMS = (frozenset({"reasoning", "inference"}), frozenset({"alignment", "optimization"}))
# Endings of a leading compound that says how a task is approached ("LLM-based", "retrieval-augmented").
APPROACH_SUFFIXES = ("based", "driven", "powered", "augmented", "assisted")
GENERIC_NAME_WORDS = frozenset(
    {
        "method",
        "framework",
        "approach",
        "algorithm",
        "model",
        "system",
        "pipeline",
        "architecture",
        "agent",
        "technique",
        "strategy",
        "benchmark",
        "dataset",
    }
)


@dataclass(frozen=True)
class MatchRule:
    """When two strings count as the same item.

    ``threshold``: rapidfuzz ratio / 100 at or above which they match. ``containment``: a phrase also
    matches when the tokens of one are a subset of the other's with at most one word more (one
    modifier dropped: "accuracy" ~ "mean accuracy", "throughput" ~ "inference throughput"), at the
    price of accepting "success rate" for "attack success rate". Without ``containment`` the
    opposite holds: a name with a token more or less is another name (``GPT-4o mini`` is not
    ``GPT-4o``, ``MMLU Pro`` not ``MMLU``), however high the ratio.

    Before comparing, both sides are reduced alike: ``heads`` are generic head words of the field,
    dropped at the end of a phrase or before a restricting preposition, with what follows and with
    leading generic quantifiers ("GRPO baseline" -> "GRPO", "core threat-investigation tasks" ->
    "threat-investigation", "nanoGPT baseline on pre-training" -> "nanoGPT"); ``restrictions`` are
    prepositions opening a trailing phrase that is dropped ("EM on generation" -> "EM"; never on
    tasks, where "code generation for PLs" names a narrower task); ``abbreviations`` are (word,
    expansion) pairs ("Acc." -> "accuracy").

    ``compounds``: a hyphenated compound is one word for containment ("speedup" ~ "wall-clock
    speedup"); otherwise each token counts. ``contrast``: one leading modifier is not dropped when
    the abstract writes both phrases, the broader also on its own ("code generation" vs "verified
    code generation" in a paper that contrasts the two). ``word_forms``: containment also on Snowball
    stems ("generate code" ~ "code generation"), where the shorter must keep two words to take one
    more ("mathematics" is not "mathematical reasoning").

    ``added``: when set (the soft score of a coined name), containment takes the one word more only
    when it is written after the whole shorter name and is one of these words (a variant mark or a
    generic word: ``FooNet`` ~ ``FooNet-L``, ``CodeChemist`` ~ ``CodeChemist framework``) or another
    accepted form of the gold name (its acronym: "Advantage Collapse Rate (ACR)" ~ "advantage collapse
    rate"); any other added word, or one written before the name, makes another name and the pair is
    different whatever the ratio (``Flow`` vs ``X-Flow``, ``Prompt`` vs ``DC-Prompt``, ``Multi-Head``
    vs ``Multi-Head LatentMoE``). A name coined by the paper is one word or a fixed few; a word
    before it or a word that names something is how papers name a different method, while a size or
    edition after it is how they name a variant of the same one (gold/GUIDELINES.md, ruling 31).

    ``approach``: a leading word that says how a task is done, not what it is ("LLM-based",
    "retrieval-augmented": a compound ending in one of ``APPROACH_SUFFIXES``) is dropped
    ("LLM-based recommendation" -> "recommendation"). ``bare_acronym``: an acronym written alone
    (two capitals or more in one word: "MAS") names a thing, and a task phrase on it ("MAS
    generation") is not the same item: containment does not take a word more onto it.

    On a name rule (no ``compounds``) heads are cut at the token level, so a head inside a
    hyphenated name goes too ("$\\tau^2$-Bench" -> "tau2"), never the last token left.

    What a phrase carries from the sentence it was cut from is dropped before matching (scorer 3.4):
    ``stray`` function words at either end (:data:`STRAY_WORDS`: "And GridWorld" -> "GridWorld"; words
    written with underscores are words: "tool_use" is "tool use"); with ``values``, a value written at
    either end of a phrase, a number with a decimal point, a percent or a times sign ("60.26 EM" -> "EM";
    "top-5 accuracy", "recall at 10" and "2048 tokens" keep their numbers); ``settings``, prepositions
    opening a trailing setting phrase of a name ("GridWorld across three seeds" -> "GridWorld"); with
    ``appositive``, a description before a name ending in a generic word ("the planning method MazeNet"
    -> "MazeNet"; "models such as GPT-5" stays a class).

    ``modifiers`` (the head-word rule, on tasks and metrics): set to the head words that leave the
    measure or task what it was (:data:`CHANGE_HEADS`, :data:`TASK_WRAPPERS`), it decides the one word
    more of containment by what the word is. A head word put after a lone word names another thing
    ("reasoning distillation" is distillation, not reasoning; "reasoning models" are models) unless it
    is one of these ("accuracy improvement" is accuracy). A modifier before the head keeps the item when
    it is neutral (:data:`NEUTRAL_MODIFIERS`: "average accuracy" of the one accuracy); any other
    modifier makes another item when the abstract never writes it (an invented modifier: "routing
    accuracy" for the paper's "accuracy"), when the abstract contrasts the two (``contrast``), or when
    gold holds the same head under another modifier too (``accuracy`` is neither ``global accuracy`` nor
    ``reasoning accuracy`` where gold has both, but it is ``mean accuracy`` beside ``global accuracy``:
    see :func:`string_similarities`). ``placeholders``: words for a measure the sentence does not name,
    all one item (:data:`PLACEHOLDER_METRICS`: ``performance`` ~ ``score``). ``leading``: words dropped
    before a name (:data:`COMPARATOR_MODIFIERS`: "vanilla PPO" -> "PPO"). ``typos``: of two names of at
    least four letters one edit apart, one the abstract writes and one it never writes, the second is the
    first misspelt (``TRAL`` ~ ``TRAIL`` when only TRAIL is written); needs the abstract. ``gerunds`` (tasks,
    scorer 3.5): a leading word in -ing is the activity the task names, never a modifier that may be dropped
    ("jailbreaks" is not "filtering jailbreaks", "distillation" not "reasoning distillation").

    An item written with an acronym in parentheses, "Long (SHORT)", is compared by each part too (scorer 3.5:
    "Programming-by-Example (PBE)" ~ "Programming-by-Example").

    Scorer 3.6: on a rule with ``modifiers``, two phrases equal once each drops its neutral words are one item
    ("KV memory reduction" ~ "peak KV-memory": :func:`_core`); a group head of the field followed by "of" cuts
    the description after it ("Mamba family of SSM models" -> "Mamba": :data:`GROUP_HEADS`).

    Scorer 3.7: ``activities`` (tasks) holds groups of head words that name one activity (:data:`ACTIVITY_SYNONYMS`):
    two phrases the same but for their head, the two heads of one group, are one task where the abstract writes both
    ("ToT-style inference" ~ "ToT-style reasoning" when it writes the two; never "agentic testing" ~ "agentic coding",
    whose heads name two activities). ``applied`` (baselines): "BASE with METHOD", written so in the abstract with
    both defined as acronyms, is METHOD ("MoE with EP" ~ "EP"; never ~ "MoE": METHOD is what is compared).

    Scorer 3.8: ``glued_heads`` (metrics): a generic head glued to the last word by a hyphen is cut as a spaced one is
    ("accuracy-score" is "accuracy", as "accuracy score" is); which accuracy it then names, where the abstract or gold
    holds more than one, the modifier rules decide as for "accuracy" itself.

    Scorer 3.9: ``joined`` (metrics): a measure written with one modifier more that is, on its own, another of gold's
    items joins two of the paper's measures and names neither ("retention_accuracy" where gold lists "retention" and
    "accuracy"; :func:`adds_item`, asked as a list is aligned). Not on tasks, where another task before the head says
    where the task is done ("post-training data selection" is data selection).
    """

    threshold: float
    containment: bool = False
    heads: frozenset[str] = frozenset()
    restrictions: frozenset[str] = frozenset()
    abbreviations: tuple[tuple[str, str], ...] = ()
    compounds: bool = False
    contrast: bool = False
    word_forms: bool = False
    added: Optional[frozenset[str]] = None
    approach: bool = False
    bare_acronym: bool = False
    stray: bool = True
    values: bool = False
    settings: frozenset[str] = frozenset()
    appositive: bool = False
    modifiers: Optional[frozenset[str]] = None
    placeholders: frozenset[str] = frozenset()
    typos: bool = False
    leading: frozenset[str] = frozenset()
    gerunds: bool = False
    activities: tuple[frozenset[str], ...] = ()
    applied: bool = False
    glued_heads: bool = False
    joined: bool = False


NAME = MatchRule(0.9)  # names: models, and the base of datasets and baselines; versions must agree
_LIST_NAME = replace(NAME, settings=NAME_SETTINGS, appositive=True, typos=True)  # a name in a list field
PHRASE = MatchRule(
    0.85, containment=True
)  # descriptive phrases: the base of tasks and metrics, and the soft method-name score
TASKS = replace(
    PHRASE,
    compounds=True,
    heads=frozenset({"task", "tasks", "benchmark", "benchmarks"}),
    contrast=True,
    word_forms=True,
    approach=True,
    bare_acronym=True,
    modifiers=TASK_WRAPPERS,
    abbreviations=TASK_ABBREVIATIONS,
    gerunds=True,
    activities=ACTIVITY_SYNONYMS,
)
METRIC_NAMES = replace(
    PHRASE,
    compounds=True,
    heads=frozenset({"metric", "metrics", "score", "scores"}),
    restrictions=RESTRICTING_PREPOSITIONS,
    abbreviations=METRIC_ABBREVIATIONS,
    contrast=True,
    values=True,
    modifiers=CHANGE_HEADS | MEASURE_FORM_HEADS,
    placeholders=PLACEHOLDER_METRICS,
    glued_heads=True,
    joined=True,
)
DATASETS = replace(_LIST_NAME, heads=frozenset({"benchmark", "benchmarks", "bench", "dataset", "datasets"}))
BASELINES = replace(
    _LIST_NAME,
    heads=frozenset({"baseline", "baselines", "variant", "variants", "method", "methods", "approach", "approaches"}),
    leading=COMPARATOR_MODIFIERS,
    applied=True,
)
MODELS = replace(_LIST_NAME, heads=frozenset({"model", "models", "variant", "variants", "series", "family"}))
SOFT_NAME = replace(
    PHRASE, added=VARIANT_MARKS | GENERIC_NAME_WORDS, settings=NAME_SETTINGS, appositive=True
)  # the soft score of a coined name (method_name)
# The similarity rules by the name a field's facts give (paperfields.core.fields.FieldFacts.match);
# a result tuple's metric, dataset, model and baseline use the rule of the list field of their kind.
MATCH_RULES = {
    "name": NAME,
    "phrase": PHRASE,
    "soft_name": SOFT_NAME,
    "task": TASKS,
    "metric": METRIC_NAMES,
    "dataset": DATASETS,
    "baseline": BASELINES,
    "model": MODELS,
}
RESULT_NAME_RULES = {"metric": METRIC_NAMES, "dataset": DATASETS, "model": MODELS, "baseline": BASELINES}
# The rule of each record field that names one (the list fields), read from the schema's facts.
FIELD_RULES = {f.name: MATCH_RULES[f.facts.match] for f in record_fields(PaperRecord) if f.facts.match in MATCH_RULES}


def describe_rule(rule: MatchRule) -> dict[str, Any]:
    """A rule's settings as plain JSON data (sets as sorted lists, inside a tuple too: a set's order changes with
    the process's hash seed, and ``scores.json`` must come out byte for byte), for ``scores.json``'s rule table."""

    def plain(value: Any) -> Any:
        return sorted(value) if isinstance(value, frozenset) else list(value)

    return {
        k: sorted(v) if isinstance(v, frozenset) else [plain(p) for p in v] if isinstance(v, tuple) else v
        for k, v in asdict(rule).items()
    }


def _alternate_index(alternates: dict[str, list[str]]) -> dict[str, list[str]]:
    keys: dict[str, list[str]] = {}
    for key, values in alternates.items():
        keys.setdefault(normalize(key), []).extend(values)
    return keys


def accepted_forms(gold: str, alternates: dict[str, list[str]]) -> list[str]:
    """Accepted written forms of a gold string: itself plus its alternates (looked up by normalized key)."""
    return [gold] + _alternate_index(alternates).get(normalize(gold), [])


def forms(gold: str, alternates: dict[str, list[str]]) -> list[str]:
    """Normalized accepted forms of a gold string: itself plus its alternates."""
    return [normalize(form) for form in accepted_forms(gold, alternates)]


Words = tuple[tuple[str, ...], ...]  # the tokens of each written word, in order ("wall-clock" is one word)


def _tokens(words: Words) -> frozenset[str]:
    return frozenset(t for word in words for t in word)


@dataclass(frozen=True)
class _Phrase:
    key: str  # matching key of the reduced phrase
    words: Words
    acronym: bool = False  # written as one acronym ("MAS"), for ``MatchRule.bare_acronym``
    unspaced: str = ""  # the whole phrase before any reduction, without spaces ("SWE-bench" ~ "SWEBench")


_ACRONYM = re.compile(r"[^\W_]*[A-Z][^\W_]*[A-Z][^\W_]*")


# Heads of a group of models that take "of" and a description after them (scorer 3.6): "Mamba family of SSM
# models" is Mamba, as "Qwen series of models" is Qwen.
GROUP_HEADS = frozenset({"family", "series"})


def _cut_head(words: list[str], heads: frozenset[str]) -> list[str]:
    for i in range(1, len(words)):
        if words[i] in heads and (
            i == len(words) - 1
            or words[i + 1] in RESTRICTING_PREPOSITIONS
            or (words[i] in GROUP_HEADS and words[i + 1] == "of")
        ):
            kept = words[:i]
            while len(kept) > 1 and kept[0] in GENERIC_QUANTIFIERS:
                kept = kept[1:]
            return kept
    return words


def _written_words(text: str) -> list[str]:
    """Normalized written words of a text (split at whitespace and underscores, so a hyphenated compound
    stays one word while "tool_use" is two), a version after a name glued to it as :func:`normalize`
    glues it ("Qwen 2.5")."""
    words: list[str] = []
    for word in (normalize(w) for w in strip_markup(text).replace("_", " ").split()):
        if not word:
            continue
        if words and _ENDS_IN_LETTER.search(words[-1]) and word[0].isdigit():
            words[-1] += word
        else:
            words.append(word)
    return words


# "the planning method MazeNet": up to four words of description ending in a generic word, then one
# coined name (two capitals, or a capital and a digit); "models such as GPT-5" names the class, not the model.
_APPOSITIVE = re.compile(
    r"^(?:the\s+)?(?:[A-Za-z][\w-]*\s+){0,4}?(?:"
    + "|".join(sorted(GENERIC_NAME_WORDS | {"baseline", "variant"}))
    + r")s?\s+(?P<name>\S+)$",
    re.IGNORECASE,
)
_COINED = re.compile(r"(?=\S*[A-Z]\S*[A-Z0-9])\S*[A-Za-z]\S*")
_VALUE_WORD = re.compile(r"[+-]?\d[\d,]*(?:\.\d+(?:%|×|x)?|%|×)")
_GLUED_VALUE = re.compile(r"(?<=[^\W\d_])[+-]?\d[\d,]*(?:\.\d+)?(?:%|×)$")


def _appositive(text: str) -> str:
    """The name after a description that ends in a generic word (``MatchRule.appositive``), else ``text``."""
    match = _APPOSITIVE.match(strip_markup(text).strip())
    if match and _COINED.fullmatch(match.group("name")) and not re.search(r"\b(?:such|like|e\.g)\b", text, re.I):
        return match.group("name")
    return text


def _strip_words(words: list[str], rule: MatchRule) -> list[str]:
    """Stray words at either end, and (``rule.values``) a number written into a metric phrase, dropped;
    never the last word."""
    while len(words) > 1 and (
        (rule.stray and words[0] in STRAY_WORDS) or (rule.values and _VALUE_WORD.fullmatch(words[0]))
    ):
        words = words[1:]
    while len(words) > 1 and (
        (rule.stray and words[-1] in STRAY_WORDS) or (rule.values and _VALUE_WORD.fullmatch(words[-1]))
    ):
        words = words[:-1]
    if rule.values and words:  # a percent or times value glued to the word before it ("rate 41.7%" reads "rate41.7%")
        words[-1] = _GLUED_VALUE.sub("", words[-1]) or words[-1]
    return words


@lru_cache(maxsize=1 << 16)
def _phrase(text: str, rule: MatchRule) -> _Phrase:
    """``text`` reduced by ``rule`` (see :class:`MatchRule`): its key and the tokens of each word."""
    words = [_YEAR.sub(r"\1", w) for w in _written_words(_appositive(text) if rule.appositive else text)]
    unspaced = "".join(words).replace(" ", "")
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    words = _strip_words(words, rule)
    while len(words) > 1 and words[0] in rule.leading:
        words = words[1:]
    if rule.settings:
        words = words[: next((i for i in range(1, len(words)) if words[i] in rule.settings), len(words))]
    expand = dict(rule.abbreviations)
    words = [expand.get(w, w) for w in words]
    if rule.restrictions:
        words = words[: next((i for i in range(1, len(words)) if words[i] in rule.restrictions), len(words))]
    if rule.approach and len(words) > 1 and words[0].rsplit(" ", 1)[-1] in APPROACH_SUFFIXES and " " in words[0]:
        words = words[1:]
    if not rule.compounds:
        words = [t for w in words for t in w.split()]
    if rule.glued_heads and words and " " in words[-1] and words[-1].rsplit(" ", 1)[1] in rule.heads:
        words[-1] = words[-1].rsplit(" ", 1)[0]  # "accuracy-score" -> "accuracy" (scorer 3.8)
    if rule.heads:
        words = _cut_head(words, rule.heads)
    acronym = bool(rule.bare_acronym and _ACRONYM.fullmatch(strip_markup(text).strip()))
    if rule.compounds:
        return _Phrase(" ".join(words), tuple(tuple(w.split()) for w in words), acronym, unspaced)
    return _Phrase(" ".join(words), tuple((w,) for w in words), acronym, unspaced)


def _signature(key: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What two names must share exactly: their digit sequences and their symbol marks (``++``, ``#``)."""
    return tuple(_DIGITS.findall(key)), tuple(_MARKS.findall(key))


@lru_cache(maxsize=1)
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=1 << 16)  # pure, and the same words come back for every prediction: Snowball is slow per call
def _stem(token: str) -> str:
    return _stemmer().stemWord(token)


def _stemmed(words: Words) -> Words:
    return tuple(tuple(_stem(t) for t in word) for word in words)


@lru_cache(maxsize=256)
def _abstract_sequence(text: str, stem: bool) -> str:
    """The abstract's tokens (stemmed or not) joined by spaces, for phrase look-ups."""
    words = tuple(tuple(w.split()) for w in _written_words(text))
    return " ".join(t for word in (_stemmed(words) if stem else words) for t in word)


def _occurs(tokens: Sequence[str], sequence: str) -> bool:
    return re.search(rf"(?<!\S){re.escape(' '.join(tokens))}(?!\S)", sequence) is not None


def _contrasted(short: Words, long_: Words, text: str, stem: bool) -> bool:
    """``long_`` is ``short`` after one leading modifier, and the abstract writes both: the narrower
    phrase, and the broader one on its own elsewhere. The paper then contrasts the two ("code
    generation" and "verified code generation"), so the modifier restricts and they differ."""
    if not text or len(long_) < 2 or _tokens(long_[1:]) != _tokens(short):
        return False
    narrow, broad = [t for w in long_ for t in w], [t for w in long_[1:] for t in w]
    sequence = _abstract_sequence(text, stem)
    if not _occurs(narrow, sequence):
        return False
    rest = re.sub(rf"(?<!\S){re.escape(' '.join(narrow))}(?!\S)", "|", sequence)
    return _occurs(broad, rest)


def _added_word_allowed(short: Words, long_: Words, allowed: frozenset[str]) -> bool:
    """``long_`` is ``short`` with words written after it, each one of ``allowed`` (``MatchRule.added``)."""
    short_tokens, long_tokens = [t for w in short for t in w], [t for w in long_ for t in w]
    return long_tokens[: len(short_tokens)] == short_tokens and set(long_tokens[len(short_tokens) :]) <= allowed


@lru_cache(maxsize=8)
def _word_set(words: frozenset[str], stem: bool) -> frozenset[str]:
    """``words`` as the matcher compares them: normalized written words, or their Snowball stems."""
    return frozenset(" ".join(_stem(t) for t in w.split()) if stem else w for w in words)


def _written_in(word: tuple[str, ...], text: str) -> bool:
    """Every token of ``word`` is written in the abstract (compared on Snowball stems: "preference" in
    "preferences")."""
    sequence = _abstract_sequence(text, True)
    return all(_occurs([_stem(t)], sequence) for t in word)


def _neutral_word(i: int, word: tuple[str, ...], long_: Words, rule: MatchRule, stem: bool) -> bool:
    """The written word ``word`` at place ``i`` of ``long_`` leaves the item what it was (``MatchRule.modifiers``):
    a neutral modifier before the head, or one of the rule's neutral heads as the head."""
    if rule.modifiers is None:
        return False
    joined = " ".join(word)
    if i == len(long_) - 1:
        return joined in _word_set(rule.modifiers, stem)
    return joined in _word_set(NEUTRAL_MODIFIERS, stem)


def _modifier_verdict(
    short: Words, long_: Words, extra: tuple[int, tuple[str, ...]], rule: MatchRule, text: str, stem: bool
) -> str:
    """Why the one written word more of ``long_`` (``extra``: its place and tokens, not a neutral word)
    makes another item (``MatchRule.modifiers``), or "" when it does not: a head word after a lone word,
    or a modifier that the abstract (``text``) never writes. Asked of the longer phrase whichever side it
    is on, so the verdict is symmetric (scorer 3.6: asked of the prediction only, "1-1" matched "A1 1"
    one way and not the other)."""
    i, word = extra
    joined = " ".join(word)
    if rule.gerunds and i == 0 and len(long_) > 1 and word[-1].endswith("ing") and len(word[-1]) > 5:
        return f"the leading {joined!r} is the activity itself: without it the phrase names its object, not the task"
    if i == len(long_) - 1:
        if len(short) == 1:
            return f"the word added after a lone word is the head: {joined!r} names another thing"
        return ""
    if text and not _written_in(word, text):
        return f"the modifier {joined!r} is never written in the abstract: an invented modifier names another item"
    return ""


def _core(words: Words, rule: MatchRule) -> tuple[str, ...]:
    """The tokens of a phrase without its neutral words (:func:`_neutral_word`: "peak", "average" before the
    head, a change head such as "reduction" as the head), for a rule with ``modifiers``; () otherwise or when
    no word is neutral (scorer 3.6: "KV memory reduction" and "peak KV-memory" are one measure)."""
    if rule.modifiers is None:
        return ()
    kept = [t for i, w in enumerate(words) if not _neutral_word(i, w, words, rule, False) for t in w]
    return tuple(kept) if len(kept) < sum(len(w) for w in words) else ()


def drops_modifier(predicted: str, gold: str, rule: MatchRule) -> bool:
    """``predicted`` is ``gold`` without one modifier before its head that is not neutral ("accuracy" for
    "global accuracy"; not "accuracy" for "mean accuracy"): when gold holds two items that the prediction
    is so short of, it names neither (see :func:`align_strings`). False on a rule without ``modifiers``. The mirror of
    :func:`_added_modifier`: gold is the prediction with that modifier more."""
    return _added_modifier(gold, predicted, rule) is not None


def _added_modifier(predicted: str, gold: str, rule: MatchRule) -> Optional[str]:
    """The one written word that ``predicted`` holds before its head beyond ``gold``'s words, not a neutral one
    (:func:`_neutral_word`), as written ("retention" of "retention_accuracy" against "accuracy"); None when the
    prediction is not gold with one such modifier more, or on a rule without ``modifiers``."""
    if rule.modifiers is None:
        return None
    p, g = _phrase(predicted, rule), _phrase(gold, rule)
    shared = _tokens(g.words)
    if not shared or not shared < _tokens(p.words):
        return None
    extras = [(i, w) for i, w in enumerate(p.words) if not set(w) <= shared]
    counted = [(i, w) for i, w in extras if not _neutral_word(i, w, p.words, rule, False)]
    if len(counted) != 1 or counted[0][0] == len(p.words) - 1:
        return None
    return " ".join(counted[0][1])


def adds_item(
    predicted: str, gold: str, others: Sequence[Sequence[str]], rule: MatchRule, text: Optional[str] = None
) -> bool:
    """``predicted`` is ``gold`` with one modifier more before its head (:func:`_added_modifier`) that on its own is
    another of gold's items (``others``: the accepted forms of each other gold item of the list, as
    :func:`accepted_forms` gives them): the prediction joins two of the paper's measures into one
    ("retention_accuracy" where gold lists "retention" and "accuracy": the retention-accuracy trade-off), and names
    neither (scorer 3.9, ``MatchRule.joined``; see :func:`string_similarities`). A modifier that is no item of gold's
    ("model_accuracy", "near-full-retention accuracy" beside "accuracy"), or a neutral one ("average accuracy"),
    leaves the pair to the other rules. False on a rule without ``modifiers`` or ``joined``; ``text`` is the abstract,
    for the rule's reading of the modifier against each item."""
    modifier = _added_modifier(predicted, gold, rule) if rule.joined else None
    if modifier is None:
        return False
    return any(similarity(modifier, list(forms), rule, text) >= rule.threshold for forms in others)


def _contained(
    a: Words, b: Words, rule: MatchRule, text: str, stem: bool, added: frozenset[str] = frozenset()
) -> tuple[Optional[bool], str]:
    """How token containment decides a pair, and why: True (the same: one's tokens are the other's with
    at most one written word more), False (different: a name with a token added, a word added to a
    coined name that is not a variant mark (``rule.added``, extended by ``added``), or a contrasted
    modifier), or None (containment does not decide; the ratio does)."""
    short, long_ = (a, b) if len(_tokens(a)) <= len(_tokens(b)) else (b, a)
    shared = _tokens(short)
    if not shared or not shared <= _tokens(long_):
        return None, ""
    if not rule.containment:
        return (False, "a name with a word more is another name") if shared != _tokens(long_) else (None, "")
    extras = [(i, word) for i, word in enumerate(long_) if not set(word) <= shared]
    counted = [(i, word) for i, word in extras if not _neutral_word(i, word, long_, rule, stem)]
    if len(counted) > 1:
        return None, ""
    if stem and counted and len(short) < 2:
        return None, ""  # a lone word in another form is too little to go on: "mathematics" vs "mathematical reasoning"
    if counted and rule.contrast and _contrasted(short, long_, text, stem):
        return False, "the abstract writes the phrase with and without the modifier, so the modifier restricts"
    if counted and rule.modifiers is not None:
        verdict = _modifier_verdict(short, long_, counted[0], rule, text, stem)
        if verdict:
            return False, verdict
    if (
        rule.added is not None
        and shared != _tokens(long_)
        and not _added_word_allowed(short, long_, rule.added | added)
    ):
        return False, "the word added to the name is not a variant mark after it: it names another method"
    form = " in another word form" if stem else ""
    return True, (
        f"one's words are the other's{form}"
        if shared == _tokens(long_)
        else f"one's words are the other's{form} with one written word more"
    )


_PARENTHESIZED_ACRONYM = re.compile(r"^(?P<long>.+?\S)\s*\((?P<short>[^()\s]*[A-Z][^()\s]*[A-Z][^()\s]*)\)$")


def _similarity(predicted: str, accepted: Sequence[str], rule: MatchRule, text: Optional[str]) -> tuple[float, str]:
    """:func:`similarity` and the reason of its verdict (see :func:`explain`); an item written "Long (SHORT)"
    with an acronym in parentheses is also read by each part, the best taken."""
    if isinstance(predicted, str) and all(isinstance(a, str) for a in accepted):
        return _similarity_of_strings(predicted, tuple(accepted), rule, text)
    return _judged_similarity(predicted, accepted, rule, text)


# Pure in its strings (the rule is frozen, the abstract a string), and the same pairs come back in every run of a
# board and in every score, level and diagnostic of a paper: judged once by value, not by object (issue 39).
@lru_cache(maxsize=1 << 17)
def _similarity_of_strings(
    predicted: str, accepted: tuple[str, ...], rule: MatchRule, text: Optional[str]
) -> tuple[float, str]:
    return _judged_similarity(predicted, accepted, rule, text)


def _judged_similarity(
    predicted: str, accepted: Sequence[str], rule: MatchRule, text: Optional[str]
) -> tuple[float, str]:
    whole = _similarity_of(predicted, accepted, rule, text)
    if whole[0] >= 1.0:
        return whole
    if rule.applied and text:  # "MoE with EP" is EP, read from either side (scorer 3.7)
        method = _applied_method(predicted, text)
        readings = [(method, list(accepted))] if method else []
        readings += [(predicted, [m]) for m in (_applied_method(form, text) for form in accepted) if m]
        for one, others in readings:
            found = _similarity_of(one, others, rule, text)
            if found[0] >= 1.0:
                return APPLIED_SIMILARITY, (
                    f"a method written with what it is applied to, both defined in the abstract: {found[1]}"
                )
    parts = _acronym_parts(predicted)
    forms = [part for form in accepted for part in _acronym_parts(form)]
    if len(parts) == 1 and len(forms) == len(accepted):
        return whole
    best = max((_similarity_of(part, forms, rule, text) for part in parts), key=lambda r: r[0])
    if best[0] > whole[0]:
        return best[0], f"written with its acronym in parentheses: {best[1]}"
    return whole


# The similarity of "BASE with METHOD" to METHOD: the same item, a reading rather than the name as written, so a list
# that writes both ("Expert Parallel (EP)" and "MoE with EP") aligns the name as written with gold's.
APPLIED_SIMILARITY = 0.99
_APPLIED = re.compile(r"^(?P<base>\S+)\s+with\s+(?P<method>\S+)$")


def _applied_method(text: str, abstract: str) -> Optional[str]:
    """For a name written "BASE with METHOD" (``MatchRule.applied``, scorer 3.7), where the abstract writes that
    phrase and defines both BASE and METHOD as acronyms (:func:`abstract_aliases`: "Sparse Mixture of Experts
    (MoE)", "Expert Parallel (EP)", then "Compared to MoE with EP"): METHOD, the compared method, BASE being what it
    is applied to. None otherwise: a description after "with" ("GRPO with a KL penalty") adds a component."""
    written = _APPLIED.match(strip_markup(text).strip())
    if not written:
        return None
    defined = abstract_aliases(abstract)
    if written["base"] not in defined or written["method"] not in defined:
        return None
    tokens = [t for word in _written_words(written.group(0)) for t in word.split()]
    return written["method"] if _occurs(tokens, _abstract_sequence(abstract, False)) else None


def _abbreviates(short: str, long_: str) -> bool:
    """``short``'s letters are ``long_``'s in order, from its first letter (Schwartz & Hearst 2003's test of
    a short form: "PBE" for "Programming-by-Example", not "XYZ" for "advantage collapse rate")."""
    letters, rest = [c for c in short.lower() if c.isalpha()], long_.lower()
    if not letters or not rest or rest[0] != letters[0]:
        return False
    at = 0
    for letter in letters:
        at = rest.find(letter, at)
        if at < 0:
            return False
        at += 1
    return True


def _acronym_parts(text: str) -> list[str]:
    """``text``, or for "Long (SHORT)" where SHORT abbreviates Long (:func:`_abbreviates`), its two parts."""
    defined = _PARENTHESIZED_ACRONYM.match(strip_markup(text).strip())
    if defined and _abbreviates(defined["short"], defined["long"]):
        return [defined["long"], defined["short"]]
    return [text]


def _similarity_of(predicted: str, accepted: Sequence[str], rule: MatchRule, text: Optional[str]) -> tuple[float, str]:
    p = _phrase(predicted, rule)
    best, why = 0.0, "no accepted form has the same versions and symbol marks"
    # A one-word accepted form (the gold name's acronym) may follow its expansion on a rule with ``added``.
    one_word = (
        frozenset(k for k in (_phrase(a, rule).key for a in accepted) if k and " " not in k)
        if rule.added is not None
        else frozenset()
    )
    for accepted_form in accepted:
        form = _phrase(accepted_form, rule)
        if _signature(p.key) != _signature(form.key):
            continue
        if p.key.replace(" ", "") == form.key.replace(" ", "") or p.unspaced == form.unspaced:
            return 1.0, f"equal after the field's reduction ({p.key!r})"
        if p.key in rule.placeholders and form.key in rule.placeholders:
            return 1.0, f"{p.key!r} and {form.key!r} both stand for a measure the sentence does not name"
        if rule.bare_acronym and (
            (p.acronym and _tokens(p.words) < _tokens(form.words))
            or (form.acronym and _tokens(form.words) < _tokens(p.words))
        ):
            best, why = (best, why) if best else (0.0, "an acronym alone names a thing, not a task on it")
            continue
        core = _core(p.words, rule)
        if core and core == _core(form.words, rule):
            return 1.0, f"the same measure once the words that leave it what it is are dropped ({' '.join(core)!r})"
        verdict, reason = _contained(p.words, form.words, rule, text or "", stem=False, added=one_word)
        if verdict is None and rule.word_forms:
            verdict, reason = _contained(_stemmed(p.words), _stemmed(form.words), rule, text or "", stem=True)
        if verdict:
            return 1.0, reason
        if verdict is False:
            best, why = (best, why) if best else (0.0, reason)
            continue
        if rule.activities and text and _one_activity(p.words, form.words, rule, text, accepted):
            return 1.0, (
                f"{p.key!r} and {form.key!r} differ only in a head that names the one activity, and the abstract "
                "writes both"
            )
        ratio = fuzz.ratio(p.key, form.key) / 100.0
        if ratio < rule.threshold and rule.typos and text and _misspelt(p, form, text):
            return 1.0, f"{p.key!r} is never written in the abstract and one letter from {form.key!r}: misspelt"
        if ratio >= best:
            best, why = (
                ratio,
                f"character similarity {ratio:.2f} of {p.key!r} and {form.key!r} (threshold {rule.threshold:.2f})",
            )
    return best, why


def _written_phrase(text: str, abstract: str) -> bool:
    """``text``'s tokens, on Snowball stems, are written one after another in the abstract."""
    tokens = [_stem(t) for word in _written_words(text) for t in word.split()]
    return bool(tokens) and _occurs(tokens, _abstract_sequence(abstract, True))


def _one_activity(a: Words, b: Words, rule: MatchRule, text: str, accepted: Sequence[str]) -> bool:
    """Two task phrases of two words or more, the same but for their head (the last word), the two heads one
    activity by ``rule.activities`` (:data:`ACTIVITY_SYNONYMS`), and the abstract writes both: the first as it is,
    the second as it is or as another of gold's accepted forms (``accepted``: "aligning large language models with
    human preferences" for "preference alignment") (scorer 3.7)."""
    if len(a) < 2 or len(a) != len(b) or a[:-1] != b[:-1] or a[-1] == b[-1]:
        return False
    heads = {_stem(" ".join(a[-1])), _stem(" ".join(b[-1]))}
    if not any(heads <= _word_set(group, True) for group in rule.activities):
        return False
    p_key = " ".join(t for w in a for t in w)
    return _written_phrase(p_key, text) and any(_written_phrase(form, text) for form in accepted)


def _misspelt(p: _Phrase, form: _Phrase, text: str) -> bool:
    """One of ``p`` and ``form`` is the other misspelt (``MatchRule.typos``): both of at least four letters,
    one edit apart without spaces, one written in the abstract and the other nowhere in it."""
    a, b = p.key.replace(" ", ""), form.key.replace(" ", "")
    if min(len(a), len(b)) < 4 or Levenshtein.distance(a, b) != 1:
        return False
    sequence = _abstract_sequence(text, False)
    unspaced = sequence.replace(" ", "")
    return (b in unspaced) != (a in unspaced)


def similarity(predicted: str, accepted: Sequence[str], rule: MatchRule = NAME, text: Optional[str] = None) -> float:
    """Similarity in [0, 1] of a prediction to the accepted forms of one gold item (written or
    normalized: :func:`accepted_forms` or :func:`forms`; written ones keep hyphenated compounds whole).
    ``text`` is the abstract, read only by a rule with ``contrast``.

    Both sides are first reduced by ``rule`` (generic heads, restricting phrases, abbreviations: see
    :class:`MatchRule`). 1.0 when the reduced keys are equal or differ only in spaces (``SWE-bench`` ~
    ``SWEBench``). 0.0 when their digit sequences differ (``GPT-4o`` never matches ``GPT-4``,
    ``Qwen2.5-7B`` never ``Qwen2.5-14B``, but ``Llama3.1-8B`` is ``Llama-3.1-8B``) or their symbol marks
    do (``AnyEdit++`` vs ``AnyEdit``). With ``rule.containment``, 1.0 when one's tokens are a subset of
    the other's with at most one written word more, unless ``rule.contrast`` and the abstract contrasts
    the two (:func:`_contrasted`: 0.0); with ``rule.word_forms`` the same on Snowball stems ("generate
    code" ~ "code generation"), where the shorter must keep two words to take one more. Without
    ``containment``, 0.0 when one's tokens are a strict subset of the other's (a name with a token
    added). Else the rapidfuzz ratio of the keys, best over the accepted forms.
    """
    return _similarity(predicted, accepted, rule, text)[0]


def explain(predicted: str, accepted: Sequence[str], rule: MatchRule = NAME, text: Optional[str] = None) -> str:
    """In words, why :func:`similarity` gives its verdict on a pair (the mechanism that decided it:
    equal after reduction, a version or symbol mark that differs, containment, a word added to a
    name, a contrasted modifier, an acronym alone, or the character ratio), for reports of
    disagreements with a judge."""
    return _similarity(predicted, accepted, rule, text)[1]


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
    rows, cols = (index.tolist() for index in np.nonzero(allowed))
    if len(set(rows)) == len(rows) and len(set(cols)) == len(cols):
        # No two allowed pairs share a row or a column: every maximum matching is all of them, and the Hungarian
        # algorithm would return them row by row, as nonzero does (most lists: scipy is then never imported).
        return list(zip(rows, cols))
    from scipy.optimize import linear_sum_assignment  # imported on first use: scipy.optimize costs about 0.5 s

    score = allowed.astype(float) * (1.0 + (weight if weight is not None else 0.0) * 1e-3)
    rows, cols = linear_sum_assignment(score, maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, cols) if allowed[r, c]]


def align_strings(
    predicted: Sequence[str],
    gold: Sequence[str],
    alternates: dict[str, list[str]],
    rule: MatchRule,
    text: Optional[str] = None,
) -> tuple[list[str], list[str], list[tuple[int, int]]]:
    """De-duplicated predictions and gold, and the one-to-one matched (pred, gold) index pairs.
    ``text`` is the abstract, for a rule that reads it (``contrast``: see :func:`similarity`)."""
    pred, gold, pairs = _aligned_strings(predicted, gold, alternates, rule, text)
    return list(pred), list(gold), list(pairs)


@_same_objects(64)
def _aligned_strings(
    predicted: Sequence[str],
    gold: Sequence[str],
    alternates: dict[str, list[str]],
    rule: MatchRule,
    text: Optional[str],
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[int, int], ...]]:
    pred, gold = dedupe(predicted), dedupe(gold)
    if not pred or not gold:
        return tuple(pred), tuple(gold), ()
    sim = string_similarities(pred, gold, alternates, rule, text)
    return tuple(pred), tuple(gold), tuple(assign(sim >= rule.threshold, sim))


def string_similarities(
    pred: Sequence[str], gold: Sequence[str], alternates: dict[str, list[str]], rule: MatchRule, text: Optional[str]
) -> np.ndarray:
    """The similarity of every (prediction, gold item) pair of two de-duplicated lists (shape (n_pred,
    n_gold)), as :func:`align_strings` aligns them: :func:`similarity` with each gold item's accepted
    forms, except that a prediction short of a modifier of two gold items or more names neither
    (:func:`drops_modifier`: "accuracy" where gold holds "global accuracy" and "mean accuracy" matches
    only the mean, whose modifier is neutral), and that a prediction with one modifier more that is another gold
    item (:func:`adds_item`, on a rule with ``joined``: "retention_accuracy" where gold holds "retention" and
    "accuracy", or gold's "retention_accuracy" where the predictions hold the two) names none of them (scorer 3.9),
    so those pairs are 0."""
    index = _alternate_index(alternates)
    gold_forms = [[g] + index.get(normalize(g), []) for g in gold]
    sim = np.array([[similarity(p, forms, rule, text) for forms in gold_forms] for p in pred])
    if rule.modifiers is not None and len(gold) > 1:
        for i, p in enumerate(pred):
            accepted = np.flatnonzero(sim[i] >= rule.threshold)
            if len(accepted) > 1:
                for j in accepted:
                    if drops_modifier(p, gold[j], rule):
                        sim[i, j] = 0.0
            if not rule.joined:
                continue
            # either side may hold the joined item: the rule is symmetric, as the matcher is
            predicted_others = [[q] for k, q in enumerate(pred) if k != i]
            for j in np.flatnonzero(sim[i] >= rule.threshold):
                others = gold_forms[:j] + gold_forms[j + 1 :]
                if adds_item(p, gold[j], others, rule, text) or adds_item(gold[j], p, predicted_others, rule, text):
                    sim[i, j] = 0.0
    return sim


def match_strings(
    predicted: Sequence[str],
    gold: Sequence[str],
    alternates: dict[str, list[str]],
    rule: MatchRule,
    text: Optional[str] = None,
) -> tuple[int, int, int]:
    """(tp, fp, fn) of a list of strings against gold, after normalization and de-duplication."""
    pred, gold, pairs = align_strings(predicted, gold, alternates, rule, text)
    return len(pairs), len(pred) - len(pairs), len(gold) - len(pairs)


def same_name(
    predicted: Optional[str],
    gold: Optional[str],
    alternates: dict[str, list[str]],
    rule: MatchRule = NAME,
    text: Optional[str] = None,
) -> bool:
    """Optional names agree: both missing, or both present and similar enough under ``rule``
    (``text``, the abstract, for a rule that reads it)."""
    if not predicted or not gold:
        return not predicted and not gold
    return similarity(predicted, accepted_forms(gold, alternates), rule, text) >= rule.threshold


def _strict_key(text: str) -> str:
    """A name's strict key: :func:`normalize`, commas, semicolons and colons read as spaces ("Plan,
    Probe, Prune" is "Plan-Probe-Prune"), stray words at either end dropped (:data:`STRAY_WORDS`)."""
    words = re.sub(r"[,;:]", " ", normalize(text)).split()
    while len(words) > 1 and words[0] in STRAY_WORDS:
        words = words[1:]
    while len(words) > 1 and words[-1] in STRAY_WORDS:
        words = words[:-1]
    return " ".join(words)


def _misspelt_name(predicted: str, accepted: set[str], text: Optional[str]) -> bool:
    """A coined name misspelt (scorer 3.5): the prediction's key is nowhere in the abstract, gold's accepted
    form is, and the two are at most two edits apart with a character similarity of at least 0.9 ("Adversarial
    Trained PRMs" for "Adversarially Trained PRMs"); digits and symbol marks must still agree."""
    if not text:
        return False
    key = _strict_key(predicted).replace(" ", "")
    unspaced = _abstract_sequence(text, False).replace(" ", "")
    if len(key) < 6 or key in unspaced:
        return False
    forms = {form.replace(" ", "") for form in accepted}
    return any(
        form in unspaced
        and _signature(form) == _signature(key)
        and Levenshtein.distance(key, form) <= 2
        and fuzz.ratio(key, form) >= 90
        for form in forms
    )


# "Long (SHORT)", "Long (SHORT) (Long)": the name before the first bracket, each bracketed part, and what follows.
_BRACKETED = re.compile(r"\(([^()]+)\)")


def _inflected(key: str) -> str:
    """A strict key with the plural of its last word dropped when it has two words or more ("esoteric language
    models" is "esoteric language model"; a one-word coined name keeps its letters: "MAPS" is not "MAP")."""
    words = key.split()
    if len(words) > 1 and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return " ".join(words)


def _name_keys(text: str) -> frozenset[str]:
    """The keys a name is compared by at the strict level: its strict key (:func:`_strict_key`) and that key with a
    plural last word read as its singular (:func:`_inflected`), each without the spaces between its parts (scorer
    3.9): a coined name written with its parts apart or together is one name ("safe-compass", "safe_compass" and
    "SafeCompass" are all ``safecompass``), while a letter or a word more or less still makes another key."""
    key = _strict_key(text)
    return frozenset({key.replace(" ", ""), _inflected(key).replace(" ", "")})


def _strict_keys(forms: Sequence[str]) -> set[str]:
    return {k for form in forms for k in _name_keys(form)}


def strict_name_agrees(predicted: str, gold: str, alternates: dict[str, list[str]], text: Optional[str] = None) -> bool:
    """The strict (headline) level of a coined name: ``predicted`` is gold or one of its accepted forms
    (``alternates``, which the scorer extends with the abstract's acronyms) by :func:`_strict_key`, a plural
    last word read as its singular (:func:`_inflected`, scorer 3.6), without the spaces between its parts
    (:func:`_name_keys`, scorer 3.9: "safe-compass" is ``SafeCompass``); or it writes a name with the form the
    abstract defines for it, "Long (SHORT)" (``Grid-Trained Value Nets (GTVN)`` for ``GTVN``: one part
    accepted, every other part its defined pair or accepted too, so a part written twice is one part: "DRA
    (Denoised Representation Attribution)" with the long form before it), and what follows the definition is
    a description ("Grid-Trained Value Nets (GTVN) framework"), though not, where gold is the definition's short
    form, a phrase opened by a preposition other than a setting's (:func:`_narrowed_short_form`, scorer 3.8:
    "One-stage Policy Optimization (OnePO) for Medical Adaptation" is OnePO for one domain, a narrower thing than
    ``OnePO``, while it still is the spelt-out ``One-stage Policy Optimization``), nor, whichever part gold is, a
    component joined after it (:func:`_component_added`, scorer 3.9: "... (OnePO) with Teacher-Output Integration"
    is a longer method than either part); or, with the abstract, gold's
    hyphenated name with an acronym the abstract never defines spelt out by its initials in words the abstract
    writes (:func:`_initials_written`, scorer 3.8: "Multi-Head-MoE" for ``MH-MoE`` where it writes "multi-head"),
    either way round; or it is a coined name (two capitals, or a capital and a digit) followed by a setting phrase
    (:data:`NAME_SETTINGS`: "TRAIL across four backbones" for ``TRAIL``); or, with the abstract (``text``), a
    misspelling of gold's name that the abstract never writes (:func:`_misspelt_name`, scorer 3.5). Nothing else:
    no word more or less. A one-word short form is accepted for a spelt-out gold name too (``STOC`` for ``Selecting
    Tokens via attentiOn Contribution``: the judges of the first stratified set read the two as one method)."""
    forms_ = accepted_forms(gold, alternates)
    accepted = _strict_keys(forms_)
    if _name_keys(predicted) & accepted or _misspelt_name(predicted, {_strict_key(form) for form in forms_}, text):
        return True
    written = strip_markup(predicted).strip()
    if text and (_initials_written(written, gold, text) or _initials_written(gold, written, text)):
        return True
    head = written.split("(", 1)[0].strip()
    parts = [head, *(m.strip() for m in _BRACKETED.findall(written))]
    after = written.rpartition(")")[2]
    if len(parts) > 1 and (_narrowed_short_form(parts, after, gold) or _component_added(after)):
        return False
    if len(parts) > 1 and all(parts):
        for i, one in enumerate(parts):
            if not _name_keys(one) & accepted:
                continue
            paired = _strict_keys(accepted_forms(one, alternates)) | accepted
            if all(_name_keys(other) & paired for other in parts[:i] + parts[i + 1 :]):
                return True
    words = written.split()
    cut = next((i for i in range(1, len(words)) if normalize(words[i]) in NAME_SETTINGS), None)
    if cut is not None:
        name = " ".join(words[:cut])
        return bool(_COINED.fullmatch(name)) and bool(_name_keys(name) & accepted)
    return False


# Prepositions that open a phrase after a name saying what the method is for, or applied in or with, which makes a
# narrower thing than the name (scorer 3.8: "OnePO for Medical Adaptation"); a setting's (:data:`NAME_SETTINGS`),
# dropped before matching, never does.
NARROWING_PREPOSITIONS = frozenset({"for", "in", "with", "to", "via", "of", "from"}) - NAME_SETTINGS
_CAPITALS = re.compile(r"[A-Z]{2,}")


def _narrowed_short_form(parts: list[str], after: str, gold: str) -> bool:
    """A name written "Long (SHORT)" and then a phrase opened by a narrowing preposition
    (:data:`NARROWING_PREPOSITIONS`: "for Medical Adaptation"), where gold is the short form of that definition
    (``OnePO``, the part that abbreviates another, :func:`_abbreviates`): the phrase names SHORT for something, a
    narrower thing than the coined name (scorer 3.8). Gold's spelt-out long form is still the name written out,
    phrase and all."""
    words = after.split()
    if not words or normalize(words[0]) not in NARROWING_PREPOSITIONS:
        return False
    key = _name_keys(gold)
    return any(
        _name_keys(one) & key and any(_abbreviates(one, other) for other in parts if other != one) for one in parts
    )


# Words that join a component to a method written after its definition (scorer 3.9): "One-stage Policy Optimization
# (OnePO) with Teacher-Output Integration" is OnePO and another part, a compound method that is neither the coined
# short form nor the spelt-out long form. "for", "in" and the other narrowing prepositions say what the method is for
# and narrow only the short form (:func:`_narrowed_short_form`); "and" coordinates two names and is left to the
# rules of a list ("Multi-Head LatentMoE and Head Parallel" was judged one proposal).
COMPONENT_WORDS = frozenset({"with", "without", "plus"})


def _component_added(after: str) -> bool:
    """What follows a name written "Long (SHORT)" opens with a word that joins a component to it
    (:data:`COMPONENT_WORDS`: "with Teacher-Output Integration"): the whole names a longer method, another name than
    either part, whichever part gold is (scorer 3.9). False for nothing after the definition, a generic word
    ("framework") or a phrase of another kind ("for Robot Navigation", "across four backbones")."""
    words = after.split()
    return bool(words) and normalize(words[0]) in COMPONENT_WORDS


def _initials_written(spelt: str, short: str, text: str) -> bool:
    """``short`` is a hyphenated name with an acronym the abstract never defines ("MH-MoE") and ``spelt`` the same
    name with that acronym's words written out, split at hyphens or spaces ("Multi-Head-MoE"): each capital of the
    acronym the initial of one word, in order, the other parts the same, and the words so spelt written one after
    another in the abstract ("multi-head attention") (scorer 3.8). An acronym the abstract defines is read from its
    definition instead (:func:`abstract_aliases`), never from initials."""
    parts = short.split("-")
    words = [w for w in re.split(r"[-\s]+", spelt) if w]
    defined = abstract_aliases(text)
    if len(parts) < 2 or not all(parts) or len(words) <= len(parts):
        return False
    sequence, at, spelt_out = _abstract_sequence(text, False), 0, False
    for part in parts:
        if _CAPITALS.fullmatch(part) and part not in defined:
            run = words[at : at + len(part)]
            tokens = [t for w in run for t in normalize(w).split()]
            if len(run) < len(part) or "".join(w[0] for w in run).upper() != part or not _occurs(tokens, sequence):
                return False
            at, spelt_out = at + len(part), True
        elif at < len(words) and normalize(words[at]) == normalize(part):
            at += 1
        else:
            return False
    return spelt_out and at == len(words)


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


# A symbol defined in math right after the phrase it names: "Youden's index $J=\\mathrm{TPR}-\\mathrm{FPR}$",
# "the reward model ($R_\\phi$)", "a temperature $\\tau$ = 0.7": one letter (Latin, or a Greek command) with
# an optional subscript, then "=" in the math, or the math closed (and a bracket closed).
_SYMBOL_DEFINITION = re.compile(
    r"(?P<before>[^$()]{1,120}?)\s*\(?\$\s*(?P<symbol>(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?\\?[A-Za-z0-9]+\}?)?)\s*(?:=|\$\s*(?:\)|=))"
)
# Words that end the phrase a symbol names, reading back from the symbol ("determined solely by | Youden's index").
_PHRASE_STOPS = frozenset(
    "a an the by of for in on to with and or as at is are be its their this that which where when we our "
    "from via than then so while denoted called termed".split()
)


@lru_cache(maxsize=1 << 12)
def symbol_aliases(abstract: str) -> dict[str, list[str]]:
    """Symbol <-> phrase pairs the abstract defines in math: "Youden's index $J=\\mathrm{TPR}-\\mathrm{FPR}$"
    gives ``{"J": ["Youden's index", "index"], "Youden's index": ["J"], "index": ["J"]}``: the symbol
    with each run of up to four words before it, read back to a function word or a punctuation mark
    (ruling 6 for a name defined as a symbol: the abstract says the two are one thing). Empty for an
    abstract without such a definition."""
    out: dict[str, list[str]] = {}
    for match in _SYMBOL_DEFINITION.finditer(abstract):
        symbol = strip_markup(f"${match.group('symbol')}$")
        if not symbol:
            continue
        words = re.split(r"\s+", re.split(r"[.,;:!?]", strip_markup(match.group("before")))[-1].strip())
        phrase: list[str] = []
        for word in reversed(words):
            if not word or word.lower() in _PHRASE_STOPS or len(phrase) == 4:
                break
            phrase.insert(0, word)
            long_ = " ".join(phrase)
            out.setdefault(symbol, []).append(long_)
            out.setdefault(long_, []).append(symbol)
    return out


def with_abstract_aliases(alternates: dict[str, list[str]], abstract: str) -> dict[str, list[str]]:
    """Gold ``alternates`` extended with :func:`abstract_aliases` and :func:`symbol_aliases` (guideline
    ruling 6: an acronym or a symbol and the phrase the abstract gives for it are the same item), as a
    new dict; ``alternates`` is unchanged."""
    merged = {key: list(values) for key, values in alternates.items()}
    for aliases in (abstract_aliases(abstract), symbol_aliases(abstract)):
        for key, values in aliases.items():
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
    :func:`~paperfields.core.normalize.numbers_agree`), ``"converted"`` (one is a fraction of the
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
        if (
            percent.get("unit") == "percent"
            and _is_fraction(fraction, fraction_ends, text)
            and _ends_agree(_as_percent(fraction_ends), percent_ends)
        ):
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


# Unit labels that state one unit (scorer 3.5, from the judged stratified set #1): "points" of a score on a
# percent scale are percentage points (+2.26 EM "points" is +2.26 pp), and a unitless value ("0.91 success")
# may be labeled ``other`` or ``points``. ``percent`` is never one of them: a gain of 3.4% is not 3.4 pp.
UNIT_FAMILIES = (frozenset({"points", "percentage_points"}), frozenset({"points", "other"}))


def unit_compatible(pred: dict, gold: dict, text: Optional[str] = None) -> bool:
    """The units state the same quantity for a reader (:func:`unit_agrees`, two labels of one
    :data:`UNIT_FAMILIES` family, or a percent-scale score's points read as percent: :func:`_percent_scale`):
    the unit the headline's ``claim`` level asks."""
    if unit_agrees(pred, gold, text):
        return True
    return value_agreement(pred, gold, text) == "same" and _units_compatible(pred, gold, "same")


def _percent_scale(pred: dict, gold: dict) -> bool:
    """An absolute value above 1 of a measure on a percent scale (gold's metric of the accuracy family:
    accuracy, EM, F1, pass@k), labeled ``percent`` on one side and ``points`` on the other (scorer 3.6): a
    63.26 accuracy "in points" is 63.26%. Never a change (a gain of 3.4% is not 3.4 pp), a fraction (0.91
    "percent" is not a 0.91 success rate) or a score on another scale (a 4.59 PersonaGym score, a 70.3
    HealthBench score)."""
    if {pred.get("unit"), gold.get("unit")} != {"percent", "points"} or not _kind(pred) == _kind(gold) == "absolute":
        return False
    value = gold.get("value")
    if value is None or abs(float(value)) <= 1:
        return False
    return "acc" in {MEASURE_FAMILIES.get(w) for w in _metric_words(gold.get("metric"))}


def _units_compatible(pred: dict, gold: dict, agreement: Optional[str]) -> bool:
    if agreement == "converted":
        return pred.get("unit") in FRACTION_UNITS or gold.get("unit") in FRACTION_UNITS
    units = {pred.get("unit"), gold.get("unit")}
    return len(units) == 1 or any(units <= family for family in UNIT_FAMILIES) or _percent_scale(pred, gold)


def _kind(result: dict) -> str:
    return result.get("kind") or "absolute"


# Words of a metric slot that name no quantity: a placeholder, an aggregate, the change itself, a comparison
# ("outperforming the strongest baseline"), stray words. A metric made only of these (or of names and setting
# words, see :func:`metric_verdict`) leaves the quantity to the number.
UNNAMED_METRIC_WORDS = frozenset(
    PLACEHOLDER_METRICS
    | CHANGE_HEADS
    | NEUTRAL_MODIFIERS
    | STRAY_WORDS
    | {"avg", "result", "results", "value", "metric", "metrics", "outperforming", "outperforms", "strongest", "best"}
    | {"baseline", "baselines", "the", "of", "over", "than", "on", "in", "by"}
    | {"points", "point", "pp", "percent", "percentage", "times"}  # a unit says how, not what (scorer 3.6)
)
# Words that name a measured quantity, by family (scorer 3.5): a metric slot whose words hold one of these names
# that quantity, and it is another quantity than gold's when gold's metric holds no word of the same family
# ("accuracy" for a 23x wall-clock speedup; "difficulty" for a count of instances). "faster" is a speedup.
MEASURE_FAMILIES: dict[str, str] = {
    **dict.fromkeys(("accuracy", "acc", "correctness", "pass@1", "pass@k", "em", "f1", "precision", "recall"), "acc"),
    **dict.fromkeys(("speedup", "faster", "speed", "acceleration", "efficiency"), "speed"),
    **dict.fromkeys(("throughput",), "throughput"),
    **dict.fromkeys(("latency", "ttft", "time", "seconds"), "time"),
    **dict.fromkeys(("memory", "footprint"), "memory"),
    **dict.fromkeys(("loss", "perplexity", "ppl", "error"), "loss"),
    **dict.fromkeys(("cost", "price"), "cost"),
    **dict.fromkeys(("tokens", "token"), "tokens"),
    **dict.fromkeys(("parameters", "params"), "parameters"),
    **dict.fromkeys(("difficulty",), "difficulty"),
    **dict.fromkeys(("reward", "rewards"), "reward"),
    **dict.fromkeys(("utility",), "utility"),
    **dict.fromkeys(("feasibility",), "feasibility"),
    **dict.fromkeys(("overhead",), "overhead"),
}
# Families of measures that are not a score (scorer 3.6): a placeholder metric ("score", "performance") never
# stands for one of them ("score" is not a TTFT reduction, "performance" not a 1.82x training speedup).
NOT_SCORE_FAMILIES = frozenset({"speed", "throughput", "time", "memory", "cost", "tokens", "parameters", "overhead"})
# Head words of a metric slot that name where a number is measured, not what (scorer 3.6): "few-shot transfer",
# "out-of-distribution tasks", "task performance". A slot of plain words with another head ("upper-layer updates",
# "activation", "task-relevant signal") names something the number is not; a coined name (a benchmark's) does not.
SETTING_WORDS = frozenset(
    {"task", "tasks", "transfer", "setting", "settings", "benchmark", "benchmarks", "split"}
    | {"generation", "classification", "reasoning", "retrieval", "translation", "summarization"}
)
# A coined word: a capital after its first letter, a digit inside or an acronym ("HealthBench", "BBEH", "cifar10").
_COINED_WORD = re.compile(r"[^\W\d_][A-Z]|[^\W_]\d|\d[^\W\d_]|\b[A-Z]{2}")
# Words of a metric slot that are no word of a measure: the slot is empty however it is spelt ("null", "x" of 8x).
EMPTY_METRIC_WORDS = frozenset({"null", "none", "nan", "n", "a", "na", "x"})


def _metric_words(text: Optional[str]) -> list[str]:
    return [
        w
        for w in re.split(r"[^a-z0-9@]+", normalize(strip_markup(text or "").replace("_", " ").replace("-", " ")))
        if w
    ]


def metric_verdict(
    pred: dict,
    gold: dict,
    alternates: dict[str, list[str]],
    text: Optional[str] = None,
    golds: Sequence[dict] = (),
) -> str:
    """How a result's metric slot reads against gold's (scorer 3.5, the ``claim`` level): ``"same"`` (the
    same measure by :data:`METRIC_NAMES`, or the words of one contain the other's content words: "average
    pass rate" ~ "pass rate", "TTFT" ~ "TTFT speedup", "expert-designed problems" ~ "problems"), ``"other"``
    (it names another quantity: a word of a :data:`MEASURE_FAMILIES` family gold's metric has no word of),
    or ``"unnamed"`` (it names no quantity: a placeholder, a benchmark's or a setting's name, a fragment:
    "score", "HealthBench", "few-shot transfer", "EvoMAS also"), which the ``claim`` level accepts only when
    the number picks one gold result (see :class:`ResultPairs`).

    Scorer 3.6 reads three kinds as ``"other"``: a slot without a word (the number again, a sign, "null":
    '10.3", ', "+3.4", "%"), which says nothing of what is measured; a placeholder ("score", "performance")
    where gold's measure is not a score (:data:`NOT_SCORE_FAMILIES`: a latency, a speedup, an overhead, a
    memory or token count); and the name of a model or a compared method of the paper's gold results
    (``golds``: "Qwen2.5-32B-Instruct"), which says who scored, not what. A slot of plain words that is none of
    these and names no known measure, where gold's metric names one ("EM", "solver accuracy"; not a placeholder
    such as "score", which a reader's fuller wording may replace: "cross-domain generalization"), is ``"unnamed"``
    only when it shares a content word with gold's, its last content word is a setting (:data:`SETTING_WORDS`:
    "few-shot transfer", "out-of-distribution tasks") or it holds a coined name (a benchmark's: "HealthBench");
    otherwise it names something the number is not ("task-relevant signal" for EM) and is ``"other"``.

    Scorer 3.7: where gold's metric names no quantity (a placeholder: "performance", "score"), such a slot of plain
    words is ``"other"`` when the abstract writes every one of its words, none in a sentence that writes gold's
    number (:func:`_written_away_from_number`: "activation subspace bottlenecks", what the method targets, for an
    8.27% performance gain written in another sentence); a reader's wording of the number's own sentence stays
    ``"unnamed"`` ("cross-domain generalization" where that sentence writes it).

    Scorer 3.10: a slot whose content words (the last not a setting) share none with gold's metric and that names a
    quantity the abstract never writes (:func:`unwritten_metric`: "auc", "roc_auc" for a paper that reports only a
    gain in "performance") is ``"other"``, gold's metric a placeholder or not; a slot the abstract writes, as a phrase
    or word by word, is read as before."""
    predicted, wanted = pred.get("metric"), gold.get("metric")
    if same_name(predicted, wanted, alternates, METRIC_NAMES, text):
        return "same"
    p_all, g_all = _metric_words(predicted), _metric_words(wanted)
    if not [w for w in p_all if re.search(r"[a-z]", w) and w not in EMPTY_METRIC_WORDS]:
        return "other"
    if any(
        result.get(slot) and same_name(predicted, result[slot], alternates, MODELS, text)
        for result in golds
        for slot in ("model", "baseline")
    ):
        return "other"
    p_words = [w for w in p_all if w not in UNNAMED_METRIC_WORDS]
    g_words = [w for w in g_all if w not in UNNAMED_METRIC_WORDS]
    if p_words and g_words and (set(p_words) <= set(g_words) or set(g_words) <= set(p_words)):
        return "same"
    p_families = {MEASURE_FAMILIES[w] for w in p_all if w in MEASURE_FAMILIES}
    g_families = {MEASURE_FAMILIES[w] for w in g_all if w in MEASURE_FAMILIES}
    if p_families and not p_families & g_families:
        return "other"
    if p_families & g_families:
        return "same"
    if not p_words and set(p_all) & PLACEHOLDER_METRICS and g_families and g_families <= NOT_SCORE_FAMILIES:
        return "other"
    content = [w for w in p_words if not w.isdigit()]
    plain = (
        bool(content) and content[-1] not in SETTING_WORDS and not _COINED_WORD.search(strip_markup(predicted or ""))
    )
    if plain and g_words and not set(content) & set(g_words):
        return "other"
    if plain and not g_words and _written_away_from_number(content, gold, text):
        return "other"
    if (
        content
        and content[-1] not in SETTING_WORDS
        and not set(content) & set(g_words)
        and unwritten_metric(predicted, content, alternates, text, golds)
    ):
        return "other"  # a quantity the abstract never writes, gold's metric a placeholder or not (scorer 3.10)
    return "unnamed"


def unwritten_metric(
    predicted: str, content: Sequence[str], alternates: dict[str, list[str]], text: Optional[str], golds: Sequence[dict]
) -> bool:
    """A result's metric slot ``predicted``, with ``content`` its words that name something (the slot's words less
    :data:`UNNAMED_METRIC_WORDS` and bare numbers), is a quantity the abstract ``text`` never writes (scorer 3.10):
    :func:`~paperfields.core.locate.locate` grounds none of its accepted forms (the slot, its alternates, which hold
    the abstract's acronyms and their long forms, and its content words alone: "steering" of "steering
    performance"), some content word is written nowhere in the abstract (a Snowball stem, as
    :func:`_written_away_from_number` reads words), and it is no dataset of the paper's gold results (``golds``: a
    benchmark's name as the metric). "auc" or "ROC-AUC" for an abstract that writes neither (only "improves
    performance by 8.27%") names a quantity the paper does not report. The abbreviations of
    :data:`METRIC_ABBREVIATIONS` are words of a measure family, which :func:`metric_verdict` decides before. False
    without an abstract or without content words."""
    from paperfields.core.locate import locate

    if not text or not content:
        return False
    forms = {*accepted_forms(predicted, alternates), " ".join(content)}
    if any(form and locate(form, text).grounded for form in forms):
        return False
    if {_stem(w) for w in content} <= _written_stems(text):
        return False
    return not any(
        result.get("dataset") and same_name(predicted, result["dataset"], alternates, DATASETS, text)
        for result in golds
    )


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WRITTEN_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


@lru_cache(maxsize=1 << 10)
def _sentences(text: str) -> tuple[tuple[frozenset[str], frozenset[float]], ...]:
    """Each sentence of the abstract (split after ``.``, ``!`` or ``?`` and a space): the Snowball stems of its
    tokens and the numbers it writes."""
    out = []
    for sentence in _SENTENCE_END.split(strip_markup(text)):
        stems = frozenset(_stem(t) for word in _written_words(sentence) for t in word.split())
        numbers = frozenset(float(n.replace(",", "")) for n in _WRITTEN_NUMBER.findall(sentence))
        out.append((stems, numbers))
    return tuple(out)


@lru_cache(maxsize=1 << 10)
def _written_stems(text: str) -> frozenset[str]:
    """The Snowball stems of every token the abstract writes, over all its sentences (:func:`_sentences`)."""
    return frozenset().union(*(stems for stems, _ in _sentences(text)))


def _written_away_from_number(words: Sequence[str], gold: dict, text: Optional[str]) -> bool:
    """Every one of ``words`` (a metric slot's content words) is written in the abstract, and none in a sentence
    that writes gold's number (scorer 3.7): the slot holds what the paper says elsewhere (what its method targets,
    "activation subspace bottlenecks"; what a finding is about, "lower-layer updates"), not what the number
    measures. False without the abstract, or when no sentence writes the number."""
    value = gold.get("value")
    if not text or value is None:
        return False
    sentences = _sentences(text)
    at_number = [stems for stems, numbers in sentences if any(abs(n - abs(float(value))) < 1e-9 for n in numbers)]
    if not at_number:
        return False
    stems = {_stem(w) for w in words}
    return stems <= _written_stems(text) and not any(stems & s for s in at_number)


CONTEXT_SLOTS = ("dataset", "model", "baseline")
# Plural nouns that make a context a class of things, not one of them (scorer 3.6): "large reasoning models",
# "models without meta-knowledge", "strong learned selection baselines" name no particular model or method.
CLASS_WORDS = frozenset(
    {"models", "llms", "methods", "baselines", "approaches", "systems", "agents", "variants", "techniques"}
)


# Plural nouns that make a dataset slot a class of benchmarks, not one of them (scorer 3.8): "evaluation_benchmarks".
DATASET_CLASS_WORDS = frozenset({"benchmarks", "datasets"})


def _names_a_class(name: str, words: frozenset[str] = CLASS_WORDS) -> bool:
    """A context written as a class (a word of ``words``, :data:`CLASS_WORDS` by default, no coined name: no capital
    after the first letter, no digit), which never contradicts a named gold context: it leaves the particular one
    unsaid."""
    written = strip_markup(name)
    return bool(set(_metric_words(written)) & words) and not re.search(r"\d|\w[A-Z]|\b[A-Z]{2}", written)


def _content_words(name: str) -> frozenset[str]:
    return frozenset(_metric_words(name)) - STRAY_WORDS - GENERIC_NAME_WORDS - {"the", "of", "with", "on", "in"}


def _names_agree(a: str, b: str, slot: str, alternates: dict[str, list[str]], text: Optional[str]) -> bool:
    return same_name(a, b, alternates, RESULT_NAME_RULES[slot], text)


def context_agrees(
    pred: dict, gold: dict, golds: Sequence[dict], alternates: dict[str, list[str]], text: Optional[str] = None
) -> bool:
    """No context of the prediction contradicts gold's (scorer 3.5, the ``claim`` level): a context left out
    (a null dataset, model or baseline) never contradicts. A named one contradicts when gold names another
    in that slot (no content word shared: "UltraFeedback" for "AlpacaEval 2.0"; "MoE with EP" for "EP"
    shares one), or when it is gold's name of another slot where the roles clash (the compared method put
    in the model slot, as if it scored the number: "LMDeploy"), or when gold leaves the slot empty and the
    paper's gold results (``golds``) hold that name only in another role (a dataset or a model written as
    the compared method), or when the prediction writes one name in two slots (model and baseline "GRPO").
    A name of gold's other slot is otherwise the same context, misplaced ("GPT-4o" as dataset where gold
    has it as model), and a backbone written as the baseline ("ConRAD over GPT-5" where gold's model is
    GPT-5) makes the model slot the method's, not a contradiction. One filler written as the dataset and as a
    model or baseline contradicts (the tuple names no context of the paper's), except a class of benchmarks
    (scorer 3.8, :data:`DATASET_CLASS_WORDS`: "evaluation_benchmarks" in every slot), which names no particular
    one and is read as left out wherever it is written."""
    named = {s: pred.get(s) for s in CONTEXT_SLOTS if pred.get(s)}
    if named.get("dataset") and any(
        normalize(named["dataset"]) == normalize(named[s]) for s in ("model", "baseline") if s in named
    ):
        if not _names_a_class(named["dataset"], DATASET_CLASS_WORDS):
            return False  # one filler as the benchmark and as the system scored on it: no context at all
        filler = normalize(named["dataset"])  # a class of benchmarks in every slot it fills: left out (scorer 3.8)
        named = {s: name for s, name in named.items() if normalize(name) != filler}
    model, baseline = named.get("model"), named.get("baseline")
    if model and baseline and normalize(model) == normalize(baseline):
        # the model's name again as the baseline: redundant where gold's model is that name (the copy names no
        # other method); the compared method as the model still says it scored the number (see below)
        if gold.get("model") and _names_agree(model, gold["model"], "model", alternates, text):
            del named["baseline"]
    if (
        gold.get("qualifier") == "average"
        and not gold.get("dataset")
        and named.get("dataset")
        and _COINED.fullmatch(strip_markup(named["dataset"]).strip())
    ):
        return False  # a number averaged over benchmarks, tied to one named benchmark
    backbone = bool(named.get("baseline") and gold.get("model")) and _names_agree(
        named["baseline"], gold["model"], "model", alternates, text
    )
    for slot, name in named.items():
        wanted = gold.get(slot)
        if wanted and _names_agree(name, wanted, slot, alternates, text):
            continue
        if slot != "dataset" and _names_a_class(name):
            continue
        elsewhere = [
            other
            for other in CONTEXT_SLOTS
            if other != slot and gold.get(other) and _names_agree(name, gold[other], other, alternates, text)
        ]
        if elsewhere:
            if slot == "model" and elsewhere == ["baseline"]:
                return False
            continue
        if slot == "model" and backbone:
            continue
        if wanted:
            if not _content_words(name) & _content_words(wanted):
                return False
            continue
        if slot in ("model", "baseline"):
            roles = {
                other
                for result in golds
                for other in CONTEXT_SLOTS
                if result.get(other) and _names_agree(name, result[other], other, alternates, text)
            }
            if roles and slot not in roles:
                return False
    return True


RESULT_LEVELS: dict[str, Callable[[dict, dict, dict, Optional[str]], bool]] = {
    "value": lambda p, g, alt, text: same_value(p, g, text),
    "value_metric": lambda p, g, alt, text: (
        same_value(p, g, text) and same_name(p.get("metric"), g.get("metric"), alt, METRIC_NAMES, text)
    ),
    "full": lambda p, g, alt, text: (
        same_value(p, g, text)
        and all(same_name(p.get(k), g.get(k), alt, rule, text) for k, rule in RESULT_NAME_RULES.items())
        and p.get("kind") == g.get("kind")
        and _same_qualifier(p, g)
        and unit_agrees(p, g, text)
    ),
    # the headline's level (scorer 3.5); on one pair, without the paper's other gold results (see ResultPairs)
    "claim": lambda p, g, alt, text: (
        same_value(p, g, text)
        and unit_compatible(p, g, text)
        and _kind(p) == _kind(g)
        and metric_verdict(p, g, alt, text, [g]) != "other"
        and context_agrees(p, g, [g], alt, text)
    ),
}


RESULT_ATTRIBUTES = ("metric", "unit", "kind", "qualifier", "dataset", "model", "baseline")


def attribute_agrees(
    pred: dict, gold: dict, attribute: str, alternates: dict[str, list[str]], text: Optional[str] = None
) -> bool:
    """One attribute of a matched result pair agrees (names by :func:`same_name`, the unit by
    :func:`unit_agrees`, a missing qualifier read as ``exact``, other enums exactly)."""
    if attribute in RESULT_NAME_RULES:
        return same_name(pred.get(attribute), gold.get(attribute), alternates, RESULT_NAME_RULES[attribute], text)
    if attribute == "unit":
        return unit_agrees(pred, gold, text)
    if attribute == "qualifier":
        return _same_qualifier(pred, gold)
    return pred.get(attribute) == gold.get(attribute)


@dataclass(frozen=True)
class ResultPairs:
    """Every (prediction, gold) pair of two result lists judged once: ``value`` (bool, shape (n_pred,
    n_gold)) whether the values agree (:func:`value_agreement`), ``attributes`` (attribute -> bool
    (n_pred, n_gold)) whether each of :data:`RESULT_ATTRIBUTES` agrees (:func:`attribute_agrees`).
    Each level of :data:`RESULT_LEVELS` and the tie-breaking weight of :func:`align_results` are read
    from them, so a paper's three levels and its diagnostics judge each pair once."""

    value: np.ndarray
    attributes: dict[str, np.ndarray]
    number: Optional[np.ndarray] = None
    metric: Optional[np.ndarray] = None
    context: Optional[np.ndarray] = None

    def claim(self) -> np.ndarray:
        """The pairs that agree at the headline's ``claim`` level (scorer 3.5, bool (n_pred, n_gold)): the
        same number (value, a compatible unit: :func:`unit_compatible`, the same kind), no context that
        contradicts gold's (:func:`context_agrees`), and the same metric, or a metric that names no quantity
        (:func:`metric_verdict` ``"unnamed"``) when that number picks one gold result of the paper."""
        unnamed_ok = (self.number.sum(axis=1, keepdims=True) == 1) & (self.metric == 1)
        return self.number & self.context & ((self.metric == 2) | unnamed_ok)

    def allowed(self, level: str) -> np.ndarray:
        """The pairs that agree at ``level`` (``value``, ``value_metric``, ``claim`` or ``full``, as
        :data:`RESULT_LEVELS`). Raises KeyError for another level."""
        if level == "value":
            return self.value
        if level == "value_metric":
            return self.value & self.attributes["metric"]
        if level == "claim":
            return self.claim()
        if level == "full":
            return self.value & np.logical_and.reduce([self.attributes[a] for a in RESULT_ATTRIBUTES])
        raise KeyError(f"result level '{level}' is not one of {', '.join(RESULT_LEVELS)}")

    @property
    def weight(self) -> np.ndarray:
        """How many attributes each pair agrees on (float, (n_pred, n_gold)): breaks ties among matchings."""
        return np.sum([self.attributes[a] for a in RESULT_ATTRIBUTES], axis=0, dtype=float)


@_same_objects(64)
def result_pairs(
    predicted: list[dict], gold: list[dict], alternates: dict[str, list[str]], text: Optional[str] = None
) -> ResultPairs:
    """Judge every (prediction, gold) pair of result tuples (see :class:`ResultPairs`); ``text`` is the
    abstract, for the written precision of numbers (:func:`value_agreement`)."""
    shape = (len(predicted), len(gold))
    value = np.zeros(shape, dtype=bool)
    attributes = {a: np.zeros(shape, dtype=bool) for a in RESULT_ATTRIBUTES}
    number = np.zeros(shape, dtype=bool)
    metric = np.zeros(shape, dtype=np.int8)  # 0 another quantity, 1 unnamed, 2 the same (metric_verdict)
    context = np.zeros(shape, dtype=bool)
    for i, p in enumerate(predicted):
        for j, g in enumerate(gold):
            agreement = value_agreement(p, g, text)
            value[i, j] = agreement is not None
            if agreement is not None:
                number[i, j] = _units_compatible(p, g, agreement) and _kind(p) == _kind(g)
                if number[i, j]:
                    verdict = metric_verdict(p, g, alternates, text, gold)
                    metric[i, j] = {"other": 0, "unnamed": 1, "same": 2}[verdict]
                    context[i, j] = context_agrees(p, g, gold, alternates, text)
            for attribute in RESULT_ATTRIBUTES:
                if attribute == "unit":  # unit_agrees, with the value agreement already judged
                    agrees = (
                        p.get("unit") in FRACTION_UNITS or g.get("unit") in FRACTION_UNITS
                        if agreement == "converted"
                        else p.get("unit") == g.get("unit")
                    )
                else:
                    agrees = attribute_agrees(p, g, attribute, alternates, text)
                attributes[attribute][i, j] = agrees
    for array in (value, number, metric, context, *attributes.values()):
        array.setflags(write=False)
    return ResultPairs(value, attributes, number, metric, context)


def align_results(
    predicted: list[dict], gold: list[dict], alternates: dict[str, list[str]], level: str, text: Optional[str] = None
) -> list[tuple[int, int]]:
    """Matched (pred, gold) index pairs of result tuples at a level: ``value``, ``value_metric`` or
    ``full`` (value, metric, dataset, model, baseline, kind, qualifier and unit). One-to-one, maximum
    matching; among matchings of equal size, the one agreeing on most attributes. ``text`` is the
    abstract, for the written precision of numbers (:func:`value_agreement`)."""
    if not predicted or not gold:
        return []
    pairs = result_pairs(predicted, gold, alternates, text)
    return assign(pairs.allowed(level), pairs.weight)


def match_results(
    predicted: list[dict], gold: list[dict], alternates: dict[str, list[str]], level: str, text: Optional[str] = None
) -> tuple[int, int, int]:
    """(tp, fp, fn) of result tuples at a level (see :func:`align_results`)."""
    tp = len(align_results(predicted, gold, alternates, level, text))
    return tp, len(predicted) - tp, len(gold) - tp
