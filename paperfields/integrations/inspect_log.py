"""An inspect eval log of the ``paperfields/paperfields`` task turned into a PaperFields run folder.

``paperfields import-inspect LOG`` (and :func:`import_inspect_log`) reads the log with inspect's own
:func:`inspect_ai.log.read_eval_log` and writes ``runs/<run-id>/`` through
:func:`paperfields.scoring.imported.write_imported_run`, so the run is scored, compared, reported and
published like any other:

- ``predictions.jsonl``: one line per paper, in corpus order, holding the Generation the task's scorer
  made of the reply (``score.metadata["generation"]``: record or failure class, error, repairs, notes,
  usage, seconds), with its grounding in the abstract; a sample that ended in an error (inspect's
  retries ran out) is a ``transport_error`` line, so the run is unfinished, as a ``paperfields run``
  whose server never answered;
- ``manifest.json``: the config (backend ``inspect/<inspect model>``, its base URL, ``mode``
  ``json_schema`` when the task asked for the provider's structured output, ``grammar`` true when it
  sent llama.cpp's grammar (``-T structured=grammar``), strategy, prompt version and sha256,
  few-shot example ids, split, schema version, temperature, max_tokens and seed as the eval ran them,
  the corpus fingerprint of a corpus of one's own), the papers asked (the eval's sample ids), usage and
  requests, model seconds, wall time, start and end, and under ``import`` the log's file name, sha256,
  eval id, inspect version and the task's own headline.

The log's dollars are unknown unless inspect reports a cost for every sample (``total_cost``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any, Optional

from paperfields.core import paths
from paperfields.core.corpus import load_corpus
from paperfields.core.runlog import (
    FailureClass,
    GenerationParams,
    Manifest,
    PredictionLine,
    RunConfig,
    RunError,
    Usage,
    default_run_id,
    redact_secrets,
)
from paperfields.integrations.inspect_task import TASK_FORMAT
from paperfields.scoring.imported import write_imported_run

TASK = "paperfields/paperfields"
BACKEND_PREFIX = "inspect/"


def _generation_of(sample: Any) -> Optional[dict[str, Any]]:
    """The Generation the task's scorer stored for ``sample``, or None when it was not scored."""
    for score in (sample.scores or {}).values():
        if isinstance(score.metadata, dict) and isinstance(score.metadata.get("generation"), dict):
            return score.metadata["generation"]
    return None


def _usage(model_usage: dict[str, Any]) -> Usage:
    total = Usage()
    for usage in model_usage.values():
        total = total + Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            reasoning_tokens=usage.reasoning_tokens or 0,
        )
    return total


def _seconds_between(start: str, end: str) -> float:
    try:
        return round((dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)).total_seconds(), 3)
    except (TypeError, ValueError):
        return 0.0


def _headline_of(log: Any) -> Optional[float]:
    for score in log.results.scores if log.results else []:
        if "headline" in score.metrics:
            return score.metrics["headline"].value
    return None


