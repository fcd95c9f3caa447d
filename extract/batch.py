"""OpenAI Batch API runs (``paperfields run --batch``): every paper as one batch job, resumably.

Flow: one request line per (paper, sample) in ``batch_<n>_input.jsonl`` -> upload it (files API,
purpose ``batch``) -> create the batch -> poll it until a terminal status -> download the output
and error files -> one :class:`Generation` per line through :func:`parse_reply` -> the strategy
(:class:`~paperfields.extract.strategies.Rounds`, the driver of the one-by-one path too) ->
``predictions.jsonl``, line for line what :func:`run_extraction` writes. A strategy that asks again
after the first answers (a later round) gets one more job per round, in the same call: each paper's
rounds are replayed from what is known (the jobs' files, the cache), and the first requests not
known are the next job's.

Files in the run folder, beside ``predictions.jsonl`` and ``manifest.json`` (none holds the API key):

- ``batch.json``: the job the folder waits for (:class:`BatchState`). Run the same command again
  while it is pending and it polls that job instead of submitting another.
- ``batch_<n>_input.jsonl``: the request file of the folder's n-th job (1, 2, ...) as uploaded.
- ``batch_<n>_output.jsonl``, ``batch_<n>_errors.jsonl``: that job's output and error files as
  downloaded; an interrupted ingestion is redone from them (papers already in ``predictions.jsonl``
  are skipped). Each job keeps its own files: a later job (a larger ``--limit``) overwrites none.

One job takes at most ``MAX_BATCH_REQUESTS`` request lines and ``MAX_BATCH_BYTES`` bytes (the
Batch API's limits); a larger request file is refused before anything is uploaded, with how many
papers fit: submit those with ``--limit N``, and a later run with a larger ``--limit`` continues
the same run folder with a new job.

Papers already in ``predictions.jsonl`` are never submitted again, nor are requests the response
cache can answer. Ingested answers are cached under the usual backend identity plus
``"batch": True``, so batch and one-by-one answers never share an entry. Dollars are the price
table's figure times ``BATCH_DISCOUNT`` (0.5: the Batch API bills half price). The model time of a
batch request is not observable, so ``latency_s`` stays 0; the manifest's ``wall_seconds`` holds
the waiting.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, Field, ValidationError

from paperfields.core.corpus import Paper
from paperfields.core.errors import field_error
from paperfields.core.plural import plural
from paperfields.core.runlog import FailureClass, Generation, Manifest, PredictionLine, RunConfig, RunError, error_text
from paperfields.extract.backends.base import BackendError, GenerationRequest, parse_reply, providers
from paperfields.extract.backends.openai_compat import (
    OPENAI_COMPATIBLE,
    rejected_class,
    sampling_params,
    strict_response_format,
    usage_of,
)
from paperfields.extract.backends.prices import Price
from paperfields.extract.cache import NOT_ANSWERS, ResponseCache
from paperfields.extract.call import Model, identity
from paperfields.extract.runner import _RunFolder
from paperfields.extract.strategies import Rounds, Strategy

ENDPOINT = "/v1/chat/completions"
TERMINAL = ("completed", "failed", "expired", "cancelled")
STATE_FILE = "batch.json"
MAX_BATCH_REQUESTS = 50_000  # OpenAI Batch API: requests per input file
MAX_BATCH_BYTES = 200_000_000  # OpenAI Batch API: 200 MB per input file


def job_files(job: int) -> tuple[str, str, str]:
    """Input, output and error file names of a run folder's ``job``-th
    batch job (0: a folder from before jobs were numbered)."""
    if job == 0:
        return "batch_input.jsonl", "batch_output.jsonl", "batch_errors.jsonl"
    return f"batch_{job}_input.jsonl", f"batch_{job}_output.jsonl", f"batch_{job}_errors.jsonl"


class BatchState(BaseModel):
    """``batch.json``: the batch job a run folder submitted, and how far it got."""

    batch_id: str
    input_file_id: str
    custom_ids: list[str] = Field(
        description="the requests submitted, '<paper id>#<sample index>' "
        "('@<round>' after it in a later round), in corpus order"
    )
    status: str = Field(
        description="last status seen: validating, in_progress, "
        "finalizing, completed, failed, expired, cancelling, cancelled"
    )
    created_at: str
    request_counts: dict[str, int] = Field(
        default_factory=dict, description="total / completed / failed, as last polled"
    )
    output_file_id: Optional[str] = None
    error_file_id: Optional[str] = None
    errors: list[str] = Field(default_factory=list, description="batch-level errors (why a batch failed)")
    downloaded: bool = Field(default=False, description="output and error files saved in the run folder")
    job: int = Field(
        default=0,
        description="the run folder's job number (1, 2, ...), in its file "
        "names; 0 for the unnumbered files of older folders",
    )


def custom_id(paper_id: str, sample_index: int, round: int = 0) -> str:
    """The request id of one sample of one paper: ``<paper id>#<sample index>``, and ``@<round>`` after
    it for a request of a later round (a strategy that asks again after the first answers)."""
    return f"{paper_id}#{sample_index}" + (f"@{round}" if round else "")


def _paper_id(cid: str) -> str:
    return cid.rpartition("#")[0]


def load_state(run_dir: Path) -> Optional[BatchState]:
    """``batch.json`` of a run folder, or None when there is none. Raises RunError naming the file when it is bad."""
    path = run_dir / STATE_FILE
    if not path.is_file():
        return None
    try:
        return BatchState.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise RunError(f"{path}: {field_error(exc)}") from None


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def _save_state(run_dir: Path, state: BatchState) -> None:
    _write_atomic(run_dir / STATE_FILE, (state.model_dump_json(indent=2) + "\n").encode("utf-8"))


def batch_providers() -> list[str]:
    """The OpenAI-compatible providers that serve the OpenAI Batch API (``batch=True`` in their row)."""
    providers()  # registers them
    return [name for name, p in sorted(OPENAI_COMPATIBLE.items()) if p.batch]


def check_batch(backend: str, options: BaseModel, strategy: Strategy) -> None:
    """The one place ``--batch`` refuses what it cannot do, before any work: a backend whose provider does
    not serve the OpenAI Batch API, and ``--mode`` or ``--grammar`` (``options``: the provider's, validated),
    since batch requests always carry the strict JSON schema. Raises RunError."""
    if backend.partition("/")[0] not in batch_providers():
        takers = ", ".join(f"{name}/" for name in batch_providers())
        raise RunError(f"--batch works only with {takers} backends (it uses the OpenAI Batch API); got '{backend}'")
    if getattr(options, "mode", None) or getattr(options, "grammar", False):
        raise RunError(
            "--mode and --grammar do not apply to --batch: batch requests always carry the strict JSON schema"
        )


class _Target:
    """What every batch request of a run is sent to: the model (the part after ``provider/``) and the keys
    the provider's request-body hook adds (from the run config's provider options)."""

    def __init__(self, config: RunConfig) -> None:
        name, _, self.model = config.backend.partition("/")
        provider = OPENAI_COMPATIBLE.get(name) if name in batch_providers() else None
        if provider is None or not self.model:
            raise BackendError(f"--batch needs an openai/ backend (the OpenAI Batch API); got '{config.backend}'")
        self.body = provider.body_of(self.model, provider.options.model_validate(config.provider_options))


def _line(cid: str, request: GenerationRequest, target: _Target) -> dict[str, Any]:
    # The one-by-one backend's own parameters, response_format and provider keys: both paths send the same request.
    return {
        "custom_id": cid,
        "method": "POST",
        "url": ENDPOINT,
        "body": {
            "model": target.model,
            "messages": request.messages,
            **sampling_params(target.model, request.params, request.sample_index),
            "response_format": strict_response_format(request.response_model),
            **target.body,
        },
    }


def build_requests(papers: Iterable[Paper], strategy: Strategy, config: RunConfig) -> list[dict[str, Any]]:
    """The batch input lines of the first round for ``papers``: one per (paper, sample index), in paper order.

    Each is ``{"custom_id": "<paper id>#<i>", "method": "POST", "url": "/v1/chat/completions",
    "body": {...}}``; the body holds the model (the part after ``openai/``), the strategy's messages
    (the paper last, unchanged), the parameters of :func:`~paperfields.extract.backends.openai_compat.sampling_params`
    (temperature, max_tokens, seed ``params.seed + i``; for a reasoning model max_completion_tokens
    and no temperature; reasoning_effort when set) and ``response_format`` of type ``json_schema``,
    named after the response model, ``strict``, with the schema from ``all_required(..., strict=True)``.
    Raises BackendError for a backend other than ``openai/``.
    """
    target = _Target(config)
    return [
        _line(custom_id(paper.id, request.sample_index), request, target)
        for paper in papers
        for request in strategy.requests(paper, config.params)
    ]


def generation_from_output(line: dict[str, Any], response_model: type[BaseModel]) -> Generation:
    """One line of the batch output or error file as a Generation.

    A line with ``error`` set or a ``status_code`` other than 200 is a ``transport_error`` carrying
    the server's message, or ``request_rejected`` / ``context_overflow`` for a request the server
    refused (status 400, 413, 422: see ``openai_compat.rejected_class``); otherwise the chat
    completion's text (or its ``refusal``) and finish_reason go through :func:`parse_reply`, with
    usage from ``prompt_tokens``, ``completion_tokens`` and their ``reasoning_tokens``, and ``attempts=1``.
    """
    response = line.get("response") or {}
    body = response.get("body") or {}
    error = line.get("error")
    status = response.get("status_code")
    if error or status != 200:
        detail = error or body.get("error") or {}
        message = detail.get("message") if isinstance(detail, dict) else str(detail)
        code = (detail.get("code") if isinstance(detail, dict) else None) or status
        failure = rejected_class(status, f"{code} {message}") or FailureClass.transport_error
        return Generation(
            failure=failure, error=error_text(f"batch request failed ({code}): {message or 'no response'}")
        )
    choices = body.get("choices")
    if (
        not isinstance(choices, list)
        or not choices
        or not isinstance(choices[0], dict)
        or not isinstance(choices[0].get("message"), dict)
    ):
        # No model reply in the body: a transport error (asked again on resume), not the model's empty reply.
        return Generation(
            failure=FailureClass.transport_error,
            error="batch response body is not a chat completion (no choices with a message)",
        )
    message = choices[0]["message"]
    refusal = message.get("refusal")
    gen = parse_reply(message.get("content") or refusal, choices[0].get("finish_reason"), response_model)
    if refusal and gen.record is None and gen.failure != FailureClass.truncated:
        gen.failure, gen.error = FailureClass.refusal, "model declined to answer"
    usage = body.get("usage") or {}
    gen.usage = usage_of(usage)
    gen.attempts = 1
    return gen


def _read_lines(run_dir: Path, job: int, state: Optional[BatchState] = None) -> dict[str, dict[str, Any]]:
    """custom_id -> output or error line of the folder's ``job``-th job, from its downloaded files (none
    when they are gone). Given the job's ``state``, ids that were not submitted are warned about and dropped.
    Raises RunError naming the file and line of a line that is not a batch output line."""
    submitted = set(state.custom_ids) if state is not None else None
    lines: dict[str, dict[str, Any]] = {}
    for name in job_files(job)[1:]:
        path = run_dir / name
        if not path.is_file():
            continue
        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
                cid = line["custom_id"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise RunError(f"{path}:{number}: not a batch output line (JSON with a custom_id)") from None
            if submitted is not None and cid not in submitted:
                warnings.warn(
                    f"{path}:{number}: custom_id '{cid}' was not submitted in batch {state.batch_id}; line ignored",
                    RuntimeWarning,
                    stacklevel=2,
                )
                continue
            lines[cid] = line
    return lines


class _Answers:
    """What is known of each request of a batch run, asked in this order: the jobs finished during
    this call (their output and error lines, failures included; a request a job holds no line for is a
    ``transport_error``), the response cache, then the answers of the folder's earlier jobs, read from
    their files when first needed, transport errors and refused requests left out (those are asked
    again). Answers of a job finished during this call are redacted and stored in the cache."""

    def __init__(self, run_dir: Path, model: Model, jobs: int) -> None:
        self.run_dir, self.model, self.jobs = run_dir, model, jobs
        self.fresh: dict[str, Any] = {}  # custom_id -> output line, or the Generation of a request without one
        self._earlier: Optional[dict[str, dict[str, Any]]] = None
        self._known: dict[str, Generation] = {}

    def finished(self, state: BatchState) -> None:
        """Take in the lines of the downloaded job ``state`` describes."""
        lines = _read_lines(self.run_dir, state.job, state)
        errors = ": " + "; ".join(state.errors) if state.errors else ""
        reason = f"no answer in batch {state.batch_id} (status {state.status}{errors})"
        for cid in state.custom_ids:
            self.fresh[cid] = lines.get(cid) or Generation(failure=FailureClass.transport_error, error=reason)
            self._known.pop(cid, None)

    def answer(self, cid: str, request: GenerationRequest) -> Optional[Generation]:
        """The answer to ``request`` (id ``cid``), or None when it must be asked."""
        if cid in self._known:
            return self._known[cid]
        gen = self.fresh.get(cid)
        if isinstance(gen, dict):
            gen = self.model.redact(generation_from_output(gen, request.response_model))
            self.model.store(request, gen)
        if gen is None:
            gen = self.model.lookup(request)
        if gen is None and cid in self._earlier_lines():
            gen = self.model.redact(generation_from_output(self._earlier_lines()[cid], request.response_model))
            gen = None if gen.failure in NOT_ANSWERS else gen
        if gen is not None:
            self._known[cid] = gen
        return gen

    def _earlier_lines(self) -> dict[str, dict[str, Any]]:
        if self._earlier is None:
            self._earlier = {}
            for job in range(self.jobs + 1):  # later jobs win: a request asked again after a transport error
                self._earlier.update(_read_lines(self.run_dir, job))
        return self._earlier


async def _poll(
    client: Any,
    state: BatchState,
    run_dir: Path,
    poll_interval_s: float,
    on_status: Optional[Callable[[BatchState], None]],
) -> None:
    """Retrieve the batch every ``poll_interval_s`` seconds until it reaches a terminal status."""
    while True:
        batch = await client.batches.retrieve(state.batch_id)
        counts = batch.request_counts.model_dump() if batch.request_counts else {}
        if (batch.status, counts) != (state.status, state.request_counts):
            state.status, state.request_counts = batch.status, counts
            if batch.status in TERMINAL:
                state.output_file_id, state.error_file_id = batch.output_file_id, batch.error_file_id
                state.errors = [f"{e.code}: {e.message}" for e in ((batch.errors and batch.errors.data) or [])]
            _save_state(run_dir, state)
            if on_status:
                on_status(state)
        if batch.status in TERMINAL:
            return
        await asyncio.sleep(poll_interval_s)


async def _download(client: Any, state: BatchState, run_dir: Path) -> None:
    for file_id, name in zip((state.output_file_id, state.error_file_id), job_files(state.job)[1:]):
        data = (await client.files.content(file_id)).content if file_id else b""
        _write_atomic(run_dir / name, data)
    state.downloaded = True
    _save_state(run_dir, state)


def _check_limits(lines: list[bytes], pending: list[str], papers: list[Paper]) -> None:
    """RunError before any upload when the request file exceeds MAX_BATCH_REQUESTS or MAX_BATCH_BYTES,
    saying how many papers fit in one job and which ``--limit`` submits them."""
    size = sum(map(len, lines))
    if len(lines) <= MAX_BATCH_REQUESTS and size <= MAX_BATCH_BYTES:
        return
    # The papers whose every request fits, in order (a paper's samples are never split across jobs).
    per_paper: dict[str, list[int]] = {}
    for cid, line in zip(pending, lines):
        per_paper.setdefault(_paper_id(cid), []).append(len(line))
    fit, count, used = 0, 0, 0
    for sizes in per_paper.values():
        if count + len(sizes) > MAX_BATCH_REQUESTS or used + sum(sizes) > MAX_BATCH_BYTES:
            break
        fit, count, used = fit + 1, count + len(sizes), used + sum(sizes)
    first_left_out = list(per_paper)[fit]
    limit = next(i for i, p in enumerate(papers) if p.id == first_left_out)  # --limit keeps the papers before it
    head = (
        f"the batch request file would hold {len(lines):,} requests in {size / 1e6:,.1f} MB for {len(per_paper):,} "
        f"papers; an OpenAI batch job takes at most {MAX_BATCH_REQUESTS:,} requests and {MAX_BATCH_BYTES / 1e6:,.0f} MB"
    )
    if fit == 0:
        raise RunError(f"{head}, and one paper alone ({first_left_out}) exceeds that; nothing was submitted")
    raise RunError(
        f"{head}, so {fit:,} of these papers fit in one job. Nothing was submitted: submit in "
        f"parts with --limit, first --limit {limit}, then run the same command with a larger "
        "--limit, which continues this run folder with a new job"
    )


async def _submit(
    client: Any, run: _RunFolder, pending: dict[str, GenerationRequest], target: _Target, papers: list[Paper]
) -> BatchState:
    lines = [
        (json.dumps(_line(cid, request, target), ensure_ascii=False) + "\n").encode("utf-8")
        for cid, request in pending.items()
    ]
    _check_limits(lines, list(pending), papers)
    data = b"".join(lines)
    job = len(run.manifest.batch_ids) + 1
    input_name = job_files(job)[0]
    _write_atomic(run.run_dir / input_name, data)
    uploaded = await client.files.create(file=(input_name, data, "application/jsonl"), purpose="batch")
    batch = await client.batches.create(input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h")
    created = dt.datetime.fromtimestamp(batch.created_at, dt.timezone.utc).isoformat(timespec="seconds")
    state = BatchState(
        batch_id=batch.id,
        input_file_id=uploaded.id,
        custom_ids=list(pending),
        status=batch.status,
        created_at=created,
        job=job,
    )
    _save_state(run.run_dir, state)
    run.manifest.batch_ids.append(batch.id)
    run.save()
    return state


async def run_batch(
    papers: list[Paper],
    strategy: Strategy,
    config: RunConfig,
    run_dir: Path,
    client: Any,
    cache: Optional[ResponseCache] = None,
    poll_interval_s: float = 30.0,
    on_paper: Optional[Callable[[PredictionLine], None]] = None,
    on_status: Optional[Callable[[BatchState], None]] = None,
    on_start: Optional[Callable[[int], None]] = None,
    price: Optional[Price] = None,
    corpus_path: Optional[str] = None,
) -> Manifest:
    """Extract every paper not yet in ``run_dir`` through the OpenAI Batch API (one job per round of the
    strategy: one for most); return the manifest.

    ``client`` is an ``openai.AsyncOpenAI`` (transport retries are its own ``max_retries``).
    A pending job recorded in ``batch.json`` is polled (never submitted twice); then the papers still
    missing, minus the requests the cache or an earlier job answers, are submitted as a new job, polled every
    ``poll_interval_s`` seconds until completed, failed, expired or cancelled, and ingested. A
    request in the error file or with a non-200 status, and a submitted request missing from both
    files, is a ``transport_error``. ``on_start`` is called once with how many papers are already
    done, ``on_paper`` after each line is written, ``on_status`` when the job's status or request
    counts change. A finished run makes no request. ``price`` and ``corpus_path`` as in
    :func:`~paperfields.extract.runner.run_extraction`.
    Raises RunError (``config.batch`` false, another config in the folder, a bad ``batch.json``, a
    request file over the Batch API's limits: ``MAX_BATCH_REQUESTS``, ``MAX_BATCH_BYTES``),
    BackendError (a provider that does not serve the Batch API) and the openai SDK's errors (upload or batch refused).
    """
    if not config.batch:
        raise RunError(
            "run_batch needs a config with batch=True (its dollars and cache entries differ from a one-by-one run)"
        )
    target = _Target(config)
    run = _RunFolder(papers, config, run_dir, price, corpus_path)
    if on_start:
        on_start(run.already_done)
    if run.finished:
        return run.manifest  # nothing to do: a finished run's manifest stays untouched
    # The Batch API asks the model: here only the cache's lookups and stores, and the jobs' answers.
    book = _Answers(run_dir, Model(None, identity(config), cache), len(run.manifest.batch_ids))
    by_id = {p.id: p for p in papers}

    async def finish(state: BatchState) -> None:
        if not state.downloaded:
            if state.status not in TERMINAL:
                await _poll(client, state, run_dir, poll_interval_s, on_status)
            await _download(client, state, run_dir)
        book.finished(state)

    with run:
        state = load_state(run_dir)
        if state is not None and not all(run.done(_paper_id(cid)) for cid in state.custom_ids):
            await finish(state)
            skipped = [
                pid for pid in dict.fromkeys(map(_paper_id, state.custom_ids)) if pid not in by_id and not run.done(pid)
            ]
            if skipped:
                are, were = ("is", "was") if len(skipped) == 1 else ("are", "were")
                warnings.warn(
                    f"batch {state.batch_id}: {plural(len(skipped), 'paper')} {are} not among this run's papers (a "
                    f"smaller --limit?) and {were} not ingested: {', '.join(skipped[:5])}",
                    RuntimeWarning,
                    stacklevel=2,
                )
        written: set[str] = set()  # papers this call wrote a line for: a transport error is asked again on resume only
        while True:
            # Each paper's rounds are replayed from what is known; the first request not known is asked in the next job.
            pending: dict[str, GenerationRequest] = {}
            for paper in run.todo:
                if paper.id in written or run.done(paper.id):
                    continue
                rounds = Rounds(strategy, paper, config.params)
                while not rounds.done:
                    ids = [custom_id(paper.id, r.sample_index, rounds.round) for r in rounds.requests]
                    known = [book.answer(cid, r) for cid, r in zip(ids, rounds.requests)]
                    if any(gen is None for gen in known):
                        pending.update({cid: r for cid, r, gen in zip(ids, rounds.requests, known) if gen is None})
                        break
                    rounds.answer(known)
                if rounds.done:
                    run.write(paper, rounds.result, on_paper)
                    written.add(paper.id)
            if not pending:
                break
            await finish(await _submit(client, run, pending, target, papers))
    return run.finish()
