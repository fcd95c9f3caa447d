"""PaperFields' entry in the Inspect Evals Register: ``register/paperfields/eval.yaml`` with its evaluation report.

Since 2026-05-08 inspect_evals takes no eval code: an eval is a register entry, a metadata file
pointing at its author's repository at a pinned commit (``source.repository_url``,
``source.repository_commit``), each task with the path of its ``@task`` file (``task_path``), and an
evaluation report block (``evaluation_report``: results rows, the commit they were run against, the
command, a timestamp, notes). The format is inspect_evals' own model of a register entry,
``ExternalEvalMetadata`` in ``inspect_evals/metadata.py`` (inspect_evals 0.28.0); :data:`REGISTER_SCHEMA`
is that model as JSON Schema (inspect_evals itself needs inspect_ai>=0.3.285, so it cannot be installed
beside the pinned inspect extra), and :func:`register_problems` checks an entry against it.

:func:`register_entry` builds the entry from eval logs of the ``paperfields/paperfields`` task (one row
per log: the model, the headline with its 95% bootstrap CI, the valid rate, tokens, time, the papers
scored), so the report is what running the task gave, never typed. Every log must be a complete run
of the test split from one clean commit of this repository, which becomes the pinned commit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from paperfields.core.errors import PaperFieldsError
from paperfields.core.plural import plural
from paperfields.scoring.metrics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from paperfields.scoring.score import ACCURACY_FIELDS, HEADLINE_COUNT

EVAL_ID = "paperfields"  # the register folder's name (inspect_evals injects it as the entry's id)
TASK = "paperfields"
TASK_PATH = "paperfields/integrations/inspect_task.py"
FULL_TITLE = "PaperFields: Structured Extraction of Records from Machine-Learning Paper Abstracts"
COMMON_TITLE = "PaperFields"
# The field count, the accuracy fields and the bootstrap's resamples and seed are read from the code that makes
# them (the schema's field facts, scoring/metrics/bootstrap.py), the papers from the logs: never typed here.
HEADLINE_WHAT = f"macro mean over {HEADLINE_COUNT} fields"


def description(papers: int) -> str:
    """The entry's one-line description for a test split of ``papers`` abstracts."""
    return (
        f"A model turns each of {papers} ICML 2026 abstracts into a structured record (method, contribution types, "
        "research area, tasks, datasets, models, metrics, baselines, quantitative results, code URL), scored field by "
        f"field against hand-labeled gold by PaperFields' own scorer; headline: {HEADLINE_WHAT} of pooled micro F1."
    )


def headline_note(papers: int) -> str:
    """The report's note on how the headline and its CI are made, over ``papers`` test papers."""
    accuracy = " and ".join(ACCURACY_FIELDS)
    return (
        f"headline: the {HEADLINE_WHAT} of each field's micro F1 pooled over the {papers} "
        f"test papers (accuracy for {accuracy}), with its 95% percentile bootstrap CI over papers "
        f"({plural(BOOTSTRAP_RESAMPLES, 'resample')}, seed {BOOTSTRAP_SEED}); the standard error of a mean of "
        "per-paper scores does not describe a pooled F1, so the CI is given instead"
    )


TAGS = ["Information Extraction", "Structured Output", "Scientific Papers"]

