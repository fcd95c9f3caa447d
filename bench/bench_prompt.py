"""Prompt and configuration quality per minute on a few dev papers: headline, seconds and tokens per paper.

Each configuration (a strategy, optionally from another prompts folder, e.g. an older version taken out
of git) answers the same dev papers on one model instance, with the backend's grammar and no response
cache; the records are scored with ``score_predictions`` against those papers' gold (the headline:
pooled micro F1 per field, macro over fields). Few-shot examples are dev papers: a configuration that
uses a paper as an example is refused for that paper (pass papers outside ``few_shot.toml``'s list).
Prompt tuning uses the TUNE papers; HELDOUT is read once per prompt version, at the end.

Run: .venv/bin/python bench/bench_prompt.py zero_shot few_shot --papers tune [--model qwen2.5-coder-0.5b]
     .venv/bin/python bench/bench_prompt.py /tmp/old_prompts:zero_shot zero_shot --papers p1463ea37b5,p59349ff425
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Optional

import typer
from _machine import reports_machine  # this folder is on sys.path when run as a script

from paperfields.core.corpus import load_corpus
from paperfields.core.gold import load_gold
from paperfields.core.paths import gold_dir
from paperfields.extract.backends import GenerationRequest
from paperfields.extract.backends.grammar import GRAMMAR_ID
from paperfields.extract.backends.local import LocalBackend
from paperfields.extract.strategies import Strategy, compact
from paperfields.scoring.score import HEADLINE_FIELDS, score_predictions

# Dev papers that are not few-shot examples (few_shot.toml uses pe1ee2bb9ec, p5e6c9dda93, p63a4070ad6,
# spare p847589794e), in three fixed sets: prompts are tuned on TUNE only; HELDOUT is never looked at
# while tuning (read once per final prompt version); SPARE completes the 6-paper comparison of item 4.
PAPER_SETS = {
    "tune": ["p1463ea37b5", "pf9564a42b1", "p59349ff425", "pe43f366303"],
    "heldout": ["p26f8d3af4a", "p495b8ac5c3", "p708dc2807d", "pc74505138d"],
    "spare": ["pb17e85082e", "p814ff3def0", "p097de25d15", "p5840fb4073"],
}
PAPER_SETS["compare"] = PAPER_SETS["heldout"] + PAPER_SETS["spare"][:2]


def _strategy(spec: str) -> Strategy:
    folder, _, name = spec.rpartition(":")
    return Strategy(name, directory=Path(folder) if folder else None)


@reports_machine
def main(
    configs: list[str] = typer.Argument(..., help="strategies: NAME (prompts/NAME.toml) or FOLDER:NAME"),
    papers: str = typer.Option("tune", help="a paper set (tune, heldout, spare, compare) or comma-separated dev ids"),
    model: str = typer.Option("qwen2.5-coder-0.5b", help="local model name or .gguf path"),
    max_tokens: int = typer.Option(1536, help="as paperfields run's --max-tokens"),
    show: Optional[str] = typer.Option(
        None, help="print this field of every record (e.g. research_area); 'all': the whole record"
    ),
    threads: Optional[int] = typer.Option(None, help="llama.cpp CPU threads [default: every core]"),
    grammar: str = typer.Option(
        "backend",
        help="backend: the backend's decoding (compact-v2, fast-forward); gbnf: the same language under "
        "llama.cpp's grammar sampler (compact-v1); reference: llama-cpp-python's own grammar (before "
        "compact-v1); caps: that one with compact-v1's caps",
    ),
) -> None:
    ids = PAPER_SETS.get(papers) or papers.split(",")
    gold = [g for g in load_gold(gold_dir() / "gold.jsonl") if g.id in ids]
    if len(gold) != len(ids) or any(g.split != "dev" for g in gold):
        raise typer.BadParameter(f"--papers: every paper must be a dev gold paper: {ids}")
    corpus = {p.id: p for p in load_corpus(gold_dir() / "corpus.jsonl")}
    from bench_grammar import BeforeBackend, CapsBackend, GbnfBackend  # this folder is on sys.path when run as a script

    backend = {"reference": BeforeBackend, "caps": CapsBackend, "gbnf": GbnfBackend}.get(grammar, LocalBackend)(
        model, n_threads=threads
    )
    print(
        f"{backend.n_threads} threads; model {backend.path.name}; grammar "
        f"{GRAMMAR_ID if grammar == 'backend' else grammar}; papers {','.join(ids)}"
    )
    from paperfields.core.runlog import GenerationParams

    params = GenerationParams(max_tokens=max_tokens)
    for spec in configs:
        strategy = _strategy(spec)
        clash = [pid for pid in ids if pid in strategy.example_ids()]
        if clash:
            raise typer.BadParameter(f"{spec}: papers {clash} are its few-shot examples")
        records, failures, seconds, out_tokens = {}, {}, 0.0, 0
        for pid in ids:
            paper = corpus[pid]
            request = GenerationRequest(
                messages=strategy.messages(paper),
                paper_text=paper.text,
                params=params,
                response_model=strategy.response_model,
            )
            gen = strategy.finalize(paper, [asyncio.run(backend.generate(request))])
            seconds += gen.latency_s
            out_tokens += gen.usage.output_tokens
            records[pid] = gen.record
            if gen.failure:
                failures[pid] = gen.failure.value
            print(
                f"  {spec} {pid}: {gen.latency_s:5.1f} s, {gen.usage.output_tokens:4d} output tokens, "
                f"failure {gen.failure.value if gen.failure else '-'}"
                + (f", {show}={gen.record.get(show) if gen.record else None}" if show and show != "all" else "")
            )
            if show == "all":
                print("    " + (compact(gen.record) if gen.record else gen.raw_text[-300:]))
        scores, _ = score_predictions(
            records, gold, failures=failures, split="dev", abstracts={pid: corpus[pid].text for pid in ids}
        )
        fields = " ".join(
            f"{f}={scores.fields[f].score:.2f}" if scores.fields[f].score is not None else f"{f}=-"
            for f in HEADLINE_FIELDS
        )
        n = len(ids)
        print(
            f"{spec} v{strategy.template.version}: headline {scores.headline:.3f}; valid {n - len(failures)}/{n}; "
            f"{seconds / n:.1f} s/paper; {out_tokens / n:.0f} output tokens/paper\n    {fields}"
        )


if __name__ == "__main__":
    typer.run(main)
