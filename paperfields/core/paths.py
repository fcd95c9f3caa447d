"""Where the project's data lives: gold/ and prompts/ (read), results/ and runs/ (written).

Read-only data, ``gold/`` and ``prompts/``, is taken from the first of:

1. ``$PAPERFIELDS_ROOT/gold`` (``/prompts``) when ``PAPERFIELDS_ROOT`` is set and that folder exists;
2. the source checkout this package runs from (an editable install, or ``python -m`` inside the repo);
3. the copy shipped inside the wheel (``site-packages/paperfields/gold`` and ``.../prompts``, found
   with :mod:`importlib.resources`), so a plain ``pip install paperfields-*.whl`` runs from any folder.

Writable places hang off :func:`project_root`: ``$PAPERFIELDS_ROOT`` when set, else the checkout,
else the current directory. So in a checkout nothing changes (``runs/`` and ``results/`` of the repo),
and a wheel install run from ``~/work`` writes its runs to ``~/work/runs/<run-id>`` and reads published
runs from ``~/work/results/runs`` (empty until ``paperfields publish`` copies a run there): the
benchmark's published board is not part of the wheel, because it changes with every scorer version.

The wheel's gold/ and prompts/ are read-only: commands that rewrite gold files (``corpus build``
without ``--out``, ``gold agreement``) should be pointed at a folder of one's own with
``PAPERFIELDS_ROOT``.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path
from typing import Optional

_SHIPPED = ("gold", "prompts")


def checkout_root() -> Optional[Path]:
    """The source checkout this package runs from (the folder holding ``gold/``, ``prompts/`` and
    ``paperfields/``), or None for a regular (non-editable) install."""
    checkout = Path(__file__).resolve().parents[2]  # paperfields/core/paths.py -> the checkout
    if all((checkout / name).is_dir() for name in _SHIPPED):
        return checkout
    return None


def project_root() -> Path:
    """The writable root holding ``results/`` and ``runs/``: ``$PAPERFIELDS_ROOT``, else the checkout,
    else the current directory (a wheel install)."""
    if os.environ.get("PAPERFIELDS_ROOT"):
        return Path(os.environ["PAPERFIELDS_ROOT"])
    return checkout_root() or Path.cwd()


def shipped_dir(name: str) -> Optional[Path]:
    """The copy of ``gold`` or ``prompts`` installed inside the package (wheel installs), or None when
    the package has none (an editable install, whose data is the checkout's). Raises ValueError for
    any other name, and RuntimeError when the package is not on a file system (a zip import), where
    files could not be handed out as paths."""
    if name not in _SHIPPED:
        raise ValueError(f"{name!r} is not shipped with the package (only {', '.join(_SHIPPED)})")
    folder = resources.files("paperfields").joinpath(name)
    if not folder.is_dir():
        return None
    if not isinstance(folder, Path):
        raise RuntimeError(
            f"paperfields is installed in a zip ({folder}); install it as a folder to read its {name}/ files"
        )
    return folder


def _read_only_dir(name: str) -> Path:
    if os.environ.get("PAPERFIELDS_ROOT") and (Path(os.environ["PAPERFIELDS_ROOT"]) / name).is_dir():
        return Path(os.environ["PAPERFIELDS_ROOT"]) / name
    checkout = checkout_root()
    if checkout is not None:
        return checkout / name
    # Neither: the wheel's copy, or (an install with neither) project_root()/name, whose "no such
    # file" error names a path the user can create.
    return shipped_dir(name) or project_root() / name


def gold_dir() -> Path:
    """The ``gold/`` folder (corpus.jsonl, gold.jsonl, GUIDELINES.md, AGREEMENT.md, ...), chosen as the
    module docstring says; read-only when it is the wheel's copy. The folder may not exist."""
    return _read_only_dir("gold")


def prompts_dir() -> Path:
    """The ``prompts/`` folder (one ``<strategy>.toml`` per strategy), chosen as the module docstring says."""
    return _read_only_dir("prompts")


def results_dir() -> Path:
    """``results/`` under :func:`project_root` (leaderboard files and published runs)."""
    return project_root() / "results"


def published_runs_dir() -> Path:
    """``results/runs``: the published runs, the only ones on the leaderboard and in an export."""
    return results_dir() / "runs"


def user_runs_dir() -> Path:
    """``runs/`` at the project root (git-ignored in a checkout; the current directory's ``runs/`` for a
    wheel install): where ``paperfields run`` writes by default, so a user's runs never change the
    published board; ``paperfields publish`` moves a finished one over."""
    return project_root() / "runs"


def table(name: str) -> Path:
    """A data table shipped inside the package, ``paperfields/core/tables/<name>`` (``prices.toml``: USD
    per million tokens; ``cutoffs.toml``: models' training-data cutoffs and the corpus's first public
    date), found with :mod:`importlib.resources` in a checkout and in a wheel alike. The file may not exist."""
    return Path(str(resources.files("paperfields.core").joinpath("tables", name)))


def run_reference(run_dir: Path) -> str:
    """How a command names the run in ``run_dir`` in a hint printed to the user (``paperfields report
    REF``, ``paperfields show PAPER --run REF``): its id when ``run_dir`` is in ``runs/`` or
    ``results/runs`` (where the commands look), else its id followed by ``--runs-dir FOLDER`` (the
    folder quoted for a shell when it needs it), so the hint works when copied as it is."""
    import shlex

    parent = run_dir.parent.resolve()
    if parent in (user_runs_dir().resolve(), published_runs_dir().resolve()):
        return run_dir.name
    return f"{run_dir.name} --runs-dir {shlex.quote(str(run_dir.parent))}"


# A submission's name (submissions/<name>/, the run id <name>__submitted__test): lower-case letters, digits, '.',
# '_' or '-', at most 64, never a path; here in core for the board and the submissions alike (no cycle).
SUBMISSION_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
