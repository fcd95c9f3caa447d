"""`paperfields leaderboard` in seconds: today's published runs, then 30 and 100 runs (made-up submissions for the
extra ones), for this checkout and, side by side in the same minutes, an older commit's (on today's runs only by
default: the older board was quadratic in runs).

Each board is regenerated in a project folder of its own under a temporary folder (``PAPERFIELDS_ROOT``): the
published runs copied, each extra run a copy of a published contender under a run id of its own (its scores and
manifest say that id; its predictions are the same bytes, so its stored scores are not stale). Each side runs the
command in a child process of its own (a fresh interpreter, as a user's shell gives), one after the other, and
reports wall seconds, CPU seconds (the child's user + system time) and how often the command opened each run's
``predictions.jsonl`` (an audit hook counts the opens). The two sides' written files are compared byte for byte.
The load average is printed before and after: the machine is shared, so compare the ratios, not absolute seconds.
Targets (issue 39 item 4): at most 5 s for today's runs, linear in runs, each stored file read once. This
checkout runs twice on each board: first with an empty plot cache of its own (every figure drawn, in worker
processes), then again on the same folder (every figure from the cache); the older commit once.

The older command is read from a git worktree of ``--old COMMIT`` (default de7febf, made under /tmp if missing).

Run: .venv/bin/python bench/bench_board.py [--runs 9,14,30,100] [--old COMMIT] [--old-up-to 10] [--no-plots]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _machine import load_average, machine  # this folder is on sys.path when run as a script

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OLD = "de7febf"
TEMPLATE = "local_qwen2.5-coder-0.5b__zero_shot__test"  # the published contender the made-up runs copy


def project(folder: Path, runs: int) -> Path:
    """A project folder holding today's published runs plus copies up to ``runs`` runs (the first ``runs`` of them,
    by name, when fewer than today's), gold and the README."""
    shutil.copytree(ROOT / "results" / "runs", folder / "results" / "runs")
    shutil.copytree(ROOT / "gold", folder / "gold")
    shutil.copy(ROOT / "README.md", folder / "README.md")
    published = sorted(p.name for p in (folder / "results" / "runs").iterdir() if p.is_dir())
    for name in published[runs:]:
        shutil.rmtree(folder / "results" / "runs" / name)
    published = published[:runs]
    for i in range(runs - len(published)):
        run_id = f"submitted_model-{i:03d}__zero_shot__test"
        target = folder / "results" / "runs" / run_id
        shutil.copytree(folder / "results" / "runs" / TEMPLATE, target)
        for name in ("scores.json", "manifest.json"):
            data = json.loads((target / name).read_text(encoding="utf-8"))
            data["run_id"] = run_id
            (target / name).write_text(json.dumps(data, indent=1), encoding="utf-8")
    return folder


