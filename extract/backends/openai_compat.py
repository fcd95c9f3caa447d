"""``openai/<model>`` and every other OpenAI-compatible provider, through ``openai`` + ``instructor``.

Each provider is a row of data, an :class:`OpenAICompatible` (name, API-key variable, base URL,
default mode, an options model and an optional request-body hook) registered at the end of this module:
openai, azure-openai, gemini, openrouter, together, groq, deepseek, mistral, fireworks, and the local
servers ollama, vllm, llamacpp, lmstudio. ``base_url`` points any of them elsewhere (``openai/`` at any
OpenAI-compatible server); ``grammar``
sends the JSON schema in ``response_format`` (llama.cpp server then constrains decoding to it). Transport
retries (429 honoring ``Retry-After``, 5xx, timeouts; exponential backoff with jitter) are the
openai SDK's own; validation re-asks are instructor's, counted apart in ``attempts``. An HTTP 200
whose body is not a chat completion (a proxy's HTML error page, ``"choices": []``) is a transport
error, not the model's empty reply (an error object in the body is quoted). ``message.refusal`` set is a
refusal; a record in ``reasoning_content``/``reasoning`` with empty content is read (:func:`read_completion`).
Reply shapes off the SDK's types are mended before anything parses them (:func:`normalize_reply`: content
as a list of parts, arguments as an object), an event stream answered to a non-stream request is read
into its completion (:func:`_sse_completion`), and a reply that does not parse after spending the whole
token budget is ``truncated`` whatever its finish_reason. ``--timeout`` bounds the whole request, body
included (:func:`_limited`); a ``Retry-After`` the SDK honors is told, a longer one named in the error.
Requests in flight adapt to the server's 429s (:class:`AdaptiveLimit`). The API key is read from the provider's variable
(``OPENAI_API_KEY``, ...) and never stored: it and anything shaped like
an OpenAI secret key are masked in the error and raw text returned.

Structured outputs: ``tools`` and ``json_schema`` send OpenAI's strict form (``"strict": true`` and a
schema from ``all_required(..., strict=True)``: every property required, ``additionalProperties:
false``, no ``default``), which strict servers require and others accept; ``json_schema`` is the
default for api.openai.com (the same request ``--batch`` sends). ``grammar`` sends the same strict
schema. Reasoning models (:func:`is_reasoning_model`) get ``max_completion_tokens``, no
``temperature`` (they sample only at their default) and ``reasoning_effort`` when asked for; their
hidden reasoning tokens are counted in ``usage.reasoning_tokens`` (already inside the output tokens
billed). A request the server refuses (HTTP 400, 413, 422: an unsupported parameter, a bad schema)
is ``request_rejected``, or ``context_overflow`` when the error says the prompt does not fit the
context window; neither is retried.

Transport: the SDK's aiohttp client (``openai[aiohttp]``) when installed, else its httpx one:
``bench/bench_remote.py`` measured the runner at 0.87-0.93 of its wall time over httpx, 0.6-0.8 ms less
client CPU per request. An aiohttp session belongs to the event loop it first ran on, so each loop
gets clients of its own, closed when ``asyncio.run`` ends (it cancels the tasks left, among them the
one that closes them).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import functools
import json
import math
import os
import re
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Optional

from pydantic import Field

from paperfields.core.runlog import (
    Concurrency,
    FailureClass,
    Generation,
    GenerationParams,
    Usage,
    error_text,
    redact_secrets,
    url_secrets,
)
from paperfields.core.schema import all_required
from paperfields.extract.backends.base import (
    FILTER_FINISH_REASONS,
    BackendError,
    BackendOptions,
    GenerationRequest,
    parse_reply,
    register_provider,
    replace_surrogates,
)
from paperfields.extract.backends.instructor_logs import quiet_instructor

MODES = ("json", "md_json", "tools", "json_schema")
STRICT_MODES = ("tools", "json_schema")  # the modes that carry the schema in the request: sent in OpenAI's strict form
# OpenAI's reasoning families, by the model name's last path segment (OpenRouter's "openai/o3" too);
# gpt-5-chat is the non-reasoning chat model of the gpt-5 generation.
_REASONING = re.compile(r"^(?:o\d+|gpt-5(?:\.\d+)?)(?:$|-(?!chat))", re.IGNORECASE)
# What servers say when the prompt (plus max_tokens) does not fit: OpenAI's error code, llama.cpp
# server's error type and wording, vLLM's and OpenRouter's "maximum context length", Anthropic's.
_CONTEXT_OVERFLOW = re.compile(
    r"context_length_exceeded|exceed_context_size|"
    r"exceeds the available context size|maximum context length|prompt is too long",
    re.IGNORECASE,
)
# The request itself is wrong for the server (bad schema, unsupported parameter, too long): sending
# it again can never succeed, so the SDK does not retry these and neither does a rerun.
REJECTED_STATUSES = (400, 413, 422)
# Requests in flight at the start of a run against a hosted API (no --concurrency): enough to hide
# most of each request's latency (bench/bench_concurrency.py: 6.6x the papers per second of one at a
# time against a server answering after 100 ms, the ideal 8x), few enough that a rate-limited account's
# 429s (AIMD, AdaptiveLimit) settle within one or two windows (against one admitting 3: 0.27 429s a paper).
HOSTED_CONCURRENCY = 8
# Seconds a capacity probe (/props, /v1/models) of a server of one's own may take before it is given up.
_PROBE_TIMEOUT = 3.0
# HTTP requests made on behalf of the current generate() call (each asyncio task has its own list).
_HTTP_REQUESTS: contextvars.ContextVar[list[str]] = contextvars.ContextVar("paperfields_http_requests")
# The raw reply instructor is about to parse in the current generate() call (see _CurrentReply).
_CURRENT_REPLY: contextvars.ContextVar[_CurrentReply] = contextvars.ContextVar("paperfields_current_reply")


class _CurrentReply:
    """The replies of one generate() call so far, and :func:`read_completion` of the latest, kept so
    the reply instructor's attempt passed is not parsed a second time for the Generation."""

    def __init__(self, responses: list[Any], tools: bool, budget: Optional[int] = None) -> None:
        self.responses = responses
        self.tools = tools
        self.budget = budget
        self.shapes: dict[int, list[str]] = {}  # id(reply) -> what :func:`normalize_reply` did to it
        self.transport_repairs: list[str] = []  # what the HTTP layer mended (an SSE body: "sse")
        self.sse_empty = False  # an event-stream body held no completion
        self.retry_after: Optional[float] = None  # the last wait a 429/5xx asked for, in seconds
        self._parsed: Optional[tuple[Any, type, Generation]] = None

    def latest(self, response_model: type) -> Generation:
        """:meth:`read` of the latest reply."""
        return self.read(self.responses[-1], response_model)

    def read(self, completion: Any, response_model: type) -> Generation:
        """``read_completion(completion, tools, response_model)``: the same Generation while both are
        the same (a caller that changes it must be the last to ask)."""
        kept = self._parsed
        if kept is None or kept[1] is not response_model or kept[0] is not completion:
            gen = read_completion(completion, self.tools, response_model, self.budget)
            for repair in [*self.transport_repairs, *self.shapes.get(id(completion), ())][::-1]:
                if repair not in gen.repairs:
                    gen.repairs.insert(0, repair)
            kept = self._parsed = (completion, response_model, gen)
        return kept[2]


