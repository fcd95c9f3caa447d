"""Where the project's data lives: gold/, prompts/, results/ (published runs), runs/ (a user's runs).

The root is ``$PAPERFIELDS_ROOT`` when set, else the checkout this package was installed from
(editable install), else the current directory.
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The folder holding gold/, prompts/ and results/."""
    if os.environ.get("PAPERFIELDS_ROOT"):
        return Path(os.environ["PAPERFIELDS_ROOT"])
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "gold").is_dir() and (checkout / "prompts").is_dir():
        return checkout
    return Path.cwd()


def gold_dir() -> Path:
    return project_root() / "gold"


def prompts_dir() -> Path:
    return project_root() / "prompts"


def results_dir() -> Path:
    return project_root() / "results"


def published_runs_dir() -> Path:
    """``results/runs``: the published runs, the only ones on the leaderboard and in an export."""
    return results_dir() / "runs"


def user_runs_dir() -> Path:
    """``runs/`` at the project root (git-ignored): where ``paperfields run`` writes by default, so a
    user's runs never change the published board; ``paperfields publish`` moves a finished one over."""
    return project_root() / "runs"
