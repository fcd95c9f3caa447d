"""Prompt strategies: turn a paper into chat messages and the model's answers into one record.

A strategy is a TOML file in ``prompts/`` (validated on load): ``name``, ``version``,
``description``, ``kind``, Jinja2 ``system`` and ``user`` templates, and per kind ``examples``/``k``
(few-shot: dev-split paper ids) or ``samples``/``temperature`` (self-consistency). Every prompt
includes the one field guide, ``prompts/field_guide.jinja`` (few-shot sets its own contribution-types
line, ``contribution_types_guide``). The sha256 of the file and of what it includes
(:func:`prompt_sha256`) and the example ids go into the run manifest, so a changed prompt or guide
never passes silently as the old one. The paper always comes
last, so engines that cache a shared prompt prefix reuse it.

A kind is a :class:`Kind` subclass registered with :func:`kind`: what the model is asked to fill,
which extra templates the file holds, and how it asks, round by round (:meth:`Kind.conversation`
yields a round's requests and is sent their answers; :class:`Rounds` drives it for the runner, the
batch path and the inspect solver alike), and how the answers become one record. The built-in kinds:
- ``zero_shot``: instructions and the field guide, then the abstract.
- ``few_shot``: the same, with k worked examples (abstract -> gold record) from the dev split, never
  the paper itself; refused when the scored split is not ``test`` (a corpus of one's own, checked by
  the caller to hold no dev abstract, passes ``split=None``).
- ``reasoning_first``: the model writes a free-text ``reasoning`` field before the record; it is
  dropped before scoring.
- ``evidence``: every list item and result carries a ``quote`` from the abstract; items whose quote
  is not in the abstract (:func:`paperfields.core.locate.locate`) are dropped. ``notes`` keeps
  ``quotes`` (``{"field", "item", "quote"}`` per kept item; a result's item is ``str(value)``),
  ``unquoted`` (the dropped ones, same shape) and ``dropped_unquoted`` (their count).
- ``self_consistency``: ``samples`` answers at ``temperature`` > 0, combined by field-wise majority
  vote (Wang et al. 2023, "Self-Consistency Improves Chain of Thought Reasoning").
- ``confidence``: after the record, a ``confidence`` object with one number in [0, 1] per field: how
  sure the model is that the field is right. Moved to ``notes["confidence"]`` (scored for calibration by
  scoring/calibration.py), never part of the scored record.

Whatever the kind, notes a backend adds to a single answer (the local backend's per-field
``logprob_confidence``) are kept in the line's notes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Annotated, Any, ClassVar, Optional, TypeVar

import jinja2
import jinja2.meta
import tomllib
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from paperfields.core.corpus import Paper, decode_utf8
from paperfields.core.errors import InputError, field_error
from paperfields.core.fields import record_fields
from paperfields.core.locate import locate, value_item
from paperfields.core.paths import gold_dir, prompts_dir
from paperfields.core.runlog import FailureClass, Generation, GenerationParams, Usage
from paperfields.core.schema import PaperRecord, Result, reply_items
from paperfields.extract.backends.base import GenerationRequest


class PromptError(InputError):
    """A prompt file that is missing, invalid, or inconsistent with the gold (names file and field)."""


class PromptTemplate(BaseModel):
    """A validated prompt file (unknown keys are refused: a misspelled ``temprature`` must not pass)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    description: str = ""
    kind: str = Field(
        default="zero_shot", description="a registered kind (kinds()): how the strategy asks and combines"
    )
    system: str
    user: str
    examples: list[str] = Field(default_factory=list, description="few_shot: dev paper ids, in order of use")
    k: int = Field(default=0, ge=0)
    samples: int = Field(default=1, ge=1)
    temperature: Optional[float] = Field(default=None, ge=0)


def prompt_sha256(raw: bytes, included: list[Path], path: Path) -> str:
    """The prompt's fingerprint for the run manifest: sha256 of the prompt file's bytes followed by the
    bytes of each file it includes (``{% include "field_guide.jinja" %}``), in order of first use, so
    a changed field guide changes every prompt that includes it. Raises PromptError naming ``path``
    when an included file is missing."""
    digest = hashlib.sha256(raw)
    for part in included:
        if not part.is_file():
            raise PromptError(f"{path}: includes {part.name}, which is not in {part.parent}")
        digest.update(part.read_bytes())
    return digest.hexdigest()


