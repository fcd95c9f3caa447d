"""PaperFields as a Hugging Face Hub benchmark: the dataset's ``eval.yaml`` and a model's ``.eval_results/``.

The Hub's evaluation results (https://huggingface.co/docs/hub/eval-results; the result format in
hub-docs' ``eval_results.yaml``) have two sides:

- a **benchmark dataset** holds ``eval.yaml`` at its root: ``name``, ``description``,
  ``evaluation_framework`` (one of the Hub's list, huggingface.js ``packages/tasks/src/eval.ts``) and
  ``tasks``, each a sub-leaderboard with an ``id`` and optionally the dataset ``config`` and ``split``
  it is scored on (``field_spec``, ``solvers`` and ``scorers`` besides for ``inspect-ai``, whose
  scorers are inspect's built-ins);
- a **model repository** reports a score in ``.eval_results/*.yaml``: a list of entries, each with
  ``dataset.id`` (the benchmark), ``dataset.task_id`` (a task of its ``eval.yaml``), ``value``, and
  optionally ``dataset.revision``, ``verifyToken``, ``date``, ``source`` (``url``, ``name``, ``user``,
  ``org``) and ``notes``.

:func:`eval_yaml` writes PaperFields' side: one task per reported score, the ``headline`` first, each
on the test split of the ``gold`` config. The format has no direction: every score registered here is
one where higher is better (:data:`~paperfields.scoring.score.HIGHER_IS_BETTER`), as the description
says. The framework is ``paperfields``: PaperFields' scorer is none of inspect's built-in scorers, so
the ``inspect-ai`` form cannot express it, and the Hub's list has no ``paperfields`` yet
(:data:`HUB_FRAMEWORKS`): it is added there by a pull request before the Hub accepts the file.
:func:`eval_results` writes a run's side with ``huggingface_hub``'s :class:`EvalResultEntry`.
:data:`EVAL_YAML_SCHEMA` and :data:`EVAL_RESULTS_SCHEMA` are the documented formats as JSON Schema;
:func:`eval_yaml_problems` and :func:`eval_results_problems` check a file against them.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from paperfields.core.errors import PaperFieldsError
from paperfields.core.gold import GOLD_VERSION
from paperfields.core.schema import SCHEMA_VERSION
from paperfields.scoring.score import HEADLINE_FIELDS, REPORTED_FIELDS, SCORER_VERSION

if TYPE_CHECKING:
    from paperfields.core.runlog import RunManifest
    from paperfields.scoring.score import RunScores

FRAMEWORK = "paperfields"
CONFIG = "gold"  # the dataset config the tasks are scored on (paperfields/export.py)
SPLIT = "test"
HEADLINE_TASK = "headline"
EVAL_YAML = "eval.yaml"
EVAL_RESULTS_FOLDER = ".eval_results"  # huggingface_hub.constants.EVAL_RESULTS_FOLDER
# The Hub's evaluation frameworks (huggingface.js packages/tasks/src/eval.ts, read 2026-08):
# eval.yaml names one of them.
HUB_FRAMEWORKS = (
    "exgentic",
    "inspect-ai",
    "math-arena",
    "mteb",
    "olmocr-bench",
    "harbor",
    "archipelago",
    "apex-evals",
    "screenspot-pro",
    "swe-bench",
    "swe-bench-pro",
    "nemo-evaluator",
    "yc-bench",
    "open-asr-leaderboard",
    "mdpbench",
    "parsebench",
    "video-mme-v2",
    "claw-eval",
    "wildclawbench",
)
# What PaperFields' entry in that list says (the pull request that registers the framework adds it).
FRAMEWORK_ENTRY = {
    "name": FRAMEWORK,
    "description": "PaperFields is a benchmark and scorer for structured extraction of records from machine-learning "
    "paper abstracts, scored field by field against hand-labeled gold.",
    "url": "https://pypi.org/project/paperfields/",
}

_TEXT = {"type": "string", "minLength": 1}
_TASK = {
    "type": "object",
    "required": ["id"],
    "properties": {"id": _TEXT, "config": _TEXT, "split": _TEXT},
    "additionalProperties": False,
}
_INSPECT_TASK = {  # inspect-ai's own form (inspect_ai/_eval/task/hf.py HFTask)
    "type": "object",
    "required": ["id", "field_spec", "solvers", "scorers"],
    "properties": {
        **_TASK["properties"],
        "field_spec": {"type": "object", "required": ["input", "target"]},
        "solvers": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["name"]}},
        "scorers": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["name"]}},
        "shuffle_choices": {"type": "boolean"},
        "epochs": {"type": "integer", "minimum": 1},
        "epoch_reducer": {"type": "string"},
    },
    "additionalProperties": False,
}
EVAL_YAML_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "eval.yaml of a Hugging Face benchmark dataset (https://huggingface.co/docs/hub/eval-results)",
    "type": "object",
    "required": ["name", "description", "evaluation_framework", "tasks"],
    "properties": {
        "name": _TEXT,
        "description": _TEXT,
        "evaluation_framework": _TEXT,
        "tasks": {"type": "array", "minItems": 1},
    },
    "additionalProperties": False,
    # inspect-ai's tasks carry inspect's field_spec, solvers and scorers; every other framework's, id, config and split
    "if": {"properties": {"evaluation_framework": {"const": "inspect-ai"}}},
    "then": {"properties": {"tasks": {"items": _INSPECT_TASK}}},
    "else": {"properties": {"tasks": {"items": _TASK}}},
}
EVAL_RESULTS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": ".eval_results/*.yaml of a Hugging Face model repository (hub-docs eval_results.yaml)",
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "required": ["dataset", "value"],
        "properties": {
            "dataset": {
                "type": "object",
                "required": ["id", "task_id"],
                "properties": {
                    "id": {"type": "string", "pattern": r"^[\w.-]+/[\w.-]+$"},
                    "task_id": _TEXT,
                    "revision": _TEXT,
                },
                "additionalProperties": False,
            },
            "value": {"type": "number"},
            "verifyToken": _TEXT,
            "date": _TEXT,
            "source": {
                "type": "object",
                "required": ["url"],
                "properties": {
                    "url": {"type": "string", "pattern": r"^https?://\S+$"},
                    "name": _TEXT,
                    "user": _TEXT,
                    "org": _TEXT,
                },
                "additionalProperties": False,
            },
            "notes": _TEXT,
        },
        "additionalProperties": False,
    },
}


class HubResultError(PaperFieldsError):
    """A run that cannot be reported on the Hub (a reference, partial or unfinished run, another split),
    or a dataset id or file that is not what the Hub's format asks for."""


