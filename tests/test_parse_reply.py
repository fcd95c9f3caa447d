"""parse_reply and the schema's validators: every model reply becomes the right record or failure
class, every tolerated deviation is named in ``repairs``, and whatever comes out can be written to
``predictions.jsonl`` and read back unchanged."""

from __future__ import annotations

import json
import math
import string
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from paperfields.core.runlog import PredictionLine, read_predictions
from paperfields.core.schema import PaperRecord, parse_number
from paperfields.extract.backends.base import parse_reply

VALID = '{"method_name": "CLEAR", "research_area": "inference_efficiency", "contribution_types": ["method"]}'


def _result(**fields):
    return {"metric": "accuracy", "value": 1, "unit": "percent", "kind": "absolute", **fields}


def _reply(**record):
    return json.dumps(record, ensure_ascii=False)


@pytest.mark.parametrize(
    "text, finish, failure, repairs",
    [
        (VALID, "stop", None, []),
        ("```json\n" + VALID + "\n```", "stop", None, ["fenced"]),
        ("Here it is:\n```json\n" + VALID + "\n```\nHope it helps.", "stop", None, ["fenced", "prose"]),
        ("```json\n" + VALID, "stop", None, ["fenced"]),  # an unclosed fence
        ("<think>the paper names CLEAR</think>\n" + VALID, "stop", None, ["think"]),
        ("Here it is: " + VALID + " Hope it helps.", "stop", None, ["prose"]),
        ('{"method_name": "Line\nbreak"}', "stop", None, ["raw_control", "control_chars"]),
        ('{"method_name": "$10\\times$ faster", "method_full_name": "\\frac{a}{b}"}', "stop", None, ["escapes"]),
        ('{"method_name": "X", "colour": "blue"}', "stop", None, ["extra_keys"]),
        (VALID[:40], "length", "truncated", []),
        (VALID, "length", "truncated", []),  # the server said it was cut: never trusted as complete
        ('{"method_name": "X", "tasks": [', "stop", "malformed_json", []),
        ("no json here", "stop", "malformed_json", []),
        ("I cannot help with extracting this.", "stop", "refusal", []),
        ("", "stop", "empty_reply", []),
        (None, "stop", "empty_reply", []),
        ("<think>hmm</think>", "stop", "empty_reply", ["think"]),
        ('{"research_area": "astrology"}', "stop", "schema_invalid", []),
        (
            '{"results": [{"metric": "acc", "value": "n/a", "unit": "percent", "kind": "absolute"}]}',
            "stop",
            None,
            ["result_dropped"],
        ),
        ("[1, 2]", "stop", "malformed_json", []),
        ("[" * 100_000, "stop", "malformed_json", []),
        ("{" * 100_000, "stop", "malformed_json", []),
        (
            '{"a": ' * 5_000 + "1" + "}" * 5_000,
            "stop",
            "malformed_json",
            [],
        ),  # too deep for json: a failure, not a crash
    ],
)
def test_reply_classification(text, finish, failure, repairs):
    gen = parse_reply(text, finish)
    assert (gen.failure.value if gen.failure else None) == failure, gen.error
    assert gen.repairs == repairs
    assert (gen.record is None) == (failure is not None)
    assert gen.raw_text == text


# 1. A record comes only from the reply's own top-level object.

CONRAD = (
    '{"method_name": "ConRAD", "tasks": ["fault localization"]}\n\nNote: a '
    "field with nothing to report is left empty, e.g. {}."
)


@pytest.mark.parametrize(
    "text",
    [
        CONRAD,
        'An empty field looks like {}.\n```json\n{"method_name": "ConRAD"}\n```',
        '{"method_name": "ConRAD"}\n```json\n{}\n```',
        '```json\n{"method_name": "ConRAD"}\n```\n```json\n{"method_name": "Other"}\n```',
    ],
)
def test_a_second_object_anywhere_makes_the_reply_ambiguous(text):
    gen = parse_reply(text)
    assert gen.failure.value == "malformed_json" and gen.record is None
    assert gen.error == "more than one JSON object in reply (answer with exactly one)"