def import_inspect_log(log_path: Path, runs_dir: Optional[Path] = None, run_id: Optional[str] = None) -> Path:
    """Write the run folder of an inspect eval log of the ``paperfields/paperfields`` task (see the
    module docstring) under ``runs_dir`` (default ``runs/``) as ``run_id`` (default
    ``inspect_<model>__<strategy>__<split>``); returns the folder. Importing the same log again leaves
    the folder as it is.

    Raises RunError naming the log when it is missing or unreadable, is not a log of the paperfields
    task (or of another format of it: ``TASK_FORMAT`` in the task's metadata), holds no samples
    (``--no-log-samples``), ran more than one epoch, or a sample's stored generation is not a valid
    prediction line; naming the folder when it holds other predictions; CorpusError when
    the corpus the eval ran on is gone."""
    from inspect_ai.log import read_eval_log

    if not log_path.is_file():
        raise RunError(f"{log_path}: no such file (give an inspect log: logs/<...>.eval or .json)")
    try:
        log = read_eval_log(str(log_path))
    except Exception as exc:  # inspect raises its own and pydantic's errors for a file that is not a log
        raise RunError(f"{log_path}: not an inspect eval log ({type(exc).__name__}: {str(exc)[:200]})") from None
    spec = log.eval
    meta = spec.metadata or {}
    # recognized by the task's own metadata: the registry name lacks the package prefix when inspect
    # does not see paperfields as an installed package (python run inside the checkout)
    if meta.get("paperfields_task") != TASK_FORMAT:
        what = (
            f"written by another version of the task (format {meta['paperfields_task']}, this one reads {TASK_FORMAT})"
            if "paperfields_task" in meta
            else f"a log of the task '{spec.task}'"
        )
        raise RunError(f"{log_path}: {what}, not of {TASK} (inspect eval {TASK} --model ...)")
    if not log.samples:
        raise RunError(
            f"{log_path}: the log holds no samples (an eval run with --no-log-samples, or one that never started); "
            "nothing to import"
        )
    if (spec.config.epochs or 1) > 1:
        raise RunError(
            f"{log_path}: the eval ran {spec.config.epochs} epochs; a run "
            "has one answer per paper (run it with one epoch)"
        )
    corpus_path = Path(meta["corpus_path"]) if meta.get("corpus_path") else paths.gold_dir() / "corpus.jsonl"
    papers = {p.id: p for p in load_corpus(corpus_path)}
    order = {pid: i for i, pid in enumerate(papers)}
    lines = []
    for sample in sorted(log.samples, key=lambda s: order.get(str(s.id), len(order))):
        paper_id = str(sample.id)
        where = f"{log_path}: sample {paper_id}"
        if paper_id not in papers:
            raise RunError(f"{where}: not a paper of {corpus_path}")
        generation = _generation_of(sample)
        if sample.error is not None:
            # inspect's retries ran out (or the sample failed otherwise): no answer yet, as a transport error in a run
            line = PredictionLine(
                paper_id=paper_id,
                failure=FailureClass.transport_error,
                attempts=0,
                usage=_usage(sample.model_usage),
                error=redact_secrets(f"inspect sample error: {sample.error.message}")[:300],
            )
        elif generation is None:
            continue  # never scored (the eval stopped first): not done, asked again by nobody; the run is incomplete
        else:
            try:
                line = PredictionLine.model_validate({**generation, "paper_id": paper_id, "dollars": None})
            except ValueError as exc:
                raise RunError(f"{where}: the scorer's generation is not a prediction line ({exc})") from None
        if line.record is not None:
            line.grounding = line.located(papers[paper_id].text)
        costs = [u.total_cost for u in sample.model_usage.values()]
        line.dollars = sum(costs) if costs and all(c is not None for c in costs) else None
        lines.append(line)
    asked = [str(i) for i in (spec.dataset.sample_ids or [s.id for s in log.samples])]
    asked.sort(key=lambda pid: order.get(pid, len(order)))
    # the config the eval ran with: the task's (log.plan.config)
    # under what the command line gave (model_generate_config)
    generate = log.plan.config.merge(spec.model_generate_config)
    params = GenerationParams(
        temperature=generate.temperature if generate.temperature is not None else 0.0,
        max_tokens=generate.max_tokens or 1536,
        seed=generate.seed or 0,
    )
    backend = BACKEND_PREFIX + spec.model
    try:
        config = RunConfig(
            backend=backend,
            base_url=spec.model_base_url,
            mode="json_schema" if meta.get("structured_output") == "schema" else None,
            grammar=meta.get("structured_output") == "grammar",
            strategy=meta["strategy"],
            prompt_version=meta["prompt_version"],
            prompt_sha256=meta["prompt_sha256"],
            example_ids=meta.get("example_ids") or [],
            split=meta["split"],
            schema_version=meta["schema_version"],
            params=params,
            corpus=meta.get("corpus"),
        )
    except (KeyError, ValueError) as exc:
        raise RunError(
            f"{log_path}: the task's metadata lacks what a run records ({exc}); was it written by the paperfields task?"
        ) from None
    done = {line.paper_id for line in lines if line.failure != FailureClass.transport_error}
    dollars = [line.dollars for line in lines]
    started, finished = log.stats.started_at or spec.created, log.stats.completed_at or None
    manifest = Manifest(
        run_id=run_id or default_run_id(backend, config.strategy, config.split),
        config=config,
        git_commit=None,
        started_at=started,
        finished_at=finished,
        status="complete" if log.status == "success" and set(asked) <= done else "incomplete",
        paper_ids=asked,
        papers_total=len(asked),
        usage=_usage({f"{i}/{k}": u for i, s in enumerate(log.samples) for k, u in s.model_usage.items()}),
        model_requests=sum(line.attempts for line in lines),
        model_seconds_total=round(sum(line.latency_s for line in lines), 3),
        wall_seconds=_seconds_between(started, finished) if finished else 0.0,
        dollars_total=round(sum(d for d in dollars if d is not None), 6)
        if dollars and all(d is not None for d in dollars)
        else None,
        corpus_path=meta.get("corpus_path"),
    )
    provenance = {
        "imported_from": log_path.name,
        "imported_sha256": hashlib.sha256(log_path.read_bytes()).hexdigest(),
        "inspect_eval_id": spec.eval_id,
        "inspect_version": spec.packages.get("inspect_ai"),
        "inspect_status": log.status,
        "inspect_model": spec.model,
        "inspect_headline": _headline_of(log),
        "task_args": spec.task_args,
    }
    target = (runs_dir or paths.user_runs_dir()) / manifest.run_id
    return write_imported_run(target, lines, manifest, provenance, f"{log_path} (give another --run-id)")