_TEXT = {"type": "string", "minLength": 1}
_METRIC = {
    "type": "object",
    "required": ["key", "value"],
    "properties": {"key": {"type": "string"}, "value": {"type": "number"}},
}
REGISTER_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Inspect Evals register entry (inspect_evals 0.28.0 metadata.py ExternalEvalMetadata)",
    "type": "object",
    "required": ["description", "contributors", "tasks", "source", "common_title"],
    "anyOf": [{"required": ["full_title"]}, {"required": ["title"]}],
    "properties": {
        "title": {"type": "string"},
        "full_title": {"type": "string"},
        "common_title": {"type": "string"},
        "paper_title": {"type": ["string", "null"]},
        "description": {"type": "string", "pattern": r"^[^\n]*$"},  # one line: the root README is unwrapped
        "arxiv": {"type": ["string", "null"], "pattern": r"^https?://"},
        "contributors": {"type": "array", "items": {"type": "string"}},
        "tags": {"type": ["array", "null"], "items": {"type": "string"}},
        "tasks": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "task_path"],  # task_path: required on every task of a register entry
                "properties": {
                    "name": {"type": "string"},
                    "dataset_samples": {"type": ["integer", "null"]},
                    "human_baseline": {
                        "type": ["object", "null"],
                        "required": ["metric", "score", "source"],
                        "properties": {
                            "metric": {"type": "string"},
                            "score": {"type": "number"},
                            "source": {"type": "string", "pattern": r"^https?://"},
                        },
                        "additionalProperties": False,
                    },
                    "comment": {"type": ["string", "null"]},
                    "task_path": _TEXT,
                    "kind": {"enum": ["benchmark", "maintenance"]},
                },
                "additionalProperties": False,
            },
        },
        "metadata": {
            "type": ["object", "null"],
            "properties": {
                "fast": {"type": "boolean"},
                "sandbox": {"type": ["array", "null"], "items": {"type": "string"}},
                "requires": {"type": ["object", "null"]},
                "environment": {"type": ["string", "null"]},
                "supports_k8s": {"type": "boolean"},
                "extras": {"type": "object"},
            },
            "additionalProperties": False,
        },
        "source": {
            "type": "object",
            "required": ["repository_url", "repository_commit"],
            "properties": {
                "repository_url": {"type": "string", "pattern": r"^https?://[^/\s]+/\S+$"},
                "repository_commit": {"type": "string", "pattern": r"^[0-9a-f]{7,40}$"},
                "maintainers": {"type": "array", "items": {"type": "string"}},
                "comment": {"type": ["string", "null"]},
            },
            "additionalProperties": False,
        },
        "evaluation_report": {
            "type": ["object", "null"],
            "required": ["results", "commit"],
            "properties": {
                "results": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["model", "metrics"],
                        "properties": {
                            "model": {"type": "string"},
                            "metrics": {"type": "array", "minItems": 1, "items": _METRIC},
                            "task": {"type": ["string", "null"]},
                            "provider": {"type": ["string", "null"]},
                            "time": {"type": ["string", "null"]},
                            "date": {"type": ["string", "null"]},
                        },
                    },
                },
                "commit": {"type": "string"},
                "version": {"type": ["string", "null"]},
                "command": {"type": ["string", "null"]},
                "timestamp": {"type": ["string", "null"]},
                "notes": {"type": ["array", "null"], "items": {"type": "string"}},
            },
        },
    },
    "additionalProperties": False,
}


class RegisterError(PaperFieldsError):
    """A log that cannot enter the register's evaluation report (another task, an error, a partial run,
    a dirty or differing commit), or an entry off the register's format."""


def register_problems(entry: Any) -> list[str]:
    """What is wrong with a register entry (parsed ``eval.yaml``) against :data:`REGISTER_SCHEMA` and the
    model's own checks (every report row's ``task`` a declared task); empty when it is valid."""
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(REGISTER_SCHEMA).iter_errors(entry), key=lambda e: list(e.absolute_path))
    problems = [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in errors]
    if not problems and entry.get("evaluation_report"):
        declared = {t["name"] for t in entry["tasks"]}
        for i, row in enumerate(entry["evaluation_report"]["results"]):
            if row.get("task") is not None and row["task"] not in declared:
                problems.append(f"evaluation_report/results/{i}/task: {row['task']!r} is not a declared task")
    return problems


def _duration(started: str, completed: str) -> str:
    from datetime import datetime

    seconds = (datetime.fromisoformat(completed) - datetime.fromisoformat(started)).total_seconds()
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m {rest}s" if minutes else f"{rest}s"


def _provider(model: str) -> str:
    backend = model.removeprefix("paperfields/")
    if backend.startswith("rules/"):
        return "PaperFields reference (no model)"
    if backend.startswith("local/"):
        return "llama.cpp in-process (PaperFields backend, offline)"
    return model.split("/", 1)[0]


