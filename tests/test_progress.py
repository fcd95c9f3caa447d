"""The run's ETA (paperfields/progress.py): smoothed per-paper time, countdown, resumed runs, cache hits."""

from __future__ import annotations

import pytest
from rich.progress import Progress

from paperfields.progress import EtaColumn, PaperTimer, eta_seconds, format_seconds, smoothed


def test_smoothed_is_the_plain_mean_for_the_first_five_papers_then_weights_the_newest_by_a_fifth():
    values, value = [], None
    for count, sample in enumerate([10, 20, 30, 40, 50, 60, 70], start=1):
        value = smoothed(value, sample, count)
        values.append(value)
    assert values == pytest.approx([10, 15, 20, 25, 30, 36, 42.8])


def test_smoothed_refuses_a_count_below_one_and_a_negative_time():
    with pytest.raises(ValueError, match="count must be >= 1"):
        smoothed(None, 3.0, 0)
    with pytest.raises(ValueError, match="sample=-1"):
        smoothed(5.0, -1.0, 2)


def test_eta_is_papers_left_times_the_per_paper_time_minus_the_paper_in_progress_at_most_one_paper():
    assert eta_seconds(12.5, 4) == 50
    assert eta_seconds(12.5, 4, in_progress=5) == 45
    assert eta_seconds(12.5, 4, in_progress=20) == 37.5  # a slow paper: the other three remain
    assert eta_seconds(None, 4) is None  # nothing finished yet: unknown, not zero
    assert eta_seconds(None, 0) == 0 and eta_seconds(12.5, 0, in_progress=3) == 0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_timer_leaves_cache_hits_out_and_counts_down_through_the_paper_in_progress():
    clock = Clock(100.0)
    timer = PaperTimer(clock)
    timer.start()
    assert timer.remaining(3) is None
    clock.now = 110.0
    timer.finished()  # 10 s
    clock.now = 110.5
    timer.finished(cached=True)  # answered from the cache: not a model paper
    clock.now = 130.5
    timer.finished()  # 20 s, counted from the cache hit
    assert timer.count == 2 and timer.per_paper == 15
    clock.now = 135.5
    assert timer.remaining(3) == 40


def test_a_resumed_run_shows_estimating_until_this_process_finishes_a_paper_then_the_left_papers_only():
    clock = Clock(0.0)
    timer = PaperTimer(clock)
    column = EtaColumn(timer)
    progress = Progress(column, disable=True)
    task = progress.add_task("run", total=None)
    assert column.render(progress.tasks[0]).plain == ""  # no total yet: nothing to estimate
    progress.update(task, total=60, completed=57)  # 57 papers done by an earlier process
    timer.start()
    assert column.render(progress.tasks[0]).plain == "ETA estimating"
    clock.now = 12.0
    timer.finished()
    progress.update(task, advance=1)
    assert column.render(progress.tasks[0]).plain == "ETA 0:00:24"  # 2 left x 12 s; the 57 were not instant


def test_format_seconds_rounds_up_to_the_second():
    assert format_seconds(3725.2) == "1:02:06"
    assert format_seconds(0) == "0:00:00"
    assert format_seconds(59.01) == "0:01:00"