def child(root: Path, plots: bool) -> None:
    """Regenerate the board of ``$PAPERFIELDS_ROOT`` with the command of the checkout at ``root``; print the
    opens of each ``predictions.jsonl`` as one JSON line."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_scoring import _OldLayout

    sys.meta_path.insert(0, _OldLayout(root))
    opens: dict[str, int] = {}

    def hook(event: str, args: tuple) -> None:
        if event == "open" and isinstance(args[0], (str, Path)) and str(args[0]).endswith("predictions.jsonl"):
            opens[str(args[0])] = opens.get(str(args[0]), 0) + 1

    sys.addaudithook(hook)
    import paperfields.cli as cli

    assert Path(cli.__file__).resolve().is_relative_to(root), cli.__file__
    try:
        cli.app(["leaderboard", "-q", *([] if plots else ["--no-plots"])])
    except SystemExit as exc:
        if exc.code:
            raise
    sys.stdout.write("\n" + json.dumps({"opens": sorted(opens.values())}) + "\n")


def _old_checkout(commit: str) -> Path:
    folder = Path("/tmp") / f"board-{commit}"
    if not (folder / "paperfields" / "cli.py").is_file():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), commit],
            check=True,
            capture_output=True,
        )
    return folder


def _measure(root: Path, folder: Path, plots: bool) -> dict:
    # the plot cache of this board's own (paperfields/figures.py): empty on a first run, warm on the second
    env = os.environ | {
        "PAPERFIELDS_ROOT": str(folder),
        "MPLCONFIGDIR": str(folder / ".mpl"),
        "PAPERFIELDS_CACHE": str(folder / ".cache"),
    }
    env.pop("PAPERFIELDS_PLOT_CACHE", None)
    cmd = [sys.executable, __file__, "--child", str(root)] + ([] if plots else ["--no-plots"])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"the board of {root} failed:\n{done.stderr}")
    opens = json.loads(done.stdout.strip().splitlines()[-1])["opens"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "opens": opens}


def _same_tree(a: Path, b: Path) -> bool:
    """Whether the files written under ``a/results`` and ``b/results`` and the two READMEs are byte for byte equal."""
    left = sorted(p.relative_to(a) for p in (a / "results").rglob("*") if p.is_file())
    right = sorted(p.relative_to(b) for p in (b / "results").rglob("*") if p.is_file())
    files = [*left, Path("README.md")]
    return left == right and all(filecmp.cmp(a / p, b / p, shallow=False) for p in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="", help="board sizes, comma-separated (default: today's runs,30,100)")
    parser.add_argument("--old", default=DEFAULT_OLD, help="the commit to compare with (default %(default)s)")
    parser.add_argument("--old-up-to", type=int, default=10, help="run the older command on boards up to this size")
    parser.add_argument("--no-old", action="store_true", help="measure this checkout only")
    parser.add_argument("--no-plots", action="store_true", help="leaderboard --no-plots (the PNG plots left out)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    plots = not args.no_plots
    if args.child:
        child(args.child.resolve(), plots)
        return
    print(machine(), flush=True)
    today = len(list((ROOT / "results" / "runs").glob("*/scores.json")))
    sizes = [int(n) for n in args.runs.split(",")] if args.runs else [9, today, 30, 100]
    old = None if args.no_old else _old_checkout(args.old)
    print(f"paperfields leaderboard{'' if plots else ' --no-plots'}; this checkout against {args.old}")
    print(f"{'runs':>5} {'side':>14} {'wall s':>8} {'CPU s':>8} {'CPU s/run':>10} {'opens/run':>10}  output")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            base = project(Path(tmp) / f"base-{n}", n)
            with_old = old is not None and n <= args.old_up_to
            folders = {"this": Path(tmp) / f"{n}-this", "old": Path(tmp) / f"{n}-old"}
            results = {}
            shutil.copytree(base, folders["this"], symlinks=True)
            results["cold"] = _measure(ROOT, folders["this"], plots)  # an empty plot cache
            results["warm"] = _measure(ROOT, folders["this"], plots)  # the same board again: every figure kept
            if with_old:
                shutil.copytree(base, folders["old"], symlinks=True)
                results["old"] = _measure(old, folders["old"], plots)
            same = (
                ("identical to " if _same_tree(folders["this"], folders["old"]) else "DIFFERS from ") + args.old
                if with_old
                else ""
            )
            for key, name in (("cold", "this, cold"), ("warm", "this, warm"), ("old", args.old)):
                if key not in results:
                    continue
                r = results[key]
                opens = r["opens"]
                print(
                    f"{n:>5} {name:>14} {r['wall']:8.2f} {r['cpu']:8.2f} {r['cpu'] / n:10.3f} "
                    f"{(sum(opens) / len(opens) if opens else 0):10.1f}  {same if key == 'cold' else ''}",
                    flush=True,
                )
            if with_old:
                b = results["old"]
                for key in ("cold", "warm"):
                    a = results[key]
                    print(
                        f"{'':>5} {key + '/old':>14} {a['wall'] / b['wall']:8.2f} {a['cpu'] / b['cpu']:8.2f}",
                        flush=True,
                    )
            print(f"{'':>5} load average now: {load_average()}", flush=True)
            for folder in folders.values():
                shutil.rmtree(folder, ignore_errors=True)  # the older side's is made only up to --old-up-to
            shutil.rmtree(base)
    print(f"load average (1, 5, 15 min) after: {load_average()}")


if __name__ == "__main__":
    main()
