"""Grounding: where a predicted item is written in its abstract. The one rule for "found in the abstract".

:func:`locate` maps an item (a string of a field, a result's number, a URL, an evidence quote) to
its character spans in the abstract and a match status, as langextract keeps ``char_interval`` and
``alignment_status`` on an extraction:

- ``exact``: the item is written as is, at word boundaries;
- ``normalized``: it is written once both sides go through :func:`~paperfields.core.normalize.normalize`
  (case, dashes, hyphens as spaces, LaTeX, Greek letters, Unicode format characters, a version
  glued to its name or not), still starting and ending at word boundaries; the last word may carry
  a plural ``s``/``es`` ("LLM" is written in "LLMs");
- ``fuzzy``: not written, but a stretch of the abstract is close (rapidfuzz partial ratio of the
  normalized forms at least :data:`FUZZY_THRESHOLD`, items of :data:`FUZZY_MIN_CHARS` characters or more):
  a near-miss such as a typo or a paraphrased quote, reported apart and never counted as grounded;
- ``not_found``.

An item is *grounded* when its status is ``exact`` or ``normalized``. Words are atoms: a run of
letters and digits (with a decimal or thousands part: ``Qwen2.5``, ``35,368``), a ``$...$`` math
span, a LaTeX command, or one other character. So "SWE" is not found in "SWEET" nor "GPT-4" in
"GPT-4o", while "SWE bench verified" is found in "SWE-bench Verified" and ``$\\tau^2$-Bench`` in "τ²-Bench".

A number (a result's value, sign ignored) is grounded when an atom writes it
(:func:`~paperfields.core.normalize.written_numbers`: "35,368", "1.5M", "56.61\\%"), digits inside
a word included ("Qwen2.5" writes 2.5). A URL is grounded only when the whole URL, trailing
punctuation trimmed, equals a URL written in the abstract (after
:func:`~paperfields.core.normalize.normalize_url`): never a piece of one, never a plain word.

:func:`ground_record` locates every item of a record (:data:`GROUNDED_FIELDS`) and, for an evidence
run, each item's quote. The runner stores the result on each prediction line; the scorer, the
evidence filter, ``show`` and ``report`` read it.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate, compress, count
from operator import add
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field
from rapidfuzz import fuzz

from paperfields.core.fields import record_fields
from paperfields.core.normalize import normalize, normalize_url, same_number, strip_markup, written_numbers
from paperfields.core.schema import PaperRecord

LOCATOR_VERSION = "1"  # stored with each grounding: a line located by another version is located again when read
FUZZY_THRESHOLD = 90.0  # rapidfuzz partial_ratio (0-100) of the normalized forms: about one edit in ten characters
FUZZY_MIN_CHARS = 8  # shorter items are not fuzzy-located: one edit in a short name is another name (AIME24, AIME25)
GROUNDED_FIELDS = tuple(f.name for f in record_fields(PaperRecord) if f.facts.grounded)  # as the schema's facts say
GROUNDED_STATUSES = ("exact", "normalized")

Status = Literal["exact", "normalized", "fuzzy", "not_found"]

# One atom: a LaTeX command (\tau, \mathrm) or escaped symbol (\%); letters and digits with any
# decimal or thousands parts ("Qwen2.5", "35,368", "1.5M"); or one other visible character ("$", "{", "-").
_ATOM = re.compile(r"\\[A-Za-z]+|\\.|[^\W_]+(?:(?<=\d)[.,]\d[^\W_]*)*|[^\s]")
_OPENERS, _CLOSERS = "([{", ")]}"
_PLURALS = ("", "s", "es")
# A URL as written: with a scheme, or a bare domain whose last label is letters ("causalgame.github.io");
# it ends before whitespace, quotes and brackets, and trailing sentence punctuation is trimmed.
_URL = re.compile(
    r"(?:[a-z][a-z0-9+.-]*://|www\.)[^\s\"'<>()\[\]{}]+"
    r"|(?<![\w@./\\-])[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}(?![\w-])(?:/[^\s\"'<>()\[\]{}]*)?",
    re.I,
)
_URL_TAIL = ".,;:!?*`'\")]}>"


class Location(BaseModel):
    """Where one item is written in the abstract.

    ``spans`` are character offsets ``[start, end)`` into the abstract, one per occurrence, in order
    (empty when ``not_found``; a ``fuzzy`` location has the one closest stretch). ``metric`` is set
    for a result (where its metric is written; None when it has none), ``quote`` for an item of an
    evidence run (where its supporting quote is written).
    """

    item: str = Field(description="the item as predicted: the string, a result's value as str(value), the URL")
    spans: list[tuple[int, int]] = Field(
        default_factory=list, description="[start, end) character offsets in the abstract"
    )
    status: Status
    metric: Optional[Location] = Field(default=None, description="results: where the metric is written")
    quote: Optional[Location] = Field(default=None, description="evidence strategy: where the item's quote is written")

    @property
    def grounded(self) -> bool:
        """True when the item is written in the abstract (``exact`` or ``normalized``) and so is a
        result's metric, when it has one. The quote plays no part."""
        return self.status in GROUNDED_STATUSES and (self.metric is None or self.metric.grounded)


