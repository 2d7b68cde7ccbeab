"""The ask() service: memory in, Claude and its tools, memory out. Front ends (Telegram, terminal) call it.

One object owns building the request from memory and writing the turn back:
- the system prompt is laid out for caching (bot/core/prompt.py): persona and the chat's facts,
  then the rolling summary, then a fresh time line that is never cached;
- every message after the point the summary covers is sent verbatim as whole turns (read
  from the transcript's end); the window's trimming is only a safety net;
- the tool loop: when Claude asks for tools (remember, forget, …) they run and their results
  go back, at most ``max_tool_rounds`` times per question, then Claude must answer;
- the whole exchange (question, tool calls, tool results, answer) is appended as one turn,
  once, only after a successful answer; a failure anywhere stores nothing;
- compaction (``maintain``) runs in the background after the reply was delivered, never under
  the chat's lock and with a total time limit, so the user never waits for it;
- every model call's usage is reported to ``on_spend`` with the user who caused it (answers,
  tool rounds and summaries), for cost accounting and limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.claude.model import Model, ModelError, Reply, TextCallback, Usage
from bot.core import admission
from bot.core.locks import ChatLocks
from bot.core.memoryview import OFFSET, ChatMemory  # noqa: F401
from bot.core.question import (  # noqa: F401  (the service's vocabulary, imported from here by the front ends)
    Answer,
    ChatId,
    Held,
    NothingToRetry,
    Question,
    Reserve,
    Spend,
    SpendSink,
    utc_now,
    valid_text,
)
from bot.core.sources import MAX_SOURCES
from bot.core.toolloop import ToolLoop, api_message, iso
from bot.core.turnlog import log_turn
from bot.core.upkeep import Upkeep
from bot.texts import lang_of_text
from bot.tools import Tool, Toolbox, ToolContext
from bot.tools.facts import fact_tools
from bot.tools.recall import recall_tools
from bot.tools.web import WebSearch, supports_web_search
from memory.content import content_text
from memory.conversations import Conversation, unarchive
from memory.facts import FactStore
from memory.pending import PendingStore
from memory.recall import RecallIndex
from memory.summary import Budget, Summarize, SummaryMemory
from memory.transcript import Transcript
from memory.turns import complete_turns, is_complete
from memory.window import drop_superseded

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 4
"""Tool rounds per question; after that Claude must answer without tools."""


COMPACTION_TIMEOUT = 120.0
"""Seconds one background compaction may take in all (summarizer calls included)."""


_iso = iso
_api_message = api_message


class Assistant(ChatMemory):
    """Answers questions per chat with memory. Safe for many chats at once; one turn per chat at a time."""

    def __init__(
        self,
        *,
        transcript: Transcript,
        model: Model,
        timezone: str = "Asia/Seoul",
        max_messages: int = 20,
        max_chars: int = 8000,
        max_tokens: int | None = None,
        now: Callable[[], datetime] = utc_now,
        summarizer: Summarize | None = None,
        summary_budget: Budget | None = None,
        summarizer_name: str = "",
        summary_timeout: float = COMPACTION_TIMEOUT,
        facts: FactStore | None = None,
        tools: Sequence[Tool] = (),
        max_tool_rounds: int = MAX_TOOL_ROUNDS,
        on_spend: SpendSink | None = None,
        recall: RecallIndex | None = None,
        recall_turns: int = 5,
        web: WebSearch | None = None,
    ) -> None:
        self.transcript = transcript
        self.model = model
        self.timezone = timezone
        self.max_messages = max_messages
        self.max_chars = max_chars
        self.max_tokens = max_tokens
        self.now = now
        self.max_tool_rounds = max_tool_rounds
        self.facts = facts or FactStore(transcript.root, now=lambda: self.now())
        self.recall = recall
        self.recall_turns = recall_turns
        self.web = web  # web search (bot/tools/web.py); None: never
        recalling = recall_tools(recall, timezone) if recall is not None else []
        self.toolbox = Toolbox([*fact_tools(self.facts), *recalling, *tools])
        self.on_spend = on_spend
        self.may_remind: Callable[[ToolContext], str | None] | None = None  # read by the reminder tools
        self.reserve: Reserve | None = None  # checked before every model call (answers, tool rounds, summaries)
        self.locks = ChatLocks()
        self.admission = admission.Admission()  # front ends hold a place per question (bot/core/admission.py)
        self.pending = PendingStore(transcript.root)
        self._failed: dict[str, tuple[Question, bool]] = {}  # chat -> (failed question, was it a retry)
        # summarizer None: no compaction (a summary already on disk is still used)
        self.memory = SummaryMemory(
            transcript,
            summarizer,
            (summary_budget or Budget()).fitted(max_messages, max_chars),
            model=summarizer_name or str(getattr(summarizer, "name", "")),
            now=lambda: self.now(),
            timeout=summary_timeout,
        )
        self.upkeep = Upkeep(self.memory, recall, summary_timeout)

    # -- per-chat serialisation ------------------------------------------------
    def lock(self, chat_id: ChatId) -> AbstractAsyncContextManager[None]:
        """The chat's lock (re-entrant for its holder): one chat's turns strictly one after another.

        Front ends may hold it across asking and delivering; ``ask``, ``retry`` and ``reset``
        take it too. Background compaction never takes it.
        """
        return self.locks.hold(chat_id)

    # -- usage ---------------------------------------------------------------------
    def spend(self, chat_id: ChatId, user_id: int | None, kind: str, model: str, usage: Usage) -> None:
        """Report one model call's usage (never raises: accounting must not break an answer)."""
        if self.on_spend is None:
            return
        try:
            self.on_spend(Spend(str(chat_id), user_id, kind, model, usage))
        except Exception:
            log.warning("chat %s: recording usage failed", chat_id, exc_info=True)

    # -- the service ---------------------------------------------------------------
    async def ask(self, chat_id: ChatId, question: Question | str, *, on_text: TextCallback | None = None) -> Answer:
        """Answer ``question`` with the chat's memory and tools; store the turn on success.

        Raises ModelError when the model fails; then nothing is stored and the
        question can be re-sent with ``retry``.
        """
        q = Question(question) if isinstance(question, str) else question
        async with self.lock(chat_id):
            return await self._ask_locked(chat_id, q, on_text=on_text, retry=False)

    async def retry(
        self,
        chat_id: ChatId,
        *,
        on_text: TextCallback | None = None,
        restore: Callable[[Question], Awaitable[Question]] | None = None,
        user_id: int | None = None,
        may_manage: Callable[[], bool] | None = None,
    ) -> tuple[Question, Answer]:
        """Re-ask the last question: the failed one, or else the last answered one.

        A re-asked answered question replaces the earlier turn in what is sent next (the
        transcript keeps both). A stored question is rebuilt from its text and stored
        fields; ``restore`` may add back what was not stored (e.g. a front end downloads
        the photo again from its stored file id).
        """
        async with self.lock(chat_id):
            failed = await self._unanswered(chat_id)
            if failed is not None:
                question, was_retry = failed
                if user_id is not None:
                    question = Question(question.text, question.attachments, question.meta, user_id, may_manage)
                if restore is not None and not question.attachments:
                    question = await restore(question)
                return question, await self._ask_locked(chat_id, question, on_text=on_text, retry=was_retry)
            turns = complete_turns(drop_superseded(await asyncio.to_thread(self._tail, chat_id)))
            # a delivered reminder is recorded as a turn ("reminder": id) that nobody asked: skip it
            asked = [i for i, turn in enumerate(turns) if "reminder" not in turn[0]]
            if not asked:
                raise NothingToRetry
            last = turns[asked[-1]][0]
            meta = {k: v for k, v in last.items() if k not in ("role", "content", "at", "retry", OFFSET)}
            q = Question(content_text(last["content"]), meta=meta, user_id=user_id, may_manage=may_manage)
            if restore is not None:
                q = await restore(q)
            # the new answer replaces the old one only when that was the last turn
            replaces = asked[-1] == len(turns) - 1
            return q, await self._ask_locked(chat_id, q, on_text=on_text, retry=replaces)

    async def unanswered(self, chat_id: ChatId) -> Question | None:
        """The question ``retry`` would ask again because it got no answer (failed or cancelled), if any."""
        failed = await self._unanswered(chat_id)
        return failed[0] if failed is not None else None

    async def _unanswered(self, chat_id: ChatId) -> tuple[Question, bool] | None:
        return self._failed.get(str(chat_id)) or await asyncio.to_thread(self._load_pending, chat_id)

    async def _ask_locked(self, chat_id: ChatId, q: Question, *, on_text: TextCallback | None, retry: bool) -> Answer:
        asked_at = self.now()
        started = time.monotonic()
        if valid_text(q.text) != q.text:
            q = replace(q, text=valid_text(q.text))
        try:
            wants = getattr(self.model, "wants_system_messages", None)
            in_messages = bool(await wants()) if wants is not None else False
            try:
                result, offset = await self._run_loop(chat_id, q, asked_at, retry, in_messages, on_text)
            except ModelError as e:
                if e.kind != "system_messages" or not in_messages:
                    raise
                # refused with a system message in it: once more in the layout every model takes
                log.info("chat %s: %s takes no system messages; time line back in the system prompt", chat_id,
                         self.model.name)  # fmt: skip
                result, offset = await self._run_loop(chat_id, q, asked_at, retry, False, on_text)
            turn = result.stored
            answer = Answer(
                result.text,
                result.usage,
                result.rounds,
                result.calls,
                sources=tuple((s.title, s.url) for s in result.web.sources[:MAX_SOURCES]),
                note=result.note,
            )
        except asyncio.CancelledError:
            # cancelled (Ctrl-C in the terminal, a shutdown): the question is kept for /retry like a
            # failed one, and replaces an older failed one (in memory and in <chat>.pending.json)
            self._failed[str(chat_id)] = (q, retry)
            await _finish_despite_cancel(asyncio.to_thread(self._save_pending, chat_id, q, retry, asked_at))
            raise
        except ModelError as e:
            log.warning("chat %s: model call failed (%s)", chat_id, e.kind)
            if e.kind == "refusal":
                # a refused question is neither stored nor kept for /retry: it is not replayed
                self._failed.pop(str(chat_id), None)
                await asyncio.to_thread(self.pending.clear, chat_id)
            else:
                self._failed[str(chat_id)] = (q, retry)
                await asyncio.to_thread(self._save_pending, chat_id, q, retry, asked_at)
            log_turn(chat_id, latency=time.monotonic() - started, usage=None, tool_rounds=0, outcome=e.kind,
                     question=q.text)  # fmt: skip
            raise
        user: dict[str, Any] = {"role": "user", "content": q.text, "at": _iso(asked_at), **q.meta}
        if retry:
            user["retry"] = True
        stored = [user, *turn]
        if not is_complete(stored):  # never store what could not be sent back
            raise RuntimeError(f"chat {chat_id}: refusing to store an incomplete turn")
        # one append of the whole turn, fsynced before the reply is shown
        try:
            await _finish_despite_cancel(asyncio.to_thread(self._store_turn, chat_id, stored))
        except OSError as e:  # disk full, read-only, no permission: the answer is shown, and said unsaved
            log.error("chat %s: the answer could not be saved: %s", chat_id, e)
            self._failed.pop(str(chat_id), None)
            return replace(answer, saved=False)
        self._failed.pop(str(chat_id), None)
        log_turn(chat_id, latency=time.monotonic() - started, usage=answer.usage, tool_rounds=answer.tool_rounds,
                 outcome="ok", question=q.text, answer=answer.text)  # fmt: skip
        return answer

    async def _run_loop(
        self,
        chat_id: ChatId,
        q: Question,
        asked_at: datetime,
        retry: bool,
        system_messages: bool,
        on_text: TextCallback | None,
    ) -> tuple[Any, int]:
        system, messages, offset = await asyncio.to_thread(self._prepare, chat_id, q, asked_at, retry, system_messages)
        source = {"offset": offset, "at": _iso(asked_at)}
        ctx = ToolContext(str(chat_id), asked_at, source, dict(q.meta), q.user_id, q.may_manage)
        held: list[Held] = []  # what this question's calls hold of the user's daily token budget

        async def before_call(request: Mapping[str, Any]) -> bool | None:
            admission.leave()  # the model's time is never held: the next question prepares meanwhile
            if self.reserve is None:
                return None
            hold = await self.reserve(q.user_id, request, held[-1] if held else None)
            held[:] = [hold]
            return getattr(hold, "search", None)  # False: this call may not search (the search budget is held)

        def spend(kind: str, reply: Reply) -> None:
            self.spend(chat_id, q.user_id, kind, reply.model or self.model.name, reply.usage)
            for hold in held:
                hold.park()

        loop = ToolLoop(
            self.model,
            self.toolbox,
            max_rounds=self.max_tool_rounds,
            max_tokens=self.max_tokens,
            now=self.now,
            spend=spend,
            before_call=before_call,
            lang=lang_of_text(q.text),
            web=await self._web_for(),
            search_allowed=self.web is not None and self.web.allowed(q.user_id),
        )
        try:
            return await loop.run(system, messages, ctx, on_text), offset
        finally:
            _release(held)

    async def _web_for(self) -> WebSearch | None:
        """The web tools to declare, or None: off, the model does not take it (the Models API's capabilities,
        else by name), or the organization has it disabled. The same for everyone in the chat (who may search
        is enforced per call, not by changing ``tools``, which would invalidate the whole cache)."""
        if self.web is None:
            return None
        info = getattr(self.model, "info", None)
        if info is not None:
            try:
                capabilities = (await info()).capabilities or None
            except Exception:  # what is known about the model never costs an answer
                capabilities = None
            self.web.model_supports = supports_web_search(self.model.name, capabilities)
        return self.web if self.web.active else None

    def _store_turn(self, chat_id: ChatId, stored: list[dict[str, Any]]) -> None:
        with self._foreground():
            self.transcript.append(chat_id, stored)
        try:
            self.pending.clear(chat_id)
        except OSError as e:  # the turn is stored; a stale pending question only matters to /retry
            log.warning("chat %s: could not remove the pending question: %s", chat_id, e)

    def _save_pending(self, chat_id: ChatId, q: Question, retry: bool, at: datetime) -> None:
        try:
            self.pending.save(chat_id, {"text": q.text, "meta": dict(q.meta), "retry": retry, "at": _iso(at)})
        except OSError as e:  # /retry still works until a restart
            log.warning("chat %s: could not keep the failed question for /retry: %s", chat_id, e)

    def _load_pending(self, chat_id: ChatId) -> tuple[Question, bool] | None:
        data = self.pending.load(chat_id)
        if data is None:
            return None
        meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
        return Question(str(data["text"]), meta=meta), bool(data.get("retry"))

    def _prepare(
        self, chat_id: ChatId, q: Question, asked_at: datetime, retry: bool, system_messages: bool = False
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
        """The request and the transcript offset where this turn will be stored (file reads: off the loop)."""
        with self._foreground():
            offset = self.transcript.size(chat_id)
            # what the asker may not read with a command is not handed to the model on their behalf
            # (may_manage may ask Telegram: this runs in a worker thread)
            reads_history = q.may_manage is None or q.may_manage()
            system, messages = self.build_request(
                chat_id,
                q,
                now=asked_at,
                drop_last_turn=retry,
                system_messages=system_messages,
                reads_history=reads_history,
            )
            return system, messages, offset

    def _foreground(self) -> contextlib.AbstractContextManager[None]:
        """Around a question's own work: a background build of a recall index pauses meanwhile."""
        return self.recall.foreground() if self.recall is not None else contextlib.nullcontext()

    async def maintain(self, chat_id: ChatId, *, user_id: int | None = None, wait: bool = True) -> None:
        """Upkeep after a reply, in the background (bot/core/upkeep.py): recall indexing, then compaction.

        Never under the chat's lock, never raises; ``user_id`` pays for the summary. With ``wait``
        the call returns when it is done (the terminal chat, tests); the Telegram bot does not wait.
        """
        await self.upkeep.schedule(chat_id, user_id=user_id, wait=wait)

    async def aclose(self) -> None:
        """Cancel background upkeep (at shutdown); a cancelled compaction writes nothing."""
        await self.upkeep.aclose()

    def _archive_files(self, chat_id: ChatId, stamp: str) -> Path | None:
        with self.memory.store.lock(chat_id, blocking=True):
            path = self.transcript.archive(chat_id, stamp)
            self.memory.archive(chat_id, path, stamp)
            return path

    async def reset(self, chat_id: ChatId) -> str | None:
        """Start a fresh conversation: archive (rename) the transcript and its summary; nothing is deleted.

        Facts belong to the chat and stay. Returns the archive's file name, or None when
        there was nothing to archive.
        """
        async with self.lock(chat_id):
            self._failed.pop(str(chat_id), None)
            await self.upkeep.cancel(chat_id)
            await asyncio.to_thread(self.pending.clear, chat_id)
            stamp = self.now().astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
            path = await asyncio.to_thread(self._archive_files, chat_id, stamp)
            return path.name if path else None

    async def resume(self, conversation: Conversation) -> str | None:
        """Make an archived conversation (memory/conversations.py) its chat's current one again.

        The chat's current conversation is archived first, as by ``reset``; returns its archive's
        file name, or None when there was none. Nothing is deleted.
        """
        chat_id = conversation.chat_id
        async with self.lock(chat_id):
            name = await self.reset(chat_id)
            await asyncio.to_thread(self._unarchive, conversation)
            return name

    def _unarchive(self, conversation: Conversation) -> None:
        with self.memory.store.lock(conversation.chat_id, blocking=True):
            unarchive(self.transcript, conversation)


def _release(held: list[Held]) -> None:
    while held:
        held.pop().release()


async def _finish_despite_cancel(work: Awaitable[None]) -> None:
    """Await ``work`` to the end even if the caller is cancelled (once or many times) meanwhile.

    Used for storing a finished turn: the caller then returns the stored answer instead of
    reporting it lost (which would make the user ask, and store, it twice). The cancellation
    requests that arrived are withdrawn.
    """
    job = asyncio.ensure_future(work)
    cancels = 0
    while not job.done():
        try:
            await asyncio.shield(job)
        except asyncio.CancelledError:
            if job.done() and job.cancelled():
                raise
            cancels += 1
    task = asyncio.current_task()
    if task is not None:
        for _ in range(cancels):
            task.uncancel()
    job.result()
