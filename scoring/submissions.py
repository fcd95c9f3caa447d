"""Submissions from outside: a folder ``submissions/<name>/`` checked, scored and placed on the board.

A submission is two files (``submissions/README.md`` says how to make them):

- ``submission.toml``: who ran what (:class:`SubmissionMeta`: model, provider, date run, strategy or
  ``own pipeline``, the prompt if shared, who submits, the model's training cutoff if known);
- ``predictions.jsonl``: one line per test paper, ``{"paper_id": ..., "record": {...}}`` (or
  ``"record": null`` with an optional ``"failure"`` class for a paper the system failed), in the
  minimal format of :mod:`~paperfields.scoring.imported`.

:func:`check_submission` finds every problem at once, each naming file, line and field: the TOML
against :class:`SubmissionMeta` (unknown keys refused); the predictions file's size
(:data:`MAX_FILE_BYTES`) and each line's (:data:`~paperfields.scoring.imported.MAX_LINE_BYTES`); JSON Lines as its
spec says (:func:`~paperfields.scoring.imported.strict_lines`, the reader ``paperfields score --predictions`` uses
too: LF line endings, no blank line, no byte order mark on any line, no control character in a string); no
bidirectional control or zero-width character in a name or a text of ``submission.toml``
(:data:`~paperfields.core.confusables.INVISIBLE`); each line
against the prediction line's JSON Schema (:func:`line_schema`: the record schema with every object closed, so a
misspelled key is an error, never a field left empty) and against the record model; every test paper exactly once,
no dev paper, no unknown id. :func:`add_submission` then scores the bytes it checked (each file is read once) into
a new run folder
under the published runs (``<name>__submitted__test``), which the board marks *submitted*; a
submission with a problem changes nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Optional

import tomllib
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from paperfields.core.confusables import invisible, skeleton
from paperfields.core.corpus import load_corpus, month_index
from paperfields.core.gold import load_gold
from paperfields.core.paths import SUBMISSION_NAME
from paperfields.core.runlog import FailureClass, RunError
from paperfields.core.schema import PaperRecord
from paperfields.scoring.imported import (  # noqa: F401 (MAX_LINE_BYTES: named here, in the module's docstring)
    BOM,
    MAX_LINE_BYTES,
    control_problem,
    key_problem,
    parse_row,
    strict_lines,
)

META_FILE = "submission.toml"
PREDICTIONS_FILE = "predictions.jsonl"
SPLIT = "test"
MAX_FILE_BYTES = (
    4 * 1024 * 1024
)  # the published runs' predictions files, grounding and notes included, are under 0.3 MiB
MAX_TOML_BYTES = 64 * 1024  # submission.toml, capped before it is parsed (a long prompt fits: 20,000 characters)
MAX_PROBLEMS = 50  # listed per submission; a file that is wrong throughout says so once
NAME = SUBMISSION_NAME
OWN_PIPELINE = "own pipeline"
# gpt-4o-2024-08-06, Qwen2.5-Coder-7B-Instruct, llama3:8b, and an organization's prefix as the model's own server or
# hub names it (Qwen/Qwen2.5-7B-Instruct, meta-llama/llama-3.1-8b-instruct): every part plain, no empty part
_MODEL_PART = r"[A-Za-z0-9][A-Za-z0-9_.:+-]*"
MODEL_ID = re.compile(rf"{_MODEL_PART}(?:/{_MODEL_PART})*")
PLACEHOLDER = "FILL IN"  # what from-run writes where only the submitter can answer; check refuses it until replaced


class SubmissionError(RunError):
    """A submission that cannot go on the board: the message lists every problem, one per line."""


def reference_word(name: str) -> Optional[str]:
    """The reference word (:data:`~paperfields.scoring.score.REFERENCE_WORDS`) that ``name`` spells, or None:
    :func:`~paperfields.scoring.score.reference_spelling` (``Rules``, ``human_``, ``HumanLabels``, ``ruIes``,
    ``hum4n``, ``rul3s``, ``annot4tion``, ``MyHum4n``), folding with the one table of look-alikes,
    :data:`~paperfields.core.confusables.LOOKALIKES`, as :func:`looks_like` does."""
    from paperfields.scoring.score import reference_spelling

    return reference_spelling(name)


def _not_posing_as_a_reference(value: str) -> str:
    """``value`` (submission.toml's provider or model) unless it spells a reference word (rules/, annotator/,
    human/, gold: the rows made here), whatever the role: then ValueError. A submitted reference named
    ``rules/baseline`` stood on the board beside the real one, told apart only by "(submitted)" (an outsider's
    attempt, 2026-12-02)."""
    word = reference_word(value)
    if word:
        raise ValueError(
            f"'{value}' names a reference ({word}: rules/, annotator/, human/, gold: the rows made here), not a "
            "submitted model; name who made the predictions (a submission that is a reference says "
            'role = "reference" with its reference_reason)'
        )
    return value


class SubmissionMeta(BaseModel):
    """``submission.toml``: where the predictions come from. Unknown keys are refused.

    - ``model``: the model id as its provider names it (``gpt-4o-2024-08-06``);
    - ``provider``: who serves it (``openai``, ``anthropic``, ``vllm``, ``own``); ``provider/model`` is the
      run's backend on the board (``rules``, ``annotator`` and ``human`` name references, not submissions);
    - ``date_run``: the day the predictions were made (``2026-11-30``);
    - ``strategy``: a PaperFields strategy the predictions were made with (``zero_shot``, ``few_shot``, ...)
      or ``own pipeline``;
    - ``prompt``: the prompt, or a file of this folder holding it, when shared (optional);
    - ``submitted_by``: a name or handle to answer for the submission;
    - ``model_cutoff``: the model's training-data cutoff (``YYYY-MM``) when known: the board's
      contamination status is decided from it when ``paperfields/core/tables/cutoffs.toml`` does not list the model;
    - ``mode``: how the record was asked for (an instructor mode, ``md_json``, ``tools``, ...), when known (optional);
    - ``prompt_sha256``: sha256 of the prompt the predictions were made with, when known (optional);
    - ``role``: ``contender`` (the default: ranked by headline) or ``reference``: shown among the references on
      every board, marked submitted and never ranked (a second labeling, a frontier AI agent's labels), with
    - ``reference_reason``: why it is a reference (required with ``role = "reference"``, refused without);
    - ``notes``: anything else (optional).

    A value still holding :data:`PLACEHOLDER` (what ``paperfields submission from-run`` writes where only the
    submitter can answer) is refused.
    """

    model_config = ConfigDict(extra="forbid")

    # first: the provider's and reference_reason's checks read it
    role: Literal["contender", "reference"] = "contender"
    model: str = Field(min_length=1, max_length=200)
    provider: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    date_run: dt.date
    strategy: str = Field(min_length=1, max_length=100)
    prompt: Optional[str] = Field(default=None, max_length=20000)
    submitted_by: str = Field(min_length=1, max_length=200)
    model_cutoff: Optional[str] = None
    reference_reason: Optional[str] = Field(default=None, min_length=10, max_length=1000, validate_default=True)
    # the run's own mode id: instructor's (md_json, tools) or the local grammar's (compact-v2, compact-v2+canonical)
    mode: Optional[str] = Field(default=None, max_length=50, pattern=r"^[a-z][a-z0-9_.+-]*$")
    prompt_sha256: Optional[str] = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    notes: Optional[str] = Field(default=None, max_length=5000)

    @field_validator("*")
    @classmethod
    def _filled_in(cls, value: Any) -> Any:
        if isinstance(value, str) and PLACEHOLDER in value:
            raise ValueError(
                f"still {PLACEHOLDER!r} (written by `paperfields submission from-run`): put the real value in place"
            )
        return value

    @field_validator("provider")
    @classmethod
    def _not_a_reference(cls, value: str) -> str:
        return _not_posing_as_a_reference(value)

    @field_validator("date_run")
    @classmethod
    def _not_after_today(cls, value: dt.date) -> dt.date:
        # a day ahead of UTC's today is any time zone's today somewhere; 2099-01-01 passed the check
        latest = dt.datetime.now(dt.timezone.utc).date() + dt.timedelta(days=1)
        if value > latest:
            raise ValueError(
                f"{value} is after today ({latest - dt.timedelta(days=1)} UTC): the day the predictions were made"
            )
        return value

    @field_validator("model")
    @classmethod
    def _a_plain_model_id(cls, value: str) -> str:
        if not MODEL_ID.fullmatch(value):
            raise ValueError(
                f"'{value}' is not a plain model id: letters, digits and '.', '_', ':', '+', '-' only, each part "
                "starting with a letter or digit, parts split by single '/' (an organization's prefix: "
                "Qwen/Qwen2.5-7B-Instruct); no spaces or brackets: the board's own marks such as '(reference)' "
                "are not names"
            )
        return _not_posing_as_a_reference(value)

    @field_validator("reference_reason")
    @classmethod
    def _a_reference_says_why(cls, value: Optional[str], info: ValidationInfo) -> Optional[str]:
        role = info.data.get("role", "contender")
        if role == "reference" and not value:
            raise ValueError(
                'role = "reference" needs it: why the run belongs beside the references (a second labeling, '
                "a frontier AI agent's labels, ...), shown on the board"
            )
        if role == "contender" and value:
            raise ValueError('for role = "reference" only; a contender has none')
        return value

    @field_validator("strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        from paperfields.core import paths

        known = sorted(p.stem for p in paths.prompts_dir().glob("*.toml"))
        if value != OWN_PIPELINE and value not in known:
            raise ValueError(f"'{value}' is neither '{OWN_PIPELINE}' nor a strategy ({', '.join(known)})")
        return value

    @field_validator("model_cutoff")
    @classmethod
    def _month(cls, value: Optional[str]) -> Optional[str]:
        if value is not None:
            month_index(value)  # ValueError naming the value
        return value


@lru_cache(maxsize=1)
def line_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one line of a submission's ``predictions.jsonl``: ``paper_id``,
    ``record`` (the record's JSON Schema, every object closed: no key outside the schema) or null, and an
    optional ``failure`` class. ``paperfields submission schema`` prints it."""
    record = PaperRecord.model_json_schema()
    defs = record.pop("$defs", {})

    def closed(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: closed(v) for k, v in node.items()}
            if "properties" in out and out.get("type") == "object":
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [closed(v) for v in node]
        return node

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "PaperFields prediction line",
        "type": "object",
        "properties": {
            "paper_id": {"type": "string", "minLength": 1},
            "record": {"anyOf": [closed(record), {"type": "null"}]},
            "failure": {"enum": [f.value for f in FailureClass]},
        },
        "required": ["paper_id", "record"],
        "additionalProperties": False,
        "$defs": {name: closed(d) for name, d in defs.items()},
    }


