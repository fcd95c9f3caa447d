"""Predictions made outside PaperFields (another system, a second annotator) turned into a run folder.

The minimal format is a JSONL file, one paper per line: ``{"paper_id": "...", "record": {...}}``
(``id`` is accepted for ``paper_id``, so a labeling in the gold format imports as it is; ``record``
null plus an optional ``failure`` class marks a paper the system failed). Nothing else is required.
The record must be a :class:`~paperfields.core.schema.PaperRecord`; unknown keys are refused,
not ignored, so a misspelled field never scores as an empty one.

The file is read strictly (:func:`strict_lines`, the one reader of ``paperfields score --predictions`` and of
``paperfields submission check``): JSON Lines as its spec says, with LF line ends, no blank line, no byte order mark,
no NaN and no control character in a string; a line that breaks a rule is an error naming file, line and field.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any, Optional

from pydantic import ValidationError

from paperfields.core.corpus import load_corpus
from paperfields.core.errors import field_error
from paperfields.core.gold import load_gold
from paperfields.core.runlog import FailureClass, Manifest, PredictionLine, RunConfig, RunError, default_run_id, now
from paperfields.core.schema import PaperRecord

IMPORTED_STRATEGY = "imported"
BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark, which some editors put first; JSON (RFC 8259) forbids it


def bom_problem(path: Path) -> str:
    """The problem line for a predictions file starting with a byte order mark (refused, like a submission.toml's:
    decoding it away silently would let the same bytes pass on line 1 and fail as "not JSON" on any other line)."""
    return (
        f"{path}:1: starts with a byte order mark (BOM, bytes EF BB BF), which JSON Lines does not allow; "
        "save the file as UTF-8 without BOM"
    )


MAX_DEPTH = 32  # a prediction line nests 4 levels deep (line, record, results, a result); deeper is refused


# Secret keys by their published shapes; each must start a token, so ordinary words ("task-relevant") never match.
# paperfields.core.runlog.redact_secrets masks the OpenAI shape in what runs write; a submission is refused instead.
KEY_SHAPES = {
    "an OpenAI or Anthropic key": r"sk-[A-Za-z0-9_\-]{16,}",
    "a Hugging Face token": r"hf_[A-Za-z0-9]{20,}",
    "a GitHub token": r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
    "an AWS access key id": r"(?:AKIA|ASIA)[0-9A-Z]{16}",
    "a Google API key": r"AIza[0-9A-Za-z_\-]{35}",
    "a Slack token": r"xox[abposr]-[A-Za-z0-9-]{10,}",
    "a Stripe key": r"[rs]k_live_[0-9A-Za-z]{16,}",
    "a private key": r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
}
_KEY = re.compile("|".join(f"(?P<k{i}>(?<![A-Za-z0-9_\\-]){shape})" for i, shape in enumerate(KEY_SHAPES.values())))


def key_shaped(text: str) -> Optional[str]:
    """What kind of secret key ``text`` holds (:data:`KEY_SHAPES`: ``an OpenAI or Anthropic key``, ``a Hugging Face
    token``, ``a GitHub token``, ``an AWS access key id``, ...), or None. Never returns the key itself."""
    found = _KEY.search(text)
    if found is None:
        return None
    return list(KEY_SHAPES)[int(found.lastgroup[1:])]


def key_problem(where: str, field: Optional[str], value: str) -> Optional[str]:
    """The problem line for a key-shaped ``value`` at ``where`` (``field`` named when there is one), or None."""
    kind = key_shaped(value)
    if kind is None:
        return None
    named = f" field '{field}':" if field else ""
    return (
        f"{where}:{named} holds what looks like {kind}; remove it (a key must never reach a run folder or "
        "results/, where this text is kept); revoke the key if it is real"
    )


class _NonFinite(str):
    """What the strict reader puts where a line has ``NaN``, ``Infinity``, ``-Infinity`` or a number out of a
    float's range (``1e999``): the token, found afterwards with its field (:func:`_strict_problem`)."""


