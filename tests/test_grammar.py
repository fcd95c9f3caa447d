"""The local backend's grammar (extract/backends/grammar.py): no optional whitespace, capped lists, and an
identity that keeps its runs and cached answers apart from those under another grammar."""

from __future__ import annotations

import json
import re
from typing import Literal, Optional

import pytest
from pydantic import BaseModel, Field

from paperfields.core.fields import record_fields
from paperfields.core.schema import PaperRecord
from paperfields.extract.backends.base import GenerationRequest
from paperfields.extract.backends.grammar import (
    GBNF_GRAMMAR_ID,
    GRAMMAR_ID,
    MAX_CHARS,
    MAX_CONTRIBUTION_TYPES,
    MAX_ITEMS,
    MAX_RESULTS,
    capped_schema,
    gbnf_sha256,
    grammar_sha256,
    llguidance_grammar,
    reference_gbnf,
    schema_gbnf,
)
from paperfields.extract.cache import cache_key
from paperfields.extract.strategies import EvidenceRecord


class _ProbeResult(BaseModel):
    metric: str
    value: float
    value_upper: Optional[float] = None
    kind: Literal["absolute", "improvement"] = "absolute"


class Probe(BaseModel):
    """A fixed record with one of each thing the construction treats apart: a nullable string, an enum,
    a nullable boolean, a list of strings, the two lists with caps of their own (``contribution_types``,
    ``results``, whose items are objects with numbers) and a number in [0, 1]. Its grammar changes only
    when the construction does, never with PaperRecord."""

    name: Optional[str] = None
    area: Literal["vision", "language"] = "vision"
    training_free: Optional[bool] = None
    tasks: list[str] = Field(default_factory=list)
    contribution_types: list[Literal["method", "dataset"]] = Field(default_factory=list)
    results: list[_ProbeResult] = Field(default_factory=list)
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)


# What GRAMMAR_ID (and the GBNF grammar's id) stand for: the construction, pinned by the hash of its
# grammar of the fixed Probe record. A change of the construction (or of the converter) changes the hash:
# give the id a new name then, so old runs and cached answers are not taken for new ones. A change of
# PaperRecord changes no id: the schema is part of every cache key and of the run config on its own.
GRAMMAR_SHA256 = {
    "compact-v1": "e77011f073e6bcf17b4063d677aa95848bb43fe3816592a7fe9ef3ec8c85d93e",
    "compact-v2": "d3cda5bfc903235813031c212226f773d3e5ad00ae626a2dc27a8e12a5f3e257",
}


def _rules(gbnf: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in gbnf.splitlines())


def test_the_grammar_id_names_this_construction():
    assert grammar_sha256(Probe) == GRAMMAR_SHA256[GRAMMAR_ID]
    assert gbnf_sha256(Probe) == GRAMMAR_SHA256[GBNF_GRAMMAR_ID]


def test_the_record_s_grammar_is_built_from_the_record_s_schema():
    assert '"method_name"' in llguidance_grammar(PaperRecord) and "method_name" in schema_gbnf(
        PaperRecord.model_json_schema()
    )


@pytest.fixture(scope="module")
def lltokenizer(local_model_path):
    """llguidance's view of the 0.5B model's vocabulary (the vocabulary only: no weights are loaded)."""
    from llama_cpp import Llama

    from paperfields.extract.backends.local import lltokenizer

    vocab = Llama(model_path=str(local_model_path), vocab_only=True, verbose=False)
    yield lltokenizer(vocab._model.vocab)
    vocab.close()


def _record(**changes) -> dict:
    record = PaperRecord(method_name="FooNet", tasks=["image classification"], datasets=["ImageNet"]).model_dump(
        mode="json"
    )
    return record | changes


def _compact(record: dict) -> str:
    """The record as the compact grammar writes it: no whitespace but one space after each colon."""
    return json.dumps(record, separators=(",", ": "), ensure_ascii=False)


