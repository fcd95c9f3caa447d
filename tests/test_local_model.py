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

from paperfields.core.runlog import GenerationParams
from paperfields.core.schema import PaperRecord
from paperfields.extract.backends import GenerationRequest, get_backend
from paperfields.extract.strategies import Strategy
from tests.cli_in_process import run_cli

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


def test_forced_tokens_are_fast_forwarded_and_the_record_is_the_same_language_as_the_gbnf_engine(
    corpus, local_model_path
):
    from paperfields.extract.backends.grammar import GBNF_GRAMMAR_ID, GRAMMAR_ID
    from paperfields.extract.backends.local import LocalBackend

    class Gbnf(LocalBackend):
        engine = "gbnf"

    request = GenerationRequest(messages=Strategy("zero_shot").messages(_shortest(corpus)[0]))
    fast, gbnf = LocalBackend("qwen2.5-coder-0.5b"), Gbnf("qwen2.5-coder-0.5b")
    assert (fast.mode, gbnf.mode) == (GRAMMAR_ID, GBNF_GRAMMAR_ID) == ("compact-v2", "compact-v1")
    ff, before = asyncio.run(fast.generate(request)), asyncio.run(gbnf.generate(request))
    for gen in (ff, before):
        assert gen.failure is None, (gen.failure, gen.error, gen.raw_text)
        assert (
            gen.raw_text.startswith('{"method_name": ') and ', "' not in gen.raw_text
        )  # compact: one space after a colon only
        assert set(gen.notes["logprob_confidence"]) == set(PaperRecord.model_fields)
    assert (
        before.notes["decode_steps"] == before.usage.output_tokens + 1
    )  # a forward pass per token, and the end of text
    # keys, punctuation and enum tails are forced: far fewer steps than tokens (about 0.55 on dev papers)
    assert ff.notes["decode_steps"] < 0.8 * ff.usage.output_tokens
    assert ff.usage.input_tokens == before.usage.input_tokens  # the same prompt


def test_logprob_confidence_covers_the_record_fields_only(corpus, local_model_path):
    # the confidence strategy's reply ends with its own "confidence" object: its tokens are no field
    strategy = Strategy("confidence")
    paper = _shortest(corpus)[0]
    request = GenerationRequest(messages=strategy.messages(paper), response_model=strategy.response_model)
    gen = strategy.finalize(paper, [asyncio.run(get_backend("local/qwen2.5-coder-0.5b").generate(request))])
    assert gen.failure is None, (gen.failure, gen.error, gen.raw_text)
    assert set(gen.notes["logprob_confidence"]) == set(PaperRecord.model_fields)
    assert set(gen.notes["confidence"]) == set(PaperRecord.model_fields)  # the stated ones, kept apart


def test_canonical_decoding_writes_forced_tokens_as_the_tokenizer_would(corpus, local_model_path):
    # bench_fastforward.py --lever canonical: the sampled token and the tokens forced after it are
    # re-tokenized, so the sampled '",' and the forced '"' of the next key become one '","'
    from paperfields.extract.backends.grammar import llguidance_grammar
    from paperfields.extract.backends.local import LocalBackend, _load, decode

    class Canonical(LocalBackend):
        canonical = True

    assert Canonical("qwen2.5-coder-0.5b").mode == "compact-v2+canonical"  # never a cache key of the default's
    backend = get_backend("local/qwen2.5-coder-0.5b")
    llm, lock = _load(backend.path, backend.n_ctx, backend.n_threads)
    strategy = Strategy("zero_shot")
    with lock:
        prompt = llm.chat_prompt(strategy.messages(_shortest(corpus)[0]))
        plain, canonical = (
            decode(llm, prompt, llguidance_grammar(strategy.response_model), max_tokens=1536, canonical=c)
            for c in (False, True)
        )

    def split_keys(done):  # a value's closing '",' sampled, then the next key's '"' forced on its own
        pieces = [llm.detokenize([t]) for t in done.tokens]
        return sum(a.endswith(b'",') and b == b'"' for a, b in zip(pieces, pieces[1:]))

    assert plain.finish_reason == canonical.finish_reason == "stop"
    assert split_keys(plain) > 0 and split_keys(canonical) == 0
    assert llm.detokenize(canonical.tokens).decode("utf-8") == canonical.text
    PaperRecord.model_validate_json(canonical.text)