def compact(record: dict[str, Any]) -> str:
    """A record as compact JSON (no whitespace): fewer output tokens for the model to copy."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


_RECORD_CONFIG = ConfigDict(extra="ignore", use_enum_values=True)

ReasoningRecord = create_model(  # reasoning first, so the model thinks before it commits to fields
    "ReasoningRecord",
    __config__=_RECORD_CONFIG,
    reasoning=(
        str,
        Field(description="Brief notes: the main contribution, what is named, which numbers are reported."),
    ),
    **{name: (f.annotation, f) for name, f in PaperRecord.model_fields.items()},
)


class Quoted(BaseModel):
    """A list item with the abstract span that supports it."""

    # (this docstring is the schema's description, sent to models: explanations go in comments)

    value: str = Field(description="The item, as written.")
    quote: str = Field(description="The exact span of the abstract that states it.")

    @model_validator(mode="before")
    @classmethod
    def _bare_item(cls, data: Any) -> Any:
        # an item written bare (a string, no quote) is an item with an empty quote: the strategy drops it as unquoted
        return {"value": data, "quote": ""} if isinstance(data, str) else data


class QuotedResult(Result):
    quote: str = Field(description="The exact span of the abstract that states this number.")


# The evidence strategy quotes every item of a list the abstract grounds (strings and results).
QUOTED_FIELDS = {f.name: f for f in record_fields(PaperRecord) if f.is_list and f.facts.grounded}

EvidenceRecord = create_model(
    "EvidenceRecord",
    __config__=_RECORD_CONFIG,
    **{name: (f.annotation, f) for name, f in PaperRecord.model_fields.items() if name not in QUOTED_FIELDS},
    # the repairs of the record's own lists: a list written as a
    # string is read, an item that does not validate is left out
    **{
        name: (
            Annotated[list[QuotedResult], reply_items(QuotedResult, "result_dropped")]
            if f.is_record_list
            else Annotated[list[Quoted], reply_items(Quoted, "item_dropped")],
            Field(default_factory=list, description=PaperRecord.model_fields[name].description),
        )
        for name, f in QUOTED_FIELDS.items()
    },
)


FieldConfidence = create_model(
    "FieldConfidence",
    **{name: (float, Field(ge=0.0, le=1.0)) for name in PaperRecord.model_fields},
    __doc__="How sure the model is that each field of its record is right, from 0 (a guess) to 1 (certain).",
)

ConfidenceRecord = create_model(  # the record first, then the confidences: the model rates what it wrote
    "ConfidenceRecord",
    __config__=_RECORD_CONFIG,
    **{name: (f.annotation, f) for name, f in PaperRecord.model_fields.items()},
    confidence=(FieldConfidence, Field(description="For each field above, the probability (0 to 1) that it is right.")),
)


def _quote_found(quote: str, abstract: str) -> bool:
    """True when the quote is written in the abstract: :func:`~paperfields.core.locate.locate`, the one
    rule for "in the abstract" (exact or after normalization; a fuzzy near-miss is not)."""
    return bool(quote.strip()) and locate(quote, abstract).grounded


def majority_vote(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Field-wise majority over sample records: scalars take the most common value (ties: earliest
    sample); list items and results are kept when more than half of the samples contain them."""
    from paperfields.core.normalize import normalize

    records = [PaperRecord.model_validate(r).model_dump(mode="json") for r in records]
    n = len(records)
    out: dict[str, Any] = {}
    for record_field in record_fields(PaperRecord):
        field = record_field.name
        values = [r.get(field) for r in records]
        if record_field.is_list and not record_field.is_record_list:
            counts = Counter(
                normalize(str(v)) for vals in values for v in {normalize(str(x)): x for x in vals or []}.values()
            )
            seen: dict[str, Any] = {}
            for vals in values:
                for v in vals or []:
                    seen.setdefault(normalize(str(v)), v)
            out[field] = [seen[k] for k in seen if counts[k] * 2 > n]
        elif record_field.is_record_list:  # result tuples, by value and metric
            key = lambda r: (round(float(r["value"]), 6), normalize(r.get("metric") or ""))  # noqa: E731
            counts = Counter(k for rs in values for k in {key(r) for r in rs or []})
            seen = {}
            for rs in values:
                for r in rs or []:
                    seen.setdefault(key(r), r)
            out[field] = [seen[k] for k in seen if counts[k] * 2 > n]
        else:
            tally = Counter(json.dumps(v, sort_keys=True) for v in values)
            best = max(tally.values())
            out[field] = next(v for v in values if tally[json.dumps(v, sort_keys=True)] == best)
    return PaperRecord.model_validate(out).model_dump(mode="json")


