"""Requests in flight for an OpenAI-compatible run: 8 against a hosted API, 1 against a server of one's
own unless it says its slots (llama.cpp's /props total_slots, a vLLM server), the flag always winning,
and the manifest saying which and why, with the peak and what 429s left.

Every run goes through the real openai client and instructor to the stub server on 127.0.0.1
(tests/openai_stub.py). The stub holds the requests it admits until the test has seen how many came at
once (a state polled, never a time), then lets them go; its ``peak`` is the most it ever served at once.
"""

from __future__ import annotations

import threading

import pytest

import paperfields.api as pf
from paperfields.extract.backends import get_backend, openai_compat
from paperfields.extract.backends.openai_compat import HOSTED_CONCURRENCY, is_private_server, server_slots

PAPERS = [f"Abstract {i}: we propose StubNet{i}, a network for reasoning." for i in range(20)]


@pytest.fixture
def hosted(monkeypatch):
    """The stub's loopback URL taken for a hosted API's (the rule reads only the URL)."""
    monkeypatch.setattr(openai_compat, "is_private_server", lambda url, provider=None: False)


def _run(stub, tmp_path, **options):
    return pf.run(
        PAPERS,
        backend="openai/m",
        base_url=stub.url,
        split="all",
        runs_dir=tmp_path,
        run_id="r",
        cache=False,
        score=False,
        **options,
    )


def _held_run(stub, tmp_path, at_once, **options):
    """Run :data:`PAPERS` with the stub holding every request until ``at_once`` are waiting in it; then
    let them go. Returns the run's result."""
    outcome = {}

    def target():
        try:
            outcome["result"] = _run(stub, tmp_path, **options)
        except BaseException as exc:  # handed to the test's thread
            outcome["error"] = exc

    stub.hold()
    thread = threading.Thread(target=target)
    thread.start()
    try:
        stub.wait_for(lambda: stub.held >= at_once or not thread.is_alive(), f"{at_once} requests waiting at once")
    finally:
        stub.release()
        thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def test_a_hosted_api_gets_eight_in_flight(stub, tmp_path, hosted):
    result = _held_run(stub, tmp_path, HOSTED_CONCURRENCY)
    assert stub.peak == 8 == HOSTED_CONCURRENCY and len(stub.requests) == 20
    chosen = result.manifest.concurrency
    assert (chosen.start, chosen.source, chosen.peak, chosen.after_429) == (8, "default", 8, None)
    assert chosen.why.startswith("a hosted API: 8 in flight") and result.manifest.papers_valid == 20


def test_a_server_of_ones_own_that_says_no_slots_gets_one(stub, tmp_path):
    result = _held_run(stub, tmp_path, 1)
    assert stub.peak == 1 and len(stub.requests) == 20
    chosen = result.manifest.concurrency
    assert (chosen.start, chosen.source, chosen.peak) == (1, "default", 1)
    assert "says no slot count" in chosen.why and "--concurrency N" in chosen.why


def test_a_llama_cpp_servers_slots_raise_it(stub, tmp_path):
    stub.props = {"total_slots": 3, "default_generation_settings": {"n_ctx": 8192}}
    result = _held_run(stub, tmp_path, 3)
    assert stub.peak == 3
    chosen = result.manifest.concurrency
    assert (chosen.start, chosen.source, chosen.peak) == (3, "server", 3)
    assert "total_slots 3" in chosen.why


def test_a_vllm_server_gets_the_hosted_default(stub, tmp_path):
    stub.models = {
        "object": "list",
        "data": [{"id": "m", "object": "model", "owned_by": "vllm", "max_model_len": 8192}],
    }
    result = _held_run(stub, tmp_path, HOSTED_CONCURRENCY)
    assert stub.peak == HOSTED_CONCURRENCY
    chosen = result.manifest.concurrency
    assert (chosen.start, chosen.source, chosen.peak) == (HOSTED_CONCURRENCY, "server", HOSTED_CONCURRENCY)
    assert "vLLM" in chosen.why


@pytest.mark.parametrize("flag", [1, 2])
def test_the_flag_always_wins(stub, tmp_path, flag):
    stub.props = {"total_slots": 4}  # the server says 4; the user says otherwise
    result = _held_run(stub, tmp_path, flag, concurrency=flag)
    assert stub.peak == flag
    chosen = result.manifest.concurrency
    assert (chosen.start, chosen.source, chosen.why, chosen.peak) == (flag, "flag", f"--concurrency {flag}", flag)


