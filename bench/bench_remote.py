"""Remote-backend overhead: the runner against a bare AsyncOpenAI + gather loop, side by side.

Both talk to the same local OpenAI-compatible stub (``tests/openai_stub.py``, in its own process so
it does not compete for this process's GIL, keep-alive like a real server) that answers every
request after a fixed 100 ms, for N papers at concurrency C. Prints wall times and the ratios runner / bare and runner /
ideal (ceil(N / C) x 100 ms); targets: <= 1.05 and <= 1.15. Also times a rerun of the finished run
(target: <= 0.05 of the first run, 0 model requests), and the client CPU seconds per paper of both
sides (process time: unlike wall time it barely moves when other processes share the machine) and
their ratio, runner / bare (target <= 1.15, issue 39).
Each side runs over both transports of the openai SDK: httpx (its default) and aiohttp
(``http_client=openai.DefaultAioHttpClient()``, the ``openai[aiohttp]`` extra), so aiohttp / httpx is
read in the same run.
Run: .venv/bin/python bench/bench_remote.py [N] [C] [REPEATS]
"""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _machine import reports_machine

from paperfields.core.corpus import Paper
from paperfields.core.paths import gold_dir
from paperfields.core.runlog import RunConfig
from paperfields.extract.backends import get_backend
from paperfields.extract.backends.openai_compat import _instructor_model
from paperfields.extract.cache import ResponseCache
from paperfields.extract.runner import run_extraction
from paperfields.extract.strategies import Strategy

LATENCY = 0.1
ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def stub_server():
    """Start ``tests/openai_stub.py`` in a child process; yield (url, request counter)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.openai_stub", "--delay", str(LATENCY)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()

        def requests_served() -> int:
            with urllib.request.urlopen(url + "/stats") as response:
                return json.load(response)["requests"]

        yield url, requests_served
    finally:
        proc.terminate()
        proc.wait()


def http_client(transport: str, **kwargs):
    """The SDK's own httpx client (``"httpx"``, its default) or its aiohttp one (``"aiohttp"``), with its defaults."""
    import openai

    return (openai.DefaultAioHttpClient if transport == "aiohttp" else openai.DefaultAsyncHttpxClient)(**kwargs)


def runner_backend(url: str, transport: str):
    """A fresh ``openai/bench`` backend over ``transport`` (``"httpx"`` or ``"aiohttp"``)."""
    return get_backend("openai/bench", base_url=url, transport=transport)


async def run_runner(papers, backend, strategy, config, run_dir, concurrency, cache) -> tuple[float, float]:
    """Wall and CPU seconds of one runner pass."""
    start, cpu = time.perf_counter(), time.process_time()
    await run_extraction(papers, backend, strategy, config, run_dir, concurrency, cache=cache)
    return time.perf_counter() - start, time.process_time() - cpu


async def bare(
    url: str, messages: list, n: int, concurrency: int, response_model: type | None = None, transport: str = "httpx"
) -> tuple[float, float]:
    """Wall and CPU seconds of a plain gather loop over ``transport`` (``"httpx"`` or ``"aiohttp"``);
    with ``response_model``, through instructor (md_json)."""
    import instructor
    import openai

    client = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0, http_client=http_client(transport))
    semaphore = asyncio.Semaphore(concurrency)
    patched = instructor.from_openai(client, mode=instructor.Mode.MD_JSON)

    async def one(i: int) -> None:
        async with semaphore:
            if response_model is None:
                await client.chat.completions.create(model="bench", messages=messages[i], max_tokens=256)
            else:
                await patched.chat.completions.create(
                    model="bench", messages=messages[i], max_tokens=256, response_model=response_model, max_retries=0
                )

    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(i) for i in range(n)))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    await client.close()
    return elapsed, cpu


