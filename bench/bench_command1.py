"""The README's first command on a fresh machine, idle and with a CPU hog on one core, side by side.

For each side: a fresh clone of this checkout's HEAD and an empty home folder (so ``./install.sh``
builds llama-cpp-python and installs everything as a new user's machine would), then the README's
command 1, ``./install.sh && .venv/bin/paperfields run``, timed as a whole and in its two parts. After
each side it checks what the README promises: the command succeeded, ``git status`` of the clone is
clean, and the run's records are identical, paper for paper, to the published run's. The hog is one
busy Python process (``while True: pass``) started before the command and stopped after it.

Targets: issue 39 item 3, at most 8 minutes on idle cores, install included (issue 29's were 12, stretch 10);
with the hog no worse than 1.5x the idle side. Both sides run one after the other, so each takes the machine as
it finds it: the load average is printed before and after each.

Run: .venv/bin/python bench/bench_command1.py [--no-hog] [--keep]   (about 20 minutes on 2 cores, 9 with --no-hog)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _machine import load_average, reports_machine  # this folder is on sys.path when run as a script

from paperfields.core.runlog import read_predictions

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "results" / "runs" / "local_qwen2.5-coder-0.5b__zero_shot__test" / "predictions.jsonl"


def _records(path: Path) -> dict[str, object]:
    return {line.paper_id: line.record for line in read_predictions(path)}


def side(folder: Path, hog: bool) -> dict[str, object]:
    """Clone, install and run in ``folder``; returns seconds (install, run, total) and the checks."""
    clone, home = folder / "clone", folder / "home"
    home.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERFIELDS_", "VIRTUAL_ENV", "XDG_"))} | {
        "HOME": str(home)
    }
    hog_process = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if hog else None
    try:
        print(f"  {'with a CPU hog on one core' if hog else 'no hog'}: load before {load_average()}", flush=True)
        start = time.perf_counter()
        with (folder / "install.log").open("w") as log:
            installed = subprocess.run(["./install.sh"], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT)
        middle = time.perf_counter()
        with (folder / "run.log").open("w") as log:
            ran = (
                subprocess.run(
                    [".venv/bin/paperfields", "run"], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT
                )
                if installed.returncode == 0
                else installed
            )
        end = time.perf_counter()
    finally:
        if hog_process is not None:
            hog_process.kill()
            hog_process.wait()
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout
    published = _records(PUBLISHED)
    runs = list((clone / "runs").glob("*/predictions.jsonl"))
    mine = _records(runs[0]) if len(runs) == 1 else {}
    same = sum(1 for paper, record in published.items() if paper in mine and mine[paper] == record)
    print(
        f"  load after {load_average()}; exit {ran.returncode}; git status "
        f"{'clean' if not status else 'NOT clean: ' + status.strip()}; records identical to "
        f"the published run on {same}/{len(published)} papers",
        flush=True,
    )
    return {
        "install": middle - start,
        "run": end - middle,
        "total": end - start,
        "ok": ran.returncode == 0 and not status and same == len(published),
    }


@reports_machine
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-hog", action="store_true", help="measure the idle side only")
    parser.add_argument("--keep", action="store_true", help="keep the clones (under the printed folder)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="paperfields-command1-"))
    print(f"clones under {base}")
    try:
        sides = {"idle": side(base / "idle", hog=False)}
        if not args.no_hog:
            sides["hog"] = side(base / "hog", hog=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    for name, t in sides.items():
        print(
            f"{name:>5}: install {t['install'] / 60:5.1f} min, run {t['run'] / 60:5.1f} min, total "
            f"{t['total'] / 60:5.1f} min{'' if t['ok'] else '  (a check failed: see above)'}"
        )
    idle = sides["idle"]["total"] / 60
    print(
        f"idle total {idle:.1f} min (target <= 8, install included)"
        + (
            f"; hog / idle = {sides['hog']['total'] / sides['idle']['total']:.2f} (target <= 1.5)"
            if "hog" in sides
            else ""
        )
    )


if __name__ == "__main__":
    main()
