"""The plain runner against ``--engine ray`` on the same corpus and endpoint, side by side.

200 made-up abstracts (distinct texts, so no request repeats) through ``paperfields.api.run`` twice
per repeat, interleaved: ``engine="asyncio"`` (this process) and ``engine="ray"`` (Ray Data over an
actor pool on a Ray started here with the machine's cores, no dashboard, on 127.0.0.1). The endpoint
is ``tests/openai_stub.py`` in a process of its own, answering every request after a fixed latency,
keep-alive like a real server. No response cache: every paper is asked.

Prints wall seconds of each side (best of the repeats), ray / plain, and the client CPU per paper:
for the plain runner this process's CPU time; for Ray the driver's plus every Ray process's (the
raylet, the GCS and the actors), read from /proc every 50 ms during the run, so Ray's own upkeep
during the run counts as the client's. Also prints how long
``ray.init`` took (not in either side's wall: on a real cluster it is up already).
Run: flock /tmp/pf-heavy.lock .venv/bin/python bench/bench_ray.py [N] [CONCURRENCY] [REPEATS] [LATENCY_S]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _machine import reports_machine

from paperfields import api

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


@contextmanager
def stub_server(latency: float):
    """``tests/openai_stub.py`` in a child process; yields (url, pid)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.openai_stub", "--delay", str(latency)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc.stdout.readline().strip(), proc.pid
    finally:
        proc.terminate()
        proc.wait()


def abstracts(n: int) -> list[str]:
    """``n`` made-up abstracts of about the corpus's length, each with a method, task, dataset and result of its own."""
    tasks = ["image classification", "machine translation", "question answering", "code generation", "protein folding"]
    data = ["ImageNet", "WMT14 En-De", "SQuAD 2.0", "HumanEval", "CASP15"]
    out = []
    for i in range(n):
        task, dataset = tasks[i % len(tasks)], data[i % len(data)]
        out.append(
            f"We propose Bench{i}Net, a method for {task} that replaces the attention of a transformer with a "
            f"sparse mixture of {2 + i % 7} experts routed by a learned hash. Existing approaches for {task} "
            f"scale quadratically with the input length and need large labeled sets. Bench{i}Net is trained with "
            f"a contrastive objective on unlabeled data and fine-tuned on {dataset}, where it reaches "
            f"{60 + (i * 7) % 35}.{i % 10} accuracy, {1 + i % 5}.{i % 3} points above the strongest baseline, "
            f"with {i % 4 + 2} times fewer parameters. We release code and checkpoints, and analyze which "
            f"components matter in ablations over {3 + i % 4} further benchmarks."
        )
    return out


def _children(pid: int) -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(parent, []).append(int(entry.name))
    return tree


class TreeCPU:
    """CPU seconds spent by ``root``'s descendant processes (``root`` itself and ``skip``'s subtree left out)
    while the ``with`` block runs: /proc is read every 50 ms and each process counts from its CPU when
    first seen in the block (0 for one started in it) to its last reading, so an actor that exits
    mid-run keeps what it spent (all but its last 50 ms)."""

    def __init__(self, root: int, skip: int) -> None:
        self.root, self.skip = root, skip
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self._stop = threading.Event()

    def _read(self) -> dict[int, float]:
        tree, out, stack = _children(self.root), {}, []
        stack.extend(_children(self.root).get(self.root, []))
        while stack:
            pid = stack.pop()
            if pid == self.skip:
                continue
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            out[pid] = (int(fields[11]) + int(fields[12])) / TICK  # utime + stime
            stack.extend(tree.get(pid, []))
        return out

    def _poll(self, started: bool) -> None:
        for pid, cpu in self._read().items():
            self.first.setdefault(pid, cpu if not started else 0.0)
            self.last[pid] = cpu

    def __enter__(self) -> TreeCPU:
        self._poll(started=False)
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(0.05):
            self._poll(started=True)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._poll(started=True)

    @property
    def seconds(self) -> float:
        return sum(self.last[pid] - self.first[pid] for pid in self.last)


def one_run(texts: list[str], url: str, runs_dir: Path, concurrency: int, engine: str, stub_pid: int):
    """(wall s, client CPU s, manifest) of one pf.run over ``texts``."""
    start, cpu = time.perf_counter(), time.process_time()
    with TreeCPU(os.getpid(), stub_pid) as ray_processes:
        result = api.run(
            texts,
            backend="openai/bench",
            base_url=url,
            split="all",
            concurrency=concurrency,
            engine=engine,
            cache=False,
            score=False,
            runs_dir=runs_dir,
        )
    wall = time.perf_counter() - start
    # the plain runner's client is this process; Ray's is this process and its raylet, GCS and actors
    client = time.process_time() - cpu + (ray_processes.seconds if engine == "ray" else 0.0)
    return wall, client, result.manifest


@reports_machine
def main() -> None:
    import ray

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    latency = float(sys.argv[4]) if len(sys.argv) > 4 else 0.1
    texts = abstracts(n)
    cores = os.cpu_count() or 1
    print(f"N={n} made-up papers, concurrency={concurrency}, server latency {latency * 1000:.0f} ms; best of {repeats}")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    start = time.perf_counter()
    ray.init(num_cpus=cores, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    init_s = time.perf_counter() - start
    sides: dict[str, list[tuple[float, float]]] = {"asyncio": [], "ray": [], "ray, 2 papers": []}
    with stub_server(latency) as (url, stub_pid), tempfile.TemporaryDirectory() as tmp:
        for repeat in range(repeats):  # interleaved, so a burst of load elsewhere hits both sides alike
            for side in sides:
                engine, some = ("ray", texts[:2]) if side.endswith("2 papers") else (side, texts)
                wall, cpu, manifest = one_run(some, url, Path(tmp) / f"{side}{repeat}", concurrency, engine, stub_pid)
                assert manifest.papers_valid == len(some) and manifest.status == "complete", manifest
                sides[side].append((wall, cpu))
                print(f"  repeat {repeat + 1} {side:>13}: {wall:6.2f} s wall, {cpu:6.2f} s client CPU", flush=True)
    ray.shutdown()
    best = {engine: (min(w for w, _ in runs), min(c for _, c in runs)) for engine, runs in sides.items()}
    (plain_s, plain_cpu), (ray_s, ray_cpu), (fixed_s, fixed_cpu) = best["asyncio"], best["ray"], best["ray, 2 papers"]
    marginal = (ray_cpu - fixed_cpu) / (n - 2)
    print(f"ray.init (a cluster of this machine's {cores} cores): {init_s:.1f} s, not counted below")
    print(
        f"plain runner (--engine asyncio) : {plain_s:6.2f} s wall, {plain_cpu / n * 1000:6.1f} ms client CPU per paper"
    )
    print(f"Ray Data (--engine ray)         : {ray_s:6.2f} s wall, {ray_cpu / n * 1000:6.1f} ms client CPU per paper")
    print(f"ray / plain                     : {ray_s / plain_s:6.2f} wall, {ray_cpu / plain_cpu:6.2f} client CPU")
    print(f"a Ray run of 2 papers (its fixed cost: actor pool, pipeline): {fixed_s:.1f} s wall, {fixed_cpu:.1f} s CPU")
    print(f"Ray's client CPU per paper beyond that fixed cost: {marginal * 1000:.1f} ms")


if __name__ == "__main__":
    main()
