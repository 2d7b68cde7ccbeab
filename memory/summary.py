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
import contextlib
import fcntl
import hashlib
import itertools
import json
import logging
import math
import os
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.files import FILE_MODE, atomic_write_json, ensure_private_dir, fsync_dir
from memory.transcript import Entry, Transcript, check_chat_id
from memory.window import content_chars, content_text, drop_superseded

log = logging.getLogger(__name__)

SUMMARY_VERSION = 1

Summarize = Callable[[str | None, list[dict[str, Any]]], Awaitable[str]]
"""(previous summary or None, newly evicted messages) -> the new summary text.

Called with an empty message list to *condense* a summary that grew past its cap.
"""

# The fixed headings of the memo (a handover memo, in the chat's main language).
HEADINGS: tuple[str, ...] = (
    "사용자의 목표",
    "결정·제약·선호",
    "바뀐 것",
    "진행 중인 작업",
    "핵심 사실",
    "막다른 길",
    "다음에 할 일",
)
"""Each heading is a Markdown ``## `` line; a section with nothing to say holds ``없음``."""

NOTHING = "없음"


# -- sizes and the token estimate ------------------------------------------------------

_WIDE = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def estimate_tokens(text: str) -> int:
    """A rough, deliberately generous token count without a tokenizer.

    Heuristic: ASCII text is about 4 characters per token; a Hangul syllable or a CJK
    character is about 1 token; any other character (accented Latin, emoji, symbols)
    about 2 characters per token. Korean therefore counts ~4x more tokens per character
    than English, as it does with Claude's tokenizer. Good enough for budgets; never
    used for billing.
    """
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    wide = len(_WIDE.findall(text))
    other = len(text) - ascii_chars - wide
    return math.ceil(ascii_chars / 4 + wide + other / 2)


@dataclass(frozen=True)
class Size:
    messages: int
    chars: int
    tokens: int


def measure(messages: Sequence[Mapping[str, Any]]) -> Size:
    chars = sum(content_chars(m.get("content")) for m in messages)
    tokens = sum(estimate_tokens(content_text(m.get("content"))) for m in messages)
    return Size(len(messages), chars, tokens)


