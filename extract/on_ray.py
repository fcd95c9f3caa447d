"""``paperfields run --engine ray``: the runner's papers as a Ray Data pipeline, into the same run folder.

The driver (this process) opens the run folder exactly as the in-process runner does
(:class:`~paperfields.extract.runner._RunFolder`: the config check, the lock, the papers still to do,
resume), hands those papers to ``Dataset.map_batches`` over a pool of actors, and writes each
finished paper through the folder's own writer as its batch comes back, in finishing order. So a
rerun sends only the papers without a final line, and a paper is written at most once per run part
(a paper Ray hands back twice, after a retried task, is written the first time only).

Each actor hosts the project's own call wrapper (:class:`~paperfields.extract.call.Model`) around a
backend it builds itself, and drives each paper with :meth:`Model.extract` (the strategy's
:class:`~paperfields.extract.strategies.Rounds`): the same messages, schema, instructor mode,
reply reader, retries and failure classes as ``paperfields run``, byte for byte. Ray's own
``ray.data.llm`` processors are not used for OpenAI-compatible endpoints: ``HttpRequestProcessorConfig``
posts a raw JSON body with its own retries, so instructor's request and the reply reader would be
bypassed; its vLLM engine processor needs vLLM (and a GPU), which this project does not install.

Actors: for ``local/`` backends one per node (one per GPU on GPU nodes), each answering its
backend's workers at once; for every other backend ``min(concurrency, cluster CPUs)`` actors sharing
the ``concurrency`` papers in flight. An actor killed mid-batch is restarted by Ray and its batch
retried (``max_restarts``/``max_task_retries``); nothing was written for that batch yet, so its papers
are asked at least once, not exactly once (a paper of the batch may reach the model twice), and written once.

Ray is imported only here, and only when ``--engine ray`` runs: ``pip install 'paperfields[ray]'``.
The cluster is ``$RAY_ADDRESS`` when set (``ray start --head`` on a real cluster), else one Ray
starts on this machine (no dashboard). Every node needs the same PaperFields and prompts installed:
an actor whose prompt differs from the driver's (its sha256) refuses to start.
"""

from __future__ import annotations

import asyncio
import math
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

from paperfields.core.corpus import Paper
from paperfields.core.runlog import Generation, Manifest, PredictionLine, RunConfig, RunError
from paperfields.extract.backends.base import Backend, BackendError
from paperfields.extract.backends.prices import Price
from paperfields.extract.call import Model, identity
from paperfields.extract.runner import _RunFolder
from paperfields.extract.strategies import Strategy

ENGINE = "ray"  # what the manifest's ``engine`` says for a run part done here
INSTALL_HINT = "--engine ray needs Ray Data: pip install 'paperfields[ray]'"


