"""Summary memory: what falls out of the window is compacted into a rolling summary.

Files, next to the transcript ``chats/<chat_id>.jsonl``:

- ``<chat_id>.summary.json`` — the summary text and what it covers (see ``Summary``),
  written atomically (temp file, fsync, rename). It is derived data: it can always be
  rebuilt from the transcript, which is never rewritten.
- ``<chat_id>.summary.lock`` — an empty file for the cross-process lock (``flock``)
  held while a compaction runs, so a Telegram bot and a terminal chat on the same
  ``DATA_DIR`` never compact the same chat at once.

Coverage is a byte offset into the transcript: the summary covers every line that ends
at or before ``end``; everything after ``end`` is sent verbatim. So each stored message
is either inside the summary or sent as it is — no gap, no overlap. A crash at any point
leaves a consistent state: the summary file is replaced in one rename, and a summary that
covers offset X is valid on its own while the lines after X are still in the transcript.

The summary is checked against the transcript before use (a hash of its last covered
line): if the transcript was archived by /reset and a new one started, the stale summary
is ignored with a warning, never trusted.

Compaction is incremental: the new summary is written from the previous summary plus the
newly evicted messages only, never by re-reading the whole transcript. The summarizer is
a plain async callable; this package imports nothing from ``bot``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.budget import Budget, Size, estimate_tokens, is_turn_start, measure, over_budget, plan_eviction
from memory.memo import HEADINGS, NOTHING, clip_memo, memo_problems
from memory.summary_store import SUMMARY_VERSION, Summary, SummaryStore
from memory.transcript import Entry, Transcript, check_chat_id
from memory.window import drop_superseded

__all__ = [
    "HEADINGS",
    "NOTHING",
    "SUMMARY_VERSION",
    "Budget",
    "Compaction",
    "Size",
    "Summarize",
    "Summary",
    "SummaryMemory",
    "SummaryStore",
    "clip_memo",
    "estimate_tokens",
    "is_turn_start",
    "measure",
    "memo_problems",
    "over_budget",
    "plan_eviction",
]

log = logging.getLogger(__name__)

Summarize = Callable[[str | None, list[dict[str, Any]]], Awaitable[str]]
"""(previous summary or None, newly evicted messages) -> the new summary text.

