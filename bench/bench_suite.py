"""The test suite's wall time and peak resident memory, per test file, for this checkout and, side by side in the
same minutes, an older commit's (its own tests against its own code).

Each side runs ``python -m pytest FILES -q`` in a child process of its own, one after the other, under GNU
``/usr/bin/time``: wall seconds, CPU seconds (user + system of pytest and the children it waited for: llama.cpp's
server, CLI children) and the peak resident set of the largest of them (pytest itself, which loads the models
in-process). The older commit's code is read from a git worktree of ``--old COMMIT`` (default de7febf, made under /tmp
if missing) through a ``sitecustomize`` that maps ``paperfields``, ``paperfields.extract`` and ``paperfields.scoring``
to its folders (bench_scoring.py's ``_OldLayout``). The load average is printed before and after: compare the ratios.
Targets (issue 39 item 7): README command 2's pytest within 10 minutes on idle cores and 2 GB peak.

Run: .venv/bin/python bench/bench_suite.py [--old COMMIT] [--no-old] [FILES ...]   (default: the model test files)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _machine import load_average, machine  # this folder is on sys.path when run as a script

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
DEFAULT_OLD = "de7febf"
MODEL_FILES = ("tests/test_local_model.py", "tests/test_gemma.py", "tests/test_grammar.py")

SITECUSTOMIZE = """\
import sys
from pathlib import Path
sys.path.insert(0, {bench!r})
from bench_scoring import _OldLayout
sys.meta_path.insert(0, _OldLayout(Path({root!r})))
"""


def _old_checkout(commit: str) -> Path:
    folder = Path("/tmp") / f"board-{commit}"
    if not (folder / "paperfields" / "cli.py").is_file():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), commit],
            check=True,
            capture_output=True,
        )
    return folder


def _measure(root: Path, files: list[str], tmp: Path) -> dict:
    env = dict(os.environ)
    if root != ROOT:
        site = tmp / f"site-{root.name}"
        site.mkdir(exist_ok=True)
        (site / "sitecustomize.py").write_text(SITECUSTOMIZE.format(bench=str(HERE), root=str(root)))
        env["PYTHONPATH"] = str(site)
    report = tmp / f"time-{root.name}.txt"
    # GNU time: elapsed, user, system seconds and the peak resident set (KB) of pytest and the children it waited for
    cmd = ["/usr/bin/time", "-f", "%e %U %S %M", "-o", str(report), sys.executable, "-m", "pytest", *files, "-q"]
    done = subprocess.run([*cmd, "-p", "no:cacheprovider"], cwd=root, env=env, capture_output=True, text=True)
    wall, user, system, peak_kb = report.read_text().split()[-4:]
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    return {"wall": float(wall), "cpu": float(user) + float(system), "peak_mb": int(peak_kb) / 1024, "summary": summary}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="test files, relative to each checkout (default: the model tests)")
    parser.add_argument("--old", default=DEFAULT_OLD, help="the commit to compare with (default %(default)s)")
    parser.add_argument("--no-old", action="store_true", help="measure this checkout only")
    args = parser.parse_args()
    files = args.files or list(MODEL_FILES)
    print(machine(), flush=True)
    sides = [("this checkout", ROOT)] + ([] if args.no_old else [(args.old, _old_checkout(args.old))])
    print(f"pytest {' '.join(files)}")
    print(f"{'side':>14} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}  pytest's summary")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, root in sides:
            r = results[name] = _measure(root, files, Path(tmp))
            print(f"{name:>14} {r['wall']:8.1f} {r['cpu']:8.1f} {r['peak_mb']:8.0f}  {r['summary']}", flush=True)
    if len(sides) == 2:
        a, b = results[sides[0][0]], results[sides[1][0]]
        print(f"{'ratio':>14} {a['wall'] / b['wall']:8.2f} {a['cpu'] / b['cpu']:8.2f}")
    print(f"load average (1, 5, 15 min) after: {load_average()}")


if __name__ == "__main__":
    main()
