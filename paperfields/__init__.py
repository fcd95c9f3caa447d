"""PaperFields: a benchmark for LLM structured extraction from ML paper abstracts.

The Python API (:mod:`paperfields.api`) is re-exported here: ``paperfields.extract`` (one
abstract; the extract/ subpackage, which forwards calls to :func:`paperfields.api.extract`), ``paperfields.run`` (a corpus), ``paperfields.score`` (predictions or a run) and
``paperfields.load_scores`` (a run's per-paper scores as a pandas DataFrame). They load on first
use, so ``import paperfields`` (and the command line) stays fast.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_API = ("extract", "run", "score", "load_scores", "find_run", "ExtractionFailure", "RunResult", "DEFAULT_BACKEND")
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    # PEP 562: the API loads on first use. `paperfields.extract` is the subpackage of extract/, which is
    # callable: paperfields.extract(abstract, ...) runs paperfields.api.extract.
    if name == "extract":
        import importlib

        return importlib.import_module("paperfields.extract")
    if name in _API:
        from paperfields import api

        return getattr(api, name)
    raise AttributeError(f"module 'paperfields' has no attribute {name!r}")
