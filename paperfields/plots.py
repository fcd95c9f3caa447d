"""Leaderboard plots (matplotlib, PNG): headline with CI bars, per-field heatmap, model seconds vs headline,
and dollars vs headline when prices are known.

Contenders are drawn as bars or points; references (``rules/*``, a second annotator) as labeled
vertical or horizontal reference lines, never as model points; partial and unfinished runs are
left out of the bars and the cost plots (they are not comparable) and marked in the heatmap.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from paperfields import figures
from paperfields.scoring.board import UNDEFINED, Board, time_known
from paperfields.scoring.score import ACCURACY_FIELDS, HEADLINE_COUNT, HEADLINE_FIELDS, RunScores

_META = {"Software": None}  # no version stamp: the same scores give the same bytes
HEADLINE_LABEL = f"headline: micro F1 per field, macro over {HEADLINE_COUNT} fields (higher is better)"
_REFERENCE_STYLES = ("--", ":", "-.", (0, (5, 1, 1, 1)))


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (no display on CI machines), imported when a figure is drawn: a board
    whose figures are all in the cache (paperfields/figures.py) never loads it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any, dpi: int) -> bytes:
    """``fig`` as PNG bytes (no version stamp: the same inputs give the same bytes), the figure closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata=_META)
    _pyplot().close(fig)
    return buffer.getvalue()


Job = tuple[figures.Draw, tuple[Any, ...]]  # a figure: its draw function and the inputs it draws


def _write(path: Path, job: Job) -> Path:
    path.write_bytes(figures.png(job[0], *job[1]))
    return path


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point dominates, when lower x (cost) and higher y (score) are
    better, sorted by x. ``points`` are (x, y) pairs; an empty list gives []."""
    front = []
    for i, (x, y) in enumerate(points):
        if not any((x2 <= x and y2 >= y) and (x2, y2) != (x, y) for x2, y2 in points):
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def _split(board: Board) -> tuple[list[RunScores], list[RunScores], list[RunScores]]:
    """(complete contenders, complete references, partial or unfinished runs) with a headline, each in
    board order: the board's own sections."""
    contenders = [s for s in board.section("contender") if s.headline is not None]
    references = [s for s in board.section("reference") if s.headline is not None]
    return contenders, references, board.section("partial")


def _reference_lines(ax, references: list[RunScores], vertical: bool) -> None:
    for i, s in enumerate(references):
        style = _REFERENCE_STYLES[i % len(_REFERENCE_STYLES)]
        label = f"reference {s.run_id}: {s.headline:.3f}" + (
            f" (on {s.papers} of {s.papers_in_split} papers)" if s.partial else ""
        )
        if vertical:
            ax.axvline(s.headline, color="#555555", linestyle=style, linewidth=1.2, label=label)
        else:
            ax.axhline(s.headline, color="#555555", linestyle=style, linewidth=1.2, label=label)


def plot_overall(board: Board, path: Path) -> Path:
    """Horizontal bars of the headline per complete contender with 95% CI whiskers, best on top;
    references as vertical lines; partial and unfinished runs named in a footnote, not drawn."""
    return _write(path, (draw_overall, (board,)))


def draw_overall(board: Board) -> bytes:
    """:func:`plot_overall`'s PNG bytes."""
    plt = _pyplot()
    contenders, references, partial = _split(board)
    fig, ax = plt.subplots(figsize=(9, 0.5 * max(len(contenders), 1) + 2.6 + 0.22 * len(references)))
    names = [s.run_id for s in contenders][::-1]
    values = [s.headline for s in contenders][::-1]
    low = [s.headline - s.headline_ci95[0] if s.headline_ci95 else 0 for s in contenders][::-1]
    high = [s.headline_ci95[1] - s.headline if s.headline_ci95 else 0 for s in contenders][::-1]
    ax.barh(names, values, xerr=[low, high], color="#4c72b0", capsize=4, label="contender (95% bootstrap CI)")
    _reference_lines(ax, references, vertical=True)
    ax.set_xlim(0, 1)
    ax.set_xlabel(HEADLINE_LABEL)
    ax.set_title("PaperFields leaderboard: headline per run")
    ax.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=8, frameon=False
    )  # below the axes: never over a bar
    if partial:
        fig.text(0.01, 0.01, "not drawn (partial or unfinished): " + ", ".join(s.run_id for s in partial), fontsize=7)
    fig.tight_layout(rect=(0, 0.03 if partial else 0, 1, 1))
    return _png(fig, 100)


