"""Counts in messages: ``1 abstract``, ``2 abstracts``, never ``1 abstracts`` or ``paper(s)``."""

from __future__ import annotations

from typing import Optional


def plural(count: int, noun: str, nouns: Optional[str] = None) -> str:
    """``count`` and ``noun``, the noun in the plural unless ``count`` is 1: ``plural(1, "abstract")`` is
    ``"1 abstract"``, ``plural(0, "abstract")`` ``"0 abstracts"``. ``nouns`` is the plural when it is not
    ``noun + "s"`` (``plural(2, "cache hit")`` needs none; ``plural(2, "query", "queries")`` does)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
