"""Gold annotations: loading with clear errors, and the consistency check against the corpus.

``gold/gold.jsonl`` holds one :class:`GoldRecord` per line (see ``gold/GUIDELINES.md``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from paperfields.core.corpus import Paper, decode_utf8
from paperfields.core.errors import InputError, field_error
from paperfields.core.fields import record_fields
from paperfields.core.locate import locate, locate_number, locate_url
from paperfields.core.normalize import normalize
from paperfields.core.readonce import file_bytes, parsed
from paperfields.core.schema import PaperRecord

GOLD_VERSION = "1.6"


class GoldError(InputError):
    """A gold file problem. The message names the file, line and field."""


class GoldRecord(BaseModel):
    """One labeled paper: the record, its split, accepted alternative forms, and notes.

    Gold is written by an annotator, not parsed from a reply, so :func:`load_gold` is stricter than
    the lenient :class:`PaperRecord` a model's reply goes through: no unknown key (top level or in
    ``record``), ``training_free`` a JSON boolean or null, result values JSON numbers (not ``"12.5"``).
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    split: Literal["dev", "test"]
    record: PaperRecord
    alternates: dict[str, list[str]] = Field(default_factory=dict)
    normalized: list[str] = Field(default_factory=list)
    notes: str = ""


def gold_fingerprint(path: Path) -> str:
    """``"<GOLD_VERSION>+<sha256 of the file, 12 hex>"``: stamped into every scores file."""
    return parsed(path, "gold_fingerprint", lambda data: f"{GOLD_VERSION}+{hashlib.sha256(data).hexdigest()[:12]}")


def load_gold(path: Path, problems: Optional[list[str]] = None) -> list[GoldRecord]:
    """Read gold JSONL. Raises GoldError naming ``file:line`` and the field for a bad line or a
    duplicate id.

    With a ``problems`` list, every bad line is described there (``file:line: field 'x': ...``) and
    skipped instead, so a checker can report all of them at once. Inside
    :func:`~paperfields.core.readonce.read_once` the file is read and validated once.
    """
    if not path.is_file():
        raise GoldError(f"{path}: no such gold file")
    if problems is None:
        return list(parsed(path, "gold", lambda data: _parse_gold(path, data, None)))
    return _parse_gold(path, file_bytes(path), problems)


def _parse_gold(path: Path, data: bytes, problems: Optional[list[str]]) -> list[GoldRecord]:
    text = decode_utf8(data, path, GoldError)
    records: list[GoldRecord] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = _gold_line(line, path, number)
        except GoldError as exc:
            if problems is None:
                raise
            problems.append(str(exc))
            continue
        if problems is None and record.id in seen:  # a checker reports duplicates itself (check_gold)
            raise GoldError(f"{path}:{number}: id: duplicate id '{record.id}' (first on line {seen[record.id]})")
        seen.setdefault(record.id, number)
        records.append(record)
    return records


def _strict_problem(obj: Any) -> Optional[tuple[str, str]]:
    """(field, problem) for what the lenient PaperRecord would accept but gold must not: an unknown
    key, a ``training_free`` other than true/false/null, a result value that is not a JSON number."""
    if not isinstance(obj, dict):
        return None
    record = obj.get("record")
    record = record if isinstance(record, dict) else {}
    unknown = sorted(set(obj) - set(GoldRecord.model_fields)) + [
        f"record.{k}" for k in sorted(set(record) - set(PaperRecord.model_fields))
    ]
    if unknown:
        return unknown[0], "unknown field (a typo?)"
    flag = record.get("training_free")
    if flag is not None and not isinstance(flag, bool):
        return (
            "record.training_free",
            f"must be true, false or null (a JSON boolean), not {json.dumps(flag, ensure_ascii=False)}",
        )
    results = record.get("results")
    for i, result in enumerate(results if isinstance(results, list) else []):
        for key in ("value", "value_upper"):
            value = result.get(key) if isinstance(result, dict) else None
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                return (
                    f"record.results.{i}.{key}",
                    f"must be a JSON number, not {json.dumps(value, ensure_ascii=False)}",
                )
    return None


