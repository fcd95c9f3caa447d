"""Whether the whole shared prompt prefix can be reused (issue 39 item 2): llama.cpp's logits at the last
prompt position of a dev paper computed fresh (64-token batches from position 0), with the KV cache of the
prefix kept in whole 64-token batches (the backend: the rest computed from the last batch boundary), and
with the whole shared prefix kept (the rest computed in 64-token batches from the prefix's end), at 1 and 2
threads. The backend's reuse must give the fresh logits bit for bit; the whole prefix gives other sums
(the batches differ), so a greedy choice whose top-2 gap is below the difference can change a record.

Run: flock /tmp/pf-bench.lock .venv/bin/python bench/bench_prefix.py [PAPERS]   (default 3; about a minute)
"""

from __future__ import annotations

import os
import sys

import numpy as np
from _machine import reports_machine  # this folder is on sys.path when run as a script

from paperfields.core.corpus import load_corpus
from paperfields.core.gold import load_gold
from paperfields.core.paths import gold_dir
from paperfields.extract.backends.local import N_BATCH, LocalBackend, _load
from paperfields.extract.strategies import Strategy


@reports_machine
def main() -> None:
    import llama_cpp

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    ids = [g.id for g in load_gold(gold_dir() / "gold.jsonl") if g.split == "dev"][:n]
    papers = {p.id: p for p in load_corpus(gold_dir() / "corpus.jsonl")}
    strategy = Strategy("zero_shot")
    backend = LocalBackend("qwen2.5-coder-0.5b", workers=1, n_threads=1)
    llm, _ = _load(backend.path, backend.n_ctx, 1, 9, backend.chat_template)  # an instance of its own
    prompts = {pid: llm.chat_prompt(strategy.messages(papers[pid])) for pid in ids}
    first = next(iter(prompts.values()))
    shared = 0
    while all(len(p) > shared and p[shared] == first[shared] for p in prompts.values()):
        shared += 1
    print(f"shared prefix {shared} tokens; the backend reuses {shared // N_BATCH * N_BATCH}")

    def last_logits(tokens: list[int], cut: int) -> np.ndarray:
        llm.reset()
        llm.eval(tokens[:cut])  # in N_BATCH batches from 0
        llm.eval(tokens[cut:])  # in N_BATCH batches from cut
        ptr = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).astype(np.float64)

    for threads in (1, 2):
        llm.set_threads(threads)
        for pid, tokens in prompts.items():
            fresh = last_logits(tokens, 0)
            batches = last_logits(tokens, shared // N_BATCH * N_BATCH)
            whole = last_logits(tokens, shared)
            top = np.sort(fresh)
            print(
                f"{threads} thread(s) {pid}: max |logit difference| to fresh: "
                f"whole batches {np.abs(fresh - batches).max():.3g}, "
                f"whole prefix {np.abs(fresh - whole).max():.3g}; "
                f"greedy token same {int(fresh.argmax()) == int(whole.argmax())}, "
                f"top-2 gap {top[-1] - top[-2]:.3f}; load {os.getloadavg()[0]:.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