def _finite_float(token: str) -> Any:
    value = float(token)
    return value if math.isfinite(value) else _NonFinite(token)


def _finite_int(token: str) -> Any:
    """An integer token, or :class:`_NonFinite` when no float holds it (a 400-digit value passed the check and
    was then dropped from the record when scored: refused here, never mended)."""
    return int(token) if math.isfinite(float(token)) else _NonFinite(token)


class _DuplicateKey(ValueError):
    """A JSON object of a line with one key twice: JSON readers keep the last silently (a record followed by
    ``"record": null`` passed the check as the null)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


# Control characters a string value of a line may not hold, escaped or not (JSON refuses them raw; "\u0000" reads as
# a NUL): C0 but tab and line feed, DEL and C1. Invisible on the board and in a terminal, and a NUL ends a C string.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
CONTROL_NAMES = {0x00: "NUL", 0x08: "backspace", 0x0B: "vertical tab", 0x0C: "form feed", 0x0D: "carriage return"}
CONTROL_NAMES |= {0x1B: "escape", 0x7F: "DEL"}


def control_problem(where: str, field: str, value: str) -> Optional[str]:
    """The problem line for a string ``value`` of ``field`` holding a control character (:data:`CONTROL`), naming
    its code point (never printing it), or None."""
    control = CONTROL.search(value)
    if control is None:
        return None
    code = ord(control.group(0))
    return (
        f"{where}: field '{field}': holds the control character U+{code:04X}"
        f"{f' ({CONTROL_NAMES[code]})' if code in CONTROL_NAMES else ''} at character {control.start() + 1} "
        "of the value; a value is plain text (tab and newline, written \\t and \\n, are the only controls "
        "allowed): remove it"
    )


def _strict_problem(where: str, row: Any) -> Optional[str]:
    """``where: field 'record.results[0].value': NaN is not a JSON number ...`` for the first non-finite number
    of a parsed line, string holding a control character (:data:`CONTROL`) or a key-shaped one, or a line nested
    deeper than :data:`MAX_DEPTH`; None for a line of plain JSON values."""
    stack: list[tuple[Any, str, int]] = [(row, "", 1)]
    while stack:
        node, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            return (
                f"{where}: nested more than {MAX_DEPTH} levels deep (at "
                f"'{path}'); a line is one record, a few levels deep"
            )
        if isinstance(node, _NonFinite):
            return (
                f"{where}: field '{path.lstrip('.') or '(line)'}': {str(node)[:40]} is not a finite JSON number "
                "(NaN, Infinity and values beyond a float's range are refused, not mended)"
            )
        if isinstance(node, str) and (control := control_problem(where, path.lstrip(".") or "(line)", node)):
            return control
        if isinstance(node, str) and (found := key_problem(where, path.lstrip(".") or "(line)", node)):
            return found
        if isinstance(node, dict):
            stack += [(v, f"{path}.{k}", depth + 1) for k, v in reversed(list(node.items()))]
        elif isinstance(node, list):
            stack += [(v, f"{path}[{i}]", depth + 1) for i, v in reversed(list(enumerate(node)))]
    return None


_PAPER_ID = re.compile(r'"paper_id"\s*:\s*"([A-Za-z0-9_.-]{1,100})"')


def _paper_id_in(raw: str) -> set[str]:
    """The paper id a line refused unread (too long, not JSON, a BOM) names, as a set of at most one: that paper is
    then reported once, as invalid on its line, and not a second time as missing."""
    found = _PAPER_ID.search(raw)
    return {found.group(1)} if found else set()


MAX_LINE_BYTES = 64 * 1024  # one line of a predictions file; the published runs' longest is about 11 KiB


@dataclass
class StrictLine:
    """One line of a predictions file as :func:`strict_lines` reads it: its 1-based ``number``, ``where``
    (``file:line``), and either ``row`` (the line's JSON value, plain: no NaN, no control character, no key, not
    too deep) or ``problem`` (what is wrong, naming file, line and field), with ``named`` holding the paper id the
    line names (at most one; for a line refused unread, found by a pattern). ``unread`` marks the problem of a file
    that is read no further (not UTF-8, or a byte order mark first): it is then the only line."""

    number: int
    where: str
    row: Any = None
    problem: Optional[str] = None
    named: set[str] = dc_field(default_factory=set)
    unread: bool = False


def strict_lines(path: Path, data: bytes) -> Iterator[StrictLine]:
    """The lines of a predictions file (``data``, the bytes read from ``path``) read as JSON Lines' spec says, one
    :class:`StrictLine` per line: UTF-8 without a byte order mark, LF line ends (a file with CR LF is named once,
    at its first such line, and its lines then read as with LF alone), no blank line, no BOM at the start of any
    line, a line of at most :data:`MAX_LINE_BYTES`, one JSON value without NaN, infinities, numbers beyond a
    float's range or a key given twice in one object, nested at most :data:`MAX_DEPTH` deep, no string holding a
    control character (:data:`CONTROL`) or what looks like a secret key (:data:`KEY_SHAPES`). A file that is not
    UTF-8 or starts with a BOM is one problem and nothing more. The one reader of ``paperfields submission check``
    and ``paperfields score --predictions``; a problem is never mended."""
    if data.startswith(BOM):
        yield StrictLine(1, f"{path}:1", problem=bom_problem(path), unread=True)
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problem = f"{path}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x}); save the file as UTF-8"
        yield StrictLine(line, f"{path}:{line}", problem=problem, unread=True)
        return
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the line feed that ends the last line
    crlf = [number for number, raw in enumerate(lines, start=1) if raw.endswith("\r")]
    if crlf:  # once for the file; its lines are then read as they would be with LF alone
        many = (
            "; every line does" if len(crlf) == len(lines) > 1 else f"; {len(crlf)} lines do" if len(crlf) > 1 else ""
        )
        yield StrictLine(
            crlf[0],
            f"{path}:{crlf[0]}",
            problem=f"{path}:{crlf[0]}: ends with CR LF (Windows line endings{many}); a line of JSON Lines ends with "
            "LF alone: convert the file (`dos2unix predictions.jsonl`) or write it with LF (in Python: "
            "open(path, 'w', newline='\\n'))",
        )
    for number, raw in enumerate(lines, start=1):
        yield _strict_line(number, f"{path}:{number}", raw.removesuffix("\r"))


def _strict_line(number: int, where: str, raw: str) -> StrictLine:
    """One line of :func:`strict_lines`, its line end removed."""

    def refused(problem: str) -> StrictLine:
        return StrictLine(number, where, problem=problem, named=_paper_id_in(raw))

    if not raw.strip():
        return StrictLine(
            number,
            where,
            problem=f"{where}: a blank line; every line is one paper's JSON object, blank lines are refused (a paper "
            'your system failed is {"paper_id": ..., "record": null}): remove the line',
        )
    if raw.startswith(BOM.decode("utf-8")):
        return refused(
            f"{where}: starts with a byte order mark (BOM, bytes EF BB BF) in the middle of the file, which JSON "
            "Lines does not allow (files saved with a BOM and then joined, as by `cat a.jsonl b.jsonl`, leave "
            f"one where each began): delete those three bytes at the start of line {number}, or save each part "
            "as UTF-8 without BOM before joining them"
        )
    size = len(raw.encode("utf-8"))
    if size > MAX_LINE_BYTES:
        return refused(f"{where}: line of {size} bytes, more than {MAX_LINE_BYTES}: one paper's record per line")
    try:
        row = json.loads(
            raw,
            parse_constant=_NonFinite,
            parse_float=_finite_float,
            parse_int=_finite_int,
            object_pairs_hook=_unique_keys,
        )
    except _DuplicateKey as exc:
        return refused(
            f"{where}: field '{exc}': the key appears twice in one object; give each key once (a JSON reader "
            "keeps one of the two without a word)"
        )
    except RecursionError:
        return refused(
            f"{where}: nested too deep to read (more than {MAX_DEPTH} levels); a line is one record, a few levels deep"
        )
    except ValueError as exc:
        return refused(f"{where}: not JSON ({exc})")
    named = {row["paper_id"]} if isinstance(row, dict) and isinstance(row.get("paper_id"), str) else set()
    problem = _strict_problem(where, row)
    return StrictLine(number, where, row=None if problem else row, problem=problem, named=named)


def read_outside_predictions(path: Path, known_ids: set[str]) -> list[PredictionLine]:
    """See :func:`_read_numbered`: the lines without their line numbers."""
    return [line for _, line in _read_numbered(path, known_ids, _file_bytes(path))]


def _file_bytes(path: Path) -> bytes:
    """The bytes of the predictions file ``path``, read once; RunError for a folder or a missing file."""
    if path.is_dir():
        raise RunError(f"{path}: is a directory; give the predictions JSONL file")
    if not path.is_file():
        raise RunError(f"{path}: no such file")
    return path.read_bytes()


def _read_numbered(path: Path, known_ids: set[str], data: bytes) -> list[tuple[int, PredictionLine]]:
    """Read a predictions JSONL in the minimal format from ``data``, the bytes of ``path`` (named in messages).
    Returns (1-based line number, :class:`PredictionLine`) per paper, in file order. Raises RunError naming
    ``path``, the line and the field for the first line :func:`strict_lines` refuses (CR LF line ends, a blank
    line, a control character in a string, NaN, ...), a line that is not a JSON object, a missing id, an id not in
    ``known_ids`` (the corpus), a repeated id, an unknown record key, a record that does not validate, or an unknown
    failure class.

    A record is read as a model's reply is (:mod:`paperfields.core.schema`): what the schema
    tolerates (``"N/A"`` as null, ``"Code Software Engineering"`` as ``code_software_engineering``,
    ``"56.61%"`` as 56.61, ``"yes"`` as true, ...) is normalized, and each line's ``repairs`` names
    every such deviation with the names model runs use (``placeholders``, ``enum_spelling``,
    ``number_text``, ``bool_text``, ...), so the run's scores count them."""
    lines: list[tuple[int, PredictionLine]] = []
    seen: dict[str, int] = {}
    for read in strict_lines(path, data):
        if read.problem:
            raise RunError(read.problem)
        number, where, row = read.number, read.where, read.row
        if not isinstance(row, dict):
            raise RunError(f"{where}: a line must be a JSON object with paper_id and record")
        line = parse_row(where, row, known_ids)
        if line.paper_id in seen:
            raise RunError(f"{where}: field 'paper_id': {line.paper_id} already on line {seen[line.paper_id]}")
        seen[line.paper_id] = number
        lines.append((number, line))
    if not lines:
        raise RunError(f"{path}: no prediction lines")
    return lines