# Parts of a message's content that are the model's thinking, not its answer (Mistral's "thinking", Anthropic
# through LiteLLM's "thinking"/"redacted_thinking", the Responses API's "reasoning"); skipped when joining.
_THINKING_PARTS = frozenset({"thinking", "redacted_thinking", "reasoning", "reasoning_content", "reasoning_text"})


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _part_text(part: Any) -> Optional[str]:
    """The text of one content part (``{"type": "text", "text": ...}``, ``output_text``, an untyped
    ``{"text": ...}``, a bare string, ``{"text": {"value": ...}}``); None for a part without text."""
    if isinstance(part, str):
        return part
    text = _get(part, "text")
    if isinstance(text, dict):
        text = text.get("value")
    return text if isinstance(text, str) else None


def _thinking_text(part: Any) -> str:
    """The text inside a thinking part (a string, or a list of text parts, under its type's key or ``text``)."""
    inner = _get(part, str(_get(part, "type"))) or _get(part, "text") or _get(part, "summary")
    if isinstance(inner, str):
        return inner
    if isinstance(inner, list):
        return "".join(t for t in map(_part_text, inner) if t)
    return ""


def _filtered_to_call(completion: Any, name: str) -> None:
    """A tools-mode reply stopped by the provider's filter with no tool call gets one holding its content,
    so instructor's parser reaches :func:`read_completion` (``content_filter``, not re-asked) instead of
    asking once more for the call, which the filter would stop again."""
    message = _message(completion)
    finish = getattr(completion.choices[0], "finish_reason", None) if message is not None else None
    if not (isinstance(finish, str) and finish.lower() in FILTER_FINISH_REASONS) or getattr(
        message, "tool_calls", None
    ):
        return
    from openai.types.chat import ChatCompletionMessageToolCall

    message.tool_calls = [
        ChatCompletionMessageToolCall.model_construct(
            id="filtered",
            type="function",
            function={"name": name, "arguments": message.content or ""},
        )
    ]


def normalize_reply(completion: Any) -> list[str]:
    """Mend, in place, the shapes of a chat completion's first message that are not the strings the
    openai SDK types say, and return the repairs made (nothing for a well-formed reply):

    - ``content`` a list of parts (Mistral, LiteLLM, inspect_ai#2389): the text parts joined, thinking parts
      (:data:`_THINKING_PARTS`) skipped but kept as the message's ``reasoning_content`` when it has none,
      so a record written only there is still read (``reasoning_field``): ``content_parts``;
    - ``content`` or a tool call's ``function.arguments`` a JSON object (or array) instead of a string
      (LiteLLM, Ollama): serialized as JSON text: ``object_not_text``.
    """
    message = _message(completion)
    if message is None:
        return []
    repairs: list[str] = []
    content = getattr(message, "content", None)
    if isinstance(content, list) and all(isinstance(p, str) or _get(p, "type") or _get(p, "text") for p in content):
        answer = [p for p in content if str(_get(p, "type")) not in _THINKING_PARTS]
        thoughts = [_thinking_text(p) for p in content if str(_get(p, "type")) in _THINKING_PARTS]
        message.content = "".join(t for t in map(_part_text, answer) if t)
        if any(thoughts) and not getattr(message, "reasoning_content", None):
            message.reasoning_content = "\n".join(t for t in thoughts if t)
        repairs.append("content_parts")
    elif content is not None and not isinstance(content, str):
        message.content = json.dumps(content, ensure_ascii=False)
        repairs.append("object_not_text")
    for call in getattr(message, "tool_calls", None) or ():
        function = getattr(call, "function", None)
        arguments = getattr(function, "arguments", None)
        if function is not None and arguments is not None and not isinstance(arguments, str):
            function.arguments = json.dumps(arguments, ensure_ascii=False)
            if "object_not_text" not in repairs:
                repairs.append("object_not_text")
    return repairs


def read_completion(completion: Any, tools: bool, response_model: type, budget: Optional[int] = None) -> Generation:
    """The Generation of one chat completion's first choice (usage and timing left at zero).

    ``message.refusal`` set is a ``refusal`` whatever its wording (OpenAI's explicit refusal field).
    Else the reply text (:func:`_reply_text`) goes through :func:`parse_reply`; when that text is
    empty and the message carries the answer in ``reasoning_content`` or ``reasoning`` (vLLM, SGLang
    and others with a reasoning parser put a reasoning model's whole output there), the record is read
    from that field instead, named ``reasoning_field``; a reasoning text with no record in it leaves the
    reply ``empty_reply``. A reply that does not parse (``malformed_json``, ``schema_invalid``) whose
    ``usage.completion_tokens`` reached ``budget`` (the request's max tokens) is ``truncated`` whatever
    its finish_reason: servers that report a cut-off as ``stop`` (or nothing) exist, and a re-ask at the
    same budget would be cut again."""
    text, finish = _reply_text(completion, tools)
    message = _message(completion)
    refusal = getattr(message, "refusal", None)
    if isinstance(refusal, str) and refusal.strip():
        said = replace_surrogates(refusal.strip()[:200])
        return Generation(
            failure=FailureClass.refusal,
            error=f"the model refused (message.refusal): {said}",
            raw_text=replace_surrogates(refusal),
            finish_reason=finish,
            repairs=["surrogates"] if said != refusal.strip()[:200] else [],
        )
    gen = parse_reply(text, finish, response_model)
    if gen.failure is FailureClass.empty_reply and message is not None:
        reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
        if isinstance(reasoning, str) and reasoning.strip():
            from_reasoning = parse_reply(reasoning, finish, response_model)
            if from_reasoning.record is not None:
                from_reasoning.repairs.insert(0, "reasoning_field")
                return from_reasoning
            gen.error = "empty reply (the content is empty and the reasoning field holds no record)"
    spent = usage_of(getattr(completion, "usage", None)).output_tokens
    if gen.failure in _CUT_LOOKING and budget and spent is not None and spent >= budget:
        gen.failure = FailureClass.truncated
        gen.error = (
            f"reply cut off at the token budget: completion_tokens={spent} reached max_tokens={budget} "
            f"though finish_reason={finish!r} ({gen.error})"
        )
    return gen


# What a reply cut off at the budget parses as, when the server does not say finish_reason=length.
_CUT_LOOKING = frozenset({FailureClass.malformed_json, FailureClass.schema_invalid})


def _message(completion: Any) -> Any:
    try:
        return completion.choices[0].message
    except (AttributeError, IndexError, TypeError):
        return None


