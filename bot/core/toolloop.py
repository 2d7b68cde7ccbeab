"""The tool-use loop of one question: ask Claude, run the tools it calls, ask again until it answers.

At most ``max_rounds`` tool rounds run. A call after that is sent exactly like the others (same
``tools``, same ``tool_choice``: changing ``tool_choice`` would invalidate the cached messages, per the
prompt caching page); tool calls Claude still makes are not run but answered with an error result saying
the limit is reached. Only if Claude calls tools once more after that does the last request say
``tool_choice: none`` (one cache miss, in a case that should not happen). Between rounds
the conversation so far is marked for caching. Text Claude writes before a tool call is streamed
as it arrives; the next round's text starts on a new paragraph.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from bot.claude.model import CONTEXT_FULL, Model, ModelError, Reply, TextCallback, Usage
from bot.core.prompt import with_cache_breakpoint
from bot.core.sources import WebTrail, storable, with_sources
from bot.texts import progress_text
from bot.tools import Toolbox, ToolContext
from bot.tools.web import WebSearch, search_disabled_error
from memory.content import api_content

log = logging.getLogger(__name__)

NO_TOOLS = {"type": "none"}
LATE_ROUNDS = 2
"""Rounds from ``max_rounds`` on whose tool calls are answered "limit reached" before ``tool_choice: none``."""
LIMIT_REACHED = (
    "Not run: the limit of tool calls for this question is reached. Answer the user now with what you have, "
    "without calling tools."
)


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
    notice: str = ""  # shown after the answer, never stored (e.g. "the answer was cut")
    web: WebTrail = field(default_factory=WebTrail)  # what the web search found and cited
    note: str = ""  # said under the answer (and stored) when the web could not be searched


THINKING = ("thinking", "redacted_thinking")
MAX_PAUSES = 4
"""How many times one question's turn may be continued after ``pause_turn`` (server tools)."""


