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
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.claude.model import Model, ModelError, TextCallback, Usage
from bot.core.locks import ChatLocks
from bot.core.prompt import build_system
from bot.core.toolloop import ToolLoop, api_message, iso
from bot.core.turnlog import log_turn
from bot.core.upkeep import Upkeep
from bot.tools import Tool, Toolbox, ToolContext
from bot.tools.facts import fact_tools
from bot.tools.recall import recall_tools
from memory.content import content_text
from memory.facts import Change, Fact, FactStore
from memory.pending import PendingStore
from memory.recall import RecallIndex, related_block
from memory.summary import Budget, Summarize, Summary, SummaryMemory
from memory.transcript import Transcript
from memory.turns import complete_turns, flatten, is_complete
from memory.window import drop_superseded, recent_window

log = logging.getLogger(__name__)

ChatId = int | str

MAX_TOOL_ROUNDS = 4
"""Tool rounds per question; after that Claude must answer without tools."""


OFFSET = "_offset"
"""Where a message read from the transcript starts (kept beside its fields, never sent or stored)."""

COMPACTION_TIMEOUT = 120.0
"""Seconds one background compaction may take in all (summarizer calls included)."""


@dataclass(frozen=True)
class Spend:
    """One model call's usage and who caused it (``kind``: answer, tool, summary)."""

    chat_id: str
    user_id: int | None
    kind: str
    model: str
    usage: Usage


SpendSink = Callable[[Spend], None]



class NothingToRetry(Exception):
    """/retry with no question to re-ask."""


@dataclass(frozen=True)
class Answer:
    text: str
    usage: Usage = field(default_factory=Usage)
    tool_rounds: int = 0
    tool_calls: tuple[str, ...] = ()  # names of the tools that ran, in order
    saved: bool = True  # False: the turn could not be written (disk full, read-only); the user must be told


@dataclass(frozen=True)
class Question:
    """A question as the front end received it."""

    text: str
    attachments: tuple[dict[str, Any], ...] = ()  # API content blocks sent with it, never stored
    meta: Mapping[str, Any] = field(default_factory=dict)  # extra fields stored with the user turn
    user_id: int | None = None  # who asks (for cost accounting; not stored unless in meta)


