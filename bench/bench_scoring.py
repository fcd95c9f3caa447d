"""Scoring speed and memory: 100 runs x 76 papers, and growth at 76, 760 and 7,600 papers (synthetic
predictions), for this checkout's scorer and, side by side in the same minutes, an older commit's.

Predictions are the gold records with items dropped and invented at random (seeded), so matching does
real work; each of the 100 runs gets predictions of its own (fresh objects, drawn before the clock starts:
reusing one run's objects would let a cache keyed by object identity answer the 99 others); both scorers score the same
predictions against the same gold file. Each scorer runs in a child process of its own (a fresh interpreter: no cache
shared, peak memory its own), one after the other; each phase reports seconds, papers per second and the child's peak
resident memory during the phase (VmHWM, reset between phases). The load average is printed before and after: the
machine is shared, so compare the two scorers' ratios, not absolute seconds. Targets: 100 x 76 in <= 5 s on an
idle machine, peak <= 500 MB, linear growth.

The older scorer is read from a git worktree of ``--old COMMIT`` (default babf47c, made under /tmp if
missing) with that commit's own package layout: ``paperfields/``, with ``extract/`` and ``scoring/``
mapped to ``paperfields.extract`` and ``paperfields.scoring`` as its pyproject.toml says.

Run: .venv/bin/python bench/bench_scoring.py [--old COMMIT] [--no-old]
"""

from __future__ import annotations

import argparse
import copy
import importlib.abc
import importlib.util
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

from _machine import load_average, machine  # this folder is on sys.path when run as a script

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OLD = "babf47c"


def noisy(record: dict, rng: random.Random) -> dict:
    out = copy.deepcopy(record)
    # spelled out, not read from the field facts: the same noisy records must be built for an old checkout
    for field in ("tasks", "datasets", "models", "metrics", "baselines"):
        out[field] = [x for x in out[field] if rng.random() > 0.3] + (
            [f"Invented Thing {rng.randint(0, 9)}"] if rng.random() < 0.3 else []
        )
    out["results"] = [r for r in out["results"] if rng.random() > 0.3]
    return out


class _OldLayout(importlib.abc.MetaPathFinder):
    """Imports ``paperfields``, ``paperfields.extract`` and ``paperfields.scoring`` from a checkout's
    folders (ahead of this checkout's editable install); their submodules follow from ``__path__``."""

    def __init__(self, root: Path) -> None:
        self.folders = {
            "paperfields": root / "paperfields",
            "paperfields.extract": root / "extract",
            "paperfields.scoring": root / "scoring",
        }

    def find_spec(self, fullname, path=None, target=None):
        folder = self.folders.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


def _reset_peak() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # Linux: resets VmHWM, the peak resident set
    except OSError:
        pass


def _peak_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # since the process started


def child(root: Path, gold_path: Path) -> None:
    """Measure the scorer of the checkout at ``root`` (this one when it is ROOT); print one JSON line."""
    if root != ROOT:
        sys.meta_path.insert(0, _OldLayout(root))
    try:
        from paperfields.core.gold import load_gold
    except ImportError:  # before paperfields/core: gold lived in scoring/
        from paperfields.scoring.gold import load_gold
    import paperfields.scoring.score as scorer
    from paperfields.scoring.score import score_predictions

    assert Path(scorer.__file__).resolve().is_relative_to(root), scorer.__file__
    gold = load_gold(gold_path)
    rng = random.Random(0)
    phases = []
    for copies in (1, 10, 100):
        papers = [g.model_copy(update={"id": f"{g.id}-{i}"}) for i in range(copies) for g in gold]
        preds = {g.id: noisy(g.record.model_dump(mode="json"), rng) for g in papers}
        _reset_peak()
        start, cpu = time.perf_counter(), time.process_time()
        score_predictions(preds, papers, failures={}, run_id="bench", split="all", gold_version="bench")
        phases.append(
            {
                "what": f"{len(papers)} papers",
                "papers": len(papers),
                "seconds": time.perf_counter() - start,
                "cpu": time.process_time() - cpu,
                "peak_mb": _peak_mb(),
            }
        )
        del papers, preds
    # Fresh predictions for every run, drawn before the clock starts: objects no earlier run has seen (a cache
    # keyed by object identity gains nothing from a run before) and contents of their own, as 100 runs are.
    runs = [{g.id: noisy(g.record.model_dump(mode="json"), rng) for g in gold} for _ in range(100)]
    _reset_peak()
    start, cpu = time.perf_counter(), time.process_time()
    for preds in runs:
        score_predictions(preds, gold, failures={}, run_id="bench", split="all", gold_version="bench")
    phases.append(
        {
            "what": f"100 runs x {len(gold)} papers",
            "papers": 100 * len(gold),
            "seconds": time.perf_counter() - start,
            "cpu": time.process_time() - cpu,
            "peak_mb": _peak_mb(),
        }
    )
    print(
        json.dumps(
            {
                "scorer": str(scorer.__file__),
                "process_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "phases": phases,
            }
        )
    )


def _old_checkout(commit: str) -> Path:
    folder = Path("/tmp") / commit
    if not (folder / "scoring" / "score.py").is_file():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), commit],
            check=True,
            capture_output=True,
        )
    return folder


def _measure(root: Path, gold_path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(root), "--gold", str(gold_path)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"the scorer of {root} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default=DEFAULT_OLD, help="the commit to compare with (default %(default)s)")
    parser.add_argument("--no-old", action="store_true", help="measure this checkout only")
    parser.add_argument("--gold", type=Path, default=ROOT / "gold" / "gold.jsonl", help=argparse.SUPPRESS)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child.resolve(), args.gold)
        return
    print(machine())
    sides = [("this checkout", ROOT)] + ([] if args.no_old else [(args.old, _old_checkout(args.old))])
    before = os.getloadavg()
    results = {name: _measure(root, args.gold) for name, root in sides}
    after = os.getloadavg()
    print(
        f"load average (1, 5, 15 min): before {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}, "
        f"after {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}"
    )
    names = [name for name, _ in sides]
    print(
        f"{'':>24}"
        + "".join(f"{name + ': wall, CPU, peak RSS':>36}" for name in names)
        + ("   wall ratio" if len(names) > 1 else "")
    )
    for i, phase in enumerate(results[names[0]]["phases"]):
        cells = []
        for name in names:
            p = results[name]["phases"][i]
            cells.append(f"{p['seconds']:7.2f} s {p['cpu']:7.2f} cpu-s {p['peak_mb']:6.0f} MB")
        ratio = (
            f"   {results[names[0]]['phases'][i]['seconds'] / results[names[1]]['phases'][i]['seconds']:9.2f}"
            if len(names) > 1
            else ""
        )
        print(f"{phase['what']:>24}" + "".join(f"{c:>36}" for c in cells) + ratio)
    mine = results[names[0]]["phases"]
    print(
        f"this checkout: 100 runs x 76 papers in {mine[-1]['seconds']:.2f} s, {mine[-1]['cpu']:.2f} CPU s (target "
        f"<= 5 s idle), peak {max(p['peak_mb'] for p in mine):.0f} MB (target <= 500 MB); growth 76 -> 760 -> "
        f"7,600 papers: {mine[1]['seconds'] / mine[0]['seconds']:.1f}x, "
        f"{mine[2]['seconds'] / mine[1]['seconds']:.1f}x the time for 10x the papers"
    )
    print(f"load average (1, 5, 15 min) after: {load_average()}")


if __name__ == "__main__":
    main()
