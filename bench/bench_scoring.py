"""Scoring speed: 100 runs x 76 papers, and growth at 76, 760 and 7,600 papers (synthetic predictions).

Predictions are the gold records with items dropped and invented at random (seeded), so matching does
real work. Prints seconds and papers per second side by side; the target is 100 x 76 in <= 5 s and
linear growth (the time ratio close to the paper ratio).
Run: .venv/bin/python bench/bench_scoring.py
"""

from __future__ import annotations

import copy
import platform
import random
import time

from paperfields.core.gold import load_gold
from paperfields.core.paths import gold_dir
from paperfields.core.schema import LIST_FIELDS
from paperfields.scoring.score import score_predictions


def noisy(record: dict, rng: random.Random) -> dict:
    out = copy.deepcopy(record)
    for field in LIST_FIELDS:
        out[field] = [x for x in out[field] if rng.random() > 0.3] + (["Invented Thing %d" % rng.randint(0, 9)] if rng.random() < 0.3 else [])
    out["results"] = [r for r in out["results"] if rng.random() > 0.3]
    return out


def main() -> None:
    gold = load_gold(gold_dir() / "gold.jsonl")
    rng = random.Random(0)
    print(f"machine: {platform.machine()}, python {platform.python_version()}")
    for copies in (1, 10, 100):
        papers = [g.model_copy(update={"id": f"{g.id}-{i}"}) for i in range(copies) for g in gold]
        preds = {g.id: noisy(g.record.model_dump(mode="json"), rng) for g in papers}
        start = time.perf_counter()
        score_predictions(preds, papers, failures={}, run_id="bench", split="all", gold_version="bench")
        seconds = time.perf_counter() - start
        print(f"{len(papers):>6} papers: {seconds:7.2f} s  ({len(papers) / seconds:7.0f} papers/s)")
    one_run = [g for g in gold]
    preds = {g.id: noisy(g.record.model_dump(mode="json"), rng) for g in one_run}
    start = time.perf_counter()
    for _ in range(100):
        score_predictions(preds, one_run, failures={}, run_id="bench", split="all", gold_version="bench")
    print(f"100 runs x 76 papers: {time.perf_counter() - start:.2f} s (target <= 5 s)")


if __name__ == "__main__":
    main()
