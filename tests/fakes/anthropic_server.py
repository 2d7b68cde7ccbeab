"""A fake Anthropic Messages API: ``POST /v1/messages``, plain JSON or SSE streaming.

Tests queue replies (``reply``/``fail``) and read ``requests`` to see exactly what
the bot sent. With the queue empty it answers ``echo: <last user text>``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.http import FakeHTTPServer


@dataclass
class Text:
    text: str
    chunk: int = 20
    delay: float = 0.0  # seconds before the reply starts
    chunk_delay: float = 0.0  # seconds between streamed chunks
    usage: dict[str, int] = field(default_factory=dict)


@dataclass
class Error:
    status: int
    type: str = "api_error"
    message: str = "fake error"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


Script = Text | Error | Callable[[dict[str, Any]], "Text | Error"]


def last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


class FakeAnthropic(FakeHTTPServer):
    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.script: list[Script] = []
        self.default: Callable[[dict[str, Any]], Text | Error] = lambda body: Text(f"echo: {last_user_text(body)}")
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)

    # -- test API ------------------------------------------------------------
    def reply(self, *items: Script | str) -> None:
        with self._lock:
            self.script.extend(Text(i) if isinstance(i, str) else i for i in items)

    def fail(self, status: int = 500, message: str = "fake failure", type: str = "api_error") -> None:  # noqa: A002
        self.reply(Error(status, type, message))

    def wait_requests(self, n: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {n} model requests, got {len(self.requests)}")
                self._cond.wait(left)
            return list(self.requests)

    # -- HTTP --------------------------------------------------------------------
    def handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        body_raw = self.read_body(request)
        if method != "POST" or request.path.split("?")[0] != "/v1/messages":
            self.respond(request, 404, b'{"type":"error","error":{"type":"not_found_error","message":"no"}}')
            return
        body = json.loads(body_raw)
        with self._cond:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in request.headers.items()})
            item = self.script.pop(0) if self.script else self.default
            self._cond.notify_all()
        if callable(item):
            item = item(body)
        if item.delay:
            time.sleep(item.delay)
        if isinstance(item, Error):
            payload = {"type": "error", "error": {"type": item.type, "message": item.message}}
            self.respond(request, item.status, json.dumps(payload).encode(), headers=item.headers)
            return
        usage = {"input_tokens": len(body_raw) // 4, "output_tokens": max(1, len(item.text) // 4)}
        usage.update(item.usage)
        message = {
            "id": f"msg_fake_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": [{"type": "text", "text": item.text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            self.respond(request, 200, json.dumps(message).encode())
            return
        self._stream(request, message, item)

    def _stream(self, request: BaseHTTPRequestHandler, message: dict[str, Any], item: Text) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "text/event-stream")
        request.send_header("Cache-Control", "no-cache")
        request.send_header("Connection", "close")
        request.end_headers()
        request.close_connection = True

        def event(name: str, data: dict[str, Any]) -> None:
            request.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            request.wfile.flush()

        start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
        try:
            event("message_start", {"type": "message_start", "message": start})
            event(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            )
            text = item.text
            for i in range(0, len(text), item.chunk):
                if item.chunk_delay:
                    time.sleep(item.chunk_delay)
                event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": text[i : i + item.chunk]},
                    },
                )
            event("content_block_stop", {"type": "content_block_stop", "index": 0})
            event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": message["usage"]["output_tokens"]},
                },
            )
            event("message_stop", {"type": "message_stop"})
        except (BrokenPipeError, ConnectionResetError):
            pass