def test_braces_that_are_not_an_object_around_the_record_are_prose():
    gen = parse_reply('{"method_name": "ConRAD"}\nCost is $\\mathcal{O}(n)$, see {the appendix}.')
    assert gen.record["method_name"] == "ConRAD" and gen.repairs == ["prose"]


@pytest.mark.parametrize(
    "tail", ["{" * 20_000, ' {"' * 20_000, " {x}" * 20_000, '{"a": ' * 5_000, "[" * 20_000 + "]" * 20_000]
)
def test_long_bracketed_prose_after_the_record_is_read_in_one_pass(tail):
    gen = parse_reply('{"method_name": "A"}' + tail)
    assert gen.record["method_name"] == "A" and gen.repairs == ["prose"]


def test_bracketed_prose_too_tangled_to_check_is_refused():
    gen = parse_reply('{"method_name": "A"}' + '{"a" ' * 5_000 + "}" * 5_000)
    assert gen.failure.value == "malformed_json" and gen.error.startswith(
        "too much bracketed text after the JSON object"
    )


def test_a_later_fragment_never_becomes_the_record():
    # The leading object is broken: the valid one after it is not taken instead.
    gen = parse_reply('{"method_name": "ConRAD", "tasks": ["a" "b"]}\n{"method_name": "Fragment"}')
    assert gen.failure.value == "malformed_json" and gen.record is None


def test_latex_with_braces_inside_a_string_is_part_of_the_object():
    gen = parse_reply('{"results": [{"metric": "see \\url{x}", "value": 3, "unit": "count", "kind": "absolute"}]}')
    assert gen.record["results"][0]["metric"] == "see \\url{x}" and gen.repairs == ["escapes"]


# 2. Non-finite numbers are refused at parse time: that result item is left out (issue 24, item 1), never the record.


@pytest.mark.parametrize(
    "value, field",
    [
        ("NaN", "results.0.value"),
        ("Infinity", "results.0.value"),
        ("-Infinity", "results.0.value"),
        ("1e999", "results.0.value"),
        ("-1e999", "results.0.value"),
        ('"nan"', "results.0.value"),
        ('"inf"', "results.0.value"),
        ('"Infinity"', "results.0.value"),
        ("1" + "0" * 400, "results.0.value"),
        ("true", "results.0.value"),
    ],
)
def test_non_finite_numbers_drop_their_result_item(value, field):
    good = '{"metric": "f1", "value": 2, "unit": "percent", "kind": "absolute"}'
    text = (
        '{"method_name": "X", "results": [{"metric": "acc", "value": %s, "unit": "percent", "kind": "absolute"}, %s]}'
        % (value, good)
    )
    gen = parse_reply(text)
    assert (
        gen.failure is None
        and gen.record["method_name"] == "X"
        and [r["metric"] for r in gen.record["results"]] == ["f1"]
    ), gen.error
    assert "result_dropped" in gen.repairs
    upper = parse_reply(
        '{"results": [{"metric": "acc", "value": 1, "value_upper": %s, "unit": "percent", "kind": "absolute"}]}' % value
    )
    assert upper.failure is None and upper.record["results"] == [] and "result_dropped" in upper.repairs
    # a stored record (a prediction line) is still read strictly, naming the field
    with pytest.raises(ValidationError, match=r"results\.0\.value"):
        PaperRecord.model_validate(
            {"results": [{"metric": "acc", "value": "nan", "unit": "percent", "kind": "absolute"}]}
        )


# 3. LaTeX in JSON strings: a backslash before a letter run is text.

LATEX = [
    "\\tanh",
    "\\tfrac{1}{2}",
    "\\rangle",
    "\\binom{n}{k}",
    "\\bm{x}",
    "\\ne",
    "\\neq",
    "\\url{https://github.com/a/b}",
    "\\frac{a}{b}",
    "\\times",
    "\\beta",
    "\\nabla",
    "\\ubar",
    "\\%",
    "\\(x\\)",
    "\\'e",
    "\\u12",
    "\\ud800",
]