# -- the policy -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """When to compact and how much to keep. Defaults are sized for a phone chat.

    The unsummarized tail is compacted when it exceeds ``trigger_messages`` messages,
    ``trigger_chars`` characters or ``trigger_tokens`` estimated tokens. The newest
    messages stay verbatim: at most ``keep_messages`` and half of the character and
    token triggers, always starting on a user turn (at least the last turn is kept).
    The summary is capped at ``max_summary_chars``; one compaction evicts at most
    ``chunk_messages`` messages, so a huge backlog is caught up in bounded steps.
    """

    trigger_messages: int = 16
    trigger_chars: int = 6000
    trigger_tokens: int = 3000
    keep_messages: int = 6
    max_summary_chars: int = 2500
    chunk_messages: int = 40

    @property
    def keep_chars(self) -> int:
        return max(1, self.trigger_chars // 2)

    @property
    def keep_tokens(self) -> int:
        return max(1, self.trigger_tokens // 2)

    def fitted(self, window_messages: int, window_chars: int) -> Budget:
        """This budget made consistent, and no larger than the verbatim window.

        The window (``MAX_HISTORY_MESSAGES`` / ``MAX_HISTORY_CHARS``) must hold the whole
        unsummarized tail, or the safety-net trimming would cut messages that the
        summary does not cover.
        """
        trigger_messages = max(2, min(self.trigger_messages, window_messages))
        keep = max(2, min(self.keep_messages, trigger_messages - 2))
        return replace(
            self,
            trigger_messages=trigger_messages,
            trigger_chars=max(2, min(self.trigger_chars, window_chars)),
            trigger_tokens=max(2, self.trigger_tokens),
            keep_messages=keep,
            max_summary_chars=max(200, self.max_summary_chars),
            chunk_messages=max(self.chunk_messages, trigger_messages),
        )


def over_budget(messages: Sequence[Mapping[str, Any]], budget: Budget) -> bool:
    size = measure(messages)
    return (
        size.messages > budget.trigger_messages
        or size.chars > budget.trigger_chars
        or size.tokens > budget.trigger_tokens
    )


def _fits_keep(messages: Sequence[Mapping[str, Any]], budget: Budget) -> bool:
    size = measure(messages)
    return (
        size.messages <= budget.keep_messages and size.chars <= budget.keep_chars and size.tokens <= budget.keep_tokens
    )


def is_turn_start(message: Mapping[str, Any]) -> bool:
    """True if the summary may end just before ``message``.

    That is a user turn that is not a retry (a retry supersedes the pair before it, so the
    two stay on the same side) and not a tool result (which belongs to the tool call
    before it).
    """
    if message.get("role") != "user" or message.get("retry"):
        return False
    content = message.get("content")
    if isinstance(content, list) and content:
        first = content[0]
        if isinstance(first, Mapping) and first.get("type") == "tool_result":
            return False
    return True


def plan_eviction(messages: Sequence[Mapping[str, Any]], budget: Budget, *, complete: bool = True) -> int:
    """How many of the oldest unsummarized ``messages`` to summarize now (0: none).

    ``complete`` says whether ``messages`` reach the end of the transcript. When they do,
    nothing happens until the tail exceeds the budget; then the newest messages that fit
    the keep budget stay (at least the last turn). When they do not (a backlog), the
    whole chunk that was read may go, except its last ``keep_messages``. Either way at
    most ``chunk_messages`` are evicted, and the cut is always before a user turn.
    """
    if complete and not over_budget(messages, budget):
        return 0
    cuts = [i for i in range(1, len(messages)) if is_turn_start(messages[i])]
    if not cuts:
        return 0
    if complete:
        target = next((c for c in cuts if _fits_keep(messages[c:], budget)), cuts[-1])
    else:
        target = max(cuts[0], len(messages) - budget.keep_messages)
    limit = min(target, budget.chunk_messages)
    allowed = [c for c in cuts if c <= limit]
    return allowed[-1] if allowed else cuts[0]


# -- the memo -----------------------------------------------------------------------------

_HEADING_LINE = re.compile(r"^\s*#{1,6}\s*(.+?)\s*$")


def _sections(text: str) -> list[tuple[str | None, list[str]]]:
    """(heading or None for the preamble, body lines) in order."""
    out: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        m = _HEADING_LINE.match(line)
        if m:
            out.append((m.group(1), []))
        else:
            out[-1][1].append(line)
    return out


def memo_problems(text: str) -> list[str]:
    """What is wrong with a summary memo (empty list: it is valid).

    Valid means: not empty, every fixed heading present as a Markdown heading line, and
    at least one section with content (a section may say ``없음``).
    """
    if not text or not text.strip():
        return ["empty"]
    sections = _sections(text)
    titles = [h for h, _ in sections if h is not None]
    problems = [f"missing heading: {h}" for h in HEADINGS if not any(t.startswith(h) for t in titles)]
    if not any(h is not None and any(line.strip() not in ("", NOTHING, "-") for line in body) for h, body in sections):
        problems.append("all sections empty")
    return problems


def clip_memo(text: str, limit: int) -> str:
    """Mechanically shorten a memo to ``limit`` characters, keeping every heading.

    Used only when the summarizer could not condense it: the last lines of the longest
    sections go first.
    """
    if len(text) <= limit:
        return text
    sections = _sections(text.strip())
    bodies = [list(body) for _, body in sections]

    def render() -> str:
        parts: list[str] = []
        for (heading, _), body in zip(sections, bodies, strict=True):
            if heading is not None:
                parts.append(f"## {heading}")
            parts.extend(body)
        return "\n".join(parts).strip()

    out = render()
    while len(out) > limit:
        longest = max(range(len(bodies)), key=lambda i: sum(len(x) + 1 for x in bodies[i]))
        if not bodies[longest]:
            return out[:limit]
        bodies[longest].pop()
        out = render()
    return out


# -- the stored summary ----------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    """The content of ``<chat_id>.summary.json``.

    ``end`` is the byte offset just after the last covered transcript line;
    ``last_offset`` is where that line starts and ``last_sha256`` a hash of it, to check
    that the summary still belongs to the transcript. ``covers`` counts the messages
    covered (for /stats); ``at`` is when it was written and ``model`` by which model.
    """

    text: str
    end: int
    covers: int
    last_offset: int
    last_sha256: str
    at: str
    model: str = ""
    compactions: int = 1
    version: int = SUMMARY_VERSION

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Summary | None:
        if not isinstance(data, dict):
            return None
        try:
            s = cls(
                text=str(data["text"]),
                end=int(data["end"]),
                covers=int(data["covers"]),
                last_offset=int(data["last_offset"]),
                last_sha256=str(data["last_sha256"]),
                at=str(data.get("at", "")),
                model=str(data.get("model", "")),
                compactions=int(data.get("compactions", 1)),
                version=int(data.get("version", SUMMARY_VERSION)),
            )
        except (KeyError, TypeError, ValueError):
            return None
        if not (0 <= s.last_offset < s.end) or s.covers < 1 or not s.text.strip():
            return None
        return s


def _line_hash(path: Path, offset: int, end: int) -> str | None:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read(end - offset)
    except FileNotFoundError:
        return None
    if len(data) != end - offset:
        return None
    return hashlib.sha256(data).hexdigest()


class SummaryStore:
    """Reads, verifies, writes and archives ``<chat_id>.summary.json`` files."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self._warned: set[tuple[str, int]] = set()

    @property
    def dir(self) -> Path:
        return self.transcript.dir

    def path(self, chat_id: int | str) -> Path:
        return self.dir / f"{check_chat_id(chat_id)}.summary.json"

    def lock_path(self, chat_id: int | str) -> Path:
        return self.dir / f"{check_chat_id(chat_id)}.summary.lock"

    # -- reading ---------------------------------------------------------------
    def read(self, chat_id: int | str) -> Summary | None:
        """The stored summary, unverified; None if there is none or it is unreadable."""
        path = self.path(chat_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            summary = Summary.from_json(json.loads(raw))
        except (UnicodeDecodeError, json.JSONDecodeError):
            summary = None
        if summary is None:
            self._warn_once(chat_id, len(raw), "summary %s is unreadable: ignored (it is rebuilt from the transcript)")
        return summary

    def matches(self, chat_id: int | str, summary: Summary) -> bool:
        """True if ``summary`` belongs to the chat's current transcript."""
        return _line_hash(self.transcript.path(chat_id), summary.last_offset, summary.end) == summary.last_sha256

    def load(self, chat_id: int | str) -> Summary | None:
        """The chat's summary if it is readable and matches the transcript, else None."""
        summary = self.read(chat_id)
        if summary is None:
            return None
        if not self.matches(chat_id, summary):
            self._warn_once(
                chat_id,
                summary.end,
                "summary %s does not match the transcript (archived or replaced?): ignored",
            )
            return None
        return summary

    def _warn_once(self, chat_id: int | str, key: int, message: str) -> None:
        mark = (str(chat_id), key)
        if mark not in self._warned:
            self._warned.add(mark)
            log.warning(message, self.path(chat_id).name)

    # -- writing -----------------------------------------------------------------
    def fingerprint(self, chat_id: int | str, entry: Entry) -> str:
        digest = _line_hash(self.transcript.path(chat_id), entry.offset, entry.end)
        if digest is None:
            raise FileNotFoundError(f"transcript of chat {chat_id} changed while it was summarized")
        return digest

    def write(self, chat_id: int | str, summary: Summary) -> None:
        """Replace the summary atomically (temp file, fsync, rename); clear stray temp files."""
        path = self.path(chat_id)
        atomic_write_json(path, summary.to_json())
        for stray in path.parent.glob(f".{path.name}.*.tmp"):
            with contextlib.suppress(OSError):
                stray.unlink()

    def archive(self, chat_id: int | str, name: str) -> Path | None:
        """Rename the summary to ``archive/<name>`` (never deleted); None if there is none."""
        path = self.path(chat_id)
        if not path.exists():
            return None
        target_dir = ensure_private_dir(self.dir / "archive")
        target = target_dir / name
        stem = name.removesuffix(".summary.json")
        for n in itertools.count(2):
            if not target.exists():
                break
            target = target_dir / f"{stem}-{n}.summary.json"
        try:
            os.rename(path, target)
        except FileNotFoundError:
            return None
        fsync_dir(self.dir)
        fsync_dir(target_dir)
        return target

    @contextlib.contextmanager
    def lock(self, chat_id: int | str, *, blocking: bool) -> Iterator[bool]:
        """Hold the chat's cross-process summary lock; yields False if busy and not ``blocking``."""
        ensure_private_dir(self.transcript.root)
        ensure_private_dir(self.dir)
        fd = os.open(self.lock_path(chat_id), os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


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

    async def _compact_locked(self, chat_id: int | str) -> Compaction:
        budget = self.budget
        stored = await asyncio.to_thread(self.store.read, chat_id)
        current = stored if stored is not None and self.store.matches(chat_id, stored) else None
        start = current.end if current else 0
        limit = budget.chunk_messages + budget.keep_messages + 2
        entries = await asyncio.to_thread(
            lambda: list(itertools.islice(self.transcript.read(chat_id, start=start), limit))
        )
        complete = len(entries) < limit
        n = plan_eviction([e.data for e in entries], budget, complete=complete)
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