class AdaptiveLimit:
    """How many HTTP requests may be in flight to one server, adapted to its 429 answers: additive
    increase, multiplicative decrease (AIMD, as TCP congestion control; Jacobson 1988).

    Unlimited until the first 429; then halved (from the requests in flight) once per window: a 429
    to a request sent before the last cut does not cut again, so one burst of 429s costs one halving.
    Each success adds ``1/limit`` (one more request per window of answers), up to the most ever in
    flight. A request waits for a slot before it is sent, so a retry after ``Retry-After`` queues
    instead of spending another of its attempts on a server that is already full. ``rate_limited``
    counts the 429 answers seen; ``run_peak`` is the most in flight since :meth:`mark` (one run's peak).
    """

    def __init__(self) -> None:
        self.limit = math.inf
        self.in_flight = 0
        self.peak = 0
        self.run_peak = 0
        self.rate_limited = 0
        self._window = 0
        self._waiters: collections.deque[asyncio.Future] = collections.deque()

    async def acquire(self) -> int:
        """Wait for a slot; returns the window the request is sent in (give it to :meth:`release`)."""
        while self.in_flight >= self.limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.in_flight += 1
        if self.in_flight > self.run_peak:
            self.run_peak = self.in_flight
            self.peak = max(self.peak, self.in_flight)
        return self._window

    def mark(self) -> None:
        """Start counting :attr:`run_peak` afresh (a run's start)."""
        self.run_peak = self.in_flight

    def release(self, window: int, status: Optional[int]) -> None:
        """Free the slot of a request sent in ``window`` whose answer had HTTP ``status`` (None: no answer)."""
        self.in_flight -= 1
        if status == 429:
            self.rate_limited += 1
            if window == self._window:
                self.limit = max(1, (min(self.limit, self.in_flight + 1)) // 2)
                self._window += 1
        elif status is not None and status < 400 and self.limit != math.inf:
            self.limit = min(self.limit + 1 / self.limit, max(self.peak, 1))
        free = self.limit - self.in_flight
        while self._waiters and free > 0:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1


def _limited(client_class: type, limit: AdaptiveLimit, whole: Optional[float] = None) -> type:
    """A subclass of the SDK's HTTP client class whose every request waits for a slot of ``limit``.

    Also, for each chat-completions request: ``whole`` seconds (``--timeout``) bound the whole request,
    headers and body (the SDK's timeout bounds each read, so a body trickled in small pieces never ends
    it); the time out is the SDK's own timeout exception, retried as one. A body of server-sent events
    (a streaming-only server) is read into the completion it streams (:func:`_sse_completion`), and a
    ``Retry-After`` is noted (:func:`_note_retry_after`)."""
    import httpx2

    class LimitedClient(client_class):  # type: ignore[misc, valid-type]
        async def send(self, request: Any, **kwargs: Any) -> Any:
            window = await limit.acquire()
            status = None
            completions = request.url.path.endswith("/chat/completions") and not kwargs.get("stream")
            try:
                if completions and whole is not None:
                    try:
                        response = await asyncio.wait_for(super().send(request, **kwargs), whole)
                    except asyncio.TimeoutError:
                        raise httpx2.ReadTimeout(
                            f"no whole answer within {whole:g} s (--timeout bounds the whole request)", request=request
                        ) from None
                else:
                    response = await super().send(request, **kwargs)
                status = response.status_code
                _note_retry_after(response)
                return _sse_completion(response, request) if completions else response
            finally:
                limit.release(window, status)

    return LimitedClient


def retry_after_seconds(headers: Any) -> Optional[float]:
    """The wait a response asks for, in seconds: ``retry-after-ms``, else ``Retry-After`` as seconds or as an
    HTTP date (RFC 9110 10.2.3, read by :func:`email.utils.parsedate_to_datetime`); None when it asks none."""
    import datetime as dt
    import email.utils

    try:
        return float(headers.get("retry-after-ms")) / 1000
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    when = when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)
    return max(0.0, (when - dt.datetime.now(dt.timezone.utc)).total_seconds())


def retry_after_cap() -> float:
    """The longest ``Retry-After`` the openai SDK waits for before asking again (its own constant, 120 s in
    openai 3.x); a longer one it does not retry, and the paper's error says the wait."""
    try:
        from openai._constants import MAX_RETRY_AFTER_DELAY  # the SDK's own limit, so ours cannot disagree

        return float(MAX_RETRY_AFTER_DELAY)
    except ImportError:  # an SDK without it honors up to 60 s
        return 60.0


def _note_retry_after(response: Any) -> None:
    """Note the wait a 429 or 5xx asks for in the current generate() call, and tell a wait the SDK honors
    (a warning, once per distinct wait of a second or more): a run that stalls says why."""
    if response.status_code != 429 and response.status_code < 500:
        return
    wait = retry_after_seconds(response.headers)
    current = _CURRENT_REPLY.get(None)
    if wait is None:
        return
    if current is not None:
        current.retry_after = wait
    if 1 <= wait <= retry_after_cap():
        import warnings

        warnings.warn(
            f"HTTP {response.status_code} from {response.request.url.host}: "
            f"waiting {wait:g} s, as its Retry-After asks",
            RuntimeWarning,
            stacklevel=2,
        )


def _events(text: str) -> list[str]:
    """The ``data:`` payloads of a server-sent-events body (the HTML living standard's event stream), in order."""
    return [
        line[5:].removeprefix(" ")
        for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if line.startswith("data:")
    ]