def task_ids() -> list[str]:
    """The benchmark's task ids: ``headline``, then every reported score in ``scores.json`` order (a
    field's micro F1 or accuracy, or one of its levels: each a score where higher is better)."""
    return [HEADLINE_TASK, *REPORTED_FIELDS]


def eval_yaml(test_papers: int) -> dict[str, Any]:
    """The benchmark's ``eval.yaml`` as a dict (see the module docstring), for a gold test split of
    ``test_papers`` papers; the same bytes for the same versions."""
    fields = ", ".join(f"`{f}`" for f in REPORTED_FIELDS)
    description = (
        "PaperFields measures how well a language model turns a machine-learning paper abstract into a structured "
        f"record, scored field by field against hand-labeled gold on the {test_papers} abstracts of the test split "
        f"(config `{CONFIG}`, split `{SPLIT}`) by PaperFields' own scorer (`pip install paperfields`, then "
        "`paperfields run` or `inspect eval paperfields/paperfields`). Every task is a score in [0, 1] where higher is "
        f"better. `{HEADLINE_TASK}`: the mean over the {len(HEADLINE_FIELDS)} headline fields of each field's micro F1 "
        "pooled over papers (accuracy for `research_area` and `training_free`); a failed paper counts as an empty "
        f"record. Each other task is one field's score under the same rules: {fields}. Versions: schema "
        f"{SCHEMA_VERSION}, gold {GOLD_VERSION}, scorer {SCORER_VERSION}."
    )
    return {
        "name": "PaperFields",
        "description": description,
        "evaluation_framework": FRAMEWORK,
        "tasks": [{"id": task, "config": CONFIG, "split": SPLIT} for task in task_ids()],
    }


def dump_yaml(data: Any) -> str:
    """YAML text in the key order given (block style, wide lines, UTF-8 kept)."""
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)


def _schema_problems(data: Any, schema: dict[str, Any]) -> list[str]:
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in errors]


def eval_yaml_problems(data: Any) -> list[str]:
    """What is wrong with an ``eval.yaml`` (parsed) against the Hub's documented format: JSON Schema
    errors of :data:`EVAL_YAML_SCHEMA` and task ids given twice; empty when it is valid. Whether its
    framework is in the Hub's list is a separate question (:func:`framework_listed`)."""
    problems = _schema_problems(data, EVAL_YAML_SCHEMA)
    if not problems:
        seen: set[str] = set()
        for task in data["tasks"]:
            if task["id"] in seen:
                problems.append(f"tasks: id {task['id']!r} is given twice (task ids are unique)")
            seen.add(task["id"])
    return problems


def framework_listed(name: str) -> bool:
    """Whether ``name`` is one of the Hub's evaluation frameworks (:data:`HUB_FRAMEWORKS`)."""
    return name in HUB_FRAMEWORKS


