"""Reading a chat's memory: the request's history window, the summary, recall, facts, and the numbers of /stats.

``ChatMemory`` is the part of the Assistant (bot/core/ask.py) that reads memory and builds a request
from it; the Assistant adds answering (the tool loop, storing turns, /retry, /reset). Everything here
reads files: call it off the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.core.prompt import build_system, mark_question, turn_message, with_quoted_recall
from bot.core.question import ChatId, Question
from bot.core.toolloop import api_message
from bot.tools.facts import provenance
from memory.facts import Change, Fact, FactStore
from memory.recall import RecallIndex, related_block
from memory.recall.build import READY, IndexStatus
from memory.summary import Summary, SummaryMemory
from memory.transcript import Transcript
from memory.turns import complete_turns, flatten
from memory.window import drop_superseded, recent_window

log = logging.getLogger(__name__)

OFFSET = "_offset"
"""Where a message read from the transcript starts (kept beside its fields, never sent or stored)."""

_api_message = api_message


class ChatMemory:
    """A chat's memory as the service reads it (the Assistant sets these attributes)."""

    transcript: Transcript
    memory: SummaryMemory
    facts: FactStore
    recall: RecallIndex | None
    recall_turns: int
    timezone: str
    max_messages: int
    max_chars: int
    now: Callable[[], datetime]

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
        self,
        chat_id: ChatId,
        question: Question,
        *,
        now: datetime,
        drop_last_turn: bool = False,
        system_messages: bool = False,
        reads_history: bool = True,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(system blocks, messages) for one request: facts and summary in the system prompt, then the turns.

        The time line goes at the end of the system prompt, or with ``system_messages`` in a
        mid-conversation system message after the question (then the system prompt stays the same
        all conversation long, and the turns before are cached). Related memories are data: they go
        in the question's user turn, after the question, quoted (bot/core/prompt.py).

        ``reads_history`` False (a group member who is not its owner or an admin, who may not read the
        group's past with /summary or /search): the request carries neither the summary nor related
        memories, only the recent messages (what /history shows everyone) and the facts (/memory).
        Reads files: call it off the event loop.
        """
        summary, stored = self._unsummarized(chat_id)
        window = self._window(stored, drop_last_turn)
        history = [_api_message(m) for m in window]
        # what came before the verbatim part may be recalled (the summary has only its gist)
        first_verbatim = window[0].get(OFFSET) if window else None
        if first_verbatim is None:
            first_verbatim = stored[-1][OFFSET] if stored and not window else None
        related = self._related(chat_id, question.text, now, first_verbatim) if reads_history else None
        system = build_system(
            now,
            self.timezone,
            summary=summary.text if summary and reads_history else None,
            facts=self.facts.list(chat_id),
            time=not system_messages,
        )
        messages = [*history, {"role": "user", "content": self.question_content(question)}]
        if system_messages:
            messages = with_quoted_recall(mark_question(messages), related)
            return system, [*messages, turn_message(now, self.timezone)]
        return system, with_quoted_recall(messages, related)

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

    def recall_status(self, chat_id: ChatId) -> IndexStatus:
        """How much of the chat's history the recall index holds (a long one is built in the background)."""
        if self.recall is None:
            return READY
        return self.recall.status(chat_id)

    # -- facts (the /memory, /remember and /forget commands) ----------------------------
    def list_facts(self, chat_id: ChatId) -> list[Fact]:
        return self.facts.list(chat_id)

    def remember(self, chat_id: ChatId, text: str, *, by: int | None = None, name: str | None = None) -> Change:
        """Add a fact someone gave with /remember (``by``: their user id; None: the terminal), recorded with
        who added it; raises FactError with a reason."""
        source = {"offset": self.transcript.size(chat_id), **provenance("command", by, name)}
        return self.facts.add(chat_id, text, source=source)

    def forget(self, chat_id: ChatId, fact_id: str) -> Fact:
        """Remove one fact (/forget <id>); raises FactError for an unknown id."""
        return self.facts.forget(chat_id, fact_id)

    def forget_all(self, chat_id: ChatId) -> Path | None:
        """Put every fact aside (/forget all): the file is renamed into chats/archive/, never deleted."""
        stamp = self.now().astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        return self.facts.archive(chat_id, stamp)

    def chat_info(self, chat_id: ChatId) -> dict[str, int]:
        """The transcript's size in bytes, messages covered by the summary, and facts (cheap: never reads the
        transcript; /stats takes the tokens from the usage ledger)."""
        summary = self.memory.load(chat_id)
        return {
            "bytes": self.transcript.size(chat_id),
            "summary_covers": summary.covers if summary else 0,
            "facts": len(self.facts.list(chat_id)),
        }

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
