"""Each record field's scoring facts, declared once on the schema and read by everything else.

A field of :class:`~paperfields.core.schema.PaperRecord` carries a :class:`FieldFacts` in its
``Annotated`` metadata (pydantic ignores it, so the JSON schema models see is unchanged)::

    tasks: Annotated[TextList, FieldFacts(match="task", short="tasks", grounded="text")] = Field(...)

:func:`record_fields` reads them, with what the field's type already says (a list or a scalar,
nullable or not, its item type and, for labels, its classes), into one :class:`RecordField` per
field in schema order. Every per-field table of the project is derived from it: the headline and
accuracy fields, the reported scores, the grounded fields, the board's column names, the judged
pairs, the vote, the exported features. Adding a field is then a change to the schema, the
guidelines and the gold, and to no other code.

``match`` names a matching rule; the rules themselves (thresholds, head words, alignment) belong to
scoring, which resolves the name in one table (``paperfields.scoring.match.MATCHERS``). The floor
names a rule and never imports it.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any, Literal, Optional, Union, get_args, get_origin

from pydantic import BaseModel

Board = Literal["column", "table", "none"]


@dataclass(frozen=True)
class Level:
    """One more score of a field, reported beside the field's own as ``<field>_<suffix>`` (never in
    the headline): ``method_name_soft`` under the soft name rule, ``results_value`` on values alone.

    ``match`` names its matching rule (as :attr:`FieldFacts.match`), ``short`` is its board name,
    ``board`` where the board shows it: ``column`` (a column of the board and a row of its per-field
    table with CIs), ``table`` (that row only) or ``none`` (``scores.json`` only)."""

    suffix: str
    match: str
    short: str
    board: Board = "none"


@dataclass(frozen=True)
class FieldFacts:
    """How one record field is scored and shown.

    - ``match``: the name of its matching rule, resolved by scoring (``exact``, ``phrase``, ``soft_name``,
      ``name``, ``task``, ``metric``, ``dataset``, ``baseline``, ``url``, ``label``, ``label_set``,
      ``results_claim``, ...);
    - ``short``: its name on the board;
    - ``headline``: it enters the headline (the macro mean over fields);
    - ``metric``: ``micro_f1`` (tp, fp, fn pooled over papers) or ``accuracy`` (share of papers
      labeled right; a failed paper is wrong);
    - ``grounded``: how its items are found in the abstract (:mod:`~paperfields.core.locate`):
      ``text`` (a string), ``url`` (a whole URL), ``number`` (a result's value, with its metric as
      text), or None (not located: labels from a fixed list);
    - ``levels``: more scores of the field, reported beside it (:class:`Level`).

    Whether the field is a list or a scalar, and whether null is a value of its own, is read from
    its type, which says it already.
    """

    match: str
    short: str
    headline: bool = True
    metric: Literal["micro_f1", "accuracy"] = "micro_f1"
    grounded: Optional[Literal["text", "url", "number"]] = None
    levels: tuple[Level, ...] = ()


@dataclass(frozen=True)
class Score:
    """One reported score of a record: a field's own (``name`` the field's) or one of its levels."""

    name: str
    field: str
    match: str
    short: str
    headline: bool
    metric: str
    board: Board


@dataclass(frozen=True)
class RecordField:
    """A record field with its facts and what its type says: ``is_list``, ``nullable`` (null is a
    value of its own), ``item`` (the type of one item, or of the value of a scalar)."""

    name: str
    facts: FieldFacts
    is_list: bool
    nullable: bool
    item: Any

    @property
    def is_label(self) -> bool:
        """Its values come from a fixed list (an enum or a boolean): scored as labels, with per-class scores."""
        return self.item is bool or (isinstance(self.item, type) and issubclass(self.item, Enum))

    @property
    def classes(self) -> list[Any]:
        """A label field's classes in order (an enum's values; true, false, and null when nullable)."""
        if not self.is_label:
            return []
        values = [True, False] if self.item is bool else [member.value for member in self.item]
        return values + ([None] if self.nullable else [])

    @property
    def can_be_empty(self) -> bool:
        """Gold can leave it empty (a list, or a nullable scalar): a prediction there is invented."""
        return self.is_list or self.nullable

    @property
    def is_record_list(self) -> bool:
        """A list of sub-records (``results``), as opposed to a list of strings or labels."""
        return self.is_list and isinstance(self.item, type) and issubclass(self.item, BaseModel)

    def scores(self) -> tuple[Score, ...]:
        """The field's own score, then its levels'."""
        return _field_scores(self)

    def table(self) -> dict[str, Any]:
        """The field's facts as plain data, for ``scores.json``'s rule table."""
        return {
            "list": self.is_list,
            "nullable": self.nullable,
            "match": self.facts.match,
            "headline": self.facts.headline,
            "metric": self.facts.metric,
            "grounded": self.facts.grounded,
            "short": self.facts.short,
            "levels": {f"{self.name}_{lv.suffix}": lv.match for lv in self.facts.levels},
        }


@cache  # a field's scores never change, and the scorer asks for them per paper and field
def _field_scores(field: RecordField) -> tuple[Score, ...]:
    own = Score(
        field.name,
        field.name,
        field.facts.match,
        field.facts.short,
        field.facts.headline,
        field.facts.metric,
        "column" if field.facts.headline else "table",
    )
    return (own,) + tuple(
        Score(f"{field.name}_{lv.suffix}", field.name, lv.match, lv.short, False, "micro_f1", lv.board)
        for lv in field.facts.levels
    )


def unwrap(annotation: Any) -> tuple[bool, bool, Any]:
    """(is a list, admits None, item type) of a field annotation (``Annotated`` already stripped by pydantic)."""
    nullable = False
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(get_args(annotation))
        annotation = args[0] if len(args) == 1 else annotation
    if get_origin(annotation) is list:
        return True, nullable, get_args(annotation)[0]
    return False, nullable, annotation


@cache
def record_fields(model: type[BaseModel]) -> tuple[RecordField, ...]:
    """The fields of a record model that carry :class:`FieldFacts`, in schema order. Raises
    TypeError naming the field when one carries two."""
    out = []
    for name, info in model.model_fields.items():
        facts = [m for m in info.metadata if isinstance(m, FieldFacts)]
        if len(facts) > 1:
            raise TypeError(f"{model.__name__}.{name}: more than one FieldFacts")
        if facts:
            is_list, nullable, item = unwrap(info.annotation)
            out.append(RecordField(name, facts[0], is_list, nullable, item))
    return tuple(out)


@cache
def scores_of(model: type[BaseModel]) -> tuple[Score, ...]:
    """Every reported score of a record model: the headline fields' own, the other fields' own,
    then every level, each group in schema order (the order of ``scores.json``'s ``fields``)."""
    own = [f.scores()[0] for f in record_fields(model)]
    return (
        tuple(s for s in own if s.headline)
        + tuple(s for s in own if not s.headline)
        + tuple(s for f in record_fields(model) for s in f.scores()[1:])
    )