def valid_text(text: str) -> str:
    """``text`` with lone surrogates (invalid Unicode a client may send) replaced by U+FFFD.

    Neither the API (JSON in UTF-8) nor the transcript can carry them.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def utc_now() -> datetime:
    return datetime.now(UTC)


_iso = iso
_api_message = api_message


class Assistant:
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
        recalling = recall_tools(recall, timezone) if recall is not None else []
        self.toolbox = Toolbox([*fact_tools(self.facts), *recalling, *tools])
        self.on_spend = on_spend
        self.may_remind: Callable[[ToolContext], str | None] | None = None  # read by the reminder tools
        self.locks = ChatLocks()
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

    # -- reading memory ----------------------------------------------------------
    def _unsummarized(self, chat_id: ChatId) -> tuple[Summary | None, list[dict[str, Any]]]:
        """The verified summary and the newest stored messages after what it covers.

        Reads from the end of the transcript and never before the summary's offset; some
        slack beyond the window for tool exchanges and lines dropped as superseded or torn.
        """
        summary, entries = self.memory.unsummarized(chat_id, self.max_messages * 3 + 4)
        return summary, [{**e.data, OFFSET: e.offset} for e in entries]

    def _tail(self, chat_id: ChatId) -> list[dict[str, Any]]:
        return self._unsummarized(chat_id)[1]

    def _window(self, stored: list[dict[str, Any]], drop_last_turn: bool) -> list[dict[str, Any]]:
        kept = drop_superseded(stored)
        if drop_last_turn:
            kept = flatten(complete_turns(kept)[:-1])
        # normally the whole unsummarized tail fits; this trims only when summarizing fell behind
        return recent_window(kept, self.max_messages, self.max_chars)

    def history(self, chat_id: ChatId, *, drop_last_turn: bool = False) -> list[dict[str, Any]]:
        """The stored turns that the next request will carry verbatim, oldest first."""
        return [{k: v for k, v in m.items() if k != OFFSET} for m in self._window(self._tail(chat_id), drop_last_turn)]

    def summary(self, chat_id: ChatId) -> str | None:
        """The chat's rolling summary of the older conversation, or None (shown by /summary)."""
        summary = self.memory.load(chat_id)
        return summary.text if summary else None

    def question_content(self, question: Question) -> str | list[dict[str, Any]]:
        """The new user message's content as sent: attachments first, then the text."""
        if not question.attachments:
            return question.text
        return [*question.attachments, {"type": "text", "text": question.text or "(사진 / photo)"}]

    def build_request(
        self, chat_id: ChatId, question: Question, *, now: datetime, drop_last_turn: bool = False
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(system blocks, messages) for one request: facts and summary in the system prompt, then the turns.

        Reads files: call it off the event loop.
        """
        summary, stored = self._unsummarized(chat_id)
        window = self._window(stored, drop_last_turn)
        history = [_api_message(m) for m in window]
        # what came before the verbatim part may be recalled (the summary has only its gist)
        first_verbatim = window[0].get(OFFSET) if window else None
        if first_verbatim is None:
            first_verbatim = stored[-1][OFFSET] if stored and not window else None
        related = self._related(chat_id, question.text, now, first_verbatim)
        system = build_system(
            now,
            self.timezone,
            summary=summary.text if summary else None,
            facts=self.facts.list(chat_id),
            volatile=[related] if related else (),
        )
        return system, [*history, {"role": "user", "content": self.question_content(question)}]

    def _related(self, chat_id: ChatId, text: str, now: datetime, before: int | None) -> str | None:
        """The related-memories block for this question, or None (recall off, nothing relevant, or it failed)."""
        if self.recall is None or self.recall_turns <= 0 or not text.strip():
            return None
        try:
            today = now.astimezone(ZoneInfo(self.timezone)).date()
            hits = self.recall.related(chat_id, text, self.recall_turns, before=before, today=today)
            return related_block(hits, self.timezone)
        except Exception:  # recall only adds context: never let it cost an answer
            log.warning("chat %s: recall failed; answering without it", chat_id, exc_info=True)
            return None

    def search(self, chat_id: ChatId, query: str, limit: int = 5) -> list[Any]:
        """The best matches for ``query`` over the chat's whole history (for /search); [] without recall."""
        if self.recall is None:
            return []
        today = self.now().astimezone(ZoneInfo(self.timezone)).date()
        return self.recall.search(chat_id, query, limit, today=today)

    # -- facts (the /memory, /remember and /forget commands) ----------------------------
    def list_facts(self, chat_id: ChatId) -> list[Fact]:
        return self.facts.list(chat_id)

    def remember(self, chat_id: ChatId, text: str) -> Change:
        """Add a fact the user gave with /remember; raises FactError with a reason."""
        return self.facts.add(chat_id, text, source={"offset": self.transcript.size(chat_id), "via": "command"})

    def forget(self, chat_id: ChatId, fact_id: str) -> Fact:
        """Remove one fact (/forget <id>); raises FactError for an unknown id."""
        return self.facts.forget(chat_id, fact_id)

    def forget_all(self, chat_id: ChatId) -> Path | None:
        """Put every fact aside (/forget all): the file is renamed into chats/archive/, never deleted."""
        stamp = self.now().astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        return self.facts.archive(chat_id, stamp)

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
    ) -> tuple[Question, Answer]:
        """Re-ask the last question: the failed one, or else the last answered one.

        A re-asked answered question replaces the earlier turn in what is sent next (the
        transcript keeps both). A stored question is rebuilt from its text and stored
        fields; ``restore`` may add back what was not stored (e.g. a front end downloads
        the photo again from its stored file id).
        """
        async with self.lock(chat_id):
            failed = self._failed.get(str(chat_id)) or await asyncio.to_thread(self._load_pending, chat_id)
            if failed is not None:
                question, was_retry = failed
                if user_id is not None:
                    question = Question(question.text, question.attachments, question.meta, user_id)
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
            q = Question(content_text(last["content"]), meta=meta, user_id=user_id)
            if restore is not None:
                q = await restore(q)
            # the new answer replaces the old one only when that was the last turn
            replaces = asked[-1] == len(turns) - 1
            return q, await self._ask_locked(chat_id, q, on_text=on_text, retry=replaces)

    async def _ask_locked(self, chat_id: ChatId, q: Question, *, on_text: TextCallback | None, retry: bool) -> Answer:
        asked_at = self.now()
        started = time.monotonic()
        if valid_text(q.text) != q.text:
            q = replace(q, text=valid_text(q.text))
        try:
            system, messages, offset = await asyncio.to_thread(self._prepare, chat_id, q, asked_at, retry)
            source = {"offset": offset, "at": _iso(asked_at)}
            ctx = ToolContext(str(chat_id), asked_at, source, dict(q.meta), q.user_id)
            loop = ToolLoop(
                self.model,
                self.toolbox,
                max_rounds=self.max_tool_rounds,
                max_tokens=self.max_tokens,
                now=self.now,
                spend=lambda kind, reply: self.spend(
                    chat_id, q.user_id, kind, reply.model or self.model.name, reply.usage
                ),
            )
            result = await loop.run(system, messages, ctx, on_text)
            turn = result.stored
            answer = Answer(result.text, result.usage, result.rounds, result.calls)
        except ModelError as e:
            log.warning("chat %s: model call failed (%s)", chat_id, e.kind)
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

    def _store_turn(self, chat_id: ChatId, stored: list[dict[str, Any]]) -> None:
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
        self, chat_id: ChatId, q: Question, asked_at: datetime, retry: bool
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
        """The request and the transcript offset where this turn will be stored (file reads: off the loop)."""
        offset = self.transcript.size(chat_id)
        system, messages = self.build_request(chat_id, q, now=asked_at, drop_last_turn=retry)
        return system, messages, offset

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

    def stats(self, chat_id: ChatId) -> dict[str, int]:
        """Messages stored, messages covered by the summary, and tokens used (reads the whole transcript)."""
        summary = self.memory.load(chat_id)
        totals = {
            "messages": 0,
            "input": 0,
            "output": 0,
            "cache_read": 0,
            "cache_write": 0,
            "summary_covers": summary.covers if summary else 0,
            "facts": len(self.facts.list(chat_id)),
        }
        for entry in self.transcript.read(chat_id):
            totals["messages"] += 1
            usage = entry.data.get("usage")
            if isinstance(usage, Mapping):
                for key in ("input", "output", "cache_read", "cache_write"):
                    value = usage.get(key)
                    if isinstance(value, int):
                        totals[key] += value
        return totals


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