@pytest.mark.parametrize("latex", LATEX)
def test_latex_commands_are_kept_as_written(latex):
    gen = parse_reply('{"method_name": "A %s B", "tasks": ["%s"]}' % (latex, latex))
    assert gen.record["method_name"] == f"A {latex} B" and gen.record["tasks"] == [latex], gen.record
    assert gen.repairs == ["escapes"]


@pytest.mark.parametrize(
    "escaped, text",
    [
        ('\\"quoted\\"', '"quoted"'),
        ("a\\\\b", "a\\b"),
        ("a\\/b", "a/b"),
        ("caf\\u00e9", "café"),
        ("\\ud83d\\ude00", "\U0001f600"),
        ("\\\\times", "\\times"),  # correctly escaped LaTeX stays LaTeX
        ("one\\ntwo", "one\\ntwo"),  # the documented limit: \n before a letter run reads as the command \ntwo
    ],
)
def test_json_escapes_that_are_not_latex_decode(escaped, text):
    gen = parse_reply('{"method_name": "%s"}' % escaped)
    assert gen.record["method_name"] == text


@pytest.mark.parametrize(
    "escaped", ["a\\n b", "a\\n1", "a\\n", "a\\t\\t b", "a\\r\\n", "a\\u0007b", "a\\u0000b", "a\\u2028b", "a\\u0085b"]
)
def test_control_characters_never_reach_a_stored_string(escaped):
    payload = {"method_name": escaped, "tasks": [escaped], "results": [_result(metric=escaped, dataset=escaped)]}
    text = json.dumps(payload).replace("\\\\", "\\")  # the model's own escapes, as written
    gen = parse_reply(text)
    strings = [
        gen.record["method_name"],
        *gen.record["tasks"],
        gen.record["results"][0]["metric"],
        gen.record["results"][0]["dataset"],
    ]
    for value in strings:
        assert not any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in value), repr(value)
    assert gen.record["method_name"].startswith("a") and "control_chars" in gen.repairs


def test_a_raw_newline_in_a_metric_name_becomes_a_space():
    gen = parse_reply('{"results": [{"metric": "exact\n  match", "value": 1, "unit": "percent", "kind": "absolute"}]}')
    assert gen.record["results"][0]["metric"] == "exact match"
    assert gen.repairs == ["raw_control", "control_chars"]


# 4. Numbers: a real parser, and what it cannot read is refused.


@pytest.mark.parametrize(
    "text, number",
    [
        ("1e-4", 0.0001),
        ("3.2e5", 320000.0),
        ("5_000", 5000.0),
        ("\u221212.5", -12.5),
        ("56.61%", 56.61),
        ("35,368", 35368.0),
        ("1,234,567.5", 1234567.5),
        ("1.37x", 1.37),
        ("3\u00d7", 3.0),
        ("2-fold", 2.0),
        ("4.1 pp", 4.1),
        ("12 s", 12.0),
        (" 7 ", 7.0),
        ("+3", 3.0),
        ("-0.5", -0.5),
        (".5", 0.5),
        ("56.61\\%", 56.61),
        ("$82.0\\%$", 82.0),
        ("53.19$\\times$", 53.19),
        ("$1.82\\times$", 1.82),
        ("$5", 5.0),  # LaTeX as the abstracts write it
    ],
)
def test_parse_number(text, number):
    assert parse_number(text) == number


@pytest.mark.parametrize(
    "text",
    [
        "12.5 to 13",
        "~5",
        "35K tokens",
        "12m",
        "1,5",
        "1,23",
        "abc",
        "nan",
        "inf",
        "-infinity",
        "5 apples",
        "",
        "5__000",
        "0x1F",
        "$\\sim4\\times$",
        "**53.19**",
    ],
)
def test_parse_number_refuses_what_it_cannot_read(text):
    with pytest.raises(ValueError, match="is not a"):
        parse_number(text)