def report_row(log: Any) -> tuple[dict[str, Any], str]:
    """One evaluation report row from an eval log of the task (header only is enough) and the commit it
    was made from. Raises RegisterError for a log of another task, an unfinished or errored eval, a run
    of another split than test, a partial run, or one made from a checkout with uncommitted changes."""
    from paperfields.integrations.inspect_task import TASK_FORMAT

    name = Path(log.location).name if log.location else "log"
    meta = log.eval.metadata or {}
    # recognized by the task's own metadata, as import-inspect does: the registry name lacks the package prefix
    # when inspect does not see paperfields as an installed package (python run inside the checkout)
    if meta.get("paperfields_task") != TASK_FORMAT:
        raise RegisterError(f"{name}: a log of the task {log.eval.task!r}, not of {EVAL_ID}/{TASK}")
    results = log.results
    if log.status != "success" or results is None or results.completed_samples != results.total_samples:
        raise RegisterError(f"{name}: the eval did not finish (status {log.status}); finish it (inspect eval-retry)")
    if meta.get("split") != "test" or log.eval.config.limit or results.total_samples != log.eval.dataset.samples:
        raise RegisterError(f"{name}: the report is of complete runs of the test split (no --limit)")
    commit = meta.get("git_commit") or ""
    if not commit or commit.endswith("-dirty"):
        raise RegisterError(f"{name}: made from {'no commit' if not commit else commit}: rerun from a clean commit")
    metrics = {k: m.value for k, m in results.scores[0].metrics.items()}
    usage = next(iter(log.stats.model_usage.values()), None)
    row: dict[str, Any] = {
        "model": log.eval.model,
        "provider": _provider(log.eval.model),
        "task": TASK,
        "metrics": [
            {"key": key, "value": round(float(metrics[key]), 4)}
            for key in ("headline", "headline_ci95_low", "headline_ci95_high", "valid_rate")
        ]
        + [
            {"key": "input_tokens", "value": float(usage.input_tokens if usage else 0)},
            {"key": "output_tokens", "value": float(usage.output_tokens if usage else 0)},
        ],
        "time": _duration(log.stats.started_at, log.stats.completed_at),
        "date": log.stats.completed_at[:10],
        "samples": f"{results.completed_samples}/{log.eval.dataset.samples}",
        "strategy": meta.get("strategy"),
        "structured_output": meta.get("structured_output"),
        "cost": "0 USD (runs on this machine)"
        if not usage or usage.total_cost is None
        else f"{usage.total_cost:.4f} USD",
    }
    return row, commit


def register_entry(
    logs: list[Any], repository_url: str, maintainers: list[str], contributors: Optional[list[str]] = None
) -> dict[str, Any]:
    """The register entry (a dict in the register's field order) with the evaluation report of ``logs``
    (read with ``inspect_ai.log.read_eval_log``, header only), pinned to the one commit they were all
    made from. Raises RegisterError for a log :func:`report_row` refuses, logs of different commits or
    prompts, or an entry that does not validate (:func:`register_problems`)."""
    if not logs:
        raise RegisterError("give at least one eval log of the paperfields/paperfields task")
    rows, commits = zip(*(report_row(log) for log in logs))
    if len(set(commits)) != 1:
        raise RegisterError(
            f"the logs were made from different commits ({', '.join(sorted(set(commits)))}); rerun them from one"
        )
    prompts = {(log.eval.metadata["prompt_version"], log.eval.metadata["prompt_sha256"]) for log in logs}
    meta = logs[0].eval.metadata
    commit = commits[0]
    entry = {
        "full_title": FULL_TITLE,
        "common_title": COMMON_TITLE,
        "description": description(logs[0].eval.dataset.samples),
        "contributors": list(contributors or maintainers),
        "tags": TAGS,
        "tasks": [{"name": TASK, "dataset_samples": logs[0].eval.dataset.samples, "task_path": TASK_PATH}],
        "source": {"repository_url": repository_url, "repository_commit": commit, "maintainers": list(maintainers)},
        "evaluation_report": {
            "commit": commit,
            "version": f"task {logs[0].eval.task_version}, paperfields {meta['paperfields_version']}, scorer "
            f"{meta['scorer_version']}, schema {meta['schema_version']}, gold {meta['gold_version']}, "
            + ", ".join(f"prompt {v} (sha256 {h[:12]})" for v, h in sorted(prompts)),
            "command": "inspect eval paperfields/paperfields --model <model> -T split=test -T strategy=zero_shot",
            "timestamp": max(log.stats.completed_at for log in logs),
            "results": sorted(rows, key=lambda r: -r["metrics"][0]["value"]),
            "notes": [
                headline_note(logs[0].eval.dataset.samples),
                "paperfields/<backend> models are PaperFields' own backends run as inspect models: rules/baseline "
                "(patterns written from the dev split) and rules/empty (an empty record) are the references every "
                "model must beat; local/ models run offline in-process under the record's JSON grammar",
                "no published result to compare with: the benchmark is new; `paperfields run` with the same backend "
                "and prompt gives the same headline (the board in results/leaderboard.md)",
            ],
        },
    }
    problems = register_problems(entry)
    if problems:
        raise RegisterError("the register entry would not be valid: " + "; ".join(problems))
    return entry
