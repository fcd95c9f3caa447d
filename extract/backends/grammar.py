"""The constraint the ``local/`` backend decodes under: JSON of the record's schema, compact, lists capped.

The backend decodes under :func:`llguidance_grammar` (:data:`GRAMMAR_ID`); the GBNF grammar below
(:data:`GBNF_GRAMMAR_ID`), the same language for llama.cpp's own grammar sampler, is what it decoded
under before, kept as the "before" side of ``bench/bench_fastforward.py``.

llama-cpp-python's converter (``llama_cpp.llama_grammar.SchemaConverter``, used when a request
carries ``response_format={"type": "json_object", "schema": ...}``) lets the model write an optional
space after every ``{``, ``[``, ``:``, ``,`` and value. The 0.5B model takes every one: re-serialized
without them, the committed zero-shot replies are 21% fewer output tokens, and output tokens are most
of a local paper's time. Here that ``space`` rule is empty (but for exactly one space after each key's
colon: ``": "`` costs no token, see :func:`schema_gbnf`), every list gets ``maxItems`` and every
string ``maxLength``, so a reply repeating one item ("LLMs", "LLMs", ...) must close its list after
:data:`MAX_ITEMS` items, and one looping inside a string must close it after :data:`MAX_CHARS`
characters, instead of running to ``--max-tokens``.

:data:`GRAMMAR_ID` names this construction; it is the local backend's ``mode``, so it goes into the
run config and every response-cache key: runs and cached answers under another grammar never mix.
Change it whenever the construction changes (tests pin it by the hash of the grammar of a fixed probe record,
not of PaperRecord: a new field changes no id, the schema being part of every cache key on its own).
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from pydantic import BaseModel

from paperfields.core.schema import all_required

# Most items a list may hold; gold's longest lists hold 5 items, 7 results and 3 contribution types.
# Room above any abstract's, small enough that a repetition loop closes far below the default
# --max-tokens (8 compact results are about 400 tokens). The 0.5B model listed all seven contribution
# types, and repeated them up to any cap: 3 keeps at most one wrong type beside two right ones.
MAX_ITEMS = 8
MAX_RESULTS = 8
MAX_CONTRIBUTION_TYPES = 3
_MAX_ITEMS_BY_FIELD = {"results": MAX_RESULTS, "contribution_types": MAX_CONTRIBUTION_TYPES}
# Most characters a string may hold (gold's longest string is 86). A reply looping inside a string
# (a list of numbers written again and again, the whole abstract copied into a name) is closed there.
MAX_CHARS = 120

# A number in [0, 1] (a stated confidence) is one of these, written with at most two decimals. Schemas
# without such a number (PaperRecord) get the same grammar as before it existed.
PROBABILITIES = [round(i / 100, 2) for i in range(101)]

# The constraint's identity. compact-v1: the GBNF grammar of :func:`schema_gbnf` under llama.cpp's
# grammar sampler, one decode step per token. compact-v2: the same language (no optional whitespace,
# one space after a colon; lists capped at 8 items, results at 8, contribution types at 3; strings at
# 120 characters; numbers of at most 16 digits, 6 decimals) compiled by llguidance (:func:`llguidance_grammar`),
# whose forced tokens (keys, punctuation, the rest of an enum value) are evaluated in one batch with the token
# before them.
GRAMMAR_ID = "compact-v2"
GBNF_GRAMMAR_ID = "compact-v1"

# llguidance's JSON compile options for the compact language: the separators the GBNF grammar forces.
JSON_OPTIONS = {"whitespace_flexible": False, "key_separator": ": ", "item_separator": ","}


def capped_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a JSON schema with ``maxItems`` on every array property that has none: the field's
    entry in the caps (``results``: :data:`MAX_RESULTS`, ``contribution_types``:
    :data:`MAX_CONTRIBUTION_TYPES`), else :data:`MAX_ITEMS`; ``maxLength`` :data:`MAX_CHARS` on
    every string without an enum; a number bounded to [0, 1] becomes an enum of :data:`PROBABILITIES`. Recurses through
    ``properties``, ``$defs``, ``items`` and ``anyOf``; the input is not changed."""

    def visit(node: Any, name: str = "") -> Any:
        if isinstance(node, list):
            return [visit(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if key in ("properties", "$defs") and isinstance(value, dict):
                out[key] = {sub: visit(v, sub) for sub, v in value.items()}
            elif key in ("enum", "const", "default", "examples"):
                out[key] = value
            else:
                out[key] = visit(value)
        if out.get("type") == "array":
            out.setdefault("maxItems", _MAX_ITEMS_BY_FIELD.get(name, MAX_ITEMS))
        if out.get("type") == "string" and "enum" not in out and "const" not in out:
            out.setdefault("maxLength", MAX_CHARS)
        if out.get("type") == "number" and out.get("minimum") == 0 and out.get("maximum") == 1:
            # the converter ignores a number's bounds; 1.5 or 95 would fail validation after a whole reply
            return {k: v for k, v in out.items() if k not in ("type", "minimum", "maximum")} | {"enum": PROBABILITIES}
        return out

    return visit(schema)


def schema_gbnf(schema: dict[str, Any], compact: bool = True) -> str:
    """The GBNF grammar of ``schema`` (every property required, lists capped, see :func:`capped_schema`)
    with no optional whitespace between JSON tokens: exactly one space after each colon, none
    anywhere else (spaces inside strings stay free).

    Built by llama-cpp-python's own converter with its ``space`` rule made empty; ``compact=False``
    keeps the converter's optional space (the caps alone, for ``bench/bench_grammar.py``). Raises
    ImportError when llama-cpp-python is not installed.
    """
    from llama_cpp.llama_grammar import SchemaConverter

    converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    resolved = converter.resolve_refs(capped_schema(all_required(schema)), "stdin")
    converter.visit(resolved, "")
    if not compact:
        return converter.format_grammar()
    converter._rules["space"] = '""'  # the converter's one whitespace rule, '" "?', referenced after every token
    gbnf = converter.format_grammar()
    # One space after each key's colon, always: ' "' and ' null' are single tokens like '"' and 'null',
    # so it costs no token, and without it the 0.5B model wrote null for every method_name.
    return gbnf.replace('":" space', '": "')


@functools.lru_cache(maxsize=16)
def _gbnf_for(model: type[BaseModel]) -> str:
    return schema_gbnf(model.model_json_schema())  # building a schema and a grammar is slow: once per response model


def grammar_for(model: type[BaseModel]) -> Any:
    """A ``llama_cpp.LlamaGrammar`` for the response model ``model`` (:func:`schema_gbnf`, built once per model)."""
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(_gbnf_for(model), verbose=False)


def gbnf_sha256(model: type[BaseModel]) -> str:
    """sha256 of the GBNF grammar text for ``model``: what :data:`GBNF_GRAMMAR_ID` stands for (pinned by a test)."""
    return hashlib.sha256(_gbnf_for(model).encode("utf-8")).hexdigest()


# A number is written with at most this many decimals and below this bound. llama-cpp-python's GBNF
# converter caps a number's integral and decimal parts at 16 digits each; llguidance's JSON numbers are
# unbounded, and the 0.5B model wrote "value": 0.0000... to --max-tokens on one test paper. Gold's
# numbers have at most 2 decimals and stay below 10^5.
NUMBER_DECIMALS = 6
NUMBER_BOUND = 1e15


def closed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a JSON schema for llguidance: every object with properties takes no other property
    (``additionalProperties: false``; JSON Schema's default, which llguidance follows, admits any, and
    the 0.5B model wrote ``"value_upper: null,": "..."`` pairs into a result to --max-tokens), and every
    ``number`` without an enum is a multiple of 10^-:data:`NUMBER_DECIMALS` in
    [-:data:`NUMBER_BOUND`, :data:`NUMBER_BOUND`], so that a reply looping on digits must end its number
    (llama-cpp-python's GBNF converter does both of itself). The input is not changed."""

    def visit(node: Any) -> Any:
        if isinstance(node, list):
            return [visit(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {
            key: (value if key in ("enum", "const", "default", "examples") else visit(value))
            for key, value in node.items()
        }
        if "properties" in out:
            out.setdefault("additionalProperties", False)
        if out.get("type") == "number" and "enum" not in out:
            out.setdefault("multipleOf", 10.0**-NUMBER_DECIMALS)
            out.setdefault("minimum", -NUMBER_BOUND)
            out.setdefault("maximum", NUMBER_BOUND)
        return out

    return visit(schema)


@functools.lru_cache(maxsize=16)
def llguidance_grammar(model: type[BaseModel]) -> str:
    """The llguidance grammar (its JSON text) for the response model ``model``: the schema with every
    property required, in the schema's order and no other, the caps of :func:`capped_schema` and the numbers of
    :func:`closed_schema`, compiled with :data:`JSON_OPTIONS` (no whitespace but one space after each
    colon). Built once per model. Raises ImportError when llguidance is not installed."""
    from llguidance import LLMatcher

    schema = closed_schema(capped_schema(all_required(model.model_json_schema())))
    return LLMatcher.grammar_from_json_schema(schema, defaults=JSON_OPTIONS)


def grammar_sha256(model: type[BaseModel]) -> str:
    """sha256 of the llguidance grammar for ``model``: what :data:`GRAMMAR_ID` stands for (pinned by a test)."""
    return hashlib.sha256(llguidance_grammar(model).encode("utf-8")).hexdigest()


def reference_gbnf(model: type[BaseModel]) -> str:
    """The grammar llama-cpp-python itself builds for ``model`` from ``response_format`` (spaces allowed,
    lists unbounded): the "before" side of ``bench/bench_grammar.py``."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return json_schema_to_gbnf(json.dumps(all_required(model.model_json_schema())))
