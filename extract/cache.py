"""On-disk response cache (sqlite), so a repeated request never calls the model again.

The key holds everything that changes the output: provider/model, base URL, instructor mode,
grammar flag, every generation parameter, the messages, the response schema and the sample
index; and nothing that does not (timeouts, concurrency, API keys, run ids). Only the model's
answers are cached: never a transport error (the model never answered), nor a request the server
or llama.cpp refused before the model saw it (``request_rejected``, ``context_overflow``): those say
nothing about the model, and another server or context size may take the same request. A reply the
parser could not use (malformed_json, schema_invalid, truncated, refusal, empty_reply) is cached only
from a backend whose answer to the same request is surely the same (``deterministic``: the in-process
llama.cpp model, seeded); from a server it is not, as a misconfigured server (a reasoning parser that
moves the answer out of ``content``) or a new parser version may make the same request answerable.

A damaged cache file (truncated, a garbage header, damaged pages) is detected when opened (sqlite's
``quick_check``) or when a query fails: it is moved aside to ``<name>.corrupt-<UTC time>`` (a warning
says where) and the run goes on with an empty cache. A cache that cannot be written (a full disk, a
read-only file or mount) is no damage and is never moved: answers are still read from it where they
can be, none is stored, one warning names the file, and the run goes on. Raw reply text longer than
:data:`~paperfields.core.runlog.RAW_TEXT_LIMIT` characters is
stored cut (:func:`~paperfields.core.runlog.cap_raw_text`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel

from paperfields.core.runlog import FailureClass, Generation, cap_raw_text, now
from paperfields.extract.backends.base import GenerationRequest

# Failures that are not the model's answer, so never cached.
NOT_ANSWERS = frozenset({FailureClass.transport_error, FailureClass.request_rejected, FailureClass.context_overflow})
# The parser's verdicts on a reply it could not use: cached only from a deterministic backend.
PARSER_VERDICTS = frozenset(
    {
        FailureClass.malformed_json,
        FailureClass.schema_invalid,
        FailureClass.truncated,
        FailureClass.refusal,
        FailureClass.empty_reply,
        FailureClass.content_filter,
    }
)


def default_cache_path() -> Path:
    """``$PAPERFIELDS_RESPONSE_CACHE``, else ``responses.sqlite`` in the PaperFields cache folder."""
    from paperfields.extract.backends.weights import cache_dir

    return Path(os.environ.get("PAPERFIELDS_RESPONSE_CACHE") or cache_dir() / "responses.sqlite")


@lru_cache(maxsize=64)
def _schema_json(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema(), sort_keys=True)  # building a JSON schema is slow: once per model


def cache_key(identity: dict[str, Any], request: GenerationRequest) -> str:
    """sha256 over the backend identity and the request (messages, params, schema, sample index)."""
    payload = {
        "identity": identity,
        "messages": request.messages,
        "params": request.params.model_dump(),
        "schema": _schema_json(request.response_model),
        "sample_index": request.sample_index,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


# sqlite's result codes (the low byte of an extended code) that say the file cannot be written or read here,
# not that it is damaged: read-only file or mount (READONLY, PERM, CANTOPEN), full disk or quota (FULL), an
# I/O error, a lock another process holds too long (BUSY, LOCKED).
_UNUSABLE_CODES = frozenset({3, 5, 6, 8, 10, 13, 14})
_DAMAGED = ("malformed", "not a database", "quick_check")


def _damaged(exc: BaseException) -> bool:
    """True when ``exc`` says the file's content is damaged (as opposed to the file or disk being unusable)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (11, 26):  # SQLITE_CORRUPT, SQLITE_NOTADB
        return True
    return any(word in str(exc) for word in _DAMAGED) and (code is None or code & 0xFF not in _UNUSABLE_CODES)


