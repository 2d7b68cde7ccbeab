"""What the fake Messages API answers: the scripts tests queue, and the reply content they become.

Every script is a dataclass; queue them with ``FakeAnthropic.reply(...)`` (a plain string is a
``Text``). The fields each script shares: ``delay`` (seconds before the reply starts), ``chunk``
(characters per streamed delta), ``usage`` (fields that override the computed usage).

- ``Text(text, thinking=DEFAULT_THINKING, redacted=False, chunk_delay=0.0, gate=None,
  gate_after=0, novel=False, drop=False, cut=False)``: an answer, ``stop_reason`` ``end_turn``. ``novel``: the
  reply also has a content block of a type no client knows yet (``NOVEL_BLOCK``, with a delta of an
  unknown type), and the stream an event of an unknown type — Versions: "Anthropic may add new variants
  to enum-like output values (for example, streaming event types)"; Streaming messages: "your code
  should handle unknown event types gracefully" (their shapes are a **guess**). ``drop``: the
  connection closes after the text's deltas, before ``content_block_stop`` and ``message_stop``; ``cut``:
  the response ends in good order there instead (its last chunk), still without ``message_stop``.
- ``ToolCalls(calls=[(name, input), ...], text="", thinking=DEFAULT_THINKING, redacted=False)``:
  asks for tools, ``stop_reason`` ``tool_use``. On the 5.x models the ``text`` (the progress
  note between tool calls) comes back in a thinking block, as "What's new in Claude Sonnet
  5.5" says, not as text; on 4.x it is a text block.
- ``Refusal(text="", category="general_harms", explanation=None)``: ``stop_reason``
  ``refusal`` with ``stop_details`` ``{"type": "refusal", "category", "explanation"}`` (the
  SDK's ``RefusalStopDetails``); ``text`` is what was streamed before the classifier stopped it.
- ``CutToolCall(name, input, keep=0.5, text="")``: ``max_tokens`` reached in the middle of a
  tool_use: the block carries only the first ``keep`` share of its input JSON (streamed as
  ``input_json_delta``; the non-streamed ``input`` is ``{}``), ``stop_reason`` ``max_tokens``,
  ``output_tokens`` = the request's ``max_tokens``.
- ``ContextExceeded(text="…")``: ``stop_reason`` ``model_context_window_exceeded`` after a
  partial answer.
- ``PauseTurn(text="", query="…")``: a long server-tool turn paused: a ``server_tool_use``
  (web_search) block and ``stop_reason`` ``pause_turn``; send the assistant content back as
  the last message to continue (the fake accepts that trailing assistant message, and only
  that one, even on models without prefill).
- ``StreamError(text="", type="overloaded_error", message="Overloaded")``: streamed: HTTP 200,
  ``message_start``, ``text`` in deltas, then ``event: error`` with
  ``{"type": "error", "error": {"type": type, "message": message}}`` and the stream ends
  (Streaming messages: "Error events"). Not streamed: HTTP 529 with that error.
- ``Error(status, type, message, headers)``: an HTTP error; ``Error.unknown_model(model)`` (404
  ``not_found_error`` ``model: <id>``), ``Error.too_large()`` (413 ``request_too_large``),
  ``Error.overloaded()`` (529).

Thinking, on the requests that think (a 5.x model without ``thinking``, or ``adaptive`` /
``enabled``): the content begins with a thinking block whose text is ``thinking`` (shown with
``display: "summarized"``, empty with ``"omitted"``, the 5.5 default), then a
``redacted_thinking`` block if ``redacted``; ``thinking=None`` is a reply the model chose not
to think for. With ``thinking: {"type": "between_tools"}`` only the progress note of a
``ToolCalls`` comes back as thinking (always shown). Thinking costs output tokens
(``thinking_tokens`` on ``Text`` / ``ToolCalls``, default: its text's estimate), billed in
``usage.output_tokens`` even when omitted, and counted toward ``max_tokens``: when thinking plus
the answer do not fit, the answer is cut (``stop_reason`` ``max_tokens``; a ``ToolCalls`` whose
thinking alone fills ``max_tokens`` ends before its tool call).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.prompt_cache import estimate_tokens

DEFAULT_THINKING = "The user asked something; let me answer carefully."


@dataclass
class Text:
    text: str
    chunk: int = 20
    delay: float = 0.0  # seconds before the reply starts
    chunk_delay: float = 0.0  # seconds between streamed chunks
    usage: dict[str, int] = field(default_factory=dict)
    gate: threading.Event | None = None  # streaming holds before chunk ``gate_after`` until the test sets it
    gate_after: int = 0
    thinking: str | None = DEFAULT_THINKING
    redacted: bool = False
    thinking_tokens: int | None = None  # what the thinking costs (default: its text's estimate)
    novel: bool = False  # a block, a delta and an event of types no client knows yet
    drop: bool = False  # the connection closes in the middle of the stream
    cut: bool = False  # the stream ends in good order (its last chunk) but before the answer did: no message_stop


NOVEL_BLOCK = {"type": "novel_block_fake", "payload": {"kept": [1, None, "as sent"]}, "note": None}
"""A content block of a type added after the client was written (a **guess** at its shape: any JSON)."""


@dataclass
class Error:
    """An HTTP error as the Errors page documents it: the status, ``error.type`` and ``error.message``
    (``details``: ``error.details``, e.g. the tier spend cap's ``error_code``)."""

    status: int
    type: str = "api_error"
    message: str = "fake error"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    details: dict[str, str] | None = None

    @classmethod
    def unknown_model(cls, model: str) -> Error:
        return cls(404, "not_found_error", f"model: {model}")

    @classmethod
    def too_large(cls) -> Error:
        return cls(413, "request_too_large", "Request exceeds the maximum size")

    @classmethod
    def overloaded(cls) -> Error:
        return cls(529, "overloaded_error", "Overloaded")

    # -- the other documented types (Claude API errors page; Rate limits page for the spend limits) --
    @classmethod
    def invalid_request(cls, message: str = "messages: field required") -> Error:
        return cls(400, "invalid_request_error", message)

    @classmethod
    def spend_limit(cls, workspace: bool = False) -> Error:
        """The organization's or workspace's own spend limit: a 400 ``invalid_request_error`` (Errors page);
        the message as a public report quotes it (claude-code issue 1047)."""
        scope = "workspace API usage limits" if workspace else "API usage limits"
        until = "You will regain access on 2027-01-01 at 00:00 UTC."
        return cls(400, "invalid_request_error", f"You have reached your specified {scope}. {until}")

    @classmethod
    def spend_cap(cls) -> Error:
        """The usage tier's monthly spend cap: a 429 ``rate_limit_error`` with no retry-after and
        ``details.error_code`` ``enforced_spend_limit_reached`` (Rate limits page, quoted)."""
        return cls(
            429,
            "rate_limit_error",
            "You have reached your API usage limits: your organization has crossed its monthly API usage "
            "threshold, set based on your organization's API tier. You will regain access on 2027-01-01 at 00:00 UTC.",
            details={"error_code": "enforced_spend_limit_reached"},
        )

    @classmethod
    def documented(cls, kind: str) -> Error:
        """The error of type ``kind`` with its status (``DOCUMENTED_ERRORS``)."""
        status, message = DOCUMENTED_ERRORS[kind]
        return cls(status, kind, message)

    @classmethod
    def rate_limit(cls, retry_after: int = 1) -> Error:
        return cls(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit",
                   headers={"retry-after": str(retry_after)})  # fmt: skip


DOCUMENTED_ERRORS = {  # error.type -> (HTTP status, message): the Claude API errors page
    "authentication_error": (401, "invalid x-api-key"),
    "billing_error": (402, "There's an issue with your billing or payment information."),
    "permission_error": (403, "Your API key does not have permission to use the specified resource."),
    "api_error": (500, "Internal server error"),
    "timeout_error": (504, "Request timeout"),
}


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
    thinking: str | None = DEFAULT_THINKING
    redacted: bool = False
    thinking_tokens: int | None = None


@dataclass
class Refusal:
    text: str = ""
    category: str | None = "general_harms"
    explanation: str | None = None
    chunk: int = 20
    delay: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)
    thinking: str | None = DEFAULT_THINKING