def parse_row(where: str, row: dict[str, Any], known_ids: set[str]) -> PredictionLine:
    """One line of the minimal format, already read as a JSON object, as a :class:`PredictionLine`
    (see :func:`_read_numbered` for the rules; repeated ids are the caller's to find). Raises RunError
    starting with ``where`` (``file:line``) and naming the field."""
    paper_id = row.get("paper_id", row.get("id"))
    if paper_id is None or paper_id == "":
        raise RunError(f'{where}: field \'paper_id\': missing (give "paper_id" or "id")')
    if not isinstance(paper_id, str):
        raise RunError(f"{where}: field 'paper_id': must be a string, got {type(paper_id).__name__} {paper_id!r}")
    if paper_id not in known_ids:
        raise RunError(f"{where}: field 'paper_id': {paper_id!r} is not a paper of the corpus")
    if "record" not in row:
        raise RunError(
            f"{where}: field 'record': missing (give the record, or \"record\": null for a paper your system failed)"
        )
    record = row.get("record")
    if record is not None and row.get("failure"):
        raise RunError(f"{where}: field 'failure': a line with a record is not a failure; give one or the other")
    if record is not None and not isinstance(record, dict):
        raise RunError(f"{where}: field 'record': must be an object or null")
    unknown = sorted(set(record or {}) - set(PaperRecord.model_fields))
    if unknown:
        raise RunError(
            f"{where}: field 'record.{unknown[0]}': not a field of the "
            f"record (fields: {', '.join(PaperRecord.model_fields)})"
        )
    failure = row.get("failure")
    if record is None:
        try:
            failure = FailureClass(failure or FailureClass.malformed_json.value)
        except ValueError:
            raise RunError(
                f"{where}: field 'failure': {failure!r} is not a failure class "
                f"({', '.join(f.value for f in FailureClass)})"
            ) from None
    repairs: list[str] = []
    if record is not None:
        # Validated here, with the context the schema's validators note their repairs in (as a model's
        # reply is): "56.61%", "N/A" or "yes" are read as model runs read them, and the line says so.
        try:
            record = PaperRecord.model_validate(record, context={"repairs": repairs}).model_dump(mode="json")
        except ValidationError as exc:
            raise RunError(f"{where}: not a PaperRecord: {field_error(exc, 'record')}") from None
    return PredictionLine(
        paper_id=paper_id,
        record=record,
        failure=None if record is not None else failure,
        error=None if record is not None else "no record in the imported file",
        dollars=None,
        repairs=repairs,
    )