def without_thinking(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks to store: a completed turn is kept without its thinking (allowed: thinking from
    earlier turns may be dropped; only the current turn's must go back, verbatim)."""
    return [b for b in blocks if b.get("type") not in THINKING]


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
        before_call: Callable[[Mapping[str, Any]], Awaitable[bool | None]] | None = None,
        lang: str = "ko",
        web: WebSearch | None = None,
        search_allowed: bool = True,
    ) -> None:
        self.model = model
        # the web tools, declared on every request of the chat while search is on (off, not supported by
        # the model or the organization: None): a changed ``tools`` would invalidate the whole cache
        self.web = web
        # whether the person asking may search now (owner only, daily limit): else the tools stay, Claude is
        # told search is not available to them, and a call that starts a search anyway is cut (allow_search)
        self.search_allowed = search_allowed
        self.toolbox = toolbox
        self.max_rounds = max_rounds
        self.max_tokens = max_tokens
        self.now = now
        self.spend = spend  # (kind "answer" | "tool", reply): every model call's usage
        self.lang = lang
        # called with the request (system, messages, tools, max_tokens, searches: the web tool's max_uses when
        # this call may search) before every model call; may raise ModelError (e.g. "limit": the daily token
        # budget is spent); returns False when this call may not search (the user's search budget is spent)
        self.before_call = before_call

    async def run(
        self,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        ctx: ToolContext,
        on_text: TextCallback | None,
    ) -> LoopResult:
        """Raises ModelError when a call fails, the model refuses, a tool call was cut by the output
        limit, or the final answer is empty (nothing is stored then)."""
        schemas = self.toolbox.schemas()
        server = self.web.tools() if self.web is not None else []  # after ours: the cached prefix never moves
        if server and not self.search_allowed:
            system, messages = with_notice(system, messages, NO_SEARCH_NOTICE)
        question = messages  # the question's own prefix (history, question, per-turn context): restarts go back to it
        refused_search = False  # the last call started a search its asker may not run: the next one answers
        refused_once = False  # (once per question: a second cut is an error, never a loop)
        out = LoopResult()
        trail = out.web
        note = ""
        shown: list[str] = []
        calls: list[str] = []
        separate = False  # text was shown before this round: start the next text on a new paragraph
        paused: list[dict[str, Any]] = []  # blocks of a turn paused by the API (pause_turn), sent back as they came
        pauses = 0

        fed = False  # something was streamed already
        ended_in_progress = False  # the last thing streamed was a progress line (it ends its own paragraph)

        async def feed(delta: str) -> None:
            nonlocal separate, fed, ended_in_progress
            if on_text is None or not delta:
                return
            fed, ended_in_progress = True, False
            if separate:
                separate = False
                await on_text("\n\n")
            await on_text(delta)

        async def progress(name: str) -> None:
            # between tool calls the 5.5 models write their notes as thinking: show what is being done
            nonlocal separate, fed, ended_in_progress
            if on_text is None:
                return
            await on_text(("\n\n" if fed else "") + progress_text(name, self.lang) + "\n\n")
            fed, separate, ended_in_progress = True, False, True

        while True:
            may_use_tools = out.rounds < self.max_rounds  # tool calls are run (else answered "limit reached")
            forced_answer = out.rounds >= self.max_rounds + LATE_ROUNDS
            sent = [*messages, {"role": "assistant", "content": list(paused)}] if paused else messages
            tools = [*schemas, *server]
            may_search = bool(server) and self.search_allowed
            if self.before_call is not None:
                request = {"system": system, "messages": sent, "tools": tools, "max_tokens": self.max_tokens}
                if may_search and self.web is not None:
                    request["searches"] = self.web.settings.max_uses
                verdict = await self.before_call(request)  # always: it holds the call's tokens
                may_search = may_search and verdict is not False
            answer_now = (forced_answer or refused_search) and bool(tools)
            refused_search = False
            try:
                reply: Reply = await self.model.complete(
                    system=system,
                    messages=round_breakpoint(sent) if out.rounds or paused else sent,
                    max_tokens=self.max_tokens,
                    on_text=feed,
                    tools=tools or None,
                    tool_choice=dict(NO_TOOLS) if answer_now else None,
                    on_tool=progress if may_use_tools and tools else None,
                    allow_search=may_search or not server,
                )
            except ModelError as e:
                if e.reply is not None:  # billed (a refusal, an empty answer): charged to the asker all the same
                    out.usage = out.usage + e.reply.usage
                    self.spend("tool" if out.rounds else "answer", e.reply)
                if e.kind == "search_refused" and not refused_once:
                    # Claude started a search its asker may not run: the same request again, told to answer
                    # (tool_choice none: only this call's cached messages are lost, its prefix is unchanged)
                    log.info("chat %s: a web search the asker may not run was cut", ctx.chat_id)
                    refused_search = refused_once = True
                    continue
                if not server or not self._search_failed(e, ctx):
                    raise
                # answer without searching, once: the question again from its own prefix, without the web
                # tools. Nothing of this turn goes back (no signed thinking whose prefix, tools included, would
                # now differ: a 400 on the models with the prefix check), so changing the tools is safe.
                server, note = [], progress_text("no_search", self.lang)
                messages, paused, shown[:] = question, [], []
                out.stored, out.rounds, out.web = [], 0, WebTrail()
                trail = out.web
                continue
            out.usage = out.usage + reply.usage
            self.spend("tool" if out.rounds else "answer", reply)
            trail.add_reply(
                reply.blocks,
                {"web_search_requests": reply.usage.web_searches, "web_fetch_requests": reply.usage.web_fetches},
            )
            text = joined_text(reply.blocks) if reply.content else reply.text.strip()
            if text:
                shown.append(text)
                separate = not ended_in_progress
            blocks = [*paused, *reply.blocks]  # this assistant turn so far, exactly as received
            if reply.stop_reason == "pause_turn":
                pauses += 1
                if pauses > MAX_PAUSES:
                    raise ModelError("server", "pause_turn repeated")
                paused = blocks
                continue
            paused = []
            record = {"at": iso(self.now()), "model": reply.model or self.model.name, "usage": reply.usage.as_dict()}
            tool_uses = [b for b in blocks if b.get("type") == "tool_use"] if not answer_now else []
            cut = reply.stop_reason in ("max_tokens", CONTEXT_FULL)
            if tool_uses and cut:
                # the last tool call's input is incomplete: never run it (nor store the turn)
                raise ModelError("cut" if reply.stop_reason == "max_tokens" else "context_full", "in a tool call")
            if not tool_uses:
                final = joined_text(blocks)  # text blocks split by citations joined back, searches as gaps
                if not final:
                    kind = {"max_tokens": "cut", CONTEXT_FULL: "context_full"}.get(str(reply.stop_reason), "empty")
                    raise ModelError(kind, f"stop_reason={reply.stop_reason}")
                if trail.failed and not note:
                    note = progress_text("no_search", self.lang)
                    log.warning("chat %s: web search failed (%s)", ctx.chat_id, ", ".join(sorted(set(trail.errors))))
                # stored: what the user saw (the answer and its sources), never the encrypted results
                stored: dict[str, Any] = {"role": "assistant", "content": with_sources(final, trail, note), **record}
                if trail.sources:
                    stored["sources"] = trail.stored()
                if trail.searches or trail.fetches or trail.errors:
                    stored["web"] = {"searches": trail.searches, "fetches": trail.fetches}
                out.stored.append(stored)
                if cut:  # the answer stopped at a limit: said after it, not stored
                    why = "cut" if reply.stop_reason == "max_tokens" else "context_full"
                    out.notice = progress_text(why, self.lang)
                break
            out.rounds += 1
            results: list[dict[str, Any]] = []
            for use in tool_uses:
                name = str(use.get("name"))
                if not may_use_tools:  # past the limit: not run, Claude is told to answer
                    results.append({"type": "tool_result", "tool_use_id": str(use.get("id")), "is_error": True,
                                    "content": LIMIT_REACHED})  # fmt: skip
                    continue
                calls.append(name)
                web = replace(ctx, web_pages=tuple(trail.pages())) if trail.used else ctx
                result = await asyncio.to_thread(self.toolbox.run, name, use.get("input"), web)
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": str(use.get("id"))}
                block["content"] = result.text
                if result.is_error:
                    block["is_error"] = True
                results.append(block)
                log.info("chat %s: tool %s%s", ctx.chat_id, name, " (error)" if result.is_error else "")
            assistant_msg = {"role": "assistant", "content": api_content(storable(without_thinking(blocks))), **record}
            result_msg = {"role": "user", "content": results, "at": iso(self.now())}
            out.stored += [assistant_msg, result_msg]
            # the current turn goes back verbatim: thinking blocks with their signatures, in order
            messages = [*messages, {"role": "assistant", "content": blocks}, api_message(result_msg)]
        out.text = with_sources("\n\n".join(shown), trail, note)
        out.note = note
        if out.notice:
            out.text = f"{out.text}\n\n{out.notice}"
        out.calls = tuple(calls)
        return out

    def _search_failed(self, error: ModelError, ctx: ToolContext) -> bool:
        """Whether ``error`` is the web search's fault, so the question should be answered without it."""
        if error.kind in ("bad_request", "system_messages") and search_disabled_error(error.detail):  # both 400s
            if self.web is not None:
                self.web.disabled = "web search is not enabled for this organization"
            log.warning("chat %s: web search is not enabled for the organization; answering without it", ctx.chat_id)
            return True
        if error.kind == "timeout":
            log.warning("chat %s: the request with web search timed out; answering without it", ctx.chat_id)
            return True
        return False


def round_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of a later round with one cache breakpoint, on their last block: the question's own
    breakpoint is dropped (the API looks 20 blocks back from a breakpoint for a cached prefix, so the
    question's entry is still read), which keeps the request within the 4 breakpoints the API takes
    (tools and persona, facts, summary, this one). A marker is not content: the prefix is unchanged."""
    bare = [{**m, "content": [_unmarked(b) for b in m["content"]]} if isinstance(m.get("content"), list) else m
            for m in messages]  # fmt: skip
    return with_cache_breakpoint(bare)


def _unmarked(block: Any) -> Any:
    if isinstance(block, Mapping) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


NO_SEARCH_NOTICE = (
    "Web search is not available for this question: the person asking may not search the web now (only the "
    "owner may, or their daily search limit is reached). Do not call web_search or web_fetch; answer from what "
    "you know and say briefly that you could not search."
)
"""Told to Claude, in the per-turn context, when the web tools are declared but the asker may not search."""


def with_notice(
    system: list[dict[str, Any]], messages: list[dict[str, Any]], text: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``text`` (the bot's own words, never user data) added to the per-turn context: the mid-conversation
    system message after the question when there is one, else the end of the system prompt (after every
    cache breakpoint, like the time line): the cached prefix does not change either way."""
    block = {"type": "text", "text": text}
    last = messages[-1] if messages else None
    if last is not None and last.get("role") == "system":
        content = last["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        return system, [*messages[:-1], {**last, "content": [*parts, block]}]
    return [*system, block], messages


def joined_text(blocks: list[dict[str, Any]]) -> str:
    """The text of content blocks: adjacent text blocks (split by citations) joined as they are,
    a new paragraph where a search or a tool call came between them (thinking is no gap)."""
    out = ""
    gap = False
    for b in blocks:
        kind = b.get("type")
        if kind in THINKING:
            continue
        if kind != "text":
            gap = bool(out)
            continue
        piece = str(b.get("text", ""))
        if gap and piece.strip():
            out = out.rstrip() + "\n\n" + piece.lstrip()
            gap = False
        else:
            out += piece
    return out.strip()