class Grounding(BaseModel):
    """Every located item of one record: field -> one :class:`Location` per item, in record order
    (results: one per result, its value's location with the metric's under ``metric``).

    ``locator`` and ``abstract_sha256`` say what it was computed with; :meth:`fits` tells whether it
    still holds for a record and abstract."""

    locator: str = LOCATOR_VERSION
    abstract_sha256: str = Field(description="first 12 hex of the sha256 of the abstract located in")
    fields: dict[str, list[Location]] = Field(default_factory=dict)

    def fits(self, record: Optional[dict[str, Any]], abstract: str, model: type[BaseModel] = PaperRecord) -> bool:
        """True when this grounding was made by this locator, for ``abstract``, and lists exactly the
        items of ``record`` (a ``model`` dict; a hand-edited line, or a changed corpus, is located again)."""
        return (
            self.locator == LOCATOR_VERSION
            and self.abstract_sha256 == abstract_digest(abstract)
            and {f: [loc.item for loc in locs] for f, locs in self.fields.items()} == _items(record or {}, model)
        )

    def of(self, field: str) -> dict[str, Location]:
        """``field``'s locations by item (the first, for an item listed twice)."""
        out: dict[str, Location] = {}
        for loc in self.fields.get(field, []):
            out.setdefault(loc.item, loc)
        return out


def abstract_digest(abstract: str) -> str:
    """First 12 hex of the sha256 of the abstract's UTF-8 bytes."""
    return hashlib.sha256(abstract.encode("utf-8")).hexdigest()[:12]


def value_item(value: Any) -> str:
    """The item string of a result value: ``str(float)`` ("56.61", "3.0")."""
    return str(float(value))


# Per-abstract indexes, built once per abstract and shared by every item of a record (the runner
# grounds each new abstract once, so rebuilding them per item was most of the grounding's cost).
# They hold flat tuples of ints and strings, not a tuple or match object per atom: hundreds of
# container objects kept per abstract made the garbage collector run, inside the grounding, over
# everything the HTTP client had allocated meanwhile (over half the grounding's time in a run).
@lru_cache(maxsize=256)
def _tokens(abstract: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[str, ...]]:
    """Where each atom starts, where it ends, and its text, in order."""
    texts = tuple(_ATOM.findall(abstract))
    starts = tuple(map(re.Match.start, _ATOM.finditer(abstract)))
    return starts, tuple(map(add, starts, map(len, texts))), texts


@lru_cache(maxsize=256)
def _bounds(abstract: str) -> tuple[frozenset[int], frozenset[int]]:
    """Where the abstract's atoms start and where they end."""
    starts, ends, _ = _tokens(abstract)
    return frozenset(starts), frozenset(ends)