def _row_label(s: RunScores, kind: str | None) -> str:
    """A heatmap row's label: the run id, then in brackets ``kind`` (reference, partial) and the papers
    its scores cover when not the whole split: ``annotator_x [reference, 25 of 60 papers]`` (a second
    labeling's sample), ``r [partial, 6 of 60 papers]``, ``r [partial, 30/60 papers answered]``."""
    notes = [kind] if kind else []
    if s.unfinished:
        notes.append(f"{s.papers_done}/{s.papers} papers answered")
    elif s.partial:
        notes.append(f"{s.papers} of {s.papers_in_split} papers")
    return s.run_id + (f" [{', '.join(notes)}]" if notes else "")


def plot_fields(board: Board, path: Path) -> Path:
    """Heatmap of per-field scores (micro F1; accuracy for ACCURACY_FIELDS): runs x
    fields; undefined cells gray with a dash; references and partial runs marked in the row label,
    with the papers a row covers when fewer than the split (:func:`_row_label`)."""
    return _write(path, (draw_fields, (board,)))


def draw_fields(board: Board) -> bytes:
    """:func:`plot_fields`' PNG bytes."""
    import matplotlib

    plt = _pyplot()
    contenders, references, partial = _split(board)
    rows = contenders + references + partial
    data = np.array(
        [[np.nan if s.fields[f].score is None else s.fields[f].score for f in HEADLINE_FIELDS] for s in rows],
        dtype=float,
    )
    fig, ax = plt.subplots(figsize=(13, 0.6 * len(rows) + 2.8))
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#dddddd")
    image = ax.imshow(np.ma.masked_invalid(data), vmin=0, vmax=1, cmap=cmap, aspect="auto")
    labels = [f"{f} (acc)" if f in ACCURACY_FIELDS else f for f in HEADLINE_FIELDS]
    ax.set_xticks(range(len(HEADLINE_FIELDS)), labels, rotation=40, ha="right")
    kinds = {id(s): "reference" for s in references} | {id(s): "partial" for s in partial}
    ax.set_yticks(range(len(rows)), [_row_label(s, kinds.get(id(s))) for s in rows])
    for i, row in enumerate(data):
        for j, value in enumerate(row):
            text = UNDEFINED if np.isnan(value) else f"{value:.2f}"
            ax.text(
                j,
                i,
                text,
                ha="center",
                va="center",
                color="white" if not np.isnan(value) and value < 0.6 else "black",
                fontsize=8,
            )
    fig.colorbar(image, ax=ax, label="micro F1 / accuracy (higher is better)")
    ax.set_title("Per-field scores (gray: undefined, nothing in gold and nothing predicted)")
    fig.tight_layout()
    return _png(fig, 100)


def _cost_plot(
    contenders: list[RunScores],
    references: list[RunScores],
    cost,
    xlabel: str,
    title: str,
    unknown: list[RunScores] = (),
) -> Job:
    """A cost plot of ``contenders``; ``unknown`` (contenders whose time or cost is unknown: submissions) are named
    in a footnote, never drawn (at 0 they would sit on the Pareto front)."""
    points = [(s.run_id, cost(s), s.headline) for s in contenders]
    return draw_cost, (points, list(references), xlabel, title, [s.run_id for s in unknown])


