"""Issue 39 item 1: the local default's layout against the other layout, side by side, on idle cores and
beside a CPU hog on one core.

Two configurations of the default model and zero-shot prompt extract the same test papers, each in a fresh
process through the real backend (``get_backend("local/qwen2.5-coder-0.5b", ...)``) with as many papers in
flight as the backend answers at once, as ``paperfields run`` sends them:

- the default: no option, so the backend's own layout (:func:`workers_and_threads`: one 1-thread llama.cpp
  worker per core this process may use, two workers in one process on 2 cores);
- one worker of 2 threads (``--threads 2``).

The rounds alternate the two, so both meet the same minutes' load; each prints seconds per paper and the load
before and after. The figure of the item is the default's time over the better layout's in the same round
(target at most 1.15, idle and beside the hog). Records must be identical paper for paper across
configurations (llama.cpp's output does not depend on its thread count or on which worker answers); the bench
says so or names the papers that differ. The models are loaded (both workers' instances) before the clock starts.

Run: .venv/bin/python bench/bench_threads.py [PAPERS] [ROUNDS]   (default 6 papers, 2 rounds; about 15 minutes
on 2 cores)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

from _machine import load_average, reports_machine  # this folder is on sys.path when run as a script

WORKER = """
import asyncio, json, sys, time
from paperfields.core.corpus import load_corpus
from paperfields.core.paths import gold_dir
from paperfields.extract.backends import GenerationRequest, get_backend
from paperfields.extract.strategies import Strategy

threads, ids = sys.argv[1], sys.argv[2].split(",")
backend = get_backend("local/qwen2.5-coder-0.5b", **({} if threads == "default" else {"n_threads": int(threads)}))
papers = {p.id: p for p in load_corpus(gold_dir() / "corpus.jsonl")}
strategy = Strategy("zero_shot")

async def main():
    gate = asyncio.Semaphore(backend.concurrency)

    async def one(pid, **params):
        async with gate:
            request = GenerationRequest(messages=strategy.messages(papers[pid]), **params)
            return pid, await backend.generate(request)

    # every worker's instance loaded before the clock starts (a request on each slot at once)
    await asyncio.gather(*(one(ids[0], params={"max_tokens": 1}) for _ in range(backend.concurrency)))
    start = time.perf_counter()
    done = await asyncio.gather(*(one(pid, response_model=strategy.response_model) for pid in ids))
    seconds = time.perf_counter() - start
    return {"workers": backend.workers, "threads": backend.n_threads, "why": backend.default_concurrency.why,
            "seconds": seconds, "records": {pid: gen.record for pid, gen in done}}

print(json.dumps(asyncio.run(main())))
"""

CONFIGS = [("the default", "default"), ("1 worker x 2 threads", "2")]


def _test_ids(n: int) -> list[str]:
    from paperfields.core.gold import load_gold
    from paperfields.core.paths import gold_dir

    return [g.id for g in load_gold(gold_dir() / "gold.jsonl") if g.split == "test"][:n]


def _run(threads: str, ids: list[str]) -> dict:
    """One configuration in a fresh process: its workers, threads, seconds for ``ids`` and records."""
    out = subprocess.run([sys.executable, "-c", WORKER, threads, ",".join(ids)], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"bench_threads: the {threads!r} worker failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


@reports_machine
def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    ids = _test_ids(n)
    print(f"{n} test papers, zero-shot, 0.5B, {rounds} rounds per condition, the configurations alternated")
    reference: dict = {}
    summary = []
    for hog in (False, True):
        hog_proc = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if hog else None
        try:
            time.sleep(0.5 if hog else 0)  # let the hog take its core
            condition = "beside a CPU hog on one core" if hog else "no hog"
            print(f"\n{condition}:")
            ratios = []
            for r in range(rounds):
                order = CONFIGS if r % 2 == 0 else CONFIGS[::-1]  # neither always first after the other's load
                seconds = {}
                for label, threads in order:
                    before = load_average()
                    out = _run(threads, ids)
                    seconds[label] = out["seconds"] / n
                    got = out["records"]
                    differ = [pid for pid in ids if reference.setdefault(pid, got[pid]) != got[pid]]
                    print(
                        f"  round {r + 1}, {label:22s} ({out['workers']} x {out['threads']}): "
                        f"{seconds[label]:6.2f} s/paper; load {before} -> {load_average()}; "
                        f"records {'identical' if not differ else 'DIFFER on ' + ', '.join(differ)}"
                    )
                    if threads == "default" and r == 0:
                        print(f"    the manifest's why: {out['why']}")
                ratio = seconds["the default"] / min(seconds.values())
                ratios.append(ratio)
                print(f"  round {r + 1}: default / better = {ratio:.3f}")
            summary.append((condition, ratios))
        finally:
            if hog_proc is not None:
                hog_proc.kill()
    print()
    for condition, ratios in summary:
        print(
            f"{condition:30s} default / better layout: median {statistics.median(ratios):.3f}, "
            f"worst {max(ratios):.3f} over {len(ratios)} rounds (target <= 1.15)"
        )
    print(f"cores this process may use: {len(os.sched_getaffinity(0))}")


if __name__ == "__main__":
    main()
