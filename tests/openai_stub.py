"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for offline tests.

Each request pops the next scripted reply; when the script is empty it answers ``default`` (a valid
record unless given). Every request (path, headers, JSON body) is recorded.

Run standalone (benchmarks, so the server does not share the client's process and GIL):
``python -m tests.openai_stub --delay 0.1 [--capacity 4 --retry-after 0.1]`` prints its URL and serves
until killed; ``GET /stats`` answers ``{"requests": <count>, "peak": <most at once>, "rate_limited": <429s>}``.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

VALID = json.dumps(
    {
        "method_name": "StubNet",
        "research_area": "reasoning",
        "contribution_types": ["method"],
        "datasets": ["GSM8K"],
        "results": [{"metric": "accuracy", "value": 41.5, "unit": "percent", "kind": "absolute"}],
    }
)


def reply(
    content: Optional[str] = VALID,
    finish_reason: str = "stop",
    status: int = 200,
    headers: Optional[dict] = None,
    delay: float = 0.0,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    body: Optional[str] = None,
    content_type: str = "application/json",
    tool_call: Optional[bool] = None,
    message: Optional[dict] = None,
    usage: Any = ...,
    trickle: float = 0.0,
    reset: bool = False,
) -> dict[str, Any]:
    """One scripted answer. ``tool_call``: the content is sent as the arguments of a call to the
    request's forced tool (None: when the request forces one, as servers that honor ``tool_choice``
    do; False: as plain content, as servers that ignore tools do). ``body`` replaces the whole HTTP
    body verbatim (for a server, or a proxy in front of it, that answers something other than a chat
    completion or the usual error JSON). ``message``: more keys of the reply's message
    (``{"reasoning_content": ...}`` as vLLM sends, ``{"refusal": ...}`` as OpenAI does). ``content`` may be
    any JSON value (a list of parts, an object: sent as is, as the arguments too). ``usage``: the
    reply's ``usage`` verbatim (None sends ``null``, ``"absent"`` leaves the key out; unset, the
    counts above). ``trickle``: seconds between the 8-byte pieces the body is sent in (a server that
    answers slowly but never stalls a read). ``reset``: the connection is reset (TCP RST) instead of
    any answer."""
    return {
        "content": content,
        "finish_reason": finish_reason,
        "status": status,
        "headers": headers or {},
        "delay": delay,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if usage is ...
        else usage,
        "trickle": trickle,
        "reset": reset,
        "body": body,
        "content_type": content_type,
        "tool_call": tool_call,
        "message": message or {},
    }


def _message(spec: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    forced = request.get("tool_choice")
    name = forced.get("function", {}).get("name") if isinstance(forced, dict) else None
    if spec.get("tool_call") is False or (name is None and not spec.get("tool_call")):
        return {"role": "assistant", "content": spec["content"], **spec.get("message", {})}
    call = {"id": "call_1", "type": "function", "function": {"name": name or "tool", "arguments": spec["content"]}}
    return {"role": "assistant", "content": None, "tool_calls": [call], **spec.get("message", {})}


def with_reasoning(spec: dict[str, Any], reasoning_tokens: int) -> dict[str, Any]:
    """``spec`` whose usage reports ``reasoning_tokens`` of its completion tokens as a reasoning
    model's hidden thinking (OpenAI's ``completion_tokens_details.reasoning_tokens``)."""
    usage = {**spec["usage"], "completion_tokens_details": {"reasoning_tokens": reasoning_tokens}}
    return {**spec, "usage": usage}


def openai_error(
    message: str, param: Optional[str] = None, code: Optional[str] = None, status: int = 400
) -> dict[str, Any]:
    """A scripted error answer in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""
    return reply(
        status=status,
        body=json.dumps({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}),
    )


# OpenAI's reasoning families, written apart from the backend's own rule so the test checks it.
_REASONING_MODELS = re.compile(r"^(o1|o3|o4-mini|gpt-5(\.\d+)?)($|-(?!chat))")
_NAME_MAPS = ("properties", "$defs", "definitions")
_SCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")


def strict_schema_error(node: Any, path: tuple = ()) -> Optional[str]:
    """What OpenAI's strict structured outputs would say about a schema, or None when it passes:
    every object lists every property in ``required`` and has ``additionalProperties: false``, no
    ``default`` keyword anywhere, no ``$ref`` with sibling keywords."""
    if not isinstance(node, dict):
        return None
    where = f"In context={path}, "
    if "default" in node:
        return where + "'default' is not permitted."
    if "$ref" in node and len(node) > 1:
        return where + "'$ref' cannot have keywords {" + ", ".join(sorted(k for k in node if k != "$ref")) + "}."
    if node.get("type") == "object" or "properties" in node:
        if node.get("additionalProperties") is not False:
            return where + "'additionalProperties' is required to be supplied and to be false."
        missing = [k for k in node.get("properties", {}) if k not in node.get("required", [])]
        if missing:
            return (
                where + "'required' is required to be supplied and to be an array including "
                f"every key in properties. Missing '{missing[0]}'."
            )
    for key, value in node.items():
        if key in _NAME_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                if error := strict_schema_error(sub, path + (key, name)):
                    return error
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            for i, sub in enumerate(value):
                if error := strict_schema_error(sub, path + (key, i)):
                    return error
        elif key == "items" and (error := strict_schema_error(value, path + (key,))):
            return error
    return None


def _refusal(stub: StubServer, body: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The 400 a strict OpenAI-like server answers to ``body``, or None when it accepts it."""
    model = str(body.get("model", "")).rsplit("/", 1)[-1]
    if _REASONING_MODELS.match(model):
        if "max_tokens" in body:
            return openai_error(
                "Unsupported parameter: 'max_tokens' is not supported with "
                "this model. Use 'max_completion_tokens' instead.",
                "max_tokens",
                "unsupported_parameter",
            )
        if "temperature" in body and body["temperature"] != 1:
            return openai_error(
                f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. "
                "Only the default (1) value is supported.",
                "temperature",
                "unsupported_value",
            )
        if body.get("reasoning_effort", "medium") not in ("minimal", "low", "medium", "high"):
            return openai_error(f"Invalid value: '{body['reasoning_effort']}'.", "reasoning_effort", "invalid_value")
    elif "reasoning_effort" in body:
        return openai_error(
            "Unrecognized request argument supplied: reasoning_effort", "reasoning_effort", "unsupported_parameter"
        )
    if stub.strict_schemas:
        rf = body.get("response_format") or {}
        schemas = [
            (
                "response_format",
                (rf.get("json_schema") or {}).get("name", ""),
                (rf.get("json_schema") or {}).get("schema"),
            )
        ]
        schemas.append(("response_format", "", rf.get("schema")))
        schemas += [
            ("function", t["function"].get("name", ""), t["function"].get("parameters"))
            for t in body.get("tools") or []
        ]
        for kind, name, schema in schemas:
            if schema is not None and (error := strict_schema_error(schema)):
                return openai_error(
                    f"Invalid schema for {kind} '{name}': {error}",
                    "response_format" if kind == "response_format" else "tools",
                    "invalid_json_schema" if kind == "response_format" else "invalid_function_parameters",
                )
    if stub.context_window is not None:
        prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages", [])) // 4
        if prompt > stub.context_window:
            if stub.context_style == "llama.cpp":
                error = {
                    "code": 400,
                    "message": f"request ({prompt} tokens) exceeds the available context size "
                    f"({stub.context_window} tokens), try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": prompt,
                    "n_ctx": stub.context_window,
                }
                return reply(status=400, body=json.dumps({"error": error}))
            return openai_error(
                f"This model's maximum context length is {stub.context_window} tokens. However, your messages resulted "
                f"in {prompt} tokens. Please reduce the length of the messages.",
                "messages",
                "context_length_exceeded",
            )
    return None


class StubServer:
    """Context manager: ``with StubServer() as stub: stub.url, stub.script, stub.requests``.

    Like OpenAI it answers HTTP 400 to a reasoning model (o1, o3, o4-mini, gpt-5) sent ``max_tokens``
    or a temperature other than 1, and to another model sent ``reasoning_effort``. Set
    ``strict_schemas`` and it refuses any schema sent (response_format, tools) that breaks OpenAI's
    strict rules (:func:`strict_schema_error`); set ``context_window`` (tokens, 4 characters each)
    and a longer prompt gets OpenAI's ``context_length_exceeded`` error, or llama.cpp server's
    ``exceed_context_size_error`` with ``context_style = "llama.cpp"``. A refused request is
    recorded but takes nothing from the script.

    For concurrency: ``busy`` counts the requests being answered now and ``peak`` the most at once;
    :meth:`hold` keeps every admitted request waiting (counted in ``held``) until :meth:`release`, and
    :meth:`wait_for` polls a state of the server (never a time). ``capacity`` admits that many at once
    and answers 429 to the rest (``rate_limited`` counts them). ``props`` (a dict) is served at
    ``GET /props`` as llama.cpp's server does (``{"total_slots": 4}``), ``models`` at ``GET /v1/models``
    (vLLM names itself there: ``owned_by: "vllm"``); unset, both are 404. ``gets`` lists the GET paths.
    """

    def __init__(self, default: Optional[dict[str, Any]] = None, keep_alive: bool = False, port: int = 0) -> None:
        self.script: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.default = default or reply()
        self.strict_schemas = False
        self.context_window: Optional[int] = None
        self.context_style = "openai"
        self.capacity: Optional[int] = (
            None  # requests served at once; more get 429 with Retry-After (a rate-limited server)
        )
        self.retry_after = "1"
        self.busy = 0
        self.peak = 0
        self.held = 0
        self.rate_limited = 0
        self.props: Optional[dict[str, Any]] = None
        self.models: Optional[dict[str, Any]] = None
        self.gets: list[str] = []  # the paths of the GET requests, in order
        self._lock = threading.Condition()
        self._open = threading.Event()
        self._open.set()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"
            # Headers and body go out in two writes: with Nagle's algorithm the body would wait for the
            # client's delayed ACK of the headers (40 ms on Linux), on every keep-alive request after the first.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                stub.gets.append(path)
                served = {"/props": stub.props, "/v1/models": stub.models}.get(path)
                found = served is not None or path.endswith("/stats")
                stats = {"requests": len(stub.requests), "peak": stub.peak, "rate_limited": stub.rate_limited}
                payload = json.dumps(served if served is not None else stats).encode()
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with stub._lock:
                    stub.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    full = stub.capacity is not None and stub.busy >= stub.capacity
                    if full:
                        stub.rate_limited += 1
                        spec = reply(status=429, headers={"Retry-After": stub.retry_after})
                    else:
                        spec = _refusal(stub, body) or (stub.script.pop(0) if stub.script else stub.default)
                        stub.busy += 1
                        stub.peak = max(stub.peak, stub.busy)
                        stub.held += 1
                    stub._lock.notify_all()
                counted = not full
                try:
                    if not full:
                        stub._open.wait()
                        with stub._lock:
                            stub.held -= 1
                    if spec["delay"]:
                        time.sleep(spec["delay"])
                    # no longer busy once its answer is decided: decremented after the reply was written, a
                    # keep-alive client's next request could arrive first and count as a second one at once
                    with stub._lock:
                        stub.busy -= counted
                        counted = False
                        stub._lock.notify_all()
                    self._answer(spec, body)
                finally:
                    if counted:
                        with stub._lock:
                            stub.busy -= 1
                            stub._lock.notify_all()

            def _answer(self, spec: dict[str, Any], body: dict[str, Any]) -> None:
                if spec.get("reset"):
                    # SO_LINGER with a zero timeout: close() sends RST, as a crashed proxy or server does.
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                if spec.get("body") is not None:
                    payload = spec["body"].encode()
                elif spec["status"] != 200:
                    payload = json.dumps({"error": {"message": f"scripted {spec['status']}", "type": "stub"}}).encode()
                else:
                    completion = {
                        "id": f"chatcmpl-{len(stub.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "stub"),
                        "choices": [
                            {"index": 0, "finish_reason": spec["finish_reason"], "message": _message(spec, body)}
                        ],
                        "usage": spec["usage"],
                    }
                    if spec["usage"] == "absent":
                        del completion["usage"]
                    payload = json.dumps(completion).encode()
                try:
                    self.send_response(spec["status"])
                    self.send_header("Content-Type", spec.get("content_type", "application/json"))
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in spec["headers"].items():
                        self.send_header(key, value)
                    self.end_headers()
                    if not spec.get("trickle"):
                        self.wfile.write(payload)
                    for start in range(0, len(payload), 8) if spec.get("trickle") else ():
                        self.wfile.write(payload[start : start + 8])
                        self.wfile.flush()
                        time.sleep(spec["trickle"])
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # bursts of concurrent clients (benchmarks) must not be refused

        self._server = Server(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )  # shutdown waits one poll

    def hold(self) -> None:
        """Keep every request admitted from now on waiting, unanswered, until :meth:`release`."""
        self._open.clear()

    def release(self) -> None:
        """Let the held requests (and every later one) be answered."""
        self._open.set()

    def wait_for(self, state: Any, what: str = "", timeout: float = 120.0) -> None:
        """Return once ``state()`` (read under the server's lock) is true; it is read again at each
        request's arrival and end. ``timeout`` only bounds a test that would hang: AssertionError
        naming ``what`` and the server's counts when the state never comes."""
        with self._lock:
            if not self._lock.wait_for(state, timeout):
                raise AssertionError(
                    f"the stub never reached {what or 'the state'}: busy {self.busy}, held {self.held}, "
                    f"peak {self.peak}, {len(self.requests)} requests, {self.rate_limited} answered 429"
                )

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()  # a held request would keep its thread (and the client) waiting
        self._server.shutdown()
        self._server.server_close()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Serve the OpenAI stub until killed; every reply is a valid record.")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--capacity", type=int, default=None, help="requests answered at once; the rest get 429")
    parser.add_argument("--retry-after", default="1", help="the Retry-After of those 429s (seconds)")
    args = parser.parse_args()
    with StubServer(default=reply(delay=args.delay), keep_alive=True) as server:
        server.capacity, server.retry_after = args.capacity, args.retry_after
        print(server.url, flush=True)
        threading.Event().wait()