def _schema_problem(where: str, row: Any) -> Optional[str]:
    """The deepest JSON Schema error of a line (the one that says most: inside the record rather than
    "not valid under any of"), as ``where: field 'record.results[0].value': message``; None when it validates."""

    def leaves(errors: Any) -> Any:
        for error in errors:
            if error.context:  # an anyOf (the record or null): the branches' own errors
                yield from leaves(error.context)
            else:
                yield error

    found = list(leaves(_validator().iter_errors(row)))
    if not found:
        return None
    # the deepest error, and not the null branch's "is not of type 'null'" when the record branch says more
    error = max(found, key=lambda e: (len(e.absolute_path), e.validator_value != "null"))
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".") or "(line)"
    message = error.message if len(error.message) <= 200 else error.message[:200] + "..."
    return f"{where}: field '{path}': {message} (the line's JSON Schema: `paperfields submission schema`)"


@lru_cache(maxsize=1)
def _validator():
    from jsonschema import Draft202012Validator

    return Draft202012Validator(line_schema())


@dataclass
class SubmissionCheck:
    """What :func:`check_submission` found: the folder, its ``meta`` (None when the TOML is bad), the
    ``problems`` (each ``file:line: field 'x': what is wrong``; empty when the submission is valid),
    ``papers`` (the test papers it answers) and ``files``: the bytes of ``submission.toml`` and
    ``predictions.jsonl`` as read once and checked (what :func:`add_submission` scores; the files are not opened
    again)."""

    folder: Path
    meta: Optional[SubmissionMeta] = None
    problems: list[str] = dc_field(default_factory=list)
    papers: int = 0
    records: dict[str, Optional[dict[str, Any]]] = dc_field(default_factory=dict, repr=False)
    files: dict[str, bytes] = dc_field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def name(self) -> str:
        return self.folder.name


