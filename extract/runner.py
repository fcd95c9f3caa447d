"""Runner: extract every paper of a split with one backend and strategy, resumably.

A run folder ``results/runs/<run-id>/`` holds ``predictions.jsonl`` (one line per paper, appended
and flushed as each paper finishes, in finishing order) and ``manifest.json`` (the run config,
provenance and totals). Running the same config again resumes: finished papers are skipped, papers whose line is a
transport error (the model never answered) are asked again (the later line counts), and a line
cut off by a crash is dropped and its paper redone. Every other line is final for the run's config,
``request_rejected`` and ``context_overflow`` included (the same request would be refused again).
A different config in the same folder is refused, and so is a second run of the folder while one
is going (an exclusive lock, ``.lock`` in the folder, holding the PID of the run that has it).
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import os
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Optional

from paperfields.core.corpus import Paper
from paperfields.core.runlog import (
    Concurrency,
    FailureClass,
    Generation,
    Manifest,
    PredictionLine,
    RunConfig,
    RunError,
    Usage,
    cap_raw_text,
    git_commit,
    iter_predictions,
    load_manifest,
    now,
)
from paperfields.extract.backends.base import Backend
from paperfields.extract.backends.prices import Price, dollars, price_for
from paperfields.extract.cache import ResponseCache
from paperfields.extract.call import Model, identity
from paperfields.extract.strategies import Strategy

BATCH_DISCOUNT = 0.5  # the OpenAI Batch API bills half the listed per-token price


def _disk_error(path: Path, exc: OSError) -> RunError:
    """A RunError naming ``path`` for a failed write (disk full, quota, read-only), with what to do."""
    what = "the disk is full" if exc.errno == errno.ENOSPC else exc.strerror or str(exc)
    return RunError(
        f"{path}: cannot write: {what} [Errno {exc.errno}]; free space (or fix the folder), then run the same "
        "command again: finished papers are saved and the rest are asked"
    )


def _write_manifest(run_dir: Path, manifest: Manifest) -> None:
    """Write ``manifest.json`` atomically (a temporary file, renamed). On a full disk, where the
    temporary file cannot be written, the manifest is rewritten in place (its blocks are already
    there), so it never keeps saying ``running`` after the run ends; RunError naming it if that fails too."""
    tmp = run_dir / "manifest.json.tmp"
    text = manifest.model_dump_json(indent=2) + "\n"
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(run_dir / "manifest.json")
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        target = run_dir / "manifest.json"
        try:
            with target.open("r+", encoding="utf-8") as fh:
                fh.write(text)
                fh.truncate()
        except OSError:
            raise _disk_error(target, exc) from None


class Totals:
    """Running totals over prediction lines, so the runner never holds the lines themselves."""

    def __init__(self, price: Any, discount: float = 1.0) -> None:
        self.price = price
        self.discount = discount
        # the price billed: the table's figures times the discount (before dollars() rounds each line)
        self._billed = (
            price.model_copy(update={"input": price.input * discount, "output": price.output * discount})
            if price and discount != 1.0
            else price
        )
        self.latest: dict[str, Optional[str]] = {}  # paper id -> failure class of its latest line (None: a record)
        self.usage = Usage()
        self.cached_usage = Usage()
        self.model_requests = 0
        self.cache_hits = 0
        self.model_seconds = 0.0
        self.dollars: Optional[float] = 0.0

    def add(self, line: PredictionLine) -> None:
        """Count a line; a later line for the same paper (a retried transport error) replaces its
        outcome, while its tokens, requests, seconds and dollars add up (they were spent). The tokens
        of a line served from the cache go to ``cached_usage``, never into ``usage`` or dollars."""
        self.latest[line.paper_id] = line.failure.value if line.failure else None
        self.model_seconds += line.latency_s
        if line.cached:
            self.cache_hits += 1
            self.cached_usage = self.cached_usage + line.usage
            return
        self.usage = self.usage + line.usage
        self.model_requests += line.attempts
        cost = self.cost(line.usage)
        self.dollars = None if cost is None or self.dollars is None else self.dollars + cost

    def cost(self, usage: Usage) -> Optional[float]:
        """USD for ``usage`` at the price table's figures times the discount; None when the price is unknown."""
        return dollars(usage, self._billed)

    def write_to(self, manifest: Manifest) -> None:
        manifest.papers_done = sum(
            1 for failure in self.latest.values() if failure != FailureClass.transport_error.value
        )
        manifest.papers_valid = sum(1 for failure in self.latest.values() if failure is None)
        manifest.failures_by_class = dict(sorted(Counter(f for f in self.latest.values() if f).items()))
        manifest.usage = self.usage
        manifest.cached_usage = self.cached_usage
        manifest.model_requests = self.model_requests
        manifest.cache_hits = self.cache_hits
        manifest.model_seconds_total = round(self.model_seconds, 3)
        manifest.dollars_total = None if self.dollars is None else round(self.dollars, 6)


