"""Each backend takes its own validated options (issue 14): an option that does not apply is refused
by ``get_backend`` and by ``paperfields run`` before any work, naming every such option and the
backends it applies to; defaults the user did not set never trip the check."""

from __future__ import annotations

import asyncio

import pytest

from paperfields.extract.backends import BackendError, GenerationRequest, get_backend, known_providers, providers
from paperfields.extract.backends.base import BackendOptions, option_flag
from tests.cli_in_process import run_cli


def _run(tmp_path, *args):
    return run_cli("run", "--runs-dir", str(tmp_path / "runs"), "--no-score", "-q", *args)


def test_cli_refuses_options_that_do_not_apply_before_any_work(tmp_path):
    cache = tmp_path / "responses.sqlite"  # the conftest's per-test response cache
    result = _run(
        tmp_path,
        "-b",
        "rules/empty",
        "--base-url",
        "http://127.0.0.1:8000/v1",
        "--grammar",
        "--mode",
        "tools",
        "--threads",
        "3",
    )
    assert result.exit_code == 2, result.output
    assert (
        "options that do not apply to rules/empty: --base-url (OpenAI-compatible providers "
        "only), --grammar (OpenAI-compatible providers only), --mode (OpenAI-compatible "
        "providers only), --threads (local/ only); rules/ takes no options"
    ) in result.stderr
    assert not (tmp_path / "runs").exists() and not cache.exists()  # nothing recorded


@pytest.mark.parametrize(
    "args, refused",
    [
        (["-b", "rules/baseline", "--threads", "2"], "--threads (local/ only)"),
        (
            ["-b", "openai/m", "--base-url", "http://127.0.0.1:9/v1", "--threads", "2"],
            "options that do not apply to openai/m: --threads (local/ only)",
        ),
        (
            ["-b", "local/no-such-model.gguf", "--base-url", "http://127.0.0.1:9/v1"],
            "options that do not apply to local/no-such-model.gguf: --base-url (OpenAI-compatible providers only)",
        ),
        (["-b", "local/no-such-model.gguf", "--mode", "json"], "--mode (OpenAI-compatible providers only)"),
        (
            ["-b", "fake/a", "--grammar"],
            "options that do not apply to fake/a: --grammar (OpenAI-compatible providers only)",
        ),
        (
            ["-b", "openai/m", "--base-url", "http://127.0.0.1:9/v1", "--mode", "tools", "--grammar"],
            "--grammar does not apply to --mode tools",
        ),
    ],
)
def test_cli_each_backend_refuses_the_others_options(tmp_path, args, refused):
    result = _run(tmp_path, *args)
    assert result.exit_code == 2 and refused in result.stderr, result.output
    assert "weights" not in result.stderr  # refused before the local backend looks for its model file
    assert not (tmp_path / "runs").exists()


def test_cli_defaults_do_not_trip_the_check(tmp_path):
    result = _run(tmp_path, "-b", "rules/empty", "--limit", "2", "--run-id", "r")
    assert result.exit_code == 0, result.output
    from paperfields.core.runlog import load_manifest

    config = load_manifest(tmp_path / "runs" / "r").config
    assert (config.base_url, config.mode, config.grammar) == (None, None, False)


def test_get_backend_refuses_unknown_and_bad_options():
    with pytest.raises(
        BackendError,
        match=r"options that do not apply to rules/empty: --base-url \(OpenAI-compatible providers only\), "
        r"--threads \(local/ only\); rules/ takes no options$",
    ):
        get_backend("rules/empty", base_url="http://x", n_threads=2)
    with pytest.raises(BackendError, match="options that do not apply to fake/a: -o colour; fake/ takes -o replies$"):
        get_backend("fake/a", colour="blue")  # an option no backend takes: named, with the ones that apply
    with pytest.raises(BackendError, match=r"gemini/g: -o thinking_budget: Input should be greater than or equal to 0"):
        get_backend("gemini/g", thinking_budget=-1)
    with pytest.raises(BackendError, match="openai/m: --retries: Input should be greater than or equal to 0"):
        get_backend("openai/m", base_url="http://127.0.0.1:9/v1", transport_retries=-1)
    with pytest.raises(BackendError, match="local/x.gguf: --threads: Input should be greater than or equal to 1"):
        get_backend("local/x.gguf", n_threads=0)
    with pytest.raises(BackendError, match="anthropic/m: --timeout: Input should be greater than 0"):
        get_backend("anthropic/m", timeout_s=0)


def test_options_reach_the_backend():
    backend = get_backend("openai/m", base_url="http://127.0.0.1:9/v1", mode="json", grammar=True, reasks=3)
    assert (backend.base_url, backend.mode, backend.grammar, backend.reasks) == (
        "http://127.0.0.1:9/v1",
        "json",
        True,
        3,
    )
    fake = get_backend("fake/scripted", replies=['{"method_name": "A"}', ('{"method_name": "B"', "length")])
    first = asyncio.run(fake.generate(GenerationRequest(messages=[{"role": "user", "content": "x"}])))
    second = asyncio.run(fake.generate(GenerationRequest(messages=[{"role": "user", "content": "x"}])))
    assert first.record["method_name"] == "A" and second.failure.value == "truncated"


def test_every_provider_declares_options_that_forbid_the_rest():
    assert set(known_providers()) >= {"anthropic", "fake", "local", "openai", "rules", "gemini", "ollama", "vllm"}
    for name, provider in providers().items():
        assert issubclass(provider.options, BackendOptions), name
        assert provider.options.model_config["extra"] == "forbid", name
    assert option_flag("n_threads") == "--threads" and option_flag("base_url") == "--base-url"
    assert option_flag("thinking_budget") == "-o thinking_budget"  # an option without a flag of its own