def test_the_prompt_is_the_one_create_chat_completion_builds(corpus, local_model_path):
    from paperfields.extract.backends.local import _load

    backend = get_backend("local/qwen2.5-coder-0.5b")
    llm, lock = _load(backend.path, backend.n_ctx, backend.n_threads)
    messages = Strategy("few_shot").messages(_shortest(corpus)[0])  # several turns
    with lock:
        llm.create_chat_completion(messages=messages, max_tokens=1)
        reply_prompt = [int(t) for t in llm._input_ids]
        prompt = llm.chat_prompt(messages)
    assert len(prompt) > 1000 and reply_prompt == prompt  # its one token is sampled, never evaluated


def test_a_forced_run_past_max_tokens_is_cut_to_it_and_truncated(corpus, local_model_path):
    from paperfields.extract.backends.grammar import llguidance_grammar
    from paperfields.extract.backends.local import TokenLogprobs, _load, decode

    backend = get_backend("local/qwen2.5-coder-0.5b")
    llm, lock = _load(backend.path, backend.n_ctx, backend.n_threads)
    prompt = llm.chat_prompt(Strategy("zero_shot").messages(_shortest(corpus)[0]))
    capture = TokenLogprobs()
    with lock:
        done = decode(
            llm, prompt, llguidance_grammar(PaperRecord), max_tokens=2, capture=capture
        )  # '{"method_name": ' is forced: 5 tokens
    assert done.finish_reason == "length" and len(done.tokens) == 2 and done.steps == 1
    assert done.text == llm.detokenize(done.tokens).decode() and done.text.startswith("{")
    assert (
        capture.tokens == done.tokens and len(capture.logprobs) == 2 and capture.logprobs[1] == 0.0
    )  # a forced token: probability 1


def test_sampling_at_a_temperature_stays_in_the_grammar_and_follows_the_seed(corpus, local_model_path):
    from paperfields.extract.backends.grammar import llguidance_grammar
    from paperfields.extract.backends.local import _load, decode

    backend = get_backend("local/qwen2.5-coder-0.5b")
    llm, lock = _load(backend.path, backend.n_ctx, backend.n_threads)
    prompt = llm.chat_prompt(Strategy("zero_shot").messages(_shortest(corpus)[0]))
    grammar = llguidance_grammar(PaperRecord)
    with lock:
        texts = [decode(llm, prompt, grammar, max_tokens=60, temperature=1.5, seed=seed).text for seed in (1, 1, 2, 3)]
    assert texts[0] == texts[1]  # the same seed, the same sample
    assert len(set(texts[1:])) > 1  # other seeds, other samples (at 1.5 three samples of 60 tokens are never all equal)
    assert all(text.startswith('{"method_name": ') for text in texts)


def test_local_backend_accepts_a_gguf_path(local_model_path):
    backend = get_backend(f"local/{local_model_path}")
    assert backend.path == local_model_path


@pytest.mark.parametrize("content", [b"", b"not a model at all" * 100], ids=["empty", "random-bytes"])
def test_a_file_that_is_not_gguf_is_refused_before_the_run_starts(tmp_path, content):
    from paperfields.extract.backends.base import BackendError

    weights = tmp_path / "broken.gguf"
    weights.write_bytes(content)
    with pytest.raises(BackendError, match="not a GGUF file"):
        get_backend(f"local/{weights}")
    runs = tmp_path / "runs"
    proc = run_cli("run", "-b", f"local/{weights}", "--runs-dir", str(runs), "--limit", "1")
    assert proc.returncode == 2 and f"{weights}: not a GGUF file" in proc.stderr, proc.stderr
    assert not runs.exists() or not any(runs.iterdir())  # nothing asked, no run folder


