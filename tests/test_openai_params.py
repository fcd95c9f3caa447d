"""What the openai/ backend sends, through the real openai client and instructor over HTTP, against
a scripted server that refuses what OpenAI refuses (tests/openai_stub.py): reasoning models'
parameters, strict structured-output schemas in every mode, and requests that can never succeed
(``request_rejected``, ``context_overflow``) told apart from transport errors."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest
from pydantic import BaseModel

from paperfields.core.runlog import GenerationParams, RunConfig, load_manifest, read_predictions
from paperfields.core.schema import PaperRecord, all_required
from paperfields.extract.backends import GenerationRequest, get_backend
from paperfields.extract.backends.openai_compat import is_reasoning_model, rejected_class, strict_schema
from paperfields.extract.batch import build_requests, generation_from_output, run_batch
from paperfields.extract.call import Model
from paperfields.extract.strategies import EvidenceRecord, ReasoningRecord, Strategy
from tests.batch_stub import BatchStub
from tests.cli_in_process import run_cli
from tests.openai_stub import VALID, _refusal, openai_error, reply, strict_schema_error, with_reasoning

MESSAGES = [{"role": "system", "content": "Extract."}, {"role": "user", "content": "Abstract: We propose StubNet."}]
REASONING = ["o1", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5.1"]


def _generate(stub, model, params=None, response_model=PaperRecord, **options):
    backend = get_backend(f"openai/{model}", base_url=stub.url, **options)
    request = GenerationRequest(
        messages=MESSAGES, params=params or GenerationParams(max_tokens=256), response_model=response_model
    )
    return asyncio.run(Model(backend, {}).generate(request))  # as the runner calls a backend


def _raw(stub, **body):
    """One request straight through the openai SDK (no backend): what the server makes of it."""
    client = openai.OpenAI(api_key="no-key", base_url=stub.url, max_retries=0)
    return client.chat.completions.create(messages=MESSAGES, **body)


# --- 7. reasoning models ------------------------------------------------------------------------


@pytest.mark.parametrize("model", REASONING)
def test_the_server_refuses_max_tokens_and_temperature_for_a_reasoning_model(stub, model):
    """The scripted server behaves as OpenAI does, so the tests below prove the backend's fix."""
    with pytest.raises(openai.BadRequestError, match="'max_tokens' is not supported with this model"):
        _raw(stub, model=model, max_tokens=256)
    with pytest.raises(openai.BadRequestError, match="Only the default \\(1\\) value is supported"):
        _raw(stub, model=model, max_completion_tokens=256, temperature=0.0)
    with pytest.raises(openai.BadRequestError, match="reasoning_effort"):
        _raw(stub, model="gpt-4o-mini", max_tokens=256, reasoning_effort="low")
    assert _raw(stub, model=model, max_completion_tokens=256, temperature=1).choices[0].message.content


@pytest.mark.parametrize("model", REASONING)
def test_a_reasoning_model_gets_max_completion_tokens_and_no_temperature(stub, model):
    gen = _generate(stub, model)
    assert gen.failure is None and gen.record["method_name"] == "StubNet", gen.error
    body = stub.requests[0]["body"]
    assert body["max_completion_tokens"] == 256 and "max_tokens" not in body and "temperature" not in body
    assert body["seed"] == 0 and "reasoning_effort" not in body and len(stub.requests) == 1


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4.1", "gpt-5-chat-latest", "stub-model"])
def test_other_models_keep_max_tokens_and_temperature(stub, model):
    gen = _generate(stub, model, GenerationParams(temperature=0.3, max_tokens=256, seed=7))
    assert gen.failure is None, gen.error
    body = stub.requests[0]["body"]
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (
        0.3,
        256,
        7,
    ) and "max_completion_tokens" not in body


def test_reasoning_family_by_name():
    assert [
        m
        for m in ["o1", "o1-mini", "o3", "o3-pro", "o4-mini", "gpt-5", "gpt-5-nano", "gpt-5.1", "openai/o3-mini"]
        if not is_reasoning_model(m)
    ] == []
    assert [
        m
        for m in ["gpt-4o", "gpt-4.1-mini", "gpt-5-chat-latest", "gpt-50", "omni", "o", "qwen3-4b", "llama-o1"]
        if is_reasoning_model(m)
    ] == []


def test_reasoning_effort_is_sent_and_reasoning_tokens_are_counted(stub):
    stub.default = with_reasoning(reply(prompt_tokens=100, completion_tokens=500), 400)
    gen = _generate(stub, "o4-mini", GenerationParams(max_tokens=256, reasoning_effort="high"))
    assert gen.failure is None, gen.error
    assert stub.requests[0]["body"]["reasoning_effort"] == "high"
    # reasoning tokens are part of the completion tokens (billed as output), counted apart as well
    assert (gen.usage.input_tokens, gen.usage.output_tokens, gen.usage.reasoning_tokens) == (100, 500, 400)


