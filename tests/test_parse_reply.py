from __future__ import annotations

import pytest

from paperfields.extract.backends.base import parse_reply

VALID = '{"method_name": "CLEAR", "research_area": "inference_efficiency", "contribution_types": ["method"]}'


@pytest.mark.parametrize(
    "text, finish, failure, repairs",
    [
        (VALID, "stop", None, []),
        ("```json\n" + VALID + "\n```", "stop", None, ["fenced"]),
        ("<think>the paper names CLEAR</think>\n" + VALID, "stop", None, ["think"]),
        ('Here it is: ' + VALID + ' Hope it helps.', "stop", None, []),
        ('{"method_name": "Line\nbreak"}', "stop", None, []),  # raw newline inside a string
        ('{"method_name": "$10\\times$ faster", "method_full_name": "\\frac{a}{b}"}', "stop", None, ["escapes"]),
        (VALID[:40], "length", "truncated", []),
        (VALID, "length", "truncated", []),  # the server said it was cut: never trusted as complete
        ('{"method_name": "X", "tasks": [', "stop", "malformed_json", []),
        ("no json here", "stop", "malformed_json", []),
        ("I cannot help with extracting this.", "stop", "refusal", []),
        ("", "stop", "empty_reply", []),
        (None, "stop", "empty_reply", []),
        ("<think>hmm</think>", "stop", "empty_reply", ["think"]),
        ('{"research_area": "astrology"}', "stop", "schema_invalid", []),
        ('{"results": [{"metric": "acc", "value": "n/a", "unit": "percent", "kind": "absolute"}]}', "stop", "schema_invalid", []),
        ("[1, 2]", "stop", "malformed_json", []),
    ],
)
def test_reply_classification(text, finish, failure, repairs):
    gen = parse_reply(text, finish)
    assert (gen.failure.value if gen.failure else None) == failure
    assert gen.repairs == repairs
    assert (gen.record is None) == (failure is not None)
    assert gen.raw_text == text


def test_latex_backslashes_survive_as_text():
    gen = parse_reply('{"method_name": "$10\\times$"}')
    assert gen.record["method_name"] == "$10\\times$"


def test_extra_keys_ignored_and_wrong_types_named():
    ok = parse_reply('{"method_name": "A", "favourite_colour": "blue"}')
    assert ok.record is not None and "favourite_colour" not in ok.record
    bad = parse_reply('{"tasks": "not a list"}')
    assert bad.failure.value == "schema_invalid" and "field 'tasks'" in bad.error