@lru_cache(maxsize=256)
def _heads(abstract: str) -> tuple[str, ...]:
    """Each atom's normalization, in atom order."""
    return tuple(map(normalize, _tokens(abstract)[2]))


@lru_cache(maxsize=256)
def _fuzzy_text(abstract: str) -> tuple[str, list[int], list[int]]:
    """The abstract's atoms normalized one by one and joined by spaces, where each piece starts in
    that text, and the atom each piece comes from."""
    heads = _heads(abstract)
    owners = [index for index, head in enumerate(heads) if head]
    pieces = [heads[index] for index in owners]
    return " ".join(pieces), list(accumulate((len(piece) + 1 for piece in pieces[:-1]), initial=0)), owners


@lru_cache(maxsize=256)
def _number_atoms(abstract: str) -> tuple[tuple[int, int, str, tuple[tuple[float, int], ...]], ...]:
    """(start, end, text, written numbers) of every atom holding a digit."""
    out = []
    for start, end, atom in zip(*_tokens(abstract)):
        # str.isdigit, not \d: a superscript "²" writes 2 too; a word of letters holds none
        if not atom.isalpha() and any(ch.isdigit() for ch in atom):
            out.append((start, end, atom, written_numbers(atom)))
    return tuple(out)


@lru_cache(maxsize=256)
def _urls(abstract: str) -> tuple[tuple[int, int, str], ...]:
    """(start, end, normalize_url key) of every URL written in the abstract, trailing punctuation trimmed."""
    out = []
    for m in _URL.finditer(abstract):  # an escaped \_ stays in the span; normalize_url reads it as "_"
        raw = m.group(0)
        trimmed = raw.rstrip(_URL_TAIL)
        if trimmed:
            out.append((m.start(), m.start() + len(trimmed), normalize_url(trimmed)))
    return tuple(out)


def _balanced(abstract: str, i: int, j: int) -> tuple[int, int]:
    """The span of atoms i..j widened so that it does not cut a math span or a bracket in two: over
    the ``$`` next to it when it holds an odd number of them ("$\\tau^2$-Bench", not "\\tau^2$-Bench"),
    then over the closing brackets that its opening brackets wait for ("Full Name (ACR)")."""
    starts, ends, texts = _tokens(abstract)
    atom = lambda k: texts[k] if 0 <= k < len(texts) else ""  # noqa: E731
    if abstract.count("$", starts[i], ends[j]) % 2:
        if atom(i - 1) == "$":
            i -= 1
        elif atom(j + 1) == "$":
            j += 1
    window = abstract[starts[i] : ends[j]]
    missing = sum(window.count(o) - window.count(c) for o, c in zip(_OPENERS, _CLOSERS))
    while missing > 0 and atom(j + 1) and atom(j + 1) in _CLOSERS:
        j += 1
        missing -= 1
    return starts[i], ends[j]


def _word_spans(item: str, abstract: str) -> list[tuple[int, int]]:
    """Spans of ``item`` written as is, starting where an atom starts and ending where one ends."""
    starts, ends = _bounds(abstract)
    spans, at = [], abstract.find(item)
    while item and at >= 0:
        if at in starts and at + len(item) in ends:
            spans.append((at, at + len(item)))
            at = abstract.find(item, at + len(item))
        else:
            at = abstract.find(item, at + 1)
    return spans


def _normalized_spans(key: str, abstract: str) -> list[tuple[int, int]]:
    """Spans of the shortest atom windows whose normalization is ``key`` (or ``key`` plus a plural
    ending), not overlapping, first first."""
    starts, ends, _ = _tokens(abstract)
    targets = {key + s for s in _PLURALS}
    # the atoms a window can start at: those whose normalization is a prefix of the key, or a target
    starters = {key[:n] for n in range(1, len(key) + 1)} | targets
    candidates = compress(count(), map(starters.__contains__, _heads(abstract)))
    found: list[tuple[int, int]] = []
    for i in candidates:
        start = starts[i]
        if found and start < found[-1][1]:
            continue
        for j in range(i, len(starts)):
            window = normalize(abstract[start : ends[j]])
            if window in targets:
                found.append(_balanced(abstract, i, j))
                break
            if window and not key.startswith(window):
                break
    return found


