"""The backend contract: one async method, a registry keyed by provider name, reply parsing.

A backend turns a :class:`GenerationRequest` (the strategy's chat messages plus the response
schema) into a :class:`Generation`: either a schema-valid record or a classified failure, always
with the raw text, token usage and attempt count. Backends never raise for a bad model reply; they
raise only for misconfiguration (:class:`BackendError`). Nobody calls :meth:`Backend.generate`
directly: the call wrapper (``extract/call.py``, :class:`~paperfields.extract.call.Model`) adds the
response cache, timing, redaction of the backend's ``secrets`` and the catch-all, once for all.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import json
import pkgutil
import re
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from paperfields.core.errors import PaperFieldsError
from paperfields.core.runlog import (  # noqa: F401  (the run log's nouns, re-exported for backends)
    MASK,
    FailureClass,
    Generation,
    GenerationParams,
    Usage,
    redact_generation,
    redact_secrets,
)
from paperfields.core.schema import PaperRecord


class BackendError(PaperFieldsError, RuntimeError):
    """Misconfiguration: unknown provider, missing package, missing weights, bad option."""


class GenerationRequest(BaseModel):
    """What a strategy asks a backend for: the paper, its chat messages, the response model and
    parameters. Model backends use ``messages``; model-free ones (``rules/``) read ``paper_text``."""

    model_config = {"arbitrary_types_allowed": True}

    messages: list[dict[str, str]]
    paper_text: Optional[str] = None
    response_model: type[BaseModel] = PaperRecord
    params: GenerationParams = GenerationParams()
    sample_index: int = 0


class Backend(Protocol):
    """The contract every backend implements. A backend with API keys lists them in a ``secrets``
    attribute (a tuple of strings): the call wrapper masks them in everything the backend returns.
    ``latency_s`` is the wrapper's to set, unless the backend measures its own work apart from a
    wait of its own (the local backend: the queue for its one model)."""

    name: str

    async def generate(self, request: GenerationRequest) -> Generation:
        """Answer one request. Bad replies become a Generation with ``failure`` set."""
        ...


class BackendOptions(BaseModel):
    """The options a provider's factory takes: subclass it per provider and pass the subclass to
    :func:`register_provider`. An option the provider does not declare is refused
    (``extra="forbid"``), so ``--base-url`` given to ``rules/`` stops the run before any work instead
    of being recorded and ignored.

    Every option reaches the provider by its name, ``-o name=value`` on the command line and
    ``provider_options={"name": value}`` in the Python API; a few shared ones have a flag of their own,
    said with ``json_schema_extra={"flag": "--threads"}``. An option that changes how a request is sent
    but never what the model answers (a timeout, a thread count) says ``json_schema_extra={"sent_only":
    True}``; every other option set to a value other than its default is part of the run config and of
    the response cache's key (:func:`recorded_options`). Validators may read the model name (the part
    after ``provider/``) from ``info.context["model"]``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


BackendFactory = Callable[..., Backend]


@dataclass(frozen=True)
class Provider:
    """A registered provider: its ``name`` (backends are ``name/model``), the factory
    ``f(model, **options) -> Backend``, its :class:`BackendOptions`, ``hidden`` (for tests only:
    usable by name, never offered), the ``family`` it belongs to (``"OpenAI-compatible providers"``:
    how error messages name a group of providers that share an option), a one-line ``about`` and the
    environment variable its API key is read from (``key_env``, None for none)."""

    name: str
    factory: BackendFactory
    options: type[BackendOptions] = BackendOptions
    hidden: bool = False
    family: Optional[str] = None
    about: str = ""
    key_env: Optional[str] = None


_PROVIDERS: dict[str, Provider] = {}
# RunConfig's own fields for these options (kept so configs written before provider options are unchanged).
CONFIG_FIELDS = ("base_url", "mode", "grammar")
ENTRY_POINTS = "paperfields.providers"  # a package of one's own registers its providers on import through it