@pytest.mark.parametrize(
    "value, stored",
    [
        ("1e-4", (0.0001, None)),
        ("3.2e5", (320000.0, None)),
        ("5_000", (5000.0, None)),
        ("\u221212.5", (-12.5, None)),
        ("56.61%", (56.61, None)),
        ("35,368", (35368.0, None)),
        ("58-63%", (58.0, 63.0)),
        ("12.5 to 13", (12.5, 13.0)),
        ("1.7\u20132.0", (1.7, 2.0)),
        ("\u22125 to \u22123", (-5.0, -3.0)),
    ],
)
def test_numbers_written_as_text_are_read(value, stored):
    gen = parse_reply(_reply(results=[_result(value=value)]))
    result = gen.record["results"][0]
    assert (result["value"], result["value_upper"]) == stored
    assert gen.repairs == ["number_text"]


@pytest.mark.parametrize(
    "value, unit, stored_unit",
    [
        ("56.61%", "times", "percent"),
        ("1.37x", "percent", "times"),
        ("3 pp", "percent", "percentage_points"),
        ("2-fold", "points", "times"),
        ("12 s", "count", "seconds"),
        ("10 points", "percent", "points"),
        ("58-63%", "x", "percent"),
    ],
)
def test_a_unit_that_contradicts_the_sign_written_with_the_number_takes_the_signs(value, unit, stored_unit):
    # the unit's description is read from the abstract's sign: "56.61%" stored as 56.61 times would be a wrong value
    gen = parse_reply(_reply(results=[_result(value=value, unit=unit)]))
    assert gen.record["results"][0]["unit"] == stored_unit
    assert gen.repairs[0] == "unit_conflict" and "number_text" in gen.repairs


@pytest.mark.parametrize(
    "value, unit",
    [
        ("56.61%", "percent"),
        ("3.1%", "percentage_points"),
        ("10 points", "percentage_points"),
        ("56.61", "times"),
        (56.61, "times"),
        ("1.37x", "\u00d7"),
    ],
)
def test_a_unit_the_sign_allows_or_a_value_without_a_sign_is_left_alone(value, unit):
    gen = parse_reply(_reply(results=[_result(value=value, unit=unit)]))
    assert "unit_conflict" not in gen.repairs
    assert gen.record["results"][0]["unit"] == {"\u00d7": "times"}.get(unit, unit)


@pytest.mark.parametrize("value", ["12.5 or 13", "63-58", "~5", "35K tokens", "about 3", "1,5"])
def test_a_number_not_fully_read_is_refused_not_cut_to_a_prefix(value):
    gen = parse_reply(_reply(results=[_result(value=value), _result(value=7)]))
    assert (
        gen.failure is None and [r["value"] for r in gen.record["results"]] == [7] and "result_dropped" in gen.repairs
    )


def test_a_range_with_its_upper_end_given_is_not_split():
    gen = parse_reply(_reply(results=[_result(value="58-63", value_upper=70)]))
    assert gen.failure is None and gen.record["results"] == [] and gen.repairs == ["result_dropped"]


# 5. Placeholders, casing and signs.

PLACEHOLDERS = ["N/A", "n/a", "null", "None", "none", "", "-", "unknown", "  NULL  ", "\u2014"]


@pytest.mark.parametrize("placeholder", PLACEHOLDERS)
def test_placeholders_are_null_and_dropped_from_lists(placeholder):
    gen = parse_reply(
        _reply(
            method_name=placeholder,
            method_full_name=placeholder,
            code_url=placeholder,
            training_free=placeholder,
            tasks=[placeholder, "math reasoning", None],
            datasets=[placeholder],
            contribution_types=[placeholder, "method"],
            research_area=placeholder,
            results=[
                _result(
                    dataset=placeholder,
                    model=placeholder,
                    baseline=placeholder,
                    qualifier=placeholder,
                    value_upper=placeholder,
                )
            ],
        )
    )
    record = gen.record
    assert record is not None, gen.error
    assert record["method_name"] is record["method_full_name"] is record["code_url"] is record["training_free"] is None
    assert (
        record["tasks"] == ["math reasoning"]
        and record["datasets"] == []
        and record["contribution_types"] == ["method"]
    )
    assert record["research_area"] == "other"  # the field's default, as if the key were absent
    result = record["results"][0]
    assert result["dataset"] is result["model"] is result["baseline"] is result["value_upper"] is None
    assert result["qualifier"] == "exact"
    assert gen.repairs == ["placeholders"]