def _from_chunks(chunks: list[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """The ``chat.completion`` that ``chat.completion.chunk`` events stream (the first choice's content,
    tool calls by index, finish_reason, usage), or None when there is no chunk."""
    if not chunks:
        return None
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: dict[int, dict[str, Any]] = {}
    finish, usage = None, None
    for chunk in chunks:
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            finish = choice.get("finish_reason") or finish
            if isinstance(delta.get("content"), str):
                message["content"] = (message["content"] or "") + delta["content"]
            for key in ("refusal", "reasoning_content", "reasoning"):
                if isinstance(delta.get(key), str):
                    message[key] = message.get(key, "") + delta[key]
            for call in delta.get("tool_calls") or ():
                kept = calls.setdefault(
                    call.get("index", 0), {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
                kept["id"] = call.get("id") or kept["id"]
                function = call.get("function") or {}
                kept["function"]["name"] += function.get("name") or ""
                kept["function"]["arguments"] += function.get("arguments") or ""
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    first = chunks[0]
    completion = {
        "id": first.get("id", "chatcmpl-sse"),
        "object": "chat.completion",
        "created": first.get("created", 0),
        "model": first.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if usage is not None:
        completion["usage"] = usage
    return completion


def _sse_completion(response: Any, request: Any) -> Any:
    """``response`` itself, unless its body is server-sent events answered to a request that asked for none
    (a streaming-only server or proxy): then a response whose body is the completion they hold, a
    ``chat.completion`` event or the one its ``chat.completion.chunk`` events stream, and the repair
    ``sse`` noted; a completion followed by ``data: [DONE]`` is read the same. An event stream that holds
    no completion is noted so the error says so."""
    import httpx2

    if response.status_code != 200:
        return response
    body = response.content
    head = body.lstrip()[:5]
    if head != b"data:" and b"data:" not in body and "event-stream" not in response.headers.get("content-type", ""):
        return response
    try:
        json.loads(body)
        return response  # plain JSON that merely mentions "data:" (an abstract may)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        pass
    text = body.decode("utf-8", errors="replace")
    leading, _, _ = text.partition("\ndata:") if head != b"data:" else ("", "", "")
    payloads = ([leading] if leading.strip() else []) + _events(text)
    objects = []
    for payload in payloads:
        try:
            event = json.loads(payload)
        except json.JSONDecodeError:
            continue  # [DONE], a keep-alive
        if isinstance(event, dict):
            objects.append(event)
    whole = [
        o
        for o in objects
        if o.get("object") == "chat.completion"
        or any("message" in c for c in o.get("choices") or () if isinstance(c, dict))
    ]
    completion = (
        whole[-1]
        if whole
        else _from_chunks(
            [o for o in objects if o.get("object") == "chat.completion.chunk" or "choices" in o or "usage" in o]
        )
    )
    current = _CURRENT_REPLY.get(None)
    if completion is None:
        if current is not None:
            current.sse_empty = True
        return response
    if current is not None and "sse" not in current.transport_repairs:
        current.transport_repairs.append("sse")
    headers = {
        k: v
        for k, v in response.headers.items()
        if k.lower() not in ("content-length", "content-encoding", "content-type", "transfer-encoding")
    }
    return httpx2.Response(
        200,
        headers={**headers, "content-type": "application/json"},
        content=json.dumps(completion).encode(),
        request=request,
    )


async def _count_request(request: Any) -> None:
    requests = _HTTP_REQUESTS.get(None)
    if requests is not None:
        requests.append(str(request.url))


async def _close_when_loop_ends(client: Any) -> None:
    """Wait until cancelled (``asyncio.run`` cancels the tasks left before closing its loop), then
    close ``client`` on that loop: an aiohttp session left open logs "Unclosed client session"."""
    try:
        await asyncio.get_running_loop().create_future()
    finally:
        await client.close()


def is_reasoning_model(model: str) -> bool:
    """True for OpenAI's reasoning families (o1, o3, o4-mini, gpt-5, ...; not gpt-5-chat), by the
    last path segment of ``model``. They refuse ``max_tokens`` and any temperature but their default."""
    return bool(_REASONING.match(model.rsplit("/", 1)[-1]))


def sampling_params(model: str, params: GenerationParams, sample_index: int = 0) -> dict[str, Any]:
    """The generation parameters of one chat-completions request body for ``model``.

    ``{"temperature", "max_tokens", "seed"}`` for most models; for a reasoning model
    ``{"max_completion_tokens", "seed"}`` (temperature left out: such models sample at their
    default only). ``reasoning_effort`` is added when set. ``seed`` is ``params.seed + sample_index``.
    Used by the one-by-one backend and by ``--batch``, so both send the same request.
    """
    seed = params.seed + sample_index
    if is_reasoning_model(model):
        out: dict[str, Any] = {"max_completion_tokens": params.max_tokens, "seed": seed}
    else:
        out = {"temperature": params.temperature, "max_tokens": params.max_tokens, "seed": seed}
    if params.reasoning_effort is not None:
        out["reasoning_effort"] = params.reasoning_effort
    return out


@functools.lru_cache(maxsize=16)
def _strict_schema_json(response_model: type) -> str:
    return json.dumps(
        all_required(response_model.model_json_schema(), strict=True)
    )  # building a schema is slow: once per model


def strict_schema(response_model: type) -> dict[str, Any]:
    """A fresh copy of ``all_required(response_model.model_json_schema(), strict=True)``."""
    return json.loads(_strict_schema_json(response_model))


def strict_response_format(response_model: type) -> dict[str, Any]:
    """OpenAI's structured-outputs ``response_format`` for ``response_model``: type ``json_schema``,
    named after the model, ``strict``, with :func:`strict_schema`."""
    return {
        "type": "json_schema",
        "json_schema": {"name": response_model.__name__, "strict": True, "schema": strict_schema(response_model)},
    }


def usage_of(usage: Any) -> Usage:
    """:class:`Usage` from a chat completion's ``usage`` (an SDK object or a dict), with
    ``completion_tokens_details.reasoning_tokens`` as ``reasoning_tokens``. A usage that is absent or
    null, or a count in it that is null or not a number, is unknown (None), never 0; reasoning tokens
    not reported by a usage that is there are 0 (a model that does not reason reports none)."""

    def get(obj: Any, key: str) -> Any:
        if obj is None:
            return None
        return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)

    def count(value: Any) -> Optional[int]:
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    if usage is None:
        return Usage(input_tokens=None, output_tokens=None, reasoning_tokens=None)
    reasoning = get(get(usage, "completion_tokens_details"), "reasoning_tokens")
    return Usage(
        input_tokens=count(get(usage, "prompt_tokens")),
        output_tokens=count(get(usage, "completion_tokens")),
        reasoning_tokens=0 if reasoning is None else count(reasoning),
    )


def rejected_class(status: Optional[int], detail: str) -> Optional[FailureClass]:
    """The failure class of an HTTP error that can never succeed unchanged: ``context_overflow`` when
    ``detail`` (the error's code, type and message) says the context length is exceeded,
    ``request_rejected`` for any other 400, 413 or 422; None for every other status (a transport
    error: 401, 404, 429, 5xx may succeed later)."""
    if status not in REJECTED_STATUSES:
        return None
    return FailureClass.context_overflow if _CONTEXT_OVERFLOW.search(detail) else FailureClass.request_rejected


@functools.cache
def _instructor_model(model: type, strict: bool = False) -> type:
    """``instructor.openai_schema(model)`` built once per model, with its JSON schema memoized.

    instructor wraps a plain model in a new class and regenerates its JSON schema on every call
    (15 ms per request, most of the runner's overhead at high concurrency); a model already wrapped
    is used as is. Callers get a fresh copy of the schema, so the bytes sent are unchanged.
    ``strict`` wraps it in a class of its own whose schema is :func:`strict_schema` (what tools and
    json_schema modes send).
    """
    import instructor

    wrapped = instructor.openai_schema(model)
    generate = (lambda *a, **k: strict_schema(model)) if strict else wrapped.model_json_schema
    memo: dict[Any, str] = {}

    def model_json_schema(cls: type, *args: Any, **kwargs: Any) -> dict:
        key = (args, tuple(sorted(kwargs.items())))
        if key not in memo:
            memo[key] = json.dumps(generate(*args, **kwargs))
        return json.loads(memo[key])  # a fresh copy, 5x cheaper than copy.deepcopy

    wrapped.model_json_schema = classmethod(model_json_schema)
    plain_validate_json = wrapped.model_validate_json

    def model_validate_json(cls: type, json_data: Any, **kwargs: Any) -> Any:
        # Every mode reads the whole raw reply with the project's parse_reply, not the fragment instructor
        # cut out of it (md_json takes a later code block or object): all modes classify a reply alike,
        # repairs (fences, raw newlines, LaTeX) cost no re-ask, and a re-ask states what our parser found.
        current = _CURRENT_REPLY.get(None)
        if current is None:  # outside OpenAIBackend.generate
            return plain_validate_json(json_data, **kwargs)
        from instructor.core.exceptions import ResponseParsingError

        gen = current.latest(model)
        if gen.failure in NOT_REASKED:
            raise FinalReply(gen.error or gen.failure.value)  # not one of instructor's retryable errors: no re-ask
        if gen.record is None:
            raise ResponseParsingError(gen.error or "the reply holds no record")
        return cls.model_validate(gen.record)

    wrapped.model_validate_json = classmethod(model_validate_json)
    return wrapped


# Verdicts a re-ask cannot change: the same budget cuts the reply again, the provider's filter stops it again.
NOT_REASKED = frozenset({FailureClass.truncated, FailureClass.content_filter})


class FinalReply(Exception):
    """Raised in instructor's parse step for a reply whose verdict is in :data:`NOT_REASKED`: not one of
    instructor's retryable parse errors, so it ends the attempts at once."""


def _is_chat_completion(response: Any) -> bool:
    """True for a ChatCompletion with at least one choice carrying a message.

    The openai SDK hands back the raw body as a ``str`` when the server's Content-Type is not JSON,
    ``None`` for a JSON ``null``, and a ChatCompletion built without validation (``choices=None``)
    for any other JSON object; none of those is a reply from the model.
    """
    from openai.types.chat import ChatCompletion

    if not isinstance(response, ChatCompletion):
        return False
    choices = response.choices
    return isinstance(choices, list) and bool(choices) and getattr(choices[0], "message", None) is not None


def _describe(response: Any, secrets: tuple[str, ...]) -> str:
    """A short account of a reply that is not a chat completion, for the error text (``secrets``
    masked before the body is cut)."""
    if response is None:
        return "no usable body"
    if isinstance(response, str):
        said = replace_surrogates(response.strip())
        return f"body {error_text(said, *secrets, limit=120)!r}" if said else "an empty body"
    error = getattr(response, "error", None)  # an error object in a 200 body (a server out of memory, a proxy)
    if error is None and getattr(response, "object", None) == "error":  # vLLM's {"object": "error", "message": ...}
        error = {"message": getattr(response, "message", None)}
    if error is None and isinstance(getattr(response, "detail", None), str):  # a FastAPI server's {"detail": ...}
        error = {"message": response.detail}
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else getattr(error, "message", None)
        said = replace_surrogates(str(message if message is not None else error))
        return f"the server's error: {error_text(said, *secrets, limit=200)!r}"
    choices = getattr(response, "choices", None)
    return "no choices" if not choices else "a choice without a message"


def _reply_text(completion: Any, tools: bool = False) -> tuple[Optional[str], Optional[str]]:
    """Raw text and finish_reason of a chat completion: the content, else the first tool call's
    arguments (first, when ``tools``: tools mode asks for the call, and content beside it is talk),
    else the refusal."""
    try:
        choice = completion.choices[0]
    except (AttributeError, IndexError, TypeError):
        return None, None
    message = choice.message
    if message is None:
        return None, choice.finish_reason
    calls = getattr(message, "tool_calls", None)
    text = calls[0].function.arguments if tools and calls else message.content
    if not text and calls:
        text = calls[0].function.arguments
    if not text and getattr(message, "refusal", None):
        text = message.refusal
    return text, choice.finish_reason


_TITLE = re.compile(r"<title[^>]*>(.*?)</title>|<h1[^>]*>(.*?)</h1>", re.IGNORECASE | re.DOTALL)


def _status_text(exc: BaseException, secrets: tuple[str, ...]) -> str:
    """What an HTTP error's body says, short: its JSON error's message (OpenAI's ``{"error": {"message"}}``,
    vLLM's ``{"object": "error", "message"}``, a bare ``{"error": "..."}``), else an HTML page's title (a
    proxy's or load balancer's error page), else the start of the body; the reason phrase when empty."""
    body = getattr(exc, "body", None)
    response = getattr(exc, "response", None)
    reason = getattr(response, "reason_phrase", "") or ""
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if message is None:
            message = body.get("message") or body.get("detail")
        if message is not None:
            return error_text(str(message), *secrets, limit=200)
    text = body if isinstance(body, str) else (response.text if response is not None else "")
    found = _TITLE.search(text or "")
    if found:
        title = re.sub(r"<[^>]+>|\s+", " ", found.group(1) or found.group(2)).strip()
        return f"{reason} (an HTML page titled {error_text(title, *secrets, limit=120)!r})".strip()
    text = re.sub(r"\s+", " ", text or "").strip()
    return error_text(text, *secrets, limit=200) if text else reason or "no body"


# What a connection error's causes say, named plainly: the SDK reports any of them as "Connection error."
_CONNECTION_CAUSES = (
    ("ConnectionResetError", "the connection was reset by the server (or a proxy between)"),
    ("ServerDisconnectedError", "the server closed the connection before it answered"),
    ("RemoteProtocolError", "the server closed the connection before it answered"),
    ("ClientPayloadError", "the server closed the connection in the middle of its answer"),
    ("ConnectionRefusedError", "the connection was refused"),
)


def _connection_text(exc: BaseException) -> str:
    """The SDK's connection or timeout error, with the cause it hides named: a reset, a disconnect."""
    seen, cause = set(), exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        names = {type(cause).__name__} | {k.__name__ for k in type(cause).__mro__}
        if "errno" in dir(cause) and getattr(cause, "errno", None) == 104:
            names.add("ConnectionResetError")
        for name, said in _CONNECTION_CAUSES:
            if name in names or name in str(cause):
                return said
        if "--timeout" in str(cause):  # the whole-request bound of _limited
            return f"{exc} {cause}"
        cause = cause.__cause__ or cause.__context__
    return str(exc)


def _transport_cause(exc: BaseException, api_error: type) -> Optional[BaseException]:
    """The first ``api_error`` in ``exc``'s cause/context chain, if any (the openai transport error,
    timeout, connection or status, inside an instructor error)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, api_error):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def without_credentials(url: str) -> tuple[str, Optional[str]]:
    """(``url`` without its userinfo, the key the userinfo held: its password, else its user name; None
    without userinfo). ``http://user:sk-...@host/v1`` sends ``sk-...`` as the API key (a Bearer token, as
    the SDK sends its key) to ``http://host/v1``: left in the URL, aiohttp refuses credentials beside
    the SDK's Authorization header (every request a connection error) and httpx would replace the key
    by Basic auth."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    key = urllib.parse.unquote(password or user) or None
    return urllib.parse.urlunsplit(parts._replace(netloc=host)), key


def is_local_server(url: Optional[str], provider: Optional[OpenAICompatible] = None) -> bool:
    """True for a server on this machine: ``url``'s host is ``localhost`` or a loopback address, or
    (no ``url``) ``provider`` is a local one (its key not required: ollama/, vllm/, llamacpp/, lmstudio/)."""
    import ipaddress

    host = urllib.parse.urlsplit(url or "").hostname
    if host is None:
        return provider is not None and not provider.key_required
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_private_server(url: Optional[str], provider: Optional[OpenAICompatible] = None) -> bool:
    """True for a server of one's own: on this machine (:func:`is_local_server`) or on a private network,
    whose host is a private or link-local IP address (10/8, 172.16/12, 192.168/16, fc00::/7, ...) or a
    name no public DNS serves (no dot, as a container's ``vllm``; ``.local``, ``.lan``, ``.internal``,
    ``.home.arpa``). Such a server has as many slots as its owner gave it, often one: a run starts
    with one request in flight unless the server says more (:func:`server_slots`)."""
    import ipaddress

    if is_local_server(url, provider):
        return True
    host = urllib.parse.urlsplit(url or "").hostname
    if host is None:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host or host.endswith((".local", ".lan", ".internal", ".home.arpa"))
    return address.is_private or address.is_link_local


def _get_json(url: str, api_key: Optional[str]) -> Any:
    """The JSON body of ``GET url`` (with the key as a Bearer token), or None for any failure: no
    answer within :data:`_PROBE_TIMEOUT`, an HTTP error, a body that is not JSON."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=_PROBE_TIMEOUT) as response:
            return json.loads(response.read())
    except (OSError, ValueError):  # URLError, HTTPError, timeouts are OSErrors; a bad body a ValueError
        return None


def server_slots(base_url: str, api_key: Optional[str] = None) -> Optional[tuple[int, str]]:
    """(requests the server answers at once, how that was read) for a server that says so, else None.

    llama.cpp's ``llama-server`` answers ``GET /props`` (at the root, beside ``/v1``) with
    ``total_slots``, its ``--parallel``. vLLM says no slot count (``--max-num-seqs`` is not served),
    but names itself in ``GET /v1/models`` (``owned_by: "vllm"``) and batches whatever it is sent
    (128 or more sequences by default), so it gets :data:`HOSTED_CONCURRENCY`. llama-cpp-python's
    server, Ollama and LM Studio say neither (None: one at a time)."""
    base = base_url.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    props = _get_json(root + "/props", api_key)
    slots = props.get("total_slots") if isinstance(props, dict) else None
    if isinstance(slots, int) and not isinstance(slots, bool) and slots >= 1:
        return slots, f"the llama.cpp server's /props says total_slots {slots} (its --parallel): one request per slot"
    models = _get_json(base + "/models", api_key)
    data = models.get("data") if isinstance(models, dict) else None
    if isinstance(data, list) and any(isinstance(m, dict) and m.get("owned_by") == "vllm" for m in data):
        return (
            HOSTED_CONCURRENCY,
            f"a vLLM server (/v1/models: owned_by vllm), which batches the requests it is sent (--max-num-seqs, not "
            f"served): {HOSTED_CONCURRENCY} in flight, as against a hosted API",
        )
    return None


class OpenAIBackend:
    """instructor-patched ``AsyncOpenAI`` client; one request per :meth:`generate`."""

    def __init__(
        self,
        model: str,
        base_url: Optional[str] = None,
        mode: Optional[str] = None,
        timeout_s: float = 120.0,
        transport_retries: int = 4,
        reasks: int = 1,
        grammar: bool = False,
        transport: Optional[str] = None,
        provider: Optional[OpenAICompatible] = None,
        options: Optional[OpenAIOptions] = None,
    ) -> None:
        import instructor
        import openai
        from instructor.core import exceptions as instructor_errors
        from instructor.core.hooks import Hooks

        provider = provider or OPENAI_COMPATIBLE["openai"]
        self.provider = provider
        self.options = options  # the provider's options, for its request-body hook
        self.name = f"{provider.name}/{model}"
        self.model = model
        self.base_url = base_url
        self.mode = mode or provider.mode_at(base_url)
        self.reasoning = is_reasoning_model(model)  # accepts reasoning_effort (base.check_params)
        if base_url is not None and not re.match(r"https?://[^/\s]+", base_url):
            raise BackendError(
                f"--base-url '{redact_secrets(base_url)}' is not an http(s) URL (e.g. http://127.0.0.1:8000/v1)"
            )
        if self.mode not in MODES:
            raise BackendError(f"unknown instructor mode '{self.mode}'; choose one of {', '.join(MODES)}")
        if grammar and self.mode in STRICT_MODES:
            raise BackendError(
                f"--grammar does not apply to --mode {self.mode}, which sends the "
                "schema itself; use it with --mode json or md_json"
            )
        server = base_url or os.environ.get(provider.base_url_env) or provider.base_url
        if server is None:
            raise BackendError(f"{provider.name}/ needs --base-url (or {provider.base_url_env}): {provider.about}")
        server, url_key = without_credentials(server)
        api_key = url_key or (os.environ.get(provider.key_env) if provider.key_env else None)
        if not api_key and provider.key_required and not base_url:  # a server given with --base-url may need none
            raise BackendError(
                f"{provider.key_env} is not set (or pass --base-url for a local OpenAI-compatible server)"
            )
        self._openai = openai
        self._instructor = instructor
        self._errors = instructor_errors
        self._hooks_cls = Hooks
        if transport not in (None, "aiohttp", "httpx"):
            raise BackendError(f"unknown transport '{transport}'; choose aiohttp or httpx")
        self.transport = transport or "aiohttp"
        self._client_args = {
            "api_key": api_key or "no-key",
            "base_url": server,
            "timeout": timeout_s,
            "max_retries": transport_retries,
        }
        # How each request is sent (not what it asks): recorded in the manifest, not in the run config.
        self.request_options = {"timeout_s": timeout_s, "transport_retries": transport_retries}
        self.limit = (
            AdaptiveLimit()
        )  # requests in flight, adapted to the server's 429s; shared by every event loop's client
        self._loop: Optional[asyncio.AbstractEventLoop] = None  # the event loop generate() last ran on
        self._closers: set[asyncio.Task] = set()  # held here: an event loop keeps only weak references to its tasks
        try:
            self._connect()
        except RuntimeError as exc:  # the SDK's aiohttp client, absent or without its extra installed
            if transport == "aiohttp":
                raise BackendError(
                    f"transport 'aiohttp' needs the openai SDK's aiohttp extra: pip install 'openai[aiohttp]' ({exc})"
                ) from None
            self.transport = "httpx"
            self._connect()
        self.reasks = reasks
        self.grammar = grammar
        self._server = f"server {redact_secrets(server)}"  # named in transport errors, a key in the URL masked
        # until the server first answers, a refused connection is told at once (not asked of a hosted API)
        self._answered = base_url is None and provider.key_required

    def _connect(self) -> None:
        """Build the SDK client and its instructor wrapper over ``self.transport``.

        Raises RuntimeError when the transport is aiohttp and the SDK has no aiohttp client (before
        openai 1.8x), or has one without its extra installed (the SDK's own RuntimeError)."""
        openai, instructor = self._openai, self._instructor
        make = (
            getattr(openai, "DefaultAioHttpClient", None)
            if self.transport == "aiohttp"
            else openai.DefaultAsyncHttpxClient
        )
        if make is None:
            raise RuntimeError(f"openai {openai.__version__} has no DefaultAioHttpClient")
        owner: list[Any] = []
        hooks: list[Callable[[Any], Any]] = [_count_request]
        if self.transport == "aiohttp":

            async def close_with_loop(request: Any) -> None:
                # On the client's first request: generate() and --batch alike send through it.
                if len(owner) == 1:
                    task = asyncio.get_running_loop().create_task(_close_when_loop_ends(owner[0]))
                    owner.append(task)
                    self._closers.add(task)
                    task.add_done_callback(self._closers.discard)

            hooks.append(close_with_loop)
        http_client = _limited(make, self.limit, self._client_args["timeout"])(
            timeout=self._client_args["timeout"], event_hooks={"request": hooks}
        )
        client = openai.AsyncOpenAI(**self._client_args, http_client=http_client)
        owner.append(client)
        self.raw_client = (
            client  # the plain AsyncOpenAI client (files and batches for --batch); holds the key, never stored
        )
        self.client = instructor.from_openai(client, mode=getattr(instructor.Mode, self.mode.upper()))

    @property
    def secrets(self) -> tuple[str, ...]:
        """The API key the client sends and any key in the base URL (its password, a ``?api_key=``):
        servers echo them in 401 bodies, and the call wrapper (``extract/call.py``) masks them in every
        generation before anything is written."""
        return (self.raw_client.api_key, *url_secrets(self._client_args["base_url"]))  # and a key given in the URL

    @functools.cached_property
    def default_concurrency(self) -> Concurrency:
        """How many requests a run sends at once when ``--concurrency`` is not given, and why.

        A hosted API (any server not on this machine or a private network, :func:`is_private_server`):
        :data:`HOSTED_CONCURRENCY`, cut by its 429s (:class:`AdaptiveLimit`). A server of one's own:
        the slots it says it has (:func:`server_slots`: a llama.cpp server's ``/props``, a vLLM
        server), else 1, since more requests than slots only wait in its queue inside their timeout.
        Read once per backend (a server of one's own is asked at most two GETs)."""
        server = self._client_args["base_url"]
        if not is_private_server(server, self.provider):
            return Concurrency(
                start=HOSTED_CONCURRENCY,
                source="default",
                why=f"a hosted API: {HOSTED_CONCURRENCY} in flight, halved on its 429s and raised again "
                "as it answers (AIMD)",
            )
        key = self._client_args["api_key"]
        said = server_slots(server, None if key == "no-key" else key)
        if said is not None:
            return Concurrency(start=said[0], source="server", why=said[1])
        return Concurrency(
            start=1,
            source="default",
            why="a server on this machine or a private network that says no slot count (no llama.cpp /props "
            "total_slots, not vLLM): one request at a time; give --concurrency N for a server with N slots",
        )

    @property
    def concurrency(self) -> int:
        """Requests at once when none is given: :attr:`default_concurrency`'s ``start``."""
        return self.default_concurrency.start

    def _transport_failure(self, exc: BaseException) -> Generation:
        """The Generation of an API error: ``request_rejected`` or ``context_overflow`` for a request
        the server refused (see :func:`rejected_class`), else ``transport_error``."""
        status = getattr(exc, "status_code", None)
        rejected = rejected_class(
            status, " ".join(str(x) for x in (getattr(exc, "code", None), getattr(exc, "type", None), exc) if x)
        )
        if rejected is not None:
            message = _status_text(exc, self.secrets)
            what = (
                "the prompt does not fit the model's context window"
                if rejected is FailureClass.context_overflow
                else "the server rejected the request"
            )
            detail = error_text(f"{what} (HTTP {status}): {message}", *self.secrets)
            return Generation(failure=rejected, error=f"{detail} ({self._server}); it cannot succeed unchanged")
        current = _CURRENT_REPLY.get(None)
        wait = current.retry_after if current is not None else None
        if status is not None:
            said = f"HTTP {status}: {_status_text(exc, self.secrets)}"
            if wait is not None and wait > retry_after_cap():
                said += (
                    f"; the server asks to wait {wait:g} s (Retry-After) before asking again, longer than the "
                    f"{retry_after_cap():g} s a run waits: run the same command again later"
                )
        else:
            said = f"{type(exc).__name__}: {_connection_text(exc)}"
        detail = error_text(said, *self.secrets)
        advice = self._timeout_advice() if isinstance(exc, self._openai.APITimeoutError) else ""
        return Generation(failure=FailureClass.transport_error, error=f"{detail} ({self._server}){advice}")

    def _timeout_advice(self) -> str:
        """What to do after a request timed out, for the failure's message: which flag to raise, and,
        against a local server (a loopback URL, or a local provider: ollama/, vllm/, llamacpp/, lmstudio/),
        that it answers one request per slot, so ``--concurrency`` above its slots only queues requests
        into the timeout."""
        timeout = self._client_args["timeout"]
        asked = 1 + self._client_args["max_retries"]
        times = "once" if asked == 1 else f"{asked} times"
        said = f"; no answer within --timeout {timeout:g} s, asked {times}: raise --timeout"
        if not is_local_server(self._client_args["base_url"], self.provider):
            return said
        return (
            f"{said} (a local server on a CPU can take minutes per paper: e.g. --timeout 900 --retries 1) and keep "
            "--concurrency at most the server's slots (llama.cpp's --parallel, Ollama's OLLAMA_NUM_PARALLEL; 1 for a "
            "one-slot server: more requests only wait in its queue, inside their timeout)"
        )

    async def _nothing_listening(self) -> Optional[Generation]:
        """A ``transport_error`` saying nothing listens at the base URL when a TCP connection to it is
        refused, else None. The SDK would retry a refused connection for seconds and report a timeout
        (its aiohttp client) or "Connection error."; a refusal is told at once instead. Asked only
        until the server first answers, and not when an HTTP proxy carries the requests."""
        server = self._client_args["base_url"]  # the given URL, else the provider's own (ollama/: localhost)
        url = urllib.parse.urlsplit(server or "")
        host, port = url.hostname, url.port or (443 if url.scheme == "https" else 80)
        if not host or (urllib.request.getproxies().get(url.scheme) and not urllib.request.proxy_bypass(host)):
            return None
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port), timeout=self._client_args["timeout"]
            )
        except ConnectionRefusedError:
            return Generation(
                failure=FailureClass.transport_error,
                error=f"nothing is listening at {redact_secrets(server)} (connection to {host}:{port} refused): "
                "start the server, or check the base URL",
            )
        except (OSError, asyncio.TimeoutError):  # unreachable, unknown host, silent: the SDK's own error says it
            return None
        writer.close()
        return None

    async def generate(self, request: GenerationRequest) -> Generation:
        """Ask the server once (plus the SDK's transport retries and instructor's re-asks) and
        classify the outcome. Error texts are cut with the key masked; the call wrapper masks the rest."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            if self._loop is not None:
                # the session belongs to an earlier event loop (closed with it): a new one for this loop
                self._connect()
            self._loop = loop
        if not self._answered and (refused := await self._nothing_listening()) is not None:
            return refused
        responses: list[Any] = []
        usages: list[Usage] = []
        http_requests: list[str] = []
        _HTTP_REQUESTS.set(http_requests)
        tools = self.mode == "tools"
        current = _CurrentReply(responses, tools, request.params.max_tokens)
        reading = _CURRENT_REPLY.set(current)  # what _instructor_model's parser reads

        def on_response(response: Any) -> None:
            # Snapshot usage now: instructor later folds the running total into the last response.
            responses.append(response)
            usages.append(usage_of(getattr(response, "usage", None)))
            # Mend content parts and object arguments before instructor's own parser sees them.
            current.shapes[id(response)] = normalize_reply(response)
            if tools:
                _filtered_to_call(response, wrapped.openai_schema["name"])

        hooks = self._hooks_cls()
        hooks.on("completion:response", on_response)
        failure: Optional[Generation] = None
        record = None
        strict = self.mode in STRICT_MODES
        wrapped = _instructor_model(request.response_model, strict)
        extra: dict[str, Any] = {}
        # extra_body keys replace instructor's in the request body: instructor has no flag for "strict": true.
        if (
            self.grammar
        ):  # llama.cpp server: constrain decoding to the schema (overrides instructor's plain json_object)
            extra["extra_body"] = {
                "response_format": {"type": "json_object", "schema": strict_schema(request.response_model)}
            }
        elif self.mode == "json_schema":
            extra["extra_body"] = {"response_format": strict_response_format(request.response_model)}
        elif self.mode == "tools":
            extra["extra_body"] = {
                "tools": [{"type": "function", "function": {**wrapped.openai_schema, "strict": True}}]
            }
        if self.provider.body is not None:  # the provider's own keys, beside the ones above
            extra["extra_body"] = {**extra.get("extra_body", {}), **self.provider.body(self.model, self.options)}
        try:
            with quiet_instructor():  # each attempt is recorded below; instructor's log line would repeat it
                record, _ = await self.client.chat.completions.create_with_completion(
                    model=self.model,
                    messages=request.messages,
                    response_model=wrapped,
                    max_retries=self.reasks,
                    hooks=hooks,
                    **sampling_params(self.model, request.params, request.sample_index),
                    **extra,
                )
        except self._errors.IncompleteOutputException as exc:
            if exc.last_completion is not None and exc.last_completion not in responses:
                on_response(exc.last_completion)
            failure = Generation(
                failure=FailureClass.truncated, error="reply cut off at max_tokens (finish_reason=length)"
            )
        except self._openai.APIError as exc:
            failure = self._transport_failure(exc)
        except self._errors.InstructorError as exc:
            cause = _transport_cause(exc, self._openai.APIError)
            last = getattr(exc, "last_completion", None) or (responses[-1] if responses else None)
            if cause is not None:
                failure = self._transport_failure(cause)
            elif not _is_chat_completion(last):
                # The model never answered (a proxy's error page with status 200, "choices": []): a
                # transport error, so it is neither cached nor counted as done, and a rerun asks again.
                what = (
                    "an event stream (SSE) with no completion in it, answered to a request that asked for none"
                    if current.sse_empty
                    else "a body that is not valid JSON"
                    if _transport_cause(exc, json.JSONDecodeError)
                    else _describe(last, self.secrets)
                )
                failure = Generation(
                    failure=FailureClass.transport_error,
                    error=f"the server's reply was not a chat completion: {what} ({self._server})",
                )
            # Re-asks exhausted: the last reply's own classification. A tools-mode reply without a tool
            # call never reached our parser (instructor re-asks for the call), so it may still hold a record.
            else:
                failure = current.read(last, request.response_model)
                if failure.failure is None:
                    failure = None
        finally:
            _CURRENT_REPLY.reset(reading)  # later validation in this task is plain pydantic again
        self._answered = self._answered or bool(
            responses
        )  # a server that only ever errs is probed again: one connection, harmless
        usage = sum(usages, Usage())
        text, finish = _reply_text(responses[-1], tools) if responses else (None, None)
        if failure is None:
            # The parse instructor's attempt passed (see _instructor_model), with its repairs: kept, not redone.
            gen = current.latest(request.response_model)
            if tools and not getattr(responses[-1].choices[0].message, "tool_calls", None):
                gen.repairs.append("no_tool_call")
        else:
            gen = failure
            gen.raw_text = gen.raw_text if gen.raw_text is not None else replace_surrogates(text)
            gen.finish_reason = gen.finish_reason or finish
        gen.usage = usage
        gen.attempts = max(1, len(responses))
        gen.transport_retries = max(0, len(http_requests) - max(1, len(responses)))
        return gen


class OpenAIOptions(BackendOptions):
    """Options of every OpenAI-compatible provider: the server (None: the provider's own), the
    instructor mode (None: the provider's, :meth:`OpenAICompatible.mode_at`), the schema in
    response_format for llama.cpp server, seconds per HTTP request, HTTP retries (the SDK's) and
    validation re-asks (instructor's), and the HTTP transport (None: aiohttp when the SDK's aiohttp
    extra is installed, else httpx; aiohttp without the extra is a BackendError). A provider with
    options of its own subclasses it."""

    base_url: Optional[str] = Field(default=None, json_schema_extra={"flag": "--base-url"})
    mode: Optional[str] = Field(default=None, json_schema_extra={"flag": "--mode"})
    grammar: bool = Field(default=False, json_schema_extra={"flag": "--grammar"})
    timeout_s: float = Field(default=120.0, gt=0, json_schema_extra={"flag": "--timeout", "sent_only": True})
    transport_retries: int = Field(default=4, ge=0, json_schema_extra={"flag": "--retries", "sent_only": True})
    reasks: int = Field(default=1, ge=0)
    transport: Optional[Literal["aiohttp", "httpx"]] = Field(default=None, json_schema_extra={"sent_only": True})


BodyHook = Callable[[str, Any], dict[str, Any]]


@dataclass(frozen=True)
class OpenAICompatible:
    """An OpenAI-compatible provider as data (inspect_ai's ``OpenAICompatibleAPI`` subclasses set the
    same: a service name, its key variable and base URL):

    - ``name``: backends are ``<name>/<model>``; ``about``: one line for help and errors;
    - ``base_url``: its server (None: ``--base-url`` must be given, e.g. an Azure resource's); the
      variable :attr:`base_url_env` (``OPENAI_BASE_URL``, ``GEMINI_BASE_URL``) replaces it;
    - ``key_env``: the environment variable holding its API key; ``key_required``: False for a local
      server, which gets the key when it is set (its own ``--api-key``) and ``no-key`` else. At a URL
      given with ``--base-url`` a key is never required;
    - ``mode``: the instructor mode at its own server, ``mode_elsewhere`` the one at a URL given with
      ``--base-url`` (None: the same), see :meth:`mode_at`;
    - ``options``: its :class:`OpenAIOptions` (a subclass with the provider's own, validated by
      ``get_backend``; those that change the output go into the run config and cache key);
    - ``body``: an optional hook ``body(model, options) -> dict``, keys added to every request body
      (``extra_body``), in the one-by-one path and in ``--batch`` alike;
    - ``batch``: it serves the OpenAI Batch API (``--batch``).
    """

    name: str
    base_url: Optional[str]
    key_env: Optional[str] = None
    key_required: bool = True
    mode: str = "md_json"
    mode_elsewhere: Optional[str] = None
    options: type[OpenAIOptions] = OpenAIOptions
    body: Optional[BodyHook] = None
    batch: bool = False
    about: str = ""

    @property
    def base_url_env(self) -> str:
        """The environment variable that replaces :attr:`base_url` (``OPENAI_BASE_URL``, as the openai SDK reads it)."""
        return self.name.upper().replace("-", "_") + "_BASE_URL"

    def mode_at(self, base_url: Optional[str]) -> str:
        """The mode used when none is given: ``mode`` at the provider's server, ``mode_elsewhere`` (when
        set) at a ``base_url`` given. md_json reads a fenced or ``<think>``-prefixed reply in one attempt,
        which local servers often send; OpenAI itself gets strict structured outputs, what --batch sends."""
        return (self.mode_elsewhere or self.mode) if base_url else self.mode

    def body_of(self, model: str, options: Optional[OpenAIOptions]) -> dict[str, Any]:
        """The keys :attr:`body` adds to a request body for ``model`` (none without a hook)."""
        return self.body(model, options or self.options()) if self.body is not None else {}


FAMILY = "OpenAI-compatible providers"
OPENAI_COMPATIBLE: dict[str, OpenAICompatible] = {}


def register_openai_compatible(provider: OpenAICompatible) -> OpenAICompatible:
    """Register ``provider`` (see :class:`OpenAICompatible`) so ``<name>/<model>`` backends are
    :class:`OpenAIBackend` instances with its settings; returns it."""

    def factory(model: str, **options: Any) -> OpenAIBackend:
        shared = {key: options[key] for key in OpenAIOptions.model_fields}
        return OpenAIBackend(model, **shared, provider=provider, options=provider.options.model_construct(**options))

    OPENAI_COMPATIBLE[provider.name] = provider
    register_provider(provider.name, provider.options, family=FAMILY, about=provider.about, key_env=provider.key_env)(
        factory
    )
    return provider


class GeminiOptions(OpenAIOptions):
    """gemini/: the OpenAI-compatible options, and Gemini's thinking budget."""

    thinking_budget: Optional[int] = Field(
        default=None, ge=0, description="tokens Gemini 2.5 may think before it answers (0: no thinking)"
    )


def _gemini_body(model: str, options: GeminiOptions) -> dict[str, Any]:
    # Google's OpenAI-compatible endpoint reads its own settings from an "extra_body" key of the request body.
    if options.thinking_budget is None:
        return {}
    return {"extra_body": {"google": {"thinking_config": {"thinking_budget": options.thinking_budget}}}}


_LOCAL = "a local server (its key variable is sent when set)"
for _provider in (
    OpenAICompatible(
        "openai",
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        mode="json_schema",
        mode_elsewhere="md_json",
        batch=True,
        about="OpenAI, or any OpenAI-compatible server with --base-url",
    ),
    OpenAICompatible(
        "azure-openai",
        None,
        "AZURE_OPENAI_API_KEY",
        mode="json_schema",
        about="Azure OpenAI: --base-url https://<resource>.openai.azure.com/openai/v1/, the model is the deployment",
    ),
    OpenAICompatible(
        "gemini",
        "https://generativelanguage.googleapis.com/v1beta/openai/",
        "GEMINI_API_KEY",
        options=GeminiOptions,
        body=_gemini_body,
        about="Google Gemini through its OpenAI-compatible endpoint (-o thinking_budget=N)",
    ),
    OpenAICompatible("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", about="OpenRouter"),
    OpenAICompatible("together", "https://api.together.xyz/v1", "TOGETHER_API_KEY", about="Together AI"),
    OpenAICompatible("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", about="Groq"),
    OpenAICompatible("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", about="DeepSeek"),
    OpenAICompatible("mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY", about="Mistral AI"),
    OpenAICompatible("fireworks", "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY", about="Fireworks AI"),
    OpenAICompatible("ollama", "http://localhost:11434/v1", "OLLAMA_API_KEY", False, about=f"Ollama, {_LOCAL}"),
    OpenAICompatible("vllm", "http://localhost:8000/v1", "VLLM_API_KEY", False, about=f"vLLM, {_LOCAL}"),
    OpenAICompatible(
        "llamacpp", "http://localhost:8080/v1", "LLAMACPP_API_KEY", False, about=f"llama.cpp server, {_LOCAL}"
    ),
    OpenAICompatible("lmstudio", "http://localhost:1234/v1", "LMSTUDIO_API_KEY", False, about=f"LM Studio, {_LOCAL}"),
):
    register_openai_compatible(_provider)
