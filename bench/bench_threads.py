"""Local model threads on a busy machine: one 2-thread process, one 1-thread process and two 1-thread
workers, side by side, with a CPU hog on one core and without. (The default since this bench is one
1-thread llama.cpp worker per core in one process: extract/backends/local.py, workers_and_threads.)

Each configuration extracts the same test papers with the default model and zero-shot prompt, in a
fresh process (the model loaded once per process, its load time not counted), and prints seconds per
paper and the ratio to the 2-thread process measured in the same minutes. Records must be identical
paper for paper across configurations (llama.cpp's output does not depend on its thread count); the
bench says so or names the papers that differ.

Run: .venv/bin/python bench/bench_threads.py [PAPERS]   (default 4 papers; about 10-20 minutes on 2 cores)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from _machine import reports_machine  # this folder is on sys.path when run as a script

WORKER = """
import asyncio, json, sys, time
from paperfields.core.corpus import load_corpus
from paperfields.core.gold import load_gold
from paperfields.core.paths import gold_dir
from paperfields.extract.backends import GenerationRequest, get_backend
from paperfields.extract.strategies import Strategy

threads, ids = sys.argv[1], sys.argv[2].split(",")
backend = get_backend("local/qwen2.5-coder-0.5b", **({} if threads == "default" else {"n_threads": int(threads)}))
papers = {p.id: p for p in load_corpus(gold_dir() / "corpus.jsonl")}
strategy = Strategy("zero_shot")
asyncio.run(backend.generate(GenerationRequest(messages=strategy.messages(papers[ids[0]]), \
params={"max_tokens": 1})))  # load the model
out = {"threads": backend.n_threads, "records": {}, "seconds": 0.0}
start = time.perf_counter()
for pid in ids:
    gen = asyncio.run(backend.generate(GenerationRequest(messages=strategy.messages(papers[pid]), \
response_model=strategy.response_model)))
    out["records"][pid] = gen.record
out["seconds"] = time.perf_counter() - start
print(json.dumps(out))
"""


def _test_ids(n: int) -> list[str]:
    from paperfields.core.gold import load_gold
    from paperfields.core.paths import gold_dir

    return [g.id for g in load_gold(gold_dir() / "gold.jsonl") if g.split == "test"][:n]


def _workers(threads: str, groups: list[list[str]]) -> tuple[float, dict, int]:
    """Run one process per group at once; the wall time until all are done (model loads excluded as far
    as the worker can: each times its own papers, and the slowest worker decides)."""
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, threads, ",".join(g)], stdout=subprocess.PIPE, text=True)
        for g in groups
    ]
    outs = [json.loads(p.communicate()[0]) for p in procs]
    records = {pid: r for o in outs for pid, r in o["records"].items()}
    return max(o["seconds"] for o in outs), records, outs[0]["threads"]


@reports_machine
def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    ids = _test_ids(n)
    half = [ids[: n // 2], ids[n // 2 :]]
    configs = [
        ("one process, 2 threads", "2", [ids]),
        ("one process, 1 thread", "1", [ids]),
        ("two workers, 1 thread each", "1", half),
    ]
    print(f"{n} test papers, zero-shot, 0.5B")
    reference: dict = {}
    for hog in (False, True):
        hog_proc = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if hog else None
        try:
            time.sleep(0.5 if hog else 0)  # let the hog take its core before the default reads the load
            print(f"\n{'with a CPU hog on one core' if hog else 'no hog'} (load now {os.getloadavg()[0]:.2f}):")
            base = None
            for label, threads, groups in configs:
                seconds, records, used = _workers(threads, groups)
                base = base or seconds
                same = [pid for pid in ids if reference.setdefault(pid, records[pid]) != records[pid]]
                print(
                    f"  {label:30s} ({used} threads): {seconds / n:6.1f} s/paper, x{seconds / base:.2f} of 2 threads; "
                    f"records {'identical' if not same else 'DIFFER on ' + ', '.join(same)}"
                )
        finally:
            if hog_proc is not None:
                hog_proc.kill()
    print()


if __name__ == "__main__":
    main()
