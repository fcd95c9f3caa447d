"""The openai/ backend's HTTP transport: the SDK's aiohttp client by default (bench/bench_remote.py
measured it faster than httpx), httpx when the aiohttp extra is missing, and one backend usable
across event loops (an aiohttp session belongs to the loop it first ran on)."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import subprocess
import sys
import warnings
from pathlib import Path

import openai
import pytest

from paperfields.core.runlog import GenerationParams
from paperfields.extract.backends import GenerationRequest, get_backend
from paperfields.extract.backends.base import BackendError

ROOT = Path(__file__).resolve().parent.parent
REQUEST = GenerationRequest(
    messages=[{"role": "user", "content": "Abstract: We propose StubNet."}], params=GenerationParams(max_tokens=64)
)


def test_default_transport_is_aiohttp(stub):
    backend = get_backend("openai/stub-model", base_url=stub.url)
    assert backend.transport == "aiohttp"
    assert isinstance(backend.raw_client._client, openai.DefaultAioHttpClient)
    gen = asyncio.run(backend.generate(REQUEST))
    assert gen.failure is None and gen.record["method_name"] == "StubNet"
    assert len(stub.requests) == 1 and gen.transport_retries == 0


def test_httpx_on_request(stub):
    backend = get_backend("openai/stub-model", base_url=stub.url, transport="httpx")
    assert backend.transport == "httpx" and not isinstance(backend.raw_client._client, openai.DefaultAioHttpClient)
    assert asyncio.run(backend.generate(REQUEST)).record["method_name"] == "StubNet"


def test_unknown_transport_is_refused():
    with pytest.raises(BackendError, match="transport"):
        get_backend("openai/stub-model", base_url="http://127.0.0.1:1/v1", transport="requests")


def test_one_backend_across_event_loops_closes_each_session(stub, caplog):
    backend = get_backend("openai/stub-model", base_url=stub.url)
    clients = []
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.ERROR, logger="asyncio"):
        warnings.simplefilter("always")
        for _ in range(3):
            gen = asyncio.run(backend.generate(REQUEST))
            assert gen.failure is None, gen.error
            clients.append(backend.raw_client)
            assert clients[-1].is_closed()  # closed as asyncio.run ended its loop
        gc.collect()
    assert len({id(c) for c in clients}) == 3  # a new session for each loop: the old one belongs to a closed loop
    assert len(stub.requests) == 3
    unclosed = [str(w.message) for w in caught if "nclosed" in str(w.message)] + [
        r.getMessage() for r in caplog.records if "nclosed" in r.getMessage()
    ]
    assert unclosed == []


def test_concurrent_requests_then_closed_with_the_loop(stub):
    backend = get_backend("openai/stub-model", base_url=stub.url)

    async def many():
        return await asyncio.gather(*(backend.generate(REQUEST) for _ in range(8)))

    gens = asyncio.run(many())
    assert [g.failure for g in gens] == [None] * 8 and len(stub.requests) == 8
    assert backend.raw_client.is_closed()


def test_transport_error_over_aiohttp():
    # Nothing listens on port 1: a connection error, classified as a transport error after the SDK's retries.
    backend = get_backend("openai/stub-model", base_url="http://127.0.0.1:1/v1", transport_retries=0)
    gen = asyncio.run(backend.generate(REQUEST))
    assert gen.failure is not None and gen.failure.value == "transport_error"
    assert "127.0.0.1:1" in gen.error


def test_missing_aiohttp_extra_falls_back_to_httpx_or_errors_clearly(stub):
    # A fresh interpreter where aiohttp cannot be imported: the SDK then stands in a client that
    # refuses to be built, as it does when installed without the extra.
    script = f"""
import asyncio, json, sys
sys.modules["aiohttp"] = None
from paperfields.extract.backends import GenerationRequest, get_backend
from paperfields.core.runlog import GenerationParams
from paperfields.extract.backends.base import BackendError
backend = get_backend("openai/stub-model", base_url={stub.url!r})
gen = asyncio.run(backend.generate(GenerationRequest(messages=[{{"role": "user", "content": "x"}}], \
params=GenerationParams(max_tokens=64))))
try:
    get_backend("openai/stub-model", base_url={stub.url!r}, transport="aiohttp")
    error = None
except BackendError as exc:
    error = str(exc)
print(json.dumps({{"transport": backend.transport, "method_name": gen.record and gen.record["method_name"], \
"error": error}}))
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["transport"] == "httpx" and result["method_name"] == "StubNet"
    assert "pip install 'openai[aiohttp]'" in result["error"]
    assert len(stub.requests) == 1


def test_old_openai_without_aiohttp_client(stub, monkeypatch):
    monkeypatch.delattr(openai, "DefaultAioHttpClient")  # openai releases before the aiohttp client
    assert get_backend("openai/stub-model", base_url=stub.url).transport == "httpx"
    with pytest.raises(BackendError, match=r"openai\[aiohttp\]"):
        get_backend("openai/stub-model", base_url=stub.url, transport="aiohttp")