def register_provider(
    provider: str,
    options: type[BackendOptions] = BackendOptions,
    hidden: bool = False,
    family: Optional[str] = None,
    about: str = "",
    key_env: Optional[str] = None,
) -> Callable[[BackendFactory], BackendFactory]:
    """Register a factory ``f(model: str, **options) -> Backend`` under ``provider`` (see :class:`Provider`).

    :func:`get_backend` validates the caller's options against ``options`` first and calls the
    factory with every field of it, defaults included; the default takes no option at all.
    Registering a name again replaces the provider (a test's toy provider, a plugin's newer one).
    """

    def decorator(factory: BackendFactory) -> BackendFactory:
        _PROVIDERS[provider] = Provider(provider, factory, options, hidden, family, about, key_env)
        return factory

    return decorator


@functools.cache
def _load_builtin_providers() -> None:
    """Import every module of this package (each registers its providers on import; their SDKs load
    lazily, as inspect_ai defers its providers' imports), then the modules that packages of one's own
    declare under the :data:`ENTRY_POINTS` entry-point group. A plugin that fails to load is a warning."""
    package = importlib.import_module("paperfields.extract.backends")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    for entry in importlib.metadata.entry_points(group=ENTRY_POINTS):
        try:
            entry.load()
        except Exception as exc:  # someone else's package: say so, and go on with the others
            warnings.warn(f"provider plugin {entry.name} ({entry.value}) failed to load: {exc}", RuntimeWarning, 2)


def providers() -> dict[str, Provider]:
    """Every registered provider by name, sorted, hidden (test) ones included."""
    _load_builtin_providers()
    return dict(sorted(_PROVIDERS.items()))


def known_providers() -> list[str]:
    """Names of every registered provider, hidden (test) ones included, sorted."""
    return list(providers())


def offered_providers() -> list[str]:
    """Names of the providers offered to users (help, error messages): :func:`known_providers`
    without the hidden test providers, sorted."""
    return [name for name, p in providers().items() if not p.hidden]


def _extra(field: Any, key: str) -> Any:
    extra = field.json_schema_extra
    return extra.get(key) if isinstance(extra, dict) else None


def option_flag(name: str) -> str:
    """How option ``name`` is given on the command line: its flag where it has one (``n_threads`` ->
    ``--threads``, ``base_url`` -> ``--base-url``), else ``-o name``."""
    for provider in _PROVIDERS.values():
        field = provider.options.model_fields.get(name)
        if field is not None and _extra(field, "flag"):
            return str(_extra(field, "flag"))
    return f"-o {name}"


def _takers(key: str) -> str:
    """The offered providers that take option ``key``, a whole family named as such: ``local/``,
    ``OpenAI-compatible providers``, ``anthropic/, OpenAI-compatible providers``."""
    offered = [p for p in _PROVIDERS.values() if not p.hidden]
    taking = {p.name for p in offered if key in p.options.model_fields}
    names = []
    for p in sorted(offered, key=lambda p: p.name):
        if p.name not in taking:
            continue
        family = [q.name for q in offered if q.family and q.family == p.family]
        if family and set(family) <= taking:
            if p.family not in names:
                names.append(p.family)
        else:
            names.append(f"{p.name}/")
    return ", ".join(names)


def _options_error(name: str, provider: Provider, exc: ValidationError) -> str:
    """One sentence for a failed options validation: every option that does not apply (with the
    providers it does apply to) and the options the provider takes, else the first bad value."""
    unknown = [str(e["loc"][0]) for e in exc.errors() if e["type"] == "extra_forbidden"]
    if unknown:
        described = []
        for key in sorted(unknown, key=option_flag):
            takers = _takers(key)
            described.append(f"{option_flag(key)} ({takers} only)" if takers else option_flag(key))
        valid = sorted(option_flag(key) for key in provider.options.model_fields)
        takes = f"{provider.name}/ takes {', '.join(valid)}" if valid else f"{provider.name}/ takes no options"
        return f"options that do not apply to {name}: {', '.join(described)}; {takes}"
    first = exc.errors()[0]
    where = f"{option_flag(str(first['loc'][0]))}: " if first["loc"] else ""
    return f"{name}: {where}{first['msg'].removeprefix('Value error, ')}"


