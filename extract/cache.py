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
says where) and the run goes on with an empty cache. Raw reply text longer than
:data:`~paperfields.core.runlog.RAW_TEXT_LIMIT` characters is stored cut (:func:`~paperfields.core.runlog.cap_raw_text`).
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


class ResponseCache:
    """A sqlite table ``key -> Generation JSON``; safe to share between threads of one process.

    A damaged file is moved aside and replaced by an empty cache (see the module docstring); ``moved_to``
    is where the last damaged file went (None when none was). Raises OSError only when the folder cannot
    be written at all."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.moved_to: Optional[Path] = None
        self._lock = threading.Lock()
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError as exc:
            self._db = self._replace(exc)

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

    def _replace(self, exc: BaseException) -> sqlite3.Connection:
        """Move the damaged file (and its WAL and shared-memory files) aside, warn saying where, and
        open an empty cache in its place."""
        stamp = now().replace(":", "").replace("+0000", "Z")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            source = Path(str(self.path) + suffix)
            if source.exists():
                source.replace(Path(str(target) + suffix))
        self.moved_to = target
        warnings.warn(
            f"response cache {self.path} is damaged ({exc}); moved it to {target} and went on with an empty cache "
            "(delete that file once you no longer need it)",
            RuntimeWarning,
            stacklevel=3,
        )
        return self._connect()

    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        """Run one statement under the lock (committing writes); a damaged file is replaced by an empty cache."""
        with self._lock:
            try:
                rows = self._db.execute(sql, args).fetchall()
                if not sql.startswith("SELECT"):
                    self._db.commit()
                return rows
            except sqlite3.DatabaseError as exc:
                if (
                    isinstance(exc, sqlite3.OperationalError)
                    and "malformed" not in str(exc)
                    and "not a database" not in str(exc)
                ):
                    raise
                self._db.close()
                self._db = self._replace(exc)
                return self._db.execute(sql, args).fetchall() if sql.startswith("SELECT") else []

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
        return self._query("SELECT COUNT(*) FROM responses")[0][0]

    def close(self) -> None:
        self._db.close()
