"""A local HTTP server that speaks the Gemini and OpenAI chat REST shapes with scripted replies.

The real clients (google-genai SDK, httpx) talk to it over 127.0.0.1, so every retry, timeout
and parsing path runs as it would against the provider.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_GEMINI_PATH = re.compile(r"^/(?P<version>[^/]+)/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$")
# A streamed reply goes out a word (with the space after it) a chunk, as a model writes tokens.
_PIECE = re.compile(r"\S+\s*|\s+")
_OPENAI_PATH = "/v1/chat/completions"


@dataclass
class Reply:
    """What the server does for one request."""

    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: str | None = None
    # A streamed reply: the pause before each chunk, and the chunks sent before the connection
    # is dropped (None: all of them).
    piece_delay_s: float = 0.0
    cut_after: int | None = None

    @classmethod
    def json(cls, value: Any) -> Reply:
        return cls(text=json.dumps(value, ensure_ascii=False))

    @classmethod
    def error(cls, status: int, retry_after: float | None = None) -> Reply:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        return cls(status=status, headers=headers)

    @classmethod
    def slow(cls, delay_s: float, then: Reply | None = None) -> Reply:
        reply = then or cls(text="{}")
        return cls(text=reply.text, status=reply.status, delay_s=delay_s, headers=reply.headers)


@dataclass
class Call:
    api: str  # "gemini" or "openai"
    path: str
    model: str
    prompt: str
    body: dict[str, Any]
    headers: dict[str, str]


Responder = Callable[[Call], Reply]


class FakeProvider:
    """Scripted replies are served first, in order; then `responder` answers (default: 500)."""

    def __init__(self, responder: Responder | None = None) -> None:
        self.responder = responder
        self.calls: list[Call] = []
        self.max_in_flight = 0
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------------------------
    def script(self, *replies: Reply) -> FakeProvider:
        with self._lock:
            self._queue.extend(replies)
        return self

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.calls.clear()
            self.max_in_flight = 0

    def calls_matching(self, needle: str) -> list[Call]:
        return [c for c in self.calls if needle in c.prompt]

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    def start(self) -> FakeProvider:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                provider._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling --------------------------------------------------------------------
    def _next_reply(self, call: Call) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(call)
        return Reply(status=500, raw_body='{"error": {"code": 500, "message": "no scripted reply"}}')

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        path = handler.path.split("?")[0]
        gemini = _GEMINI_PATH.match(path)
        streamed = bool(gemini and gemini.group("method") == "streamGenerateContent")
        if gemini:
            prompt = "".join(
                part.get("text", "") for content in body.get("contents", []) for part in content.get("parts", [])
            )
            call = Call("gemini", path, gemini.group("model"), prompt, body, dict(handler.headers))
        elif path == _OPENAI_PATH:
            prompt = "".join(str(m.get("content", "")) for m in body.get("messages", []))
            call = Call("openai", path, str(body.get("model", "")), prompt, body, dict(handler.headers))
            streamed = bool(body.get("stream"))
        else:
            _send(handler, 404, '{"error": {"code": 404, "message": "unknown route"}}', {})
            return
        with self._lock:
            self.calls.append(call)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            reply = self._next_reply(call)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            payload = reply.raw_body if reply.raw_body is not None else _envelope(call, reply)
            try:
                if streamed and reply.status < 400 and reply.raw_body is None:
                    _send_stream(handler, call, reply)
                else:
                    _send(handler, reply.status, payload, reply.headers)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout) before the reply
        finally:
            with self._lock:
                self._in_flight -= 1


def _envelope(call: Call, reply: Reply) -> str:
    if reply.status >= 400:
        status_name = {429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}.get(reply.status, "ERROR")
        return json.dumps({"error": {"code": reply.status, "message": "scripted failure", "status": status_name}})
    input_tokens = max(1, len(call.prompt) // 4)
    output_tokens = max(1, len(reply.text) // 4)
    if call.api == "gemini":
        return json.dumps({
            "candidates": [{"content": {"role": "model", "parts": [{"text": reply.text}]}, "finishReason": "STOP"}],
            "usageMetadata": {
                "promptTokenCount": input_tokens,
                "candidatesTokenCount": output_tokens,
                "totalTokenCount": input_tokens + output_tokens,
            },
            "modelVersion": call.model,
        })
    return json.dumps({
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "model": call.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
    })


def _send(handler: BaseHTTPRequestHandler, status: int, payload: str, headers: dict[str, str]) -> None:
    data = payload.encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


def _chunk(call: Call, piece: str, last: bool) -> str:
    if call.api == "gemini":
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": piece}]}}
        chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": call.model}
        if last:  # Gemini reports the finish and the usage on the last chunk
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = {"promptTokenCount": max(1, len(call.prompt) // 4),
                                      "candidatesTokenCount": max(1, len(piece) // 4)}
        return json.dumps(chunk)
    # No usage on the chunks, as many OpenAI-compatible servers do by default.
    return json.dumps({"id": "chatcmpl-local", "object": "chat.completion.chunk", "model": call.model,
                       "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": "stop" if last else None}]})


def _send_stream(handler: BaseHTTPRequestHandler, call: Call, reply: Reply) -> None:
    """The reply as server-sent events, a word a chunk, each flushed before the next; closed
    without an end after `reply.cut_after` chunks."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    pieces = _PIECE.findall(reply.text)
    for number, piece in enumerate(pieces):
        if reply.cut_after is not None and number >= reply.cut_after:
            return
        time.sleep(reply.piece_delay_s)
        handler.wfile.write(f"data: {_chunk(call, piece, number == len(pieces) - 1)}\n\n".encode())
        handler.wfile.flush()
    if call.api == "openai":
        handler.wfile.write(b"data: [DONE]\n\n")
    handler.wfile.flush()