def import_ray() -> Any:
    """The ``ray`` module, or RunError saying how to install it."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise RunError(INSTALL_HINT) from None
    return ray


def _start_ray(ray: Any) -> None:
    """Connect to ``$RAY_ADDRESS``, or start Ray on this machine, unless this process already did."""
    if ray.is_initialized():
        return
    if os.environ.get("RAY_ADDRESS"):
        ray.init(log_to_driver=False)
    else:  # a Ray of our own on this machine: nothing of it may talk beyond it
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")


class PaperActor:
    """One Ray actor: a backend and the project's :class:`Model` around it, answering a batch of
    papers at once on its own event loop. Built on the worker from factories (a backend's client and
    a strategy's templates are not sent over the wire). An actor whose prompt is not the one of the
    run's config (another PaperFields or prompts folder on its node), or whose backend cannot answer,
    answers every batch with that refusal, which the driver raises (RunError, BackendError)."""

    # (make_backend, make_strategy, config, cache path): set on a subclass made for each run (:meth:`bound`),
    # so they travel inside the actor's class rather than as constructor arguments of ours (Ray Data still
    # puts its own map worker's arguments in the object store: the warning Ray prints, ray-project/ray#53727)
    run_args: tuple[Callable[[], Backend], Callable[[], Strategy], RunConfig, Optional[str]]

    @classmethod
    def bound(
        cls,
        make_backend: Callable[[], Backend],
        make_strategy: Callable[[], Strategy],
        config: RunConfig,
        cache_path: Optional[str],
    ) -> type[PaperActor]:
        """This class with the run's factories, config and cache path bound to it."""
        return type(cls.__name__, (cls,), {"run_args": (make_backend, make_strategy, config, cache_path)})

    def __init__(self) -> None:
        # A refusal (RunError, BackendError) travels back as data in each row of the next batch: raised here or
        # in a batch, it would reach the driver as Ray's ActorDiedError or UserCodeException, its class lost.
        self.refused: Optional[Exception] = None
        try:
            self._start(*self.run_args)
        except (RunError, BackendError) as exc:
            self.refused = exc

    def _start(
        self,
        make_backend: Callable[[], Backend],
        make_strategy: Callable[[], Strategy],
        config: RunConfig,
        cache_path: Optional[str],
    ) -> None:
        from paperfields.extract.cache import ResponseCache

        self.strategy = make_strategy()
        if self.strategy.sha256 != config.prompt_sha256:
            raise RunError(
                f"the Ray worker on {os.uname().nodename} has another prompt "
                f"{config.strategy!r} (sha256 {self.strategy.sha256[:12]} against "
                f"{config.prompt_sha256[:12]}): install the same PaperFields on every node"
            )
        self.params = config.params
        self.cache = None
        if cache_path:
            try:
                self.cache = ResponseCache(Path(cache_path))
            except OSError as exc:  # a node where the driver's cache folder cannot be made: ask the model
                warnings.warn(
                    f"the Ray worker on {os.uname().nodename} runs without the response cache: {exc}", stacklevel=1
                )
        self.model = Model(make_backend(), identity(config), self.cache)
        self.loop = asyncio.new_event_loop()

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        """``batch["paper"]``: papers as JSON; returns their ids, their Generations as JSON (in order) and
        ``refused``: "" for each, or for every paper of the batch ``"BackendError: message"`` (or RunError)
        when this actor cannot answer at all (:func:`refusal` turns it back into the error)."""
        papers = [Paper.model_validate_json(text) for text in batch["paper"]]
        ids = [p.id for p in papers]
        if self.refused is None:

            async def all_of_them() -> list[Generation]:
                return list(await asyncio.gather(*(self.model.extract(p, self.strategy, self.params) for p in papers)))

            try:
                generations = [g.model_dump_json() for g in self.loop.run_until_complete(all_of_them())]
                return {"paper_id": ids, "generation": generations, "refused": [""] * len(ids)}
            except (RunError, BackendError) as exc:  # the backend can answer no request: the run stops
                self.refused = exc
        said = f"{type(self.refused).__name__}: {self.refused}"
        return {"paper_id": ids, "generation": [""] * len(ids), "refused": [said] * len(ids)}


def refusal(said: str) -> Exception:
    """The error an actor's ``refused`` column names (``"BackendError: ..."`` or ``"RunError: ..."``)."""
    name, _, message = said.partition(": ")
    return BackendError(message) if name == "BackendError" else RunError(message)


def _pool(ray: Any, local: bool, concurrency: int, backend_concurrency: int) -> tuple[int, int, dict[str, Any]]:
    """(actors, papers per batch, each actor's Ray resources) for the cluster ``ray`` is connected to."""
    resources = ray.cluster_resources()
    cpus = max(1, int(resources.get("CPU", 1)))
    gpus = int(resources.get("GPU", 0))
    if local:  # one model per node (per GPU), answering its own workers' worth of papers at once
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        actors = gpus or max(1, len(nodes))
        per_node = min(int(n.get("Resources", {}).get("CPU", 1)) for n in nodes) if nodes else 1
        ask = {"num_gpus": 1} if gpus else {"num_cpus": max(1, per_node)}  # a whole node's CPUs: one actor a node
        return actors, max(1, backend_concurrency), ask
    actors = max(1, min(concurrency, cpus))
    # an HTTP client waits far more than it computes: a fraction of a CPU each, so the pool always fits
    return actors, math.ceil(concurrency / actors), {"num_cpus": min(1.0, cpus / actors)}


def run_on_ray(
    papers: list[Paper],
    make_backend: Callable[[], Backend],
    make_strategy: Callable[[], Strategy],
    config: RunConfig,
    run_dir: Path,
    concurrency: int = 1,
    on_paper: Optional[Callable[[PredictionLine], None]] = None,
    cache_path: Optional[Path] = None,
    on_start: Optional[Callable[[int], None]] = None,
    price: Optional[Price] = None,
    corpus_path: Optional[str] = None,
    local: bool = False,
    backend_concurrency: int = 1,
    request_options: Optional[dict[str, Any]] = None,
) -> Manifest:
    """Extract every paper not yet in ``run_dir`` on Ray Data; return the finished manifest.

    The arguments are :func:`~paperfields.extract.runner.run_extraction`'s, but the backend and the
    strategy come as factories (each actor builds its own) and the response cache as a path (each
    actor opens it: on one machine they share it; on a cluster each node keeps its own file there).
    ``local``: a ``local/`` backend (one actor per node or GPU, each answering ``backend_concurrency``
    papers at once); else ``concurrency`` papers in flight over the actor pool. ``request_options``
    go into the manifest as the runner records them. Raises RunError (another config in the folder,
    Ray not installed, a worker with another prompt), BackendError (the backend cannot answer), and
    KeyboardInterrupt (the papers written so far are kept; the manifest says ``incomplete``).
    """
    ray = import_ray()
    run = _RunFolder(papers, config, run_dir, price, corpus_path)
    if on_start:
        on_start(run.already_done)
    if run.finished:
        return run.manifest
    todo = {p.id: p for p in run.todo}
    run.manifest.request_options = dict(request_options or {})
    with run:
        try:
            run.manifest.engine = ENGINE
            if todo:
                _start_ray(ray)
                _quiet(ray)
                actors, batch_size, resources = _pool(ray, local, concurrency, backend_concurrency)
                from ray.data import ActorPoolStrategy

                papers_ds = ray.data.from_items(
                    [{"paper": p.model_dump_json()} for p in todo.values()],
                    override_num_blocks=max(1, math.ceil(len(todo) / batch_size)),
                )
                answered = papers_ds.map_batches(
                    PaperActor.bound(make_backend, make_strategy, config, str(cache_path) if cache_path else None),
                    batch_size=batch_size,
                    batch_format="numpy",
                    compute=ActorPoolStrategy(size=actors),
                    # Ray Data's own defaults for an actor pool, max_restarts=-1 and max_task_retries=-1, are what
                    # a killed worker needs: the actor is restarted and its batch retried (nothing of it was written)
                    **resources,
                )
                rows = iter(answered.iter_rows())  # a generator: close() below ends it
                try:
                    for row in rows:
                        if row["refused"]:
                            raise refusal(str(row["refused"]))
                        paper_id = str(row["paper_id"])
                        if paper_id in todo and not run.done(paper_id):
                            run.write(todo[paper_id], Generation.model_validate_json(str(row["generation"])), on_paper)
                finally:  # interrupted too: closing the iterator stops the pipeline and lets its actors go
                    rows.close()
        finally:
            manifest = run.finish()
    return manifest


def _quiet(ray: Any) -> None:
    """No Ray Data progress bars or per-run log lines on the terminal: ``paperfields run`` shows its own."""
    import logging

    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
