"""Where the project's data lives: gold/, prompts/, results/.

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
