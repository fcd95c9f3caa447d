"""Each stored file read once per command: a scope (:func:`read_once`) inside which a file's bytes, and what
is parsed from them, are kept and handed out again.

``paperfields leaderboard`` reads every run several times over (its scores for the board, its predictions for
what models get wrong and again for its report, the gold and corpus for every report); inside the scope each
file is read once and each parse made once. A value is keyed by the file's real path, size and modification
time, so a file written inside the scope is read again. Outside a scope nothing is kept: every call reads
the file, as before. What is handed out is shared: callers treat it as read-only (a list is copied).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Optional, TypeVar

T = TypeVar("T")

_SCOPE: ContextVar[Optional[dict[tuple[Any, ...], Any]]] = ContextVar("paperfields_read_once", default=None)


@contextmanager
def read_once() -> Iterator[None]:
    """Within this block, :func:`file_bytes` and :func:`parsed`
    read each file once (nested blocks share the outer one)."""
    if _SCOPE.get() is not None:
        yield
        return
    token = _SCOPE.set({})
    try:
        yield
    finally:
        _SCOPE.reset(token)


def _key(path: Path, what: str) -> tuple[Any, ...]:
    st = os.stat(path)  # FileNotFoundError as read_bytes would raise it
    return (os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino, what)


def file_bytes(path: Path) -> bytes:
    """``path``'s bytes (``Path.read_bytes``); inside :func:`read_once`, read once. Raises OSError as reading does."""
    return parsed(path, "bytes", lambda data: data)


def parsed(path: Path, what: str, parse: Callable[[bytes], T]) -> T:
    """``parse(path's bytes)``; inside :func:`read_once`, computed once per file and ``what`` (the name of the
    parse: another parse of the same file is kept apart). Raises what reading or ``parse`` raises."""
    scope = _SCOPE.get()
    if scope is None:
        return parse(path.read_bytes())
    key = _key(path, what)
    if key not in scope:
        scope[key] = path.read_bytes() if what == "bytes" else parse(file_bytes(path))
    return scope[key]
