"""What a history-free local answer costs: per-paper time of three ways to treat the KV cache.

- ``reuse``: plain llama_cpp.Llama (n_batch 512), reusing any prompt prefix shared with the previous
  paper, as the backend did before: fastest, but a paper's greedy answer depends on the paper before.
- ``reset``: the whole prompt recomputed for every paper (history-free, the simple way).
- ``whole batches``: the backend's way (``local._llama_class``): a shared prefix is reused in whole
  prompt batches only, counted from the start (history-free too); tried at several batch sizes.

Each way has its own model instance and reads the papers in the same order, interleaved paper by
paper so all ways share the machine's load. The ways differ only in prompt work, measured with
max_tokens=1. A paper's generation time is the same for every way: it is the mean output length of
the committed zero-shot run over the generation speed measured here (a 64-token answer). Prints
per-paper seconds (prompt + generation) and their ratio to ``reuse``, for zero-shot and few-shot.
Run: .venv/bin/python bench/bench_kv.py [PAPERS]   (about 5-10 minutes on 2 cores for 3 papers)
"""

from __future__ import annotations

import os
import sys
import time

from _machine import reports_machine  # this folder is on sys.path when run as a script
from llama_cpp import Llama

from paperfields.core.corpus import load_corpus
from paperfields.core.gold import load_gold
from paperfields.core.paths import gold_dir, results_dir
from paperfields.core.runlog import read_predictions
from paperfields.core.schema import PaperRecord, all_required
from paperfields.extract.backends.local import _llama_class
from paperfields.extract.backends.weights import resolve_weights
from paperfields.extract.strategies import Strategy

WHOLE_BATCHES = (64, 128, 256)


@reports_machine
def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    path = str(resolve_weights("qwen2.5-coder-0.5b"))
    threads = os.cpu_count() or 2
    test_ids = {g.id for g in load_gold(gold_dir() / "gold.jsonl") if g.split == "test"}
    papers = [p for p in load_corpus(gold_dir() / "corpus.jsonl") if p.id in test_ids][
        : n + 1
    ]  # the first only warms the cache
    schema = all_required(PaperRecord.model_json_schema())
    history_free = _llama_class()
    ways = {
        "reuse": Llama(model_path=path, n_ctx=8192, n_threads=threads, verbose=False, seed=0),
        "reset": Llama(model_path=path, n_ctx=8192, n_threads=threads, verbose=False, seed=0),
    }
    for size in WHOLE_BATCHES:
        ways[f"whole batches of {size}"] = history_free(
            model_path=path, n_ctx=8192, n_threads=threads, n_batch=size, verbose=False, seed=0
        )
    print(f"{threads} threads; papers {n} (after one warm-up paper)")

    computed = {way: 0 for way in ways}  # prompt tokens each way sends through the model (machine-independent)
    for way, llm in ways.items():

        def counting(tokens, way=way, inner=llm.eval):
            computed[way] += len(tokens)
            return inner(tokens)

        llm.eval = counting

    def ask(llm: Llama, way: str, messages: list, max_tokens: int) -> tuple[float, dict]:
        if way == "reset":
            llm.reset()
        start = time.perf_counter()
        reply = llm.create_chat_completion(
            messages=messages,
            response_format={"type": "json_object", "schema": schema},
            temperature=0.0,
            max_tokens=max_tokens,
            seed=0,
        )
        return time.perf_counter() - start, reply

    committed = results_dir() / "runs" / "local_qwen2.5-coder-0.5b__zero_shot__test" / "predictions.jsonl"
    outputs = [line.usage.output_tokens for line in read_predictions(committed)]
    prompt_only, _ = ask(ways["reset"], "reset", Strategy("zero_shot").messages(papers[0]), 1)
    seconds, reply = ask(ways["reset"], "reset", Strategy("zero_shot").messages(papers[0]), 64)
    speed = (reply["usage"]["completion_tokens"] - 1) / (seconds - prompt_only)
    gen_s = sum(outputs) / len(outputs) / speed
    print(
        f"generation: {speed:.1f} tokens/s; the committed zero-shot answers average "
        f"{sum(outputs) / len(outputs):.0f} tokens: {gen_s:.1f} s/paper"
    )

    for name in ("zero_shot", "few_shot"):
        strategy = Strategy(name)
        prompt_s = {way: [] for way in ways}
        for i, paper in enumerate(papers):
            for way, llm in ways.items():
                if i == 1:
                    computed[way] = 0
                seconds, _ = ask(llm, way, strategy.messages(paper), 1)
                if i:
                    prompt_s[way].append(seconds)
        base = sum(prompt_s["reuse"]) / n + gen_s
        print(f"{name}:")
        for way, seconds in prompt_s.items():
            per_paper = sum(seconds) / n + gen_s
            print(
                f"  {way:22s} prompt {computed[way] / n:6.0f} tokens computed, {sum(seconds) / n:5.2f} s/paper; "
                f"paper {per_paper:6.2f} s, / reuse = {per_paper / base:.3f}"
            )


if __name__ == "__main__":
    main()