def _gold_line(line: str, path: Path, number: int) -> GoldRecord:
    try:
        problem = _strict_problem(json.loads(line))
    except json.JSONDecodeError:
        problem = None  # reported below as not valid JSON
    if problem:
        raise GoldError(f"{path}:{number}: field '{problem[0]}': {problem[1]}")
    try:
        return GoldRecord.model_validate_json(line)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise GoldError(f"{path}:{number}: not valid JSON ({first['msg']})") from None
        raise GoldError(f"{path}:{number}: {field_error(exc)}") from None


def gold_strings(record: BaseModel) -> list[tuple[str, str]]:
    """Every string of a gold record's grounded fields (as its schema's facts say) with its field path,
    in schema order, e.g. ``("tasks[0]", "code generation")``, ``("results[0].metric", "pass rate")``
    (a result's string attributes), ``("code_url", "https://...")``."""
    out: list[tuple[str, str]] = []
    for field in record_fields(type(record)):
        if field.facts.grounded is None:
            continue
        value = getattr(record, field.name)
        if not field.is_list:
            out += [(field.name, value)] if value else []
        elif field.is_record_list:
            for i, item in enumerate(value):
                out += [(f"{field.name}[{i}].{k}", getattr(item, k)) for k in _strings(type(item)) if getattr(item, k)]
        else:
            out += [(f"{field.name}[{i}]", s) for i, s in enumerate(value)]
    return out


def _strings(model: type[BaseModel]) -> tuple[str, ...]:
    """The free-text attributes of a sub-record (``Result``: metric, dataset, model, baseline): str, nullable or not."""
    return tuple(name for name, info in model.model_fields.items() if info.annotation in (str, Optional[str]))


def url_in_text(url: str, abstract: str) -> bool:
    """True when the whole URL ``url`` is written in ``abstract`` as a URL
    (:func:`~paperfields.core.locate.locate_url`: never a piece of one, never a plain word)."""
    return locate_url(url, abstract).grounded


def findable(text: str, abstract: str) -> bool:
    """True when ``text`` is written in ``abstract``, as is or after normalization, at word boundaries
    (:func:`~paperfields.core.locate.locate`, the one rule for "in the abstract")."""
    return locate(text, abstract).grounded


def check_gold(gold: list[GoldRecord], papers: list[Paper], path: Path) -> list[str]:
    """Problems in gold, each ``file:line: field: message``; empty when the gold is consistent.

    Checks: unknown, missing and duplicate ids; every gold string findable in its abstract or
    listed in ``normalized``; every result value (and upper value) written in the abstract;
    alternates keyed by a string that occurs in the record.
    """
    problems: list[str] = []
    by_id = {p.id: p for p in papers}
    seen: dict[str, int] = {}
    for number, g in enumerate(gold, start=1):
        where = f"{path}:{number}"
        if g.id in seen:
            problems.append(f"{where}: id: duplicate id '{g.id}' (first on line {seen[g.id]})")
            continue
        seen[g.id] = number
        paper = by_id.get(g.id)
        if paper is None:
            problems.append(f"{where}: id: unknown paper id '{g.id}' (not in the corpus)")
            continue
        listed = {normalize(s) for s in g.normalized}
        strings = gold_strings(g.record)
        located_as = {f.name: f.facts.grounded for f in record_fields(type(g.record))}
        for field, value in strings:
            if located_as.get(field) == "url":
                if not url_in_text(value, paper.text) and normalize(value) not in listed:
                    problems.append(f"{where}: {field}: '{value}' is not in the abstract")
            elif not findable(value, paper.text) and normalize(value) not in listed:
                problems.append(f"{where}: {field}: '{value}' is not in the abstract and not listed under 'normalized'")
        for i, r in enumerate(g.record.results):
            for key in ("value", "value_upper"):
                v = getattr(r, key)
                if v is not None and not locate_number(v, paper.text).grounded:
                    problems.append(f"{where}: results[{i}].{key}: {v:g} is not written in the abstract")
        values = {normalize(v) for _, v in strings}
        for key in g.alternates:
            if normalize(key) not in values:
                problems.append(f"{where}: alternates: key '{key}' is not a string of the record")
    for paper in papers:
        if paper.id not in seen:
            problems.append(f"{path}: id: paper '{paper.id}' ({paper.source}:{paper.line}) has no gold record")
    return problems


def write_gold(records: list[GoldRecord], path: Path) -> None:
    """Write gold JSONL, one record per line, in the given order."""
    with path.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r.model_dump(mode="json"), ensure_ascii=False) + "\n")