@dataclass
class CutToolCall:
    name: str
    input: dict[str, Any]
    keep: float = 0.5  # share of the input JSON sent before max_tokens
    text: str = ""
    chunk: int = 20
    delay: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)
    thinking: str | None = DEFAULT_THINKING


@dataclass
class ContextExceeded:
    text: str = "The answer ran into the end of the context win"
    chunk: int = 20
    delay: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)
    thinking: str | None = DEFAULT_THINKING


@dataclass
class PauseTurn:
    text: str = ""
    query: str = "latest news"
    chunk: int = 20
    delay: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)
    thinking: str | None = DEFAULT_THINKING


@dataclass
class StreamError:
    text: str = ""
    type: str = "overloaded_error"
    message: str = "Overloaded"
    chunk: int = 20
    delay: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)


Reply = Text | ToolCalls | Refusal | CutToolCall | ContextExceeded | PauseTurn | StreamError
Script = Reply | Error | Callable[[dict[str, Any]], "Reply | Error"]


@dataclass(frozen=True)
class ThinkingMode:
    upfront: bool  # the reply may begin with thinking
    between_tools: bool  # progress notes between tool calls come back as thinking (5.x)
    shown: bool  # thinking text is returned (display "summarized")


def thinking_mode(body: Mapping[str, Any], *, thinks_by_default: bool, default_display: str) -> ThinkingMode:
    config = body.get("thinking")
    kind = config.get("type") if isinstance(config, Mapping) else None
    display = config.get("display") if isinstance(config, Mapping) else None
    shown = (display or default_display) == "summarized"
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") in ("any", "tool"):
        return ThinkingMode(False, False, shown)  # forced tool use skips thinking
    if kind is None:
        return ThinkingMode(thinks_by_default, thinks_by_default, shown)
    if kind == "between_tools":
        return ThinkingMode(False, True, True)
    if kind in ("adaptive", "enabled"):
        return ThinkingMode(True, thinks_by_default, shown)
    return ThinkingMode(False, False, shown)


