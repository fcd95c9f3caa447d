"""What the local backend's log-probability capture costs:
per-paper seconds with and without it, side by side in one run.

The capture (:class:`paperfields.extract.backends.local.TokenLogprobs`) runs once per generated token
in llama.cpp's sampler chain (a Python callback over the vocabulary's logits). The same model
instance answers the same dev papers with the capture on and off, the order alternating per paper;
the records must be equal (the capture changes no logit). Prints per-paper seconds and tokens, then
on / off ratios of seconds.
Run: .venv/bin/python bench/bench_confidence.py [--threads N] [PAPER_ID ...]   (about 2-4 minutes on 2 idle cores)
"""

from __future__ import annotations

import asyncio
import sys

from _machine import reports_machine  # this folder is on sys.path when run as a script

from paperfields.core.corpus import load_corpus
from paperfields.core.paths import gold_dir
from paperfields.core.runlog import GenerationParams
from paperfields.extract.backends import GenerationRequest
from paperfields.extract.backends.local import LocalBackend
from paperfields.extract.strategies import Strategy

PAPERS = ["p1463ea37b5", "pf9564a42b1", "p59349ff425", "pe43f366303"]  # dev papers


@reports_machine
def main() -> None:
    args = sys.argv[1:]
    threads = None
    if args[:1] == ["--threads"]:
        threads, args = int(args[1]), args[2:]
    ids = args or PAPERS
    papers = {p.id: p for p in load_corpus(gold_dir() / "corpus.jsonl")}
    strategy = Strategy("zero_shot")
    on = LocalBackend("qwen2.5-coder-0.5b", n_threads=threads)
    off = LocalBackend("qwen2.5-coder-0.5b", n_threads=threads)  # the same model instance
    off.capture_logprobs = False
    print(f"{on.n_threads} threads; papers {len(ids)}")
    warm = GenerationRequest(messages=strategy.messages(papers[ids[0]]), params=GenerationParams(max_tokens=1))
    asyncio.run(on.generate(warm))  # loads the model outside the timings
    totals = {"on": [0.0, 0], "off": [0.0, 0]}
    same = 0
    for i, pid in enumerate(ids):
        request = GenerationRequest(messages=strategy.messages(papers[pid]), response_model=strategy.response_model)
        gens = {}
        for side in ("on", "off") if i % 2 == 0 else ("off", "on"):
            gens[side] = asyncio.run((on if side == "on" else off).generate(request))
            totals[side][0] += gens[side].latency_s
            totals[side][1] += gens[side].usage.output_tokens
        same += gens["on"].record == gens["off"].record
        for side in ("on", "off"):
            g = gens[side]
            print(f"  {pid} capture {side:3s}: {g.latency_s:6.1f} s, {g.usage.output_tokens:4d} output tokens")
    (s_on, t_on), (s_off, t_off) = totals["on"], totals["off"]
    print(f"capture on : {s_on / len(ids):.1f} s/paper ({t_on / s_on:.1f} tok/s)")
    print(f"capture off: {s_off / len(ids):.1f} s/paper ({t_off / s_off:.1f} tok/s)")
    print(f"on / off seconds: {s_on / s_off:.3f} (target <= 1.05); same record on {same}/{len(ids)} papers")


if __name__ == "__main__":
    main()
