"""Counts in messages: ``1 abstract``, ``2 abstracts``, never ``1 abstracts`` or ``paper(s)``; ``the run's one paper
has no gold record``, never ``none of the run's 1 paper has``."""

from __future__ import annotations

from typing import Optional


def plural(count: int, noun: str, nouns: Optional[str] = None) -> str:
    """``count`` and ``noun``, the noun in the plural unless ``count`` is 1: ``plural(1, "abstract")`` is
    ``"1 abstract"``, ``plural(0, "abstract")`` ``"0 abstracts"``. ``nouns`` is the plural when it is not
    ``noun + "s"`` (``plural(2, "cache hit")`` needs none; ``plural(2, "query", "queries")`` does)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def none_has(count: int, noun: str, owner: str, thing: str, nouns: Optional[str] = None) -> str:
    """That no one of ``count`` ``noun`` of ``owner`` has ``thing``, worded for the count:
    ``none_has(2, "paper", "the run's", "gold record")`` is ``"none of the run's 2 papers has a gold record"``,
    ``none_has(1, ...)`` ``"the run's one paper has no gold record"`` (never "none of the run's 1 paper")."""
    if count == 1:
        return f"{owner} one {noun} has no {thing}"
    return f"none of {owner} {plural(count, noun, nouns)} has a{'n' if thing[:1] in 'aeiou' else ''} {thing}"


def any_of(count: int, noun: str, owner: str, nouns: Optional[str] = None) -> str:
    """``any_of(2, "paper", "the run's")`` is ``"any of the run's 2 papers"``, ``any_of(1, ...)`` ``"the run's
    one paper"`` (never "any of the run's 1 paper"), for a sentence such as "no gold for ..."."""
    if count == 1:
        return f"{owner} one {noun}"
    return f"any of {owner} {plural(count, noun, nouns)}"