def resolve_options(name: str, **options: Any) -> tuple[Provider, str, BackendOptions]:
    """(the provider, the model name, the validated options) of backend ``name`` (``provider/model``).

    Raises BackendError naming the known providers when the provider is unknown, every option that
    does not apply to the provider (with the providers it applies to, and the options it takes), or
    the first bad option value."""
    offered = offered_providers()  # registers the built-in providers
    provider_name, sep, model = name.partition("/")
    if not sep or not model:
        raise BackendError(f"backend '{name}' must be 'provider/model'; known providers: {', '.join(offered)}")
    if provider_name not in _PROVIDERS:
        raise BackendError(f"unknown provider '{provider_name}' in '{name}'; known providers: {', '.join(offered)}")
    provider = _PROVIDERS[provider_name]
    try:
        validated = provider.options.model_validate(options, context={"model": model})
    except ValidationError as exc:
        raise BackendError(_options_error(name, provider, exc)) from None
    return provider, model, validated


def get_backend(name: str, **options: Any) -> Backend:
    """Build the backend for ``provider/model`` (e.g. ``local/qwen2.5-coder-0.5b``) with ``options``
    (keyword arguments, validated against the provider's :class:`BackendOptions`). Raises
    BackendError as :func:`resolve_options`, or the factory's own (a missing key, SDK or weights)."""
    provider, model, validated = resolve_options(name, **options)
    return provider.factory(model, **dict(validated))


def recorded_options(options: BackendOptions) -> dict[str, Any]:
    """The options that go into the run config and the cache key: those set to a value other than
    the default, but those that only change how requests are sent (``sent_only``) and those the config
    keeps in fields of its own (:data:`CONFIG_FIELDS`), JSON-ready and sorted by name."""
    fields = type(options).model_fields
    changed = options.model_dump(mode="json", exclude_defaults=True)
    return {
        key: value
        for key, value in sorted(changed.items())
        if key not in CONFIG_FIELDS and not _extra(fields[key], "sent_only")
    }


