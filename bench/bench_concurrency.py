"""Requests in flight against an OpenAI-compatible server: what the default buys, side by side in one run.

Part 1: the runner (``paperfields.extract.runner.run_extraction``, real openai client + instructor) on N
made-up papers against the stub server (``tests/openai_stub.py`` in its own process, keep-alive, every
reply after a fixed LATENCY) at 1, 2, 4 and 8 requests in flight, interleaved, best of REPEATS: wall
seconds, speedup over 1 in flight, and the ideal speedup (ceil(N / 1) / ceil(N / C) round trips).
8 is the default against a hosted API (``HOSTED_CONCURRENCY``).

Part 2: the default (8) against a stub that admits only CAPACITY requests at once and answers 429 to the
rest (Retry-After 0.1 s, as a rate-limited account): the limit the AIMD control (``AdaptiveLimit``) held
as the papers finished, the 429s, the peak, what the manifest records, and the wall time beside a run at
exactly CAPACITY in flight (what a user who knew the server's limit would give).

Run: .venv/bin/python bench/bench_concurrency.py [N] [REPEATS] [LATENCY] [CAPACITY]
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

from _machine import load_average, reports_machine

from paperfields.core.corpus import Paper, load_corpus
from paperfields.core.paths import gold_dir
from paperfields.core.runlog import Concurrency, RunConfig
from paperfields.extract.backends import get_backend
from paperfields.extract.backends.openai_compat import HOSTED_CONCURRENCY
from paperfields.extract.runner import run_extraction
from paperfields.extract.strategies import Strategy

ROOT = Path(__file__).resolve().parent.parent
LEVELS = (1, 2, 4, 8)


@contextmanager
def stub_server(latency: float, capacity: int | None = None):
    """``tests/openai_stub.py`` in a child process; yields (url, stats()) where stats reads its ``/stats``."""
    args = [sys.executable, "-m", "tests.openai_stub", "--delay", str(latency)]
    if capacity is not None:
        args += ["--capacity", str(capacity), "--retry-after", "0.1"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()

        def stats() -> dict:
            with urllib.request.urlopen(url + "/stats") as response:
                return json.load(response)

        yield url, stats
    finally:
        proc.terminate()
        proc.wait()


def papers(n: int) -> list[Paper]:
    """N papers: the benchmark's abstracts, copied under new ids as often as needed."""
    base = load_corpus(gold_dir() / "corpus.jsonl")
    return [
        Paper(id=f"{p.id}-{i}", text=p.text + f" (copy {i})", source=p.source, position=p.position, line=p.line)
        for i in range(math.ceil(n / len(base)))
        for p in base
    ][:n]


def config(url: str, strategy: Strategy, mode: str) -> RunConfig:
    return RunConfig(
        backend="openai/bench",
        base_url=url,
        mode=mode,
        strategy=strategy.name,
        prompt_version="1",
        prompt_sha256=strategy.sha256,
        split="all",
    )


def one_run(url: str, items: list[Paper], run_dir: Path, concurrency: Concurrency, trace: list | None = None):
    """(wall seconds, manifest) of one runner pass with a fresh backend; ``trace`` gets the backend's
    request limit after each paper."""
    backend = get_backend("openai/bench", base_url=url, transport_retries=8)
    strategy = Strategy("zero_shot")

    def on_paper(line) -> None:
        if trace is not None:
            trace.append(backend.limit.limit)

    start = time.perf_counter()
    manifest = asyncio.run(
        run_extraction(items, backend, strategy, config(url, strategy, backend.mode), run_dir, concurrency, on_paper)
    )
    return time.perf_counter() - start, manifest


@reports_machine
def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    latency = float(sys.argv[3]) if len(sys.argv) > 3 else 0.2
    capacity = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    items = papers(n)
    print(f"N={n} papers, server latency {latency * 1000:.0f} ms, best of {repeats} interleaved repeats")
    walls: dict[int, list[float]] = {c: [] for c in LEVELS}
    with stub_server(latency) as (url, stats), tempfile.TemporaryDirectory() as tmp:
        for repeat in range(repeats):
            for c in LEVELS:
                chosen = Concurrency(start=c, source="flag", why=f"--concurrency {c}")
                wall, manifest = one_run(url, items, Path(tmp) / f"r{repeat}-{c}", chosen)
                assert manifest.papers_valid == n, manifest.failures_by_class
                walls[c].append(wall)
                print(
                    f"  repeat {repeat + 1}, {c} in flight: {wall:6.2f} s (peak "
                    f"{manifest.concurrency.peak}); load {load_average()}"
                )
    best = {c: min(w) for c, w in walls.items()}
    print(f"{'in flight':>9}  {'wall s':>7}  {'speedup':>7}  {'ideal':>6}  {'speedup / ideal':>15}")
    for c in LEVELS:
        ideal = math.ceil(n / 1) / math.ceil(n / c)
        speedup = best[1] / best[c]
        print(f"{c:>9}  {best[c]:7.2f}  {speedup:6.2f}x  {ideal:5.1f}x  {speedup / ideal:15.3f}")
    print(
        f"the default against a hosted API: {HOSTED_CONCURRENCY} in flight, "
        f"{best[1] / best[HOSTED_CONCURRENCY]:.2f}x one at a time"
    )

    print(
        f"\nAIMD: the default ({HOSTED_CONCURRENCY}) against a server admitting "
        f"{capacity} at once (429 + Retry-After 0.1 s above)"
    )
    with stub_server(latency, capacity) as (url, stats), tempfile.TemporaryDirectory() as tmp:
        trace: list[float] = []
        chosen = Concurrency(start=HOSTED_CONCURRENCY, source="default", why="the hosted default")
        aimd_wall, manifest = one_run(url, items, Path(tmp) / "aimd", chosen, trace)
        served = stats()
        exact = Concurrency(start=capacity, source="flag", why=f"--concurrency {capacity}")
        exact_wall, exact_manifest = one_run(url, items, Path(tmp) / "exact", exact)
    marks = sorted({max(0, min(n - 1, round(n * f) - 1)) for f in (0.1, 0.25, 0.5, 0.75, 1.0)})
    print(
        "limit after paper: "
        + ", ".join(f"{i + 1}: {'inf' if math.isinf(trace[i]) else f'{trace[i]:.2f}'}" for i in marks)
    )
    print(
        f"papers valid {manifest.papers_valid}/{n}; 429 answers {manifest.rate_limited} "
        f"({manifest.rate_limited / n:.2f} per paper); server's peak {served['peak']} (its capacity {capacity})"
    )
    print(f"manifest concurrency: {manifest.concurrency.model_dump()}")
    print(
        f"wall: default {aimd_wall:.2f} s, exactly {capacity} in flight {exact_wall:.2f} s "
        f"({exact_manifest.rate_limited} 429s): default / exact {aimd_wall / exact_wall:.3f}; "
        f"ideal at {capacity} {math.ceil(n / capacity) * latency:.2f} s"
    )


if __name__ == "__main__":
    main()
