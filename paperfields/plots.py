"""Leaderboard plots (matplotlib, PNG): overall F1 with CI bars, per-field heatmap, cost vs F1."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on CI machines
import matplotlib.pyplot as plt  # noqa: E402

from paperfields.scoring.score import HEADLINE_FIELDS, RunScores  # noqa: E402

_META = {"Software": None}  # no version stamp: the same scores give the same bytes


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of points not dominated when lower x (cost) and higher y (F1) are better."""
    front = []
    for i, (x, y) in enumerate(points):
        if not any((x2 <= x and y2 >= y) and (x2, y2) != (x, y) for x2, y2 in points):
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def plot_overall(scores: list[RunScores], path: Path) -> Path:
    """Horizontal bars of overall F1 per run with 95% CI whiskers."""
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(scores) + 1.5))
    names = [s.run_id for s in scores][::-1]
    values = [s.overall_f1 for s in scores][::-1]
    low = [s.overall_f1 - s.overall_ci95[0] for s in scores][::-1]
    high = [s.overall_ci95[1] - s.overall_f1 for s in scores][::-1]
    ax.barh(names, values, xerr=[low, high], color="#4c72b0", capsize=4)
    ax.set_xlim(0, 1)
    ax.set_xlabel("overall F1 (macro over fields), 95% bootstrap CI; higher is better")
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata=_META)
    plt.close(fig)
    return path


def plot_fields(scores: list[RunScores], path: Path) -> Path:
    """Heatmap of per-field F1: runs x fields."""
    data = [[s.fields[f].f1 for f in HEADLINE_FIELDS] for s in scores]
    fig, ax = plt.subplots(figsize=(12, 0.6 * len(scores) + 2.5))
    image = ax.imshow(data, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(HEADLINE_FIELDS)), HEADLINE_FIELDS, rotation=40, ha="right")
    ax.set_yticks(range(len(scores)), [s.run_id for s in scores])
    for i, row in enumerate(data):
        for j, value in enumerate(row):
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", color="white" if value < 0.6 else "black", fontsize=8)
    fig.colorbar(image, ax=ax, label="F1 (higher is better)")
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata=_META)
    plt.close(fig)
    return path


def plot_cost(scores: list[RunScores], path: Path) -> Path:
    """Seconds per paper (log scale) against overall F1, Pareto front marked."""
    points = [(max(s.seconds_per_paper, 1e-3), s.overall_f1) for s in scores]
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.scatter([p[0] for p in points], [p[1] for p in points], color="#4c72b0")
    for s, (x, y) in zip(scores, points):
        ax.annotate(s.run_id, (x, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
    front = pareto_front(points)
    ax.plot([points[i][0] for i in front], [points[i][1] for i in front], color="#c44e52", linestyle="--", label="Pareto front")
    ax.set_xscale("log")
    ax.set_xlabel("seconds per paper (log; lower is better)")
    ax.set_ylabel("overall F1 (higher is better)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata=_META)
    plt.close(fig)
    return path


def write_plots(scores: list[RunScores], folder: Path) -> list[Path]:
    """All three plots into ``folder``: leaderboard_overall.png, leaderboard_fields.png, leaderboard_cost.png."""
    folder.mkdir(parents=True, exist_ok=True)
    return [plot_overall(scores, folder / "leaderboard_overall.png"), plot_fields(scores, folder / "leaderboard_fields.png"),
            plot_cost(scores, folder / "leaderboard_cost.png")]