def check_params(backend: Backend, params: GenerationParams) -> None:
    """Raise BackendError when ``params`` asks ``backend`` for something it cannot do: a
    ``reasoning_effort`` needs a backend whose ``reasoning`` attribute is true (an OpenAI reasoning
    model: o1, o3, o4-mini, gpt-5 families). Call it before any work."""
    if params.reasoning_effort is not None and not getattr(backend, "reasoning", False):
        raise BackendError(
            f"--reasoning-effort applies only to OpenAI reasoning models (openai/ o1, o3, o4-mini, gpt-5 families); "
            f"{backend.name} is not one"
        )


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
# A closing tag left after the complete blocks are gone: the server put the opening tag in the prompt (Qwen3,
# DeepSeek-R1 templates), so everything before it is reasoning, whatever it holds.
_STRAY_THINK_END = re.compile(r"^.*</think>", re.DOTALL | re.IGNORECASE)
# A markdown fence with any language tag; an unclosed one runs to the end of the reply.
_FENCE = re.compile(r"```[\w+-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_REFUSAL = re.compile(r"^\s*(I'm sorry|I am sorry|I can(?:no|')t|I won't|I will not|Sorry,|As an AI)", re.IGNORECASE)
# JSON tokens as far as finding the object's end needs them: a string, a bracket, a run of anything else.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]|[^"{}\[\]]+|"', re.DOTALL)
# Inside a string: a valid escape (kept), a lone backslash (group 1) or a raw control character (group 2).
_STRING_PART = re.compile(
    r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"  # a surrogate pair
    r"|u(?![dD][89a-fA-F])[0-9a-fA-F]{4}"  # any other \uXXXX (a lone surrogate is text)
    r"|[bfnrt](?![A-Za-z])"  # \n, \t ... not followed by a letter
    r'|["\\/])'
    r"|(\\)|([\x00-\x1f])"
)
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# finish_reason values that say the provider's filter stopped the reply: OpenAI's and Azure's content_filter,
# Gemini's safety-family reasons (through its OpenAI-compatible endpoint or a proxy passing them on).
FILTER_FINISH_REASONS = frozenset(
    {"content_filter", "safety", "recitation", "prohibited_content", "blocklist", "spii", "image_safety"}
)


def replace_surrogates(text: Optional[str]) -> Optional[str]:
    """``text`` with each lone UTF-16 surrogate (a JSON ``"\\ud800"`` escape decoded by an HTTP client)
    replaced by U+FFFD: no UTF-8 file, so no ``predictions.jsonl`` line, can hold one. None stays None."""
    return _SURROGATE.sub("\ufffd", text) if text else text


def _top_level_object(text: str, start: int, repairs: list[str]) -> tuple[str, int]:
    """The JSON object that opens at ``text[start]`` (a ``{``), as strict JSON text, and the index just
    past its closing brace (``len(text)`` when it never closes).

    Inside strings, a backslash that does not start a JSON escape is kept as literal text, and so is
    one that does but is followed by a letter run: ``\\times``, ``\\frac``, ``\\beta``, ``\\ne``,
    ``\\rangle``, ``\\url`` are LaTeX commands, not a tab, form feed, backspace, newline, CR or
    ``\\u`` escape ("escapes"). The rule's limit: a real escape written directly before a word
    (``"line\\nbreak"``) is read as the text ``\\nbreak``; a value never needs a line break, and
    one would be replaced by a space anyway. Raw control characters inside strings (a line break
    written as is) are escaped ("raw_control").
    """

    depth, out = 0, []
    for token in _TOKEN.finditer(text, start):
        part = token.group()
        if len(part) > 1 and part[0] == part[-1] == '"':
            part = _strict_string(part, repairs)
        elif part in ("{", "["):
            depth += 1
        elif part in ("}", "]"):
            depth -= 1
        out.append(part)
        if depth == 0:
            return "".join(out), token.end()
    return "".join(out), len(text)


def _strict_string(token: str, repairs: list[str]) -> str:
    """A JSON string token as strict JSON, by the escape rule of :func:`_top_level_object`."""

    def fix(match: re.Match[str]) -> str:
        if match.group(1):
            _add(repairs, "escapes")
            return "\\\\"
        if match.group(2):
            _add(repairs, "raw_control")
            return f"\\u{ord(match.group(2)):04x}"
        return match.group(0)

    return '"' + _STRING_PART.sub(fix, token[1:-1]) + '"'


# An object opens with a key or closes at once; "{x}" or "{{" in prose cannot be one.
_OBJECT_START = re.compile(r'\{\s*["}]')
_AMBIGUITY_BUDGET = 200_000  # characters of candidate objects tried after the record


def _second_object(text: str) -> Optional[str]:
    """Why ``text``, what follows the record, makes the reply ambiguous (it holds a complete JSON
    object), else None. One pass: each ``{`` that can open an object is tried once it closes."""
    opened: list[int] = []  # per open bracket: where its token sits in ``out``, -1 when it cannot open an object
    out: list[str] = []
    budget = _AMBIGUITY_BUDGET
    for token in _TOKEN.finditer(text):
        part = token.group()
        if len(part) > 1 and part[0] == part[-1] == '"':
            part = _strict_string(part, [])
        elif part == "{":
            opened.append(len(out) if _OBJECT_START.match(text, token.start()) else -1)
        elif part == "[":
            opened.append(-1)
        elif part in ("}", "]") and opened:
            begin = opened.pop()
            if part == "}" and begin >= 0:
                candidate = "".join(out[begin:]) + "}"
                budget -= len(candidate)
                try:
                    if isinstance(json.loads(candidate), dict):
                        return "more than one JSON object in reply (answer with exactly one)"
                except (json.JSONDecodeError, RecursionError):
                    pass
                if budget < 0:
                    return (
                        "too much bracketed text after the JSON object to tell whether it "
                        "holds another (answer with one object only)"
                    )
        out.append(part)
    return None


def _pairs(duplicates: list[str], repairs: list[str]) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """An ``object_pairs_hook`` that builds the dict, noting a key written twice with the same value as
    the repair ``duplicate_keys`` and one written with different values in ``duplicates``."""

    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                if out[key] == value:
                    _add(repairs, "duplicate_keys")
                elif key not in duplicates:
                    duplicates.append(key)
            out[key] = value
        return out

    return build


def _loads(candidate: str, duplicates: list[str], repairs: list[str]) -> Any:
    """``candidate`` read as strict JSON, else as JSON5 (the ``json5`` package: trailing commas, comments,
    single quotes, unquoted keys; the repair ``json5``). Raises the strict reader's JSONDecodeError when
    neither reads it (its position is the one a re-ask can point at)."""
    try:
        return json.loads(candidate, object_pairs_hook=_pairs(duplicates, repairs))
    except json.JSONDecodeError as strict_error:
        import json5

        try:
            data = json5.loads(candidate, object_pairs_hook=_pairs(duplicates, repairs))
        except (ValueError, RecursionError):  # json5 raises ValueError for text it cannot read
            raise strict_error from None
        _add(repairs, "json5")
        return data


def _add(repairs: list[str], repair: str) -> None:
    if repair not in repairs:
        repairs.append(repair)


# Keys of an object that declines instead of answering ({"error": "cannot extract", "reason": ...}).
_DECLINING_KEYS = frozenset({"error", "errors", "refusal", "refused", "reason", "message", "detail"})
_ENVELOPE_DEPTH = 4  # envelopes inside envelopes unwrapped at most this deep


def key_spelling(key: str) -> str:
    """``key`` in the schema's snake_case: ``methodName``, ``MethodName``, ``method-name``, ``Method Name``,
    ``METHOD_NAME`` all give ``method_name``."""
    split = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", key.strip())
    return re.sub(r"[^a-z0-9]+", "_", split.lower()).strip("_")


def _nested_models(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models inside a field's type (``list[Result]`` -> ``[Result]``, ``Optional[X]`` -> ``[X]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _nested_models(arg)]


def _respell(data: Any, model: type[BaseModel], repairs: list[str]) -> None:
    """Rename, in place, each key of ``data`` (and of the objects of its nested models) that is not the
    schema's but whose :func:`key_spelling` is (``methodName`` -> ``method_name``; the repair
    ``key_spelling``); a key whose schema spelling is also written is left (an ``extra_keys``)."""
    if not isinstance(data, dict):
        return
    fields = model.model_fields
    for key in list(data):
        if key not in fields and (spelled := key_spelling(key)) in fields and spelled not in data:
            data[spelled] = data.pop(key)
            _add(repairs, "key_spelling")
    for name, field in fields.items():
        for nested in _nested_models(field.annotation):
            value = data.get(name)
            for item in value if isinstance(value, list) else [value]:
                _respell(item, nested, repairs)


def _has_schema_key(data: dict[str, Any], model: type[BaseModel]) -> bool:
    return any(key in model.model_fields or key_spelling(key) in model.model_fields for key in data)


def _inner_objects(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The non-empty objects held by ``data``'s values: an object, a JSON string of one (a tool call's
    ``arguments``), a list of exactly one object."""
    found = []
    for value in data.values():
        if isinstance(value, str) and value.lstrip().startswith("{"):
            try:
                value = json.loads(value)
            except (json.JSONDecodeError, RecursionError):
                continue
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, dict) and value:
            found.append(value)
    return found


def _unwrapped(
    data: dict[str, Any], model: type[BaseModel], repairs: list[str]
) -> tuple[dict[str, Any], Optional[tuple[FailureClass, str]]]:
    """``data``, the reply's object, as the record to validate, or why it is none.

    An object with a key of the schema (in any :func:`key_spelling`), and the empty object (an
    abstention), are the record. An object with none is an envelope when exactly one object sits in it,
    unwrapped as deep as needed (``{"PaperRecord": {...}}``, ``{"name": ..., "arguments": {...}}``,
    ``{"type": "function", "parameters": {...}}``, ``{"function": {"arguments": "{...}"}}``; the repair
    ``envelope``). Otherwise it is never defaulted to an empty record: one with a declining key
    (``error``, ``reason``, ``refusal``, ...) is a ``refusal``, any other ``schema_invalid``, naming its keys.
    """
    outer, level = data, data
    for _ in range(_ENVELOPE_DEPTH):
        if not level or _has_schema_key(level, model):
            break
        inner = _inner_objects(level)
        if len(inner) != 1:
            break
        level = inner[0]
    if not level or _has_schema_key(level, model):
        if level is not outer:
            _add(repairs, "envelope")
        return level, None
    keys = ", ".join(repr(k) for k in list(outer)[:6])
    if set(outer) & _DECLINING_KEYS:
        said = json.dumps(outer, ensure_ascii=False)[:200]
        return outer, (FailureClass.refusal, f"the model declined: an object with no key of the schema ({said})")
    many = len(_inner_objects(level))
    what = f"{many} objects in it could each be the record" if many > 1 else "it holds no object that has one"
    return outer, (
        FailureClass.schema_invalid,
        f"no key of the schema in the reply's object (keys {keys}) and {what}: not a record",
    )


def _schema_error(exc: ValidationError) -> str:
    """Every error of a failed validation, field by field (the first five), for the record and for a re-ask."""
    parts = [f"field '{'.'.join(str(p) for p in e['loc']) or '(root)'}': {e['msg']}" for e in exc.errors()[:5]]
    return "; ".join(parts) + f" ({exc.error_count()} error(s))"


def parse_reply(
    text: Optional[str], finish_reason: Optional[str] = None, response_model: type[BaseModel] = PaperRecord
) -> Generation:
    """Classify and parse a raw model reply into a Generation (usage and latency left at zero).

    Order of checks: truncated (``finish_reason == "length"``) before anything else, so a
    cut-off reply is never mistaken for malformed JSON; then ``<think>`` blocks are removed and the
    reply is empty or not; then the record is read from the reply's own top-level object only: the
    first ``{`` of the reply (of its markdown fence, when the fence opens before any ``{``) up to
    its matching ``}``. Text before or after it is ignored (a later ``{...}`` in a note never
    becomes the record). No ``{`` at all is a refusal (a refusal phrase) or malformed JSON; an
    object that does not parse is malformed JSON (an unclosed one too); one that does not validate
    against ``response_model`` is schema_invalid, naming each field. JSON strings follow the
    escape rule of :func:`_top_level_object` (LaTeX backslashes are text), and the schema's
    validators read placeholders, enum spellings, unit signs and numbers written as text
    (:mod:`paperfields.core.schema`) and refuse non-finite numbers.

    Every tolerated deviation is named in ``repairs``: think (a ``<think>`` block, or everything up to
    a stray ``</think>``), fenced, prose (text around the object), surrogates (lone UTF-16 surrogates
    replaced by U+FFFD), escapes, raw_control, json5 (trailing commas and the rest of JSON5),
    duplicate_keys (a key written twice with the same value; with different values the reply is
    malformed_json), envelope (the record inside an object with no key of the schema, see :func:`_unwrapped`:
    such an object is otherwise a refusal or schema_invalid, never an empty record), key_spelling
    (``methodName`` for ``method_name``), extra_keys, and the schema's control_chars, placeholders, enum_spelling,
    unit_sign, unit_conflict, number_text, bool_text, list_text (a list written as a string),
    result_dropped (a result item that does not validate, left out), item_dropped (the same for a quoted
    list item of the evidence strategy). The record (a dict) always passes ``response_model`` again unchanged
    and serializes to strict JSON.
    """
    gen = Generation(raw_text=text, finish_reason=finish_reason)
    if text and _SURROGATE.search(text):  # a "\ud800" escape in the HTTP body: no UTF-8 file could hold it
        text = gen.raw_text = replace_surrogates(text)
        gen.repairs.append("surrogates")
    if finish_reason == "length":
        gen.failure, gen.error = FailureClass.truncated, "reply cut off at max_tokens (finish_reason=length)"
        return gen
    if isinstance(finish_reason, str) and finish_reason.lower() in FILTER_FINISH_REASONS:
        gen.failure = FailureClass.content_filter
        gen.error = f"the provider's content filter stopped the reply (finish_reason={finish_reason})"
        return gen
    body = text or ""
    if _THINK.search(body):
        body = _THINK.sub("", body)
        gen.repairs.append("think")
    if _STRAY_THINK_END.search(body):
        body = _STRAY_THINK_END.sub("", body, count=1)
        _add(gen.repairs, "think")
    if not body.strip():
        gen.failure, gen.error = FailureClass.empty_reply, "empty reply"
        return gen
    start = body.find("{")
    if start < 0:
        if _REFUSAL.search(body):
            gen.failure, gen.error = FailureClass.refusal, "model declined to answer"
        else:
            gen.failure, gen.error = FailureClass.malformed_json, "no JSON object in reply"
        return gen
    fence = next((f for f in _FENCE.finditer(body) if f.start(1) <= start < f.end(1)), None)
    if fence:
        gen.repairs.append("fenced")
    candidate, end = _top_level_object(body[: fence.end(1)] if fence else body, start, gen.repairs)
    before, after = (
        (body[: fence.start()] + body[fence.start(1) : start], body[end : fence.end(1)] + body[fence.end() :])
        if fence
        else (body[:start], body[end:])
    )
    if (before + after).strip():
        _add(gen.repairs, "prose")
    ambiguous = _second_object(after)
    if ambiguous:
        # Which object is the answer would be a guess (a note's "e.g. {}" is a valid empty record): refused.
        gen.failure, gen.error = FailureClass.malformed_json, ambiguous
        return gen
    duplicates: list[str] = []
    try:
        data = _loads(candidate, duplicates, gen.repairs)
    except json.JSONDecodeError as exc:
        what = (
            "the JSON object never closes"
            if end == len(body) and exc.pos >= len(candidate.rstrip())
            else f"{exc.msg} at char {exc.pos}"
        )
        gen.failure, gen.error = FailureClass.malformed_json, f"invalid JSON: {what}"
        return gen
    except RecursionError:
        gen.failure, gen.error = FailureClass.malformed_json, "invalid JSON: nested too deeply"
        return gen
    if duplicates:
        # Which of two different values is the answer would be a guess, as with two objects: refused.
        gen.failure, gen.error = (
            FailureClass.malformed_json,
            (f"duplicate key {', '.join(repr(k) for k in duplicates[:3])} with different values (write each key once)"),
        )
        return gen
    data, why = _unwrapped(data, response_model, gen.repairs)
    if why is not None:
        gen.failure, gen.error = why
        return gen
    _respell(data, response_model, gen.repairs)
    if set(data) - set(response_model.model_fields):
        _add(gen.repairs, "extra_keys")
    try:
        gen.record = response_model.model_validate(data, context={"repairs": gen.repairs}).model_dump(mode="json")
    except ValidationError as exc:
        gen.failure, gen.error = FailureClass.schema_invalid, _schema_error(exc)
    return gen