def _toml_line(text: str, key: str) -> Optional[int]:
    found = re.search(rf"^\s*(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')\s*=", text, re.M)
    return text[: found.start()].count("\n") + 1 if found else None


def _read_regular(path: Path, limit: int, check: SubmissionCheck, missing: str) -> Optional[bytes]:
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes and its only name (a hard link
    may be a name of a file outside the folder), read without following a symbolic link (lstat, then O_NOFOLLOW);
    else None, with the problem added to ``check`` (``missing`` says what the file should hold). Nothing is read
    through a link, so nothing from outside the folder is printed."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        check.problems.append(f"{path}: missing ({missing})")
        return None
    if stat.S_ISLNK(info.st_mode):
        check.problems.append(
            f"{path}: a symbolic link; a submission holds regular files (nothing is read through a link)"
        )
        return None
    if not stat.S_ISREG(info.st_mode):
        check.problems.append(f"{path}: not a regular file; a submission holds regular files")
        return None
    if info.st_nlink > 1:  # another name of the same file, perhaps outside the folder (gold/gold.jsonl)
        check.problems.append(
            f"{path}: a hard link (one of {info.st_nlink} names of the same file, which may be outside the folder); "
            "a submission holds files of its own: put a copy in its place (cp, not ln)"
        )
        return None
    too_big = f"{path}: more than the {limit} bytes a submission's {path.name} may hold"
    if info.st_size > limit:
        check.problems.append(f"{too_big} ({info.st_size} bytes)")
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:  # replaced by a link since the lstat: ELOOP
        check.problems.append(f"{path}: cannot be read as a regular file ({exc.strerror})")
        return None
    with os.fdopen(fd, "rb") as fh:
        if os.fstat(fh.fileno()).st_nlink > 1:  # linked since the lstat
            check.problems.append(f"{path}: a hard link; a submission holds files of its own")
            return None
        data = fh.read(limit + 1)
    if len(data) > limit:
        check.problems.append(too_big)
        return None
    return data


def invisible_problem(subject: str, text: str, of: str) -> Optional[str]:
    """The problem line ``<subject> holds the invisible character U+202E (right-to-left override) at character 3 of
    <of>; ...`` for a ``text`` (a name, or a text of ``submission.toml``) holding a bidirectional control or a
    zero-width character (:data:`~paperfields.core.confusables.INVISIBLE`), naming its code point (never printing
    it), or None. ``subject`` starts the line (``file:line: field 'x':``, ``--name 'x':``)."""
    found = invisible(text)
    if found is None:
        return None
    at, char = found
    return (
        f"{subject} holds the invisible character {char} at character {at} of {of}; drawn as nothing, it can make "
        "one name read as another (bidirectional controls and zero-width characters are refused): remove it"
    )


