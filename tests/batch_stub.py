"""A local OpenAI-compatible files + batches server on 127.0.0.1, for offline tests of ``--batch``.

It implements exactly what the openai SDK calls for a batch job: ``POST /v1/files`` (multipart
upload, parsed with the stdlib ``email`` parser), ``POST /v1/batches``, ``GET /v1/batches/{id}`` and
``GET /v1/files/{id}/content``. A batch reports ``in_progress`` for ``polls_in_progress`` polls,
then "runs": each input line is answered from ``script`` (reply specs of :mod:`tests.openai_stub`,
popped in input order; ``default`` when empty), and the output and error files are written. A spec
with a status other than 200 goes to the error file. ``drop`` lists custom ids answered in neither
file, ``extra_output`` raw lines appended to the output file, ``final_status`` the status it ends in
(``expired`` or ``failed`` write no files), ``held`` batch ids that
stay in progress. Every request (method, path, headers) is recorded.
"""

from __future__ import annotations

import json
import re
import threading
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

from tests.openai_stub import _refusal, reply


def refusal(text: str = "I can't help with that request.") -> dict[str, Any]:
    """A structured-outputs refusal: no content, the reason in ``message.refusal``."""
    return {**reply(content=None), "refusal": text}


class BatchStub:
    """Context manager: ``with BatchStub() as stub: stub.url, stub.script, stub.requests, stub.files, stub.batches``."""

    def __init__(self, polls_in_progress: int = 1, default: Optional[dict[str, Any]] = None) -> None:
        self.script: list[dict[str, Any]] = []
        self.default = default or reply()
        # Each request line is checked as OpenAI checks one request (tests.openai_stub._refusal): a
        # reasoning model's max_tokens or temperature, a schema that breaks the strict rules.
        self.strict_schemas = True
        self.context_window: Optional[int] = None
        self.context_style = "openai"
        self.polls_in_progress = polls_in_progress
        self.held: set[str] = set()  # batch ids that stay in_progress however often they are polled
        self.final_status = "completed"
        self.drop: set[str] = set()
        self.extra_output: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _json(self, status: int, data: dict[str, Any]) -> None:
                self._send(status, json.dumps(data).encode())

            def _record(self) -> bytes:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with stub._lock:
                    stub.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers)})
                return body

            def do_POST(self) -> None:
                body = self._record()
                with stub._lock:
                    if self.path == "/v1/files":
                        self._json(200, stub._upload(self.headers["Content-Type"], body))
                    elif self.path == "/v1/batches":
                        self._json(200, stub._create(json.loads(body)))
                    else:
                        self._json(404, {"error": {"message": f"no route {self.path}", "type": "stub"}})

            def do_GET(self) -> None:
                self._record()
                with stub._lock:
                    if (m := re.fullmatch(r"/v1/batches/([\w-]+)", self.path)) and m[1] in stub.batches:
                        self._json(200, stub._poll(m[1]))
                    elif (m := re.fullmatch(r"/v1/files/([\w-]+)/content", self.path)) and m[1] in stub.files:
                        self._send(200, stub.files[m[1]]["content"], "application/octet-stream")
                    else:
                        self._json(404, {"error": {"message": f"no route {self.path}", "type": "stub"}})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def count(self, method: str, prefix: str) -> int:
        """How many recorded requests used ``method`` on a path starting with ``prefix``."""
        return sum(1 for r in self.requests if r["method"] == method and r["path"].startswith(prefix))

    def _file(self, content: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = {"content": content, "filename": filename, "purpose": purpose}
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": 1700000000,
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }

    def _upload(self, content_type: str, body: bytes) -> dict[str, Any]:
        message = BytesParser(policy=policy.HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
        fields = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        upload = fields["file"]
        return self._file(
            upload.get_payload(decode=True), upload.get_filename(), fields["purpose"].get_content().strip()
        )

    def _create(self, body: dict[str, Any]) -> dict[str, Any]:
        batch_id = f"batch_{len(self.batches) + 1}"
        self.batches[batch_id] = {
            "id": batch_id,
            "object": "batch",
            "endpoint": body["endpoint"],
            "completion_window": body["completion_window"],
            "input_file_id": body["input_file_id"],
            "status": "validating",
            "created_at": 1700000000,
            "polls": 0,
        }
        return {k: v for k, v in self.batches[batch_id].items() if k != "polls"}

    def _poll(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        batch["polls"] += 1
        lines = self.files[batch["input_file_id"]]["content"].decode().splitlines()
        if batch["status"] not in ("completed", "failed", "expired", "cancelled"):
            if batch["polls"] <= self.polls_in_progress or batch_id in self.held:
                batch["status"] = "in_progress"
            else:
                self._run(batch, [json.loads(line) for line in lines])
        done = len(lines) if batch["status"] == "completed" else 0
        batch["request_counts"] = {"total": len(lines), "completed": done, "failed": 0}
        return {k: v for k, v in batch.items() if k != "polls"}

    def _run(self, batch: dict[str, Any], requests: list[dict[str, Any]]) -> None:
        batch["status"] = self.final_status
        if self.final_status != "completed":
            batch["errors"] = {
                "object": "list",
                "data": [{"code": self.final_status, "message": f"scripted {self.final_status}"}],
            }
            return
        output, errors = [], []
        for n, request in enumerate(requests, start=1):
            cid = request["custom_id"]
            spec = _refusal(self, request["body"]) or (self.script.pop(0) if self.script else self.default)
            if cid in self.drop:
                continue
            if spec["status"] != 200:
                body = (
                    json.loads(spec["body"])
                    if spec.get("body")
                    else {"error": {"message": f"scripted {spec['status']}", "type": "stub"}}
                )
                errors.append(
                    {
                        "id": f"batch_req_{n}",
                        "custom_id": cid,
                        "response": {"status_code": spec["status"], "request_id": f"req_{n}", "body": body},
                        "error": None,
                    }
                )
                continue
            message = {"role": "assistant", "content": spec["content"], "refusal": spec.get("refusal")}
            body = {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion",
                "created": 0,
                "model": request["body"]["model"],
                "choices": [{"index": 0, "finish_reason": spec["finish_reason"], "message": message}],
                "usage": spec["usage"],
            }
            output.append(
                {
                    "id": f"batch_req_{n}",
                    "custom_id": cid,
                    "response": {"status_code": 200, "request_id": f"req_{n}", "body": body},
                    "error": None,
                }
            )
        output += self.extra_output
        as_jsonl = lambda rows: "".join(json.dumps(r) + "\n" for r in rows).encode()  # noqa: E731
        batch["output_file_id"] = self._file(as_jsonl(output), "batch_output.jsonl", "batch_output")["id"]
        batch["error_file_id"] = (
            self._file(as_jsonl(errors), "batch_errors.jsonl", "batch_output")["id"] if errors else None
        )

    def __enter__(self) -> BatchStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
