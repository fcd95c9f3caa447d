"""Corpus: abstracts as records with stable ids.

A corpus file is either the seed text format (a header line, then one abstract per
blank-line-separated paragraph) or JSONL with at least ``id`` and ``text``.
``gold/corpus.jsonl`` is built from the seed files by ``paperfields corpus build``.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError


class CorpusError(ValueError):
    """Bad corpus input. The message names the file and line."""


class Paper(BaseModel):
    """One abstract.

    ``id`` is derived from the text (``p`` + 10 hex digits of its sha256), so it stays
    the same when files are reordered or rebuilt; ``source`` and ``position`` (1-based
    paragraph index within the source file) and ``line`` (1-based line of the paragraph's
    first line) say where it came from.
    """

    id: str
    text: str
    source: str
    position: int = Field(ge=1)
    line: int = Field(ge=1)


def paper_id(text: str) -> str:
    """Stable id of an abstract: ``"p" + sha256(text)[:10]``."""
    return "p" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def decode_utf8(raw: bytes, path: Path, error: type[Exception]) -> str:
    """``raw`` as UTF-8 text; raises ``error`` naming the file and line of the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise error(f"{path}:{line}: bytes are not valid UTF-8 (offset {exc.start})") from None


def _read_utf8(path: Path) -> str:
    if not path.is_file():
        raise CorpusError(f"{path}: no such file")
    return decode_utf8(path.read_bytes(), path, CorpusError)


HEADER_MAX_CHARS = 200
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def header_looks_like_abstract(line: str) -> str | None:
    """Why line 1 of a seed file looks like the start of an abstract rather than a header, else None.

    The rule: longer than ``HEADER_MAX_CHARS`` (200) characters, or two or more sentences with
    the last ending the line ("We propose X. It beats Y."). A header is a short title such as
    "ICML 2026 Papers".
    """
    line = line.strip()
    if len(line) > HEADER_MAX_CHARS:
        return f"{len(line)} characters, more than a {HEADER_MAX_CHARS}-character header"
    ends = _SENTENCE_END.findall(line)
    if len(ends) >= 2 and _SENTENCE_END.search(line[-1:]):
        return f"{len(ends)} sentences"
    return None


def parse_seed_text(path: Path) -> list[Paper]:
    """Parse a seed text file: line 1 is a header, then blank-line-separated abstracts.

    Lines inside one paragraph are joined with a single space; text is otherwise verbatim.
    Line 1 is skipped; when it looks like an abstract (:func:`header_looks_like_abstract`) a
    warning names ``file:1``, since a file without a header loses the start of its first abstract.
    Raises CorpusError (naming the file and line) for a missing file, non-UTF-8 bytes or
    a file with no abstracts.
    """
    text = _read_utf8(path).lstrip("\ufeff")
    lines = text.splitlines()
    why = header_looks_like_abstract(lines[0]) if lines else None
    if why:
        warnings.warn(f"{path}:1: line 1 looks like an abstract ({why}) but is skipped as the file's header line; "
                      "the format is a header line, then one abstract per blank-line-separated paragraph: "
                      "add a header line (e.g. the venue) if this file has none", UserWarning, stacklevel=2)
    papers: list[Paper] = []
    block: list[str] = []
    start = 0
    for number, line in enumerate(lines[1:] + [""], start=2):
        if line.strip():
            if not block:
                start = number
            block.append(line.strip())
        elif block:
            body = " ".join(block)
            papers.append(
                Paper(id=paper_id(body), text=body, source=path.name, position=len(papers) + 1, line=start)
            )
            block = []
    if not papers:
        raise CorpusError(f"{path}:1: no abstracts found (line 1 is a header; abstracts follow, separated by blank lines)")
    return papers


def parse_jsonl(path: Path) -> list[Paper]:
    """Parse a user corpus as JSONL with ``id`` and ``text`` per line (blank lines skipped)."""
    papers: list[Paper] = []
    for number, line in enumerate(_read_utf8(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise CorpusError(f"{path}:{number}: expected a JSON object with 'id' and 'text'")
        for key in ("id", "text"):
            if not isinstance(obj.get(key), str) or not obj[key].strip():
                raise CorpusError(f"{path}:{number}: field '{key}' must be a non-empty string")
        try:
            papers.append(
                Paper(
                    id=obj["id"],
                    text=obj["text"],
                    source=obj.get("source", path.name),
                    position=obj.get("position", len(papers) + 1),
                    line=obj.get("line", number),
                )
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise CorpusError(f"{path}:{number}: field '{field}': {first['msg']}") from None
    if not papers:
        raise CorpusError(f"{path}:1: no abstracts found")
    return papers


def read_corpus_files(paths: list[Path]) -> list[Paper]:
    """Read seed text files and/or JSONL files (by suffix ``.jsonl``) into one corpus.

    Raises CorpusError on a duplicate id or a duplicate abstract text, naming both places.
    """
    papers: list[Paper] = []
    for path in paths:
        papers.extend(parse_jsonl(path) if path.suffix == ".jsonl" else parse_seed_text(path))
    seen_ids: dict[str, Paper] = {}
    seen_text: dict[str, Paper] = {}
    for paper in papers:
        key = " ".join(paper.text.split())
        if key in seen_text:
            first = seen_text[key]
            raise CorpusError(
                f"{paper.source}:{paper.line}: duplicate abstract (same text as {first.source}:{first.line})"
            )
        if paper.id in seen_ids:
            first = seen_ids[paper.id]
            raise CorpusError(f"{paper.source}:{paper.line}: duplicate id '{paper.id}' (also {first.source}:{first.line})")
        seen_text[key] = paper
        seen_ids[paper.id] = paper
    return papers


def write_corpus(papers: list[Paper], out: Path) -> None:
    """Write papers as JSONL (one object per line, keys in schema order, UTF-8, no ASCII escaping)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for paper in papers:
            fh.write(json.dumps(paper.model_dump(), ensure_ascii=False) + "\n")


def load_corpus(path: Path) -> list[Paper]:
    """Load a corpus JSONL written by :func:`write_corpus` (or any JSONL with id and text)."""
    return parse_jsonl(path)