def test_reasoning_effort_is_left_out_of_dumps_when_unset():
    """Configs and cache keys written before the field existed stay equal."""
    assert GenerationParams().model_dump() == {"temperature": 0.0, "max_tokens": 1536, "seed": 0}
    assert "reasoning_effort" not in GenerationParams().model_dump_json()
    assert GenerationParams(reasoning_effort="low").model_dump()["reasoning_effort"] == "low"
    with pytest.raises(ValueError):
        GenerationParams(reasoning_effort="extreme")


def _cli(tmp_path, *args):
    return run_cli("run", "--runs-dir", str(tmp_path / "runs"), "--limit", "2", "--no-score", "-q", *args)


def test_cli_reasoning_run_records_the_effort_tokens_and_dollars(stub, tmp_path):
    stub.default = with_reasoning(reply(prompt_tokens=1000, completion_tokens=500), 300)
    result = _cli(
        tmp_path, "-b", "openai/o4-mini", "--base-url", stub.url, "--reasoning-effort", "high", "--run-id", "r"
    )
    assert result.exit_code == 0, result.output
    manifest = load_manifest(tmp_path / "runs" / "r")
    assert manifest.papers_valid == 2 and manifest.config.params.reasoning_effort == "high"
    assert (manifest.usage.output_tokens, manifest.usage.reasoning_tokens) == (1000, 600)
    # o4-mini at 1.10 / 4.40 USD per million: reasoning tokens are billed inside the output tokens
    assert manifest.dollars_total == pytest.approx((2000 * 1.10 + 1000 * 4.40) / 1e6)
    assert all(r["body"]["reasoning_effort"] == "high" and "temperature" not in r["body"] for r in stub.requests)
    # Another effort is another run and another cache entry: asked again.
    again = _cli(
        tmp_path, "-b", "openai/o4-mini", "--base-url", stub.url, "--reasoning-effort", "low", "--run-id", "r2"
    )
    assert again.exit_code == 0, again.output
    assert len(stub.requests) == 4 and stub.requests[-1]["body"]["reasoning_effort"] == "low"


@pytest.mark.parametrize("backend", ["openai/gpt-4o-mini", "openai/gpt-5-chat-latest", "rules/empty", "fake/a"])
def test_cli_reasoning_effort_is_refused_for_a_model_that_does_not_reason(tmp_path, backend):
    result = _cli(
        tmp_path,
        "-b",
        backend,
        "--base-url" if backend.startswith("openai/") else "--limit",
        "http://127.0.0.1:9/v1" if backend.startswith("openai/") else "2",
        "--reasoning-effort",
        "high",
    )
    assert result.exit_code == 2
    assert "--reasoning-effort applies only to OpenAI reasoning models" in result.stderr and backend in result.stderr
    assert not (tmp_path / "runs").exists()


def test_cli_reasoning_effort_takes_low_medium_high_only(tmp_path):
    result = _cli(tmp_path, "-b", "openai/o3", "--base-url", "http://127.0.0.1:9/v1", "--reasoning-effort", "extreme")
    assert result.exit_code == 2 and "extreme" in result.output
    assert not (tmp_path / "runs").exists()


def _batch_config(url, model, **params):
    strategy = Strategy("zero_shot")
    return strategy, RunConfig(
        backend=f"openai/{model}",
        base_url=url,
        strategy=strategy.name,
        prompt_version=strategy.template.version,
        prompt_sha256=strategy.sha256,
        example_ids=strategy.example_ids(),
        split="test",
        batch=True,
        params=GenerationParams(**params),
    )


def test_batch_bodies_follow_the_same_rules(tmp_path, corpus, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "no-key")
    with BatchStub(polls_in_progress=0) as stub:
        stub.default = with_reasoning(reply(prompt_tokens=100, completion_tokens=50), 30)
        strategy, config = _batch_config(stub.url, "o4-mini", reasoning_effort="medium")
        body = build_requests(corpus[:1], strategy, config)[0]["body"]
        assert body["max_completion_tokens"] == 1536 and body["reasoning_effort"] == "medium"
        assert "max_tokens" not in body and "temperature" not in body
        client = get_backend("openai/o4-mini", base_url=stub.url).raw_client
        manifest = asyncio.run(
            run_batch(corpus[:2], strategy, config, tmp_path / "run", client, None, poll_interval_s=0.01)
        )
        assert manifest.papers_valid == 2 and manifest.usage.reasoning_tokens == 60
        # The batch server checks each line as OpenAI checks a request: the body --batch sent before is refused.
        old_body = {**body, "max_tokens": body.pop("max_completion_tokens"), "temperature": 0.0}
        assert _refusal(stub, old_body)["status"] == 400 and _refusal(stub, body) is None
    _, plain = _batch_config("http://x", "gpt-4o-mini")
    assert {"temperature", "max_tokens", "seed"} <= set(build_requests(corpus[:1], strategy, plain)[0]["body"])