def import_predictions(
    path: Path,
    name: str,
    split: str,
    runs_dir: Path,
    gold_path: Path,
    corpus_path: Path,
    note: Optional[str] = None,
    *,
    backend: Optional[str] = None,
    strategy: str = IMPORTED_STRATEGY,
    run_id: Optional[str] = None,
    submission: Optional[dict[str, Any]] = None,
    data: Optional[bytes] = None,
) -> Path:
    """Write a run folder ``runs_dir/<name>__imported__<split>`` (``manifest.json`` and
    ``predictions.jsonl``) from an outside predictions file, ready for :func:`~paperfields.scoring.runs.score_run`.

    ``name`` becomes the run's backend (``provider/model``-like, e.g. ``annotator/second-blind``);
    ``split`` is ``test``, ``dev`` or ``all``. Papers of the split missing from the file are simply
    not asked: the run is partial. Re-importing the same file gives the same folder; another file
    under the same name is refused (remove the folder first). Raises RunError as
    :func:`read_outside_predictions`, when a paper is outside ``split`` (naming file, line, field and
    the split that fits the file: ``--split dev`` for a file of dev papers, else ``--split all``), or
    when the folder exists with other predictions.

    A submission (:mod:`paperfields.scoring.submissions`) gives its own ``backend`` (``provider/model``),
    ``strategy``, ``run_id`` and ``submission`` (its ``submission.toml``, kept in the manifest as
    ``import.submission``, which marks the run *submitted* on the board) and ``data``: the bytes of ``path`` it
    has read and checked, which are then all that is read (the file is not opened again, so a file changed since
    cannot land unchecked; the manifest's ``imported_sha256`` is theirs)."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+=@-]*(/[A-Za-z0-9_.+=@-]+)?", name):
        raise RunError(f"--name {name!r} must be a plain name such as 'my-system' or 'annotator/second-blind'")
    corpus = load_corpus(corpus_path)
    data = _file_bytes(path) if data is None else data  # read once: the lines and the digest come from these bytes
    numbered = _read_numbered(path, {p.id for p in corpus}, data)
    lines = [line for _, line in numbered]
    split_of = {g.id: g.split for g in load_gold(gold_path)}
    outside = [
        (number, line.paper_id) for number, line in numbered if split != "all" and split_of.get(line.paper_id) != split
    ]
    if outside:
        number, paper = outside[0]
        theirs = {split_of.get(line.paper_id) for line in lines}
        if paper not in split_of:
            why, advice = f"has no gold record in {gold_path}", "--split all"
        else:
            why = f"is a {split_of[paper]} paper"
            # --split dev (say) fits only when every paper of the file is a dev paper
            advice = (
                f"--split {split_of[paper]} (or --split all)"
                if theirs == {split_of[paper]}
                else "--split all (the file holds papers of several splits)"
            )
        raise RunError(
            f"{path}:{number}: field 'paper_id': {paper} is not in the '{split}' split of {gold_path} ({paper} {why}); "
            f"use {advice}"
        )
    order = {p.id: i for i, p in enumerate(corpus)}
    lines.sort(key=lambda line: order[line.paper_id])
    digest = hashlib.sha256(data).hexdigest()
    backend = backend or (name if "/" in name else f"outside/{name}")
    run_id = run_id or default_run_id(backend, strategy, split)
    config = RunConfig(backend=backend, strategy=strategy, prompt_version="none", prompt_sha256=digest, split=split)
    manifest = Manifest(
        run_id=run_id,
        config=config,
        started_at=now(),
        finished_at=now(),
        status="complete",
        papers_total=len(lines),
        dollars_total=None,
        git_commit=None,
    )
    provenance: dict[str, Any] = {"imported_from": path.name, "imported_sha256": digest}
    if note:
        provenance["note"] = note
    if submission is not None:
        provenance["submission"] = submission
    return write_imported_run(runs_dir / run_id, lines, manifest, provenance, f"{path} under the name {name!r}")


def write_imported_run(
    run_dir: Path, lines: list[PredictionLine], manifest: Manifest, provenance: dict[str, Any], what: str
) -> Path:
    """Write ``run_dir`` (``predictions.jsonl`` with ``lines`` in the order given, and ``manifest.json``)
    for predictions made outside ``paperfields run``; returns ``run_dir``.

    ``manifest`` gives the config and provenance (model, usage, times) and the papers asked
    (``paper_ids``; when empty, those of ``lines``); this sets ``papers_total`` from them and
    ``papers_done`` (lines that are not a transport error), ``papers_valid`` and ``failures_by_class``
    from ``lines``, and writes ``provenance`` under the manifest's ``import`` key (the manifest model
    ignores unknown keys on read). Writing the same lines again leaves the folder as it is; a folder
    that holds other predictions is refused with RunError (``what`` names the import in the message:
    remove the folder to import it)."""
    body = "".join(line.model_dump_json() + "\n" for line in lines).encode("utf-8")
    if (run_dir / "predictions.jsonl").exists():
        if (run_dir / "predictions.jsonl").read_bytes() == body:
            return run_dir
        raise RunError(f"{run_dir} holds other predictions; remove it to import {what}")
    run_dir.mkdir(parents=True, exist_ok=True)
    asked = manifest.paper_ids or [line.paper_id for line in lines]
    manifest = manifest.model_copy(
        update={
            "paper_ids": asked,
            "papers_total": len(asked),
            "papers_done": sum(1 for line in lines if line.failure != FailureClass.transport_error),
            "papers_valid": sum(1 for line in lines if line.record is not None),
            "failures_by_class": dict(sorted(Counter(line.failure.value for line in lines if line.failure).items())),
        }
    )
    text = json.loads(manifest.model_dump_json())
    text["import"] = provenance  # provenance of outside predictions (the manifest model ignores unknown keys on read)
    (run_dir / "predictions.jsonl").write_bytes(body)
    (run_dir / "manifest.json").write_text(json.dumps(text, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return run_dir