Called with an empty message list to *condense* a summary that grew past its cap.
"""


# -- compaction -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Compaction:
    """What one compaction did. status: idle, busy, compacted, failed, disabled."""

    status: str
    evicted: int = 0
    summary: Summary | None = None


def _stamp(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


class SummaryMemory:
    """The summary of each chat: reading it for requests, and compacting after replies."""

    def __init__(
        self,
        transcript: Transcript,
        summarize: Summarize | None,
        budget: Budget | None = None,
        *,
        model: str = "",
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        timeout: float = 300.0,
    ) -> None:
        self.transcript = transcript
        self.store = SummaryStore(transcript)
        self.summarize = summarize
        self.budget = budget or Budget()
        self.model = model
        self.now = now
        self.timeout = timeout

    @property
    def enabled(self) -> bool:
        return self.summarize is not None

    def load(self, chat_id: int | str) -> Summary | None:
        return self.store.load(chat_id)

    def unsummarized(self, chat_id: int | str, limit: int) -> tuple[Summary | None, list[Entry]]:
        """The summary and at most ``limit`` newest messages after it (read from the end)."""
        summary = self.load(chat_id)
        return summary, self.transcript.tail(chat_id, limit, stop=summary.end if summary else 0)

    async def compact(self, chat_id: int | str) -> Compaction:
        """Summarize the oldest part of the unsummarized tail if it is over budget.

        Holds the chat's cross-process lock (skips if another process holds it). Never
        raises for a summarizer failure: the previous summary is kept.
        """
        if self.summarize is None:
            return Compaction("disabled")
        with self.store.lock(chat_id, blocking=False) as got:
            if not got:
                log.info("chat %s: another process is compacting; skipped", chat_id)
                return Compaction("busy")
            return await self._compact_locked(chat_id)

    def due(self, chat_id: int | str) -> bool:
        """Whether ``compact`` would summarize something now (reads files: call it off the event loop)."""
        return self.enabled and self._plan(chat_id)[3] > 0

    def _plan(self, chat_id: int | str) -> tuple[Summary | None, Summary | None, list[Entry], int]:
        """(the stored summary, the same if it still matches the transcript, the entries after it (at
        most what one compaction looks at), how many of them to summarize now)."""
        budget = self.budget
        stored = self.store.read(chat_id)
        current = stored if stored is not None and self.store.matches(chat_id, stored) else None
        start = current.end if current else 0
        limit = budget.chunk_messages + budget.keep_messages + 2
        entries = list(itertools.islice(self.transcript.read(chat_id, start=start), limit))
        return stored, current, entries, plan_eviction([e.data for e in entries], budget, complete=len(entries) < limit)

    async def _compact_locked(self, chat_id: int | str) -> Compaction:
        budget = self.budget
        stored, current, entries, n = await asyncio.to_thread(self._plan, chat_id)
        if n == 0:
            return Compaction("idle", summary=current)
        evicted = entries[:n]
        batch = [dict(m) for m in drop_superseded([e.data for e in evicted])]
        previous = current.text if current else None
        text = await self._attempt(chat_id, previous, batch)
        if text is None:
            log.warning("chat %s: summary failed; keeping the previous one, the window trims meanwhile", chat_id)
            return Compaction("failed", summary=current)
        if len(text) > budget.max_summary_chars:
            text = await self._condense(chat_id, text)
        last = evicted[-1]
        summary = Summary(
            text=text,
            end=last.end,
            covers=(current.covers if current else 0) + n,
            last_offset=last.offset,
            last_sha256=self.store.fingerprint(chat_id, last),
            at=self.now().astimezone().isoformat(timespec="seconds"),
            model=self.model,
            compactions=(current.compactions if current else 0) + 1,
        )
        if stored is not None and current is None:
            # a stale summary (e.g. left by a /reset interrupted by a crash): put it aside
            await asyncio.to_thread(
                self.store.archive, chat_id, f"{check_chat_id(chat_id)}.stale-{_stamp(self.now())}.summary.json"
            )
        await asyncio.to_thread(self.store.write, chat_id, summary)
        log.info(
            "chat %s: summary now covers %d messages (%d new), %d characters",
            chat_id,
            summary.covers,
            n,
            len(summary.text),
        )
        return Compaction("compacted", evicted=n, summary=summary)

    async def _call(self, previous: str | None, batch: list[dict[str, Any]]) -> str:
        assert self.summarize is not None
        text = await asyncio.wait_for(self.summarize(previous, batch), self.timeout)
        return str(text).strip()

    async def _attempt(self, chat_id: int | str, previous: str | None, batch: list[dict[str, Any]]) -> str | None:
        """A valid memo from the summarizer, trying twice; None if both attempts fail."""
        for attempt in (1, 2):
            try:
                text = await self._call(previous, batch)
            except Exception as e:  # any failure of the summarizer only costs the summary
                log.warning("chat %s: summarizer failed (attempt %d): %s", chat_id, attempt, e or type(e).__name__)
                continue
            problems = memo_problems(text)
            if not problems:
                return text
            log.warning("chat %s: invalid summary (attempt %d): %s", chat_id, attempt, "; ".join(problems))
        return None

    async def _condense(self, chat_id: int | str, text: str) -> str:
        """Shrink a summary that grew past the cap: ask for a condensed one, else clip it."""
        cap = self.budget.max_summary_chars
        try:
            condensed = await self._call(text, [])
        except Exception as e:
            log.warning("chat %s: condensing the summary failed: %s", chat_id, e or type(e).__name__)
            condensed = ""
        if condensed and not memo_problems(condensed):
            if len(condensed) <= cap:
                return condensed
            text = condensed
        log.warning("chat %s: summary over %d characters; clipped", chat_id, cap)
        return clip_memo(text, cap)

    def archive(self, chat_id: int | str, transcript_archive: Path | None, stamp: str) -> Path | None:
        """Put the summary aside next to the archived transcript (same name, .summary.json)."""
        if transcript_archive is not None:
            name = transcript_archive.name.removesuffix(".jsonl") + ".summary.json"
        else:
            name = f"{check_chat_id(chat_id)}.{stamp}.summary.json"
        return self.store.archive(chat_id, name)