def test_local_workers_default_to_one_one_thread_worker_per_core(monkeypatch):
    import os

    from paperfields.extract.backends import local

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert local.workers_and_threads(None, None) == (2, 1)
    assert local.workers_and_threads(None, 1) == (2, 1)  # --threads 1: a 1-thread worker per core
    assert local.workers_and_threads(None, 2) == (1, 2)  # --threads 2: the one 2-thread process of before
    assert local.workers_and_threads(1, None) == (1, 2)
    assert local.workers_and_threads(3, 1) == (3, 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    assert local.workers_and_threads(None, None) == (8, 1) and local.workers_and_threads(None, 4) == (2, 4)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert local.workers_and_threads(None, None) == (1, 1) and local.workers_and_threads(None, 4) == (1, 4)


def test_the_local_layout_is_said_in_words_with_what_chose_it(monkeypatch):
    import os

    from paperfields.extract.backends import local

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert local.layout_reason(2, 1, None, None).startswith(
        "2 workers x 1 thread: one 1-thread llama.cpp worker per core this process may use (2 cores); measured"
    )
    assert local.layout_reason(1, 2, None, 2) == "1 worker x 2 threads: from --threads 2"
    assert local.layout_reason(3, 1, 3, 1) == (
        "3 workers x 1 thread: from --workers 3 and --threads 1; 3 threads on 2 cores: more threads than cores, "
        "so they wait for each other (slower, the same records)"
    )
    assert local.layout_reason(1, 1, 1, None) == "1 worker x 1 thread: from --workers 1"


def test_concurrency_given_for_a_local_model_keeps_its_layout_on_record(monkeypatch):
    import os

    from paperfields.api import _concurrency
    from paperfields.extract.backends import local

    class Local:  # what _concurrency reads of a LocalBackend (one needs weights to make)
        layout = local.layout_reason(1, 2, None, 2)

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    chosen = _concurrency(4, Local())
    assert (chosen.start, chosen.source) == (4, "flag")
    assert chosen.why == "--concurrency 4; 1 worker x 2 threads: from --threads 2"
    assert _concurrency(3, object()).why == "--concurrency 3"  # a backend without a layout: as before


@pytest.mark.parametrize(
    "args, said",
    [
        (["-b", "rules/baseline", "-o", "foo"], "error: -o 'foo': give KEY=VALUE, e.g. -o reasks=2\n"),
        (["-b", "rules/baseline", "-o", "a=1", "-o", "a=2"], "error: -o a is given twice\n"),
        (
            ["-b", "openai/m", "--base-url", "http://127.0.0.1:9/v1", "-o", "base_url=http://127.0.0.1:8/v1"],
            "error: base_url is given twice, by its own flag and by -o base_url: give it once\n",
        ),
        (
            ["-b", "rules/baseline", "-o", "x=1"],
            "error: options that do not apply to rules/baseline: -o x; rules/ takes no options\n",
        ),
        (
            ["-b", "gemini/g", "-o", "thinking_budget=lots"],
            "error: gemini/g: -o thinking_budget: Input should be a "
            "valid integer, unable to parse string as an integer\n",
        ),
    ],
)
def test_cli_provider_options_are_checked_before_any_work(tmp_path, args, said):
    result = _run(tmp_path, *args)
    assert result.exit_code == 2 and result.stderr == said, result.output
    assert not (tmp_path / "runs").exists()


def test_a_provider_option_given_as_text_reaches_the_backend_as_its_type():
    backend = get_backend("gemini/g", base_url="http://127.0.0.1:9/v1", thinking_budget="0", grammar="false")
    assert backend.options.thinking_budget == 0 and backend.grammar is False  # -o values are text: the model reads them
    assert backend.name == "gemini/g" and backend.provider.key_env == "GEMINI_API_KEY"


def test_configs_and_cache_identities_of_the_published_runs_are_as_they_were_written():
    """Provider options are left out of a config that has none: a published run's config reads back to
    the bytes its manifest holds, and its cache identity is the four keys it always had (so a rerun is a
    resume, and every cached answer is found again)."""
    import json

    from paperfields.core.paths import published_runs_dir
    from paperfields.core.runlog import load_manifest
    from paperfields.extract.call import identity

    runs = [d for d in sorted(published_runs_dir().iterdir()) if (d / "manifest.json").is_file()]
    assert runs
    for run in runs:
        written = json.loads((run / "manifest.json").read_text(encoding="utf-8"))["config"]
        config = load_manifest(run).config
        assert config.model_dump(mode="json") == written and list(config.model_dump()) == list(written), run.name
        assert set(identity(config)) == {"backend", "base_url", "mode", "grammar"}, run.name


def test_a_local_server_provider_says_nothing_listens_at_its_own_url(monkeypatch):
    """ollama/ with no --base-url asks its own server (here moved by OLLAMA_BASE_URL to a closed port):
    a refused connection is told at once, naming that URL; no key is needed."""
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    closed.close()
    monkeypatch.setenv("OLLAMA_BASE_URL", url)
    backend = get_backend("ollama/qwen2.5:7b")
    assert backend.mode == "md_json" and backend.name == "ollama/qwen2.5:7b"
    gen = asyncio.run(backend.generate(GenerationRequest(messages=[{"role": "user", "content": "x"}])))
    assert gen.failure.value == "transport_error" and gen.error.startswith(f"nothing is listening at {url} ")
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_BASE_URL", raising=False)
    with pytest.raises(BackendError, match="GROQ_API_KEY is not set"):
        get_backend("groq/llama-3.1-8b-instant")  # a hosted provider needs its own key
    with pytest.raises(BackendError, match=r"azure-openai/ needs --base-url \(or AZURE_OPENAI_BASE_URL\)"):
        get_backend("azure-openai/my-deployment")  # a provider without a server of its own
