"""The one call wrapper and the one options type (issue 23 item 3), and what a newcomer tripped on
(issue 28 items 3, 6, 7): a refused connection told at once, default run ids that tell runs apart,
and a summary after a resume that says what this invocation did and what the run holds."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time

import pytest
from typer.testing import CliRunner

import paperfields as pf
from paperfields.cli import app
from paperfields.core.errors import InputError
from paperfields.core.runlog import Generation, GenerationParams, default_run_id, load_manifest
from paperfields.extract.backends import GenerationRequest, get_backend
from paperfields.extract.cache import ResponseCache
from paperfields.extract.call import Model
from tests.conftest import ROOT
from tests.openai_stub import StubServer, reply

MESSAGES = [{"role": "user", "content": "Abstract: We propose StubNet."}]
FOO = "We propose FooNet for bar, reaching 91.2% accuracy on ImageNet."
BAZ = "We introduce BazBench, a benchmark of 300 tasks for code repair."


def _cli(*args: str):
    return CliRunner().invoke(app, list(args))


# --- issue 23 item 3: one options type, "unset" apart from 0 -------------------------------------


def test_self_consistency_at_temperature_0_runs_at_0_and_unset_is_the_strategy_s_own(tmp_path, stub):
    stub.default = reply()
    runs = tmp_path / "runs"
    base = [
        "run",
        "-b",
        "openai/m",
        "--base-url",
        stub.url,
        "-s",
        "self_consistency",
        "--limit",
        "1",
        "--no-score",
        "--runs-dir",
        str(runs),
    ]
    zero = _cli(*base, "--temperature", "0", "--run-id", "zero")
    assert zero.exit_code == 0, zero.output
    assert load_manifest(runs / "zero").config.params.temperature == 0.0
    sent = [r["body"]["temperature"] for r in stub.requests]
    assert sent == [0.0] * len(sent) and len(sent) == 5  # every sample of the paper, as sent over HTTP
    stub.requests.clear()
    unset = _cli(*base, "--run-id", "unset")
    assert unset.exit_code == 0, unset.output
    assert load_manifest(runs / "unset").config.params.temperature == 0.7
    assert {r["body"]["temperature"] for r in stub.requests} == {0.7}


def test_the_api_takes_the_options_as_one_object_or_as_keywords_and_names_a_wrong_one(tmp_path):
    options = pf.RunOptions(
        backend="rules/baseline", split="all", runs_dir=tmp_path / "runs", run_id="mine", score=False
    )
    result = pf.run([FOO, BAZ], options, limit=1)  # the keyword on top of the object
    assert result.manifest.papers_total == 1 and result.run_dir == tmp_path / "runs" / "mine"
    assert pf.RunOptions().temperature is None and pf.RunOptions(temperature=0).temperature == 0.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'temprature'"):
        pf.run([FOO], backend="rules/baseline", temprature=0)
    with pytest.raises(ValueError, match="field 'max_tokens'"):
        pf.extract_record(FOO, backend="rules/baseline", max_tokens=0)
    assert pf.extract_record(FOO, pf.ExtractOptions(backend="rules/baseline")).method_name == "FooNet"
    for nothing, said in (("", "empty"), ("  \n ", "empty"), (None, "a NoneType, not text")):
        with pytest.raises(InputError, match=f"extract_record\\(\\): the abstract is {said}"):
            pf.extract_record(nothing, backend="rules/baseline")


# --- issue 23 item 3: one call wrapper -----------------------------------------------------------


class _Leaky:
    """A backend that echoes its key in a reply, or fails with it in the exception."""

    name = "leaky/x"
    secrets = ("my-server-key-123456",)

    def __init__(self, fail: bool) -> None:
        self.fail, self.calls = fail, 0

    async def generate(self, request: GenerationRequest) -> Generation:
        self.calls += 1
        if self.fail:
            raise RuntimeError("401 for key my-server-key-123456")
        return Generation(
            record={"method_name": "X"}, raw_text='{"method_name": "X"} my-server-key-123456 sk-abcdefghijkl'
        )


def test_the_call_wrapper_times_masks_catches_and_caches_for_every_backend(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    request = GenerationRequest(messages=MESSAGES)
    backend = _Leaky(fail=False)
    model = Model(backend, {"backend": "leaky/x"}, cache)
    gen = asyncio.run(model.generate(request))
    assert gen.raw_text == '{"method_name": "X"} sk-*** sk-***' and gen.latency_s > 0 and not gen.cached
    again = asyncio.run(model.generate(request))
    assert (
        again.cached and again.raw_text == gen.raw_text and backend.calls == 1
    )  # the cache answered, masked as stored
    broken = Model(_Leaky(fail=True), {"backend": "leaky/y"}, cache)
    failed = asyncio.run(broken.generate(request))
    assert failed.failure.value == "transport_error" and failed.error == "RuntimeError: 401 for key sk-***"
    assert broken.lookup(request) is None  # a transport error is never cached
    cache.close()


# --- issue 28 item 3: nothing listening ----------------------------------------------------------


def test_nothing_listening_at_the_base_url_is_said_at_once(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    # six retries: the SDK's backoff alone would sleep at least 17 s before giving up
    backend = get_backend("openai/m", base_url=dead, transport_retries=6)
    start = time.perf_counter()
    gen = asyncio.run(
        Model(backend, {}).generate(GenerationRequest(messages=MESSAGES, params=GenerationParams(max_tokens=8)))
    )
    assert time.perf_counter() - start < 5
    assert gen.failure.value == "transport_error" and gen.error.startswith(
        f"nothing is listening at {dead} (connection to "
    )
    assert "timed out" not in gen.error
    ran = _cli("run", "-b", "openai/m", "--base-url", dead, "--limit", "1", "--runs-dir", str(tmp_path / "runs"))
    assert ran.exit_code == 1 and f"no paper got an answer from openai/m (nothing is listening at {dead}" in ran.stderr


def test_a_server_that_starts_after_a_refusal_is_asked(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = get_backend("openai/m", base_url=f"http://127.0.0.1:{port}/v1")
    request = GenerationRequest(messages=MESSAGES, params=GenerationParams(max_tokens=8))
    assert asyncio.run(Model(backend, {}).generate(request)).failure.value == "transport_error"
    with StubServer(port=port) as server:
        server.default = reply()
        assert asyncio.run(Model(backend, {}).generate(request)).record["method_name"] == "StubNet"


# --- issue 28 item 6: default run ids --------------------------------------------------------------


def test_the_published_runs_keep_their_default_run_ids():
    published = sorted(p for p in (ROOT / "results" / "runs").iterdir() if (p / "manifest.json").is_file())
    assert published
    from paperfields.scoring.submissions import run_id_of

    for run_dir in published:
        submitted = json.loads((run_dir / "scores.json").read_text()).get("submitted")
        if submitted:  # a submission's run is named after its folder, whatever its model (the first one broke this)
            assert run_dir.name == run_id_of(submitted["name"])
            continue
        c = load_manifest(run_dir).config
        assert (
            default_run_id(c.backend, c.strategy, c.split, c.batch, corpus=c.corpus, grammar=c.grammar) == run_dir.name
        )


def test_another_corpus_grammar_or_mode_gets_a_run_folder_of_its_own(tmp_path, stub):
    stub.default = reply()
    runs = tmp_path / "runs"
    for name, text in (("mine", FOO), ("other", BAZ)):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps({"id": f"{name}-1", "text": text}) + "\n")
        ran = _cli(
            "run",
            "-b",
            "rules/baseline",
            "--corpus",
            str(tmp_path / f"{name}.jsonl"),
            "--split",
            "all",
            "--runs-dir",
            str(runs),
        )
        assert ran.exit_code == 0, ran.output
    names = sorted(p.name for p in runs.iterdir())
    assert [re.sub(r"-[0-9a-f]{6}$", "-HEX", n) for n in names] == [
        "rules_baseline__zero_shot__all__mine-HEX",
        "rules_baseline__zero_shot__all__other-HEX",
    ]
    base = ["run", "-b", "openai/m", "--base-url", stub.url, "--limit", "1", "--no-score", "--runs-dir", str(runs)]
    for extra in ([], ["--grammar"], ["--mode", "json"]):
        ran = _cli(*base, *extra)
        assert ran.exit_code == 0, ran.output
    assert {p.name for p in runs.glob("openai_m*")} == {
        "openai_m__zero_shot__test",
        "openai_m__zero_shot__test__grammar",
        "openai_m__zero_shot__test__json",
    }


# --- issue 28 item 7: the summary after a resume -----------------------------------------------------


def test_the_summary_after_a_resume_says_what_this_invocation_did_and_what_the_run_holds(tmp_path):
    runs = tmp_path / "runs"
    base = ["run", "-b", "fake/x", "--no-score", "--no-cache", "--runs-dir", str(runs), "--run-id", "r"]
    first = _cli(*base, "--limit", "2")
    assert first.exit_code == 0, first.output
    assert "run r: 2/2 papers, 2 valid, failures {}; 2 model requests, 0 cache hits; " in first.stderr
    resumed = _cli(*base, "--limit", "3")
    assert resumed.exit_code == 0, resumed.output
    assert re.search(
        r"run r: this time 1 paper, 1 model request, 0 cache hits, \d+ s wall; the run in all: 3/3 papers, 3 valid, "
        r"failures \{\}; 3 model requests, 0 cache hits; \d+ s wall; folder ",
        resumed.stderr,
    ), resumed.stderr
    again = _cli(*base, "--limit", "3")
    assert "run r: this time nothing left to do; the run in all: 3/3 papers" in again.stderr
    # the API returns the same as data
    result = pf.run(None, backend="fake/x", limit=4, score=False, cache=False, runs_dir=runs, run_id="r")
    assert result.resumed and (
        result.invocation.papers,
        result.invocation.model_requests,
        result.invocation.cache_hits,
    ) == (1, 1, 0)
    assert result.manifest.model_requests == 4 and result.summary.startswith(
        "run r: this time 1 paper, 1 model request"
    )
