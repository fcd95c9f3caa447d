"""On-disk response cache (sqlite), so a repeated request never calls the model again.

The key holds everything that changes the output: provider/model, base URL, instructor mode,
grammar flag, every generation parameter, the messages, the response schema and the sample
index; and nothing that does not (timeouts, concurrency, API keys, run ids). Only the model's
answers are cached: never a transport error (the model never answered), nor a request the server
or llama.cpp refused before the model saw it (``request_rejected``, ``context_overflow``): those say
nothing about the model, and another server or context size may take the same request.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel

from paperfields.core.runlog import FailureClass, Generation
from paperfields.extract.backends.base import GenerationRequest

# Failures that are not the model's answer, so never cached.
NOT_ANSWERS = frozenset({FailureClass.transport_error, FailureClass.request_rejected, FailureClass.context_overflow})


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
    """A sqlite table ``key -> Generation JSON``; safe to share between threads of one process."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        # WAL with synchronous=NORMAL: a commit no longer waits for a disk flush (a crash loses at most
        # the last answers, which a rerun asks again), so writes do not stall the event loop.
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, generation TEXT NOT NULL)")
        self._db.commit()

    def get(self, key: str) -> Optional[Generation]:
        with self._lock:
            row = self._db.execute("SELECT generation FROM responses WHERE key = ?", (key,)).fetchone()
        return Generation.model_validate_json(row[0]) if row else None

    def put(self, key: str, generation: Generation) -> None:
        """Store ``generation`` under ``key``, unless it is not the model's answer (:data:`NOT_ANSWERS`)."""
        if generation.failure in NOT_ANSWERS:
            return
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?)", (key, generation.model_dump_json()))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()