@pytest.mark.parametrize(
    "field", ["tasks", "datasets", "models", "metrics", "baselines", "results", "contribution_types"]
)
def test_a_null_or_placeholder_list_is_empty(field):
    for value in (None, "N/A"):
        gen = parse_reply(_reply(**{field: value}))
        assert gen.record[field] == [] and gen.repairs == ["placeholders"]


@pytest.mark.parametrize(
    "word, stored",
    [("true", True), ("True", True), ("yes", True), ("false", False), ("No", False), (1, True), (0, False)],
)
def test_training_free_as_text(word, stored):
    gen = parse_reply(_reply(training_free=word))
    assert gen.record["training_free"] is stored and gen.repairs == ["bool_text"]


def test_training_free_that_is_not_a_truth_value_is_refused():
    gen = parse_reply(_reply(training_free="partly"))
    assert gen.failure.value == "schema_invalid" and "field 'training_free'" in gen.error


@pytest.mark.parametrize(
    "written, area",
    [
        ("Alignment_Safety", "alignment_safety"),
        ("alignment safety", "alignment_safety"),
        ("Alignment-Safety", "alignment_safety"),
        ("RL post-training", "rl_post_training"),
        ("Code / Software Engineering", "code_software_engineering"),
        ("OTHER", "other"),
    ],
)
def test_research_area_matches_ignoring_case_and_separators(written, area):
    gen = parse_reply(_reply(research_area=written))
    assert gen.record["research_area"] == area and gen.repairs == ["enum_spelling"]


@pytest.mark.parametrize(
    "field, written, stored, repair",
    [
        ("unit", "%", "percent", "unit_sign"),
        ("unit", "x", "times", "unit_sign"),
        ("unit", "\u00d7", "times", "unit_sign"),
        ("unit", "X", "times", "unit_sign"),
        ("unit", "fold", "times", "unit_sign"),
        ("unit", "pp", "percentage_points", "unit_sign"),
        ("unit", "p.p.", "percentage_points", "unit_sign"),
        ("unit", "percentage points", "percentage_points", "enum_spelling"),
        ("unit", "s", "seconds", "unit_sign"),
        ("unit", "sec", "seconds", "unit_sign"),
        ("unit", "Percent", "percent", "enum_spelling"),
        ("kind", "Improvement", "improvement", "enum_spelling"),
        ("qualifier", "up to", "up_to", "enum_spelling"),
        ("qualifier", "~", "about", "unit_sign"),
        ("qualifier", "more than", "over", "unit_sign"),
    ],
)
def test_result_enums_read_the_signs_the_descriptions_name(field, written, stored, repair):
    gen = parse_reply(_reply(results=[_result(**{field: written})]))
    assert gen.record["results"][0][field] == stored and gen.repairs == [repair]


def test_contribution_types_match_ignoring_case():
    gen = parse_reply(_reply(contribution_types=["Method", "BENCHMARK"]))
    assert gen.record["contribution_types"] == ["method", "benchmark"] and gen.repairs == ["enum_spelling"]


@pytest.mark.parametrize(
    "field, value", [("research_area", "astrology"), ("unit", "furlongs"), ("unit", None), ("kind", "sideways")]
)
def test_unknown_enum_values_are_still_refused(field, value):
    record = {"research_area": value} if field == "research_area" else {"results": [_result(**{field: value})]}
    gen = parse_reply(_reply(**record))
    if field == "research_area":
        assert gen.failure.value == "schema_invalid" and field in gen.error
    else:  # inside a result: that item is left out, named, and the record kept (issue 24, item 1)
        assert gen.failure is None and gen.record["results"] == [] and "result_dropped" in gen.repairs


def test_extra_keys_ignored_and_every_wrong_field_named():
    ok = parse_reply('{"method_name": "A", "favourite_colour": "blue"}')
    assert ok.record is not None and "favourite_colour" not in ok.record and ok.repairs == ["extra_keys"]
    bad = parse_reply('{"tasks": 3, "research_area": 7}')
    assert (
        bad.failure.value == "schema_invalid" and "field 'tasks'" in bad.error and "field 'research_area'" in bad.error
    )
    assert bad.error.endswith("(2 error(s))")


