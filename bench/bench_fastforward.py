"""Fast-forward decoding (llguidance, grammar compact-v2) against llama.cpp's grammar sampler
(compact-v1), side by side in one run, on dev papers.

Both sides decode the same language (the compact JSON of the schema, lists and strings capped) with
the same model instance, greedy, the order alternating per paper. The "before" side samples every
output token after its own forward pass; the "after" side samples only where the grammar leaves a
choice, and evaluates the tokens it forces (keys, punctuation, the rest of an enum value) in one
batch with the token before them. The records differ where the forced tokens are split into tokens
differently from how the model would have written them, so each side's records are scored against
gold (headline: pooled micro F1 per field, macro over fields).

``--lever canonical`` compares the fast-forward decoding (before) with the same plus re-tokenizing
(after): the sampled token and the tokens forced after it are replaced by the tokenizer's own
tokenization of those bytes (the sampled ``",`` and the forced ``"`` become one ``","``), so the
reply is the same text in fewer tokens if the model then chooses the same.

Prints per paper seconds, output tokens and decode steps (forward passes after the prompt) per side,
then per side the means, headline and valid count, and the after/before ratios of seconds, decode
steps and output tokens.
Run: .venv/bin/python bench/bench_fastforward.py [--papers tune,heldout,spare] [--model qwen2.5-coder-0.5b]
     [--threads N] [--lever fastforward|canonical]
     (about 6 minutes for the 12 papers on 2 idle cores)
"""

from __future__ import annotations

import asyncio
from typing import Optional

import typer
from _machine import reports_machine  # this folder is on sys.path when run as a script
from bench_grammar import GbnfBackend
from bench_prompt import PAPER_SETS

from paperfields.core.corpus import load_corpus
from paperfields.core.gold import load_gold
from paperfields.core.paths import gold_dir
from paperfields.core.runlog import GenerationParams
from paperfields.extract.backends import GenerationRequest
from paperfields.extract.backends.local import LocalBackend
from paperfields.extract.strategies import Strategy
from paperfields.scoring.score import score_predictions


@reports_machine
def main(
    papers: str = typer.Option(
        "tune,heldout,spare", help="paper sets of bench_prompt.py (tune, heldout, spare) or dev ids, comma-separated"
    ),
    strategy: str = typer.Option("zero_shot", help="prompt strategy (prompts/NAME.toml)"),
    model: str = typer.Option("qwen2.5-coder-0.5b", help="local model name or .gguf path"),
    threads: Optional[int] = typer.Option(None, help="llama.cpp CPU threads [default: every core]"),
    lever: str = typer.Option(
        "fastforward",
        help="fastforward: before = llama.cpp's grammar sampler, after = llguidance with fast-forward; "
        "canonical: before = llguidance with fast-forward, after = the same with each sampled token and "
        "the tokens forced after it re-tokenized as the model's tokenizer would write them",
    ),
) -> None:
    ids = [pid for part in papers.split(",") for pid in PAPER_SETS.get(part, [part])]
    gold = [g for g in load_gold(gold_dir() / "gold.jsonl") if g.id in ids]
    if len(gold) != len(ids) or any(g.split != "dev" for g in gold):
        raise typer.BadParameter(f"--papers: every paper must be a dev gold paper: {ids}")
    corpus = {p.id: p for p in load_corpus(gold_dir() / "corpus.jsonl")}
    chosen = Strategy(strategy)
    if lever not in ("fastforward", "canonical"):
        raise typer.BadParameter(f"--lever: fastforward or canonical, not {lever!r}")

    class Canonical(LocalBackend):
        canonical = True

    after = (LocalBackend if lever == "fastforward" else Canonical)(model, n_threads=threads)
    before = GbnfBackend(model, n_threads=threads) if lever == "fastforward" else LocalBackend(model, n_threads=threads)
    sides = {"before": before, "after": after}
    print(
        f"{after.n_threads} threads; model {after.path.name}; strategy {chosen.name} v{chosen.template.version}; "
        f"before = {before.mode}, after = {after.mode}; papers {len(ids)}"
    )
    warm = GenerationRequest(
        messages=chosen.messages(corpus[ids[0]]),
        params=GenerationParams(max_tokens=1),
        response_model=chosen.response_model,
    )
    for backend in sides.values():
        asyncio.run(backend.generate(warm))  # loads the model and llguidance's tokenizer outside the timings

    totals = {side: {"seconds": 0.0, "tokens": 0, "steps": 0} for side in sides}
    records: dict[str, dict] = {side: {} for side in sides}
    failures: dict[str, dict] = {side: {} for side in sides}
    for i, pid in enumerate(ids):
        request = GenerationRequest(
            messages=chosen.messages(corpus[pid]), paper_text=corpus[pid].text, response_model=chosen.response_model
        )
        for side in list(sides) if i % 2 == 0 else list(sides)[::-1]:
            gen = chosen.finalize(corpus[pid], [asyncio.run(sides[side].generate(request))])
            steps = gen.notes.get("decode_steps", 0)
            totals[side]["seconds"] += gen.latency_s
            totals[side]["tokens"] += gen.usage.output_tokens
            totals[side]["steps"] += steps
            records[side][pid] = gen.record
            if gen.failure:
                failures[side][pid] = gen.failure.value
            print(
                f"  {pid} {side:6s}: {gen.latency_s:5.1f} s, {gen.usage.output_tokens:4d} output tokens, {steps:4d} "
                f"decode steps, failure {gen.failure.value if gen.failure else '-'}"
            )
    n = len(ids)
    abstracts = {pid: corpus[pid].text for pid in ids}
    for side in sides:
        scores, _ = score_predictions(records[side], gold, failures=failures[side], split="dev", abstracts=abstracts)
        t = totals[side]
        print(
            f"{side:6s}: {t['seconds'] / n:5.1f} s/paper, {t['tokens'] / n:4.0f} output "
            f"tokens/paper, {t['steps'] / n:4.0f} decode steps/paper; headline "
            f"{scores.headline:.3f}; valid {n - len(failures[side])}/{n}"
        )
    b, a = totals["before"], totals["after"]
    print(
        f"after / before: seconds {a['seconds'] / b['seconds']:.3f}, decode steps {a['steps'] / b['steps']:.3f}, "
        f"output tokens {a['tokens'] / b['tokens']:.3f}"
    )


if __name__ == "__main__":
    typer.run(main)