def test_one_thread_means_one_thread_for_batches_too(local_model_path):
    from paperfields.extract.backends.local import _load

    llm, _ = _load(local_model_path, 512, 1)  # a small context: its own instance
    assert (
        llm.context_params.n_threads == 1 and llm.context_params.n_threads_batch == 1
    )  # prompts and fast-forward batches are batches


# Two test papers whose order mattered while llama.cpp reused any cached prompt prefix: A alone
# answers in 253 tokens; after B (its first 658 prompt tokens shared) it differed from character
# 203 on and looped to max_tokens.
PAPER_A, PAPER_B = "p442e1d5d7f", "pb672b3fbc4"


def _paper(corpus, paper_id):
    return next(p for p in corpus if p.id == paper_id)


def test_a_papers_answer_does_not_depend_on_what_ran_before_it(corpus, local_model_path):
    from paperfields.extract.backends.local import _load

    backend = get_backend("local/qwen2.5-coder-0.5b")
    llm, _ = _load(backend.path, backend.n_ctx, backend.n_threads)
    llm.reset()  # as in a fresh process, whatever earlier tests ran on this instance
    strategy = Strategy("zero_shot")

    def ask(paper_id, max_tokens):
        request = GenerationRequest(
            messages=strategy.messages(_paper(corpus, paper_id)), params=GenerationParams(max_tokens=max_tokens)
        )
        return asyncio.run(backend.generate(request))

    alone = ask(PAPER_A, 240)  # enough to pass character 203, where the two answers used to part
    ask(PAPER_B, 1)  # B's prompt in the cache is what A used to reuse
    after_b = ask(PAPER_A, 240)
    assert len(alone.raw_text) > 203
    assert after_b.raw_text == alone.raw_text


def test_the_work_log_reports_reused_computed_and_forced_tokens_and_decode_steps(corpus, local_model_path):
    # bench/bench_local.py builds its ideal time from these counts; they stay out of the Generation
    from paperfields.extract.backends.local import N_BATCH, LocalBackend, _load

    assert LocalBackend.work_log is None  # a run keeps no log
    backend = LocalBackend("qwen2.5-coder-0.5b", workers=1)
    backend.work_log = []
    llm, _ = _load(backend.path, backend.n_ctx, backend.n_threads)
    llm.reset()  # a cold start, whatever earlier tests ran on this instance
    strategy = Strategy("zero_shot")
    gens = [
        asyncio.run(backend.generate(GenerationRequest(messages=strategy.messages(_paper(corpus, pid)))))
        for pid in (PAPER_B, PAPER)
    ]
    cold, warm = backend.work_log
    assert cold.reused_tokens == 0 and cold.computed_tokens == cold.prompt_tokens == gens[0].usage.input_tokens
    # the system prompt is shared: reused in whole batches, the rest computed
    assert N_BATCH <= warm.reused_tokens < warm.prompt_tokens and warm.reused_tokens % N_BATCH == 0
    assert (
        warm.computed_tokens
        == warm.prompt_tokens - warm.reused_tokens
        == gens[1].usage.input_tokens - warm.reused_tokens
    )
    for work, gen in zip((cold, warm), gens):
        assert gen.failure is None, (gen.failure, gen.error)
        assert (work.output_tokens, work.decode_steps) == (gen.usage.output_tokens, gen.notes["decode_steps"])
        # every output token is sampled or forced (an end-of-text sample is a step, not a token)
        assert (
            work.output_tokens - work.forced_tokens in (work.decode_steps, work.decode_steps - 1)
            and work.forced_tokens > 0
        )
        assert work.prompt_s > 0 and work.decode_s > 0 and work.prompt_s + work.decode_s <= gen.latency_s
        assert set(gen.notes) == {"decode_steps", "logprob_confidence"}  # nothing of the work log in the line