def test_the_flag_wins_against_a_hosted_api_too(stub, tmp_path, hosted):
    result = _held_run(stub, tmp_path, 3, concurrency=3)
    assert stub.peak == 3 and result.manifest.concurrency.source == "flag"


def test_a_hosted_default_that_meets_429s_settles_and_says_so(stub, tmp_path, hosted):
    stub.capacity, stub.retry_after = 4, "0.05"  # admits 4 at once; the rest get 429 with Retry-After

    outcome = {}

    def target():
        outcome["result"] = _run(stub, tmp_path, retries=8)

    stub.hold()
    thread = threading.Thread(target=target)
    thread.start()
    try:  # 4 admitted and held; a fifth answered 429 (the rest of the first 8 may wait for a slot after its cut)
        stub.wait_for(lambda: stub.held == 4 and stub.rate_limited >= 1, "4 held and a 429 answered")
    finally:
        stub.release()
        thread.join()
    manifest = outcome["result"].manifest
    assert manifest.papers_valid == 20 and manifest.failures_by_class == {}
    assert stub.peak == 4 and manifest.rate_limited == stub.rate_limited >= 1
    chosen = manifest.concurrency
    # at least 5 were in flight at once on the client's side: the 4 held and the one refused
    assert (chosen.start, chosen.source) == (8, "default") and 5 <= chosen.peak <= 8
    assert chosen.after_429 is not None and 1 <= chosen.after_429 <= 8


def test_which_servers_are_ones_own():
    own = [
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1",
        "http://[::1]:8000/v1",
        "http://10.0.0.7:8000/v1",
        "http://192.168.1.20:8000/v1",
        "http://172.16.4.2/v1",
        "http://[fd00::5]:8000/v1",
        "http://169.254.10.1:8000/v1",
        "http://vllm:8000/v1",
        "http://gpu-box.local:8000/v1",
        "http://llm.internal/v1",
    ]
    hosted = [
        "https://api.openai.com/v1",
        "https://openrouter.ai/api/v1",
        "http://8.8.8.8:8000/v1",
        "https://generativelanguage.googleapis.com/v1beta/openai/",
    ]
    assert [u for u in own if not is_private_server(u)] == []
    assert [u for u in hosted if is_private_server(u)] == []
    assert is_private_server(None, openai_compat.OPENAI_COMPATIBLE["ollama"])
    assert not is_private_server(None, openai_compat.OPENAI_COMPATIBLE["openai"])


def test_what_a_server_says_of_its_slots(stub):
    assert server_slots(stub.url) is None  # no /props, not vLLM: llama-cpp-python's server, Ollama
    for props in ({"total_slots": 0}, {"total_slots": "4"}, {"total_slots": True}, {"n_ctx": 4096}):
        stub.props = props
        assert server_slots(stub.url) is None, props
    stub.props = {"total_slots": 6}
    assert server_slots(stub.url)[0] == 6 and server_slots(stub.url + "/")[0] == 6
    stub.props = None
    stub.models = {"data": [{"id": "m", "owned_by": "llamacpp"}]}
    assert server_slots(stub.url) is None
    stub.models = {"data": [{"id": "m", "owned_by": "vllm"}]}
    assert server_slots(stub.url)[0] == HOSTED_CONCURRENCY


def test_nothing_listening_gives_one(tmp_path):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = get_backend("openai/m", base_url=f"http://127.0.0.1:{port}/v1")
    assert (backend.default_concurrency.start, backend.default_concurrency.source) == (1, "default")


def test_the_hosted_default_asks_the_server_nothing(stub, hosted):
    backend = get_backend("openai/m", base_url=stub.url)
    stub.props = {"total_slots": 2}  # never read: a hosted API is not asked
    assert backend.concurrency == HOSTED_CONCURRENCY and stub.requests == [] and stub.gets == []


def test_a_server_of_ones_own_is_asked_twice_at_most_once(stub):
    backend = get_backend("openai/m", base_url=stub.url)
    assert backend.concurrency == 1 == backend.concurrency and backend.default_concurrency.start == 1
    assert stub.gets == ["/props", "/v1/models"]
