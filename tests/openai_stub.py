"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for offline tests.

Each request pops the next scripted reply; when the script is empty it answers ``default`` (a valid
record unless given). Every request (path, headers, JSON body) is recorded.

Run standalone (benchmarks, so the server does not share the client's process and GIL):
``python -m tests.openai_stub --delay 0.1`` prints its URL and serves until killed; ``GET /stats``
answers ``{"requests": <count>}``.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

VALID = json.dumps({"method_name": "StubNet", "research_area": "reasoning", "contribution_types": ["method"],
                    "datasets": ["GSM8K"], "results": [{"metric": "accuracy", "value": 41.5, "unit": "percent", "kind": "absolute"}]})


def reply(content: Optional[str] = VALID, finish_reason: str = "stop", status: int = 200, headers: Optional[dict] = None,
          delay: float = 0.0, prompt_tokens: int = 100, completion_tokens: int = 20, body: Optional[str] = None,
          content_type: str = "application/json") -> dict[str, Any]:
    """One scripted answer. ``body`` replaces the whole HTTP body verbatim (for a server, or a proxy in
    front of it, that answers something other than a chat completion or the usual error JSON)."""
    return {"content": content, "finish_reason": finish_reason, "status": status, "headers": headers or {}, "delay": delay,
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
            "body": body, "content_type": content_type}


class StubServer:
    """Context manager: ``with StubServer() as stub: stub.url, stub.script, stub.requests``."""

    def __init__(self, default: Optional[dict[str, Any]] = None, keep_alive: bool = False, port: int = 0) -> None:
        self.script: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.default = default or reply()
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                payload = json.dumps({"requests": len(stub.requests)}).encode()
                self.send_response(200 if self.path.endswith("/stats") else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with stub._lock:
                    stub.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    spec = stub.script.pop(0) if stub.script else stub.default
                if spec["delay"]:
                    time.sleep(spec["delay"])
                if spec.get("body") is not None:
                    payload = spec["body"].encode()
                elif spec["status"] != 200:
                    payload = json.dumps({"error": {"message": f"scripted {spec['status']}", "type": "stub"}}).encode()
                else:
                    payload = json.dumps({
                        "id": f"chatcmpl-{len(stub.requests)}", "object": "chat.completion", "created": 0, "model": body.get("model", "stub"),
                        "choices": [{"index": 0, "finish_reason": spec["finish_reason"],
                                     "message": {"role": "assistant", "content": spec["content"]}}],
                        "usage": spec["usage"],
                    }).encode()
                try:
                    self.send_response(spec["status"])
                    self.send_header("Content-Type", spec.get("content_type", "application/json"))
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in spec["headers"].items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # bursts of concurrent clients (benchmarks) must not be refused

        self._server = Server(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "StubServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Serve the OpenAI stub until killed; every reply is a valid record.")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each reply")
    args = parser.parse_args()
    with StubServer(default=reply(delay=args.delay), keep_alive=True) as server:
        print(server.url, flush=True)
        threading.Event().wait()