def _fuzzy_span(key: str, abstract: str) -> Optional[tuple[int, int]]:
    """The stretch of ``abstract`` whose normalized words are closest to ``key`` when the rapidfuzz
    partial ratio reaches FUZZY_THRESHOLD, else None."""
    text, offsets, owners = _fuzzy_text(abstract)
    if not text:
        return None
    found = fuzz.partial_ratio_alignment(key, text, score_cutoff=FUZZY_THRESHOLD)
    if found is None or found.dest_end <= found.dest_start:
        return None
    # the atom a character of text comes from (a space between pieces: the next piece's, as at + 1 is)
    owner = lambda at: owners[bisect_right(offsets, at + 1) - 1]  # noqa: E731
    starts, ends, _ = _tokens(abstract)
    return starts[owner(found.dest_start)], ends[owner(found.dest_end - 1)]


def locate(item: str, abstract: str) -> Location:
    """Where the string ``item`` is written in ``abstract`` (see the module docstring for the statuses).

    ``locate("SWE bench verified", "... on SWE-bench Verified.")`` is ``normalized`` with the span of
    "SWE-bench Verified"; ``locate("SWE", "SWEET")`` is ``not_found``. Empty items are ``not_found``."""
    text = item.strip() if isinstance(item, str) else ""
    if not text:
        return Location(item=item or "", status="not_found")
    spans, status = _where(text, abstract)
    return Location(item=item, spans=list(spans), status=status)


# Pure in its two strings, and every run of a board asks it about the same items of the same abstracts: searched
# once (a fresh Location is built per call, as a caller may set its quote).
@lru_cache(maxsize=1 << 14)
def _where(text: str, abstract: str) -> tuple[tuple[tuple[int, int], ...], Status]:
    """(spans, status) of the stripped, non-empty ``text`` in ``abstract``, as :func:`locate` gives them."""
    spans = _word_spans(text, abstract)
    if spans:
        return tuple(spans), "exact"
    key = normalize(text)
    if key:
        spans = _normalized_spans(key, abstract)
        if spans:
            return tuple(spans), "normalized"
        if len(key) >= FUZZY_MIN_CHARS:
            near = _fuzzy_span(key, abstract)
            if near:
                return (near,), "fuzzy"
    return (), "not_found"


def locate_number(value: float, abstract: str) -> Location:
    """Where the number ``value`` (sign ignored) is written in ``abstract``: every atom that writes it
    (``exact`` when one is written plainly as ``str(value)`` or as an integer, else ``normalized``:
    "35,368", "1.5M", a number inside a word). Numbers agree as
    :func:`~paperfields.core.normalize.same_number` without a text: equal to their float's decimals."""
    target = abs(float(value))
    plain = {value_item(target), f"{target:g}"} | ({str(int(target))} if target.is_integer() else set())
    spans, exact = [], False
    for start, end, atom, numbers in _number_atoms(abstract):
        if any(same_number(target, n) for n, _ in numbers):
            spans.append((start, end))
            exact = exact or atom in plain
    return Location(
        item=value_item(value), spans=spans, status=("exact" if exact else "normalized") if spans else "not_found"
    )


