"""Client tools Claude can call during a turn: declared once (name, schema, handler), used by every front end.

A tool is a plain function over the memory stores. ``ask()`` runs it (in a worker thread:
tools touch files) when Claude asks for it, and sends the result back. Bad input never
raises: it becomes an ``is_error`` result that tells Claude what was wrong.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory.content import shrink_tool_result

log = logging.getLogger(__name__)

MANAGERS_ONLY = (
    "refused: in this group only the bot's owner or a group administrator may {what}, and the person who "
    "asked is neither. Nothing was changed. Tell them so (they can ask an administrator); do not try another way"
)


@dataclass(frozen=True)
class ToolResult:
    text: str
    is_error: bool = False


@dataclass(frozen=True)
class ToolContext:
    """What a tool knows about the turn that called it."""

    chat_id: str
    now: datetime
    source: Mapping[str, Any] = field(default_factory=dict)  # where the turn will be stored (transcript offset)
    meta: Mapping[str, Any] = field(default_factory=dict)  # the question's stored fields (user id, topic, …)
    user_id: int | None = None  # who asked (None: the terminal)
    # whether the asker manages the chat (owner or group admin; may ask Telegram, so call it only when
    # needed, from the tool's worker thread); None: they do (a private chat, the terminal)
    may_manage: Callable[[], bool] | None = None
    # what the question's tool calls did so far (e.g. reminders set), for caps per question; tools run one
    # at a time, in order
    counts: dict[str, int] = field(default_factory=dict)
    # the pages read when a web search or fetch came back earlier in the question (this round or an earlier
    # one; empty when none is known), None when none did: what a tool saves then came after reading the web
    web_pages: tuple[str, ...] | None = None

    def manages(self) -> bool:
        """May the asker do what the chat's managers may (e.g. forget or replace facts in a group)?"""
        return self.may_manage is None or self.may_manage()


Handler = Callable[[ToolContext, Mapping[str, Any]], ToolResult]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler

    def schema(self) -> dict[str, Any]:
        """The definition sent to the Messages API (stable: same text and order every request)."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


class Toolbox:
    """The tools of one assistant, in a fixed order."""

    def __init__(self, tools: Sequence[Tool] = ()) -> None:
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate tool names: {names}")
        self.tools = list(tools)
        self._by_name = {t.name: t for t in tools}

    def __bool__(self) -> bool:
        return bool(self.tools)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self.tools]

    def run(self, name: str, value: Any, ctx: ToolContext) -> ToolResult:
        """Run tool ``name``; never raises (an unknown tool or a crash is an error result)."""
        tool = self._by_name.get(name)
        if tool is None:
            return ToolResult(f"unknown tool {name!r}; available: {', '.join(self._by_name) or 'none'}", True)
        if not isinstance(value, Mapping):
            return ToolResult("the tool input must be a JSON object", True)
        try:
            result = tool.handler(ctx, value)
        except Exception as e:  # a broken tool costs one result, never the answer
            log.warning("chat %s: tool %s failed", ctx.chat_id, name, exc_info=True)
            return ToolResult(f"the tool failed: {type(e).__name__}", True)
        return ToolResult(shrink_tool_result(result.text) or "(no output)", result.is_error)