def _check_meta(folder: Path, check: SubmissionCheck) -> None:
    path = folder / META_FILE
    data = _read_regular(path, MAX_TOML_BYTES, check, "see submissions/README.md for its fields")
    if data is None:
        return
    check.files[META_FILE] = data
    if data.startswith(BOM):
        check.problems.append(
            f"{path}:1: starts with a byte order mark (BOM, bytes EF BB BF), which TOML does not allow; "
            "save the file as UTF-8 without BOM"
        )
        return
    try:
        text = data.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        check.problems.append(f"{path}: not UTF-8; save the file as UTF-8")
        return
    except RecursionError:
        check.problems.append(f"{path}: nested too deep to read; submission.toml holds plain keys and values")
        return
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"at line (\d+)", str(exc))
        check.problems.append(f"{path}:{at.group(1) if at else 1}: not TOML ({exc})")
        return
    keyed = [
        invisible_problem(f"{where}: a key", key, "the key")
        or (
            isinstance(value, str)
            and (
                key_problem(where, key, value)
                or control_problem(where, key, value)
                or invisible_problem(f"{where}: field '{key}':", value, "the value")
            )
        )
        for key, value in data.items()
        for line in [_toml_line(text, key)]
        for where in [f"{path}{f':{line}' if line else ''}"]
    ]
    if any(keyed):
        check.problems += [k for k in keyed if k]
        return
    try:
        check.meta = SubmissionMeta.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            key = ".".join(str(p) for p in error["loc"]) or "(file)"
            line = _toml_line(text, str(error["loc"][0])) if error["loc"] else None
            what = (
                "missing"
                if error["type"] == "missing"
                else "not a field of submission.toml"
                if error["type"] == "extra_forbidden"
                else error["msg"].removeprefix("Value error, ")
            )
            check.problems.append(f"{path}{f':{line}' if line else ''}: field '{key}': {what}")


MAX_OTHER_BYTES = 256 * 1024  # a file beside the two (a prompt shared as prompt.txt); a longer one is refused


def _check_other_files(folder: Path, check: SubmissionCheck) -> None:
    """Every file beside submission.toml and predictions.jsonl (a shared prompt, a README): a regular file of at
    most :data:`MAX_OTHER_BYTES`, UTF-8, with no key-shaped string on any line (the pull request commits it,
    even where results/ keeps only a hash of it). Problems name file and line, never the key."""
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name in (META_FILE, PREDICTIONS_FILE):
            continue
        path = folder / entry.name
        data = _read_regular(path, MAX_OTHER_BYTES, check, "")
        if data is None:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            check.problems.append(f"{path}: not UTF-8; a file of a submission is text")
            continue
        for number, line in enumerate(text.splitlines(), 1):
            problem = key_problem(f"{path}:{number}", None, line)
            if problem:
                check.problems.append(problem)


def _check_predictions(folder: Path, check: SubmissionCheck, gold_path: Path, corpus_path: Path) -> None:
    path = folder / PREDICTIONS_FILE
    data = _read_regular(
        path, MAX_FILE_BYTES, check, 'one JSON line per test paper: {"paper_id": ..., "record": {...}}'
    )
    if data is None:
        return
    check.files[PREDICTIONS_FILE] = data
    split_of = {g.id: g.split for g in load_gold(gold_path)}
    known = {p.id for p in load_corpus(corpus_path)}
    seen: dict[str, int] = {}
    named: set[str] = set()  # ids on lines refused: those papers are invalid there, not missing
    for read in strict_lines(path, data):
        named |= read.named
        if read.problem:
            check.problems.append(read.problem)
            if read.unread:  # not UTF-8, or a BOM first: no line of it is read, so no paper is missing either
                return
            continue
        number, where, row = read.number, read.where, read.row
        problem = _schema_problem(where, row)
        if problem:
            check.problems.append(problem)
            continue
        try:
            line = parse_row(where, row, known)
        except RunError as exc:
            check.problems.append(str(exc))
            continue
        if line.paper_id in seen:
            check.problems.append(
                f"{where}: field 'paper_id': {line.paper_id} already on line "
                f"{seen[line.paper_id]}; give each test paper once"
            )
            continue
        seen[line.paper_id] = number
        check.records[line.paper_id] = line.record
        if split_of.get(line.paper_id) != SPLIT:
            why = f"a {split_of[line.paper_id]} paper" if line.paper_id in split_of else "a paper without gold"
            check.problems.append(
                f"{where}: field 'paper_id': {line.paper_id} is {why}; a submission answers the {SPLIT} papers only"
            )
    missing = [pid for pid, split in split_of.items() if split == SPLIT and pid not in seen and pid not in named]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        check.problems.append(
            f"{path}: field 'paper_id': {len(missing)} {SPLIT} paper{'s' if len(missing) > 1 else ''} missing: {shown} "
            f'(every {SPLIT} paper once; "record": null for a paper your system failed)'
        )
    check.papers = sum(1 for pid in seen if split_of.get(pid) == SPLIT)


# A submission agreeing this much with a published run or gold, on the (paper, headline field) pairs, is a copy and
# refused. Measured on the published runs (scorer 3.4): the closest two are 0.676 apart (0.5b confidence and zero-shot),
# the best model agrees with gold on 0.450, the rules baseline on 0.661, and the blind second labeling by a separate
# AI agent session on 0.933 of the pairs of its own 25 papers. A reference (role = "reference": a second labeling) is
# refused as a copy of gold only at REFERENCE_COPY_AGREEMENT, so an honest labeling near 0.95 is not taken for one.
COPY_AGREEMENT = 0.95
REFERENCE_COPY_AGREEMENT = 0.99


