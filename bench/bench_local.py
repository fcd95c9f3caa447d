"""Local backend against the hardware: per-paper time vs what the measured token speeds allow.

In one run on the same model instance: measure prompt speed (tokens/s reading a long prompt with
max_tokens=1) and generation speed (tokens/s writing free text), then time zero-shot and few-shot
extraction of the same papers. Prints, per strategy, per-paper seconds / (prompt tokens / prompt
speed + output tokens / generation speed) (target <= 1.15) and few-shot / zero-shot per-paper time
(target <= 1.3). Prompt tokens reused from the KV cache make the ideal an upper bound for few-shot.
Run: .venv/bin/python bench/bench_local.py [PAPERS]   (about 3-6 minutes on 2 cores for 3 papers)
"""

from __future__ import annotations

import asyncio
import os
import platform
import sys
import time

from paperfields.core.corpus import load_corpus
from paperfields.core.gold import load_gold
from paperfields.core.paths import gold_dir
from paperfields.extract.backends import GenerationRequest, get_backend
from paperfields.extract.backends.local import _load
from paperfields.extract.strategies import Strategy


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    backend = get_backend("local/qwen2.5-coder-0.5b")
    llm, lock = _load(backend.path, backend.n_ctx, backend.n_threads)
    test_ids = {g.id for g in load_gold(gold_dir() / "gold.jsonl") if g.split == "test"}
    papers = [p for p in load_corpus(gold_dir() / "corpus.jsonl") if p.id in test_ids][:n]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {backend.n_threads} threads; model {backend.path.name}; papers {n}")

    long_prompt = " ".join(p.text for p in papers[:2])
    llm.reset()
    start = time.perf_counter()
    reply = llm.create_completion(long_prompt, max_tokens=1, temperature=0)
    prompt_speed = reply["usage"]["prompt_tokens"] / (time.perf_counter() - start)
    llm.reset()
    start = time.perf_counter()
    reply = llm.create_completion("Write a long story about a robot:", max_tokens=96, temperature=0)
    gen_speed = reply["usage"]["completion_tokens"] / (time.perf_counter() - start)
    print(f"measured prompt speed {prompt_speed:.1f} tok/s, generation speed {gen_speed:.1f} tok/s")

    per_paper = {}
    for name in ("zero_shot", "few_shot"):
        strategy = Strategy(name)
        llm.reset()
        times, ideals = [], []
        for paper in papers:
            request = GenerationRequest(messages=strategy.messages(paper), response_model=strategy.response_model)
            gen = asyncio.run(backend.generate(request))
            times.append(gen.latency_s)
            ideals.append(gen.usage.input_tokens / prompt_speed + gen.usage.output_tokens / gen_speed)
            print(f"  {name:9s} {paper.id}: {gen.latency_s:6.1f} s, {gen.usage.input_tokens} prompt + {gen.usage.output_tokens} output tokens, "
                  f"ideal {ideals[-1]:5.1f} s, failure {gen.failure.value if gen.failure else '-'}")
        per_paper[name] = sum(times) / len(times)
        print(f"{name}: {per_paper[name]:.1f} s/paper; time / ideal = {sum(times) / sum(ideals):.3f} (target <= 1.15)")
    print(f"few-shot / zero-shot per-paper time = {per_paper['few_shot'] / per_paper['zero_shot']:.3f} (target <= 1.3)")


if __name__ == "__main__":
    main()
