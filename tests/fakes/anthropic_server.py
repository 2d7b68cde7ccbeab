"""A fake Anthropic Messages API: ``POST /v1/messages``, plain JSON or SSE streaming.

Tests queue replies (``reply``/``fail``, ``ToolCalls`` for tool use) and read ``requests``
to see exactly what the bot sent. With the queue empty it answers ``echo: <last user text>``.

Strict like the real API: every request is validated first (tests/fakes/messages_rules.py:
tool_use/tool_result pairing, empty text blocks, more than 4 cache breakpoints, …) and a bad
one gets HTTP 400 ``invalid_request_error`` with the real wording; ``rejected`` lists those
messages. Usage applies the prompt-caching rules (tests/fakes/prompt_cache.py): cache reads
and writes are computed from the request's breakpoints, never made up. Image blocks are
decoded too (``check_images``): a media type that is not what the bytes are, or bytes that
are no image, get the API's 400 as well (the 5 MB base64 limit is in messages_rules). PDF
``document`` blocks are opened too (``check_documents``, with pypdf): bytes that are no PDF,
an encrypted PDF, or more than 100 pages get the API's 400; a body over 32 MB gets its 413.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from PIL import Image

from tests.fakes.http import FakeHTTPServer
from tests.fakes.messages_rules import MAX_REQUEST_BYTES, InvalidRequest, validate
from tests.fakes.prompt_cache import PromptCache, estimate_tokens
from tests.fakes.server_tools import ServerTools, WebAnswer


@dataclass
class Text:
    text: str
    chunk: int = 20
    delay: float = 0.0  # seconds before the reply starts
    chunk_delay: float = 0.0  # seconds between streamed chunks
    usage: dict[str, int] = field(default_factory=dict)
    gate: threading.Event | None = None  # streaming holds before chunk ``gate_after`` until the test sets it
    gate_after: int = 0


@dataclass
class Error:
    status: int
    type: str = "api_error"
    message: str = "fake error"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class ToolCalls:
    """A reply that asks for tools: optional text, then one tool_use block per (name, input).

    Streamed as the real API does: ``content_block_start`` with an empty input, then the
    input JSON in ``input_json_delta`` pieces; ``stop_reason`` is ``tool_use``.
    """

    calls: list[tuple[str, dict[str, Any]]]
    text: str = ""
    chunk: int = 20
    delay: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)


Script = Text | ToolCalls | Error | WebAnswer | Callable[[dict[str, Any]], "Text | ToolCalls | Error | WebAnswer"]


def last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of the request's last message."""
    content = body["messages"][-1]["content"]
    return (
        [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if isinstance(content, list)
        else []
    )


# -- image blocks, decoded like the real API does ----------------------------------------------

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


def _image_error(where: str, source: Mapping[str, Any]) -> str | None:
    """Why the API refuses one base64 image source, in its words; None if it is accepted."""
    media = source.get("media_type")
    if media not in ("image/jpeg", "image/png", "image/gif", "image/webp"):
        return f"{where}.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
    try:
        raw = base64.b64decode(str(source.get("data", "")), validate=True)
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


def check_images(body: Mapping[str, Any]) -> None:
    """Raise InvalidRequest for the first image block the real API could not read (after ``validate``)."""
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for c, block in enumerate(content):
            source = block.get("source") if isinstance(block, Mapping) and block.get("type") == "image" else None
            if isinstance(source, Mapping) and source.get("type") == "base64":
                error = _image_error(f"messages.{m}.content.{c}.image.source", source)
                if error is not None:
                    raise InvalidRequest(error)


MAX_PDF_PAGES = 100


def _pdf_error(where: str, data: str) -> str | None:
    """Why the API refuses one base64 PDF, in its words; None if it is accepted."""
    import pypdf

    prefix = f"{where}.pdf.source.base64.data"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"{prefix}: invalid base64 data"
    try:
        reader = pypdf.PdfReader(io.BytesIO(raw))
        if reader.is_encrypted:
            return f"{prefix}: The PDF specified is password protected."
        pages = len(reader.pages)
    except Exception:
        return f"{prefix}: The PDF specified was not valid."
    if not raw.lstrip().startswith(b"%PDF-") or pages < 1:
        return f"{prefix}: The PDF specified was not valid."
    if pages > MAX_PDF_PAGES:
        return f"{prefix}: A maximum of {MAX_PDF_PAGES} PDF pages may be provided."
    return None


def check_documents(body: Mapping[str, Any]) -> None:
    """Raise InvalidRequest for the first PDF document block the real API could not read (after ``validate``)."""
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for c, block in enumerate(content):
            source = block.get("source") if isinstance(block, Mapping) and block.get("type") == "document" else None
            if isinstance(source, Mapping) and source.get("type") == "base64":
                error = _pdf_error(f"messages.{m}.content.{c}", str(source.get("data", "")))
                if error is not None:
                    raise InvalidRequest(error)


class FakeAnthropic(FakeHTTPServer):
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.cache = PromptCache(clock)
        self.web = ServerTools()  # web_search / web_fetch (tests/fakes/server_tools.py)
        self.rejected: list[str] = []  # the 400 messages of invalid requests
        self._tool_ids = 0
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.script: list[Script] = []
        self.api_key: str | None = None  # set: any other x-api-key is refused with 401, like the real API
        self.models: set[str] | None = None  # set: any other model is refused with 404
        self.refused: list[dict[str, Any]] = []  # requests answered 401/404 by ``_refusal``
        self.default: Callable[[dict[str, Any]], Text | Error] = lambda body: Text(f"echo: {last_user_text(body)}")
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)

    # -- test API ------------------------------------------------------------
    def reply(self, *items: Script | str) -> None:
        with self._lock:
            self.script.extend(Text(i) if isinstance(i, str) else i for i in items)

    def fail(self, status: int = 500, message: str = "fake failure", type: str = "api_error") -> None:  # noqa: A002
        self.reply(Error(status, type, message))

    def wait_requests(self, n: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {n} model requests, got {len(self.requests)}")
                self._cond.wait(left)
            return list(self.requests)

    def _refusal(self, request: BaseHTTPRequestHandler, body: dict[str, Any]) -> tuple[int, str, str] | None:
        """(status, error type, message) for a refused key (401) or an unknown model (404), checked
        before the request's content (``validate``), as the real API does; else None."""
        key = request.headers.get("x-api-key") or (request.headers.get("authorization") or "").removeprefix("Bearer ")
        if not key or (self.api_key is not None and key != self.api_key):
            return 401, "authentication_error", "invalid x-api-key"
        if self.models is not None and body.get("model") not in self.models:
            return 404, "not_found_error", f"model: {body.get('model')}"
        return None

    # -- HTTP --------------------------------------------------------------------
    def handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        body_raw = self.read_body(request)
        if method != "POST" or request.path.split("?")[0] != "/v1/messages":
            self.respond(request, 404, b'{"type":"error","error":{"type":"not_found_error","message":"no"}}')
            return
        if len(body_raw) > MAX_REQUEST_BYTES:
            with self._cond:
                self.rejected.append("Request exceeds the maximum size")
                self._cond.notify_all()
            payload = {
                "type": "error",
                "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"},
            }
            self.respond(request, 413, json.dumps(payload).encode())
            return
        body = json.loads(body_raw)
        refusal = self._refusal(request, body)
        if refusal is not None:
            status, kind, message = refusal
            with self._cond:
                self.refused.append(body)
                self._cond.notify_all()
            payload = {"type": "error", "error": {"type": kind, "message": message}}
            self.respond(request, status, json.dumps(payload).encode())
            return
        try:
            validate(body)
            self.web.check(body)
            check_images(body)
            check_documents(body)
        except InvalidRequest as e:
            with self._cond:
                self.requests.append(body)
                self.headers.append({k.lower(): v for k, v in request.headers.items()})
                self.rejected.append(str(e))
                self._cond.notify_all()
            payload = {"type": "error", "error": {"type": "invalid_request_error", "message": str(e)}}
            self.respond(request, 400, json.dumps(payload).encode())
            return
        with self._cond:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in request.headers.items()})
            paused = self.web.continuation
            if paused is not None and body["messages"][-1].get("role") == "assistant":
                item: Script = paused  # a paused turn sent back: it goes on
            else:
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
        server_use: dict[str, int] = {}
        if isinstance(item, WebAnswer):
            content, stop, server_use = self.web.respond(item, body)
        else:
            content, stop = self._content(item, body)
        out_text = "".join(b.get("text", "") + json.dumps(b.get("input", "")) for b in content)
        usage: dict[str, Any] = {
            **self.cache.apply(body).as_usage(),
            "output_tokens": max(1, estimate_tokens(out_text)),
        }
        if server_use:
            usage["server_tool_use"] = server_use
            # what Claude read of the pages counts as input, uncached (it was not in the request)
            usage["input_tokens"] += estimate_tokens(self.web.read_text(content))
        usage.update(item.usage)
        message = {
            "id": f"msg_fake_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            self.respond(request, 200, json.dumps(message).encode())
            return
        self._stream(request, message, item)

    def _content(self, item: Text | ToolCalls, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        if isinstance(item, Text):
            return [{"type": "text", "text": item.text}], "end_turn"
        offered = {t.get("name") for t in body.get("tools") or []}
        if (body.get("tool_choice") or {}).get("type") == "none" or not offered:
            # like the real model: no tools offered (or tool_choice none) means an answer in text
            return [{"type": "text", "text": item.text or "(answered without tools)"}], "end_turn"
        blocks: list[dict[str, Any]] = [{"type": "text", "text": item.text}] if item.text else []
        with self._lock:
            for name, value in item.calls:
                self._tool_ids += 1
                blocks.append(
                    {"type": "tool_use", "id": f"toolu_fake{self._tool_ids:04d}", "name": name, "input": value}
                )
        return blocks, "tool_use"

    def _stream(self, request: BaseHTTPRequestHandler, message: dict[str, Any], item: Text | ToolCalls) -> None:
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
        chunk_delay = getattr(item, "chunk_delay", 0.0)
        gate = getattr(item, "gate", None)
        try:
            event("message_start", {"type": "message_start", "message": start})
            for index, block in enumerate(message["content"]):
                if block["type"] in ("web_search_tool_result", "web_fetch_tool_result"):  # whole, no deltas
                    whole = {"type": "content_block_start", "index": index, "content_block": block}
                    event("content_block_start", whole)
                    event("content_block_stop", {"type": "content_block_stop", "index": index})
                    continue
                if block["type"] == "text":
                    first = {"type": "text", "text": ""}
                    kind, key, payload = "text_delta", "text", block["text"]
                else:
                    first = {**block, "input": {}}
                    kind, key, payload = "input_json_delta", "partial_json", json.dumps(block["input"])
                event("content_block_start", {"type": "content_block_start", "index": index, "content_block": first})
                for cite in block.get("citations") or ():  # a text's citations come as their own deltas
                    delta = {"type": "citations_delta", "citation": cite}
                    event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
                for n, i in enumerate(range(0, len(payload), item.chunk)):
                    if gate is not None and n == item.gate_after:  # type: ignore[union-attr]
                        gate.wait(120)
                    if chunk_delay:
                        time.sleep(chunk_delay)
                    event(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": kind, key: payload[i : i + item.chunk]},
                        },
                    )
                event("content_block_stop", {"type": "content_block_stop", "index": index})
            event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {
                        "output_tokens": message["usage"]["output_tokens"],
                        **{k: v for k, v in message["usage"].items() if k == "server_tool_use"},
                    },
                },
            )
            event("message_stop", {"type": "message_stop"})
        except (BrokenPipeError, ConnectionResetError):
            pass
