"""The run log: what a run records and how it is read back.

A run folder holds ``predictions.jsonl`` (one :class:`PredictionLine` per paper, appended as each
finishes) and ``manifest.json`` (a versioned :class:`Manifest`: the :class:`RunConfig`, provenance and
totals). Extraction (``paperfields.extract``) writes them, scoring (``paperfields.scoring``) reads them;
both import these nouns from here and never each other. The outcome of one model call is a
:class:`Generation`: a schema-valid record or a :class:`FailureClass`, with usage and timing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import re
import subprocess
import warnings
from collections.abc import Callable, Iterable, Iterator
from enum import Enum
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field, ValidationError, field_validator, model_serializer

from paperfields.core.corpus import Paper
from paperfields.core.errors import PaperFieldsError, field_error
from paperfields.core.locate import Grounding, ground_record
from paperfields.core.paths import checkout_root
from paperfields.core.readonce import file_bytes, parsed
from paperfields.core.schema import SCHEMA_VERSION, PaperRecord
from paperfields.core.version import __version__

# Key-shaped strings, as servers echo them in 401 bodies and users paste them into URLs: (pattern, mask).
# Each must start a token: inside a word "sk-" is ordinary text ("task-relevant", "risk-sensitive", "disk-based"),
# which a model's record may hold and the call wrapper must not garble.
_TOKEN_START = r"(?<![A-Za-z0-9_\-])"
_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    # OpenAI (sk-..., sk-proj-..., sk-svcacct-...), Anthropic (sk-ant-...), DeepSeek and others
    ("an OpenAI-style key (sk-)", re.compile(_TOKEN_START + r"sk-[A-Za-z0-9_\-]{8,}"), "sk-***"),
    ("a Hugging Face token (hf_)", re.compile(_TOKEN_START + r"hf_[A-Za-z0-9]{20,}"), "hf_***"),
    ("a GitHub token (ghp_, gho_, ...)", re.compile(_TOKEN_START + r"gh[pousr]_[A-Za-z0-9]{20,}"), "gh*_***"),
    ("a GitHub token (github_pat_)", re.compile(_TOKEN_START + r"github_pat_[A-Za-z0-9_]{20,}"), "github_pat_***"),
    ("an AWS access key id (AKIA)", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"), "AKIA***"),
    ("a Slack token (xoxb-, ...)", re.compile(_TOKEN_START + r"xox[abeoprs]-[A-Za-z0-9\-]{10,}"), "xox*-***"),
    ("a Bearer token", re.compile(r"(?i)\bBearer\s+[A-Za-z0-9\-._~+/]{8,}=*"), "Bearer ***"),
)
# The password of a URL's userinfo (http://user:PASSWORD@host) and the value of a query parameter that
# names a secret (?api_key=..., &token=...): masked whatever their shape.
# Only the characters a URL allows there (RFC 3986), never a quote or a backslash: redact_generation masks
# a record's JSON text, whose structure a mask must not eat.
_URL_PASSWORD = re.compile(r"(?<=://)([A-Za-z0-9\-._~%!$&()*+,;=]*):([A-Za-z0-9\-._~%!$&()*+,;=]+)@")
_SECRET_PARAMS = (
    r"api[_-]?key|key|x-api-key|token|access[_-]?token|auth|authorization|password|passwd|pwd|secret"
    r"|client[_-]?secret|sig|signature|code"
)
_URL_SECRET_PARAM = re.compile(rf"(?i)([?&;](?:{_SECRET_PARAMS})=)[A-Za-z0-9\-._~%+/=!$()*,:@]+")
MASK = "sk-***"  # an OpenAI-style key's mask (the others keep their own prefix: hf_***, Bearer ***, ...)
_MASKED = "***"


def secret_kind(text: Optional[str]) -> Optional[str]:
    """What key-shaped string ``text`` holds, named for a message ("a Hugging Face token (hf_)", "a
    password in a URL", ...), or None when it holds none. The same patterns :func:`redact_secrets`
    masks, for a caller that must refuse a key rather than mask it (a submission's notes)."""
    if not text:
        return None
    for kind, pattern, _ in _SECRET_PATTERNS:
        if pattern.search(text):
            return kind
    if _URL_PASSWORD.search(text):
        return "a password in a URL"
    if _URL_SECRET_PARAM.search(text):
        return "a secret in a URL's query string"
    return None


def url_secrets(url: Optional[str]) -> tuple[str, ...]:
    """The secrets ``url`` holds, as given (to mask wherever a server echoes them): the password of its
    userinfo and the values of its query parameters named like a secret (``api_key``, ``token``, ...);
    none for a URL without them, or None."""
    import urllib.parse

    if not url:
        return ()
    parts = urllib.parse.urlsplit(url)
    named = [v for k, v in urllib.parse.parse_qsl(parts.query) if re.fullmatch(_SECRET_PARAMS, k, re.IGNORECASE)]
    return tuple(v for v in (parts.password, *named) if v)


def redact_secrets(text: Optional[str], *keys: Optional[str]) -> Optional[str]:
    """``text`` with each of ``keys`` and every key-shaped string masked; None stays None.

    Key-shaped: an OpenAI-style key (``sk-`` and 8+ key characters: ``sk-***``), a Hugging Face token
    (``hf_``), GitHub tokens (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``), an AWS
    access key id (``AKIA``/``ASIA`` and 16 characters), Slack tokens (``xoxb-``, ...), a ``Bearer``
    token, the password of a URL (``http://user:***@host``) and the value of a URL query parameter named
    like a secret (``?api_key=***``, ``token``, ``key``, ``sig``, ...). Each mask keeps the prefix
    and drops the rest. Keys shorter than 8 characters are not searched for: masking every "abc" would
    garble the text, and so short a value is no secret worth the damage.
    """
    if not text:
        return text
    for key in keys:
        if key and len(key) >= 8:
            text = text.replace(key, MASK)
    for _, pattern, mask in _SECRET_PATTERNS:
        text = pattern.sub(mask, text)
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{_MASKED}@", text)
    return _URL_SECRET_PARAM.sub(lambda m: m.group(1) + _MASKED, text)


ERROR_CHARS = 300  # an error message in a prediction line is cut to this many characters


def error_text(text: str, *keys: Optional[str], limit: int = ERROR_CHARS) -> str:
    """An error message for a prediction line: :func:`redact_secrets` first, then cut to ``limit``
    characters (masked before the cut, so a key split by the cut cannot leave its head behind)."""
    return (redact_secrets(text, *keys) or "")[:limit]


class FailureClass(str, Enum):
    """Why a paper has no parsed record. Each is reported apart in the validity layer.

    ``transport_error`` means the model never answered (network, 429, 5xx, timeout): a rerun asks
    again. ``request_rejected`` (the server refused the request itself: HTTP 400 for a bad schema or
    an unsupported parameter) and ``context_overflow`` (the prompt does not fit the model's context
    window) can never succeed unchanged: a rerun does not ask again. The others are the model's
    answer and are final for the run's configuration; ``content_filter`` (the provider's filter stopped
    the reply) and ``truncated`` are not even re-asked within the run: the same request meets the same
    filter, or the same budget.
    """

    malformed_json = "malformed_json"
    schema_invalid = "schema_invalid"
    truncated = "truncated"
    content_filter = "content_filter"
    refusal = "refusal"
    empty_reply = "empty_reply"
    transport_error = "transport_error"
    request_rejected = "request_rejected"
    context_overflow = "context_overflow"

    @property
    def what(self) -> str:
        """What happened, in words (the docs' failure table is generated from it)."""
        return _FAILURE_TEXT[self][0]

    @property
    def rerun(self) -> str:
        """What running the same command again does with a paper of this class."""
        return _FAILURE_TEXT[self][1]


# Each class's (what happened, what a rerun does), in the order the docs list them: the model never
# answered, then requests that can never succeed unchanged, then the model's own answers.
_FAILURE_TEXT: dict[FailureClass, tuple[str, str]] = {
    FailureClass.transport_error: (
        "no answer: network error (a connection reset or closed is named so), HTTP 401/404/429/5xx (a JSON error's "
        "message, or an HTML error page's status and title), timeout (`--timeout`, 120 s for the whole request, "
        "headers and body, retried `--retries` times, 4), a `Retry-After` longer than the SDK waits (120 s: not "
        "retried, the wait named; a shorter one is waited and told), a 200 that is not a chat completion (the "
        'server\'s own message shown when its body is an error, `{"error": {"message": "CUDA out of memory"}}`, '
        'vLLM\'s `{"object": "error", "message": ...}`; an event stream holding a completion is read, `sse`)',
        "asked again; `run` exits 1 while any paper has one, so scripts notice",
    ),
    FailureClass.request_rejected: (
        "the server refused the request itself (HTTP 400/413/422: a schema or a parameter it does not take)",
        "not asked again: change what is sent (model, `--mode`, options)",
    ),
    FailureClass.context_overflow: (
        "the prompt does not fit the model's context window",
        "not asked again: use a model with a longer context or a shorter prompt",
    ),
    FailureClass.truncated: (
        "the reply hit `--max-tokens` (`finish_reason=length`, or a reply that does not parse whose "
        "`completion_tokens` reached the budget whatever its finish_reason); not re-asked at the same budget",
        "final for the run's config",
    ),
    FailureClass.content_filter: (
        "the provider's content filter stopped the reply (`finish_reason` `content_filter`, or Gemini's `safety`, "
        "`recitation`, `prohibited_content`, `blocklist`, `spii`), whatever part of a reply came before; not re-asked",
        "final: the same request meets the same filter",
    ),
    FailureClass.malformed_json: (
        "no single readable JSON object in the reply (two objects, or none), or a key written twice with different "
        "values",
        "final",
    ),
    FailureClass.schema_invalid: (
        "JSON that is not a valid record (a wrong type or enum value outside `results`; a bad result item drops that "
        "item only, `result_dropped`), or an object with no key of the schema that is no envelope of one (never "
        "stored as an empty record)",
        "final",
    ),
    FailureClass.refusal: (
        "the model declined: OpenAI's `message.refusal` set (any wording), a reply of refusal phrases with no JSON, "
        'or an object with no key of the schema but `error`, `reason`, `refusal` (`{"error": "cannot extract"}`)',
        "final",
    ),
    FailureClass.empty_reply: (
        "nothing but whitespace or a `<think>` block (and no record in `reasoning_content`/`reasoning`)",
        "final",
    ),
}


class Usage(BaseModel):
    """Token counts summed over every attempt, failed ones included.

    ``reasoning_tokens`` is the part of ``output_tokens`` a reasoning model spent thinking before it
    answered (OpenAI's ``completion_tokens_details.reasoning_tokens``): never shown, billed as output,
    so it is already inside ``output_tokens`` and its dollars.

    A count is None when it is unknown: the server sent no ``usage``, ``usage: null`` or a null count
    (unknown is not zero). A sum with an unknown count is unknown, so a run's total, its tokens per
    paper and, priced, its dollars are unknown too (``null`` in the manifest, ``?`` on the board).
    """

    input_tokens: Optional[int] = 0
    output_tokens: Optional[int] = 0
    reasoning_tokens: Optional[int] = 0

    @property
    def known(self) -> bool:
        """True when both the input and the output count are known."""
        return self.input_tokens is not None and self.output_tokens is not None

    def __add__(self, other: Usage) -> Usage:
        def plus(a: Optional[int], b: Optional[int]) -> Optional[int]:
            return None if a is None or b is None else a + b

        return Usage(
            input_tokens=plus(self.input_tokens, other.input_tokens),
            output_tokens=plus(self.output_tokens, other.output_tokens),
            reasoning_tokens=plus(self.reasoning_tokens, other.reasoning_tokens),
        )


class GenerationParams(BaseModel):
    """Every generation parameter that changes the output (part of the run config and cache key).

    ``reasoning_effort`` (low, medium, high) applies to OpenAI reasoning models only (see
    :func:`check_params`); unset, it is left out of every dump, so configs and cache keys written
    before it existed stay equal.
    """

    temperature: float = 0.0
    max_tokens: int = Field(default=1536, ge=1)
    seed: int = 0
    reasoning_effort: Optional[Literal["low", "medium", "high"]] = None

    @model_serializer(mode="wrap")
    def _omit_unset_effort(self, handler: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        data = handler(self)
        if data.get("reasoning_effort") is None:
            data.pop("reasoning_effort", None)
        return data


class Generation(BaseModel):
    """One backend answer: ``record`` (validated, as a dict) or ``failure``, never both.

    ``latency_s`` is wall seconds for all attempts; ``attempts`` counts model replies
    (validation re-asks included; 0 for a model-free backend, ``rules/``); ``transport_retries`` counts HTTP requests
    repeated after a 429, a 5xx or a timeout; ``repairs`` names every
    tolerated deviation of the reply (listed in :func:`parse_reply`).
    """

    record: Optional[dict[str, Any]] = None
    failure: Optional[FailureClass] = None
    error: Optional[str] = None
    raw_text: Optional[str] = None
    finish_reason: Optional[str] = None
    usage: Usage = Usage()
    latency_s: float = 0.0
    attempts: int = 1
    transport_retries: int = 0
    repairs: list[str] = Field(default_factory=list)
    cached: bool = False
    notes: dict[str, Any] = Field(
        default_factory=dict, description="strategy extras: reasoning text, dropped quotes, sample counts"
    )


RAW_TEXT_LIMIT = (
    100_000  # characters of a reply's raw text kept in predictions.jsonl and the response cache (~25k tokens)
)


def cap_raw_text(gen: Generation, limit: int = RAW_TEXT_LIMIT) -> Generation:
    """``gen`` with its raw text cut to ``limit`` characters and the cut marked at the end
    (``[... N more characters cut by PaperFields]``), else ``gen`` itself: a reply padded with
    megabytes of whitespace must not become a line or cache row of that size."""
    text = gen.raw_text
    if text is None or len(text) <= limit:
        return gen
    return gen.model_copy(
        update={"raw_text": text[:limit] + f"[... {len(text) - limit:,} more characters cut by PaperFields]"}
    )


def redact_generation(gen: Generation, *keys: Optional[str]) -> Generation:
    """``gen`` with :func:`redact_secrets` applied to every string in it (error, raw text, record,
    notes): the runner writes all of it to ``predictions.jsonl`` and the response cache. Returns
    ``gen`` itself when there is nothing to mask."""
    dumped = gen.model_dump_json()
    masked = redact_secrets(dumped, *keys)  # the mask has no JSON-special character: still valid JSON
    return gen if masked == dumped else Generation.model_validate_json(masked)


_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def without_surrogates(gen: Generation) -> Generation:
    """``gen`` with every lone UTF-16 surrogate in any of its strings (a ``"\\ud83d"`` escape of the HTTP
    body, decoded) replaced by U+FFFD and the repair ``surrogates`` noted; ``gen`` itself when it holds
    none. No UTF-8 file, terminal or JSON dump can hold such a character: left in, it stops the run."""
    text = json.dumps(gen.model_dump(mode="python"), ensure_ascii=False, default=str)
    if not _LONE_SURROGATE.search(text):
        return gen
    clean = Generation.model_validate_json(_LONE_SURROGATE.sub("\ufffd", text))
    if "surrogates" not in clean.repairs:
        clean.repairs.append("surrogates")
    return clean


MANIFEST_VERSION = 1


class RunError(PaperFieldsError, RuntimeError):
    """A run folder that cannot be resumed (other config, corrupt line). Names the file and line."""


class RunConfig(BaseModel):
    """Everything that decides a run's output. Two runs with equal configs are the same run."""

    backend: str
    base_url: Optional[str] = None
    mode: Optional[str] = None
    grammar: bool = False
    strategy: str
    prompt_version: str
    prompt_sha256: str
    example_ids: list[str] = Field(default_factory=list, description="few-shot example paper ids (dev split)")
    split: str
    schema_version: str = SCHEMA_VERSION
    params: GenerationParams = GenerationParams()
    batch: bool = Field(
        default=False, description="requests sent as one OpenAI Batch API job (--batch), not one by one"
    )
    corpus: Optional[str] = Field(
        default=None,
        description="a corpus other than the benchmark's gold/corpus.jsonl (--corpus): its file "
        "name and a fingerprint of its papers, '<name> papers:<12 hex of sha256 of the (id, "
        "text) pairs>', so two corpora never share a run folder",
    )
    provider_options: dict[str, Any] = Field(
        default_factory=dict,
        description="the provider's own options that change the output, where set to other than their default "
        "(-o KEY=VALUE, e.g. gemini/'s thinking_budget): part of the cache key. Left out when empty, so configs "
        "and cache keys written before it existed stay equal",
    )

    @field_validator("base_url")
    @classmethod
    def _mask_base_url(cls, value: Optional[str]) -> Optional[str]:
        # a key in the URL (http://user:sk-...@host/v1, ?api_key=...) never reaches the manifest, the run id
        # or the cache key: the config is what all three are made from (the backend keeps the URL it was given)
        return redact_secrets(value)

    @field_validator("provider_options")
    @classmethod
    def _mask_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        return {k: redact_secrets(v) if isinstance(v, str) else v for k, v in value.items()}

    @model_serializer(mode="wrap")
    def _omit_no_options(self, handler: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        data = handler(self)
        if not data.get("provider_options"):
            data.pop("provider_options", None)
        return data


class PredictionLine(Generation):
    """One line of ``predictions.jsonl``: the paper id, its :class:`Generation` and its cost in USD
    (None when the backend's price is unknown).

    ``record`` must be a valid :class:`PaperRecord` (lines may be written by hand, see docs/submitting.md):
    a string where a list belongs, an unknown research area or a non-numeric result value is a
    validation error naming the field, never scored character by character.
    """

    paper_id: str
    dollars: Optional[float] = None
    grounding: Optional[Grounding] = Field(
        default=None,
        description="where each predicted item (and evidence quote) is written in the abstract (scoring/locate.py), "
        "computed when the line is written; None for a failed paper and for lines written before it existed",
    )

    def located(self, abstract: str) -> Grounding:
        """This line's grounding in ``abstract``: the stored one when it still fits the record and the
        abstract (:meth:`~paperfields.core.locate.Grounding.fits`), else computed now (an older
        line, a hand-edited record, another corpus); evidence quotes come from ``notes["quotes"]``."""
        if self.grounding is not None and self.grounding.fits(self.record, abstract):
            return self.grounding
        return ground_record(self.record, abstract, self.notes.get("quotes") or ())

    @field_validator("record")
    @classmethod
    def _record_is_a_paper_record(cls, record: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
        if record is None:
            return None
        try:
            valid = PaperRecord.model_validate(record)
        except ValidationError as exc:
            raise ValueError(f"not a PaperRecord: {field_error(exc, 'record')}") from None
        return valid.model_dump(mode="json")  # the normalized form a model's reply gets ("12.5" -> 12.5)


class Concurrency(BaseModel):
    """How many requests a run kept in flight, and why (``manifest.json``'s ``concurrency``).

    ``start``: papers sent at once; ``source``: who chose it (``flag``: ``--concurrency``; ``server``:
    the server's own slots, read from it; ``default``: the rule for that kind of server; ``backend``:
    the backend's own, e.g. a ``local/`` model's workers; ``caller``: the Python API's argument);
    ``why``: the rule in words. ``peak``: most requests in flight at once during the run (for an
    OpenAI-compatible server, HTTP requests: a retry waiting for a slot is not in flight);
    ``after_429``: requests allowed in flight when the run ended, after the server's 429 answers cut
    the limit (additive increase, multiplicative decrease); None when no 429 came. Written by the
    last part of a run (a resume may choose another): it changes no request or reply."""

    start: int = Field(ge=1)
    source: Literal["flag", "server", "default", "backend", "caller"]
    why: str
    peak: int = 0
    after_429: Optional[float] = None


class Manifest(BaseModel):
    """``manifest.json``: config, provenance and totals of a run (versioned)."""

    manifest_version: int = MANIFEST_VERSION
    run_id: str
    config: RunConfig
    paperfields_version: str = __version__
    git_commit: Optional[str] = None
    started_at: str
    finished_at: Optional[str] = None
    status: str = "running"
    paper_ids: list[str] = Field(
        default_factory=list, description="papers asked for, in corpus order (union over resumes)"
    )
    papers_total: int
    papers_done: int = Field(
        default=0,
        description="papers whose latest line is final: a record or a failure other than "
        "transport_error (those are asked again on resume)",
    )
    papers_valid: int = 0
    failures_by_class: dict[str, int] = Field(default_factory=dict)
    usage: Usage = Field(
        default=Usage(),
        description="tokens the model processed for this run (what dollars_total prices); answers served from the "
        "response cache are in cached_usage. Runs written before cached_usage existed count both here",
    )
    cached_usage: Usage = Field(
        default=Usage(),
        description="tokens of the answers served from the response cache (the model "
        "processed them for an earlier request; no dollars)",
    )
    model_requests: int = Field(
        default=0, description="model calls made (attempts of papers not answered from the cache)"
    )
    cache_hits: int = 0
    model_seconds_total: float = 0.0
    wall_seconds: float = 0.0
    dollars_total: Optional[float] = Field(
        default=0.0, description="USD for all papers; None when the price is unknown"
    )
    price: Optional[dict[str, Any]] = Field(
        default=None, description="the price-table entry used (USD per million tokens)"
    )
    batch_discount: float = Field(
        default=1.0,
        description="multiplier applied to the price table in every dollar figure: 0.5 for --batch runs "
        "(the OpenAI Batch API bills half the listed price), else 1.0",
    )
    batch_ids: list[str] = Field(
        default_factory=list, description="OpenAI Batch API jobs this run submitted (--batch), oldest first"
    )
    request_options: dict[str, Any] = Field(
        default_factory=dict,
        description="how the last part of the run sent each request (openai/: timeout_s, seconds per HTTP request, "
        "--timeout; transport_retries, HTTP retries after a 429, a 5xx or a timeout, --retries); they change no reply, "
        "so they are not part of the config and a resume may change them",
    )
    rate_limited: int = Field(
        default=0, description="HTTP 429 (rate limit) answers the server gave during the run, retried or not"
    )
    concurrency: Optional[Concurrency] = Field(
        default=None,
        description="requests in flight in the last part of the run: where it started, who chose it and why, "
        "its peak and what the server's 429s left (None for runs written before it was recorded)",
    )
    engine: Optional[str] = Field(
        default=None,
        description="what ran the last part of the run: 'ray' for `paperfields run --engine ray` (Ray Data), "
        "None for the in-process runner; it changes no request or reply, so a resume may use the other",
    )
    corpus_path: Optional[str] = Field(
        default=None,
        description="absolute path of the corpus JSONL the papers were read from (where show and report find the "
        "abstracts); None for the benchmark's gold/corpus.jsonl and for runs written before it was recorded",
    )


def git_commit(root: Path | None = None) -> Optional[str]:
    """HEAD commit of the project checkout (with ``-dirty`` when there are uncommitted changes), or None
    (also for a wheel install, which has no checkout: the current folder's repository is not ours)."""
    root = root or checkout_root()
    if root is None:
        return None
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def corpus_identity(path: Path, papers: list[Paper]) -> str:
    """``RunConfig.corpus`` for a corpus of one's own: ``'<file name> papers:<12 hex>'``, the hex from the
    sha256 of its papers' (id, text) pairs in id order, so a same-named file with other abstracts differs
    even when a JSONL corpus reuses the ids; file order does not matter."""
    digest = hashlib.sha256(json.dumps(sorted((p.id, p.text) for p in papers)).encode()).hexdigest()[:12]
    return f"{path.name} papers:{digest}"


def corpus_tag(corpus: str) -> str:
    """A short name for a corpus of one's own in a run id, from its :func:`corpus_identity`
    (``'mine.jsonl papers:0123456789ab'`` -> ``mine-012345``): the file's stem and 6 hex of its papers."""
    name, _, digest = corpus.partition(" papers:")
    return f"{Path(name).stem}-{digest[:6]}" if digest else Path(name).stem


def default_run_id(
    backend: str,
    strategy: str,
    split: str,
    batch: bool = False,
    *,
    corpus: Optional[str] = None,
    mode: Optional[str] = None,
    grammar: bool = False,
    options: Optional[dict[str, Any]] = None,
) -> str:
    """``<provider>_<model>__<strategy>__<split>``, then what else makes runs of that command differ:
    ``__<corpus tag>`` for a corpus of one's own (``corpus``: its :func:`corpus_identity`, see
    :func:`corpus_tag`), ``__<mode>`` for a mode given, ``__grammar``, ``__<name>-<value>`` for each
    provider option of the config (``options``, :attr:`RunConfig.provider_options`), ``__batch`` for a
    Batch API run; path-unsafe characters replaced. A run of the benchmark corpus with none of these
    options keeps the bare id (the published run ids)."""
    parts = [backend.replace("/", "_"), strategy, split]
    parts += [corpus_tag(corpus)] if corpus else []
    parts += [mode] if mode else []
    parts += ["grammar"] if grammar else []
    parts += [
        f"{key}-{value if isinstance(value, str) else json.dumps(value)}"
        for key, value in sorted((options or {}).items())
    ]
    parts += ["batch"] if batch else []
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "__".join(parts)).strip("_")


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def iter_predictions(path: Path, repair: bool = False, data: Optional[bytes] = None) -> Iterator[PredictionLine]:
    """Yield the lines of ``predictions.jsonl`` one at a time (memory does not grow with the run);
    given ``data``, the file's bytes already read, parse those instead of reading ``path`` again.

    A cut-off last line (a crash mid-write: no final newline and not valid) is dropped, and with
    ``repair`` also removed from the file; any other bad line raises RunError naming file and line.
    """
    if data is None and not path.exists():
        return
    good_bytes = 0
    cut_off = False
    with path.open("rb") if data is None else io.BytesIO(data) as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                good_bytes += len(line)
                continue
            try:
                parsed = PredictionLine.model_validate_json(line)
            except ValidationError as exc:
                if not line.endswith(b"\n"):  # only the last line can lack its newline
                    cut_off = True
                    break
                first = exc.errors()[0]
                if first["type"] == "json_invalid":
                    detail = "not valid JSON" if line.isascii() or _is_utf8(line) else "not UTF-8 text"
                    raise RunError(f"{path}:{number}: bad prediction line: {detail} ({first['msg']})") from None
                raise RunError(f"{path}:{number}: bad prediction line: {field_error(exc)}") from None
            good_bytes += len(line)
            yield parsed
        ends_open = good_bytes > 0 and not cut_off and not line.endswith(b"\n")
    if (
        cut_off and not repair
    ):  # readers (score, show, report) say so; the runner repairs it silently and redoes the paper
        warnings.warn(
            f"{path}:{number}: last line is cut off (a run interrupted mid-write); ignored until the run is resumed",
            RuntimeWarning,
            stacklevel=2,
        )
    if repair and cut_off:
        with path.open("r+b") as fh:
            fh.truncate(good_bytes)
    elif repair and ends_open:  # a complete last line without its newline: close it before appending
        with path.open("ab") as fh:
            fh.write(b"\n")


def read_predictions(path: Path, repair: bool = False) -> list[PredictionLine]:
    """The latest line of each paper in ``predictions.jsonl`` (a transport error retried on resume
    leaves two lines; the later one counts), in order of first appearance; see
    :func:`iter_predictions` for the rules. Inside :func:`~paperfields.core.readonce.read_once` (and without
    ``repair``) the file is read and its lines validated once."""
    if repair or not path.exists():
        return latest_lines(iter_predictions(path, repair=repair))
    return list(parsed(path, "predictions", lambda data: latest_lines(iter_predictions(path, data=data))))


def latest_lines(lines: Iterable[PredictionLine]) -> list[PredictionLine]:
    """The latest of ``lines`` for each paper (a later line supersedes an earlier one), in order of first appearance."""
    latest: dict[str, PredictionLine] = {}
    for line in lines:
        latest[line.paper_id] = line
    return list(latest.values())


def load_manifest(run_dir: Path) -> Manifest:
    """Read ``manifest.json`` of a run folder. Raises RunError naming the file on a bad manifest."""
    path = run_dir / "manifest.json"
    if not path.is_file():
        raise RunError(f"{path}: no manifest (is {run_dir} a run folder?)")
    try:
        return Manifest.model_validate_json(file_bytes(path).decode("utf-8"))
    except ValidationError as exc:
        raise RunError(f"{path}: {field_error(exc)}") from None
