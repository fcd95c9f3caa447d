"""The run's ETA (paperfields/progress.py): smoothed per-paper time, countdown, resumed runs, cache hits."""

from __future__ import annotations

import pytest
from rich.progress import Progress

from paperfields.progress import EtaColumn, PaperTimer, eta_seconds, format_seconds, smoothed
from tests.cli_in_process import run_cli


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


LONG_ID = "local_qwen2.5-coder-1.5b__self_consistency__test"  # 48 characters: the line is longer than 80 columns


def test_without_a_terminal_the_last_progress_line_is_written_whole_eta_included():
    import io
    import re

    from rich.console import Console

    from paperfields.progress import run_progress

    log = io.StringIO()
    console = Console(
        file=log, width=80, soft_wrap=True
    )  # what `paperfields run ... 2> log` gets: no terminal, 80 columns
    assert not console.is_terminal
    clock = Clock(0.0)
    timer = PaperTimer(clock)
    progress = run_progress(timer, console)
    task = progress.add_task(LONG_ID, total=60, completed=0, status="")
    timer.start()
    progress.start()
    for _ in range(60):
        clock.now += 12.0
        timer.finished()
        progress.update(task, advance=1, status="papers, 12 failed")
    progress.stop()
    line = log.getvalue().rstrip("\n").splitlines()[-1]
    assert "…" not in log.getvalue() and len(line) > 80
    assert re.fullmatch(rf"{LONG_ID} ━+ 60/60 papers, 12 failed \d+:\d\d:\d\d ETA 0:00:00", line), line


def test_a_terminal_keeps_drawing_on_the_run_console():
    import io

    from rich.console import Console

    from paperfields.progress import run_progress

    console = Console(file=io.StringIO(), width=80, force_terminal=True)
    assert run_progress(PaperTimer(), console).console is console


def test_cli_run_into_a_log_writes_the_whole_last_progress_line(tmp_path):
    import os
    import re

    env = dict(os.environ, COLUMNS="80")
    proc = run_cli(
        "run",
        "-b",
        "rules/baseline",
        "--limit",
        "2",
        "--no-score",
        "--no-cache",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--run-id",
        LONG_ID,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert "…" not in proc.stderr
    assert re.fullmatch(rf"{LONG_ID} ━+ 2/2 papers, 0 failed \d+:\d\d:\d\d ETA 0:00:00", lines[1]), proc.stderr
    assert lines[2].startswith(f"run {LONG_ID}: 2/2 papers, 2 valid")