def test_a_prompt_longer_than_the_context_window_is_context_overflow_final_and_not_cached(
    corpus, local_model_path, tmp_path
):
    from paperfields.core.runlog import RunConfig, read_predictions
    from paperfields.extract.backends.local import LocalBackend
    from paperfields.extract.cache import ResponseCache
    from paperfields.extract.runner import run_extraction

    backend = LocalBackend("qwen2.5-coder-0.5b", n_ctx=256)  # a zero-shot prompt is about 800 tokens
    strategy = Strategy("zero_shot")
    paper = _shortest(corpus)[0]
    gen = asyncio.run(backend.generate(GenerationRequest(messages=strategy.messages(paper))))
    assert gen.failure is not None and gen.failure.value == "context_overflow"
    assert (
        "exceed context window of 256" in gen.error
        and "prompt longer than the context window of 256 tokens" in gen.error
    )
    config = RunConfig(
        backend="local/qwen2.5-coder-0.5b",
        strategy="zero_shot",
        prompt_version=strategy.template.version,
        prompt_sha256=strategy.sha256,
        split="test",
    )
    cache = ResponseCache(tmp_path / "cache.sqlite")
    for _ in range(2):  # the rerun asks nothing: the same prompt would overflow again
        manifest = asyncio.run(run_extraction([paper], backend, strategy, config, tmp_path / "run", cache=cache))
    assert (
        manifest.failures_by_class == {"context_overflow": 1}
        and manifest.status == "complete"
        and manifest.papers_done == 1
    )
    assert len((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()) == 1 and len(cache) == 0
    assert read_predictions(tmp_path / "run" / "predictions.jsonl")[0].failure.value == "context_overflow"


def test_ctrl_c_during_a_local_generation_stops_it_within_tokens_and_keeps_the_finished_papers(
    corpus, local_model_path, tmp_path
):
    import json
    import os
    import signal

    from paperfields.core.runlog import load_manifest, read_predictions

    max_tokens = 100  # both papers answer in more tokens than this, so uninterrupted each runs to exactly 100
    mine = tmp_path / "mine.jsonl"
    mine.write_text(
        "".join(
            json.dumps({"id": p.id, "text": p.text}) + "\n" for p in (_paper(corpus, PAPER_B), _paper(corpus, PAPER_A))
        )
    )
    tokens = tmp_path / "tokens.log"  # one byte per generated token (tests/cli_child.py)
    runs = tmp_path / "runs"
    # a real process, not tests.cli_in_process: the test sends it SIGINT (Ctrl-C) in the middle of a generation
    cmd = [
        sys.executable,
        str(Path(__file__).parent / "cli_child.py"),
        "run",
        "-b",
        "local/qwen2.5-coder-0.5b",
        "--corpus",
        str(mine),
        "--split",
        "all",
        "--max-tokens",
        str(max_tokens),
        "--runs-dir",
        str(runs),
        "--run-id",
        "r",
        "--no-score",
    ]
    env = dict(os.environ, PF_TOKEN_LOG=str(tokens))
    from paperfields.extract.backends.local import close_idle_instances

    close_idle_instances()  # the child loads the model for itself: this process's copy would sit idle beside it
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    pred = runs / "r" / "predictions.jsonl"

    def count():
        return tokens.stat().st_size if tokens.exists() else 0

    def wait_until(condition, what):
        deadline = time.monotonic() + 1800  # a guard against a hang, not a speed assumption
        while not condition():
            if proc.poll() is not None:
                pytest.fail(f"the run exited ({proc.returncode}) before {what}: {proc.stderr.read()}")
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"no {what} within 1800 s")
            time.sleep(0.05)

    wait_until(lambda: pred.exists() and len(pred.read_text().splitlines()) == 1, "the first paper written")
    first_done = count()
    wait_until(lambda: count() >= first_done + 5, "5 tokens of the second paper")  # generating now: its prompt is read
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=1800)
    assert proc.returncode == 130, err
    assert "interrupted; finished papers are saved" in err
    assert count() - first_done < max_tokens  # stopped mid-answer: it did not run on to the end
    lines = read_predictions(pred)
    assert [l.paper_id for l in lines] == [PAPER_B]  # the interrupted paper's work is discarded, the finished one kept
    assert load_manifest(runs / "r").status == "incomplete"
    # Resumed, the second paper runs to the end: max_tokens tokens, which the interrupted run did not reach.
    resumed = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert resumed.returncode == 0, resumed.stderr
    lines = read_predictions(pred)
    assert [l.paper_id for l in lines] == [PAPER_B, PAPER_A] and lines[1].usage.output_tokens == max_tokens
    # issue 39 item 1: the manifest says the layout the default chose and why
    from paperfields.core.plural import plural
    from paperfields.extract.backends.local import workers_and_threads

    workers, threads = workers_and_threads(None, None)
    chosen = load_manifest(runs / "r").concurrency
    assert (chosen.start, chosen.source) == (workers, "default")
    assert chosen.why.startswith(f"{plural(workers, 'worker')} x 1 thread: one 1-thread llama.cpp")