@reports_machine
def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 760
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    from paperfields.core.corpus import load_corpus

    base = load_corpus(gold_dir() / "corpus.jsonl")
    papers = [
        Paper(id=f"{p.id}-{i}", text=p.text + f" (copy {i})", source=p.source, position=p.position, line=p.line)
        for i in range(math.ceil(n / len(base)))
        for p in base
    ][:n]
    strategy = Strategy("zero_shot")
    print(
        f"N={n}, concurrency={concurrency}, "
        f"server latency {LATENCY * 1000:.0f} ms; best of {repeats} interleaved repeats per side"
    )
    sides: dict[str, list[tuple[float, float]]] = {
        k: [] for k in ("bare", "bare_aiohttp", "instructor", "memo", "runner", "runner_aiohttp")
    }
    with stub_server() as (url, requests_served), tempfile.TemporaryDirectory() as tmp:
        messages = [strategy.messages(p) for p in papers]
        default = get_backend("openai/bench", base_url=url)
        mode = default.mode
        print(f"the backend's default transport: {default.transport}")
        config = RunConfig(
            backend="openai/bench",
            base_url=url,
            mode=mode,
            strategy="zero_shot",
            prompt_version="1",
            prompt_sha256=strategy.sha256,
            split="test",
        )
        for repeat in range(repeats):  # interleaved, so a burst of load elsewhere hits every side alike
            sides["bare"].append(asyncio.run(bare(url, messages, n, concurrency)))
            sides["bare_aiohttp"].append(asyncio.run(bare(url, messages, n, concurrency, transport="aiohttp")))
            sides["instructor"].append(asyncio.run(bare(url, messages, n, concurrency, strategy.response_model)))
            sides["memo"].append(
                asyncio.run(bare(url, messages, n, concurrency, _instructor_model(strategy.response_model)))
            )
            for transport in ("httpx", "aiohttp"):
                run_dir = Path(tmp) / f"run{repeat}-{transport}"
                cache = ResponseCache(Path(tmp) / f"cache{repeat}-{transport}.sqlite")
                side = "runner" if transport == "httpx" else "runner_aiohttp"
                sides[side].append(
                    asyncio.run(
                        run_runner(
                            papers, runner_backend(url, transport), strategy, config, run_dir, concurrency, cache
                        )
                    )
                )
                if transport == "httpx":
                    finished = run_dir, cache
        before = requests_served()
        start = time.perf_counter()
        asyncio.run(
            run_runner(papers, runner_backend(url, "httpx"), strategy, config, *finished[:1], concurrency, finished[1])
        )
        rerun_s = time.perf_counter() - start
        rerun_requests = requests_served() - before
    best = {side: (min(w for w, _ in runs), min(c for _, c in runs)) for side, runs in sides.items()}
    (bare_s, bare_cpu), (instr_s, instr_cpu), (memo_s, memo_cpu), (runner_s, runner_cpu) = (
        best[k] for k in ("bare", "instructor", "memo", "runner")
    )
    (abare_s, abare_cpu), (arunner_s, arunner_cpu) = best["bare_aiohttp"], best["runner_aiohttp"]
    ideal = math.ceil(n / concurrency) * LATENCY
    print(f"{'':26}   {'httpx':>7}  {'aiohttp':>7}  aiohttp / httpx")
    print(f"bare AsyncOpenAI + gather : {bare_s:6.2f} s {abare_s:6.2f} s   {abare_s / bare_s:6.3f}")
    print(f"paperfields runner        : {runner_s:6.2f} s {arunner_s:6.2f} s   {arunner_s / runner_s:6.3f}")
    print(f"runner / bare             : {runner_s / bare_s:6.3f}   {arunner_s / abare_s:6.3f}     (target <= 1.05)")
    print(f"runner / ideal            : {runner_s / ideal:6.3f}   {arunner_s / ideal:6.3f}     (target <= 1.15)")
    print(f"bare / ideal              : {bare_s / ideal:6.3f}   {abare_s / ideal:6.3f}")
    print(
        f"client CPU per paper, ms  : bare {bare_cpu / n * 1000:.1f} / {abare_cpu / n * 1000:.1f}, "
        f"runner {runner_cpu / n * 1000:.1f} / {arunner_cpu / n * 1000:.1f} (httpx / aiohttp)"
    )
    print(
        f"client CPU runner / bare  : {runner_cpu / bare_cpu:6.3f}   {arunner_cpu / abare_cpu:6.3f}     "
        f"(target <= 1.15; memo'd instructor / bare {memo_cpu / bare_cpu:.3f}, httpx)"
    )
    print(f"instructor + gather       : {instr_s:6.2f} s  (httpx; the library used plainly, no runner)")
    print(f"instructor, schema memo'd : {memo_s:6.2f} s  (httpx; the model wrapped once, as the runner's backend does)")
    print(f"ideal ceil(N/C) x latency : {ideal:6.2f} s")
    print(
        f"runner / instructor       : {runner_s / instr_s:6.3f}  (vs the library used plainly); vs memo'd: "
        f"{runner_s / memo_s:.3f} (what the runner itself adds)"
    )
    print(
        f"client CPU per paper      : runner {runner_cpu / n * 1000:.1f} ms, instructor {instr_cpu / n * 1000:.1f} "
        f"ms (memo'd {memo_cpu / n * 1000:.1f} ms), bare {bare_cpu / n * 1000:.1f} ms (one client process drives at "
        f"most ~{n / runner_cpu:.0f} papers/s per core); httpx"
    )
    print(
        f"rerun / first run         : {rerun_s / runner_s:6.3f}  (target <= 0.05); "
        f"model requests on rerun: {rerun_requests} (target 0)"
    )


if __name__ == "__main__":
    main()
