"""A fake Anthropic Messages API: ``POST /v1/messages``, plain JSON or SSE streaming.

Tests queue replies (``reply``/``fail``) and read ``requests`` to see exactly what
the bot sent. With the queue empty it answers ``echo: <last user text>``. Like the real
API it refuses (400 ``invalid_request_error``) an image whose base64 text is over 5 MB,
whose media type is not what its bytes are, or that cannot be decoded.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from PIL import Image

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


# -- image blocks, checked like the real API ---------------------------------------------------

MAX_IMAGE_BASE64 = 5 * 1024 * 1024  # the limit applies to the base64 text, not the decoded bytes
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\xff\xd8\xff", "image/jpeg"),
)


def _sniff(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((media for magic, media in _MAGIC if data.startswith(magic)), None)


def _image_error(where: str, source: dict[str, Any]) -> str | None:
    """Why the API refuses one base64 image source, in its words; None if it is accepted."""
    data = str(source.get("data", ""))
    if len(data) > MAX_IMAGE_BASE64:
        return f"{where}.base64: image exceeds 5 MB maximum: {len(data)} bytes > {MAX_IMAGE_BASE64} bytes"
    media = source.get("media_type")
    if media not in ("image/jpeg", "image/png", "image/gif", "image/webp"):
        return f"{where}.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"{where}.base64.data: invalid base64 data"
    actual = _sniff(raw)
    if actual is not None and actual != media:
        return (
            f"{where}.base64.data: the image was specified using the {media} media type, "
            f"but the image appears to be a {actual} image"
        )
    try:
        with Image.open(io.BytesIO(raw)) as img:
            img.load()
    except Exception:
        return "Could not process image"
    return None


def invalid_images(body: dict[str, Any]) -> Error | None:
    """A 400 ``invalid_request_error`` for the first image block the real API would refuse, else None."""
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for c, block in enumerate(content):
            source = block.get("source") if isinstance(block, dict) and block.get("type") == "image" else None
            if isinstance(source, dict) and source.get("type") == "base64":
                error = _image_error(f"messages.{m}.content.{c}.image.source", source)
                if error is not None:
                    return Error(400, "invalid_request_error", error)
    return None


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
        refused = invalid_images(body)
        with self._cond:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in request.headers.items()})
            item = refused or (self.script.pop(0) if self.script else self.default)  # a refusal keeps the script
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