def _accepts(tokenizer, text: str) -> bool:
    from llguidance import LLMatcher

    matcher = LLMatcher(tokenizer, llguidance_grammar(PaperRecord), log_level=0)
    return matcher.consume_tokens(tokenizer.tokenize_str(text)) and matcher.is_accepting()


def test_the_llguidance_grammar_takes_the_compact_record_and_nothing_looser(lltokenizer):
    record = _record()
    assert _accepts(lltokenizer, _compact(record))
    assert not _accepts(lltokenizer, json.dumps(record))  # a space after every comma
    assert not _accepts(lltokenizer, json.dumps(record, separators=(",", ":")))  # no space after a colon
    assert not _accepts(
        lltokenizer, _compact({k: v for k, v in record.items() if k != "code_url"})
    )  # every key is written
    reordered = dict(reversed(list(record.items())))
    assert not _accepts(lltokenizer, _compact(reordered))  # in the schema's order
    assert not _accepts(
        lltokenizer, _compact(record | {"value_upper: null,": "x"})
    )  # and no other key (the 0.5B looped on one)
    item = {
        "metric": "accuracy",
        "value": 1,
        "value_upper": None,
        "unit": "percent",
        "kind": "absolute",
        "qualifier": "exact",
        "dataset": None,
        "model": None,
        "baseline": None,
    }
    assert _accepts(lltokenizer, _compact(_record(results=[item])))
    assert not _accepts(lltokenizer, _compact(_record(results=[item | {"note": "x"}])))  # nested objects too


def test_the_llguidance_grammar_keeps_the_caps(lltokenizer):
    assert _accepts(lltokenizer, _compact(_record(datasets=[f"D{i}" for i in range(MAX_ITEMS)])))
    assert not _accepts(lltokenizer, _compact(_record(datasets=[f"D{i}" for i in range(MAX_ITEMS + 1)])))
    assert _accepts(lltokenizer, _compact(_record(contribution_types=["method", "dataset", "benchmark"])))
    assert not _accepts(lltokenizer, _compact(_record(contribution_types=["method", "dataset", "benchmark", "theory"])))
    assert _accepts(lltokenizer, _compact(_record(method_name="x" * MAX_CHARS)))
    assert not _accepts(lltokenizer, _compact(_record(method_name="x" * (MAX_CHARS + 1))))
    assert not _accepts(lltokenizer, _compact(_record(research_area="vision")))  # not in the enum


def test_a_number_ends_within_16_digits_and_6_decimals(lltokenizer):
    def result(value: str) -> str:
        item = {
            "metric": "accuracy",
            "value": 0,
            "value_upper": None,
            "unit": "percent",
            "kind": "absolute",
            "qualifier": "exact",
            "dataset": None,
            "model": None,
            "baseline": None,
        }
        return _compact(_record(results=[item])).replace('"value": 0,', f'"value": {value},')

    for ok in ("56.61", "35368", "-3", "0.000001", "999999999999999"):
        assert _accepts(lltokenizer, result(ok)), ok
    for loop in ("0.0000000", "0." + "0" * 400, "1234567890123456"):  # the 0.5B wrote 0.000... to --max-tokens once
        assert not _accepts(lltokenizer, result(loop)), loop


def test_the_keys_and_their_punctuation_are_forced(lltokenizer):
    from llguidance import LLMatcher

    matcher = LLMatcher(lltokenizer, llguidance_grammar(PaperRecord), log_level=0)
    assert matcher.compute_ff_bytes() == b'{"method_name": '  # the first key: no choice at all
    text = _compact(_record())
    prefix = text[: text.index('"contribution_types"')]  # up to the method_full_name value's end
    assert matcher.consume_tokens(lltokenizer.tokenize_str(prefix[:-1]))  # without the comma after it
    assert matcher.compute_ff_bytes() == b',"contribution_types": ['  # the next key, up to its list


