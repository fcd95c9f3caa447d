"""A built wheel, installed (not editable) into a fresh venv, runs from a folder outside the checkout.

No network: the wheel is built with the project venv's own setuptools (``--no-build-isolation``,
``--no-index``), installed with ``--no-index --no-deps``, and the fresh venv finds the dependencies
through a ``.pth`` line naming the project venv's site-packages, which puts them *after* its own
site-packages (the fresh wheel's ``paperfields`` wins; the editable install's finder, loaded only by
a ``.pth`` file in a site dir, is never activated there).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

_NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "runs", "results", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from a copy of the working tree (so a build never writes build/ into the checkout)."""
    base = tmp_path_factory.mktemp("wheel")
    source = shutil.copytree(ROOT, base / "src", ignore=_NOT_SOURCE)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(source),
            "-w",
            str(base / "dist"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SetuptoolsDeprecationWarning" not in proc.stderr and "2027-Feb-18" not in proc.stdout + proc.stderr
    (built,) = (base / "dist").glob("paperfields-*.whl")
    return built


@pytest.fixture(scope="module")
def fresh(wheel, tmp_path_factory) -> Path:
    """A fresh venv with only the wheel installed; returns its bin/ folder."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", "--no-deps", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    own = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (own / "zz_project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PAPERFIELDS_ROOT", "PYTHONPATH")}
    return env


def test_the_wheel_ships_gold_prompts_and_the_license(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in (
        "gold/corpus.jsonl",
        "gold/gold.jsonl",
        "gold/GUIDELINES.md",
        "gold/AGREEMENT.md",
        "gold/scorer_judgments.jsonl",
        "prompts/zero_shot.toml",
        "prompts/few_shot.toml",
        "core/tables/prices.toml",
    ):
        assert f"paperfields/{name}" in names, name
    tracked = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "gold", "prompts"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked and all(f"paperfields/{name}" in names for name in tracked), set(tracked) - {
        n.removeprefix("paperfields/") for n in names
    }
    license_files = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert len(license_files) == 1 and "Apache License" in zipfile.ZipFile(wheel).read(license_files[0]).decode()
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    head = zipfile.ZipFile(wheel).read(metadata).decode().split("\n\n")[0]
    assert "License-Expression: Apache-2.0" in head and "License-File: LICENSE" in head


def test_the_wheel_ships_the_inspect_task_and_its_entry_point(wheel):
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    assert {"paperfields/integrations/inspect_task.py", "paperfields/integrations/inspect_log.py"} <= names
    entry_points = archive.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    # inspect eval paperfields/paperfields loads this module through the inspect_ai group
    assert "[inspect_ai]\npaperfields = paperfields.integrations.inspect_task" in entry_points
    assert "[openbench.benchmarks]\npaperfields = paperfields.integrations.openbench:benchmark_metadata" in entry_points
    assert {"paperfields/integrations/inspect_model.py", "paperfields/extract/backends/gemma3.jinja"} <= names
    metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert 'Requires-Dist: inspect_ai==0.3.276; extra == "inspect"' in metadata


def test_the_installed_package_reads_its_own_gold_and_prompts(fresh, tmp_path):
    probe = (
        "import json, paperfields, paperfields.core.paths as p; print(json.dumps({'module': paperfields.__file__, "
        "'checkout': str(p.checkout_root()), 'gold': str(p.gold_dir()), 'prompts': str(p.prompts_dir()), 'runs': "
        "str(p.user_runs_dir()), 'results': str(p.results_dir())}))"
    )
    proc = subprocess.run(
        [str(fresh / "python"), "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=_clean_env()
    )
    assert proc.returncode == 0, proc.stderr
    where = json.loads(proc.stdout)
    package = Path(where["module"]).parent
    assert package.parent.parent.parent.parent == fresh.parent  # <venv>/lib/pythonX.Y/site-packages/paperfields
    assert where["checkout"] == "None"
    assert Path(where["gold"]) == package / "gold" and (package / "gold" / "gold.jsonl").is_file()
    assert Path(where["prompts"]) == package / "prompts" and (package / "prompts" / "zero_shot.toml").is_file()
    assert Path(where["runs"]) == tmp_path / "runs" and Path(where["results"]) == tmp_path / "results"


def test_paperfields_run_from_a_folder_outside_the_checkout(fresh, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    # A folder that is some other git repository: its commit is not the package's.
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(work),
            "-c",
            "user.name=u",
            "-c",
            "user.email=u@example.org",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    proc = subprocess.run(
        [str(fresh / "paperfields"), "run", "-b", "rules/baseline", "--limit", "2"],
        capture_output=True,
        text=True,
        cwd=work,
        env=_clean_env(),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = work / "runs" / "rules_baseline__zero_shot__test"
    lines = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and all(line["record"] is not None for line in lines)
    manifest = json.loads((run / "manifest.json").read_text())
    assert (
        manifest["papers_total"] == 2
        and manifest["config"]["backend"] == "rules/baseline"
        and manifest["git_commit"] is None
    )
    scores = json.loads((run / "scores.json").read_text())
    assert scores["papers"] == 2 and scores["headline"] is not None
    assert sorted(p.name for p in work.iterdir()) == [".git", "runs"]  # nothing else written into the working folder


def test_paths_in_a_checkout_root_override_and_fallback(tmp_path, monkeypatch):
    from paperfields.core import paths

    monkeypatch.delenv("PAPERFIELDS_ROOT", raising=False)
    assert (
        paths.checkout_root() == ROOT and paths.gold_dir() == ROOT / "gold" and paths.user_runs_dir() == ROOT / "runs"
    )
    assert paths.shipped_dir("gold") is None  # an editable install reads the checkout's own folders
    (tmp_path / "gold").mkdir()
    monkeypatch.setenv("PAPERFIELDS_ROOT", str(tmp_path))
    # A root of one's own: its gold/ is used; prompts/ it lacks
    # come from the checkout; runs/ and results/ are written there.
    assert paths.gold_dir() == tmp_path / "gold" and paths.prompts_dir() == ROOT / "prompts"
    assert paths.user_runs_dir() == tmp_path / "runs" and paths.published_runs_dir() == tmp_path / "results" / "runs"
    with pytest.raises(ValueError, match="'results' is not shipped"):
        paths.shipped_dir("results")
