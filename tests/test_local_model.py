"""The real offline model: in-process llama.cpp, and llama.cpp's OpenAI-compatible server
reached through the real openai client and instructor over HTTP. A few abstracts only."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from paperfields.extract.backends import GenerationParams, GenerationRequest, get_backend
from paperfields.extract.schema import PaperRecord
from paperfields.extract.strategies import Strategy

pytestmark = pytest.mark.model


# A short test abstract that the 0.5B model answers in about 140 tokens at temperature 0 (see the
# committed zero-shot run); on some abstracts it loops until max_tokens, which is a model failure
# ("truncated"), not what these tests are about.
PAPER = "pf0f21aff31"


def _shortest(corpus, n=1):
    return [p for p in corpus if p.id == PAPER]


def test_local_backend_returns_schema_valid_record(corpus, local_model_path):
    paper = _shortest(corpus)[0]
    backend = get_backend("local/qwen2.5-coder-0.5b")
    gen = asyncio.run(backend.generate(GenerationRequest(messages=Strategy("zero_shot").messages(paper))))
    assert gen.failure is None, (gen.failure, gen.error, gen.raw_text)
    record = PaperRecord.model_validate(gen.record)
    assert record.research_area  # the grammar makes every key present
    assert gen.usage.input_tokens > 200 and gen.usage.output_tokens > 20
    assert gen.finish_reason == "stop" and gen.latency_s > 0


def test_local_backend_truncation_is_classified(corpus, local_model_path):
    paper = _shortest(corpus)[0]
    backend = get_backend("local/qwen2.5-coder-0.5b")
    request = GenerationRequest(messages=Strategy("zero_shot").messages(paper), params=GenerationParams(max_tokens=12))
    gen = asyncio.run(backend.generate(request))
    assert gen.failure is not None and gen.failure.value == "truncated"
    assert gen.usage.output_tokens == 12 and gen.raw_text


def test_local_backend_accepts_a_gguf_path(local_model_path):
    backend = get_backend(f"local/{local_model_path}")
    assert backend.path == local_model_path


@pytest.fixture(scope="module")
def llama_server(local_model_path, tmp_path_factory):
    log = (tmp_path_factory.mktemp("llama-server") / "server.log").open("wb")  # a pipe would fill up and block the server
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(local_model_path), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "4096", "--model_alias", "qwen2.5-coder-0.5b"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 180
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited: {Path(log.name).read_text()[-2000:]}")
        try:
            urllib.request.urlopen(url + "/models", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not start within 180 s")
    yield url
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


def test_openai_backend_through_instructor_and_http(llama_server, corpus):
    paper = _shortest(corpus)[0]
    backend = get_backend("openai/qwen2.5-coder-0.5b", base_url=llama_server, grammar=True)
    assert backend.mode == "md_json"
    gen = asyncio.run(backend.generate(GenerationRequest(messages=Strategy("zero_shot").messages(paper), params=GenerationParams(max_tokens=1024))))
    assert gen.failure is None, (gen.failure, gen.error, gen.raw_text)
    PaperRecord.model_validate(gen.record)
    assert gen.attempts == 1
    assert gen.usage.input_tokens > 200 and gen.usage.output_tokens > 20


def test_openai_backend_truncation_over_http(llama_server, corpus):
    paper = _shortest(corpus)[0]
    backend = get_backend("openai/qwen2.5-coder-0.5b", base_url=llama_server, grammar=True)
    gen = asyncio.run(backend.generate(GenerationRequest(messages=Strategy("zero_shot").messages(paper), params=GenerationParams(max_tokens=16))))
    assert gen.failure is not None and gen.failure.value == "truncated"
    assert gen.usage.output_tokens == 16 and gen.attempts == 1
