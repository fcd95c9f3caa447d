"""The run's ETA: papers left times a smoothed per-paper time, learned from the papers this process finished.

rich's own ``TimeRemainingColumn`` divides by the speed of the last 30 s of progress updates: it
shows nothing until a few papers are done, then extrapolates from one fast paper, and a resumed run
(whose finished papers are added at once) looks instantaneous. Here only papers finished by this
process count, each as the wall time since the previous one finished (so with several papers in
flight the rate is the run's throughput), smoothed by :func:`smoothed`; answers served from the
response cache take no time and are left out of the average.

Without a terminal (``paperfields run ... 2> log``, a pipe, a CI log) rich draws no live bar: it
writes the last state once, when the run stops, at the console's width (80 columns when it cannot
ask a terminal), and cuts what does not fit with an ellipsis, so a long run id left the ETA as
``ETA 0:00:…``. :func:`run_progress` gives that one line a console wide enough for all of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Optional

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text

if TYPE_CHECKING:
    from paperfields.core.runlog import PredictionLine
    from paperfields.extract.batch import BatchState

# Columns of the one progress line written without a terminal: no line is cut below this many characters.
LOG_LINE_WIDTH = 10_000

# Weight of the newest paper once enough have finished: about the last 9 papers count. Per-paper
# times vary about 10x (a reply looping to --max-tokens), so a heavier weight makes the ETA jump.
ALPHA = 0.2


def smoothed(previous: Optional[float], sample: float, count: int, alpha: float = ALPHA) -> float:
    """The per-paper seconds after the ``count``-th sample (1-based) ``sample`` seconds.

    An exponentially weighted moving average whose weight is ``max(1 / count, alpha)``: the plain mean
    of the first ``1 / alpha`` samples (so the first paper does not outweigh the next ones), then
    ``alpha`` on the newest. ``previous`` is the value after ``count - 1`` samples (None before the first).
    Raises ValueError for ``count < 1`` or a negative sample.
    """
    if count < 1 or sample < 0:
        raise ValueError(f"count must be >= 1 and sample >= 0 (got count={count}, sample={sample})")
    if previous is None or count == 1:
        return sample
    weight = max(1.0 / count, alpha)
    return previous + weight * (sample - previous)


def eta_seconds(per_paper: Optional[float], papers_left: int, in_progress: float = 0.0) -> Optional[float]:
    """Seconds until ``papers_left`` papers are done at ``per_paper`` seconds each; None while unknown
    (``per_paper`` None: no paper finished yet).

    ``in_progress`` seconds already spent since the last paper finished are taken off, but at most one
    paper's worth: a paper slower than the average leaves the ETA at the other papers' time instead of
    counting below it. 0 when nothing is left.
    """
    if papers_left <= 0:
        return 0.0
    if per_paper is None:
        return None
    return per_paper * papers_left - min(max(in_progress, 0.0), per_paper)


class PaperTimer:
    """Wall time per finished paper, smoothed (:func:`smoothed`). ``clock`` returns seconds (monotonic)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.per_paper: Optional[float] = None
        self.count = 0
        self._last: Optional[float] = None

    def start(self) -> None:
        """Start the clock of the first paper (call when the run starts working)."""
        self._last = self.clock()

    def finished(self, cached: bool = False) -> None:
        """One paper finished now. A cached answer only restarts the clock: it says nothing of model time."""
        now = self.clock()
        if self._last is not None and not cached:
            self.count += 1
            self.per_paper = smoothed(self.per_paper, now - self._last, self.count)
        self._last = now

    def remaining(self, papers_left: int) -> Optional[float]:
        """:func:`eta_seconds` for ``papers_left`` papers, counting down through the paper in progress."""
        in_progress = self.clock() - self._last if self._last is not None else 0.0
        return eta_seconds(self.per_paper, papers_left, in_progress)


def format_seconds(seconds: float) -> str:
    """``H:MM:SS`` (rounded up to the second, so a run with work left never shows 0:00:00)."""
    whole = int(-(-seconds // 1))
    minutes, secs = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:d}:{minutes:02d}:{secs:02d}"


class EtaColumn(ProgressColumn):
    """``ETA H:MM:SS`` from a :class:`PaperTimer`; ``ETA estimating`` until this process finished a paper."""

    max_refresh = 0.5  # rich redraws 10 times a second; a countdown needs no more than 2

    def __init__(self, timer: PaperTimer) -> None:
        self.timer = timer
        super().__init__()

    def render(self, task: Task) -> Text:
        """The column's cell for ``task`` (empty until the task has a total)."""
        if task.total is None:
            return Text("")
        seconds = self.timer.remaining(int(task.total - task.completed))
        return Text("ETA " + ("estimating" if seconds is None else format_seconds(seconds)), style="progress.remaining")


def run_progress(timer: PaperTimer, console: Console, disable: bool = False) -> Progress:
    """The progress display of ``paperfields run``: description (the run id), bar, done/total papers, a
    status field (``task.fields["status"]``), elapsed time and :class:`EtaColumn` of ``timer``.

    On a live terminal it draws on ``console``. Otherwise (output to a file or pipe, or a dumb terminal,
    where rich writes only the final state) it draws on a console writing to the same file but
    ``LOG_LINE_WIDTH`` columns wide, so that line is written whole, ETA included, however long the run
    id; its width is the line's own, not padded. ``disable`` shows nothing.
    """
    live = console.is_terminal and not console.is_dumb_terminal
    target = (
        console
        if live
        else Console(
            file=console.file, width=LOG_LINE_WIDTH, soft_wrap=True, no_color=console.no_color, highlight=False
        )
    )
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        EtaColumn(timer),
        console=target,
        disable=disable,
    )


class RunProgress:
    """The progress line of ``paperfields run`` with the callbacks :func:`paperfields.api.run` takes.

    The line appears once the run says how many papers are already done (``on_start``: a resume never
    flashes 0/N, and an error found before any work prints alone), named after the run id; ``on_paper``
    advances it and counts failures, ``on_status`` shows a batch job's state. Use as a context manager:
    the line stops when the run ends, however it ends.
    """

    def __init__(self, console: Console, disable: bool = False) -> None:
        self.timer = PaperTimer()  # only papers this process finishes count: a resume's done papers were not instant
        self.progress = run_progress(self.timer, console, disable=disable)
        self.task = self.progress.add_task("", total=None, completed=0, status="", visible=False)
        self.failed = 0

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def on_start(self, already_done: int, total: int, run_id: str) -> None:
        self.progress.update(self.task, description=run_id, total=total, completed=already_done, visible=True)
        self.timer.start()
        self.progress.start()

    def on_paper(self, line: PredictionLine) -> None:
        self.failed += line.failure is not None
        self.timer.finished(cached=line.cached)
        # "2/2 papers, 0 failed": a new user read the earlier "2/2 failed 0" as "2 of 2 failed"
        self.progress.update(self.task, advance=1, status=f"papers, {self.failed} failed")

    def on_status(self, state: BatchState) -> None:
        counts = state.request_counts
        self.progress.update(
            self.task,
            status=f"batch {state.batch_id} {state.status} {counts.get('completed', 0)}/{counts.get('total', '?')}",
        )
