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

from bot.model import Model, ModelError, Reply, TextCallback, Usage
from bot.prompt import with_cache_breakpoint
from bot.sources import WebTrail, storable, with_sources
from bot.tools import Toolbox, ToolContext
from bot.websearch import WebSearch, search_disabled_error
from memory.content import api_content

log = logging.getLogger(__name__)

NO_TOOLS = {"type": "none"}
MAX_PAUSES = 6
"""``pause_turn`` continuations per question (the API pauses a long server-side search loop)."""
NO_SEARCH_NOTE = "⚠️ 웹 검색을 하지 못해 검색 없이 답했어요. / Could not search the web; answered without it."


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
    web: WebTrail = field(default_factory=WebTrail)
    note: str = ""  # said under the answer when the web could not be searched


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
        web: WebSearch | None = None,
    ) -> None:
        self.model = model
        self.web = web  # None: this question may not search (off, unsupported, over the limit)
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
        server = self.web.tools() if self.web is not None else []
        out = LoopResult()
        trail = out.web
        shown: list[str] = []
        calls: list[str] = []
        carried: list[dict[str, Any]] = []  # content of paused responses (pause_turn), continued by the next
        pauses = 0
        note = ""
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
            tools = [*schemas, *server]
            request = with_cache_breakpoint(messages) if out.rounds or pauses else messages
            try:
                reply: Reply = await self.model.complete(
                    system=system,
                    messages=request,
                    max_tokens=self.max_tokens,
                    on_text=feed,
                    tools=tools or None,
                    tool_choice=None if may_use_tools or not tools else dict(NO_TOOLS),
                )
            except ModelError as e:
                if not server or not self._search_failed(e, ctx):
                    raise
                # answer without searching: the same request without the server tools, once
                server, note = [], NO_SEARCH_NOTE
                messages = _without_server_blocks(messages)
                carried = storable(carried)
                continue
            out.usage = out.usage + reply.usage
            self.spend("tool" if out.rounds else "answer", reply)
            blocks = [b for b in reply.blocks if b.get("type") != "text" or str(b.get("text", "")).strip()]
            trail.add_reply(
                blocks, {"web_search_requests": reply.usage.web_searches, "web_fetch_requests": reply.usage.web_fetches}
            )
            text = joined_text(blocks) if reply.content else reply.text.strip()
            if text:
                shown.append(text)
                separate = True
            if reply.stop_reason == "pause_turn" and pauses < MAX_PAUSES and blocks:
                # the server paused a long search loop: send its content back as is, and it goes on
                if carried:
                    messages = messages[:-1]
                pauses += 1
                carried += blocks
                messages = [*messages, {"role": "assistant", "content": list(carried)}]
                continue
            record = {"at": iso(self.now()), "model": reply.model or self.model.name, "usage": reply.usage.as_dict()}
            tool_uses = reply.tool_calls if may_use_tools else []
            if not tool_uses:
                final = joined_text([*carried, *blocks])
                if not final.strip() and not text:
                    raise ModelError("empty", f"stop_reason={reply.stop_reason}")
                if trail.failed and not note:
                    note = NO_SEARCH_NOTE
                    log.warning("chat %s: web search failed (%s)", ctx.chat_id, ", ".join(sorted(set(trail.errors))))
                stored: dict[str, Any] = {"role": "assistant", "content": with_sources(final, trail, note), **record}
                if trail.sources:
                    stored["sources"] = trail.stored()
                if trail.searches or trail.fetches or trail.errors:
                    stored["web"] = {"searches": trail.searches, "fetches": trail.fetches}
                out.stored.append(stored)
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
            # stored: without the encrypted search results and citations; sent on within this turn: as is
            assistant_msg = {"role": "assistant", "content": api_content(storable([*carried, *blocks])), **record}
            result_msg = {"role": "user", "content": results, "at": iso(self.now())}
            out.stored += [assistant_msg, result_msg]
            if carried:
                messages = messages[:-1]  # the paused assistant message, continued by this reply
            messages = [*messages, {"role": "assistant", "content": [*carried, *blocks]}, api_message(result_msg)]
            carried, pauses = [], 0
        out.text = with_sources("\n\n".join(shown), trail, note)
        out.note = note
        out.calls = tuple(calls)
        return out

    def _search_failed(self, error: ModelError, ctx: ToolContext) -> bool:
        """Whether ``error`` is the web search's fault, so the question should be answered without it."""
        if error.kind == "bad_request" and search_disabled_error(error.detail):
            if self.web is not None:
                self.web.disabled = "web search is not enabled for this organization"
            log.warning("chat %s: web search is not enabled for the organization; answering without it", ctx.chat_id)
            return True
        if error.kind == "timeout":
            log.warning("chat %s: the request with web search timed out; answering without it", ctx.chat_id)
            return True
        return False


def joined_text(blocks: list[dict[str, Any]]) -> str:
    """The text of content blocks: adjacent text blocks (split by citations) joined as they are,
    a new paragraph where a search or another block came between them."""
    out = ""
    gap = False
    for b in blocks:
        if b.get("type") != "text":
            gap = bool(out)
            continue
        piece = str(b.get("text", ""))
        if gap and piece.strip():
            out = out.rstrip() + "\n\n" + piece.lstrip()
            gap = False
        else:
            out += piece
    return out.strip()


def _without_server_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages without web search blocks (and without an assistant message left empty by that)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        content = m.get("content")
        if m.get("role") == "assistant" and isinstance(content, list):
            kept = storable(content)
            if not kept:
                continue
            m = {**m, "content": kept}
        out.append(m)
    return out
