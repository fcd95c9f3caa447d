"""Runner peak memory at 7,600 papers vs 76 (synthetic corpus, fake backend), each in a fresh process.

Prints peak RSS (MB) of both and the difference; target: at most +50 MB.
Run: .venv/bin/python bench/bench_memory.py
"""

from __future__ import annotations

import json
import subprocess
import sys

from _machine import reports_machine  # this folder is on sys.path when run as a script

CHILD = """
import asyncio, json, resource, sys, tempfile
from pathlib import Path
from paperfields.extract.backends.fake import FakeBackend
from paperfields.core.corpus import Paper, load_corpus
from paperfields.extract.runner import run_extraction
from paperfields.core.runlog import RunConfig
from paperfields.extract.strategies import Strategy
from paperfields.core.paths import gold_dir
n = int(sys.argv[1])
base = load_corpus(gold_dir() / "corpus.jsonl")
papers = [Paper(id=f"{p.id}-{i}", text=p.text, source=p.source, position=p.position, \
line=p.line) for i in range(n // len(base)) for p in base]
strategy = Strategy("zero_shot")
config = RunConfig(backend="fake/bench", strategy="zero_shot", prompt_version="1", prompt_sha256=strategy.sha256, \
split="test")
with tempfile.TemporaryDirectory() as tmp:
    asyncio.run(run_extraction(papers, FakeBackend("bench", keep_requests=False), strategy, config, Path(tmp) / "run", \
concurrency=8))
print(json.dumps({"papers": len(papers), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


@reports_machine
def main() -> None:
    results = [
        json.loads(
            subprocess.run([sys.executable, "-c", CHILD, str(n)], capture_output=True, text=True, check=True).stdout
        )
        for n in (76, 7600)
    ]
    for r in results:
        print(f"{r['papers']:>5} papers: peak RSS {r['peak_rss_mb']:.1f} MB")
    print(f"difference: {results[1]['peak_rss_mb'] - results[0]['peak_rss_mb']:+.1f} MB (target <= +50 MB)")


if __name__ == "__main__":
    main()