def locate_url(url: str, abstract: str) -> Location:
    """Where the URL ``url`` is written in ``abstract``: a URL of the abstract (trailing punctuation
    trimmed) equal to it after :func:`~paperfields.core.normalize.normalize_url` (``exact`` when
    also equal as written). A URL that is only part of one written there, or a plain word, is ``not_found``."""
    text = (url or "").strip().rstrip(_URL_TAIL)
    key = normalize_url(text) if text else ""
    if not key or not _URL.fullmatch(strip_markup(text)):
        return Location(item=url or "", status="not_found")
    hits = [(s, e) for s, e, k in _urls(abstract) if k == key]
    if not hits:
        return Location(item=url, status="not_found")
    exact = any(abstract[s:e] == text for s, e in hits)
    return Location(item=url, spans=hits, status="exact" if exact else "normalized")


def locate_result(result: dict[str, Any], abstract: str) -> Location:
    """A result's value located as a number, with its metric (when it has one) located under ``metric``."""
    where = locate_number(result.get("value", 0.0), abstract)
    metric = result.get("metric")
    if metric:
        where.metric = locate(metric, abstract)
    return where


def _located_values(record: dict[str, Any], model: type[BaseModel]) -> dict[str, tuple[str, list[Any]]]:
    """Grounded field -> (how it is located, its values to locate) of a record, for the fields the
    facts of ``model`` mark grounded, in schema order (empty fields left out): the string, the strings
    of a list, a URL, the results with a value."""
    out: dict[str, tuple[str, list[Any]]] = {}
    for field in record_fields(model):
        how, value = field.facts.grounded, record.get(field.name)
        if how is None:
            continue
        values = (value or []) if field.is_list else ([value] if value else [])
        if how == "number":
            values = [r for r in values if isinstance(r, dict) and r.get("value") is not None]
        else:
            values = [v for v in values if isinstance(v, str)]
        if values:
            out[field.name] = (how, values)
    return out


def _items(record: dict[str, Any], model: type[BaseModel] = PaperRecord) -> dict[str, list[str]]:
    """Field -> item strings of a record, as :class:`Grounding` keys them (empty fields left out)."""
    return {
        field: [value_item(v["value"]) if how == "number" else v for v in values]
        for field, (how, values) in _located_values(record, model).items()
    }


_LOCATORS = {"text": locate, "url": locate_url, "number": locate_result}


def ground_record(
    record: Optional[dict[str, Any]],
    abstract: str,
    quotes: Sequence[dict[str, Any]] = (),
    model: type[BaseModel] = PaperRecord,
) -> Grounding:
    """Locate every item of a record (a ``model`` dict, PaperRecord by default; None for a failed
    paper) in ``abstract``, each grounded field as its facts say (text, a URL, a result's number).

    ``quotes`` (an evidence run's ``notes["quotes"]``: ``{"field", "item", "quote"}`` per kept item)
    are located too, each under its item's ``quote``."""
    record = record or {}
    by_item: dict[tuple[Any, Any], Any] = {}
    for q in quotes:
        if isinstance(q, dict):
            by_item.setdefault((q.get("field"), q.get("item")), q.get("quote"))
    fields: dict[str, list[Location]] = {}
    for field, (how, values) in _located_values(record, model).items():
        fields[field] = [_LOCATORS[how](value, abstract) for value in values]
        for loc in fields[field]:
            quote = by_item.get((field, loc.item))
            if quote:
                loc.quote = locate(quote, abstract)
    return Grounding(abstract_sha256=abstract_digest(abstract), fields=fields)


def marks(grounding: Grounding) -> list[tuple[int, int, str]]:
    """Every grounded span of a grounding as ``(start, end, what)``, ``what`` being ``"item"`` (an
    item, a result's value or its metric) or ``"quote"`` (an evidence quote)."""
    out: list[tuple[int, int, str]] = []
    for locations in grounding.fields.values():
        for loc in locations:
            for part in (loc, loc.metric):
                if part is not None and part.status in GROUNDED_STATUSES:
                    out += [(s, e, "item") for s, e in part.spans]
            if loc.quote is not None and loc.quote.status in GROUNDED_STATUSES:
                out += [(s, e, "quote") for s, e in loc.quote.spans]
    return out