def _iso_date(text: str) -> bool:
    try:
        (date.fromisoformat if len(text) == 10 else datetime.fromisoformat)(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def eval_results_problems(data: Any, benchmark: Optional[dict[str, Any]] = None) -> list[str]:
    """What is wrong with a ``.eval_results/*.yaml`` file (parsed) against the Hub's documented format:
    JSON Schema errors of :data:`EVAL_RESULTS_SCHEMA`, a ``date`` that is not ISO-8601, and, given the
    benchmark's ``eval.yaml`` (parsed), a ``task_id`` it does not define; empty when it is valid."""
    problems = _schema_problems(data, EVAL_RESULTS_SCHEMA)
    if problems:
        return problems
    tasks = {t["id"] for t in benchmark["tasks"]} if benchmark else None
    for i, entry in enumerate(data):
        if "date" in entry and not _iso_date(entry["date"]):
            problems.append(f"{i}/date: {entry['date']!r} is not an ISO-8601 date or datetime")
        if tasks is not None and entry["dataset"]["task_id"] not in tasks:
            problems.append(f"{i}/dataset/task_id: {entry['dataset']['task_id']!r} is not a task of the benchmark")
    return problems


def _ci(ci: Optional[tuple[float, float]], how: str) -> str:
    return f"95% CI [{ci[0]:.4f}, {ci[1]:.4f}] ({how})" if ci else "no CI"


def eval_results(
    scores: RunScores,
    manifest: RunManifest,
    dataset_id: str,
    revision: Optional[str] = None,
    source_url: Optional[str] = None,
) -> list[dict[str, Any]]:
    """A run's ``.eval_results`` entries (as ``huggingface_hub.eval_result_entries_to_yaml`` writes them):
    one per task of :func:`eval_yaml` whose score the run defines, the headline first, each ``value`` as
    in ``scores.json`` (in [0, 1]); ``date`` the run's end; ``source`` the run's folder at ``source_url``
    when given; ``notes`` the model, strategy and prompt, papers, the score's 95% CI and the schema, gold
    and scorer versions. Raises HubResultError for a reference run (never ranked), a partial or unfinished
    run, a run of another split than test, or a dataset id that is not ``owner/name``."""
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    if not re.fullmatch(
        EVAL_RESULTS_SCHEMA["items"]["properties"]["dataset"]["properties"]["id"]["pattern"], dataset_id
    ):
        raise HubResultError(f"--dataset {dataset_id!r}: give the benchmark's Hub dataset id, owner/name")
    why = (
        "a reference run (rules/*, a second annotator) is shown apart and never ranked"
        if scores.reference
        else f"it is a run of the {scores.split} split; the benchmark's tasks are scored on {SPLIT}"
        if scores.split != SPLIT
        else f"it is {'unfinished' if scores.unfinished else 'partial'} ({scores.papers_done}/{scores.papers} papers "
        f"done, {scores.papers} of {scores.papers_in_split} in the split): partial runs are never ranked"
        if not scores.comparable
        else None
    )
    if why:
        raise HubResultError(f"{scores.run_id}: not reported on the Hub: {why}")
    config = manifest.config
    who = (
        f"submitted from outside (submissions/), scored as given: {scores.submitted.get('model', config.backend)}"
        if scores.submitted
        else config.backend
    )
    about = (
        f"PaperFields run {scores.run_id}: {who}, strategy {config.strategy} (prompt "
        f"{config.prompt_version}, sha256 {config.prompt_sha256[:12]}), "
        f"{scores.papers_done}/{scores.papers_in_split} test papers, valid {scores.valid_rate:.0%}; schema "
        f"{scores.schema_version}, gold {scores.gold_version}, scorer {scores.scorer_version}"
        + (f", code {manifest.git_commit}" if manifest.git_commit else "")
    )
    values: list[tuple[str, Optional[float], str]] = [
        (HEADLINE_TASK, scores.headline, _ci(scores.headline_ci95, "percentile bootstrap over papers"))
    ]
    for field in REPORTED_FIELDS:
        agg = scores.fields.get(field)
        if agg is not None:
            values.append((field, agg.score, f"{agg.metric}; {_ci(agg.ci95, agg.ci_method or '')}"))
    entries = [
        EvalResultEntry(
            dataset_id=dataset_id,
            task_id=task,
            value=round(float(value), 4),
            dataset_revision=revision,
            date=manifest.finished_at,
            source_url=source_url,
            source_name=f"PaperFields run folder {scores.run_id}" if source_url else None,
            notes=f"{what}. {about}",
        )
        for task, value, what in values
        if value is not None
    ]
    return eval_result_entries_to_yaml(entries)


def write_eval_results(entries: list[dict[str, Any]], out_dir: Path, strategy: str) -> Path:
    """Write ``entries`` to ``out_dir/.eval_results/paperfields_<strategy>.yaml`` (one file per variant of
    the model's setup, as the Hub's guide asks) after checking them against the format; returns the file.
    Raises HubResultError naming a problem (none is expected of :func:`eval_results`' output)."""
    problems = eval_results_problems(entries, eval_yaml(0))
    if problems:
        raise HubResultError("the result file would not be valid: " + "; ".join(problems))
    target = out_dir / EVAL_RESULTS_FOLDER / f"{FRAMEWORK}_{strategy}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dump_yaml(entries), encoding="utf-8")
    return target