# --- 8. strict structured outputs ---------------------------------------------------------------


def test_the_strict_server_refuses_the_schemas_sent_before(stub):
    """A loose schema (pydantic's own, or the openai SDK's conversion, which keeps non-null
    defaults) is refused by the strict server; all_required(strict=True) passes."""
    stub.strict_schemas = True
    loose = {"name": "PaperRecord", "schema": all_required(PaperRecord.model_json_schema())}
    with pytest.raises(openai.BadRequestError, match="additionalProperties"):
        _raw(stub, model="m", response_format={"type": "json_schema", "json_schema": loose})
    from openai.lib._pydantic import to_strict_json_schema

    sdk = {"name": "PaperRecord", "strict": True, "schema": to_strict_json_schema(PaperRecord)}
    with pytest.raises(openai.BadRequestError, match="'default' is not permitted"):
        _raw(stub, model="m", response_format={"type": "json_schema", "json_schema": sdk})
    with pytest.raises(openai.BadRequestError, match="Invalid schema for function"):
        _raw(
            stub,
            model="m",
            tools=[
                {"type": "function", "function": {"name": "PaperRecord", "parameters": PaperRecord.model_json_schema()}}
            ],
        )
    ours = {"name": "PaperRecord", "strict": True, "schema": strict_schema(PaperRecord)}
    assert (
        _raw(stub, model="m", response_format={"type": "json_schema", "json_schema": ours}).choices[0].message.content
    )


@pytest.mark.parametrize("response_model", [PaperRecord, ReasoningRecord, EvidenceRecord], ids=lambda m: m.__name__)
@pytest.mark.parametrize(
    "mode, grammar",
    [("json_schema", False), ("tools", False), ("md_json", True), ("json", True), ("md_json", False), ("json", False)],
)
def test_every_mode_is_accepted_by_a_strict_server(stub, mode, grammar, response_model):
    stub.strict_schemas = True
    if response_model is ReasoningRecord:  # a reply the strategy's own model validates
        stub.default = reply(json.dumps({**json.loads(VALID), "reasoning": "short"}))
    elif response_model is EvidenceRecord:
        stub.default = reply(
            json.dumps({"method_name": "StubNet", "datasets": [{"value": "GSM8K", "quote": "on GSM8K"}]})
        )
    gen = _generate(stub, "stub-model", mode=mode, grammar=grammar, response_model=response_model)
    assert gen.failure is None, gen.error
    body = stub.requests[0]["body"]
    schemas = []
    if mode == "json_schema":
        rf = body["response_format"]
        assert (
            rf["type"] == "json_schema"
            and rf["json_schema"]["strict"] is True
            and rf["json_schema"]["name"] == response_model.__name__
        )
        schemas.append(rf["json_schema"]["schema"])
    elif mode == "tools":
        function = body["tools"][0]["function"]
        assert function["strict"] is True and body["tool_choice"]["function"]["name"] == function["name"]
        schemas.append(function["parameters"])
    elif grammar:
        assert body["response_format"]["type"] == "json_object"
        schemas.append(body["response_format"]["schema"])
    else:
        assert "response_format" not in body or "schema" not in body["response_format"]
    for schema in schemas:
        assert strict_schema_error(schema) is None and "default" not in json.dumps(schema)
        assert set(schema["required"]) == set(schema["properties"])


