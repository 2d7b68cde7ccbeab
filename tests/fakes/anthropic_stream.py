"""Server-sent events of the fake Messages API, in the order and shapes of "Streaming messages".

``message_start`` (the message with empty content, ``stop_reason`` null), then per block
``content_block_start`` / ``content_block_delta``* / ``content_block_stop``, then
``message_delta`` (``stop_reason``, ``stop_details``, output usage) and ``message_stop``.
Deltas: ``text_delta`` (text), ``input_json_delta`` (``partial_json``, tool input in pieces),
``thinking_delta`` (thinking text; none when the display is omitted) and ``signature_delta``
("delivered in a signature_delta event just before the block's content_block_stop event", the
SDK's ``SignatureDelta``). A ``redacted_thinking`` block arrives whole in its
``content_block_start``. An error mid-stream is ``event: error`` with
``{"type": "error", "error": {"type": ..., "message": ...}}`` after an HTTP 200, and the
stream ends there. A ``ping`` follows ``message_start`` ("event streams may also include any
number of ping events"; where: a **guess**). ``novel``: a block of a type no client knows arrives
whole in its ``content_block_start``, followed by a delta of an unknown type, and an event of an
unknown type comes before ``message_delta`` (Versions; Streaming messages, "Other events": shapes
a **guess**). ``drop``: the stream stops after the first text's deltas (a broken connection).

The connection stays open for the next request once a stream ended, as HTTP/1.1 connections do unless
a side says otherwise (RFC 9112, 9.3 "Persistence"), and as the SDK expects: it keeps up to 100 of them
open between calls (``DEFAULT_CONNECTION_LIMITS`` in its ``_constants.py``). The events go in chunked
transfer coding (RFC 9112, 7.1): how the real API frames a stream is a **guess**. A fake that closed every
stream's connection made each call pay a new connection and a new server thread, which the bot does not
pay against the real API. ``drop`` closes the connection without the last chunk (a broken stream). ``cut``
sends the last chunk after the first text's deltas: the HTTP body ends in good order, the answer without its
``message_stop`` (a proxy or server ending the response early; that it can happen is a **guess**, the
client's check for ``message_stop`` is what "Streaming messages" implies: a stream ends with it).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any


def stream(
    request: BaseHTTPRequestHandler,
    message: dict[str, Any],
    *,
    chunk: int,
    chunk_delay: float = 0.0,
    gate: threading.Event | None = None,
    gate_after: int = 0,
    partial_json: dict[int, str] | None = None,
    error: dict[str, str] | None = None,
    novel: bool = False,
    drop: bool = False,
    cut: bool = False,
) -> None:
    request.send_response(200)
    request.send_header("Content-Type", "text/event-stream")
    request.send_header("Cache-Control", "no-cache")
    request.send_header("Transfer-Encoding", "chunked")
    request.end_headers()
    chunk = max(1, chunk)
    partial_json = partial_json or {}

    def event(name: str, data: dict[str, Any]) -> None:
        body = f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
        request.wfile.write(b"%x\r\n%s\r\n" % (len(body), body))
        request.wfile.flush()

    def deltas(index: int, kind: str, key: str, payload: str, gated: bool) -> None:
        for n, i in enumerate(range(0, len(payload), chunk)):
            if gated and gate is not None and n == gate_after:
                gate.wait(120)
            if chunk_delay:
                time.sleep(chunk_delay)
            delta = {"type": kind, key: payload[i : i + chunk]}
            event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})

    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_details": None,
        "usage": {**message["usage"], "output_tokens": 1},
    }
    try:
        event("message_start", {"type": "message_start", "message": start})
        event("ping", {"type": "ping"})
        for index, block in enumerate(message["content"]):
            kind = block["type"]
            if kind == "text":
                first: dict[str, Any] = {"type": "text", "text": ""}
                if block.get("citations"):
                    first["citations"] = []
                event("content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": first})  # fmt: skip
                for cite in block.get("citations") or ():  # a text's citations come as their own deltas
                    event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                  "delta": {"type": "citations_delta", "citation": cite}})  # fmt: skip
                deltas(index, "text_delta", "text", block["text"], True)
                if drop:
                    request.close_connection = True  # closed before the stream ended: no last chunk
                    return
                if cut:
                    request.wfile.write(b"0\r\n\r\n")  # the framing ends, the answer did not
                    return
            elif kind in ("web_search_tool_result", "web_fetch_tool_result"):  # whole, without deltas
                event("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
            elif kind == "thinking":
                event("content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": {"type": "thinking", "thinking": "",
                                                                "signature": ""}})  # fmt: skip
                deltas(index, "thinking_delta", "thinking", block["thinking"], False)
                event("content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "signature_delta",
                                                        "signature": block["signature"]}})  # fmt: skip
            elif kind == "redacted_thinking":
                event("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
            elif kind not in ("tool_use", "server_tool_use"):  # a type no client knows: whole, and a novel delta
                event("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
                event("content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "novel_delta_fake", "x": 1}})  # fmt: skip
            else:  # tool_use, server_tool_use
                event("content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": {**block, "input": {}}})  # fmt: skip
                payload = partial_json.get(index, json.dumps(block["input"], ensure_ascii=False))
                deltas(index, "input_json_delta", "partial_json", payload, False)
            event("content_block_stop", {"type": "content_block_stop", "index": index})
        if error is not None:
            event("error", {"type": "error", "error": error})
            request.wfile.write(b"0\r\n\r\n")  # the stream ends there
            return
        if novel:
            event("novel_event_fake", {"type": "novel_event_fake", "detail": {"n": 1}})
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": message["stop_reason"],
                    "stop_sequence": None,
                    "stop_details": message.get("stop_details"),
                },
                "usage": {
                    "output_tokens": message["usage"]["output_tokens"],
                    **{k: v for k, v in message["usage"].items() if k == "server_tool_use"},
                },
            },
        )
        event("message_stop", {"type": "message_stop"})
        request.wfile.write(b"0\r\n\r\n")  # the last chunk: the connection takes the next request
    except (BrokenPipeError, ConnectionResetError):
        request.close_connection = True
