"""The one call around :meth:`Backend.generate`: cache, timing, usage, redaction, catch-all.

Backends answer one request each (``base.Backend``); everything that is the same for every backend
happens here, once, for the one-by-one runner, the batch runner and :func:`paperfields.api.extract_record`
alike (inspect_ai's ``Model`` around its ``ModelAPI`` has the same cut):

- the strategy's requests, round by round (:class:`~paperfields.extract.strategies.Rounds`, the
  one driver the batch path and the inspect solver use too), so every caller sends, and looks up in
  the cache, the same request;
- the response cache: a request seen before is answered from it (``cached`` set, so its tokens count
  as cached usage and cost nothing) and every answer is stored (``cache.NOT_ANSWERS`` aside);
- timing: ``latency_s`` is the call's wall time, unless the backend measured its own work (the local
  backend, whose requests wait in a queue for the one model: the wait is not model time);
- the catch-all: any exception from a backend but :class:`BackendError` (which stops the run: the
  backend can answer no request) becomes a ``transport_error`` for that request, so a backend bug
  never loses the other papers' work;
- redaction: every string of every generation is masked with the backend's ``secrets`` (its API
  keys) and anything shaped like an OpenAI secret key, before it reaches a file or the cache; and
  no text from a server can stop the run: a lone UTF-16 surrogate anywhere in it (an error message,
  a refusal, a note), which no UTF-8 file can hold, becomes U+FFFD (the repair ``surrogates``).
"""

from __future__ import annotations

import time
from typing import Any, Optional

from paperfields.core.corpus import Paper
from paperfields.core.runlog import (
    FailureClass,
    Generation,
    GenerationParams,
    RunConfig,
    error_text,
    redact_generation,
    redact_secrets,
    without_surrogates,
)
from paperfields.extract.backends.base import Backend, BackendError, GenerationRequest
from paperfields.extract.cache import ResponseCache, cache_key
from paperfields.extract.strategies import Rounds, Strategy


def identity(config: RunConfig) -> dict[str, Any]:
    """What names the model behind a request in the cache key: backend, base URL, instructor mode,
    grammar flag, the provider's options that change the output (``"options"``, only when there are
    any: keys made before they existed stay equal), and ``"batch": True`` for a Batch API run (its
    answers never share an entry with one-by-one answers)."""
    names = config.model_dump(include={"backend", "base_url", "mode", "grammar"})
    if config.provider_options:
        names["options"] = config.provider_options
    return names | {"batch": True} if config.batch else names


class Model:
    """A backend (None for the batch runner, which sends through the Batch API and only looks up and
    stores answers) with the response cache and the rules above.

    ``identity`` is :func:`identity` of the run's config; ``cache`` None asks the backend every time.
    """

    def __init__(
        self, backend: Optional[Backend], identity: dict[str, Any], cache: Optional[ResponseCache] = None
    ) -> None:
        self.backend = backend
        self.identity = identity
        self.cache = cache

    def _key(self, request: GenerationRequest) -> str:
        return cache_key(self.identity, request)

    def lookup(self, request: GenerationRequest, key: Optional[str] = None) -> Optional[Generation]:
        """The cached answer to ``request`` (marked ``cached``), or None (no cache, or not seen before).
        ``key``: the request's cache key when the caller has it already."""
        if self.cache is None:
            return None
        gen = self.cache.get(key or self._key(request))
        if gen is not None:
            gen.cached = True
        return gen

    def store(self, request: GenerationRequest, gen: Generation, key: Optional[str] = None) -> None:
        """Keep ``gen`` as the answer to ``request`` (not when it is no answer of the model's, nor a reply the
        parser could not use from a backend that is not ``deterministic``: see :meth:`ResponseCache.put`).
        ``key``: the request's cache key when the caller has it already."""
        if self.cache is not None:
            self.cache.put(key or self._key(request), gen, deterministic=getattr(self.backend, "deterministic", False))

    def redact(self, gen: Generation) -> Generation:
        """``gen`` with the backend's secrets and anything shaped like an OpenAI key masked in every string,
        and every lone UTF-16 surrogate replaced (:func:`without_surrogates`)."""
        from pydantic_core import PydanticSerializationError

        keys = self._secrets()
        try:
            # One JSON dump for both: it fails only on a lone surrogate (not UTF-8), which is rare;
            # without one, without_surrogates would return gen itself after a second, slower dump.
            dumped = gen.model_dump_json()
        except PydanticSerializationError:
            return redact_generation(without_surrogates(gen), *keys)
        masked = redact_secrets(dumped, *keys)  # as redact_generation does, on the dump already made
        return gen if masked == dumped else Generation.model_validate_json(masked)

    def _secrets(self) -> tuple[Optional[str], ...]:
        return tuple(getattr(self.backend, "secrets", ()) or ())

    async def generate(self, request: GenerationRequest) -> Generation:
        """The answer to ``request``: from the cache, else from the backend (timed, redacted, stored).

        Raises BackendError when the backend cannot answer any request; every other exception of
        the backend is this request's ``transport_error`` (asked again on resume, never cached).
        """
        key = self._key(request) if self.cache is not None else None  # hashed once: looked up, then stored
        cached = self.lookup(request, key)
        if cached is not None:
            return cached
        assert self.backend is not None, "a Model without a backend only looks up and stores answers"
        start = time.perf_counter()
        try:
            gen = await self.backend.generate(request)
        except (
            BackendError
        ):  # the backend cannot answer any request (a model file llama.cpp cannot load ...): stop the run
            raise
        except Exception as exc:  # a backend bug must not lose the other papers' work
            gen = Generation(
                failure=FailureClass.transport_error, error=error_text(f"{type(exc).__name__}: {exc}", *self._secrets())
            )
        if not gen.latency_s:  # the local backend times its own work, without the wait for the model
            gen.latency_s = time.perf_counter() - start
        gen = self.redact(gen)
        self.store(request, gen, key)
        return gen

    async def extract(self, paper: Paper, strategy: Strategy, params: GenerationParams) -> Generation:
        """``paper``'s one generation: the strategy's requests asked round by round (:class:`Rounds`),
        each round's one after another (so a local model reuses the prompt prefix)."""
        rounds = Rounds(strategy, paper, params)
        while not rounds.done:
            rounds.answer([await self.generate(request) for request in rounds.requests])
        return rounds.result
