"""Schema v1: the structured record extracted from one paper abstract.

Every field has a description; the descriptions reach the JSON schema shown to models
(``PaperRecord.model_json_schema()``) and the gold guidelines (``gold/GUIDELINES.md``).
Changing a field, a description or an enum changes ``SCHEMA_VERSION``.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCHEMA_VERSION = "1.0"


class ContributionType(str, Enum):
    """What kind of contribution the paper makes (multi-label)."""

    method = "method"
    model = "model"
    benchmark = "benchmark"
    dataset = "dataset"
    system = "system"
    theory = "theory"
    analysis = "analysis"


class ResearchArea(str, Enum):
    """Fixed taxonomy of research areas for this corpus (single label; see GUIDELINES.md for ties)."""

    reasoning = "reasoning"
    rl_post_training = "rl_post_training"
    alignment_safety = "alignment_safety"
    inference_efficiency = "inference_efficiency"
    architecture_pretraining = "architecture_pretraining"
    agents_tool_use = "agents_tool_use"
    code_software_engineering = "code_software_engineering"
    interpretability = "interpretability"
    diffusion_lms = "diffusion_lms"
    retrieval_long_context_knowledge = "retrieval_long_context_knowledge"
    evaluation_benchmarks = "evaluation_benchmarks"
    other = "other"


class Unit(str, Enum):
    """Unit of a reported number."""

    percent = "percent"
    percentage_points = "percentage_points"
    times = "times"
    points = "points"
    seconds = "seconds"
    count = "count"
    other = "other"


class ResultKind(str, Enum):
    """Whether a number is a score, a gain or a cut."""

    absolute = "absolute"
    improvement = "improvement"
    reduction = "reduction"


class Qualifier(str, Enum):
    """How the abstract hedges a number."""

    exact = "exact"
    up_to = "up_to"
    over = "over"
    under = "under"
    average = "average"
    about = "about"


_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?|[-+]?\.\d+")


def _coerce_number(value: Any) -> Any:
    """Accept "56.61%", "35,368", "1.37x" from a model as the number they state."""
    if isinstance(value, str):
        match = _NUMBER.search(value)
        if match:
            return float(match.group().replace(",", ""))
    return value


class Result(BaseModel):
    """One quantitative claim of the abstract, as a tuple."""

    model_config = ConfigDict(extra="ignore", use_enum_values=True)

    metric: str = Field(description="What the number measures, as written in the abstract.")
    value: float = Field(description="The number as written in the abstract, without its unit (56.61 for '56.61%', 3 for '3x'); for a range, the lower end.")
    value_upper: Optional[float] = Field(default=None, description="Upper end of a range ('58-63%' gives 63), else null.")
    unit: Unit = Field(description="percent for '%', percentage_points for 'points'/'pp' of a percentage, times for 'x'/'fold', points for other score points, seconds, count for plain counts, other.")
    kind: ResultKind = Field(description="absolute for a score or amount, improvement for a gain over something, reduction for a cut (cost, latency, error, tokens).")
    qualifier: Qualifier = Field(default="exact", description="exact, up_to ('up to'), over ('over', 'more than'), under ('less than'), average ('on average'), about ('about', '~').")
    dataset: Optional[str] = Field(default=None, description="Named dataset or benchmark the number is on, as written, else null.")
    model: Optional[str] = Field(default=None, description="Named model the number is for, as written, else null.")
    baseline: Optional[str] = Field(default=None, description="Named method the number is compared against, as written, else null.")

    @field_validator("value", "value_upper", mode="before")
    @classmethod
    def _numbers_from_strings(cls, value: Any) -> Any:
        return _coerce_number(value)


class PaperRecord(BaseModel):
    """The structured record of one abstract (schema v1)."""

    model_config = ConfigDict(extra="ignore", use_enum_values=True)

    method_name: Optional[str] = Field(default=None, description="Name the paper gives its main contribution (a coined name or acronym), as written; null when the contribution is unnamed.")
    method_full_name: Optional[str] = Field(default=None, description="Spelled-out form of method_name when the abstract gives one, else null.")
    contribution_types: list[ContributionType] = Field(default_factory=list, description="The kinds of contribution the abstract claims (usually one or two): method, model, benchmark, dataset, system, theory, analysis.")
    research_area: ResearchArea = Field(default="other", description="Exactly one area from the fixed list.")
    tasks: list[str] = Field(default_factory=list, description="Tasks the paper addresses or evaluates on, as short noun phrases written in the abstract.")
    datasets: list[str] = Field(default_factory=list, description="Named datasets and benchmarks written in the abstract; not descriptions like 'math benchmarks'.")
    models: list[str] = Field(default_factory=list, description="Specific named models the abstract uses or evaluates, as written; not generic kinds like 'LLMs'.")
    metrics: list[str] = Field(default_factory=list, description="Evaluation metrics the abstract names, as written.")
    baselines: list[str] = Field(default_factory=list, description="Named methods or models the abstract says it compares against, as written.")
    results: list[Result] = Field(default_factory=list, description="Quantitative claims, one entry per number stated.")
    code_url: Optional[str] = Field(default=None, description="First-party code or project URL given in the abstract, else null.")
    training_free: Optional[bool] = Field(default=None, description="true if the abstract says the method needs no training, false if it trains or fine-tunes a model, null when not applicable.")

    @field_validator("tasks", "datasets", "models", "metrics", "baselines", "contribution_types", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


LIST_FIELDS = ("tasks", "datasets", "models", "metrics", "baselines")
STRING_FIELDS = ("method_name", "method_full_name")
FIELDS = tuple(PaperRecord.model_fields)


def all_required(schema: dict[str, Any], strict: bool = False) -> dict[str, Any]:
    """Copy of a JSON schema with every object property required (recursively, through $defs).

    Grammar-constrained decoding skips optional properties; small models then drop fields.
    Nullable fields stay nullable, so "required" only forces the key to be written.

    ``strict=True`` makes the schema OpenAI structured outputs accept with ``"strict": true`` (the
    openai SDK's own conversion, and one rule more): ``additionalProperties: false`` on every object,
    a ``$ref`` with sibling keywords (``description``, ``default``) inlined from its definition, and
    every ``default`` keyword dropped, null or not (OpenAI answers "'default' is not permitted"; with
    every property required a default can never apply). Property names are never touched, so a
    field called ``default`` stays.
    """
    return _required(schema, schema if strict else None)


# Keywords whose value maps names to schemas (recursed into, never read as a schema themselves),
# and keywords whose value is instance data (left as is).
_NAME_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_DATA = ("enum", "const", "examples", "default")


def _required(node: Any, root: Optional[dict[str, Any]]) -> Any:
    if isinstance(node, dict):
        if root is not None and isinstance(node.get("$ref"), str) and len(node) > 1:
            target: Any = root
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}  # the sibling keywords win
        out = {}
        for key, value in node.items():
            if key in _NAME_MAPS and isinstance(value, dict):
                out[key] = {name: _required(sub, root) for name, sub in value.items()}
            else:
                out[key] = value if key in _DATA else _required(value, root)
        if out.get("type") == "object" and "properties" in out:
            out["required"] = list(out["properties"])
        if root is not None:
            if out.get("type") == "object":
                out.setdefault("additionalProperties", False)
            out.pop("default", None)
        return out
    if isinstance(node, list):
        return [_required(v, root) for v in node]
    return node