def _file_line(toml_text: str, key: str, template_line: int) -> int:
    """Line in the TOML file of line ``template_line`` (1-based) of the string value of ``key``."""
    match = re.search(rf'^{key}\s*=\s*("""|\'\'\'|"|\')(\r?\n)?', toml_text, re.MULTILINE)
    if match is None:
        return template_line
    start = toml_text.count("\n", 0, match.start()) + 1  # the line holding `key = """`
    return (
        start + template_line - 1 + (1 if match.group(2) else 0)
    )  # TOML drops a newline right after the opening quotes


class Strategy:
    """A prompt strategy loaded from ``prompts/<name>.toml``.

    ``split`` is the split being scored: few-shot examples must come from another split (dev), and
    ``None`` stands for papers outside the benchmark's gold (a corpus of one's own that the caller has
    checked holds no dev abstract, see :func:`paperfields.api.check_no_dev_papers`);
    a few-shot run on dev is refused. Raises PromptError for any inconsistency, naming the file.
    """

    def __init__(self, name: str = "zero_shot", directory: Path | None = None, split: Optional[str] = "test") -> None:
        directory = directory or prompts_dir()
        path = directory / f"{name}.toml"
        if not path.is_file():
            known = sorted(p.stem for p in directory.glob("*.toml"))
            raise PromptError(f"{path}: no such prompt file; known strategies: {', '.join(known) or '(none)'}")
        raw = path.read_bytes()
        try:
            data = tomllib.loads(decode_utf8(raw, path, PromptError))
        except tomllib.TOMLDecodeError as exc:
            raise PromptError(f"{path}: not valid TOML ({exc})") from None
        kind_name = data.get("kind", "zero_shot")
        if kind_name not in _KINDS:
            raise PromptError(f"{path}: field 'kind': unknown kind {kind_name!r}; known kinds: {', '.join(kinds())}")
        handler_class = _KINDS[kind_name]
        try:
            self.template = handler_class.template.model_validate(data)
        except ValidationError as exc:
            raise PromptError(f"{path}: {field_error(exc)}") from None
        t = self.template
        if t.name != name:
            raise PromptError(f"{path}: field 'name' is '{t.name}', expected '{name}' (the file name)")
        # Shared parts (prompts/field_guide.jinja) are included by name from the prompts folder only.
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(directory), undefined=jinja2.StrictUndefined, autoescape=False
        )
        self._templates: dict[str, jinja2.Template] = {}
        included: list[str] = []
        for key in handler_class.templates:
            try:
                self._templates[key] = env.from_string(getattr(t, key))
                for ref in jinja2.meta.find_referenced_templates(env.parse(getattr(t, key))):
                    if ref is None:
                        raise PromptError(f"{path}: field '{key}': an include must name its file as a string")
                    if ref not in included:
                        included.append(ref)
            except jinja2.TemplateSyntaxError as exc:
                line = _file_line(raw.decode("utf-8"), key, exc.lineno)
                raise PromptError(f"{path}:{line}: field '{key}': template syntax error: {exc.message}") from None
        self.name, self.path, self.kind = name, path, t.kind
        self.included = [directory / ref for ref in included]
        self.sha256 = prompt_sha256(raw, self.included, path)
        self.handler: Kind = handler_class(self)
        self.handler.check()
        self.response_model: type[BaseModel] = self.handler.response_model
        self.samples = self.handler.samples
        self._examples: list[tuple[Paper, dict[str, Any]]] = []
        if self.handler.examples:
            self._examples = self._load_examples(path, split)

    def _load_examples(self, path: Path, split: Optional[str]) -> list[tuple[Paper, dict[str, Any]]]:
        from paperfields.core.corpus import load_corpus
        from paperfields.core.gold import load_gold

        t = self.template
        if split not in ("test", None):
            raise PromptError(
                f"{path}: few-shot examples come from the dev split, so a few-shot run must score "
                "the test split, or a corpus of your own without dev abstracts (--corpus FILE "
                f"--split all) (got '{split}' of the benchmark corpus)"
            )
        if t.k < 1 or len(t.examples) < t.k + 1:
            raise PromptError(
                f"{path}: field 'examples' needs at least k + 1 = {t.k + 1} dev "
                "ids (one spare for when the paper is an example)"
            )
        gold = {g.id: g for g in load_gold(gold_dir() / "gold.jsonl")}
        papers = {p.id: p for p in load_corpus(gold_dir() / "corpus.jsonl")}
        out = []
        for pid in t.examples:
            if pid not in gold or pid not in papers:
                raise PromptError(f"{path}: field 'examples': '{pid}' is not a gold paper")
            if gold[pid].split != "dev":
                raise PromptError(
                    f"{path}: field 'examples': '{pid}' is in the {gold[pid].split} split; examples must come from dev"
                )
            out.append((papers[pid], gold[pid].record.model_dump(mode="json")))
        return out

    def example_ids(self, paper: Optional[Paper] = None) -> list[str]:
        """Ids of the examples used for ``paper`` (never the paper itself)."""
        return [p.id for p, _ in self._examples if paper is None or p.id != paper.id][: self.template.k]

    def render(self, key: str, **context: Any) -> str:
        """The prompt file's template ``key`` (``system``, ``user``, or one more of its kind's) rendered
        with ``context``. Raises PromptError naming the file for a variable the template does not get."""
        try:
            return self._templates[key].render(**context)
        except jinja2.UndefinedError as exc:
            raise PromptError(f"{self.path}: template uses an unknown variable: {exc.message}") from None

    def messages(self, paper: Paper) -> list[dict[str, str]]:
        """Chat messages for one paper: system, then (few-shot) example turns, then the paper."""
        messages = [{"role": "system", "content": self.render("system", paper=paper)}]
        for example, record in [(p, r) for p, r in self._examples if p.id != paper.id][: self.template.k]:
            messages.append({"role": "user", "content": self.render("user", paper=example)})
            messages.append({"role": "assistant", "content": compact(record)})
        messages.append({"role": "user", "content": self.render("user", paper=paper)})
        return messages

    def requests(self, paper: Paper, params: GenerationParams) -> list[GenerationRequest]:
        """The first round's requests for ``paper``: one per sample (sample index 0, 1, ...), each with
        :meth:`messages` (the paper last), the paper's text (for model-free backends), ``params`` and the
        strategy's response model."""
        return [
            GenerationRequest(
                messages=self.messages(paper),
                paper_text=paper.text,
                params=params,
                response_model=self.response_model,
                sample_index=index,
            )
            for index in range(self.samples)
        ]

    def conversation(self, paper: Paper, params: GenerationParams) -> Conversation:
        """The paper's requests round by round (the kind's :meth:`Kind.conversation`); drive it with :class:`Rounds`."""
        return self.handler.conversation(paper, params)

    def finalize(self, paper: Paper, generations: list[Generation]) -> Generation:
        """One Generation from the answers (:meth:`Kind.finalize`): a PaperRecord dict (reasoning and quotes
        moved to ``notes``, unquoted items dropped, samples voted)
        or the failure; usage, latency and attempts summed."""
        return self.handler.finalize(paper, generations)