def draw_cost(
    named_points: list[tuple[str, float, float]],
    references: list[RunScores],
    xlabel: str,
    title: str,
    unknown: list[str],
) -> bytes:
    """:func:`_cost_plot`'s PNG bytes: ``named_points`` (run id, cost, headline) of the contenders drawn,
    ``unknown`` the run ids named in the footnote."""
    plt = _pyplot()
    points = [(x, y) for _, x, y in named_points]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    ax.scatter([p[0] for p in points], [p[1] for p in points], color="#4c72b0", zorder=3, label="contender")
    xs = [p[0] for p in points]
    middle = (min(xs) + max(xs)) / 2 if xs else 0
    for run_id, x, y in named_points:
        right = x > middle  # labels of the right half run leftwards, so none leaves the axes
        ax.annotate(
            run_id,
            (x, y),
            textcoords="offset points",
            xytext=(-5 if right else 5, 5),
            ha="right" if right else "left",
            fontsize=8,
        )
    front = pareto_front(points)
    if len(front) > 1:
        ax.plot(
            [points[i][0] for i in front],
            [points[i][1] for i in front],
            color="#c44e52",
            linestyle="-",
            zorder=2,
            label="Pareto front (no run is both cheaper and better)",
        )
    elif front:
        ax.scatter(
            [points[front[0]][0]],
            [points[front[0]][1]],
            s=160,
            facecolors="none",
            edgecolors="#c44e52",
            zorder=4,
            label="Pareto front (one run dominates)",
        )
    _reference_lines(ax, references, vertical=False)
    if xs and min(xs) > 0 and max(xs) / min(xs) > 20:
        ax.set_xscale("log")
        xlabel += ", log scale"
    ax.set_xlabel(xlabel)
    ax.set_ylabel(HEADLINE_LABEL, fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left")
    if unknown:
        fig.text(0.01, 0.01, "not drawn (time unknown: submitted): " + ", ".join(unknown), fontsize=7)
    fig.tight_layout(rect=(0, 0.03 if unknown else 0, 1, 1))
    return _png(fig, 100)


def plot_seconds(board: Board, path: Path) -> Path:
    """Model seconds per paper (lower is better) against the headline, complete contenders only, with
    the Pareto front drawn; references (which call no model) as horizontal lines."""
    return _write(path, _seconds(board))


def _seconds(board: Board) -> Job:
    contenders, references, _ = _split(board)
    return _cost_plot(
        [s for s in contenders if time_known(s)],
        references,
        lambda s: s.seconds_per_paper,
        "model seconds per paper (lower is better)",
        "Headline vs model time per paper (complete contenders)",
        [s for s in contenders if not time_known(s)],
    )


def plot_seconds_per_correct(board: Board, path: Path) -> Path:
    """Model seconds per correctly extracted item (every attempt included, cache hits excluded; lower
    is better) against the headline, complete contenders with model time, Pareto front drawn."""
    return _write(path, _seconds_per_correct(board))


def _seconds_per_correct(board: Board) -> Job:
    contenders, references, _ = _split(board)
    timed = [s for s in contenders if s.seconds_per_correct and time_known(s)]
    return _cost_plot(
        timed,
        references,
        lambda s: s.seconds_per_correct,
        "model seconds per correct item (lower is better)",
        "Headline vs model time per correct item (complete contenders)",
        [s for s in contenders if not time_known(s)],
    )


def plot_dollars(board: Board, path: Path) -> Path | None:
    """Dollars per run against the headline for the complete contenders with a known price; None
    (nothing written) when no contender has one."""
    job = _dollars(board)
    return None if job is None else _write(path, job)


def _dollars(board: Board) -> Job | None:
    contenders, references, _ = _split(board)
    priced = [s for s in contenders if s.dollars_total is not None and s.dollars_total > 0 and time_known(s)]
    if not priced:
        return None
    return _cost_plot(
        priced,
        references,
        lambda s: s.dollars_total,
        "US dollars per run (lower is better)",
        "Headline vs dollars per run (contenders with known prices)",
        [s for s in contenders if not time_known(s)],
    )


def plot_reliability(scores: RunScores, path: Path) -> Path | None:
    """Reliability diagram of one run (DeGroot and Fienberg 1983; Niculescu-Mizil and Caruana 2005):
    per confidence source (asked, logprob), the accuracy of each non-empty confidence bin against its
    mean confidence, marker area by pair count, the diagonal of perfect calibration, Brier and ECE in
    the legend. None (nothing written) when the run has no confidences."""
    job = _reliability(scores)
    return None if job is None else _write(path, job)


def _reliability(scores: RunScores) -> Job | None:
    return (draw_reliability, (scores,)) if scores.calibration else None


def draw_reliability(scores: RunScores) -> bytes:
    """:func:`plot_reliability`'s PNG bytes (``scores`` has confidences)."""
    fig, ax = _pyplot().subplots(figsize=(5.5, 5.5))
    ax.plot([0, 1], [0, 1], color="#999999", linestyle="--", linewidth=1, label="perfect calibration")
    for (source, cal), marker in zip(scores.calibration.items(), ("o", "s")):
        xs = [b["confidence"] for b in cal.bins]
        ys = [b["accuracy"] for b in cal.bins]
        sizes = [20 + 400 * b["count"] / cal.pairs for b in cal.bins]
        ax.plot(
            xs,
            ys,
            marker=marker,
            linewidth=1,
            markersize=0,
            label=f"{source}: Brier {cal.brier:.3f}, ECE {cal.ece:.3f} ({cal.pairs} pairs)",
        )
        ax.scatter(xs, ys, s=sizes, marker=marker, alpha=0.7)
    return _unit_square_png(
        fig,
        ax,
        "mean confidence in bin (10 equal-width bins)",
        "share of (paper, field) pairs exactly right",
        f"{scores.run_id}\nreliability of per-field confidence",
        "upper left",
    )


def _unit_square_png(fig: Any, ax: Any, xlabel: str, ylabel: str, title: str, legend: str) -> bytes:
    """Label a plot over [0, 1] x [0, 1]; its PNG bytes (no timestamp), the figure closed."""
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(loc=legend, fontsize=7)
    fig.tight_layout()
    return _png(fig, 110)


def plot_risk_coverage(scores: RunScores, path: Path) -> Path | None:
    """Risk–coverage curves of one run (Geifman & El-Yaniv 2017), beside its reliability diagram: per
    confidence source (asked, logprob), the error rate of the (paper, field) pairs kept when only the
    most confident are kept, against the share kept (ties in expected value over their orders); AURC
    and the errors caught in the least confident 20% in the legend; a dotted line at the error rate
    (what a confidence that ranks nothing gives at every coverage). None (nothing written) when the
    run has no confidences."""
    job = _risk_coverage(scores)
    return None if job is None else _write(path, job)


def _risk_coverage(scores: RunScores) -> Job | None:
    return (draw_risk_coverage, (scores,)) if any(cal.risk_coverage for cal in scores.calibration.values()) else None


def draw_risk_coverage(scores: RunScores) -> bytes:
    """:func:`plot_risk_coverage`'s PNG bytes (``scores`` has a risk-coverage curve)."""
    curves = {source: cal for source, cal in scores.calibration.items() if cal.risk_coverage}
    fig, ax = _pyplot().subplots(figsize=(5.5, 5.5))
    for (source, cal), marker, color in zip(curves.items(), ("o", "s"), ("#4c72b0", "#dd8452")):
        coverage, risk = zip(*cal.risk_coverage)
        caught = UNDEFINED if cal.errors_caught_20 is None else f"{cal.errors_caught_20:.2f}"
        ax.plot(
            coverage,
            risk,
            marker=marker,
            markersize=3,
            linewidth=1.2,
            color=color,
            label=f"{source}: AURC {cal.aurc:.3f}, caught@20% {caught} ({cal.pairs} pairs)",
        )
    for rate in sorted(
        {1 - cal.accuracy for cal in curves.values() if cal.accuracy is not None}
    ):  # the sources share pairs: one line
        ax.axhline(
            rate,
            color="#777777",
            linestyle=":",
            linewidth=1,
            label=f"error rate {rate:.3f} (a confidence that ranks nothing)",
        )
    return _unit_square_png(
        fig,
        ax,
        "coverage: share of (paper, field) pairs kept, most confident first",
        "risk: share of the kept pairs that are wrong (lower is better)",
        f"{scores.run_id}\nrisk–coverage of per-field confidence",
        "best",
    )


def plot_jobs(board: Board, folder: Path) -> dict[Path, Job]:
    """Every plot :func:`write_plots` writes into ``folder``, by path: what each one draws."""
    jobs: dict[Path, Job | None] = {
        folder / "leaderboard_overall.png": (draw_overall, (board,)),
        folder / "leaderboard_fields.png": (draw_fields, (board,)),
        folder / "leaderboard_seconds.png": _seconds(board),
        folder / "leaderboard_seconds_per_correct.png": _seconds_per_correct(board),
        folder / "leaderboard_dollars.png": _dollars(board),
    }
    for s in board.runs:
        jobs[folder / f"reliability_{s.run_id}.png"] = _reliability(s)
        jobs[folder / f"risk_coverage_{s.run_id}.png"] = _risk_coverage(s)
    return {path: job for path, job in jobs.items() if job is not None}


def start_plots(board: Board, folder: Path) -> None:
    """Start drawing :func:`write_plots`' figures in the worker processes of :func:`paperfields.figures.drawing`
    (nothing outside it), so that they are drawn while the caller does other work."""
    for draw, inputs in plot_jobs(board, folder).values():
        figures.submit(draw, *inputs)


def write_plots(board: Board, folder: Path) -> list[Path]:
    """The plots into ``folder``: leaderboard_overall.png, leaderboard_fields.png, leaderboard_seconds.png,
    leaderboard_seconds_per_correct.png, and leaderboard_dollars.png when a contender has a price (an older one is
    removed otherwise, as is the former leaderboard_cost.png); reliability_<run>.png and risk_coverage_<run>.png for
    every run with per-field confidences. Each is drawn once (paperfields/figures.py: kept in the plot cache, drawn in
    worker processes)."""
    folder.mkdir(parents=True, exist_ok=True)
    jobs = plot_jobs(board, folder)
    start_plots(board, folder)
    written = [_write(path, job) for path, job in jobs.items()]
    for old in [
        *folder.glob("reliability_*.png"),
        *folder.glob("risk_coverage_*.png"),
    ]:  # a run that is gone or has no confidences any more
        if old not in written:
            old.unlink()
    for old in (folder / "leaderboard_cost.png", folder / "leaderboard_dollars.png"):
        if old.exists() and old not in written:
            old.unlink()
    return written
