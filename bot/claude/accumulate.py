"""A streamed Messages API response put together from its server-sent events, as plain dicts.

The event flow and the deltas are the Streaming messages page's (platform.claude.com/docs/en/build-with-
claude/streaming): ``message_start`` carries the message with empty ``content``; each content block is a
``content_block_start`` (the block, e.g. a text with empty text, a tool_use with empty input, or a whole
``redacted_thinking`` / ``web_search_tool_result`` / ``web_fetch_tool_result``), ``content_block_delta``
events and a ``content_block_stop``; then ``message_delta`` (``stop_reason``, ``stop_details``, usage) and
``message_stop``. Deltas: ``text_delta`` (text), ``input_json_delta`` (``partial_json``: pieces of the tool
input, parsed once the block stops — "the final input is always a complete object"), ``citations_delta``
(one citation added to the text's ``citations``), ``thinking_delta`` and ``signature_delta`` (the
signature, "just before the content_block_stop event"). "The token counts shown in the usage field of the
message_delta event are cumulative": they replace the ``message_start`` ones (the optional ones only when
present, as the SDK's ``accumulate_event`` does). ``ping`` events carry nothing; an ``error`` event ends
the stream with that error (it may come after HTTP 200: "during periods of high usage, you may receive an
overloaded_error"); "we may add new event types, and your code should handle unknown event types
gracefully": an unknown event or delta type is skipped, and a block of a type not named here is kept as it
came (its later deltas, if any, are skipped).

Every block is kept exactly as it was received, with every field it had (a tool_use's ``caller``, a
thinking block's signature, a server tool result's encrypted content): they go back to the API unmodified
within a tool loop or a paused turn.
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

from bot.claude.api import APIError

log = logging.getLogger(__name__)

CUT = ("max_tokens", "model_context_window_exceeded")
"""Stop reasons that may leave a tool call's input JSON unfinished (Stop reasons; Handle stop reasons)."""


class Accumulator:
    """Feed it the stream's events in order (``add``); ``message()`` is the whole response once it ended.
    ``snapshot`` is the message as received so far (e.g. its usage when a stream is cut short)."""

    def __init__(self) -> None:
        self.snapshot: dict[str, Any] | None = None
        self.stopped = False
        # block index -> field ("text", "thinking", "input") -> the pieces of its deltas so far, joined once the
        # block stops (a long answer comes in thousands of deltas: adding each to the whole is quadratic)
        self._pieces: dict[int, dict[str, list[str]]] = {}
        self._broken: dict[int, str] = {}  # block index -> tool input JSON that did not parse

    def add(self, name: str, data: dict[str, Any]) -> str:
        """Apply one event; returns the text it added to a text block ("" for any other event).
        Raises APIError for an ``error`` event or an event out of order."""
        if name == "error":
            error = APIError("", body=data).error
            raise APIError(str(error.get("message") or "error event"), status_code=200, body=data)
        if name == "ping":
            return ""
        if name == "message_start":
            message = copy.deepcopy(data.get("message"))
            if not isinstance(message, dict):
                raise APIError("message_start without a message", status_code=200)
            message["content"] = list(message.get("content") or [])
            message["usage"] = dict(message.get("usage") or {})
            self.snapshot = message
            return ""
        if name not in ("content_block_start", "content_block_delta", "content_block_stop", "message_delta",
                        "message_stop"):  # fmt: skip
            log.debug("skipped an unknown stream event %r", name)
            return ""
        message = self.snapshot
        if message is None:
            raise APIError(f"{name} before message_start", status_code=200)
        if name == "content_block_start":
            block = data.get("content_block")
            if not isinstance(block, dict):
                raise APIError("content_block_start without a block", status_code=200)
            message["content"].append(copy.deepcopy(block))
        elif name == "content_block_delta":
            return self._delta(message["content"], data)
        elif name == "content_block_stop":
            self._stop(message["content"], data.get("index"))
        elif name == "message_delta":
            delta = data.get("delta") or {}
            for key, value in delta.items():
                if value is not None or key in ("stop_reason", "stop_sequence", "stop_details"):
                    message[key] = copy.deepcopy(value)
            for key, value in (data.get("usage") or {}).items():
                if value is not None:
                    message["usage"][key] = copy.deepcopy(value)
        else:  # message_stop
            self.stopped = True
        return ""

    def _block(self, content: list[dict[str, Any]], index: Any) -> dict[str, Any]:
        if not isinstance(index, int) or not 0 <= index < len(content):
            raise APIError(f"an event for content block {index!r}, which never started", status_code=200)
        return content[index]

    def _delta(self, content: list[dict[str, Any]], data: dict[str, Any]) -> str:
        index = data.get("index")
        block = self._block(content, index)
        delta = data.get("delta") or {}
        kind, target = delta.get("type"), block.get("type")
        if kind == "text_delta" and target == "text":
            piece = str(delta.get("text", ""))
            self._add(index, "text", piece)
            return piece
        if kind == "input_json_delta" and "input" in block:  # tool_use, server_tool_use and the like
            self._add(index, "input", str(delta.get("partial_json", "")))
        elif kind == "citations_delta" and target == "text":
            block["citations"] = [*(block.get("citations") or []), copy.deepcopy(delta.get("citation"))]
        elif kind == "thinking_delta" and target == "thinking":
            self._add(index, "thinking", str(delta.get("thinking", "")))
        elif kind == "signature_delta" and target == "thinking":
            block["signature"] = str(delta.get("signature", ""))
        else:
            log.debug("skipped a %r delta to a %r block", kind, target)
        return ""

    def _add(self, index: int, key: str, piece: str) -> None:
        self._pieces.setdefault(index, {}).setdefault(key, []).append(piece)

    def _stop(self, content: list[dict[str, Any]], index: Any) -> None:
        block = self._block(content, index)
        pieces = self._pieces.pop(index, {})
        for key in ("text", "thinking"):
            if key in pieces:
                block[key] = str(block.get(key) or "") + "".join(pieces[key])
        raw = "".join(pieces.get("input", ()))
        if not raw:
            return  # no input deltas: the input is the one content_block_start carried
        try:
            block["input"] = json.loads(raw)
        except ValueError:
            block["input"] = {}
            self._broken[index] = raw

    def message(self) -> dict[str, Any]:
        """The response as received. Raises APIError when the stream ended before ``message_stop`` (the
        connection broke: the answer is incomplete), or when a tool input that was not cut short by the
        stop reason is not JSON."""
        message = self.snapshot
        if message is None or not self.stopped:
            raise APIError("the stream ended before the answer did (no message_stop)")
        for index in list(self._pieces):  # a block whose content_block_stop never came
            self._stop(message["content"], index)
        if self._broken and message.get("stop_reason") not in CUT:
            index, raw = next(iter(self._broken.items()))
            raise APIError(f"the input of tool call {index} is not JSON: {raw[:200]!r}", status_code=200)
        return message
