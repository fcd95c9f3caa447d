"""The repairs: every deviation from the schema that reading a reply tolerates, by the name a
prediction line's ``repairs`` records it under, with what the reply had and what is stored.

Replies are read by ``paperfields.extract.backends.base.parse_reply`` and the schema's validators
(:mod:`paperfields.core.schema`); a record imported from outside (``paperfields score --predictions``)
names the same deviations the same way. The docs' repairs table is generated from :data:`REPAIRS`, and
a test checks that every repair name the code records is here.
"""

from __future__ import annotations

from typing import NamedTuple


class Repair(NamedTuple):
    """One tolerated deviation: its ``name`` (as written in ``repairs``), what the reply had
    (``reply_had``), what is stored (``stored``), and whether it leaves something of the reply out
    (``drops``)."""

    name: str
    reply_had: str
    stored: str
    drops: bool = False


_ALL = (
    Repair(
        "think",
        "a `<think>...</think>` block, or reasoning ended by a stray `</think>` (whatever it holds, braces too)",
        "what follows it",
    ),
    Repair(
        "reasoning_field",
        "`content` null or empty, the record in `reasoning_content` or `reasoning` (vLLM, SGLang reasoning parsers)",
        "the record read from there",
    ),
    Repair(
        "content_parts",
        '`content` a list of parts (`[{"type": "text", "text": ...}]`, `output_text`, with a `thinking` or '
        "`reasoning` part first: Mistral, LiteLLM)",
        "the text parts joined; thinking parts skipped (read only when no text part holds a record, as "
        "`reasoning_field`)",
    ),
    Repair(
        "object_not_text",
        "a tool call's `arguments` (or the `content`) sent as a JSON object instead of a string (LiteLLM, Ollama)",
        "the object, read as if sent as text",
    ),
    Repair(
        "sse",
        "server-sent events answered to a request that asked for no stream (`data: {chunk}` ... `data: [DONE]`, "
        "or a completion followed by `data: [DONE]`: a streaming-only server or proxy)",
        "the completion they stream, its usage included",
    ),
    Repair("fenced", "a markdown fence around the object", "the object"),
    Repair("prose", "text around the object", "the object"),
    Repair("escapes", "LaTeX backslashes in strings (`\\times`)", "the text"),
    Repair("raw_control", "raw line breaks inside strings", "the text"),
    Repair(
        "surrogates",
        "lone UTF-16 surrogates anywhere in a reply (its strings, `message.refusal`, the tool call, an error message "
        "the server sent): no UTF-8 file can hold one, and left in it would stop the run",
        "the text, U+FFFD for each surrogate",
    ),
    Repair(
        "json5", 'trailing commas (`["GSM8K",],`), comments, single quotes: read by the `json5` package', "the values"
    ),
    Repair(
        "duplicate_keys", "a key written twice with the same value (different values: `malformed_json`)", "the value"
    ),
    Repair(
        "envelope",
        'the record wrapped in an object with no key of the schema and exactly one object inside (`{"PaperRecord": '
        '{...}}`, `{"name": ..., "arguments": {...}}`, `{"type": "function", "parameters": {...}}`, as deep as it '
        "goes); two or none inside is `schema_invalid`, one with `error`/`reason`/`refusal` keys a `refusal`: never "
        "an empty record",
        "the record inside",
    ),
    Repair(
        "key_spelling",
        "keys of the schema in another spelling (`methodName`, `MethodName`, `method-name`, `Method Name`, "
        "`valueUpper` in a result)",
        "the values under the schema's keys",
    ),
    Repair("extra_keys", "keys not in the schema", "ignored"),
    Repair(
        "list_text",
        'a list written as a string: a double-encoded JSON array (`"[\\"GSM8K\\"]"`) is decoded, one name is '
        'wrapped, comma- or semicolon-separated text (`"GSM8K, MATH"`) is split: no gold list item holds a comma or '
        "semicolon, while a name holding one is rare, so splitting loses less than one wrong item",
        "the list",
    ),
    Repair(
        "number_text",
        'a number as text: `"56.61%"`, `"56.61 percent"`, `"35,368"`, `"2.5×10^3"`, `"2.5 \\times 10^{3}"`, '
        '`"10^4"`, `"$10^{3}$"`, `"3·10⁻²"`, a scale factor read by `quantiphy` (`"1.2k"`, `"3M"`, `"1.5B"` for '
        'billion, `"2 million"`), a range `"58-63%"`, `"from 28% to 33%"`, `"between 28% and 33%"`',
        "the number (and `value_upper`)",
    ),
    Repair(
        "uncertainty",
        'a value with its uncertainty (`"56.6 ± 0.3"`, `"56.6 +/- 0.3%"`, `"56.6 (±0.3)"`, `"56.6 \\pm 0.3"`)',
        "the value; the uncertainty is left out (the schema has no field for it)",
        drops=True,
    ),
    Repair(
        "result_dropped",
        'a result item that does not validate (a value no parser reads, `"12m"`, `"about five"`, NaN; a unit '
        "outside the schema)",
        "the other items; the record is kept",
        drops=True,
    ),
    Repair(
        "item_dropped",
        "a quoted list item of the evidence strategy that does not validate",
        "the other items; the record is kept",
        drops=True,
    ),
    Repair(
        "placeholders",
        '"N/A", "null", "-", "" and the like meaning nothing',
        "null in a scalar field; dropped from a list",
    ),
    Repair("enum_spelling", 'a label spelled otherwise ("Code Software Engineering", "Percent")', "the schema's value"),
    Repair("unit_sign", "a unit written as its sign (`%`)", "the schema's unit"),
    Repair(
        "unit_conflict",
        'a unit that contradicts the sign written with the number (`"56.61%"` with unit `times`)',
        "the sign's unit (percent), the abstract's sign winning",
    ),
    Repair("bool_text", 'a boolean as text ("yes")', "the boolean"),
    Repair(
        "control_chars", "line breaks and other control characters in names", "the name, each run of them one space"
    ),
    Repair("no_tool_call", "tools mode, the record in the content instead of a tool call", "the record"),
)

REPAIRS: dict[str, Repair] = {repair.name: repair for repair in _ALL}
"""Every repair by name, in the order the documentation lists them."""