class ResponseCache:
    """A sqlite table ``key -> Generation JSON``; safe to share between threads of one process.

    A damaged file is moved aside and replaced by an empty cache (see the module docstring); ``moved_to``
    is where the last damaged file went (None when none was). A cache that cannot be written (a read-only
    file or mount, a full disk, a folder that cannot be made) never stops a run and is never taken for a
    damaged one: it is read while it can be (``writable`` False) or left alone (``usable`` False), with one
    warning naming the file, and the run goes on without storing answers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.moved_to: Optional[Path] = None
        self.writable = True
        self.usable = True
        self._warned = False
        self._lock = threading.Lock()
        self._db: Optional[sqlite3.Connection] = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._connect()
        except OSError as exc:  # the folder cannot be made (a read-only mount)
            self._give_up(exc)
        except sqlite3.Error as exc:
            if _damaged(exc):
                self._db = self._replace(exc)
            else:
                self._db = self._read_only(exc)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), check_same_thread=False)
        try:
            # WAL with synchronous=NORMAL: a commit no longer waits for a disk flush (a crash loses at most
            # the last answers, which a rerun asks again), so writes do not stall the event loop.
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, generation TEXT NOT NULL)")
            db.commit()
            verdict = db.execute("PRAGMA quick_check").fetchone()
            if verdict is None or verdict[0] != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {verdict[0] if verdict else 'no answer'}")
        except BaseException:
            db.close()
            raise
        return db

    def _warn(self, what: str, exc: BaseException) -> None:
        """The one warning of a cache that cannot be used fully (a second fault says nothing more)."""
        if self._warned:
            return
        self._warned = True
        warnings.warn(f"response cache {self.path}: {what} ({exc}); the run goes on", RuntimeWarning, stacklevel=4)

    def _give_up(self, exc: BaseException) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
        self._db, self.usable, self.writable = None, False, False
        self._warn("cannot be used, so answers are neither read from it nor stored", exc)

    def _read_only(self, exc: BaseException) -> Optional[sqlite3.Connection]:
        """A connection that only reads a healthy cache that cannot be written (its file or mount is
        read-only), else None (nothing to read, or not even that works); one warning either way."""
        self.writable = False
        if self.path.is_file():
            # immutable: a read-only mount cannot hold the WAL's shared-memory file that a plain read needs
            for query in ("mode=ro", "immutable=1"):
                db = None
                try:
                    db = sqlite3.connect(f"{self.path.resolve().as_uri()}?{query}", uri=True, check_same_thread=False)
                    if db.execute("PRAGMA quick_check").fetchone()[0] == "ok":
                        self._warn("cannot be written, so answers are read from it but not stored", exc)
                        return db
                    db.close()
                except sqlite3.Error:
                    if db is not None:
                        db.close()
        self._give_up(exc)
        return None

    def _replace(self, exc: BaseException) -> Optional[sqlite3.Connection]:
        """Move the damaged file (and its WAL and shared-memory files) aside, warn saying where, and
        open an empty cache in its place (when the move fails, go on without a cache)."""
        stamp = now().replace(":", "").replace("+0000", "Z")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        try:
            for suffix in ("", "-wal", "-shm"):
                source = Path(str(self.path) + suffix)
                if source.exists():
                    source.replace(Path(str(target) + suffix))
        except OSError as move_error:
            self._give_up(move_error)
            return None
        self.moved_to = target
        warnings.warn(
            f"response cache {self.path} is damaged ({exc}); moved it to {target} and went on with an empty cache "
            "(delete that file once you no longer need it)",
            RuntimeWarning,
            stacklevel=3,
        )
        try:
            return self._connect()
        except (OSError, sqlite3.Error) as again:
            self._give_up(again)
            return None

    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        """Run one statement under the lock (committing writes). A damaged file is replaced by an empty
        cache; a cache that cannot be written stops storing (reads go on), one that cannot be read is left
        alone: the statement then answers nothing, and the run goes on."""
        writes = not sql.startswith("SELECT")
        with self._lock:
            if self._db is None or (writes and not self.writable):
                return []
            try:
                rows = self._db.execute(sql, args).fetchall()
                if writes:
                    self._db.commit()
                return rows
            except sqlite3.Error as exc:
                if not _damaged(exc):
                    if writes:
                        try:
                            self._db.rollback()
                        except sqlite3.Error:
                            pass
                        self.writable = False
                        self._warn("cannot be written (a full disk, a read-only file?), so answers are not stored", exc)
                    else:
                        self._give_up(exc)
                    return []
                self._db.close()
                self._db = self._replace(exc)
                if self._db is None:
                    return []
                return self._db.execute(sql, args).fetchall() if not writes else []

    def get(self, key: str) -> Optional[Generation]:
        rows = self._query("SELECT generation FROM responses WHERE key = ?", (key,))
        return Generation.model_validate_json(rows[0][0]) if rows else None

    def put(self, key: str, generation: Generation, deterministic: bool = False) -> None:
        """Store ``generation`` under ``key``, unless it is not the model's answer (:data:`NOT_ANSWERS`)
        or it is a reply the parser could not use (:data:`PARSER_VERDICTS`) from a backend that is not
        ``deterministic``. Raw text is stored cut to the run log's limit."""
        if generation.failure in NOT_ANSWERS or (generation.failure in PARSER_VERDICTS and not deterministic):
            return
        self._query("INSERT OR REPLACE INTO responses VALUES (?, ?)", (key, cap_raw_text(generation).model_dump_json()))

    def __len__(self) -> int:
        rows = self._query("SELECT COUNT(*) FROM responses")
        return rows[0][0] if rows else 0

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
