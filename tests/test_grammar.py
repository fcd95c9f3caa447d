"""The local backend's grammar (extract/backends/grammar.py): no optional whitespace, capped lists, and an
identity that keeps its runs and cached answers apart from those under another grammar."""

from __future__ import annotations

import re

from paperfields.extract.backends.base import GenerationRequest
from paperfields.extract.backends.grammar import (
    GRAMMAR_ID, MAX_CHARS, MAX_CONTRIBUTION_TYPES, MAX_ITEMS, MAX_RESULTS, capped_schema, grammar_sha256, reference_gbnf, schema_gbnf,
)
from paperfields.extract.cache import cache_key
from paperfields.extract.schema import PaperRecord
from paperfields.extract.strategies import EvidenceRecord

# What GRAMMAR_ID stands for. A change of the grammar's construction (or of llama-cpp-python's converter)
# changes this hash: give GRAMMAR_ID a new name then, so old runs and cached answers are not taken for new ones.
GRAMMAR_SHA256 = {"compact-v1": "24dc56742f281526297c0a63e9cbeaadc3e615035b002136cef2753e483eef12"}


def _rules(gbnf: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in gbnf.splitlines())


def test_the_grammar_id_names_this_grammar():
    assert grammar_sha256(PaperRecord) == GRAMMAR_SHA256[GRAMMAR_ID]


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
    assert arrays == {"contribution_types": MAX_CONTRIBUTION_TYPES, "tasks": MAX_ITEMS, "datasets": MAX_ITEMS, "models": MAX_ITEMS,
                      "metrics": MAX_ITEMS, "baselines": MAX_ITEMS, "results": MAX_RESULTS}
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
    weights.write_bytes(b"")  # not loaded until the first request
    backend = LocalBackend(str(weights))
    assert backend.mode == GRAMMAR_ID
    request = GenerationRequest(messages=[{"role": "user", "content": "x"}])
    identity = {"backend": backend.name, "base_url": None, "mode": backend.mode, "grammar": False}
    assert cache_key(identity, request) != cache_key(identity | {"mode": None}, request)  # runs before the compact grammar
