"""Local backend against the engine: per-paper time vs what llama.cpp's measured speeds allow for the
work the backend really does, and what makes few-shot slower than zero-shot.

The backend (``local/qwen2.5-coder-0.5b``, grammar compact-v2) does not compute every prompt token nor
take a forward pass for every output token: it reuses the KV cache of the prefix a prompt shares with the
previous one (in whole ``N_BATCH`` batches), and the grammar forces about 44% of the output tokens, which
are evaluated in one batch with the sampled token before them. Its ``work_log`` reports, per paper, the
prompt tokens reused and computed, the forced tokens and the decode steps; the ideal is

    computed prompt tokens / prompt speed + forced tokens / prompt speed + decode steps / generation speed

with both speeds measured on raw llama.cpp calls (:class:`EngineProbe`, an instance of its own with the
same threads) before every paper, at the context positions the strategy's papers use (prompt speed: the
last ~300 tokens of a dev paper's prompt, in N_BATCH batches; generation speed: single-token forward
passes right after that prompt), so the ideal follows the load of a shared machine as it changes.
Forced tokens are priced at prompt speed (issue 29's model); they are evaluated in batches of a few
tokens, which cost more per token than a 64-token prompt batch, so the ideal is a lower bound.

Each strategy's papers run twice, interleaved paper by paper on two instances of the model: ``reuse``
(one instance keeps its KV cache across papers, as in a run) and ``fresh`` (the cache reset before each
paper, as in a new process). Prints per paper the seconds (prompt and decode, timed inside the backend),
the counts and the ideal; per strategy and side time / ideal (target <= 1.15); few-shot / zero-shot
per-paper time (target <= 1.3) with the counts behind it; and whether the records are the same on both
sides and as in the committed test runs.
Run: flock /tmp/bench.lock .venv/bin/python bench/bench_local.py [PAPERS] [--threads N]
     (about 9 minutes for 5 papers at 1 thread, the default: a run's worker on a 2-core machine)
"""

from __future__ import annotations

import os
import threading
import time
from typing import Optional

import typer
from _machine import reports_machine  # this folder is on sys.path when run as a script

from paperfields.core.corpus import load_corpus
from paperfields.core.gold import load_gold
from paperfields.core.paths import gold_dir, results_dir
from paperfields.core.runlog import read_predictions
from paperfields.extract.backends import GenerationRequest
from paperfields.extract.backends.local import N_BATCH, LocalBackend, Work, _load
from paperfields.extract.strategies import Strategy

MODEL = "qwen2.5-coder-0.5b"
STRATEGIES = ("zero_shot", "few_shot")
SIDES = ("reuse", "fresh")  # slot 0 keeps its KV cache across papers; slot 1 is reset before each paper
TAIL = 300  # prompt tokens timed for the prompt speed: about what a paper computes when the prefix is reused
STEPS = 48  # single-token forward passes timed for the generation speed