def test_a_local_context_overflow_gives_local_advice_not_server_options(tmp_path, local_model_path):
    import json

    mine = tmp_path / "long.jsonl"
    mine.write_text(
        json.dumps({"id": "long-1", "text": "We propose FooNet and evaluate it carefully. " * 2500}) + "\n"
    )  # ~20,000 tokens
    proc = run_cli(
        "run",
        "--corpus",
        str(mine),
        "--split",
        "all",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--threads",
        "1",
        "--no-score",
    )
    assert proc.returncode == 1, proc.stderr
    assert (
        "refused by llama.cpp as sent ({'context_overflow': 1}" in proc.stderr
        and "context window (8192 tokens)" in proc.stderr
    )
    assert "--mode" not in proc.stderr and "server" not in proc.stderr


@pytest.fixture(scope="module")
def llama_server(local_model_path, tmp_path_factory):
    """llama.cpp's OpenAI-compatible server on the 0.5B GGUF, for the tests at the end of this file (the last,
    so that the server, a process holding a model of its own, is gone before the next tests load more)."""
    from paperfields.extract.backends.local import close_idle_instances

    close_idle_instances()  # the in-process instances are not used while the server answers
    log = (tmp_path_factory.mktemp("llama-server") / "server.log").open(
        "wb"
    )  # a pipe would fill up and block the server
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(local_model_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--model_alias",
            "qwen2.5-coder-0.5b",
            # the server's default keeps every position's logits (n_ctx x 151,936 floats: 2.5 GB at 4096), which
            # only logprobs need; these tests ask for none
            "--logits_all",
            "False",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 1800  # a guard against a hang: the server is polled until it answers
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited: {Path(log.name).read_text()[-2000:]}")
        try:
            urllib.request.urlopen(url + "/models", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not start within 1800 s")
    yield url
    proc.terminate()
    proc.wait(timeout=600)  # a guard, not a speed assumption
    log.close()


def test_openai_backend_through_instructor_and_http(llama_server, corpus):
    paper = _shortest(corpus)[0]
    backend = get_backend("openai/qwen2.5-coder-0.5b", base_url=llama_server, grammar=True)
    assert backend.mode == "md_json"
    gen = asyncio.run(
        backend.generate(
            GenerationRequest(messages=Strategy("zero_shot").messages(paper), params=GenerationParams(max_tokens=1024))
        )
    )
    assert gen.failure is None, (gen.failure, gen.error, gen.raw_text)
    PaperRecord.model_validate(gen.record)
    assert gen.attempts == 1
    assert gen.usage.input_tokens > 200 and gen.usage.output_tokens > 20


def test_openai_backend_truncation_over_http(llama_server, corpus):
    paper = _shortest(corpus)[0]
    backend = get_backend("openai/qwen2.5-coder-0.5b", base_url=llama_server, grammar=True)
    gen = asyncio.run(
        backend.generate(
            GenerationRequest(messages=Strategy("zero_shot").messages(paper), params=GenerationParams(max_tokens=16))
        )
    )
    assert gen.failure is not None and gen.failure.value == "truncated"
    assert gen.usage.output_tokens == 16 and gen.attempts == 1
