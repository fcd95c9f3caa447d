"""Batching papers on the local model: throughput gained against answers changed, side by side in one run.

Several papers decoded at once share each llama.cpp forward pass (one ``llama_decode`` over a batch
holding one token per sequence id), which is how an engine serves parallel requests. This bench measures
what that would give the local 0.5B and whether it keeps the project's rule that a paper's answer
depends on its request alone.

Each of N test papers gets the zero-shot strategy's messages, tokenized under the GGUF's chat template
exactly as the backend does (``chat_prompt`` of :func:`paperfields.extract.backends.local._llama_class`).
Decoding is plain greedy argmax for a fixed number of steps (no grammar: the grammar only masks logits,
so it changes neither the cost of a step nor whether batching alters the logits).

- ``reference``: the backend's own llama.cpp instance (same class, context size, ``N_BATCH`` and
  threads as ``local/qwen2.5-coder-0.5b``), one paper at a time: the answers batching must reproduce.
- ``batch B`` for B in the sizes given: a second llama.cpp context on the same weights (the backend's
  context parameters, with ``n_seq_max`` = B), the papers taken B at a time; each generation step
  decodes one token per sequence in one batch. A group's prompts are read either ``together`` (each
  ``llama_decode`` holds the next ``N_BATCH``-token slice of every prompt still being read: does prompt
  reading gain from sharing a pass?) or ``apart`` (each prompt alone in its own ``N_BATCH`` slices, as
  the backend reads it: are the answers changed by batched generation alone?). Batch 1 runs the same
  code with one sequence, as the baseline. Every group has its own context, made up front: the prompts
  are read configuration after configuration, then generation is timed in ``--rounds`` rounds over all
  configurations in alternating order (each round drops what the last generated and keeps the prompt
  cache), so a change of load on a shared machine weighs on every ratio alike. The reference runs first,
  on its own; its speeds are for information, the ratios are to batch 1.

Per batch size it prints prompt-reading time (tokens/s), aggregate generation tokens/s and its ratio to
batch 1, a per-paper time projected for the default run's shape (614 prompt tokens, 99.8 decode steps per
paper, issue 29), and per paper whether its greedy tokens equal the reference's (first diverging step) and
the largest absolute difference of its first-step logits (those computed from the prompt alone). It prints
the machine, threads and load average before and after. Run timed benches one at a time on a shared
machine (``flock /tmp/bench.lock``).

Run: .venv/bin/python bench/bench_batch.py [--papers 8] [--steps 64] [--sizes 1,2,4,8] [--prompts both]
                                        [--rounds 2] [--threads 2] [--kv-unified]
(about 6-10 minutes on 2 cores with the defaults; peak RSS about 1.6 GB: one context per group of papers)
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from _machine import reports_machine  # this folder is on sys.path when run as a script

# The default run's shape per paper (issue 29: zero-shot, 0.5B, fast-forward), for the projected per-paper time.
DEFAULT_RUN_PROMPT_TOKENS = 614
DEFAULT_RUN_DECODE_STEPS = 99.8


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The bench's options: ``papers`` (int >= 1), ``steps`` (greedy steps per paper, int >= 1), ``sizes``
    (batch sizes, a tuple of distinct ints >= 1 in the order given, 1 added first when missing: every ratio
    is to batch 1), ``prompts`` (how a group's prompts are read: a tuple of ``"together"``/``"apart"``), ``rounds``
    (generation rounds, int >= 1), ``threads`` (int >= 1) and
    ``kv_unified`` (bool). Raises SystemExit (argparse) on bad input."""

    def positive(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
        return value

    def sizes(text: str) -> tuple[int, ...]:
        values = tuple(positive(part) for part in text.split(",") if part.strip())
        if not values:
            raise argparse.ArgumentTypeError("no batch size given")
        return tuple(dict.fromkeys(values if 1 in values else (1, *values)))

    parser = argparse.ArgumentParser(description="Batching papers on the local 0.5B: throughput and answer identity.")
    parser.add_argument("--papers", type=positive, default=8, help="test papers (default 8)")
    parser.add_argument("--steps", type=positive, default=64, help="greedy steps per paper (default 64)")
    parser.add_argument(
        "--sizes", type=sizes, default=(1, 2, 4, 8), help="batch sizes, comma-separated (default 1,2,4,8)"
    )
    parser.add_argument(
        "--prompts",
        choices=("together", "apart", "both"),
        default="both",
        help="read a group's prompts together (one pass per slice of all), apart (one at a time) or both (default)",
    )
    parser.add_argument(
        "--rounds", type=positive, default=2, help="generation rounds, configurations in alternating order (default 2)"
    )
    parser.add_argument("--threads", type=positive, default=2, help="llama.cpp threads (default 2)")
    parser.add_argument(
        "--kv-unified",
        action="store_true",
        help="one KV buffer shared by all sequences (llama.cpp's kv_unified; default: one per sequence)",
    )
    args = parser.parse_args(argv)
    args.prompts = ("together", "apart") if args.prompts == "both" else (args.prompts,)
    return args


def first_divergence(tokens: list[int], reference: list[int]) -> int | None:
    """The first step (0-based) at which ``tokens`` and ``reference`` differ, or None when they are equal.
    A sequence that stops early differs at the step where the other goes on."""
    for step, (token, expected) in enumerate(zip(tokens, reference)):
        if token != expected:
            return step
    return None if len(tokens) == len(reference) else min(len(tokens), len(reference))


def prompt_passes(lengths: list[int], n_batch: int, together: bool) -> list[list[tuple[int, int]]]:
    """The ``llama_decode`` passes that read prompts of ``lengths`` tokens: each pass a list of (prompt
    index, offset) slices of up to ``n_batch`` tokens from ``offset``. ``together``: pass k holds slice k
    of every prompt that long; else each pass holds one slice, prompt after prompt (the backend's slices)."""
    if together:
        return [
            [(seq, offset) for seq, length in enumerate(lengths) if offset < length]
            for offset in range(0, max(lengths), n_batch)
        ]
    return [[(seq, offset)] for seq, length in enumerate(lengths) for offset in range(0, length, n_batch)]


@dataclass
class Decoded:
    """One paper's greedy decode: ``tokens`` (steps + 1 ids: the first from the prompt's logits) and
    ``first_logits`` (float32, n_vocab: the logits computed from the prompt alone)."""

    tokens: list[int]
    first_logits: np.ndarray


@dataclass
class Timing:
    """Seconds spent reading prompts and generating, and the tokens each covered (all papers of one size)."""

    prompt_s: float = 0.0
    prompt_tokens: int = 0
    generate_s: float = 0.0
    generated: int = 0
    decoded: dict[int, Decoded] = field(default_factory=dict)


def _logits(ctx: Any, index: int, n_vocab: int) -> np.ndarray:
    import llama_cpp

    return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, index), shape=(n_vocab,)).copy()