def test_a_lone_surrogate_in_the_reply_is_replaced():
    gen = parse_reply('{"method_name": "A\ud800B"}')
    assert (
        gen.record["method_name"] == "A\ufffdB"
        and gen.raw_text == '{"method_name": "A\ufffdB"}'
        and gen.repairs == ["surrogates"]
    )


# Every parse_reply output is a line read_predictions accepts, unchanged.

_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0, max_codepoint=0x3000)
    | st.sampled_from(["\\", '"', "{", "}", "\ud800", "\u2212"]),
    max_size=12,
)
_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-(10**400), 10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _TEXT
    | st.sampled_from(PLACEHOLDERS + ["56.61%", "1e999", "5_000", "58-63%", "NaN", "%", "x", "Alignment_Safety"])
)
_NUMBER = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(-(10**400), 10**400)
    | st.sampled_from(["56.61%", "1e999", "5_000", "58-63%", "NaN", "\u221212.5", "1.37x", "35,368", "12.5 to 13"])
)


def _likely(valid: st.SearchStrategy) -> st.SearchStrategy:
    """Mostly a plausible value, sometimes anything at all."""
    return st.sampled_from(range(8)).flatmap(lambda i: _SCALAR if i == 0 else valid)


def _enum(*values: str) -> st.SearchStrategy:
    return _likely(st.sampled_from(values).flatmap(lambda v: st.sampled_from([v, v.upper(), v.replace("_", " ")])))


_RESULT = st.fixed_dictionaries(
    {
        "metric": _likely(_TEXT),
        "value": _likely(_NUMBER),
        "unit": _enum("percent", "times", "%", "x", "pp", "count"),
        "kind": _enum("absolute", "improvement", "reduction"),
    },
    optional={
        "value_upper": _likely(_NUMBER),
        "qualifier": _enum("exact", "up_to", "~"),
        **{k: _likely(_TEXT) for k in ("dataset", "model", "baseline")},
    },
)
_RECORD = st.fixed_dictionaries(
    {},
    optional={
        **{k: _likely(_TEXT) for k in ("method_name", "method_full_name", "code_url")},
        "research_area": _enum("reasoning", "alignment_safety", "other"),
        "training_free": _likely(st.sampled_from([True, False, None, "yes", "N/A"])),
        **{k: _likely(st.lists(_TEXT, max_size=3)) for k in ("tasks", "datasets", "models", "metrics", "baselines")},
        "contribution_types": _likely(st.lists(st.sampled_from(["method", "Benchmark", "N/A"]), max_size=2)),
        "results": _likely(st.lists(_RESULT, max_size=2)),
    },
)


def _as_model_writes(record: dict, style: int) -> str:
    text = json.dumps(record, ensure_ascii=style == 0, allow_nan=True)
    if style == 2:  # a model that does not escape its backslashes
        text = text.replace("\\\\", "\\")
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    record=_RECORD,
    style=st.integers(0, 2),
    wrap=st.sampled_from(["{}", "```json\n{}\n```", "Sure: {} Done.", "<think>x</think>{}"]),
)
def test_every_parsed_reply_round_trips_through_predictions_jsonl(record, style, wrap):
    gen = parse_reply(wrap.replace("{}", _as_model_writes(record, style)))
    if gen.record is not None:
        assert PaperRecord.model_validate(gen.record).model_dump(mode="json") == gen.record  # a fixed point
        for value in json.loads(json.dumps(gen.record)).values():
            assert not (isinstance(value, float) and not math.isfinite(value))
    line = PredictionLine(paper_id="p1", **gen.model_dump())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "predictions.jsonl"
        path.write_text(line.model_dump_json() + "\n", encoding="utf-8")
        (back,) = read_predictions(path)
    assert back.record == gen.record and back.failure == gen.failure and back.raw_text == gen.raw_text


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=string.printable + "\\\u2212\ud800", max_size=80))
def test_any_text_is_classified_without_raising(text):
    gen = parse_reply("{" + text)
    assert (gen.record is None) != (gen.failure is None)
    PredictionLine.model_validate_json(PredictionLine(paper_id="p1", **gen.model_dump()).model_dump_json())
