"""The local backend's compact grammar against llama-cpp-python's own, side by side in one run.

Three grammars, one lever at a time. before: the grammar llama-cpp-python builds from
``response_format`` (an optional space after every JSON token, lists and strings unbounded). caps:
the same with the caps of :mod:`paperfields.extract.backends.grammar` (maxItems, maxLength). after:
the caps and no optional whitespace (one space after each colon): the language the backend decodes
(compact-v1 under llama.cpp's grammar sampler here; the backend's fast-forward decoding of the same
language is measured by ``bench_fastforward.py``).
The same model instance answers the same dev papers under each, the order rotating per paper (a
later side reuses the first's prompt from the KV cache). Prints per paper seconds, output tokens and
whether the record equals the before one, then the ratios to before of output tokens and seconds.
Run: .venv/bin/python bench/bench_grammar.py [STRATEGY | FOLDER:STRATEGY] [PAPER_ID ...]
     (about 3-5 minutes on 2 idle cores)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from _machine import reports_machine  # this folder is on sys.path when run as a script

from paperfields.core.corpus import load_corpus
from paperfields.core.paths import gold_dir
from paperfields.core.runlog import GenerationParams
from paperfields.extract.backends import GenerationRequest
from paperfields.extract.backends.grammar import GBNF_GRAMMAR_ID, reference_gbnf, schema_gbnf
from paperfields.extract.backends.local import LocalBackend
from paperfields.extract.strategies import Strategy

# Dev papers (never test): three of the prompt-tuning papers (see bench/README.md).
PAPERS = ["p1463ea37b5", "pf9564a42b1", "p59349ff425"]


class GbnfBackend(LocalBackend):
    """The backend's compact grammar (compact-v1) under llama.cpp's own grammar sampler."""

    engine = "gbnf"


class BeforeBackend(GbnfBackend):
    """The backend as it was: llama-cpp-python's own grammar for the schema."""

    def grammar(self, response_model: type) -> Any:
        from llama_cpp import LlamaGrammar

        return LlamaGrammar.from_string(reference_gbnf(response_model), verbose=False)


class CapsBackend(GbnfBackend):
    """llama-cpp-python's whitespace with the backend's caps: the caps lever alone."""

    def grammar(self, response_model: type) -> Any:
        from llama_cpp import LlamaGrammar

        return LlamaGrammar.from_string(schema_gbnf(response_model.model_json_schema(), compact=False), verbose=False)


@reports_machine
def main() -> None:
    folder, _, name = (sys.argv[1] if len(sys.argv) > 1 else "zero_shot").rpartition(
        ":"
    )  # FOLDER:NAME for an older prompt
    strategy = Strategy(name, directory=Path(folder) if folder else None)
    ids = sys.argv[2:] or PAPERS
    papers = {p.id: p for p in load_corpus(gold_dir() / "corpus.jsonl")}
    after = GbnfBackend("qwen2.5-coder-0.5b")
    sides = {
        "before": BeforeBackend("qwen2.5-coder-0.5b"),
        "caps": CapsBackend("qwen2.5-coder-0.5b"),
        "after": after,
    }  # one model instance
    print(
        f"{after.n_threads} threads; "
        f"strategy {strategy.name} v{strategy.template.version}; papers {len(ids)}; after = grammar {GBNF_GRAMMAR_ID}"
    )
    warm = GenerationRequest(messages=strategy.messages(papers[ids[0]]), params=GenerationParams(max_tokens=1))
    asyncio.run(after.generate(warm))  # loads the model outside the timings

    names = list(sides)
    totals = {side: [0.0, 0] for side in names}
    same = {side: 0 for side in names}
    for i, pid in enumerate(ids):
        request = GenerationRequest(messages=strategy.messages(papers[pid]), response_model=strategy.response_model)
        gens = {}
        for side in names[i % 3 :] + names[: i % 3]:
            gen = asyncio.run(sides[side].generate(request))
            gens[side] = gen
            totals[side][0] += gen.latency_s
            totals[side][1] += gen.usage.output_tokens
        for side in names:
            gen = gens[side]
            equal = gen.record is not None and gen.record == gens["before"].record
            same[side] += equal
            print(
                f"  {pid} {side:6s}: {gen.latency_s:6.1f} s, {gen.usage.output_tokens:5d} output "
                f"tokens ({gen.usage.output_tokens / max(gen.latency_s, 1e-9):.1f} tok/s), "
                f"failure {gen.failure.value if gen.failure else '-'}"
                + ("" if side == "before" else f", record {'=' if equal else '!='} before")
            )
    n = len(ids)
    sb, tb = totals["before"]
    for side in names:
        s, t = totals[side]
        print(
            f"{side:6s}: {s / n:6.1f} s/paper, {t / n:5.0f} output tokens/paper"
            + (
                ""
                if side == "before"
                else f"; / before: output tokens {t / tb:.3f}, seconds "
                f"{s / sb:.3f}; same record on {same[side]}/{n} papers"
            )
        )


if __name__ == "__main__":
    main()
