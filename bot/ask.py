"""The ask() service: memory in, Claude, memory out. Front ends (Telegram, terminal) call it.

One object owns building the request from memory and writing the turn back:
- the chat's rolling summary (memory/summary.py) goes into its own system block, and every
  message after the point it covers is sent verbatim (read from the transcript's end);
  the recent-window trimming is only a safety net for a tail that grew over budget
  because summarizing failed;
- a fresh time line is computed for every request (never cached);
- the question and the answer are appended together, once, only after a successful reply;
- compaction (``maintain``) runs after the reply was delivered, so the user never waits for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.model import Model, ModelError, TextCallback, Usage
from bot.prompt import build_system
from memory.summary import Budget, Summarize, Summary, SummaryMemory
from memory.transcript import Transcript
from memory.window import content_text, drop_superseded, recent_window

log = logging.getLogger(__name__)

ChatId = int | str


class NothingToRetry(Exception):
    """/retry with no question to re-ask."""


@dataclass(frozen=True)
class Answer:
    text: str
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Question:
    """A question as the front end received it."""

    text: str
    attachments: tuple[dict[str, Any], ...] = ()  # API content blocks sent with it, never stored
    meta: Mapping[str, Any] = field(default_factory=dict)  # extra fields stored with the user turn


def utc_now() -> datetime:
    return datetime.now(UTC)


def _iso(dt: datetime) -> str:
    return dt.astimezone().isoformat(timespec="seconds")


def _api_message(m: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": m["role"], "content": m["content"]}


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
        summary_timeout: float = 300.0,
    ) -> None:
        self.transcript = transcript
        self.model = model
        self.timezone = timezone
        self.max_messages = max_messages
        self.max_chars = max_chars
        self.max_tokens = max_tokens
        self.now = now
        self._locks: dict[str, asyncio.Lock] = {}
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

    # -- per-chat serialisation ------------------------------------------------
    def lock(self, chat_id: ChatId) -> asyncio.Lock:
        """The lock that keeps one chat's turns strictly one after another."""
        key = str(chat_id)
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    # -- reading memory ----------------------------------------------------------
    def _unsummarized(self, chat_id: ChatId) -> tuple[Summary | None, list[dict[str, Any]]]:
        """The verified summary and the newest stored messages after what it covers.

        Reads from the end of the transcript and never before the summary's offset; a
        little slack beyond the window for lines dropped as superseded or orphaned.
        """
        summary, entries = self.memory.unsummarized(chat_id, self.max_messages * 2 + 4)
        return summary, [e.data for e in entries]

    def _tail(self, chat_id: ChatId) -> list[dict[str, Any]]:
        return self._unsummarized(chat_id)[1]

    def _window(self, stored: list[dict[str, Any]], drop_last_turn: bool) -> list[dict[str, Any]]:
        kept = drop_superseded(stored)
        if drop_last_turn and len(kept) >= 2:
            kept = kept[:-2]
        # normally the whole unsummarized tail fits; this trims only when summarizing failed
        return recent_window(kept, self.max_messages, self.max_chars)

    def history(self, chat_id: ChatId, *, drop_last_turn: bool = False) -> list[dict[str, Any]]:
        """The stored turns that the next request will carry verbatim, oldest first."""
        return self._window(self._tail(chat_id), drop_last_turn)

    def summary(self, chat_id: ChatId) -> str | None:
        """The chat's rolling summary of the older conversation, or None (shown by /summary)."""
        summary = self.memory.load(chat_id)
        return summary.text if summary else None

    def build_request(
        self, chat_id: ChatId, question: Question, *, now: datetime, drop_last_turn: bool = False
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(system blocks, messages) for one request: summary as a system block, then the tail verbatim."""
        summary, stored = self._unsummarized(chat_id)
        history = [_api_message(m) for m in self._window(stored, drop_last_turn)]
        content: str | list[dict[str, Any]] = question.text
        if question.attachments:
            content = [*question.attachments, {"type": "text", "text": question.text or "(사진 / photo)"}]
        system = build_system(now, self.timezone, summary=summary.text if summary else None)
        return system, [*history, {"role": "user", "content": content}]

    # -- the service ---------------------------------------------------------------
    async def ask(self, chat_id: ChatId, question: Question | str, *, on_text: TextCallback | None = None) -> Answer:
        """Answer ``question`` with the chat's memory and store the turn on success.

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
    ) -> tuple[Question, Answer]:
        """Re-ask the last question: the failed one, or else the last answered one.

        A re-asked answered question replaces the earlier answer in what is sent
        next (the transcript keeps both). A stored question is rebuilt from its text
        and stored fields; ``restore`` may add back what was not stored (e.g. a
        front end downloads the photo again from its stored file id).
        """
        async with self.lock(chat_id):
            failed = self._failed.get(str(chat_id))
            if failed is not None:
                question, was_retry = failed
                return question, await self._ask_locked(chat_id, question, on_text=on_text, retry=was_retry)
            stored = drop_superseded(self._tail(chat_id))
            if len(stored) < 2 or stored[-1]["role"] != "assistant" or stored[-2]["role"] != "user":
                raise NothingToRetry
            last = stored[-2]
            meta = {k: v for k, v in last.items() if k not in ("role", "content", "at", "retry")}
            q = Question(content_text(last["content"]), meta=meta)
            if restore is not None:
                q = await restore(q)
            return q, await self._ask_locked(chat_id, q, on_text=on_text, retry=True)

    async def _ask_locked(self, chat_id: ChatId, q: Question, *, on_text: TextCallback | None, retry: bool) -> Answer:
        asked_at = self.now()
        system, messages = self.build_request(chat_id, q, now=asked_at, drop_last_turn=retry)
        try:
            reply = await self.model.complete(
                system=system, messages=messages, max_tokens=self.max_tokens, on_text=on_text
            )
        except ModelError as e:
            log.warning("chat %s: model call failed (%s)", chat_id, e.kind)
            self._failed[str(chat_id)] = (q, retry)
            raise
        user: dict[str, Any] = {"role": "user", "content": q.text, "at": _iso(asked_at), **q.meta}
        if retry:
            user["retry"] = True
        answer: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text,
            "at": _iso(self.now()),
            "model": reply.model or self.model.name,
            "usage": reply.usage.as_dict(),
        }
        # one append of the whole turn, fsynced before the reply is shown
        store = asyncio.ensure_future(asyncio.to_thread(self.transcript.append, chat_id, [user, answer]))
        try:
            await asyncio.shield(store)
        except asyncio.CancelledError:
            # The answer is complete and its turn is being written: finish and return it,
            # so the caller never believes a stored turn was lost (and re-asks it twice).
            await store
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        self._failed.pop(str(chat_id), None)
        return Answer(reply.text, reply.usage)

    async def maintain(self, chat_id: ChatId) -> None:
        """Work done after a reply was delivered: compaction of the chat's older messages.

        Runs under the chat's lock (do not call it while holding ``lock(chat_id)``) and
        the chat's cross-process summary lock (skipped if another process holds it).
        Never raises: a failed summary keeps the previous one and the window trims.
        """
        if not self.memory.enabled:
            return
        async with self.lock(chat_id):
            try:
                await self.memory.compact(chat_id)
            except Exception:
                log.warning("chat %s: compaction failed; the previous summary is kept", chat_id, exc_info=True)

    def _archive_files(self, chat_id: ChatId, stamp: str) -> Path | None:
        with self.memory.store.lock(chat_id, blocking=True):
            path = self.transcript.archive(chat_id, stamp)
            self.memory.archive(chat_id, path, stamp)
            return path

    async def reset(self, chat_id: ChatId) -> str | None:
        """Start a fresh conversation: archive (rename) the transcript and its summary; nothing is deleted.

        Returns the archive's file name, or None when there was nothing to archive.
        """
        async with self.lock(chat_id):
            self._failed.pop(str(chat_id), None)
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