Conversation = Generator[list[GenerationRequest], list[Generation], Generation]
K = TypeVar("K", bound="type[Kind]")
_KINDS: dict[str, type[Kind]] = {}


def kind(name: str) -> Callable[[K], K]:
    """Register a :class:`Kind` subclass as the kind ``name``: a prompt file with ``kind = "name"`` uses it.
    Registering a name again replaces the kind."""

    def register(cls: K) -> K:
        cls.name = name
        _KINDS[name] = cls
        return cls

    return register


def kinds() -> list[str]:
    """The registered kinds, sorted."""
    return sorted(_KINDS)


class Rounds:
    """One paper's exchange with the model, driven round by round: the one request driver of the
    runner (:meth:`~paperfields.extract.call.Model.extract`), the batch path and the inspect solver.

    ``requests`` are the round's requests (empty once ``done``); :meth:`answer` gives their answers, in
    order, and moves to the next round or to ``result``, the paper's one Generation. ``round`` counts
    the rounds answered (0 while the first is asked)."""

    def __init__(self, strategy: Strategy, paper: Paper, params: GenerationParams) -> None:
        self._steps = strategy.conversation(paper, params)
        self.round = 0
        self.requests: list[GenerationRequest] = list(next(self._steps))
        self.result: Optional[Generation] = None

    @property
    def done(self) -> bool:
        return self.result is not None

    def answer(self, answers: list[Generation]) -> None:
        """Give the answers of this round's requests (one each, in order). Raises ValueError for
        another count, RuntimeError when the exchange is already done."""
        if self.done:
            raise RuntimeError("this paper's exchange is already done")
        if len(answers) != len(self.requests):
            raise ValueError(f"{len(self.requests)} requests in round {self.round}, {len(answers)} answers given")
        try:
            self.requests = list(self._steps.send(list(answers)))
            self.round += 1
        except StopIteration as stop:
            self.result, self.requests = stop.value, []


