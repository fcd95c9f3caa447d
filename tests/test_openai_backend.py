"""The openai/ backend through the real openai client and instructor, over HTTP, against a scripted
local OpenAI-compatible server: each kind of bad reply ends in the right record or failure class."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from paperfields.core.runlog import GenerationParams
from paperfields.extract.backends import GenerationRequest, get_backend
from paperfields.extract.call import Model
from tests.cli_in_process import run_cli
from tests.openai_stub import VALID, StubServer, reply

MESSAGES = [{"role": "system", "content": "Extract."}, {"role": "user", "content": "Abstract: We propose StubNet."}]


def _generate(stub, script, **options):
    stub.script[:] = script
    backend = get_backend("openai/stub-model", base_url=stub.url, **options)
    # through the call wrapper, as the runner calls a backend: timing and key masking are its own
    return asyncio.run(
        Model(backend, {}).generate(GenerationRequest(messages=MESSAGES, params=GenerationParams(max_tokens=256)))
    )


CASES = [
    ("valid", [reply()], None, 1, "StubNet"),
    ("fenced", [reply("```json\n" + VALID + "\n```")], None, 1, "StubNet"),
    ("think block", [reply("<think>looking</think>" + VALID)], None, 1, "StubNet"),
    ("raw newline in a string", [reply('{"method_name": "Stub\nNet", "research_area": "other"}')], None, 1, "Stub Net"),
    (
        "LaTeX under-escaped",
        [reply('{"method_name": "$10\\times$ Net", "research_area": "other"}')],
        None,
        1,
        "$10\\times$ Net",
    ),
    ("extra keys", [reply('{"method_name": "StubNet", "colour": "blue"}')], None, 1, "StubNet"),
    ("malformed JSON", [reply('{"method_name": "Stub')] * 2, "malformed_json", 2, None),
    ("wrong types", [reply('{"tasks": 3, "research_area": 7}')] * 2, "schema_invalid", 2, None),
    ("refusal", [reply("I'm sorry, but I can't help with that.")] * 2, "refusal", 2, None),
    ("empty content", [reply("")] * 2, "empty_reply", 2, None),
    ("null content", [reply(None)] * 2, "empty_reply", 2, None),  # a real chat completion: the model said nothing
    ("truncated", [reply('{"method_name": "StubNet", "tasks": ["a', finish_reason="length")], "truncated", 1, None),
]


@pytest.mark.parametrize("name, script, failure, attempts, method_name", CASES, ids=[c[0] for c in CASES])
def test_reply_kinds(stub, name, script, failure, attempts, method_name):
    gen = _generate(stub, script)
    assert (gen.failure.value if gen.failure else None) == failure, (gen.error, gen.raw_text)
    if attempts is not None:
        assert gen.attempts == attempts
        assert len(stub.requests) == attempts  # a truncated reply is never re-asked
        assert gen.usage.input_tokens == 100 * attempts and gen.usage.output_tokens == 20 * attempts
    if method_name is not None:
        assert gen.record["method_name"] == method_name
    else:
        assert gen.record is None and gen.raw_text is not None or failure == "empty_reply"
    assert gen.transport_retries == 0


MODES = ["md_json", "json", "json_schema", "tools"]
CONRAD = (
    '{"method_name": "ConRAD", "tasks": ["fault localization"]}\n\nNote: a '
    "field with nothing to report is left empty, e.g. {}."
)
LATEX = "$\\tanh$ \\tfrac \\rangle \\binom \\bm \\ne \\frac \\times"


def _results(*results):
    return json.dumps(
        {"method_name": "X", "results": [{"metric": "m", "unit": "count", "kind": "absolute", **r} for r in results]},
        ensure_ascii=False,
    )


# Issue 14, items 1 to 6: the same reply gets the same stored outcome in every mode, with no re-ask for
# what can be repaired; (name, reply, failure, HTTP requests, stored fields, repairs).
EVERY_MODE = [
    ("1 a note with {} after the record", CONRAD, "malformed_json", 2, None, None),
    ("1 a fenced {} after the record", '{"method_name": "ConRAD"}\n```json\n{}\n```', "malformed_json", 2, None, None),
    (
        "1 prose without an object after it",
        '{"method_name": "ConRAD"}\n\nNote: O(n) is {linear}.',
        None,
        1,
        {"method_name": "ConRAD"},
        ["prose"],
    ),
    (
        "1 LaTeX braces in a metric",
        '{"method_name": "X", "results": [{"metric": "see \\url{x}", '
        '"value": 3, "unit": "count", "kind": "absolute"}]}',
        None,
        1,
        {"results.0.metric": "see \\url{x}"},
        ["escapes"],
    ),
    ("2 NaN", _results({"value": 1}).replace("1}", "NaN}"), None, 1, {"results": []}, ["result_dropped"]),
    ("2 Infinity", _results({"value": 1}).replace("1}", "Infinity}"), None, 1, {"results": []}, ["result_dropped"]),
    ("2 -Infinity", _results({"value": 1}).replace("1}", "-Infinity}"), None, 1, {"results": []}, ["result_dropped"]),
    ("2 1e999", _results({"value": 1}).replace("1}", "1e999}"), None, 1, {"results": []}, ["result_dropped"]),
    (
        "3 LaTeX commands",
        json.dumps({"method_name": LATEX}).replace("\\\\", "\\"),
        None,
        1,
        {"method_name": LATEX},
        ["escapes"],
    ),
    (
        "3 \\url is text",
        '{"code_url": "\\url{https://github.com/a/b}"}',
        None,
        1,
        {"code_url": "\\url{https://github.com/a/b}"},
        ["escapes"],
    ),
    (
        "3 \\n before a space is a line break, stored as a space",
        '{"method_name": "Stub\\n Net"}',
        None,
        1,
        {"method_name": "Stub Net"},
        ["control_chars"],
    ),
    (
        "4 numbers as text",
        _results(
            {"value": "1e-4"},
            {"value": "3.2e5"},
            {"value": "5_000"},
            {"value": "\u221212.5"},
            {"value": "56.61%", "unit": "percent"},
            {"value": "35,368"},
            {"value": "1.37x", "unit": "times"},
            {"value": "12.5 to 13"},
        ),
        None,
        1,
        {
            "results.0.value": 0.0001,
            "results.1.value": 320000.0,
            "results.2.value": 5000.0,
            "results.3.value": -12.5,
            "results.4.value": 56.61,
            "results.5.value": 35368.0,
            "results.6.value": 1.37,
            "results.7.value": 12.5,
            "results.7.value_upper": 13.0,
        },
        ["number_text"],
    ),
    (
        "4 a number not fully read",
        _results({"value": "12.5 or 13"}, {"value": 7}),
        None,
        1,
        {"results.0.value": 7},
        ["result_dropped"],
    ),
    (
        "5 placeholders",
        json.dumps(
            {
                "method_name": "N/A",
                "method_full_name": "null",
                "code_url": "None",
                "training_free": "N/A",
                "tasks": ["", "-", "unknown", "fault localization"],
                "datasets": ["n/a"],
            }
        ),
        None,
        1,
        {
            "method_name": None,
            "method_full_name": None,
            "code_url": None,
            "training_free": None,
            "tasks": ["fault localization"],
            "datasets": [],
        },
        ["placeholders"],
    ),
    (
        "5 casing and unit signs",
        _results({"value": 5, "unit": "%", "dataset": "N/A", "model": "none", "baseline": "-"}).replace(
            '"method_name"', '"research_area": "Alignment_Safety", "training_free": "yes", "method_name"'
        ),
        None,
        1,
        {
            "research_area": "alignment_safety",
            "training_free": True,
            "results.0.unit": "percent",
            "results.0.dataset": None,
            "results.0.model": None,
            "results.0.baseline": None,
        },
        ["enum_spelling", "bool_text", "unit_sign", "placeholders"],
    ),
    ("6 fenced", "```json\n" + VALID + "\n```", None, 1, {"method_name": "StubNet"}, ["fenced"]),
    (
        "6 raw newline in a string",
        '{"method_name": "Stub\nNet"}',
        None,
        1,
        {"method_name": "Stub Net"},
        ["raw_control", "control_chars"],
    ),
]


def _stored(record, path):
    value = record
    for part in path.split("."):
        value = value[int(part)] if part.isdigit() else value[part]
    return value


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, text, failure, requests, stored, repairs", EVERY_MODE, ids=[c[0] for c in EVERY_MODE])
def test_every_mode_stores_the_same_outcome(stub, mode, name, text, failure, requests, stored, repairs):
    gen = _generate(stub, [reply(text)] * 2, mode=mode)
    assert (gen.failure.value if gen.failure else None) == failure, (gen.error, gen.record)
    assert len(stub.requests) == requests and gen.attempts == requests
    if mode == "tools":  # the stub answered with a call of the forced tool, as servers that honor tool_choice do
        assert stub.requests[0]["body"]["tool_choice"]["type"] == "function"
    if failure is None:
        assert {path: _stored(gen.record, path) for path in stored} == stored
        assert sorted(gen.repairs) == sorted(repairs)
    else:
        assert gen.record is None
        # The re-ask told the model what our parser found in its reply, and nothing else about it.
        reask = stub.requests[1]["body"]["messages"][-1]["content"]
        assert gen.error in reask and "input_type" not in reask and "mode:" not in reask, reask


@pytest.mark.parametrize("mode", MODES)
def test_a_reask_states_what_was_wrong_and_its_answer_is_kept(stub, mode):
    gen = _generate(stub, [reply('{"method_name": "StubNet", "tasks": 3}'), reply()], mode=mode)
    assert gen.failure is None and gen.record["method_name"] == "StubNet" and gen.record["datasets"] == ["GSM8K"]
    assert gen.attempts == 2 and len(stub.requests) == 2
    reask = stub.requests[1]["body"]["messages"][-1]["content"]
    assert "field 'tasks': Input should be a valid list (1 error(s))" in reask, reask
    assert "input_type" not in reask


@pytest.mark.parametrize("mode", MODES)
def test_each_reply_is_parsed_once(stub, mode, monkeypatch):
    # The parse instructor's attempt passed is the Generation's own, not redone once instructor returns.
    from paperfields.extract.backends import openai_compat

    parsed, parse = [], openai_compat.parse_reply
    monkeypatch.setattr(openai_compat, "parse_reply", lambda *args: parsed.append(args[0]) or parse(*args))
    gen = _generate(
        stub, [reply('{"method_name": "StubNet", "tasks": 3}'), reply("```json\n" + VALID + "\n```")], mode=mode
    )
    assert (
        gen.failure is None
        and gen.record["method_name"] == "StubNet"
        and gen.repairs == ["fenced"]
        and gen.attempts == 2
    )
    assert len(parsed) == 2 and parsed[1].startswith("```json")


def test_tools_mode_with_a_server_that_ignores_tools_reads_the_content(stub):
    # The reply never reaches our parser until instructor has asked once for the tool call (a true
    # request); the content is then read like in every other mode, and the deviation recorded.
    gen = _generate(stub, [reply("```json\n" + VALID + "\n```", tool_call=False)] * 2, mode="tools")
    assert gen.failure is None and gen.record["method_name"] == "StubNet"
    assert gen.repairs == ["fenced", "no_tool_call"] and len(stub.requests) == 2
    assert "No tool calls" in stub.requests[1]["body"]["messages"][-1]["content"]


def test_tools_mode_reads_the_call_not_the_talk_beside_it(stub):
    stub.script[:] = [reply(VALID, tool_call=True)]
    gen = _generate(stub, [reply(VALID, tool_call=True)], mode="tools")
    assert gen.failure is None and gen.record["method_name"] == "StubNet" and gen.repairs == []


def test_the_reply_parser_is_used_only_inside_generate(stub):
    from paperfields.core.schema import PaperRecord
    from paperfields.extract.backends.openai_compat import _instructor_model

    async def generate_then_validate():
        backend = get_backend("openai/stub-model", base_url=stub.url)
        gen = await backend.generate(GenerationRequest(messages=MESSAGES))
        return gen, _instructor_model(PaperRecord).model_validate_json('{"method_name": "Plain"}')

    gen, plain = asyncio.run(generate_then_validate())
    assert gen.record["method_name"] == "StubNet" and plain.method_name == "Plain"


def test_a_cut_off_reply_with_a_lone_surrogate_is_a_storable_failure(stub):
    gen = _generate(stub, [reply('{"method_name": "A\ud800', finish_reason="length")])
    assert gen.failure.value == "truncated" and gen.raw_text == '{"method_name": "A\ufffd'
    gen.model_dump_json()  # what the runner writes


def test_no_reply_writes_a_line_the_readers_refuse(stub, tmp_path):
    """NaN, Infinity and a lone surrogate escape used to be written as lines that `score`, `show` and a
    rerun refuse (issue 14, item 2): now each is a readable line, scored, and final on a rerun."""
    from paperfields.core.runlog import read_predictions

    nan = _results({"value": 1}).replace("1}", "NaN}")
    # The lone surrogate travels as the escape "\ud800" in the HTTP body's JSON, and the client decodes it.
    stub.script[:] = [reply(nan), reply('{"method_name": "A\ud800B"}'), reply(nan.replace("NaN", "Infinity"))] * 2
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite"))
    cmd = [
        "run",
        "-b",
        "openai/m",
        "--base-url",
        stub.url,
        "--limit",
        "3",
        "--concurrency",
        "1",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--run-id",
        "r",
    ]
    first = run_cli(*cmd, env=env)
    assert first.returncode == 0, first.stderr
    lines = read_predictions(tmp_path / "runs" / "r" / "predictions.jsonl")
    # a non-finite value costs its result item (issue 24, item 1), not the record
    assert [line.failure.value if line.failure else None for line in lines] == [None, None, None]
    assert (
        lines[0].record["results"] == []
        and lines[0].repairs == ["result_dropped"]
        and lines[2].repairs == ["result_dropped"]
    )
    assert lines[1].record["method_name"] == "A\ufffdB" and lines[1].repairs == ["surrogates"]
    assert (tmp_path / "runs" / "r" / "scores.json").is_file()
    asked = len(stub.requests)
    assert asked == 3
    again = run_cli(*cmd, env=env)
    assert again.returncode == 0, again.stderr
    assert len(stub.requests) == asked  # final answers: nothing asked again


NOT_A_CHAT_COMPLETION = [
    ("html page, text/html", reply(body="<html>502 Bad Gateway</html>", content_type="text/html"), "502 Bad Gateway"),
    ("html page, labelled JSON", reply(body="<html>502 Bad Gateway</html>"), "not valid JSON"),
    (
        "no choices",
        reply(body=json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []})),
        "no choices",
    ),
    # a FastAPI server's error object: its message is kept (issue 34 item 10)
    ("another JSON object", reply(body=json.dumps({"detail": "upstream unavailable"})), "upstream unavailable"),
    ("an object of no kind", reply(body=json.dumps({"status": "ok"})), "no choices"),
    ("JSON null", reply(body="null"), "no usable body"),
    ("empty body", reply(body="", content_type="text/plain"), "an empty body"),
]


@pytest.mark.parametrize("name, spec, detail", NOT_A_CHAT_COMPLETION, ids=[c[0] for c in NOT_A_CHAT_COMPLETION])
def test_a_200_that_is_not_a_chat_completion_is_a_transport_error(stub, name, spec, detail):
    stub.default = spec  # instructor may re-ask: every answer is the same non-completion
    gen = _generate(stub, [])
    assert gen.failure is not None and gen.failure.value == "transport_error", (gen.failure, gen.error)
    assert "the server's reply was not a chat completion" in gen.error and detail in gen.error
    assert f"server {stub.url}" in gen.error
    assert gen.record is None


def test_429_with_retry_after_is_retried_by_the_sdk(stub):
    gen = _generate(stub, [reply(status=429, headers={"Retry-After": "1"}), reply()])
    assert gen.failure is None and gen.record["method_name"] == "StubNet"
    assert gen.attempts == 1 and gen.transport_retries == 1 and len(stub.requests) == 2
    assert gen.latency_s >= 0.9  # honored Retry-After: 1


def test_500_then_success(stub):
    gen = _generate(stub, [reply(status=500), reply()])
    assert gen.failure is None and gen.transport_retries == 1 and len(stub.requests) == 2


def test_timeout_becomes_transport_error_after_retries(stub):
    gen = _generate(stub, [reply(delay=1.5), reply(delay=1.5)], timeout_s=0.3, transport_retries=1)
    assert gen.failure.value == "transport_error" and "Timeout" in gen.error
    assert len(stub.requests) == 2


def test_grammar_sends_the_schema_in_response_format(stub):
    _generate(stub, [reply()], grammar=True)
    rf = stub.requests[0]["body"]["response_format"]
    assert rf["type"] == "json_object" and set(rf["schema"]["required"]) >= {"method_name", "results"}


def _run(stub, tmp_path, model, run_id, env):
    cmd = [
        "run",
        "-b",
        f"openai/{model}",
        "--base-url",
        stub.url,
        "--limit",
        "3",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--run-id",
        run_id,
    ]
    proc = run_cli(*cmd, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_cache_and_api_key_never_written(stub, tmp_path):
    key = "sk-plant-7d3f9c0e1b2a4c5d6e7f8091a2b3c4d5"
    env = dict(os.environ, OPENAI_API_KEY=key, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache" / "responses.sqlite"))
    _run(stub, tmp_path, "stub-model", "first", env)
    assert len(stub.requests) == 3
    headers = {k.lower(): v for k, v in stub.requests[0]["headers"].items()}
    assert headers["authorization"] == f"Bearer {key}"  # the key was really used
    # Same config in a new run folder: answered from the cache, zero HTTP requests.
    _run(stub, tmp_path, "stub-model", "second", env)
    assert len(stub.requests) == 3
    manifest = json.loads((tmp_path / "runs" / "second" / "manifest.json").read_text())
    assert manifest["model_requests"] == 0 and manifest["cache_hits"] == 3
    # Another model never shares an entry.
    _run(stub, tmp_path, "other-model", "third", env)
    assert len(stub.requests) == 6
    # The server rejects the key and echoes it (as OpenAI's 401 does): the error is kept, the key is not.
    stub.default = reply(
        status=401,
        body=json.dumps({"error": {"message": f"Incorrect API key provided: {key}", "code": "invalid_api_key"}}),
    )
    cmd = [
        "run",
        "-b",
        "openai/rejected",
        "--base-url",
        stub.url,
        "--limit",
        "3",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--run-id",
        "fourth",
    ]
    proc = run_cli(*cmd, env=env)
    assert proc.returncode == 1 and key not in proc.stdout + proc.stderr
    lines = [json.loads(line) for line in (tmp_path / "runs" / "fourth" / "predictions.jsonl").read_text().splitlines()]
    assert [line["failure"] for line in lines] == ["transport_error"] * 3
    assert "Incorrect API key provided: sk-***" in lines[0]["error"]
    # A model reply quoting the key is cached (a refusal), with the key masked in its raw text.
    stub.default = reply(f"I'm sorry, I cannot use {key} here.")
    _run(stub, tmp_path, "quoting-model", "fifth", env)
    lines = [json.loads(line) for line in (tmp_path / "runs" / "fifth" / "predictions.jsonl").read_text().splitlines()]
    assert lines[0]["failure"] == "refusal" and lines[0]["raw_text"] == "I'm sorry, I cannot use sk-*** here."
    # A valid record whose fields carry the key: masked in the record too (it is cached and scored).
    stub.default = reply(json.dumps({"method_name": key, "tasks": ["sk-otherSECRET99999", "summarization"]}))
    _run(stub, tmp_path, "echoing-model", "sixth", env)
    lines = [json.loads(line) for line in (tmp_path / "runs" / "sixth" / "predictions.jsonl").read_text().splitlines()]
    assert lines[0]["failure"] is None and lines[0]["record"]["method_name"] == "sk-***"
    assert lines[0]["record"]["tasks"] == ["sk-***", "summarization"]
    # An HTML page with status 200 whose key sits across the 120-character cut of the error text.
    stub.default = reply(
        body="<html>" + "x" * 105 + f" {key} </html>", content_type="text/html"
    )  # a cut at 120 keeps "sk-plant"
    cmd = [
        "run",
        "-b",
        "openai/html",
        "--base-url",
        stub.url,
        "--limit",
        "1",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--run-id",
        "seventh",
    ]
    run_cli(*cmd, env=env)
    error = json.loads((tmp_path / "runs" / "seventh" / "predictions.jsonl").read_text().splitlines()[0])["error"]
    assert "not a chat completion" in error and "sk-plant" not in error and "sk-***" in error
    # The planted key appears in no file the runs wrote (predictions, manifests, scores, cache).
    assert list((tmp_path / "cache").glob("responses.sqlite*"))
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
            assert b"sk-plant" not in path.read_bytes(), path


@pytest.mark.parametrize("padding", range(200, 300, 9))
def test_an_echoed_key_is_masked_even_where_the_error_is_cut(stub, monkeypatch, padding):
    key = "vllm-Q7xZ3k9LmP2wR8tY"  # a local server's --api-key: not shaped like sk-, masked because it is ours
    other = "sk-proj-Zz81Yy72Xx63Ww54"  # someone else's key in the same body: masked by its shape
    monkeypatch.setenv("OPENAI_API_KEY", key)
    message = f"{other} " + "." * padding + f" Incorrect API key provided: {key}"
    gen = _generate(stub, [reply(status=401, body=json.dumps({"error": {"message": message}}))])
    assert gen.failure.value == "transport_error" and "401" in gen.error and f"server {stub.url}" in gen.error
    assert "sk-***" in gen.error
    for secret in (key, other):
        assert not any(secret[i : i + 6] in gen.error for i in range(len(secret) - 5)), gen.error


def test_redact_secrets():
    from paperfields.core.runlog import redact_secrets

    assert (
        redact_secrets("key sk-abc12345XYZ_-9 and sk-ant-api03-AbCdEf12, not sk-short", "")
        == "key sk-*** and sk-***, not sk-short"
    )
    assert redact_secrets("my-local-token-1 in the body", "my-local-token-1") == "sk-*** in the body"
    assert redact_secrets("no-key and nokey", "no-key") == "no-key and nokey"  # too short to be a secret: left alone
    assert redact_secrets(None, "anything-long") is None
    # "sk-" inside a word is text a record may hold (a local run's metric 'task-relevant signal per token' was
    # written 'task-*** signal per token'): only a token that starts with sk- is key-shaped
    for text in (
        "task-relevant signal per token",
        "risk-sensitive planning",
        "disk-based KV offloading",
        "Whisk-12345678",
    ):
        assert redact_secrets(text, "") == text
    assert redact_secrets('{"api_key": "sk-proj-abcdefgh123"} (sk-abcdefgh123)', "") == '{"api_key": "sk-***"} (sk-***)'


def test_a_200_that_is_not_a_chat_completion_is_not_cached_and_asked_again(stub, tmp_path):
    cache = tmp_path / "cache.sqlite"
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(cache))
    runs = tmp_path / "runs"
    cmd = ["run", "-b", "openai/m", "--base-url", stub.url, "--limit", "2", "--runs-dir", str(runs), "--run-id"]
    stub.default = reply(body="<html>502 Bad Gateway</html>", content_type="text/html")
    proc = run_cli(*cmd, "r", env=env)
    assert proc.returncode == 1, proc.stderr
    manifest = json.loads((runs / "r" / "manifest.json").read_text())
    assert manifest["failures_by_class"] == {"transport_error": 2}
    line = json.loads((runs / "r" / "predictions.jsonl").read_text().splitlines()[0])
    assert "not a chat completion" in line["error"] and stub.url in line["error"]
    from paperfields.extract.cache import ResponseCache

    assert len(ResponseCache(cache)) == 0
    # The server is fixed: a rerun of the same folder asks again, and a new folder is answered from the cache.
    stub.default = reply()
    asked = len(stub.requests)
    again = run_cli(*cmd, "r", env=env)
    assert again.returncode == 0, again.stderr
    assert len(stub.requests) == asked + 2
    assert json.loads((runs / "r" / "manifest.json").read_text())["papers_valid"] == 2
    fresh = run_cli(*cmd, "r2", env=env)
    assert fresh.returncode == 0, fresh.stderr
    assert len(stub.requests) == asked + 2
    assert json.loads((runs / "r2" / "manifest.json").read_text())["cache_hits"] == 2


def test_a_server_that_never_answers_fails_the_run_naming_it(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    runs = tmp_path / "runs"
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite"))
    base = ["run", "-b", "openai/m", "--limit", "2", "--runs-dir", str(runs), "--run-id", "r"]
    proc = run_cli(*base, "--base-url", dead, env=env)
    assert proc.returncode == 1
    assert "no paper got an answer from openai/m" in proc.stderr and dead in proc.stderr
    assert "API call failed" not in proc.stderr  # instructor's per-attempt log lines stay out of the terminal
    manifest = json.loads((runs / "r" / "manifest.json").read_text())
    assert manifest["status"] == "incomplete" and manifest["failures_by_class"] == {"transport_error": 2}
    assert not (runs / "r" / "scores.json").exists()
    bad = run_cli(*base, "--base-url", "not-a-url", env=env)
    assert bad.returncode == 2 and "is not an http(s) URL" in bad.stderr
    with StubServer() as server:  # a working server under a new run id (the base URL is part of the run config)
        again = run_cli(*base[:-1], "r2", "--base-url", server.url, env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads((runs / "r2" / "manifest.json").read_text())["papers_valid"] == 2


# --- instructor's "Max retries exceeded" line and the Python API (issue 28, item 9b) ------------------------------

BROKEN = reply('{"method_name": "Stub')  # malformed JSON on every attempt: instructor's re-asks are exhausted

# A user's script with no logging set up: Python's last-resort handler would print instructor's ERROR
# record on stderr. It logs a line of its own through instructor's logger after the calls, which must
# still show: the API silences only instructor's records about our own calls.
_USER_SCRIPT = """
import logging, sys
import paperfields as pf
url, runs = sys.argv[1], sys.argv[2]
failure = pf.extract_record("We propose StubNet, reaching 41.5% on GSM8K.", backend="openai/stub-model", base_url=url, \
cache=False)
print("extract_record:", failure.failure)
result = pf.run(["We propose StubNet, reaching 41.5% on GSM8K."], backend="openai/stub-model", base_url=url, \
split="all",
                runs_dir=runs, cache=False)