DIRECT = {"type": "direct"}


@dataclass
class Built:
    content: list[dict[str, Any]]
    stop_reason: str
    stop_details: dict[str, Any] | None = None
    partial_json: dict[int, str] = field(default_factory=dict)  # block index -> the truncated input JSON
    output_tokens: int | None = None
    thinking_cost: int = 0  # output tokens spent on thinking (billed even when the display is omitted)


def _thinking(text: str | None, shown: bool) -> dict[str, Any]:
    return {"type": "thinking", "thinking": (text or "") if shown else "", "signature": ""}


def build(
    item: Reply,
    body: Mapping[str, Any],
    mode: ThinkingMode,
    new_tool_id: Callable[[str], str],
) -> Built:
    """The reply content for ``item`` (unsigned thinking blocks: the server signs them)."""
    blocks: list[dict[str, Any]] = []
    thinking = getattr(item, "thinking", None)
    cost = 0
    if mode.upfront and thinking is not None and not isinstance(item, StreamError):
        blocks.append(_thinking(thinking, mode.shown))
        cost = getattr(item, "thinking_tokens", None) or estimate_tokens(thinking)
        if getattr(item, "redacted", False):
            blocks.append({"type": "redacted_thinking", "data": ""})
    budget = int(body.get("max_tokens") or 1)
    if cost and isinstance(item, Text | ToolCalls):
        # "Thinking tokens count toward your max_tokens limit": what does not fit is cut
        left = budget - cost
        wanted = estimate_tokens(item.text) if isinstance(item, Text) else 0
        if left <= 0 or wanted > left:
            kept = item.text[: max(0, int(left * 3.3 / 3))] if isinstance(item, Text) and left > 0 else ""
            cut = [*blocks, {"type": "text", "text": kept}] if kept else blocks
            return Built(cut, "max_tokens", output_tokens=budget, thinking_cost=cost)
    if isinstance(item, Text):
        novel = [dict(NOVEL_BLOCK)] if item.novel else []
        return Built([*blocks, {"type": "text", "text": item.text}, *novel], "end_turn", thinking_cost=cost)
    if isinstance(item, StreamError):
        return Built([{"type": "text", "text": item.text}] if item.text else [], "end_turn")
    if isinstance(item, Refusal):
        details = {"type": "refusal", "category": item.category, "explanation": item.explanation}
        return Built([*blocks, *([{"type": "text", "text": item.text}] if item.text else [])], "refusal", details)
    if isinstance(item, ContextExceeded):
        return Built([*blocks, {"type": "text", "text": item.text}], "model_context_window_exceeded")
    if isinstance(item, PauseTurn):
        if item.text:
            blocks.append({"type": "text", "text": item.text})
        use = {"type": "server_tool_use", "id": new_tool_id("srvtoolu"), "name": "web_search",
               "input": {"query": item.query}}  # fmt: skip
        return Built([*blocks, use], "pause_turn")
    if isinstance(item, CutToolCall):
        if item.text:
            blocks.append({"type": "text", "text": item.text})
        full = json.dumps(item.input, ensure_ascii=False)
        cut = full[: max(1, min(len(full) - 1, int(len(full) * item.keep)))]
        blocks.append(
            {"type": "tool_use", "id": new_tool_id("toolu"), "name": item.name, "input": {}, "caller": dict(DIRECT)}
        )
        out = int(body.get("max_tokens") or 1)
        return Built(blocks, "max_tokens", partial_json={len(blocks) - 1: cut}, output_tokens=out)
    assert isinstance(item, ToolCalls)
    offered = {t.get("name") for t in body.get("tools") or [] if isinstance(t, Mapping)}
    if (body.get("tool_choice") or {}).get("type") == "none" or not offered:
        # like the real model: no tools offered (or tool_choice none) means an answer in text
        return Built([*blocks, {"type": "text", "text": item.text or "(answered without tools)"}], "end_turn")
    if item.text:
        if mode.between_tools:
            blocks.append(_thinking(item.text, True if not mode.upfront else mode.shown))
            cost += estimate_tokens(item.text)
        else:
            blocks.append({"type": "text", "text": item.text})
    for name, value in item.calls:
        # the SDK's ToolUseBlock: ``caller`` says who called the tool ({"type": "direct"}: the model itself)
        blocks.append(
            {"type": "tool_use", "id": new_tool_id("toolu"), "name": name, "input": value, "caller": dict(DIRECT)}
        )
    return Built(blocks, "tool_use", thinking_cost=cost)