class EngineProbe:
    """Raw llama.cpp speeds on an instance of its own, at the context positions of one strategy's papers:
    the prompt of a paper outside the set is computed once up to a batch boundary ~TAIL tokens from its
    end; each :meth:`speeds` then times the tail (N_BATCH batches from that boundary, as the backend
    computes a prompt after its reused prefix) and STEPS single-token forward passes after it (feeding
    ``reply``), and cuts the cache back to the boundary. About 4 s a probe on 2 threads, so it runs
    before every paper and the ideal follows the machine's load as it changes."""

    def __init__(self, llm, prompt: list[int], reply: list[int]) -> None:
        self.llm, self.prompt, self.reply = llm, prompt, reply[:STEPS]
        self.cut = max(0, (len(prompt) - TAIL) // N_BATCH * N_BATCH)
        llm.reset()
        llm.eval(prompt[: self.cut])

    def speeds(self) -> tuple[float, float]:
        """(prompt tokens/s, forward passes/s)."""
        llm = self.llm
        llm.n_tokens = self.cut
        start = time.perf_counter()
        llm.eval(self.prompt[self.cut :])
        prompt_speed = (len(self.prompt) - self.cut) / (time.perf_counter() - start)
        start = time.perf_counter()
        for token in self.reply:
            llm.eval([token])
        gen_speed = len(self.reply) / (time.perf_counter() - start)
        llm.n_tokens = self.cut
        return prompt_speed, gen_speed


def ideal_parts(work: Work, prompt_speed: float, gen_speed: float) -> tuple[float, float, float]:
    """Seconds the engine needs for ``work``: (computed prompt tokens, forced tokens, decode steps)."""
    return work.computed_tokens / prompt_speed, work.forced_tokens / prompt_speed, work.decode_steps / gen_speed


@reports_machine
def main(
    papers: int = typer.Argument(4, help="test papers per strategy (the first of the committed runs' order)"),
    threads: Optional[int] = typer.Option(
        None, help="llama.cpp CPU threads of each instance (default: a run's worker's, 1 on 2 cores)"
    ),
) -> None:
    threads = threads or LocalBackend(MODEL).n_threads  # a run's worker: 1 thread on a 2-core machine
    backend = LocalBackend(
        MODEL, n_threads=threads, workers=3
    )  # three instances (slots 0, 1 and the probe's), one busy at a time
    backend.work_log = []
    test_ids = {g.id for g in load_gold(gold_dir() / "gold.jsonl") if g.split == "test"}
    corpus = load_corpus(gold_dir() / "corpus.jsonl")
    by_id = {p.id: p for p in corpus}
    committed = {
        name: {
            line.paper_id: line
            for line in read_predictions(results_dir() / "runs" / f"local_{MODEL}__{name}__test" / "predictions.jsonl")
        }
        for name in STRATEGIES
    }
    chosen = [by_id[pid] for pid in committed["zero_shot"] if pid in test_ids][:papers]
    probe = next(p for p in corpus if p.id not in test_ids)  # the speeds are measured on a paper outside the set
    print(
        f"local/{MODEL} ({backend.mode}), {backend.n_threads} threads per instance, one paper at a time; N_BATCH "
        f"{N_BATCH}; papers {papers}: {','.join(p.id for p in chosen)}; speeds measured on {probe.id}"
    )
    llms = [_load(backend.path, backend.n_ctx, backend.n_threads, slot)[0] for slot in (0, 1, 2)]

    summary: dict[str, dict[str, dict[str, float]]] = {}
    for name in STRATEGIES:
        strategy = Strategy(name)
        probe_prompt = llms[2].chat_prompt(strategy.messages(probe))
        engine = EngineProbe(
            llms[2],
            probe_prompt,
            llms[2].tokenize(committed[name][chosen[0].id].raw_text.encode(), add_bos=False, special=False),
        )
        speeds = []
        llms[0].reset()  # the reuse side starts cold, as a run's worker does
        rows = {side: [] for side in SIDES}
        records = {side: {} for side in SIDES}
        for i, paper in enumerate(chosen):
            request = GenerationRequest(
                messages=strategy.messages(paper), paper_text=paper.text, response_model=strategy.response_model
            )
            prompt_speed, gen_speed = engine.speeds()
            speeds.append((prompt_speed, gen_speed))
            print(
                f"  {name:9s} {paper.id} engine at {len(probe_prompt)} prompt tokens: prompt {prompt_speed:.1f} tok/s, "
                f"generation {gen_speed:.1f} steps/s; load {os.getloadavg()[0]:.2f}"
            )
            for side in SIDES if i % 2 == 0 else SIDES[::-1]:
                slot = SIDES.index(side)
                if side == "fresh":
                    llms[slot].reset()
                gen = backend._complete_on(slot, request, threading.Event())
                work = backend.work_log[-1]
                final = strategy.finalize(paper, [gen])
                records[side][paper.id] = final.record
                parts = ideal_parts(work, prompt_speed, gen_speed)
                rows[side].append((gen.latency_s, work, parts))
                print(
                    f"  {name:9s} {paper.id} {side}: {gen.latency_s:5.1f} s (prompt {work.prompt_s:4.1f} + decode "
                    f"{work.decode_s:4.1f}); prompt {work.prompt_tokens} tokens, {work.reused_tokens} reused, "
                    f"{work.computed_tokens} computed; output {work.output_tokens} tokens, {work.forced_tokens} "
                    f"forced, {work.decode_steps} decode steps; ideal {sum(parts):4.1f} s ({parts[0]:.1f} + "
                    f"{parts[1]:.1f} + {parts[2]:.1f}); failure {gen.failure.value if gen.failure else '-'}"
                )
        print(
            f"{name}: engine speeds, mean of the probes: prompt {sum(p for p, _ in speeds) / len(speeds):.1f} tok/s, "
            f"generation {sum(g for _, g in speeds) / len(speeds):.1f} steps/s"
        )
        summary[name] = {}
        for side in SIDES:
            n = len(rows[side])
            seconds = sum(r[0] for r in rows[side])
            ideal = sum(sum(r[2]) for r in rows[side])
            mean = {
                key: sum(getattr(r[1], key) for r in rows[side]) / n
                for key in (
                    "prompt_tokens",
                    "reused_tokens",
                    "computed_tokens",
                    "output_tokens",
                    "forced_tokens",
                    "decode_steps",
                    "prompt_s",
                    "decode_s",
                )
            }
            warm = rows[side][1:] or rows[side]
            summary[name][side] = {
                **mean,
                "seconds": seconds / n,
                "warm_seconds": sum(r[0] for r in warm) / len(warm),
                "warm_computed": sum(r[1].computed_tokens for r in warm) / len(warm),
            }
            print(
                f"{name} {side}: {seconds / n:5.1f} s/paper (prompt {mean['prompt_s']:.1f} s + decode "
                f"{mean['decode_s']:.1f} s), ideal {ideal / n:5.1f} s/paper (computed prompt "
                f"{sum(r[2][0] for r in rows[side]) / n:.1f} + forced {sum(r[2][1] for r in rows[side]) / n:.1f} "
                f"+ decode steps {sum(r[2][2] for r in rows[side]) / n:.1f}); time / ideal = "
                f"{seconds / ideal:.3f} (target <= 1.15)"
            )
            print(
                f"    per paper: {mean['prompt_tokens']:.0f} prompt tokens, {mean['computed_tokens']:.0f} computed "
                f"({summary[name][side]['warm_computed']:.0f} after the first paper, "
                f"{summary[name][side]['warm_seconds']:.1f} s/paper); {mean['output_tokens']:.0f} output tokens, "
                f"{mean['forced_tokens']:.0f} forced, {mean['decode_steps']:.0f} decode steps"
            )
        same = sum(records["reuse"][pid] == records["fresh"][pid] for pid in records["reuse"])
        as_committed = sum(records[side][pid] == committed[name][pid].record for side in SIDES for pid in records[side])
        print(
            f"{name} records: reuse = fresh on {same}/{len(chosen)} papers; = the committed run's "
            f"on {as_committed}/{2 * len(chosen)} (both sides)"
        )

    zero, few = summary["zero_shot"], summary["few_shot"]
    print(
        f"few-shot / zero-shot per-paper time: reuse {few['reuse']['seconds'] / zero['reuse']['seconds']:.3f}, "
        f"reuse after the first paper {few['reuse']['warm_seconds'] / zero['reuse']['warm_seconds']:.3f}, "
        f"fresh {few['fresh']['seconds'] / zero['fresh']['seconds']:.3f} (target <= 1.3)"
    )
    print(
        "few-shot / zero-shot, per paper: "
        + ", ".join(
            f"{label} {few[side][key]:.0f} / {zero[side][key]:.0f} = {few[side][key] / zero[side][key]:.2f}"
            for label, side, key in (
                ("prompt tokens", "fresh", "prompt_tokens"),
                ("computed after the first paper (reuse)", "reuse", "warm_computed"),
                ("output tokens", "reuse", "output_tokens"),
                ("forced", "reuse", "forced_tokens"),
                ("decode steps", "reuse", "decode_steps"),
                ("decode seconds", "reuse", "decode_s"),
            )
        )
    )
    for name, lines in committed.items():
        values = list(lines.values())
        print(
            f"committed {name} run, {len(values)} papers: {sum(v.usage.input_tokens for v in values) / len(values):.0f}"
            f" prompt tokens, {sum(v.usage.output_tokens for v in values) / len(values):.0f} output tokens, "
            f"{sum(v.notes.get('decode_steps', 0) for v in values) / len(values):.0f} decode steps, "
            f"{sum(v.latency_s for v in values) / len(values):.1f} s/paper"
        )


if __name__ == "__main__":
    typer.run(main)