def test_openai_without_base_url_defaults_to_strict_json_schema(stub, monkeypatch):
    """The openai SDK reads OPENAI_BASE_URL, so the default (no --base-url) path can reach the stub."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000000000000000")
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
    stub.strict_schemas = True
    backend = get_backend("openai/gpt-4o-mini")
    assert backend.mode == "json_schema"
    gen = asyncio.run(backend.generate(GenerationRequest(messages=MESSAGES)))
    assert gen.failure is None, gen.error
    assert stub.requests[0]["body"]["response_format"]["json_schema"]["strict"] is True
    assert get_backend("openai/m", base_url=stub.url).mode == "md_json"  # local servers keep md_json


def test_strict_schema_drops_every_default_but_never_a_property_named_default():
    class Knob(BaseModel):
        default: str = "on"
        level: int = 3
        note: str | None = None

    schema = all_required(Knob.model_json_schema(), strict=True)
    assert list(schema["properties"]) == ["default", "level", "note"] and schema["required"] == [
        "default",
        "level",
        "note",
    ]
    assert all("default" not in prop for prop in schema["properties"].values())
    assert schema["additionalProperties"] is False and strict_schema_error(schema) is None
    plain = all_required(Knob.model_json_schema())
    assert plain["properties"]["level"]["default"] == 3  # the grammar path's schema keeps them


def test_grammar_does_not_apply_to_modes_that_send_the_schema_themselves(stub):
    from paperfields.extract.backends.base import BackendError

    for mode in ("tools", "json_schema"):
        with pytest.raises(BackendError, match=f"--grammar does not apply to --mode {mode}"):
            get_backend("openai/m", base_url=stub.url, mode=mode, grammar=True)


# --- 9. requests that can never succeed ---------------------------------------------------------

REFUSED = [
    (
        "unsupported parameter",
        openai_error("Unrecognized request argument supplied: foo", "foo", "unsupported_parameter"),
        "request_rejected",
    ),
    (
        "bad schema",
        openai_error("Invalid schema for response_format 'PaperRecord': In context=(), 'default' is not permitted."),
        "request_rejected",
    ),
    ("413", openai_error("Request too large", status=413), "request_rejected"),
    ("422 (vLLM)", openai_error("1 validation error: messages", status=422), "request_rejected"),
    (
        "openai context",
        openai_error(
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            "messages",
            "context_length_exceeded",
        ),
        "context_overflow",
    ),
    (
        "llama.cpp context",
        reply(
            status=400,
            body=json.dumps(
                {
                    "error": {
                        "code": 400,
                        "type": "exceed_context_size_error",
                        "n_prompt_tokens": 9412,
                        "n_ctx": 8192,
                        "message": "request (9412 tokens) exceeds the available "
                        "context size (8192 tokens), try increasing it",
                    }
                }
            ),
        ),
        "context_overflow",
    ),
    (
        "vLLM context",
        openai_error(
            "This model's maximum context length is 2048 tokens. However, you requested 3584 tokens "
            "(2048 in the messages, 1536 in the completion).",
            code=None,
        ),
        "context_overflow",
    ),
]


@pytest.mark.parametrize("name, spec, failure", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_refused_request_gets_its_own_class_and_is_sent_once(stub, name, spec, failure):
    stub.default = spec
    gen = _generate(stub, "m")
    assert gen.failure is not None and gen.failure.value == failure, gen.error
    assert len(stub.requests) == 1 and gen.transport_retries == 0  # neither the SDK nor instructor retries it
    assert f"server {stub.url}" in gen.error and "cannot succeed unchanged" in gen.error
    assert ("context window" in gen.error) == (failure == "context_overflow")
    assert gen.record is None and not gen.cached


@pytest.mark.parametrize(
    "status, failure",
    [
        (401, "transport_error"),
        (404, "transport_error"),
        (429, "transport_error"),
        (503, "transport_error"),
        (400, "request_rejected"),
        (413, "request_rejected"),
        (422, "request_rejected"),
    ],
)
def test_rejected_class_by_status(status, failure):
    assert (rejected_class(status, "some error") or "transport_error") == failure
    assert rejected_class(status, "context_length_exceeded") in (None, "context_overflow")


def test_the_scripted_context_window_in_both_wordings(stub):
    stub.context_window = 5  # tokens of 4 characters: the messages above are longer
    assert _generate(stub, "m").failure.value == "context_overflow"
    stub.context_style = "llama.cpp"
    gen = _generate(stub, "m")
    assert gen.failure.value == "context_overflow" and "exceeds the available context size" in gen.error
    stub.context_window = 10_000
    assert _generate(stub, "m").failure is None


def test_cli_every_paper_refused_says_so_and_not_check_the_server(stub, tmp_path):
    stub.default = openai_error("Unsupported parameter: 'foo'", "foo", "unsupported_parameter")
    result = _cli(tmp_path, "-b", "openai/m", "--base-url", stub.url, "--run-id", "r")
    assert result.exit_code == 1, result.output
    assert "refused by the server" in result.stderr and "a rerun does not ask them again" in result.stderr
    assert "check the server and --base-url" not in result.stderr
    lines = read_predictions(tmp_path / "runs" / "r" / "predictions.jsonl")
    assert [l.failure.value for l in lines] == ["request_rejected"] * 2 and "Unsupported parameter" in lines[0].error


def test_a_batch_line_refused_for_its_context_is_context_overflow():
    line = {
        "custom_id": "p#0",
        "response": {
            "status_code": 400,
            "body": {
                "error": {
                    "message": "This model's maximum context length is 128000 tokens.",
                    "code": "context_length_exceeded",
                }
            },
        },
        "error": None,
    }
    assert generation_from_output(line, PaperRecord).failure.value == "context_overflow"
    line["response"]["body"]["error"] = {
        "message": "Unsupported parameter: 'max_tokens'",
        "code": "unsupported_parameter",
    }
    assert generation_from_output(line, PaperRecord).failure.value == "request_rejected"
    line["response"]["status_code"] = 500
    assert generation_from_output(line, PaperRecord).failure.value == "transport_error"
