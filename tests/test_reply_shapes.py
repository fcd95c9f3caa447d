"""Issue 34 items 1-12: every reply shape a current OpenAI-compatible server sends is read or classed
right (never a valid all-default record, never asked again forever), and faults of the response cache
and of the runs folder never stop a run.

Each item is replayed through the real ``openai`` client and ``instructor`` over HTTP against the
scripted stub server (tests/openai_stub.py), through the backend or the CLI; each with a second
spelling of the same mistake, so the kind is fixed and not the example.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from paperfields.core.runlog import GenerationParams, load_manifest, read_predictions
from paperfields.extract.backends import GenerationRequest, get_backend
from tests.cli_in_process import run_cli
from tests.openai_stub import VALID, reply

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = [{"role": "system", "content": "Extract."}, {"role": "user", "content": "Abstract: We propose StubNet."}]
MODES = ["md_json", "json", "json_schema", "tools"]
BUDGET = 256
RECORD = json.loads(VALID)


def _generate(stub, script, **options):
    stub.script[:] = script
    backend = get_backend("openai/stub-model", base_url=stub.url, **options)
    return asyncio.run(
        backend.generate(GenerationRequest(messages=MESSAGES, params=GenerationParams(max_tokens=BUDGET)))
    )


def _run(stub, tmp_path, *more, run_id="r", limit="1"):
    """``paperfields run`` of the stub server through the CLI; (the result, the run folder)."""
    runs = tmp_path / "runs"
    args = ["run", "-b", "openai/m", "--base-url", stub.url, "--limit", limit, "--runs-dir", str(runs)]
    done = run_cli(*args, "--run-id", run_id, "--no-score", *more, env=dict(os.environ))
    return done, runs / run_id


# 1. content as a list of parts: the text parts joined, thinking / reasoning parts skipped.

PARTS = [
    [{"type": "text", "text": VALID}],
    [
        {"type": "thinking", "thinking": [{"type": "text", "text": "The set {a, b} is..."}]},
        {"type": "text", "text": VALID},
    ],
    [
        {"type": "reasoning", "reasoning": "hmm {x}"},
        {"type": "output_text", "text": VALID[:30]},
        {"type": "output_text", "text": VALID[30:]},
    ],
    [{"type": "redacted_thinking", "data": "abc"}, {"text": VALID}],
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("parts", PARTS, ids=["text", "thinking+text", "reasoning+output_text", "untyped"])
def test_1_content_as_a_list_of_parts(stub, mode, parts):
    gen = _generate(stub, [reply(parts, tool_call=False)] * 2, mode=mode)
    assert gen.failure is None, gen.error
    assert gen.record["method_name"] == "StubNet" and "content_parts" in gen.repairs
    # read at once: no re-ask (tools mode asks once for the tool call the server did not make, as for any content)
    assert len(stub.requests) == (2 if mode == "tools" else 1)


def test_1_parts_with_no_text_are_an_empty_reply(stub):
    gen = _generate(stub, [reply([{"type": "thinking", "thinking": "only thoughts {a}"}], tool_call=False)] * 2)
    assert gen.failure.value == "empty_reply" and gen.record is None


def test_1_through_the_cli_the_run_finishes(stub, tmp_path):
    stub.default = reply([{"type": "thinking", "thinking": "..."}, {"type": "text", "text": VALID}])
    done, run = _run(stub, tmp_path)
    assert done.returncode == 0, done.stderr
    (line,) = read_predictions(run / "predictions.jsonl")
    assert line.failure is None and line.record["method_name"] == "StubNet" and "content_parts" in line.repairs
    assert load_manifest(run).status == "complete"


# 2. Tool-call arguments (or the content) sent as a JSON object instead of a string.


@pytest.mark.parametrize("mode, tool_call", [("tools", True), ("md_json", True), ("md_json", False), ("json", False)])
def test_2_arguments_as_an_object(stub, mode, tool_call):
    gen = _generate(stub, [reply(RECORD, tool_call=tool_call)] * 2, mode=mode)
    assert gen.failure is None, gen.error
    assert gen.record["method_name"] == "StubNet" and "object_not_text" in gen.repairs and len(stub.requests) == 1


# 3. A streaming-only server answering a non-stream request with SSE chunks, or a completion then data: [DONE].


def _chunk(delta, finish=None):
    return "data: " + json.dumps(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def _completion(content=VALID, usage=True):
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return json.dumps(body)


_USAGE_CHUNK = "data: " + json.dumps(
    {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
)
SSE = {
    "chunks": "\n\n".join(
        [
            _chunk({"role": "assistant", "content": ""}),
            _chunk({"content": VALID[:25]}),
            _chunk({"content": VALID[25:]}),
            _chunk({}, "stop"),
            _USAGE_CHUNK,
            "data: [DONE]",
        ]
    )
    + "\n\n",
    "chunks, CRLF, no space": "\r\n\r\n".join(
        ["data:" + _chunk({"content": VALID})[6:], "data:" + _chunk({}, "stop")[6:], "data: [DONE]"]
    )
    + "\r\n\r\n",
    "a completion then [DONE]": _completion() + "\n\ndata: [DONE]\n\n",
    "a completion as an event": "data: " + _completion() + "\n\ndata: [DONE]\n\n",
}


@pytest.mark.parametrize("content_type", ["text/event-stream", "application/json"])
@pytest.mark.parametrize("name", list(SSE))
def test_3_sse_answered_to_a_non_stream_request(stub, name, content_type):
    gen = _generate(stub, [reply(body=SSE[name], content_type=content_type)] * 2)
    assert gen.failure is None, gen.error
    assert gen.record["method_name"] == "StubNet" and "sse" in gen.repairs and len(stub.requests) == 1
    if "chunks" not in name or name == "chunks":
        assert gen.usage.input_tokens == 10 and gen.usage.output_tokens == 5


def test_3_sse_that_holds_no_completion_is_a_transport_error(stub):
    stub.default = reply(body="data: [DONE]\n\n", content_type="text/event-stream")
    gen = _generate(stub, [])
    assert gen.failure.value == "transport_error" and "event stream" in gen.error


# 4. Envelopes unwrapped when unambiguous; refusal objects and all-unknown keys a failure; camelCase mapped.

ENVELOPES = [
    {"PaperRecord": RECORD},
    {"paper_record": RECORD},
    {"name": "PaperRecord", "arguments": RECORD},
    {"name": "extract", "arguments": json.dumps(RECORD)},
    {"type": "function", "parameters": RECORD},
    {"type": "function", "function": {"name": "PaperRecord", "arguments": json.dumps(RECORD)}},
    {"result": {"record": RECORD}},
]


@pytest.mark.parametrize("mode", ["md_json", "json_schema", "tools"])
@pytest.mark.parametrize("envelope", ENVELOPES, ids=lambda e: "+".join(e))
def test_4_an_envelope_is_unwrapped(stub, mode, envelope):
    gen = _generate(stub, [reply(json.dumps(envelope))] * 2, mode=mode)
    assert gen.failure is None, gen.error
    assert gen.record["method_name"] == "StubNet" and gen.record["datasets"] == ["GSM8K"]
    assert "envelope" in gen.repairs and len(stub.requests) == 1


NOT_A_RECORD = [
    ({"reason": "The abstract is not about ML.", "error": "cannot extract"}, "refusal"),
    ({"error": {"message": "I cannot help with that"}}, "refusal"),
    ({"refusal": "no"}, "refusal"),
    ({"foo": 1, "bar": [2]}, "schema_invalid"),
    ({"a": {"x": 1}, "b": {"y": 2}}, "schema_invalid"),
    ({"first": RECORD, "second": RECORD}, "schema_invalid"),  # two envelopes: which is the answer is a guess
]


@pytest.mark.parametrize("mode", ["md_json", "tools"])
@pytest.mark.parametrize("answer, failure", NOT_A_RECORD, ids=lambda x: "+".join(x) if isinstance(x, dict) else x)
def test_4_an_object_with_no_schema_key_is_never_a_default_record(stub, mode, answer, failure):
    gen = _generate(stub, [reply(json.dumps(answer))] * 2, mode=mode)
    assert gen.record is None and gen.failure.value == failure, (gen.failure, gen.error)
    assert "schema" in gen.error or "refus" in gen.error or "declin" in gen.error


def test_4_an_empty_object_is_still_an_abstention(stub):
    gen = _generate(stub, [reply("{}")])
    assert gen.failure is None and gen.record["method_name"] is None


CAMEL = [
    {"methodName": "StubNet", "researchArea": "reasoning", "datasets": ["GSM8K"]},
    {"MethodName": "StubNet", "research-area": "reasoning", "Datasets": ["GSM8K"]},
    {"method name": "StubNet", "RESEARCH_AREA": "reasoning", "datasets": ["GSM8K"]},
]


@pytest.mark.parametrize("mode", ["md_json", "tools"])
@pytest.mark.parametrize("answer", CAMEL, ids=["camelCase", "Pascal+kebab", "spaces+upper"])
def test_4_other_key_spellings_are_mapped(stub, mode, answer):
    results = [{"metric": "accuracy", "value": 41.5, "valueUpper": 43, "unit": "percent", "kind": "absolute"}]
    gen = _generate(stub, [reply(json.dumps({**answer, "results": results}))] * 2, mode=mode)
    assert gen.failure is None, gen.error
    assert gen.record["method_name"] == "StubNet" and gen.record["research_area"] == "reasoning"
    assert gen.record["datasets"] == ["GSM8K"] and gen.record["results"][0]["value_upper"] == 43
    assert "key_spelling" in gen.repairs and "extra_keys" not in gen.repairs


# 5. finish_reason content_filter: a class of its own, named, not asked again.


@pytest.mark.parametrize("finish", ["content_filter", "SAFETY"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("content", [None, '{"method_name": "Stub', ""], ids=["null", "half JSON", "empty"])
def test_5_content_filter(stub, mode, content, finish):
    gen = _generate(stub, [reply(content, finish_reason=finish, tool_call=False)] * 3, mode=mode)
    assert gen.failure.value == "content_filter" and "content filter" in gen.error and gen.record is None
    assert len(stub.requests) == 1  # not re-asked


def test_5_content_filter_in_the_run_folder(stub, tmp_path):
    stub.default = reply(None, finish_reason="content_filter")
    done, run = _run(stub, tmp_path)
    assert done.returncode == 0, done.stderr
    assert load_manifest(run).failures_by_class == {"content_filter": 1} and len(stub.requests) == 1
    again, _ = _run(stub, tmp_path)
    assert again.returncode == 0 and len(stub.requests) == 1  # final: a rerun does not ask again


# 6. Truncation reported as stop, with completion_tokens equal to the budget.


@pytest.mark.parametrize("finish", ["stop", None, "eos"])
@pytest.mark.parametrize("tokens", [BUDGET, BUDGET + 1])
@pytest.mark.parametrize("text", [VALID[:40], VALID[:-1] + ', "tasks": ["'], ids=["cut", "cut in a list"])
def test_6_truncated_reported_as_stop(stub, finish, tokens, text):
    gen = _generate(stub, [reply(text, finish_reason=finish, completion_tokens=tokens)] * 2)
    assert gen.failure.value == "truncated" and str(BUDGET) in gen.error, gen.error
    assert len(stub.requests) == 1  # no re-ask at the same budget


def test_6_a_whole_record_at_the_budget_is_kept(stub):
    gen = _generate(stub, [reply(VALID, completion_tokens=BUDGET)])
    assert gen.failure is None and gen.record["method_name"] == "StubNet"


# 7. Lone UTF-16 surrogates anywhere in a reply never stop a run.

SURROGATE = "\\ud83d"  # a JSON escape of a lone high surrogate, as the HTTP body carries it


def _raw_body(message: str, finish: str = "stop") -> str:
    return (
        '{"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0, '
        f'"finish_reason": "{finish}", "message": {message}}}], "usage": {{"prompt_tokens": 1, "completion_tokens": 1}}}}'
    )


BODIES = {
    "refusal": _raw_body('{"role": "assistant", "content": null, "refusal": "I refuse ' + SURROGATE + ' this"}'),
    "content prose": _raw_body(
        '{"role": "assistant", "content": "Here '
        + SURROGATE
        + ' it is: {\\"method_name\\": \\"Stub'
        + SURROGATE
        + '\\"}"}'
    ),
    "tool arguments": _raw_body(
        '{"role": "assistant", "content": null, "tool_calls": [{"id": "1", "type": "function", "function": '
        '{"name": "PaperRecord", "arguments": "{\\"method_name\\": \\"X' + SURROGATE + '\\"}"}}]}'
    ),
    "reasoning": _raw_body(
        '{"role": "assistant", "content": "", "reasoning_content": "think ' + SURROGATE + ' \\"nothing\\""}'
    ),
    "200 error body": '{"error": {"message": "bad ' + SURROGATE + ' thing"}}',
    "model name": _raw_body('{"role": "assistant", "content": "{}"}').replace(
        '"model": "m"', '"model": "m' + SURROGATE + '"'
    ),
}
STORED = {"refusal": "I refuse \ufffd this", "content prose": "Stub\ufffd", "tool arguments": "X\ufffd"}


@pytest.mark.parametrize("name", list(BODIES))
def test_7_lone_surrogates_never_stop_a_run(stub, tmp_path, name):
    stub.default = reply(body=BODIES[name])
    done, run = _run(stub, tmp_path, "--retries", "0")
    assert "Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr
    (line,) = read_predictions(run / "predictions.jsonl")
    text = (run / "predictions.jsonl").read_bytes().decode("utf-8")  # strict: no surrogate reached the file
    assert "\\ud83d" not in text.lower()  # nor a JSON escape of one
    if name in STORED:
        assert STORED[name] in json.dumps(line.model_dump(), ensure_ascii=False) and "surrogates" in line.repairs
    again, _ = _run(stub, tmp_path, "--retries", "0")  # and again on a rerun
    assert "Traceback" not in again.stderr and again.returncode in (0, 1), again.stderr


def test_7_a_surrogate_in_an_http_error_message(stub, tmp_path):
    stub.default = reply(status=400, body='{"error": {"message": "bad ' + SURROGATE + ' value", "type": "x"}}')
    done, run = _run(stub, tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    (line,) = read_predictions(run / "predictions.jsonl")
    assert line.failure.value == "request_rejected" and "bad \ufffd value" in line.error
