"""The tool-use loop of one question: ask Claude, run the tools it calls, ask again until it answers.

At most ``max_rounds`` tool rounds; after that the request says ``tool_choice: none`` (the tools
stay in the request, so the cached prefix is unchanged) and Claude must answer. Between rounds
the conversation so far is marked for caching. Text Claude writes before a tool call is streamed
as it arrives; the next round's text starts on a new paragraph.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.claude.model import Model, ModelError, Reply, TextCallback, Usage
from bot.core.prompt import with_cache_breakpoint
from bot.tools import Toolbox, ToolContext
from memory.content import api_content

log = logging.getLogger(__name__)

NO_TOOLS = {"type": "none"}


def iso(dt: datetime) -> str:
    return dt.astimezone().isoformat(timespec="seconds")


def api_message(m: Mapping[str, Any]) -> dict[str, Any]:
    """A stored message as the API takes it: role and cleaned content only."""
    return {"role": m["role"], "content": api_content(m["content"])}


@dataclass
class LoopResult:
    """What one question's loop produced: the messages to store after the question, and the answer."""

    stored: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""  # everything the user was shown, in order
    usage: Usage = field(default_factory=Usage)
    rounds: int = 0
    calls: tuple[str, ...] = ()


class ToolLoop:
    def __init__(
        self,
        model: Model,
        toolbox: Toolbox,
        *,
        max_rounds: int,
        max_tokens: int | None,
        now: Callable[[], datetime],
        spend: Callable[[str, Reply], None],
    ) -> None:
        self.model = model
        self.toolbox = toolbox
        self.max_rounds = max_rounds
        self.max_tokens = max_tokens
        self.now = now
        self.spend = spend  # (kind "answer" | "tool", reply): every model call's usage

    async def run(
        self,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        ctx: ToolContext,
        on_text: TextCallback | None,
    ) -> LoopResult:
        """Raises ModelError when a call fails or the final answer is empty (nothing is stored then)."""
        schemas = self.toolbox.schemas()
        out = LoopResult()
        shown: list[str] = []
        calls: list[str] = []
        separate = False  # text was shown before this round: start the next text on a new paragraph

        async def feed(delta: str) -> None:
            nonlocal separate
            if on_text is None or not delta:
                return
            if separate:
                separate = False
                await on_text("\n\n")
            await on_text(delta)

        while True:
            may_use_tools = out.rounds < self.max_rounds
            reply: Reply = await self.model.complete(
                system=system,
                messages=with_cache_breakpoint(messages) if out.rounds else messages,
                max_tokens=self.max_tokens,
                on_text=feed,
                tools=schemas or None,
                tool_choice=None if may_use_tools or not schemas else dict(NO_TOOLS),
            )
            out.usage = out.usage + reply.usage
            self.spend("tool" if out.rounds else "answer", reply)
            text = reply.text.strip()
            if text:
                shown.append(text)
                separate = True
            record = {"at": iso(self.now()), "model": reply.model or self.model.name, "usage": reply.usage.as_dict()}
            tool_uses = reply.tool_calls if may_use_tools else []
            if not tool_uses:
                if not text:
                    raise ModelError("empty", f"stop_reason={reply.stop_reason}")
                out.stored.append({"role": "assistant", "content": text, **record})
                break
            out.rounds += 1
            results: list[dict[str, Any]] = []
            for use in tool_uses:
                name = str(use.get("name"))
                calls.append(name)
                result = await asyncio.to_thread(self.toolbox.run, name, use.get("input"), ctx)
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": str(use.get("id"))}
                block["content"] = result.text
                if result.is_error:
                    block["is_error"] = True
                results.append(block)
                log.info("chat %s: tool %s%s", ctx.chat_id, name, " (error)" if result.is_error else "")
            assistant_msg = {"role": "assistant", "content": api_content(reply.blocks), **record}
            result_msg = {"role": "user", "content": results, "at": iso(self.now())}
            out.stored += [assistant_msg, result_msg]
            messages = [*messages, api_message(assistant_msg), api_message(result_msg)]
        out.text = "\n\n".join(shown)
        out.calls = tuple(calls)
        return out
