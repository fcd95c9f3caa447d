"""Issue 33 item 4: the local-server path as written. A request that times out against a server on
this machine says which flag to raise and what concurrency fits a one-slot server; the docs page's
recipe for llama.cpp's server, Ollama and vLLM gives those flags (checked by the CLI's own parser)."""

from __future__ import annotations

import re
import shlex

import typer

from paperfields.cli import app
from paperfields.extract.backends import get_backend
from paperfields.extract.backends.openai_compat import OPENAI_COMPATIBLE, is_local_server
from tests.cli_in_process import run_cli
from tests.conftest import ROOT
from tests.openai_stub import reply


def test_a_timeout_against_a_local_server_names_the_flags_to_change(tmp_path, stub):
    stub.default = reply(delay=5)  # far beyond the timeout: the client gives up first, however loaded the machine
    done = run_cli(
        "run", "-b", "openai/m", "--base-url", stub.url, "--timeout", "0.2", "--retries", "1", "--limit", "1",
        "--runs-dir", str(tmp_path / "runs"), "--no-score",
    )  # fmt: skip
    assert done.returncode == 1
    said = " ".join(done.output.split())
    assert "no answer within --timeout 0.2 s, asked 2 times: raise --timeout" in said, said
    assert "e.g. --timeout 900 --retries 1" in said
    assert "keep --concurrency at most the server's slots (llama.cpp's --parallel" in said
    assert len(stub.requests) == 2  # the request and its one retry, no more


def test_a_timeout_on_some_papers_says_why_in_the_warning(tmp_path, stub):
    stub.script[:] = [reply()]  # the first paper is answered, the second times out
    stub.default = reply(delay=5)
    done = run_cli(
        "run", "-b", "openai/m", "--base-url", stub.url, "--timeout", "0.2", "--retries", "0", "--limit", "2",
        "--runs-dir", str(tmp_path / "runs"), "--no-score",
    )  # fmt: skip
    assert done.returncode == 1
    said = " ".join(done.output.split())
    assert "1 paper got no answer (transport_error)" in said and "asked once: raise --timeout" in said, said


def test_which_servers_are_local():
    assert is_local_server("http://127.0.0.1:8080/v1") and is_local_server("http://localhost:11434/v1")
    assert is_local_server("http://[::1]:8000/v1") and not is_local_server("https://api.openai.com/v1")
    assert not is_local_server("http://10.0.0.7:8000/v1")  # another machine: its slots are not ours to know
    assert is_local_server(None, OPENAI_COMPATIBLE["ollama"]) and not is_local_server(None, OPENAI_COMPATIBLE["openai"])
    hosted = get_backend("openai/m", base_url="https://api.example.com/v1")._timeout_advice()
    assert "raise --timeout" in hosted and "slots" not in hosted


def _section(page: str, title: str) -> str:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def test_the_local_server_recipe_gives_a_timeout_and_a_concurrency_that_fit():
    section = _section("your-model.md", "A local server on a small machine")
    run = typer.main.get_command(app).commands["run"]
    commands = [
        shlex.split(line.split("  #")[0]) for line in section.splitlines() if line.startswith("paperfields run")
    ]
    assert len(commands) == 3  # llama.cpp's server, Ollama, vLLM
    for args in commands:
        params = run.make_context("run", args[2:]).params
        assert params["timeout"] is not None and params["timeout"] >= 600, args
        assert params["concurrency"] == 1 and params["base_url"].startswith("http://127.0.0.1:"), args
    # the server is started with one slot, as many as the runs send at once
    assert "--n_parallel 1" in section or "--parallel 1" in section
    assert "OLLAMA_NUM_PARALLEL=1" in section and "--max-num-seqs 1" in section
    # the measured figure of a reply that loops under the server's grammar is on the page
    assert re.search(r"`truncated` after \d+ s", section), "the measured seconds"
    # where the project's own 0.5B GGUF is: the weights mechanism, not a download
    assert "resolve_weights" in section
    # llama-cpp-python's server (the `server` extra) takes the flags the page gives it
    import subprocess
    import sys

    server_line = next(line for line in section.splitlines() if line.startswith("python -m llama_cpp.server"))
    helped = subprocess.run([sys.executable, "-m", "llama_cpp.server", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0, helped.stderr
    for flag in (word for word in server_line.split() if word.startswith("--")):
        assert f"  {flag} " in helped.stdout, flag
