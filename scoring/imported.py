"""Predictions made outside PaperFields (another system, a second annotator) turned into a run folder.

The minimal format is a JSONL file, one paper per line: ``{"paper_id": "...", "record": {...}}``
(``id`` is accepted for ``paper_id``, so a labeling in the gold format imports as it is; ``record``
null plus an optional ``failure`` class marks a paper the system failed). Nothing else is required.
The record must be a :class:`~paperfields.core.schema.PaperRecord`; unknown keys are refused,
not ignored, so a misspelled field never scores as an empty one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
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


def read_outside_predictions(path: Path, known_ids: set[str]) -> list[PredictionLine]:
    """See :func:`_read_numbered`: the lines without their line numbers."""
    return [line for _, line in _read_numbered(path, known_ids)]


def _read_numbered(path: Path, known_ids: set[str]) -> list[tuple[int, PredictionLine]]:
    """Read a predictions JSONL in the minimal format. Returns (1-based line number, :class:`PredictionLine`)
    per paper, in file order. Raises RunError naming ``path``, the line and the field for: a line that is not a
    JSON object, a missing id, an id not in ``known_ids`` (the corpus), a repeated id, an unknown
    record key, a record that does not validate, or an unknown failure class.

    A record is read as a model's reply is (:mod:`paperfields.core.schema`): what the schema
    tolerates (``"N/A"`` as null, ``"Code Software Engineering"`` as ``code_software_engineering``,
    ``"56.61%"`` as 56.61, ``"yes"`` as true, ...) is normalized, and each line's ``repairs`` names
    every such deviation with the names model runs use (``placeholders``, ``enum_spelling``,
    ``number_text``, ``bool_text``, ...), so the run's scores count them."""
    if path.is_dir():
        raise RunError(f"{path}: is a directory; give the predictions JSONL file")
    if not path.is_file():
        raise RunError(f"{path}: no such file")
    lines: list[tuple[int, PredictionLine]] = []
    seen: dict[str, int] = {}
    data = path.read_bytes()
    if data.startswith(BOM):
        raise RunError(bom_problem(path))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RunError(f"{path}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x}); save the file as UTF-8") from None
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(raw)
        except ValueError as exc:
            raise RunError(f"{where}: not JSON ({exc})") from None
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
    ``import.submission``, which marks the run *submitted* on the board)."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+=@-]*(/[A-Za-z0-9_.+=@-]+)?", name):
        raise RunError(f"--name {name!r} must be a plain name such as 'my-system' or 'annotator/second-blind'")
    corpus = load_corpus(corpus_path)
    numbered = _read_numbered(path, {p.id for p in corpus})
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
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
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