print("run:", result.manifest.failures_by_class)
print("instructor level:", logging.getLogger("instructor").level, "root handlers:", logging.getLogger().handlers)
logging.getLogger("instructor.v2.retry").error("the user's own instructor line")
"""


def test_the_python_api_prints_no_instructor_log_line_for_exhausted_reasks(tmp_path):
    with StubServer(default=BROKEN) as server:
        proc = subprocess.run(
            [sys.executable, "-c", _USER_SCRIPT, server.url, str(tmp_path / "runs")],
            capture_output=True,
            text=True,
            env=dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite")),
            timeout=300,
        )
        asked = len(server.requests)
    assert proc.returncode == 0, proc.stderr
    assert "extract_record: malformed_json" in proc.stdout and "run: {'malformed_json': 1}" in proc.stdout
    assert asked == 4  # two attempts (one re-ask) for each call: the re-asks were exhausted twice
    assert "Max retries exceeded" not in proc.stderr, proc.stderr
    # the user's logging configuration is as Python left it, and instructor's logger still speaks outside our calls
    assert "instructor level: 0 root handlers: []" in proc.stdout
    assert proc.stderr.strip() == "the user's own instructor line", proc.stderr


def test_instructor_records_of_our_calls_are_dropped_and_others_kept_in_process(caplog, capsys):
    import logging

    import paperfields as pf

    instructor_logger = logging.getLogger("instructor")
    cli_level = instructor_logger.level  # the CLI, when a test imported it, sets it for its own process: not here
    instructor_logger.setLevel(logging.NOTSET)
    try:
        with StubServer(default=BROKEN) as server, caplog.at_level(logging.DEBUG, logger="instructor"):
            failure = pf.extract_record(
                "We propose StubNet, reaching 41.5% on GSM8K.",
                backend="openai/stub-model",
                base_url=server.url,
                cache=False,
            )
            assert failure.failure == "malformed_json" and len(server.requests) == 2
            logging.getLogger("instructor.v2.retry").error("outside our calls")
    finally:
        instructor_logger.setLevel(cli_level)
    messages = [(r.name, r.levelname, r.getMessage()) for r in caplog.records if r.name.startswith("instructor")]
    assert [m for m in messages if m[1] in ("WARNING", "ERROR")] == [
        ("instructor.v2.retry", "ERROR", "outside our calls")
    ], messages
    assert any(level == "DEBUG" for _, level, _ in messages)  # what a user asks for by level still reaches them
    assert "Max retries exceeded" not in capsys.readouterr().err