def test_the_grammar_allows_no_whitespace_between_json_tokens_but_one_space_after_a_colon():
    rules = _rules(schema_gbnf(PaperRecord.model_json_schema()))
    assert rules["space"] == '""'
    assert '" "' not in "\n".join(rules.values())  # no other rule writes a space outside strings
    assert rules["method-name-kv"] == '"\\"method_name\\"" space ": " method-name'  # exactly one, after the colon
    assert all('": "' in rule for name, rule in rules.items() if name.endswith("-kv"))
    assert _rules(reference_gbnf(PaperRecord))["space"] == '" "?'  # the default it replaces


def test_every_list_is_capped_results_contribution_types_and_the_other_lists_each_at_their_cap():
    schema = capped_schema(PaperRecord.model_json_schema())
    arrays = {name: prop["maxItems"] for name, prop in schema["properties"].items() if prop.get("type") == "array"}
    assert (MAX_ITEMS, MAX_RESULTS, MAX_CONTRIBUTION_TYPES) == (8, 8, 3)
    # every list of the schema, read from its fields (a new list field is capped at MAX_ITEMS without more)
    lists = [f.name for f in record_fields(PaperRecord) if f.is_list]
    assert {"tasks", "datasets", "models", "metrics", "baselines"} <= set(lists)
    caps = {"contribution_types": MAX_CONTRIBUTION_TYPES, "results": MAX_RESULTS}
    assert arrays == {name: caps.get(name, MAX_ITEMS) for name in lists}
    assert "maxItems" not in PaperRecord.model_json_schema()["properties"]["tasks"]  # the input is left as it was
    rules = _rules(schema_gbnf(PaperRecord.model_json_schema()))
    assert rules["datasets"].count("datasets-item") == MAX_ITEMS and "*" not in rules["datasets"]
    assert rules["results"].count("results-item") == MAX_RESULTS and "*" not in rules["results"]
    evidence = capped_schema(EvidenceRecord.model_json_schema())["properties"]
    assert evidence["models"]["maxItems"] == MAX_ITEMS and evidence["results"]["maxItems"] == MAX_RESULTS


def test_every_free_string_is_capped_at_max_chars_and_enums_are_left_alone():
    schema = capped_schema(PaperRecord.model_json_schema())
    assert MAX_CHARS == 120
    assert schema["properties"]["tasks"]["items"]["maxLength"] == MAX_CHARS
    assert {"type": "string", "maxLength": MAX_CHARS} in schema["properties"]["method_name"]["anyOf"]
    assert schema["$defs"]["Result"]["properties"]["metric"]["maxLength"] == MAX_CHARS
    assert "maxLength" not in schema["$defs"]["Unit"]
    rules = _rules(schema_gbnf(PaperRecord.model_json_schema()))
    assert rules["tasks-item"].count("char") == MAX_CHARS and "*" not in rules["tasks-item"]


def test_the_grammar_writes_every_key():
    rules = _rules(schema_gbnf(PaperRecord.model_json_schema()))
    root = rules["root"]
    assert all(f"{re.sub('_', '-', name)}-kv" in root for name in PaperRecord.model_fields)
    assert "?" not in root  # no optional property


def test_the_local_backend_records_its_grammar_as_its_mode_so_cache_keys_differ_from_other_grammars(tmp_path):
    from paperfields.extract.backends.local import LocalBackend

    weights = tmp_path / "mine.gguf"
    weights.write_bytes(b"GGUF")  # the magic only: not loaded until the first request
    backend = LocalBackend(str(weights))
    assert backend.mode == GRAMMAR_ID
    request = GenerationRequest(messages=[{"role": "user", "content": "x"}])
    identity = {"backend": backend.name, "base_url": None, "mode": backend.mode, "grammar": False}
    assert cache_key(identity, request) != cache_key(
        identity | {"mode": None}, request
    )  # runs before the compact grammar
