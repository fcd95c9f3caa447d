"""Run the real paperfields CLI (``python tests/cli_child.py run ...``) with two test instruments, so a
test can stop a run in a known state instead of guessing how fast the machine is:

- provider ``gated/<name>``: answers every request at once with ``{}`` (the empty record), except
  that from request number ``$PF_GATE_AFTER + 1`` on (unset: never) it waits until the file
  ``$PF_GATE_FILE`` exists (unset: forever). With ``PF_GATE_AFTER=3`` a run writes exactly three
  lines, then holds still until the test opens the gate, signals or kills it.
- ``$PF_TOKEN_LOG``: a file that gets one byte per token the local model samples (one per decode
  step: llama.cpp's sampler chain is asked once per step by either engine of the local backend), so a
  test can wait until a generation is under way and count how far it went.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from paperfields.extract.backends.base import register_provider
from paperfields.extract.backends.fake import FakeBackend


class GatedBackend(FakeBackend):
    def __init__(self, model: str) -> None:
        super().__init__(model, keep_requests=False)
        after = os.environ.get("PF_GATE_AFTER")
        self.after = int(after) if after else None
        gate = os.environ.get("PF_GATE_FILE")
        self.gate = Path(gate) if gate else None
        self.asked = 0

    async def generate(self, request):
        self.asked += 1
        if self.after is not None and self.asked > self.after:
            while self.gate is None or not self.gate.exists():
                await asyncio.sleep(0.01)
        return await super().generate(request)


@register_provider("gated")
def _gated(model: str, **options) -> GatedBackend:
    return GatedBackend(model)


def _count_tokens(log: Path) -> None:
    from llama_cpp._internals import LlamaSampler

    out = log.open("ab", buffering=0)
    sample = LlamaSampler.sample

    def counted(self, ctx, idx=-1):
        out.write(b".")
        return sample(self, ctx, idx)

    LlamaSampler.sample = counted


if __name__ == "__main__":
    if os.environ.get("PF_TOKEN_LOG"):
        _count_tokens(Path(os.environ["PF_TOKEN_LOG"]))
    from paperfields.cli import app

    app(args=sys.argv[1:], prog_name="paperfields")