def combined(generations: list[Generation]) -> Generation:
    """The answers of one paper in one Generation without its record: usage, latency, attempts and retries
    summed, repairs merged, the raw text (a JSON list of every answer's when there are several), the last
    finish reason, ``cached`` when all were; with no valid record among them, the first answer's failure."""
    total = Generation(
        usage=sum((g.usage for g in generations), Usage()),
        latency_s=sum(g.latency_s for g in generations),
        attempts=sum(g.attempts for g in generations),
        transport_retries=sum(g.transport_retries for g in generations),
        repairs=sorted({r for g in generations for r in g.repairs}),
        raw_text=generations[-1].raw_text
        if len(generations) == 1
        else json.dumps([g.raw_text for g in generations], ensure_ascii=False),
        finish_reason=generations[-1].finish_reason,
        cached=all(g.cached for g in generations),
    )
    if not any(g.record is not None for g in generations):
        first = generations[0]
        total.failure, total.error = first.failure or FailureClass.malformed_json, first.error
    return total


class Kind:
    """How the strategies of one kind ask and combine, beyond rendering their prompt file: subclass
    it and register it with :func:`kind`; a prompt file with ``kind = "<name>"`` then uses it.

    - ``template``: the prompt file's model (a subclass of :class:`PromptTemplate` adds keys), and
      ``templates`` its fields that are Jinja2 templates (compiled on load, with :meth:`Strategy.render`);
    - ``response_model``: what the model is asked to fill;
    - ``examples``: the prompt shows dev examples (``few_shot``), so it runs on the test split only;
    - :meth:`check`: refuse a prompt file this kind cannot use; :attr:`samples`: first-round requests;
    - :meth:`conversation`: the requests round by round, a generator that yields a round's requests,
      is sent their answers and returns the paper's Generation (the default: one round, :meth:`finalize`);
    - :meth:`record`: the record from the first valid answer (the default: as it is), with ``notes``.
    """

    name: ClassVar[str] = ""
    template: ClassVar[type[PromptTemplate]] = PromptTemplate
    templates: ClassVar[tuple[str, ...]] = ("system", "user")
    response_model: ClassVar[type[BaseModel]] = PaperRecord
    examples: ClassVar[bool] = False

    def __init__(self, strategy: Strategy) -> None:
        self.strategy = strategy

    def check(self) -> None:
        """Raise PromptError naming the file when its template does not suit this kind."""

    @property
    def samples(self) -> int:
        """How many requests the first round asks (one per sample)."""
        return 1

    def conversation(self, paper: Paper, params: GenerationParams) -> Conversation:
        answers = yield self.strategy.requests(paper, params)
        return self.finalize(paper, answers)

    def finalize(self, paper: Paper, generations: list[Generation]) -> Generation:
        """One Generation from ``generations``: :func:`combined`, with the record :meth:`record` makes of
        the first valid answer (validated as a PaperRecord) and that answer's notes (a backend's own:
        logprob confidences); the first failure when none is valid."""
        total = combined(generations)
        first = next((g for g in generations if g.record is not None), None)
        if first is None:
            return total
        total.notes = dict(first.notes)
        record = self.record(paper, dict(first.record), total.notes)
        total.record = PaperRecord.model_validate(record).model_dump(mode="json")
        return total

    def record(self, paper: Paper, record: dict[str, Any], notes: dict[str, Any]) -> dict[str, Any]:
        """The PaperRecord dict of a valid answer's ``record``; what it moves aside goes into ``notes``."""
        return record


