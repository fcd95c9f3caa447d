"""PNG figures drawn once: a cache of their bytes, and worker processes that draw the ones it misses.

A figure is ``draw(*inputs) -> bytes``: a module-level function that draws its inputs with matplotlib (Agg) and
returns the PNG's bytes, reading nothing else. ``paperfields leaderboard`` draws about 2.5 figures per run
(the board's plots, each run's calibration plots, each report's field bars), and drawing was most of its time;
they rarely change between two regenerations of the board, so:

- :func:`png` keeps each figure's bytes under ``$PAPERFIELDS_CACHE/plots`` (default
  ``~/.cache/paperfields/plots``), named by the sha256 of the draw function, its inputs (every field of every
  model, in full: :func:`inputs_key`) and :func:`code_version` (this checkout's source files, the versions of
  matplotlib, numpy, Pillow and FreeType, matplotlib's settings and the font it draws with). Any changed input
  or line of code names another file, so a figure is never served stale; ``PAPERFIELDS_PLOT_CACHE=off`` turns
  the cache off (every figure drawn).
- inside :func:`drawing`, :func:`submit` starts the figures a command will ask for in :data:`WORKERS` worker
  process(es) while the command does its other work (the difficulty view, the reports' HTML); :func:`png` then
  waits for the one it asks, or draws it itself when no worker has begun it. A worker runs the same code as the command,
  so its bytes are the same (a test compares the bytes drawn in a worker, in the command and from the cache).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import multiprocessing
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel

Draw = Callable[..., bytes]
# Two worker processes draw while the command computes the difficulty view and writes the reports; the command
# then draws the figures no worker has begun. Measured on 2 cores (today's board, an empty cache, alternated):
# 17.4 and 21.5 s wall with two workers, 21.5 and 22.2 s with one.
WORKERS = 2
CACHE_SWITCH = "PAPERFIELDS_PLOT_CACHE"


def cache_dir() -> Optional[Path]:
    """Where figures are kept: ``plots`` in the cache folder (``$PAPERFIELDS_CACHE``, else
    ``$XDG_CACHE_HOME/paperfields``, else ``~/.cache/paperfields``, as the model weights' cache); None when
    ``PAPERFIELDS_PLOT_CACHE=off``."""
    if os.environ.get(CACHE_SWITCH, "").strip().lower() in ("off", "0", "no", "false"):
        return None
    if os.environ.get("PAPERFIELDS_CACHE"):
        return Path(os.environ["PAPERFIELDS_CACHE"]) / "plots"
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "paperfields" / "plots"


@lru_cache(maxsize=1)
def code_version() -> str:
    """sha256 of what a figure's pixels depend on besides its inputs: every source file of the installed
    paperfields packages (the plots and the constants they read), the versions of matplotlib, numpy, Pillow
    and FreeType, matplotlib's settings (a matplotlibrc changes them) and the font file it draws text with."""
    import matplotlib
    import numpy
    import PIL
    from matplotlib import font_manager, ft2font

    import paperfields
    import paperfields.core
    import paperfields.scoring

    digest = hashlib.sha256()
    for module in (paperfields, paperfields.core, paperfields.scoring):
        for path in sorted(Path(module.__file__).parent.glob("*.py")):
            digest.update(f"{module.__name__}/{path.name}\0".encode())
            digest.update(path.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = sorted((key, repr(value)) for key, value in dict.items(matplotlib.rcParams) if key != "backend")
        font = font_manager.findfont(font_manager.FontProperties())
    versions = (matplotlib.__version__, numpy.__version__, PIL.__version__, ft2font.__freetype_version__)
    digest.update(repr((versions, settings, font, os.path.getsize(font))).encode())
    return digest.hexdigest()


def _plain(value: Any) -> Any:
    """``value`` as plain JSON data, in full and tagged by kind (a float, a list, a mapping, a set, a model are
    never read as one another): a pydantic model as every one of its fields (excluded ones too), a dataclass
    as its fields. Raises TypeError for anything else, so that no input is hashed by a repr that might leave
    part of it out."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return {"float": repr(value)}  # nan and inf too; repr round-trips every float
    if isinstance(value, (list, tuple)):
        return ["list", *(_plain(v) for v in value)]
    if isinstance(value, (set, frozenset)):
        return ["set", *sorted((_plain(v) for v in value), key=repr)]
    if isinstance(value, dict):
        return ["dict", *([_plain(k), _plain(v)] for k, v in value.items())]  # in order: a plot may draw in it
    if isinstance(value, BaseModel):
        names = [*type(value).model_fields, *(value.model_extra or {})]
        return ["model", type(value).__qualname__, *([name, _plain(getattr(value, name))] for name in names)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return ["dataclass", type(value).__qualname__, *([f.name, _plain(getattr(value, f.name))] for f in fields)]
    raise TypeError(f"a figure's input must be plain data, a pydantic model or a dataclass, not {type(value)!r}")


def inputs_key(draw: Draw, inputs: tuple[Any, ...]) -> str:
    """The cache key of ``draw(*inputs)``: sha256 of the function's name, its inputs in full (:func:`_plain`) and
    :func:`code_version`. Inside :func:`drawing`, a figure asked again with the very same input objects (started,
    then written) is keyed once: the block holds them, and their owners do not change them meanwhile."""
    session = _SESSION.get()
    if session is None:
        return _key(draw, inputs)
    known = session.keys.get((draw, *map(id, inputs)))
    if known is not None and all(a is b for a, b in zip(known[0], inputs)):
        return known[1]
    key = _key(draw, inputs)
    session.keys[(draw, *map(id, inputs))] = (inputs, key)
    return key


def _key(draw: Draw, inputs: tuple[Any, ...]) -> str:
    text = json.dumps([draw.__module__, draw.__qualname__, _plain(inputs), code_version()], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Session:
    """The figures started in the worker processes during one :func:`drawing` block, by key."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.pool: Optional[ProcessPoolExecutor] = None
        self.started: dict[str, Future] = {}
        self.keys: dict[tuple[Any, ...], tuple[tuple[Any, ...], str]] = {}  # (draw, input ids) -> (inputs, key)

    def start(self, key: str, draw: Draw, inputs: tuple[Any, ...]) -> None:
        if self.pool is None:
            # fork where it is safe and cheap (Linux): the workers start with this process's modules, pyplot among
            # them (imported once here rather than once per worker)
            method = "fork" if sys.platform == "linux" else "spawn"
            if method == "fork":
                import matplotlib

                matplotlib.use("Agg")
                import matplotlib.pyplot
            self.pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context(method))
        self.started[key] = self.pool.submit(draw, *inputs)


_SESSION: ContextVar[Optional[_Session]] = ContextVar("paperfields_drawing", default=None)


@contextmanager
def drawing(workers: int = WORKERS) -> Iterator[None]:
    """Within this block, :func:`submit` draws figures in ``workers`` processes (0: none, every figure drawn by
    :func:`png` in this process); the processes end with the block. Nested blocks share the outer one."""
    if _SESSION.get() is not None or workers < 1:
        yield
        return
    session = _Session(workers)
    token = _SESSION.set(session)
    try:
        yield
    finally:
        _SESSION.reset(token)
        if session.pool is not None:
            session.pool.shutdown(wait=True, cancel_futures=True)


def _cached(key: str) -> Optional[bytes]:
    folder = cache_dir()
    if folder is None:
        return None
    try:
        return (folder / f"{key}.png").read_bytes()
    except OSError:
        return None


def _keep(key: str, data: bytes) -> None:
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"{key}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        tmp.replace(folder / f"{key}.png")  # whole or not at all: another board may read it meanwhile
    except OSError:
        pass  # a cache that cannot be written is only slower


def submit(draw: Draw, *inputs: Any) -> None:
    """Start drawing ``draw(*inputs)`` in a worker process when inside :func:`drawing` and the figure is neither
    cached nor started; else nothing (:func:`png` draws it when asked)."""
    session = _SESSION.get()
    if session is None:
        return
    key = inputs_key(draw, inputs)
    if key not in session.started and (cache_dir() is None or not (cache_dir() / f"{key}.png").is_file()):
        session.start(key, draw, inputs)


def png(draw: Draw, *inputs: Any) -> bytes:
    """The PNG bytes of ``draw(*inputs)``: from the cache, else from the worker that :func:`submit` started, else
    drawn here; a drawn figure is kept in the cache. Raises what ``draw`` raises."""
    key = inputs_key(draw, inputs)
    session = _SESSION.get()
    started = session.started.pop(key, None) if session is not None else None
    data = _cached(key) if started is None else None
    if data is None:
        # a figure no worker has begun is drawn here: the command, done with its other work, draws beside them
        data = started.result() if started is not None and not started.cancel() else draw(*inputs)
        _keep(key, data)
    return data