def reference_decode(llm: Any, prompt: list[int], steps: int) -> tuple[Decoded, float, float]:
    """``prompt`` then ``steps`` greedy tokens on the backend's own instance, from an empty cache, one
    forward pass per generated token as the backend makes them. Returns the decode and the prompt and
    generation seconds."""
    import llama_cpp

    llm.reset()
    start = time.perf_counter()
    llm.eval(prompt)
    logits = _logits(llm._ctx.ctx, -1, llm.n_vocab())
    prompt_s = time.perf_counter() - start
    tokens, first = [int(np.argmax(logits))], logits
    start = time.perf_counter()
    for _ in range(steps):
        llm.eval([tokens[-1]])
        tokens.append(int(np.argmax(_logits(llm._ctx.ctx, -1, llm.n_vocab()))))
    llama_cpp.llama_synchronize(llm._ctx.ctx)
    return Decoded(tokens, first), prompt_s, time.perf_counter() - start


class BatchedContext:
    """A llama.cpp context on ``llm``'s weights with ``n_seq`` sequences, the backend's context parameters
    otherwise (threads, attention type, ``n_batch`` per sequence), and a ``llama_batch`` to fill."""

    def __init__(self, llm: Any, n_seq: int, per_seq_ctx: int, n_batch: int, kv_unified: bool) -> None:
        import ctypes

        import llama_cpp

        params = llama_cpp.llama_context_params()  # a copy of the backend's: flash attention, threads, rope ...
        ctypes.memmove(ctypes.byref(params), ctypes.byref(llm.context_params), ctypes.sizeof(params))
        params.n_ctx = n_seq * per_seq_ctx
        params.n_seq_max = n_seq
        params.n_batch = params.n_ubatch = n_seq * n_batch  # a pass over every sequence's slice at once
        params.kv_unified = kv_unified
        self.ctx = llama_cpp.llama_init_from_model(llm._model.model, params)
        if self.ctx is None:
            raise RuntimeError(f"llama.cpp could not make a context of {n_seq} sequences x {per_seq_ctx} tokens")
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.batch = llama_cpp.llama_batch_init(params.n_batch, 0, n_seq)
        self.n_seq, self.n_batch, self.n_vocab = n_seq, n_batch, llm.n_vocab()

    def close(self) -> None:
        import llama_cpp

        llama_cpp.llama_batch_free(self.batch)
        llama_cpp.llama_free(self.ctx)

    def _decode(self, entries: list[tuple[int, int, int, bool]]) -> None:
        """One ``llama_decode`` of ``entries`` (token, position, sequence id, wants logits)."""
        import llama_cpp

        batch = self.batch
        batch.n_tokens = len(entries)
        for i, (token, pos, seq, wants) in enumerate(entries):
            batch.token[i], batch.pos[i], batch.n_seq_id[i], batch.logits[i] = token, pos, 1, wants
            batch.seq_id[i][0] = seq
        status = llama_cpp.llama_decode(self.ctx, batch)
        if status != 0:
            raise RuntimeError(f"llama_decode returned {status}")

    def read(self, prompts: list[list[int]], together: bool) -> float:
        """Empty the cache and read ``prompts`` (at most ``n_seq``, sequence i = prompt i), ``together``
        (slice k of every prompt in pass k) or one after another; keep each one's last logits (the first
        step's). Returns the seconds spent."""
        import llama_cpp

        llama_cpp.llama_memory_clear(self.memory, True)
        self.prompts, self.first = prompts, {}
        start = time.perf_counter()
        for slices in prompt_passes([len(p) for p in prompts], self.n_batch, together):
            entries, ends = [], []
            for seq, offset in slices:
                prompt = prompts[seq]
                for i, token in enumerate(prompt[offset : offset + self.n_batch]):
                    last = offset + i == len(prompt) - 1
                    if last:
                        ends.append((seq, len(entries)))
                    entries.append((token, offset + i, seq, last))
            self._decode(entries)
            for seq, index in ends:  # a later pass overwrites the logits
                self.first[seq] = _logits(self.ctx, index, self.n_vocab)
        return time.perf_counter() - start

    def generate(self, steps: int) -> tuple[list[Decoded], float]:
        """``steps`` greedy steps of every prompt read, one batch of one token per sequence each, from the
        prompts' cache (anything generated before is dropped first, so this can be timed again). Returns
        each prompt's decode and the seconds spent."""
        import llama_cpp

        for seq, prompt in enumerate(self.prompts):
            llama_cpp.llama_memory_seq_rm(self.memory, seq, len(prompt), -1)
        tokens = [[int(np.argmax(self.first[seq]))] for seq in range(len(self.prompts))]
        start = time.perf_counter()
        for step in range(steps):
            self._decode([(tokens[seq][-1], len(prompt) + step, seq, True) for seq, prompt in enumerate(self.prompts)])
            for seq in range(len(self.prompts)):
                tokens[seq].append(int(np.argmax(_logits(self.ctx, seq, self.n_vocab))))
        llama_cpp.llama_synchronize(self.ctx)
        return [Decoded(tokens[seq], self.first[seq]) for seq in range(len(self.prompts))], time.perf_counter() - start