@kind("zero_shot")
class ZeroShot(Kind):
    """Instructions and the field guide, then the abstract."""


@kind("few_shot")
class FewShot(Kind):
    """The same, with k worked examples (abstract -> gold record) from the dev split, never the paper itself."""

    examples = True


@kind("reasoning_first")
class ReasoningFirst(Kind):
    """A free-text ``reasoning`` field before the record, moved to ``notes["reasoning"]``."""

    response_model = ReasoningRecord

    def record(self, paper: Paper, record: dict[str, Any], notes: dict[str, Any]) -> dict[str, Any]:
        notes["reasoning"] = record.pop("reasoning", "")
        return record


@kind("confidence")
class Confidence(Kind):
    """Per-field confidences after the record, moved to ``notes["confidence"]`` (scored for calibration)."""

    response_model = ConfidenceRecord

    def record(self, paper: Paper, record: dict[str, Any], notes: dict[str, Any]) -> dict[str, Any]:
        if record.get("confidence") is not None:  # a model-free backend (rules/) states none
            notes["confidence"] = record.pop("confidence")
        return record


@kind("evidence")
class Evidence(Kind):
    """A quote from the abstract for every list item and result; items whose quote is not in the
    abstract are dropped, the quotes kept in ``notes`` (see the module docstring)."""

    response_model = EvidenceRecord

    def record(self, paper: Paper, record: dict[str, Any], notes: dict[str, Any]) -> dict[str, Any]:
        quotes, unquoted = [], []
        for field, record_field in QUOTED_FIELDS.items():
            kept = []
            for item in record.get(field) or []:
                if isinstance(item, str):  # a model-free backend answers plain items: the item is its own quote
                    item = {"value": item, "quote": item}
                # the quote is kept beside its item (the runner locates it
                # into the line's grounding; report and show highlight it)
                key = value_item(item["value"]) if record_field.is_record_list else item["value"]
                entry = {"field": field, "item": key, "quote": item.get("quote") or ""}
                if _quote_found(entry["quote"], paper.text):
                    kept.append(
                        {k: v for k, v in item.items() if k != "quote"}
                        if record_field.is_record_list
                        else item["value"]
                    )
                    quotes.append(entry)
                else:
                    unquoted.append(entry)
            record[field] = kept
        notes.update({"dropped_unquoted": len(unquoted), "quotes": quotes, "unquoted": unquoted})
        return record


@kind("self_consistency")
class SelfConsistency(Kind):
    """``samples`` answers at ``temperature`` > 0, combined by field-wise majority vote."""

    def check(self) -> None:
        t = self.strategy.template
        if t.samples < 2 or not t.temperature:
            raise PromptError(f"{self.strategy.path}: self_consistency needs samples >= 2 and temperature > 0")

    @property
    def samples(self) -> int:
        return self.strategy.template.samples

    def finalize(self, paper: Paper, generations: list[Generation]) -> Generation:
        total = combined(generations)
        valid = [g.record for g in generations if g.record is not None]
        if valid:
            total.record = majority_vote(valid)
            total.notes = {"samples": len(generations), "valid_samples": len(valid)}
        return total
