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
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paperfields.core.repairs import REPAIRS
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
    gen = asyncio.run(
        backend.generate(GenerationRequest(messages=MESSAGES, params=GenerationParams(max_tokens=BUDGET)))
    )
    assert set(gen.repairs) <= set(REPAIRS), gen.repairs  # every repair recorded is in the docs' table
    return gen


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
    assert "content filter" in done.stderr.replace("\n", " ")
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
        '{"id": "c", "object": "chat.completion", "created": 0, "model": "m", '
        f'"choices": [{{"index": 0, "finish_reason": "{finish}", "message": {message}}}], '
        '"usage": {"prompt_tokens": 1, "completion_tokens": 1}}'
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


# 8. usage null, absent or with null counts is unknown (None), not 0: in the line, the manifest, the board and the cost.

UNKNOWN_USAGE = {
    "null": None,
    "absent": "absent",
    "null counts": {"prompt_tokens": None, "completion_tokens": None, "total_tokens": None},
    "one count null": {"prompt_tokens": 12, "completion_tokens": None},
}


@pytest.mark.parametrize("name", list(UNKNOWN_USAGE))
def test_8_unknown_usage_is_not_zero(stub, tmp_path, name):
    stub.default = reply(usage=UNKNOWN_USAGE[name])
    runs = tmp_path / "runs"
    done = run_cli(
        "run", "-b", "openai/m", "--base-url", stub.url, "--limit", "2", "--runs-dir", runs, "--run-id", "r",
        "--price", "1,2", env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = read_predictions(runs / "r" / "predictions.jsonl")
    assert all(line.failure is None and line.usage.output_tokens is None and line.dollars is None for line in lines)
    assert "no token counts" in done.stderr.replace("\n", " ")
    manifest = json.loads((runs / "r" / "manifest.json").read_text())
    assert manifest["usage"]["output_tokens"] is None and manifest["dollars_total"] is None
    if name == "one count null":
        assert manifest["usage"]["input_tokens"] == 24
    scores = json.loads((runs / "r" / "scores.json").read_text())
    assert scores["tokens_per_paper"] is None and scores["dollars_total"] is None
    board = run_cli("leaderboard", "--runs-dir", runs, "--no-write", "--json", env=dict(os.environ))
    assert board.returncode == 0, board.stderr
    (row,) = json.loads(board.stdout)
    assert row["tokens_per_paper"] is None and row["dollars_total"] is None
    out = tmp_path / "board" / "leaderboard.md"
    written = run_cli(
        "leaderboard", "--runs-dir", runs, "--out", out, "--no-plots", "--no-html", "-q", env=dict(os.environ)
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    cost_rows = [row for row in out.read_text().splitlines() if row.startswith("| r |")]
    assert cost_rows and any(row.count("unknown") >= 3 for row in cost_rows), cost_rows  # tokens, $/run, $/correct
    assert not any("0.0000" in row for row in cost_rows)


def test_8_known_usage_still_counts(stub, tmp_path):
    stub.default = reply(prompt_tokens=100, completion_tokens=20)
    done, run = _run(stub, tmp_path, "--price", "1,2", limit="2")
    assert done.returncode == 0, done.stderr
    manifest = load_manifest(run)
    assert manifest.usage.input_tokens == 200 and manifest.dollars_total == pytest.approx((200 * 1 + 40 * 2) / 1e6)


# 9. --timeout bounds the whole request: a body trickled in small pieces ends near the timeout.


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_9_timeout_bounds_the_whole_request(stub, transport):
    timeout = 2.0
    stub.script[:] = [reply(trickle=0.5)]
    backend = get_backend("openai/m", base_url=stub.url, timeout_s=timeout, transport_retries=0, transport=transport)
    request = GenerationRequest(messages=MESSAGES, params=GenerationParams(max_tokens=BUDGET))
    started = time.monotonic()  # after the imports and the client's set-up
    gen = asyncio.run(backend.generate(request))
    took = time.monotonic() - started
    assert gen.failure.value == "transport_error" and "Timeout" in gen.error and "--timeout" in gen.error, gen.error
    # the trickle alone lasts over 30 s (8 bytes each half second); the request ends within a timeout or so
    assert timeout * 0.9 <= took < timeout * 3, took


def test_9_the_timeout_per_attempt_through_the_cli(stub, tmp_path):
    stub.script[:] = [reply(trickle=0.5), reply(trickle=0.5)]
    started = time.monotonic()
    done, run = _run(stub, tmp_path, "--timeout", "2", "--retries", "1")
    took = time.monotonic() - started
    (line,) = read_predictions(run / "predictions.jsonl")
    assert line.failure.value == "transport_error" and len(stub.requests) == 2
    assert took < 2 * (1 + 1) + 30, (
        took
    )  # two attempts of at most the timeout each, backoff, start-up (unbounded: 70 s)


def test_9_a_slow_body_within_the_timeout_is_read(stub):
    gen = _generate(stub, [reply(trickle=0.002)], timeout_s=30.0)
    assert gen.failure is None and gen.record["method_name"] == "StubNet"


# 10. Error texts: a vLLM 200 error body, an HTML error page, a connection reset, Retry-After.


@pytest.mark.parametrize(
    "body, message",
    [
        (
            {"object": "error", "message": "The model `m` does not exist.", "type": "NotFoundError", "code": 404},
            "does not exist",
        ),
        ({"object": "error", "message": "KV cache is full", "param": None}, "KV cache is full"),
        ({"detail": "Not Found"}, "Not Found"),
    ],
)
def test_10_a_vllm_200_error_body_keeps_its_message(stub, body, message):
    stub.default = reply(body=json.dumps(body))
    gen = _generate(stub, [])
    assert gen.failure.value == "transport_error" and message in gen.error, gen.error


PAGE = "<html><head><title>{title}</title><style>body {{ color: red }}</style></head><body>{body}</body></html>"


@pytest.mark.parametrize(
    "status, page, said",
    [
        (
            503,
            PAGE.format(title="503 Service Temporarily Unavailable", body="<h1>x</h1>" + "<p>y</p>" * 500),
            "503 Service Temporarily Unavailable",
        ),
        (
            502,
            "<html><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center>"
            + " " * 5000
            + "</body></html>",
            "502 Bad Gateway",
        ),
    ],
)
def test_10_an_html_error_page_is_named_by_its_title(stub, status, page, said):
    stub.default = reply(status=status, body=page, content_type="text/html")
    gen = _generate(stub, [], transport_retries=0)
    assert gen.failure.value == "transport_error" and f"HTTP {status}" in gen.error and said in gen.error, gen.error
    assert "<p>" not in gen.error and "<center>" not in gen.error and len(gen.error) < 300


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_10_a_connection_reset_is_named(stub, transport):
    stub.default = reply(reset=True)
    gen = _generate(stub, [], transport_retries=0, transport=transport)
    assert gen.failure.value == "transport_error" and "reset" in gen.error and "timed out" not in gen.error, gen.error


def _in_ten_minutes() -> str:
    import email.utils

    return email.utils.formatdate(time.time() + 600, usegmt=True)


@pytest.mark.parametrize(
    "headers, wait",
    [
        ({"Retry-After": "300"}, "300 s"),
        ({"Retry-After": "date"}, " s (Retry-After)"),
        ({"retry-after-ms": "400000"}, "400 s"),
    ],
)
def test_10_a_retry_after_beyond_the_cap_fails_at_once_naming_the_wait(stub, headers, wait):
    headers = {k: (_in_ten_minutes() if v == "date" else v) for k, v in headers.items()}
    stub.default = reply(status=429, headers=headers)
    started = time.monotonic()
    gen = _generate(stub, [])
    assert gen.failure.value == "transport_error" and "HTTP 429" in gen.error and wait in gen.error, gen.error
    assert "run the same command again later" in gen.error and len(stub.requests) == 1
    assert time.monotonic() - started < 60  # no wait of 300 s


@pytest.mark.parametrize("headers", [{"Retry-After": "1"}, {"retry-after-ms": "1000"}])
def test_10_a_retry_after_within_the_cap_is_honored_and_told(stub, headers):
    with pytest.warns(RuntimeWarning, match="waiting 1 s, as its Retry-After asks"):
        gen = _generate(stub, [reply(status=429, headers=headers), reply()])
    assert gen.failure is None and gen.record["method_name"] == "StubNet" and len(stub.requests) == 2


RANGES = [
    ("from 28% to 33%", 28, 33, "number_text"),
    ("from 28 to 33 %", 28, 33, "number_text"),
    ("between 28% and 33%", 28, 33, "number_text"),
    ("28% to 33%", 28, 33, "number_text"),
    ("56.6 ± 0.3", 56.6, None, "uncertainty"),
    ("56.6 +/- 0.3%", 56.6, None, "uncertainty"),
    ("56.6 (±0.3)", 56.6, None, "uncertainty"),
    ("56.6±0.3 %", 56.6, None, "uncertainty"),
    ("56.6 \\pm 0.3", 56.6, None, "uncertainty"),
]


@pytest.mark.parametrize("written, low, high, repair", RANGES, ids=[r[0] for r in RANGES])
def test_10_ranges_and_uncertainties_are_read(stub, written, low, high, repair):
    results = [{"metric": "accuracy", "value": written, "unit": "percent", "kind": "absolute"}]
    gen = _generate(stub, [reply(json.dumps({"method_name": "X", "results": results}, ensure_ascii=False))] * 2)
    assert gen.failure is None, gen.error
    (result,) = gen.record["results"]
    assert result["value"] == pytest.approx(low) and result["value_upper"] == high and repair in gen.repairs
    assert len(stub.requests) == 1


# 11. The response cache on a full disk, as a read-only file or on a read-only mount: the run goes on without
# storing answers, one warning naming the file; a healthy cache is never moved aside.


def _as_root_with_mounts(script: str, env: dict) -> subprocess.CompletedProcess:
    """``script`` (sh) in a mount namespace of its own, where it may mount tmpfs and remount read-only."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare to mount")
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", "set -e\n" + script],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=ROOT,
    )
    if "mount:" in done.stderr and "exit=" not in done.stdout:
        pytest.skip(f"cannot mount here: {done.stderr.strip()}")
    return done


def _run_command(stub, runs: Path, run_id: str, limit: int, *more: str) -> str:
    return (
        f"{sys.executable} -m paperfields.cli run -b openai/m --base-url {stub.url} --runs-dir {runs} "
        f"--run-id {run_id} --limit {limit} --no-score {' '.join(more)}"
    )


def _checkpoint(cache: Path) -> str:
    """sh that folds the cache's WAL into its file, so the file alone holds every answer."""
    code = (
        f"import sqlite3; db = sqlite3.connect({str(cache)!r}); "
        "db.execute('PRAGMA wal_checkpoint(TRUNCATE)'); db.close()"
    )
    return f'{sys.executable} -c "{code}"\nrm -f {cache}-wal {cache}-shm'


@pytest.mark.parametrize("how", ["full disk", "read-only file", "read-only mount"])
def test_11_a_cache_that_cannot_be_written_never_stops_a_run(stub, tmp_path, how):
    disk = tmp_path / "disk"
    disk.mkdir()
    cache = (disk if how != "read-only file" else tmp_path) / "responses.sqlite"
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(cache))
    stub.default = reply(VALID + " " * 40_000)  # rows of 40 kB: the next one cannot fit on the full disk
    runs = tmp_path / "runs"
    fault = {
        "full disk": f"dd if=/dev/zero of={disk}/fill bs=4k 2>/dev/null || true",
        "read-only file": f"mount --bind {cache} {cache}\nmount -o remount,ro,bind {cache} {cache}",
        "read-only mount": f"mount -o remount,ro {disk}",
    }[how]
    script = f"""mount -t tmpfs -o size=512k tmpfs {disk}
{_run_command(stub, runs, "a", 1)}
{_checkpoint(cache)}
{fault}
set +e
{_run_command(stub, runs, "b", 4)}
echo "exit=$?"
ls -a {cache.parent}
"""
    done = _as_root_with_mounts(script, env)
    assert "exit=0" in done.stdout, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "OperationalError" not in done.stderr, done.stderr
    stderr = done.stderr.replace("\n", "")
    assert done.stderr.count("response cache") == 1 and str(cache) in stderr, done.stderr  # one warning naming it
    assert ".corrupt-" not in done.stdout and "is damaged" not in done.stderr  # never moved aside
    lines = read_predictions(runs / "b" / "predictions.jsonl")
    assert len(lines) == 4 and all(line.failure is None for line in lines)
    if how != "full disk":
        assert lines[0].cached  # a healthy read-only cache is still read


# 12. A complete run on a read-only runs folder can be checked again (no .lock written for it).


def test_12_a_complete_run_on_a_read_only_folder(stub, tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite"))
    runs = disk / "runs"
    script = f"""mount -t tmpfs -o size=4m tmpfs {disk}
{_run_command(stub, runs, "r", 2)}
mount -o remount,ro {disk}
set +e
{_run_command(stub, runs, "r", 2)}
echo "exit=$?"
{_run_command(stub, runs, "r", 3)}
echo "more=$?"
"""
    done = _as_root_with_mounts(script, env)
    assert "exit=0" in done.stdout, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and ".lock" not in done.stderr, done.stderr
    asked = len(stub.requests)
    assert asked == 2  # nothing asked again
    # a run that has work left cannot go on there: a clear error naming the folder, no traceback
    assert "more=2" in done.stdout and str(runs / "r") in done.stderr.replace("\n", "") and "read-only" in done.stderr


def test_3_a_plain_reply_that_mentions_data_is_not_taken_for_sse(stub):
    record = dict(RECORD, method_name="data: StubNet", tasks=["x\ndata: [DONE]"])
    gen = _generate(stub, [reply(json.dumps(record))])
    assert gen.failure is None and gen.record["method_name"] == "data: StubNet" and "sse" not in gen.repairs