@reports_machine
def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    from paperfields.core.corpus import load_corpus
    from paperfields.core.gold import load_gold
    from paperfields.core.paths import gold_dir
    from paperfields.extract.backends.local import N_BATCH, _llama_class, model_path
    from paperfields.extract.strategies import Strategy

    path = model_path("qwen2.5-coder-0.5b")
    test_ids = [g.id for g in load_gold(gold_dir() / "gold.jsonl") if g.split == "test"][: args.papers]
    papers = {p.id: p for p in load_corpus(gold_dir() / "corpus.jsonl")}
    strategy = Strategy("zero_shot")
    # the backend's instance: _load() in local.py with these threads
    llm = _llama_class()(
        model_path=str(path),
        n_ctx=8192,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        n_batch=N_BATCH,
        verbose=False,
        seed=0,
    )
    prompts = [llm.chat_prompt(strategy.messages(papers[pid])) for pid in test_ids]
    per_seq_ctx = -(-(max(map(len, prompts)) + args.steps + 1) // 256) * 256
    print(f"llama.cpp threads {args.threads}; model {path.name}")
    print(
        f"papers {len(test_ids)} (test split, zero_shot v{strategy.template.version}), prompt tokens "
        f"{min(map(len, prompts))}-{max(map(len, prompts))} (mean {sum(map(len, prompts)) / len(prompts):.0f}); greedy "
        f"steps {args.steps}; prompt slices of {N_BATCH}; KV cache "
        f"{'unified' if args.kv_unified else 'one per sequence'}"
    )

    reference = Timing()
    for i, prompt in enumerate(prompts):
        decoded, prompt_s, generate_s = reference_decode(llm, prompt, args.steps)
        reference.decoded[i] = decoded
        reference.prompt_s += prompt_s
        reference.prompt_tokens += len(prompt)
        reference.generate_s += generate_s
        reference.generated += args.steps

    # One context per group of papers, made up front, so generation can be timed in interleaved rounds.
    configs: dict[
        str, tuple[bool, list[tuple[int, BatchedContext]]]
    ] = {}  # label -> (together, [(first paper, context)])
    try:
        for size in args.sizes:
            for mode in args.prompts if size > 1 else ("apart",):
                label = f"batch {size}" + (f", prompts {mode}" if size > 1 else "")
                configs[label] = (
                    mode == "together",
                    [
                        (first, BatchedContext(llm, size, per_seq_ctx, N_BATCH, args.kv_unified))
                        for first in range(0, len(prompts), size)
                    ],
                )
        timings = {label: Timing() for label in configs}
        for label, (together, groups) in configs.items():  # prompts: every configuration once, in turn
            for first, context in groups:
                chunk = prompts[first : first + context.n_seq]
                timings[label].prompt_s += context.read(chunk, together)
                timings[label].prompt_tokens += sum(map(len, chunk))
        changed: dict[str, set[int]] = {label: set() for label in configs}  # papers whose tokens a later round changed
        for round_ in range(args.rounds):  # generation: rounds in alternating order, so load drift hits all alike
            for label in list(configs)[:: -1 if round_ % 2 else 1]:
                for first, context in configs[label][1]:
                    decoded, seconds = context.generate(args.steps)
                    for i, d in enumerate(decoded):
                        if timings[label].decoded.setdefault(first + i, d).tokens != d.tokens:
                            changed[label].add(first + i)
                    timings[label].generate_s += seconds
                    timings[label].generated += len(decoded) * args.steps
    finally:
        for _, groups in configs.values():
            for _, context in groups:
                context.close()

    def projected(t: Timing) -> float:  # seconds per paper of the default run's shape at these speeds
        return (
            DEFAULT_RUN_PROMPT_TOKENS * t.prompt_s / t.prompt_tokens
            + DEFAULT_RUN_DECODE_STEPS * t.generate_s / t.generated
        )

    base = timings["batch 1"]
    base_rate = base.generated / base.generate_s
    print(f"\n{'':34s} prompt reading     generation (aggregate)   per paper (default run's shape)")
    print(
        f"{'reference (the backend; ran first)':34s} {reference.prompt_tokens / reference.prompt_s:6.1f} tok/s      "
        f"{reference.generated / reference.generate_s:6.1f} tok/s              {projected(reference):5.2f} s"
    )
    for label, t in timings.items():
        rate = t.generated / t.generate_s
        print(
            f"{label:34s} {t.prompt_tokens / t.prompt_s:6.1f} tok/s "
            f"x{t.prompt_s and base.prompt_s / t.prompt_s:4.2f}  {rate:6.1f} tok/s x{rate / base_rate:4.2f} of 1    "
            f"{projected(t):5.2f} s x{projected(t) / projected(base):4.2f} of 1"
        )

    print("\nsame greedy tokens as the reference, per paper (first diverging step; max |first-step logit difference|):")
    for label, t in timings.items():
        cells, same = [], 0
        for i in range(len(prompts)):
            ref, got = reference.decoded[i], t.decoded[i]
            step = first_divergence(got.tokens, ref.tokens)
            same += step is None
            diff = float(np.max(np.abs(got.first_logits - ref.first_logits)))
            cells.append(f"{'=' if step is None else f'@{step}'} {diff:.2g}")
        again = (
            f" (round 1 not reproduced by a later round on papers {sorted(changed[label])})" if changed[label] else ""
        )
        print(f"  {label:32s} {same}/{len(prompts)} identical | " + " | ".join(cells) + again)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main(sys.argv[1:])