class FolderLock:
    """An exclusive lock on a run folder, so two runs of it at once cannot both ask for every paper.

    The lock is ``fcntl.flock`` on ``<run_dir>/.lock``, which holds the PID of the process that has
    it; the operating system drops it when that process ends, however it ends (a lock file left
    by a killed run is taken over). Raises RunError naming the folder and the holding PID when
    another run holds it (no waiting). :meth:`release` removes the file.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / ".lock"
        while True:
            fh = self.path.open("a+", encoding="utf-8")
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                holder = fh.read().strip() or "unknown"  # empty for the instant between its lock and its write
                fh.close()
                raise RunError(
                    f"{run_dir}: another run (PID {holder}) is using this run folder; wait for it to finish "
                    "(or stop it), or use another --run-id"
                ) from None
            try:
                current = os.stat(self.path).st_ino
            except FileNotFoundError:
                current = None
            if current == os.fstat(fh.fileno()).st_ino:
                break
            fh.close()  # the holder removed the file between our open and our lock: lock the file there now
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        self._fh: Optional[IO[str]] = fh

    def release(self) -> None:
        """Remove the lock file and unlock (idempotent)."""
        if self._fh is None:
            return
        self.path.unlink(missing_ok=True)  # before unlocking: a run that opens the old file after this sees it is gone
        self._fh.close()
        self._fh = None


class _RunFolder:
    """A run folder opened to append papers (shared by :func:`run_extraction` and the batch runner).

    On construction: the manifest is read (RunError when it holds another config) or made, the
    totals are rebuilt from the lines already written (a cut-off last line is dropped) and ``todo``
    lists the papers still to do. ``finished`` is True when a complete run has nothing left: the
    caller then returns ``manifest`` untouched. Use as a context manager around the work (it marks
    the run running and holds ``predictions.jsonl`` open), then call :meth:`finish`.

    The folder's :class:`FolderLock` is taken first (RunError when another run holds it) and held
    until :meth:`finish` has written the manifest, or the ``with`` block ends with an exception; a
    finished run, or a folder refused for its config, releases it at once.
    """

    def __init__(
        self,
        papers: list[Paper],
        config: RunConfig,
        run_dir: Path,
        price: Optional[Price] = None,
        corpus_path: Optional[str] = None,
    ) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._lock: Any = FolderLock(run_dir)
        except OSError as exc:  # a read-only folder: a complete run can still be checked, nothing written
            self._open_read_only(papers, config, run_dir, price, corpus_path, exc)
            return
        try:
            self._open(papers, config, run_dir, price, corpus_path)
        except BaseException:
            self._lock.release()
            raise
        if self.finished:
            self._lock.release()

    def _open_read_only(
        self,
        papers: list[Paper],
        config: RunConfig,
        run_dir: Path,
        price: Optional[Price],
        corpus_path: Optional[str],
        exc: OSError,
    ) -> None:
        """Open a folder whose lock cannot be written: fine for a finished run (nothing will be written,
        so no lock is needed), else RunError naming the folder."""
        self._lock = FolderLock.__new__(FolderLock)
        self._lock._fh = None  # nothing to release
        try:
            self._open(papers, config, run_dir, price, corpus_path)
        except OSError:
            self.finished = False
        if not self.finished:
            raise RunError(
                f"{run_dir}: the run folder cannot be written ({exc.strerror or exc}, [Errno {exc.errno}]: read-only?) "
                "and the run has papers left to do; run it where the folder can be written"
            ) from None

    def _open(
        self, papers: list[Paper], config: RunConfig, run_dir: Path, price: Optional[Price], corpus_path: Optional[str]
    ) -> None:
        self.run_dir = run_dir
        self.pred_path = run_dir / "predictions.jsonl"
        has_lines = self.pred_path.is_file() and self.pred_path.stat().st_size > 0
        if (run_dir / "manifest.json").exists():
            manifest = load_manifest(run_dir)
            if manifest.config != config and not has_lines:  # nothing was extracted under the old config: start afresh
                manifest = Manifest(run_id=run_dir.name, config=config, started_at=now(), papers_total=0)
            elif manifest.config != config:
                old, new = manifest.config.model_dump(), config.model_dump()
                diff = [k for k in new if old.get(k) != new.get(k)]
                raise RunError(
                    f"{run_dir / 'manifest.json'}: this folder holds a run with another config "
                    f"(differs in: {', '.join(diff)}); use another --run-id or delete the folder"
                )
        else:
            manifest = Manifest(run_id=run_dir.name, config=config, started_at=now(), papers_total=0)
        if corpus_path is not None:
            manifest.corpus_path = corpus_path
        self.manifest = manifest
        # a price given for this run, else the table's, else one given
        # to an earlier part of the run (a resume without --price)
        self.price = (
            price or price_for(config.backend) or (Price.model_validate(manifest.price) if manifest.price else None)
        )
        self.totals = Totals(self.price, BATCH_DISCOUNT if config.batch else 1.0)
        for line in iter_predictions(self.pred_path, repair=True):
            self.totals.add(line)
        asked = set(manifest.paper_ids)
        self.todo = [p for p in papers if not self.done(p.id)]
        self.already_done = len(papers) - len(self.todo)
        self.finished = not self.todo and asked >= {p.id for p in papers} and manifest.status == "complete"
        if self.finished and price is not None and manifest.price != price.model_dump():
            self._reprice()
        self._new_ids = [p.id for p in papers if p.id not in asked]
        self._out: Optional[IO[str]] = None
        self._started = 0.0

    def _reprice(self) -> None:
        """A price given to a finished run (a rerun with ``--price``): its dollars recomputed from the usage
        its lines store, at that price (times the batch discount), into the manifest, and nothing else of
        it changed (its lines keep the dollars they were written with; its provenance is the run's)."""
        manifest = self.manifest
        manifest.price = self.price.model_dump() if self.price else None
        manifest.dollars_total = None if self.totals.dollars is None else round(self.totals.dollars, 6)
        self.save()

    def __enter__(self) -> _RunFolder:
        manifest = self.manifest
        manifest.paper_ids += self._new_ids
        manifest.papers_total = len(manifest.paper_ids)
        manifest.git_commit = git_commit()
        manifest.status = "running"
        manifest.batch_discount = self.totals.discount
        self.save()
        self._started = time.perf_counter()
        manifest.price = self.price.model_dump() if self.price else None
        self._out = self.pred_path.open("a", encoding="utf-8")
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if self._out is not None:
            try:
                self._out.close()
            except OSError:  # the write that failed (disk full) left bytes in the buffer: a cut-off line a rerun drops
                pass
            self._out = None
        if exc_type is not None:  # else finish() lets the folder go, once the manifest is written
            self._lock.release()

    def done(self, paper_id: str) -> bool:
        """True when ``paper_id``'s latest line is final: a record, a model failure, or a request that
        can never succeed unchanged (``request_rejected``, ``context_overflow``).

        The one rule for "done": a paper with no line, or whose latest line is a transport error (the
        model never answered), is asked (again).
        """
        return (
            self.totals.latest.get(paper_id, FailureClass.transport_error.value) != FailureClass.transport_error.value
        )

    def write(
        self, paper: Paper, gen: Generation, on_paper: Optional[Callable[[PredictionLine], None]] = None
    ) -> PredictionLine:
        """Append the paper's line with its grounding (flushed at
        once), add it to the totals, then call ``on_paper``."""
        assert self._out is not None, "write() inside the with block"
        cost = 0.0 if gen.cached else self.totals.cost(gen.usage)  # an answer from the cache cost this run nothing
        line = PredictionLine(paper_id=paper.id, dollars=cost, **cap_raw_text(gen).model_dump())
        if line.record is not None:
            line.grounding = line.located(paper.text)
        try:
            self._out.write(line.model_dump_json() + "\n")
            self._out.flush()
        except OSError as exc:
            raise _disk_error(self.pred_path, exc) from None
        self.totals.add(line)
        if on_paper:
            on_paper(line)
        return line

    def save(self) -> None:
        """Write ``manifest.json`` as it stands (atomically)."""
        _write_manifest(self.run_dir, self.manifest)

    def finish(self) -> Manifest:
        """Totals, status (complete when every paper asked for has its line and none is a transport error)
        and times into the manifest; write it, then release the folder's lock."""
        manifest = self.manifest
        manifest.wall_seconds = round(manifest.wall_seconds + time.perf_counter() - self._started, 3)
        self.totals.write_to(manifest)
        manifest.status = "complete" if all(self.done(pid) for pid in manifest.paper_ids) else "incomplete"
        manifest.finished_at = now()
        self.save()
        self._lock.release()
        return manifest


async def run_extraction(
    papers: list[Paper],
    backend: Backend,
    strategy: Strategy,
    config: RunConfig,
    run_dir: Path,
    concurrency: int | Concurrency = 1,
    on_paper: Optional[Callable[[PredictionLine], None]] = None,
    cache: Optional[ResponseCache] = None,
    on_start: Optional[Callable[[int], None]] = None,
    price: Optional[Price] = None,
    corpus_path: Optional[str] = None,
) -> Manifest:
    """Extract every paper not yet in ``run_dir``; return the finished manifest.

    Papers already finished are skipped, so a rerun, or a run with more papers (a larger
    ``--limit``), continues the same folder. ``concurrency``: papers in flight at once, a number or a
    :class:`Concurrency` saying who chose it and why; the manifest's ``concurrency`` records it with
    the run's peak and, after HTTP 429s, the limit they left.
    ``on_start`` is called once, before any work, with how many of ``papers`` are already done;
    ``on_paper`` after each paper's line is written (both for progress bars). With ``cache``,
    a request seen before (same backend identity, messages, parameters, schema) is answered from it
    without calling the model. ``price`` (USD per million tokens) replaces the price table's entry for
    the backend (a model not in ``prices.toml``); ``corpus_path`` (the corpus file, absolute) is recorded
    in the manifest for show and report. Raises RunError if ``run_dir`` holds a run with another config.
    """
    run = _RunFolder(papers, config, run_dir, price, corpus_path)
    if on_start:
        on_start(run.already_done)
    if run.finished:
        return run.manifest  # nothing to do: leave a finished run's manifest (and its provenance) untouched
    todo = run.todo
    model = Model(backend, identity(config), cache)
    queue: asyncio.Queue[Paper] = asyncio.Queue()
    for paper in todo:  # corpus order, so a single worker reuses the prompt prefix paper after paper
        queue.put_nowait(paper)

    run.manifest.request_options = dict(getattr(backend, "request_options", None) or {})
    run.manifest.engine = None  # this process (a part run on Ray Data says "ray": extract/on_ray.py)
    chosen = (
        concurrency
        if isinstance(concurrency, Concurrency)
        else Concurrency(start=max(1, concurrency), source="caller", why="run_extraction(concurrency=...)")
    )
    in_flight = [0, 0]  # papers in flight now, most at once (for a backend without a request limit)
    with run:

        async def worker() -> None:
            while not queue.empty():
                paper = queue.get_nowait()
                in_flight[0] += 1
                in_flight[1] = max(in_flight[1], in_flight[0])
                try:
                    gen = await model.extract(paper, strategy, config.params)
                finally:
                    in_flight[0] -= 1
                run.write(paper, gen, on_paper)

        limit = getattr(backend, "limit", None)  # openai/: requests in flight adapted to 429s, which it counts
        rate_limited_before = getattr(limit, "rate_limited", 0)
        if limit is not None:
            limit.mark()
        try:
            await asyncio.gather(*(worker() for _ in range(max(1, min(chosen.start, len(todo) or 1)))))
        finally:  # interrupted too (Ctrl-C cancels us): the manifest gets the totals so far, status incomplete
            rate_limited = getattr(limit, "rate_limited", 0) - rate_limited_before
            run.manifest.rate_limited += rate_limited
            run.manifest.concurrency = chosen.model_copy(
                update={
                    "peak": limit.run_peak if limit is not None else in_flight[1],
                    "after_429": round(limit.limit, 2) if rate_limited else None,
                }
            )
            manifest = run.finish()
    return manifest
