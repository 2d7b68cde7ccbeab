"""The model interface the assistant talks to, and a fake model for tests.

``ClaudeModel`` (bot/claude/client.py) is the real implementation; ``FakeModel`` sits
beside the interface it fakes: it answers from a queue and records what it was sent.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

TextCallback = Callable[[str], Awaitable[None]]
"""Receives each new piece of text as the model writes it."""


CONTEXT_FULL = "model_context_window_exceeded"
"""The stop reason of a response that filled the model's context window."""


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    web_searches: int = 0  # usage.server_tool_use.web_search_requests (billed per search)
    web_fetches: int = 0  # usage.server_tool_use.web_fetch_requests (tokens only)

    def as_dict(self) -> dict[str, int]:
        out = {
            "input": self.input_tokens,
            "output": self.output_tokens,
            "cache_read": self.cache_read_tokens,
            "cache_write": self.cache_write_tokens,
        }
        if self.web_searches:
            out["web_searches"] = self.web_searches
        if self.web_fetches:
            out["web_fetches"] = self.web_fetches
        return out

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.web_searches + other.web_searches,
            self.web_fetches + other.web_fetches,
        )


@dataclass(frozen=True)
class Reply:
    """One model response. ``content`` holds its API content blocks (text and tool_use), in order."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    stop_reason: str | None = None
    content: tuple[dict[str, Any], ...] = ()

    @property
    def blocks(self) -> list[dict[str, Any]]:
        """The content blocks (a plain text reply as one text block)."""
        if self.content:
            return [dict(b) for b in self.content]
        return [{"type": "text", "text": self.text}] if self.text else []

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return [b for b in self.blocks if b.get("type") == "tool_use"]


def tool_call(name: str, value: dict[str, Any], *, text: str = "", call_id: str | None = None) -> Reply:
    """A scripted reply that asks for one tool (for FakeModel), optionally after some text."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.append({"type": "tool_use", "id": call_id or f"toolu_{uuid.uuid4().hex[:20]}", "name": name, "input": value})
    return Reply(text, stop_reason="tool_use", content=tuple(blocks))


class ModelError(Exception):
    """The model call failed. ``kind`` picks the message the user sees.

    kinds: rate_limit, overloaded, auth, timeout, connection, bad_request, server, empty,
    refusal (the model declined: nothing is stored), search_refused (a web search its asker may not run
    was started: the call was cut), cut (max_tokens in the middle of a tool call),
    context_full (the conversation no longer fits the model), not_found (unknown model),
    too_large (the request is over the API's size limit), system_messages (the model takes no
    mid-conversation system message: the request is rebuilt without one)
    """

    def __init__(self, kind: str, detail: str = "", *, reply: Reply | None = None) -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail
        # the response when the API answered (and billed) it but the answer is unusable (refusal, empty):
        # its usage is charged to the person who asked like any other call's
        self.reply = reply


class Model(Protocol):
    name: str

    async def complete(
        self,
        *,
        system: Sequence[dict[str, Any]],
        messages: Sequence[dict[str, Any]],
        max_tokens: int | None = None,
        on_text: TextCallback | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
        on_tool: TextCallback | None = None,
        allow_search: bool = True,
    ) -> Reply:
        """One response. With ``tools`` it may stop with ``stop_reason == "tool_use"`` and tool_use blocks.
        ``allow_search`` False: a response that starts a web search raises ModelError("search_refused")."""
        ...


Script = str | Reply | Exception | Callable[[Sequence[dict[str, Any]], Sequence[dict[str, Any]]], "str | Reply"]
Validate = Callable[[dict[str, Any]], None]
"""Checks a request body as the real API would; raises ValueError with the API's message."""


@dataclass
class Call:
    system: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    max_tokens: int | None
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: dict[str, Any] | None = None

    @property
    def system_text(self) -> str:
        return "\n".join(str(b.get("text", "")) for b in self.system)

    @property
    def last_user_text(self) -> str:
        content = self.messages[-1]["content"]
        if isinstance(content, str):
            return content
        return "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")


class FakeModel:
    """A scripted model: each call takes the next item of ``responses``.

    An item is the reply text, a ``Reply`` (e.g. ``tool_call(...)``), an exception to
    raise, or a function of (system, messages) returning either. With the queue empty it
    echoes. ``calls`` records what every call was sent. With ``validate`` every request is
    first checked as the real API checks it (a bad one raises ModelError("bad_request")).
    """

    def __init__(
        self,
        responses: Sequence[Script] = (),
        *,
        name: str = "fake-model",
        chunk: int = 8,
        validate: Validate | None = None,
    ) -> None:
        self.name = name
        self.responses: list[Script] = list(responses)
        self.calls: list[Call] = []
        self.chunk = chunk
        self.delay = 0.0
        self.validate = validate
        self.system_messages = False  # per-turn context in the system prompt (True: a mid-conversation system message)

    async def wants_system_messages(self) -> bool:
        return self.system_messages

    def queue(self, *items: Script) -> None:
        self.responses.extend(items)

    async def complete(
        self,
        *,
        system: Sequence[dict[str, Any]],
        messages: Sequence[dict[str, Any]],
        max_tokens: int | None = None,
        on_text: TextCallback | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
        on_tool: TextCallback | None = None,
        allow_search: bool = True,
    ) -> Reply:
        call = Call(
            [dict(b) for b in system],
            [dict(m) for m in messages],
            max_tokens,
            [dict(t) for t in tools or ()],
            dict(tool_choice) if tool_choice else None,
        )
        self.calls.append(call)
        if self.validate is not None:
            body: dict[str, Any] = {"system": call.system, "messages": call.messages, "max_tokens": max_tokens or 1}
            if call.tools:
                body["tools"] = call.tools
            if call.tool_choice:
                body["tool_choice"] = call.tool_choice
            try:
                self.validate(body)
            except ValueError as e:
                raise ModelError("bad_request", str(e)) from e
        if self.delay:
            await asyncio.sleep(self.delay)
        item: Script = self.responses.pop(0) if self.responses else f"echo: {call.last_user_text}"
        if isinstance(item, Exception):
            raise item
        made = item(system, messages) if callable(item) else item
        reply = made if isinstance(made, Reply) else Reply(made, stop_reason="end_turn")
        if reply.tool_calls and (not call.tools or (call.tool_choice or {}).get("type") == "none"):
            reply = Reply(f"echo: {call.last_user_text}", stop_reason="end_turn")  # tools not offered: answer
        if on_text is not None:
            for i in range(0, len(reply.text), self.chunk):
                await on_text(reply.text[i : i + self.chunk])
        if on_tool is not None:
            for use in reply.tool_calls:
                await on_tool(str(use.get("name")))
        chars = sum(len(str(m.get("content"))) for m in messages) + len(call.system_text)
        usage = reply.usage if reply.usage != Usage() else Usage(chars // 3, max(1, len(str(reply.blocks)) // 3))
        out = Reply(reply.text, usage, self.name, reply.stop_reason or "end_turn", tuple(reply.blocks))
        if reply.stop_reason == "refusal":
            raise ModelError("refusal", reply=out)
        return out