def _field_value(record: Optional[dict[str, Any]], field: str) -> str:
    """One field of a record in a form two copies share: strings case-folded with their spaces collapsed, a
    list as its sorted items; ``!`` for a paper without a record."""
    if record is None:
        return "!"

    def norm(value: Any) -> Any:
        if isinstance(value, str):
            return " ".join(value.casefold().split())
        if isinstance(value, dict):
            return {k: norm(v) for k, v in sorted(value.items())}
        if isinstance(value, list):
            return sorted((norm(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
        return value

    return json.dumps(norm(record.get(field)), sort_keys=True)


def agreement(ours: dict[str, Optional[dict]], theirs: dict[str, Optional[dict]], papers: list[str]) -> float:
    """Share of the (paper, headline field) pairs over ``papers`` where two sets of records (paper id -> record
    or None) give the same value (:func:`_field_value`): 1.0 for a copy; a paper one side lacks disagrees."""
    from paperfields.scoring.score import HEADLINE_FIELDS

    if not papers:
        return 0.0
    same = sum(_field_value(ours.get(p), f) == _field_value(theirs.get(p), f) for p in papers for f in HEADLINE_FIELDS)
    return same / (len(papers) * len(HEADLINE_FIELDS))


def _published_records(runs_dir: Path, skip: str) -> dict[str, dict[str, Optional[dict]]]:
    """Run id -> its records (paper id -> record or None) for every run folder under ``runs_dir`` but ``skip``
    (a real folder, not a link: what the board shows); an unreadable run is left out (the board names it)."""
    from paperfields.core.runlog import read_predictions

    found = {}
    for folder in sorted(runs_dir.glob("*/")) if runs_dir.is_dir() else []:
        if folder.name == skip or not (folder / PREDICTIONS_FILE).is_file():
            continue
        try:
            found[folder.name] = {line.paper_id: line.record for line in read_predictions(folder / PREDICTIONS_FILE)}
        except (RunError, ValueError, OSError):
            continue
    return found


def copies(
    records: dict[str, Optional[dict]], gold_path: Path, runs_dir: Optional[Path], skip: str
) -> list[tuple[str, float]]:
    """What the submission's ``records`` copy: (``gold`` or a published run id, agreement) for every one they agree
    with on :data:`COPY_AGREEMENT` or more of the test papers' (paper, headline field) pairs (:func:`agreement`),
    nearest first. ``skip``: the submission's own run id (adding it again compares it with others only)."""
    test = [g for g in load_gold(gold_path) if g.split == SPLIT]
    papers = [g.id for g in test]
    sources = {"gold": {g.id: g.record.model_dump(mode="json") for g in test}}
    if runs_dir is not None:
        sources.update(_published_records(runs_dir, skip))
    near = [(name, agreement(records, theirs, papers)) for name, theirs in sources.items()]
    return sorted(((n, a) for n, a in near if a >= COPY_AGREEMENT), key=lambda x: -x[1])


def check_submission(
    folder: Path, gold_path: Path, corpus_path: Path, runs_dir: Optional[Path] = None
) -> SubmissionCheck:
    """Every problem of the submission in ``folder`` (see the module docstring), at most
    :data:`MAX_PROBLEMS` of them listed, each naming file, line and field; a submission whose records copy gold
    or a run under ``runs_dir`` (the published runs; :func:`copies`) is refused naming how near. Reads only."""
    check = SubmissionCheck(folder)
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        info = None
    if info is None or not (stat.S_ISDIR(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        check.problems.append(f"{folder}: no such submission folder")
        return check
    if stat.S_ISLNK(info.st_mode):
        check.problems.append(
            f"{folder}: a symbolic link; a submission is a real folder directly "
            "under submissions/ (nothing is read through a link)"
        )
        return check
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_symlink():
            check.problems.append(f"{folder / entry.name}: a symbolic link; a submission holds regular files only")
        elif entry.is_dir(follow_symlinks=False):
            check.problems.append(f"{folder / entry.name}: a folder; a submission holds regular files only")
    if check.problems:
        return check
    if hidden := invisible_problem(f"{folder}: the folder name", folder.name, "the name"):
        check.problems.append(hidden)
    elif not NAME.fullmatch(folder.name):
        check.problems.append(
            f"{folder}: the folder name must be lower-case letters, digits, '.', '_' or '-' (at most 64), "
            "as it becomes the run id"
        )
    elif posing := name_problem(folder.name):
        check.problems.append(f"{folder}: the folder name {posing}")
    _check_meta(folder, check)
    if check.meta is not None and check.meta.role == "contender":
        _check_not_a_reference_backend(folder, check, runs_dir)
    _check_predictions(folder, check, gold_path, corpus_path)
    _check_other_files(folder, check)
    if check.records and not check.problems and check.meta is not None:
        for source, near in copies(check.records, gold_path, runs_dir, run_id_of(folder.name)):
            if check.meta.role == "reference" and source == "gold" and near < REFERENCE_COPY_AGREEMENT:
                continue
            check.problems.append(
                f"{folder / PREDICTIONS_FILE}: the records agree with "
                f"{'gold' if source == 'gold' else 'the published run ' + source} on {near:.1%} of the "
                f"(paper, field) pairs of the {SPLIT} papers (a copy: {COPY_AGREEMENT:.0%} or more); a copy "
                "of gold or of a published run is not a submission"
            )
    if len(check.problems) > MAX_PROBLEMS:
        check.problems = check.problems[:MAX_PROBLEMS] + [
            f"{folder}: ... and {len(check.problems) - MAX_PROBLEMS} more problems"
        ]
    return check


def name_problem(name: str) -> Optional[str]:
    """What is wrong with a submission name (a folder name, ``from-run --name``) of the plain :data:`NAME` shape that
    poses as something else, or None: starting with a reference's spelling (``rules-baseline``, ``Annotator2``,
    ``hum4n-x``: :func:`reference_word` of its first word) or holding ``__``, the run id's separator
    (``rules_baseline__zero_shot__test`` would read as a published run's id)."""
    if "__" in name:
        return (
            f"'{name}' holds '__', which separates the parts of a run id (<name>__submitted__test): "
            "a submission name is one part"
        )
    first = re.match(r"[^._-]+", name)
    word = reference_word(first.group(0)) if first else None
    if word:
        return (
            f"'{name}' starts with '{word}', which names a reference of the board (rules, annotator, human, gold), "
            "not a submission; choose a name of your own"
        )
    return None


def _references(folder: Path, runs_dir: Optional[Path]) -> list[tuple[str, str, Optional[str]]]:
    """(backend ``provider/model``, where it is a reference, its submission name or None) for every published run
    under ``runs_dir`` that the board shows among the references (a ``rules/``-like backend or a submission declared
    a reference) and every submission beside ``folder`` declared ``role = "reference"``. Unreadable files are skipped
    (their own checks name them)."""
    from paperfields.scoring.score import is_reference_backend

    found: list[tuple[str, str, Optional[str]]] = []
    for run in sorted(runs_dir.glob("*/manifest.json")) if runs_dir is not None and runs_dir.is_dir() else []:
        try:
            manifest = json.loads(run.read_text(encoding="utf-8"))
            backend = manifest["config"]["backend"]
            submission = (manifest.get("import") or {}).get("submission") or {}
            role, name = submission.get("role"), submission.get("name")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if isinstance(backend, str) and (is_reference_backend(backend) or role == "reference"):
            found.append(
                (backend, f"the published reference run {run.parent.name}", name if isinstance(name, str) else None)
            )
    for other in sorted(folder.parent.glob(f"*/{META_FILE}")):
        if other.parent.name == folder.name or other.parent.is_symlink() or other.is_symlink():
            continue
        try:
            if other.stat().st_size > MAX_TOML_BYTES:
                continue
            meta = tomllib.loads(other.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):  # a sibling's own check names it (a 20,000-deep TOML)
            continue
        if meta.get("role") == "reference" and isinstance(meta.get("provider"), str):
            backend = f"{meta['provider']}/{meta.get('model')}"
            found.append((backend, f"the reference submission {other.parent.name}", other.parent.name))
    return found


# The AI agent session references' names, reserved even where their runs and submissions are not beside the checked
# folder (a submission checked outside the repository); the published ones add their own (:func:`_reference_names`).
RESERVED_NAMES = {
    "agent-session": "the AI agent session references",
    "frontier-llm-agent-session": "the AI agent session references",
}
LOOKALIKE_RATIO = 88  # rapidfuzz ratio of two skeletons at or above which a name reads as a reference's


def looks_like(name: str, reserved: dict[str, str]) -> Optional[str]:
    """The name of ``reserved`` (name -> where it is a reference) that ``name`` reads as, the nearest, or None: the
    same :func:`skeleton`, a skeleton holding a reserved one of 8 or more characters (``agent-session-v2``,
    ``my-agent-session``), or one within :data:`LOOKALIKE_RATIO` of it (rapidfuzz; ``agent-sesion``)."""
    from rapidfuzz import fuzz

    mine = skeleton(name)
    near: list[tuple[bool, float, str]] = []
    for theirs in reserved:
        other = skeleton(theirs)
        if not other or not mine:
            continue
        ratio = fuzz.ratio(mine, other)
        if (
            mine == other
            or (len(other) >= 8 and other in mine)
            or (min(len(mine), len(other)) >= 6 and ratio >= LOOKALIKE_RATIO)
        ):
            near.append((mine == other, ratio, theirs))
    return max(near)[2] if near else None


def _reference_names(references: list[tuple[str, str, Optional[str]]]) -> dict[str, str]:
    """Name -> where it is a reference: :data:`RESERVED_NAMES` and the provider, model and submission name of every
    reference but the ``rules/``, ``annotator/`` and ``human/`` rows (their words are refused whatever the role:
    :func:`~paperfields.scoring.score.reference_spelling`; a contender's model may be called ``baseline``)."""
    from paperfields.scoring.score import is_reference_backend

    names = dict(RESERVED_NAMES)
    for backend, where, name in references:
        if is_reference_backend(backend):
            continue
        provider, _, model = backend.partition("/")
        for part in (provider, model, name):
            if part:
                names.setdefault(part, where)
    return names


def lookalike_problem(name: str, reserved: dict[str, str]) -> Optional[str]:
    """What is wrong with a submission name (a folder name, ``from-run --name``) that reads as a name of
    ``reserved`` (:func:`looks_like`: ``agent-sessi0n``, ``my-agent-session``), as ``'<name>' reads as '<theirs>', a
    name of <where> on the board (...); choose a name of your own``, or None."""
    theirs = looks_like(name, reserved)
    if theirs is None:
        return None
    return (
        f"'{name}' reads as '{theirs}', a name of {reserved[theirs]} on the board (case, separators and look-alike "
        "letters such as 0 for o aside); choose a name of your own"
    )


def _check_not_a_reference_backend(folder: Path, check: SubmissionCheck, runs_dir: Optional[Path]) -> None:
    """A contender whose ``provider/model`` is a reference's backend on the board would read as that reference
    ranked: refused on the model's line. So is a contender whose provider, model or folder name reads as a
    reference's (:func:`looks_like`: ``agent_session``, ``Agent-Session``, ``agent-sessi0n``), each field once."""
    assert check.meta is not None
    backend = f"{check.meta.provider}/{check.meta.model}"
    references = _references(folder, runs_dir)
    where = next((w for b, w, _ in references if b.casefold() == backend.casefold()), None)
    path = folder / META_FILE
    text = check.files[META_FILE].decode("utf-8")  # the bytes checked, not the file read again
    if where:
        line = _toml_line(text, "model")
        check.problems.append(
            f"{path}{f':{line}' if line else ''}: field 'model': '{backend}' is the backend of {where} on the board; "
            'a contender names its own model (or says role = "reference" with its reference_reason)'
        )
        return
    reserved = _reference_names(references)
    own = (
        "; a contender names who made its predictions in a name of its own (or says "
        'role = "reference" with its reference_reason)'
    )
    for key, value in (("provider", check.meta.provider), ("model", check.meta.model)):
        if theirs := looks_like(value, reserved):
            line = _toml_line(text, key)
            check.problems.append(
                f"{path}{f':{line}' if line else ''}: field '{key}': '{value}' reads as '{theirs}', a name of "
                f"{reserved[theirs]} on the board (case, separators and look-alike letters such as 0 for o aside)" + own
            )
    if posing := lookalike_problem(folder.name, reserved):
        check.problems.append(
            f'{folder}: the folder name {posing} (or say role = "reference" with its reference_reason)'
        )


def run_id_of(name: str) -> str:
    """The run id of the submission ``name`` on the board: ``<name>__submitted__test``."""
    return f"{name}__submitted__{SPLIT}"


def add_submission(folder: Path, gold_path: Path, corpus_path: Path, runs_dir: Path) -> Path:
    """Check the submission in ``folder``, score it and place its run folder ``runs_dir/<name>__submitted__test``
    (what the board reads); returns that folder. What is scored are the bytes the check read (each file read once,
    a regular file under its size limit, never through a link): a file changed after the check never lands.
    Raises SubmissionError listing every problem, or when the run folder exists with other predictions (remove it
    to replace the submission); nothing in ``runs_dir`` changes then. Adding the same submission again returns the
    existing folder."""
    from paperfields.scoring.imported import import_predictions
    from paperfields.scoring.runs import score_run

    check = check_submission(folder, gold_path, corpus_path, runs_dir)
    if not check.ok:
        raise SubmissionError(
            f"{folder}: {len(check.problems)} problem{'s' if len(check.problems) > 1 else ''}:\n"
            + "\n".join(check.problems)
        )
    meta = check.meta
    assert meta is not None  # a check without problems has read the TOML
    target = runs_dir / run_id_of(folder.name)
    runs_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=runs_dir.parent, prefix=".submission-") as scratch:
        # imported and scored away from the board, moved in only when both succeeded
        made = import_predictions(
            folder / PREDICTIONS_FILE,
            folder.name,
            SPLIT,
            Path(scratch),
            gold_path,
            corpus_path,
            backend=f"{meta.provider}/{meta.model}",
            strategy=meta.strategy,
            run_id=target.name,
            submission={"name": folder.name, **meta.model_dump(mode="json", exclude_none=True)},
            data=check.files[PREDICTIONS_FILE],  # the bytes checked: the file is not opened again
        )
        score_run(made, gold_path, corpus_path)
        if target.exists():
            if (target / PREDICTIONS_FILE).is_file() and (target / PREDICTIONS_FILE).read_bytes() == (
                made / PREDICTIONS_FILE
            ).read_bytes():
                return target
            raise SubmissionError(
                f"{target} holds other predictions; remove it to replace the submission {folder.name}"
            )
        shutil.move(str(made), str(target))
    return target


def _toml_value(value: Any) -> str:
    """A TOML value: a string as a basic string (JSON's escapes are TOML's), a date bare."""
    return value.isoformat() if isinstance(value, dt.date) else json.dumps(value, ensure_ascii=False)


def submission_from_run(
    run_dir: Path,
    name: str,
    submissions_dir: Path,
    gold_path: Path,
    corpus_path: Path,
    published_runs: Optional[Path] = None,
) -> Path:
    """Write ``submissions_dir/<name>/`` from a finished run of ``paperfields run`` in ``run_dir``: its
    ``predictions.jsonl`` in the submission format (``paper_id`` and ``record``, ``failure`` only on a failed
    paper's line; the test papers in corpus order) and a ``submission.toml`` filled from the run's manifest
    (model, provider, date run, strategy, mode, prompt hash, the model's cutoff when the cutoff table lists it),
    with :data:`PLACEHOLDER` where only the submitter can answer (``submitted_by``). Returns the folder.

    Raises SubmissionError, writing nothing, when ``name`` is not a plain submission name, holds an invisible
    character, poses as a reference (:func:`name_problem`) or reads as a reference's name as ``submission check``
    finds it (:func:`lookalike_problem`: against the AI agent session references, the references among
    ``published_runs`` and the reference submissions under ``submissions_dir``), the folder exists, the
    run is a reference (``rules/``, ...), scores another split or corpus than the benchmark's test split, or does
    not answer every test paper (run it without ``--limit``; resume a run with papers still unanswered)."""
    from paperfields.core.runlog import load_manifest, read_predictions
    from paperfields.scoring.contamination import load_cutoffs
    from paperfields.scoring.score import is_reference_backend

    if hidden := invisible_problem(f"--name {name!r}:", name, "the name"):
        raise SubmissionError(hidden)
    if not NAME.fullmatch(name):
        raise SubmissionError(
            f"--name {name!r}: a submission name is lower-case letters, digits, '.', '_' or '-' (at most 64), "
            "starting with a letter or digit, as it becomes the folder submissions/<name>/ and the run id"
        )
    if posing := name_problem(name):
        raise SubmissionError(f"--name {posing}")
    target = submissions_dir / name
    if posing := lookalike_problem(name, _reference_names(_references(target, published_runs))):
        raise SubmissionError(f"--name {posing}")
    if target.exists() or target.is_symlink():
        raise SubmissionError(f"{target} exists; choose another --name or remove it first")
    manifest = load_manifest(run_dir)
    config = manifest.config
    if is_reference_backend(config.backend):
        raise SubmissionError(f"{run_dir}: {config.backend} is a reference of the board, not a model to submit")
    if config.corpus is not None or config.split not in (SPLIT, "all"):
        raise SubmissionError(
            f"{run_dir}: the run scores {config.corpus or 'the ' + config.split + ' split'}; a submission answers the "
            f"benchmark's {SPLIT} split (paperfields run -b {config.backend} --split {SPLIT})"
        )
    test_ids = [g.id for g in load_gold(gold_path) if g.split == SPLIT]
    latest = {line.paper_id: line for line in read_predictions(run_dir / PREDICTIONS_FILE)}
    unanswered = [pid for pid in test_ids if pid not in latest or latest[pid].failure == FailureClass.transport_error]
    if unanswered:
        raise SubmissionError(
            f"{run_dir}: {len(unanswered)} of the {len(test_ids)} {SPLIT} papers have no answer yet "
            f"({', '.join(unanswered[:3])}{', ...' if len(unanswered) > 3 else ''}); a submission answers every one: "
            "finish the run (the same `paperfields run` command resumes it; without --limit)"
        )
    order = {p.id: i for i, p in enumerate(load_corpus(corpus_path))}
    rows = []
    for pid in sorted(test_ids, key=lambda pid: order.get(pid, len(order))):
        line = latest[pid]
        row: dict[str, Any] = {"paper_id": pid, "record": line.record}
        if line.record is None:
            row["failure"] = (line.failure or FailureClass.malformed_json).value
        rows.append(json.dumps(row, ensure_ascii=False) + "\n")
    provider, _, model = config.backend.partition("/")
    started = manifest.finished_at or manifest.started_at
    cutoff = load_cutoffs()[1].get(config.backend)
    known_cutoff = getattr(cutoff, "cutoff", None)
    meta: dict[str, Any] = {
        "model": model or provider,
        "provider": provider if model else "own",
        "date_run": dt.date.fromisoformat(started[:10]),
        "strategy": config.strategy,
        "mode": config.mode,
        "prompt_sha256": config.prompt_sha256 if re.fullmatch(r"[0-9a-f]{64}", config.prompt_sha256 or "") else None,
        "model_cutoff": known_cutoff if known_cutoff and known_cutoff != "unknown" else None,
        "submitted_by": f"{PLACEHOLDER}: your name or handle",
        "notes": f"made by `paperfields run` {manifest.paperfields_version}"
        + (f" at commit {manifest.git_commit}" if manifest.git_commit else "")
        + f" (run {manifest.run_id}, temperature {config.params.temperature}, max_tokens {config.params.max_tokens})",
    }
    toml = [
        f"# Written by `paperfields submission from-run` from the run {manifest.run_id} ({run_dir / 'manifest.json'}).",
        f"# Replace every {PLACEHOLDER!r} (`paperfields submission check {name}` refuses it until then); the other",
        "# fields are the run's own. What each field means: submissions/README.md.",
    ]
    toml += [f"{key} = {_toml_value(value)}" for key, value in meta.items() if value is not None]
    submissions_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=submissions_dir, prefix=".from-run-") as scratch:
        made = Path(scratch) / name
        made.mkdir()
        (made / PREDICTIONS_FILE).write_text("".join(rows), encoding="utf-8")
        (made / META_FILE).write_text("\n".join(toml) + "\n", encoding="utf-8")
        made.rename(target)  # whole or not at all
    return target
