"""Corpus: abstracts as records with stable ids.

A corpus input file is either text (an optional header line, then one abstract per
blank-line-separated paragraph, or one per line with ``one_per_line``) or JSONL with at least
``id`` and ``text``. The format is read from the file name (``*.jsonl``, ``*.ndjson``, ``*.json``:
JSONL; ``*.txt``, ``*.md``: text), else from the content (:func:`sniff_format`). ``gold/corpus.jsonl`` is built from the
seed files by ``paperfields corpus build``.

Only ``\\n``, ``\\r\\n`` and ``\\r`` end a line (:func:`split_lines`): U+2028, U+2029, NEL, form
feed and vertical tab are characters of the text, so they neither split an abstract nor shift
the line numbers that messages give.

A corpus of one's own may state when its abstracts were first public (``corpus build --date
YYYY-MM``): each line then carries ``public_date``, a key that older readers ignore, so the date
travels with the file and every corpus written before it loads unchanged. The contamination status
of a run compares the corpus's earliest date (:func:`corpus_public_date`) with the model's
training-data cutoff (``scoring/contamination.py``).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
import warnings
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from paperfields.core.errors import InputError, field_error
from paperfields.core.plural import plural
from paperfields.core.readonce import file_bytes, parsed


class CorpusError(InputError):
    """Bad corpus input. The message names the file and line."""


_MONTH = re.compile(r"(\d{4})-(\d{2})")


def month_index(date: str) -> int:
    """A ``YYYY-MM`` date as a month count (``year * 12 + month - 1``), so two dates subtract to months.
    Raises ValueError naming the value for any other form or a month outside 01-12."""
    match = _MONTH.fullmatch(date) if isinstance(date, str) else None
    if not match or not 1 <= int(match.group(2)) <= 12:
        raise ValueError(f"{date!r} is not a YYYY-MM date")
    return int(match.group(1)) * 12 + int(match.group(2)) - 1


class Paper(BaseModel):
    """One abstract.

    ``id`` is derived from the text (``p`` + 10 hex digits of its sha256), so it stays
    the same when files are reordered or rebuilt; ``source`` and ``position`` (1-based
    paragraph index within the source file) and ``line`` (1-based line of the paragraph's
    first line) say where it came from.

    ``text`` is stored in Unicode NFC: decomposed text (NFD, ``"Fre\u0301chet"``, as some PDF and
    macOS tools write it) is composed, so a model's ordinary composed spelling is found in it and every
    offset (grounding spans) is counted on the stored text. NFC is canonical equivalence, the same text
    to every reader; the compatibility forms of NFKC (``"x²"`` to ``"x2"``) would change it and are not applied.
    """

    id: str
    text: str
    source: str
    position: int = Field(ge=1)
    line: int = Field(ge=1)
    public_date: str | None = Field(
        default=None,
        description="YYYY-MM in which the abstract was first public, as the "
        "corpus states it (corpus build --date); None when not stated (the benchmark corpus's "
        "date is in paperfields/core/tables/cutoffs.toml)",
    )

    @field_validator("text")
    @classmethod
    def _composed(cls, value: str) -> str:
        return value if value.isascii() else unicodedata.normalize("NFC", value)

    @field_validator("public_date")
    @classmethod
    def _a_month(cls, value: str | None) -> str | None:
        if value is not None:
            month_index(value)
        return value


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


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """``text`` cut at ``\\n``, ``\\r\\n`` and ``\\r`` only; line ``i`` of a file is item ``i - 1``.

    Unlike ``str.splitlines`` this keeps U+2028/U+2029, NEL (U+0085), form feed, vertical tab and
    the file/group/record separators inside their line: a raw U+2028 is legal inside a JSON string
    and in an abstract.
    """
    return _LINE_BREAK.split(text)


def _read_utf8(path: Path) -> str:
    """The file's text with a leading UTF-8 byte order mark removed;
    CorpusError for a folder, a missing file or bad bytes."""
    if path.is_dir():
        raise CorpusError(f"{path}: is a directory, not a file; pass the files in it, e.g. {path / '*.txt'}")
    if not path.is_file():
        raise CorpusError(f"{path}: no such file")
    return decode_utf8(file_bytes(path), path, CorpusError).removeprefix("\ufeff")


_NON_SPACE = re.compile(r"\S")


def _first_nonblank(text: str) -> tuple[int, str] | None:
    """(1-based number, text) of the first line that is not white space only, without splitting a large file."""
    found = _NON_SPACE.search(text)
    if found is None:
        return None
    before = split_lines(text[: found.start()])
    after = _LINE_BREAK.search(text, found.start())
    return len(before), before[-1] + text[found.start() : after.start() if after else len(text)]


JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
TEXT_SUFFIXES = (".txt", ".md")
CORPUS_KEYS = (
    "id",
    "text",
    "source",
    "position",
    "line",
    "public_date",
)  # what a corpus record holds; other keys are ignored


def _content_is_jsonl(path: Path, text: str) -> bool:
    """True when the first non-blank line starts with ``{``; CorpusError for a whole-file JSON array."""
    first = _first_nonblank(text)
    if first is None:
        return False
    number, line = first
    if line.lstrip().startswith("{"):
        return True
    if line.lstrip().startswith("["):
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            return False  # a header such as "[draft] ICML papers"
        if isinstance(whole, list):
            raise CorpusError(
                f"{path}:{number}: a JSON array; a corpus file is JSONL, one JSON object with 'id' and 'text' per line"
            )
    return False


def sniff_format(path: Path, text: str) -> Literal["jsonl", "text"]:
    """``"jsonl"`` or ``"text"`` for a file with content ``text``: the name decides, else the content.

    The rule: a file named ``*.jsonl``, ``*.ndjson`` or ``*.json`` (any case) is JSONL, one named
    ``*.txt`` or ``*.md`` is text (an abstract may start with ``{``); any other file is JSONL when its
    first non-blank line starts with ``{`` (after a byte order mark and spaces), else text (:func:`read_as`
    says which rule decided). Raises CorpusError for a whole-file JSON array (one object per line is the
    format) unless the name says text.
    """
    return read_as(path, text)[0]


def read_as(path: Path, text: str) -> tuple[Literal["jsonl", "text"], str]:
    """(format, why) of :func:`sniff_format`: why names the rule, for messages ("the file is named
    *.jsonl", "its first non-blank line starts with '{'", ...)."""
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        _content_is_jsonl(path, text)  # a whole-file JSON array is refused as such
        return "jsonl", f"the file is named *{suffix}"
    if suffix in TEXT_SUFFIXES:
        return "text", f"the file is named *{suffix}"
    if _content_is_jsonl(path, text):
        return "jsonl", "its first non-blank line starts with '{'"
    return "text", "its first non-blank line does not start with '{'"


HEADER_MAX_CHARS = 120
HEADER_MAX_WORDS = 15
ABSTRACT_LINE_CHARS = 300  # an unwrapped abstract line: 300+ characters, 3+ sentences
ABSTRACT_LINE_SENTENCES = 3
LONG_ABSTRACT_CHARS = 3000  # the 76 ICML abstracts are 300-1,800 characters
_SENTENCE_END = re.compile(r"[.!?](?=[\s\"'”’)\]]|$)|[。！？]")
_CLOSERS = "\"'”’»)]"


def _ends_sentence(line: str) -> str | None:
    tail = line.rstrip().rstrip(_CLOSERS)
    return tail[-1] if tail and tail[-1] in ".!?。！？" else None


def sentences(text: str) -> int:
    """How many sentence ends (``. ! ?`` before a space or the end, or ``。！？``) ``text`` holds."""
    return len(_SENTENCE_END.findall(text))


def abstract_like(line: str) -> bool:
    """True for a line that is a whole unwrapped abstract: 300+ characters and 3+ sentence ends.

    Hard-wrapped text (lines under ~100 characters) and one-sentence-per-line text never qualify.
    """
    line = line.strip()
    return len(line) >= ABSTRACT_LINE_CHARS and sentences(line) >= ABSTRACT_LINE_SENTENCES


def header_looks_like_abstract(paragraph: list[str]) -> str | None:
    """Why the first paragraph of a text file is not a header line, else None (it is the header).

    ``paragraph`` is the file's first blank-line-separated paragraph, one item per line. Line 1 is
    the header when it reads as a title: at most ``HEADER_MAX_CHARS`` (120) characters, at most
    ``HEADER_MAX_WORDS`` (15) words, not ending a sentence (``. ! ?``, also before a closing quote or
    bracket), and followed by a blank line or by a whole unwrapped abstract line
    (:func:`abstract_like`). Anything else is the start of the first abstract: "ICML 2026 Papers"
    is a header; "We propose FooNet." and the first line of a hard-wrapped abstract are not.
    """
    line = paragraph[0].strip()
    if len(line) > HEADER_MAX_CHARS:
        return f"{len(line)} characters, more than {HEADER_MAX_CHARS}"
    words = len(line.split())
    if words > HEADER_MAX_WORDS:
        return f"{words} words, more than {HEADER_MAX_WORDS}"
    end = _ends_sentence(line)
    if end:
        return f"it ends with '{end}'"
    if len(paragraph) > 1 and not abstract_like(paragraph[1]):
        return "line 2 continues its paragraph"
    return None


def header_is_ambiguous(line: str) -> bool:
    """True when ``line``, a first paragraph of one line that :func:`header_looks_like_abstract` did not
    take for the header, may be one all the same: it has a title's size (at most ``HEADER_MAX_CHARS``
    characters and ``HEADER_MAX_WORDS`` words) and one sentence at most, so only its final ``.``, ``!``
    or ``?`` kept it ("Abstracts collected in May." or "We propose FooNet."). A longer line, or one of
    two or more sentences, is an abstract by the rule and by any reading: no warning."""
    line = line.strip()
    return len(line) <= HEADER_MAX_CHARS and len(line.split()) <= HEADER_MAX_WORDS and sentences(line) <= 1


@dataclass
class Source:
    """One input file as read: ``path`` as the caller gave it, ``format`` (``"jsonl"``/``"text"``), its
    ``papers``, ``lines`` (the 1-based line of this file each paper starts on, in the order of
    ``papers``; empty means each paper's own ``line``), for text the skipped header (``header``
    text at 1-based ``header_line``, both None when there is none), and for JSONL the ``ignored`` keys
    (not in :data:`CORPUS_KEYS`) with the first line each is on."""

    path: Path
    format: Literal["jsonl", "text"]
    papers: list[Paper]
    header: str | None = None
    header_line: int | None = None
    lines: list[int] = dataclass_field(default_factory=list)
    ignored: dict[str, int] = dataclass_field(default_factory=dict)

    def places(self) -> list[str]:
        """``path:line`` of each paper in this file, the path as given (``../x/mine.txt``, not the
        ``source`` name stored in the corpus, and not a JSONL line's own ``line`` key)."""
        return [f"{self.path}:{line}" for line in (self.lines or [paper.line for paper in self.papers])]


def _paragraphs(lines: list[str], one_per_line: bool) -> list[tuple[int, list[str]]]:
    """(1-based first line, lines) per blank-line-separated paragraph, or per non-blank line."""
    found: list[tuple[int, list[str]]] = []
    block: list[str] = []
    start = 0
    for number, line in enumerate(lines + [""], start=1):
        if line.strip():
            if one_per_line and block:
                found.append((start, block))
                block = []
            if not block:
                start = number
            block.append(line)
        elif block:
            found.append((start, block))
            block = []
    return found


def warn_run_together(path: Path, line: int, position: int, text: str, advice: str, lines: int | None = None) -> None:
    """Warn (UserWarning) that abstract number ``position`` of ``path``, starting on ``line``, may be several
    abstracts run together: ``path:line: abstract N is C characters, S sentences[ on L lines]: it may be
    several abstracts run together; <advice>``. ``lines`` (text input: the lines of its paragraph) is
    left out for a JSONL record. Both input formats warn through here, so they say it alike."""
    on = "" if lines is None else f" on {plural(lines, 'line')}"
    warnings.warn(
        f"{path}:{line}: abstract {position} is {len(text):,} characters, {plural(sentences(text), 'sentence')}{on}: "
        f"it may be several abstracts run together; {advice}",
        UserWarning,
        stacklevel=3,
    )


def warn_long_jsonl(source: Source) -> None:
    """:func:`warn_run_together` for each record of a JSONL ``source`` longer than ``LONG_ABSTRACT_CHARS``
    (3,000) characters, the threshold text input uses, naming the JSONL line and the record's number."""
    places = source.lines or [paper.line for paper in source.papers]
    for position, (paper, line) in enumerate(zip(source.papers, places), start=1):
        if len(paper.text) > LONG_ABSTRACT_CHARS:
            warn_run_together(source.path, line, position, paper.text, "give each abstract its own JSON line")


def parse_text(path: Path, text: str, header: bool | None = None, one_per_line: bool = False) -> Source:
    """Read text-format abstracts from ``text`` (the content of ``path``).

    Abstracts are blank-line-separated paragraphs, the lines of one joined with a single space
    (each line stripped of surrounding white space; the text is otherwise verbatim), or each
    non-blank line with ``one_per_line``. ``header``: True skips the first non-blank line as a
    header, False keeps everything, None decides by :func:`header_looks_like_abstract` and warns
    (naming ``file:line``) when the first paragraph, read as an abstract, is a single line that may be a
    header all the same (:func:`header_is_ambiguous`: a title's size, one sentence, kept only by its
    final ``.``, ``!`` or ``?``).

    A paragraph with three or more abstract-length lines (:func:`abstract_like`) raises CorpusError
    (it is almost surely one abstract per line: pass ``one_per_line``); an abstract with two such
    lines, or longer than ``LONG_ABSTRACT_CHARS`` (3,000) characters, is kept with a UserWarning
    naming ``file:line``. Raises CorpusError when no abstract remains.
    """
    paragraphs = _paragraphs(split_lines(text), one_per_line)
    header_text: str | None = None
    header_line: int | None = None
    if paragraphs:
        start, first = paragraphs[0]
        why = None if header else "--no-header" if header is False else header_looks_like_abstract(first)
        if why is None:
            header_text, header_line = first[0].strip(), start
            paragraphs[0] = (start + 1, first[1:])
            if not first[1:]:
                paragraphs.pop(0)
        elif header is None and len(first) == 1 and header_is_ambiguous(first[0]):
            warnings.warn(
                f"{path}:{start}: line {start} is read as the first abstract, not as a header line ({why}); "
                "pass --header if it is a header",
                UserWarning,
                stacklevel=2,
            )
    papers: list[Paper] = []
    for start, block in paragraphs:
        body = unicodedata.normalize(
            "NFC", " ".join(line.strip() for line in block)
        )  # the id is of the stored (NFC) text
        whole = sum(abstract_like(line) for line in block)
        if whole >= 3 and not one_per_line:
            raise CorpusError(
                f"{path}:{start}: one paragraph of {len(block)} lines, {whole} of them each a whole "
                f"abstract ({ABSTRACT_LINE_CHARS}+ characters, {ABSTRACT_LINE_SENTENCES}+ sentences): "
                "this looks like one abstract per line; pass --one-per-line to read each line as an "
                "abstract, or put a blank line between abstracts"
            )
        position = len(papers) + 1
        if whole >= 2 or len(body) > LONG_ABSTRACT_CHARS:
            advice = "put a blank line between abstracts" + (
                "" if len(block) == 1 else ", or pass --one-per-line if each line is one abstract"
            )
            warn_run_together(path, start, position, body, advice, len(block))
        papers.append(Paper(id=paper_id(body), text=body, source=path.name, position=position, line=start))
    if not papers:
        if header_text is not None:
            how = "--header" if header else "a single short line that does not end a sentence"
            raise CorpusError(
                f"{path}:{header_line}: no abstracts found (line {header_line} {header_text!r} is the header line: "
                f"{how}; pass --no-header if it is an abstract)"
            )
        raise CorpusError(f"{path}:1: no abstracts found (the file is empty)")
    return Source(path=path, format="text", papers=papers, header=header_text, header_line=header_line)


def parse_seed_text(path: Path, header: bool | None = None, one_per_line: bool = False) -> list[Paper]:
    """The papers of a text-format file (:func:`parse_text`); CorpusError for a folder, a missing
    file, non-UTF-8 bytes or a file with no abstracts, naming the file and line."""
    return parse_text(path, _read_utf8(path), header, one_per_line).papers


def parse_jsonl(path: Path, text: str | None = None) -> list[Paper]:
    """Parse JSONL with ``id`` and ``text`` per line (blank lines skipped; optional ``source``,
    ``position``, ``line`` kept). ``text`` is the file's content when already read.

    Raises CorpusError naming ``file:line`` (and the field) for bad JSON, a non-object line, a
    missing or empty ``id``/``text``, or a file with no records.
    """
    return _read_jsonl(path, text).papers


def _read_jsonl(path: Path, text: str | None = None, why: str | None = None) -> Source:
    """:func:`parse_jsonl` as a :class:`Source` whose ``lines`` are the JSONL lines of its papers and whose
    ``ignored`` are the keys outside :data:`CORPUS_KEYS`. ``why`` (the file was read as JSONL because ...)
    goes into the error for a line that is not JSON."""
    if text is None:
        text = _read_utf8(path)
    papers: list[Paper] = []
    numbers: list[int] = []
    ignored: dict[str, int] = {}
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            read = f"; read as JSONL because {why}" if why else ""
            raise CorpusError(
                f"{path}:{number}: not valid JSON ({exc.msg}){read}; a JSONL corpus holds one JSON object per line"
            ) from None
        if not isinstance(obj, dict):
            raise CorpusError(f"{path}:{number}: expected a JSON object with 'id' and 'text'")
        for key in ("id", "text"):
            if not isinstance(obj.get(key), str) or not obj[key].strip():
                raise CorpusError(f"{path}:{number}: field '{key}' must be a non-empty string")
        for key in obj:
            if key not in CORPUS_KEYS:
                ignored.setdefault(key, number)
        try:
            papers.append(
                Paper(
                    id=obj["id"],
                    text=obj["text"],
                    source=obj.get("source", path.name),
                    position=obj.get("position", len(papers) + 1),
                    line=obj.get("line", number),
                    public_date=obj.get("public_date"),
                )
            )
            numbers.append(number)
        except ValidationError as exc:
            raise CorpusError(f"{path}:{number}: {field_error(exc)}") from None
    if not papers:
        raise CorpusError(f"{path}:1: no abstracts found")
    return Source(path=path, format="jsonl", papers=papers, lines=numbers, ignored=ignored)


def read_source(path: Path, header: bool | None = None, one_per_line: bool = False) -> Source:
    """Read one input file as JSONL or text, chosen by :func:`sniff_format`; ``header`` and
    ``one_per_line`` apply to text only (see :func:`parse_text`). Raises CorpusError naming file and line
    (and, for a line that is not JSON, why the file was read as JSONL). UserWarnings naming the file: an
    abstract longer than ``LONG_ABSTRACT_CHARS`` (3,000) characters, in either format
    (:func:`warn_run_together`); one listing the JSONL keys ignored (not in :data:`CORPUS_KEYS`); a file
    read as text by its name whose first line is a JSON object."""
    text = _read_utf8(path)
    form, why = read_as(path, text)
    if form == "jsonl":
        source = _read_jsonl(path, text, why)
        if source.ignored:
            keys = ", ".join(f"'{key}' (first on line {line})" for key, line in source.ignored.items())
            warnings.warn(
                f"{path}: {plural(len(source.ignored), 'key')} ignored, not part of a corpus record: "
                f"{keys}; a record keeps {', '.join(CORPUS_KEYS)}",
                UserWarning,
                stacklevel=2,
            )
        warn_long_jsonl(source)
        return source
    first = _first_nonblank(text)
    if first is not None and first[1].lstrip().startswith("{"):
        try:
            looks_jsonl = isinstance(json.loads(first[1]), dict)
        except json.JSONDecodeError:
            looks_jsonl = False  # "{Braces} open this abstract": prose
        if looks_jsonl:
            warnings.warn(
                f"{path}:{first[0]}: read as text because {why}, though line {first[0]} is a JSON object; "
                "name the file *.jsonl if it is a JSONL corpus",
                UserWarning,
                stacklevel=2,
            )
    return parse_text(path, text, header, one_per_line)


def check_unique(papers: list[Paper], places: list[str] | None = None) -> None:
    """Raise CorpusError on a duplicate id or a duplicate abstract text (white space aside), naming both places.

    ``places`` names where each paper is (``file:line``, in the order of ``papers``); without it a
    paper's stored ``source:line`` is used, which for papers read from files drops the folder the
    file was given with: read files through :func:`unique_papers`.
    """
    places = places if places is not None else [f"{paper.source}:{paper.line}" for paper in papers]
    seen_ids: dict[str, str] = {}
    seen_text: dict[str, str] = {}
    for paper, place in zip(papers, places, strict=True):
        key = " ".join(paper.text.split())
        if key in seen_text:
            raise CorpusError(f"{place}: duplicate abstract (same text as {seen_text[key]})")
        if paper.id in seen_ids:
            raise CorpusError(f"{place}: duplicate id '{paper.id}' (also {seen_ids[paper.id]})")
        seen_text[key] = place
        seen_ids[paper.id] = place


def check_given_once(paths: list[Path]) -> None:
    """Raise CorpusError naming a file that ``paths`` name twice (``x.txt x.txt``, or ``x.txt ../d/x.txt``,
    a symlink), before its abstracts would be reported as duplicates of themselves."""
    for later, path in enumerate(paths):
        earlier = next((p for p in paths[:later] if _same_file(p, path)), None)
        if earlier is not None:
            also = "" if earlier == path else f" (also as {earlier})"
            raise CorpusError(f"{path}: given twice{also}; give each file once")


def unique_papers(sources: list[Source]) -> list[Paper]:
    """The papers of ``sources`` in order; CorpusError on a file given twice (by any path), or on a
    duplicate id or abstract text naming both places as ``file:line`` with each file's path as given
    (:meth:`Source.places`)."""
    check_given_once([source.path for source in sources])
    papers = [paper for source in sources for paper in source.papers]
    check_unique(papers, [place for source in sources for place in source.places()])
    return papers


def read_corpus_files(paths: list[Path], header: bool | None = None, one_per_line: bool = False) -> list[Paper]:
    """Read text and/or JSONL files (:func:`read_source`) into one corpus, in the given order.

    Raises CorpusError on a duplicate id or a duplicate abstract text, naming both places (each
    file's path as given, and the line).
    """
    return unique_papers([read_source(path, header, one_per_line) for path in paths])


def write_corpus(papers: list[Paper], out: Path) -> None:
    """Write papers as JSONL (one object per line, keys in schema order, UTF-8, no ASCII escaping).
    ``public_date`` is written only when stated, so an undated corpus has the bytes it always had."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(corpus_bytes(papers))


def corpus_bytes(papers: list[Paper]) -> bytes:
    """The bytes :func:`write_corpus` writes for ``papers``."""
    return b"".join(
        (json.dumps(paper.model_dump(exclude_none=True), ensure_ascii=False) + "\n").encode("utf-8") for paper in papers
    )


def _same_file(a: Path, b: Path) -> bool:
    """True when ``a`` and ``b`` name one file: by inode when both exist (symlinks and hard links
    included), else by their resolved paths (``gold/../gold/x`` and ``./gold/x`` alike)."""
    try:
        return a.exists() and b.exists() and a.samefile(b) or a.resolve() == b.resolve()
    except OSError:
        return False


def check_output(
    target: Path, inputs: list[Path], benchmark: Path, content: bytes, *, out_given: bool, force: bool
) -> None:
    """Refuse to write a built corpus (``content``, :func:`corpus_bytes`) to ``target`` where it would
    destroy something. Raises CorpusError when:

    - ``--out`` (``out_given``) names the benchmark corpus ``benchmark`` (``gold/corpus.jsonl``, whose
      ids the gold labels refer to), by any path (``gold/../gold/corpus.jsonl``, a symlink, from another
      folder): only a build without ``--out`` rebuilds it, whatever ``force`` says;
    - ``target`` is one of ``inputs`` (writing would replace the abstracts being read), whatever ``force`` says;
    - ``target`` exists with other bytes than ``content`` and ``force`` is False (the same bytes are
      rewritten as they are: rebuilding is never refused).
    """
    if out_given and _same_file(target, benchmark):
        raise CorpusError(
            f"--out {target} is the benchmark corpus {benchmark} (gold labels refer to its ids); write a corpus of "
            "your own to another path, or rebuild the benchmark corpus from the seed files without --out"
        )
    given = next((path for path in inputs if _same_file(target, path)), None)
    if given is not None:
        where = f"--out {target}" if out_given else f"{target} (where the corpus goes without --out)"
        raise CorpusError(
            f"{where} is the input file {given}: writing it would replace the abstracts being read; "
            "give another --out path"
        )
    if target.is_file() and not force and target.read_bytes() != content:
        abstracts = plural(content.count(b"\n"), "abstract")
        if out_given:
            raise CorpusError(
                f"--out {target} exists and holds something else; pass "
                "--force to replace it, or give another --out path"
            )
        raise CorpusError(
            f"{target} is the benchmark corpus (gold labels refer to its ids) and what these files hold "
            f"({abstracts}) differs from it; "
            "write a corpus of your own with --out PATH, or pass --force to replace it"
        )


def with_public_date(papers: list[Paper], date: str) -> list[Paper]:
    """Copies of ``papers`` stating ``date`` (``YYYY-MM``) as their first public month. Raises
    ValueError naming the value when it is not a ``YYYY-MM`` date."""
    month_index(date)
    return [paper.model_copy(update={"public_date": date}) for paper in papers]


def corpus_public_date(papers: list[Paper]) -> str | None:
    """The corpus's earliest public date: the earliest ``public_date`` of ``papers`` (``YYYY-MM``), or
    None when a paper states none (an undated abstract may be older than every dated one) or there
    are no papers."""
    dates = [paper.public_date for paper in papers]
    if not dates or None in dates:
        return None
    return min(dates, key=month_index)


def load_corpus(path: Path) -> list[Paper]:
    """Load a corpus JSONL written by :func:`write_corpus` (or any JSONL with id and text).

    A file whose content is not JSONL (e.g. the abstracts as text) raises CorpusError naming its
    first line and the ``paperfields corpus build`` command that makes a corpus of it. Inside
    :func:`~paperfields.core.readonce.read_once` the file is read and parsed once.
    """
    if path.is_dir() or not path.is_file():
        _read_utf8(path)  # raises CorpusError naming the folder or the missing file
    return list(parsed(path, "corpus", lambda data: _parse_corpus(path, data)))


def _parse_corpus(path: Path, data: bytes) -> list[Paper]:
    text = decode_utf8(data, path, CorpusError).removeprefix("\ufeff")
    first = _first_nonblank(text)
    if first is not None and not _content_is_jsonl(path, text):
        number = first[0]
        raise CorpusError(
            f"{path}:{number}: not a corpus JSONL (line {number} is not a JSON object with 'id' and 'text'); "
            f"to make one from a text file of abstracts: paperfields corpus build {path} --out corpus.jsonl"
        )
    return parse_jsonl(path, text)
