"""Reminders: what to say, in which chat, and when — kept durably in ``DATA_DIR/reminders.json``.

The file (atomic writes: temp file, fsync, rename; mode 0600)::

    {"version": 1, "next_id": 4, "reminders": [
        {"id": "3", "chat_id": "123456789", "thread_id": null, "at": "2026-11-30T00:00:00+00:00",
         "text": "약 먹기", "status": "pending", "created": "2026-11-29T23:05:00+09:00",
         "user_id": 123456789, "via": "telegram"}]}

Ids are short numbers as strings, never reused (one counter for all chats). ``at`` is stored
in UTC. Every read-modify-write runs under an exclusive ``flock`` on ``reminders.lock``, so
the Telegram bot and the terminal chat (another process) can change reminders at the same time.

Delivery is at most once, then told (bot/tg/reminders.py): a reminder is **claimed**
(``pending`` → ``sending``, written and fsynced) *before* its message is sent, and marked
``sent`` after. A reminder found in ``sending`` after a restart may or may not have reached
the chat (the process died between the two writes): it is never sent again as such; the chat
is told once, with a note that it may be a repeat (``notice`` set before that second message;
a notice that was itself interrupted ends as ``unconfirmed``). States:

- ``pending`` — waiting for its time;
- ``sending`` — claimed for delivery (``notice``: the "maybe interrupted" message is claimed);
- ``sent`` (``message_id``), ``failed`` (Telegram refused it for good: ``reason``),
  ``cancelled``, ``unconfirmed`` — finished; finished reminders stay in the file
  (the oldest beyond ``KEEP_FINISHED`` are moved to ``reminders.archive.jsonl``, never deleted).

A file that cannot be parsed is never overwritten: every call raises ReminderFileError
until it is fixed or moved.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.files import FILE_MODE, atomic_write_json, ensure_private_dir

log = logging.getLogger(__name__)

VERSION = 1
MAX_TEXT_CHARS = 1000
MAX_PENDING_PER_CHAT = 50
MAX_PENDING_PER_PERSON = 10
"""Pending reminders one person may have in one chat: one member cannot fill a group's slots."""
KEEP_FINISHED = 200  # finished reminders kept in the file; older ones move to the archive
PENDING, SENDING, SENT, FAILED, CANCELLED, UNCONFIRMED = (
    "pending", "sending", "sent", "failed", "cancelled", "unconfirmed",
)  # fmt: skip
FINISHED = (SENT, FAILED, CANCELLED, UNCONFIRMED)


class ReminderError(ValueError):
    """A reminder cannot be added or cancelled; the message says why. ``code``: empty, too_long, too_many,
    unknown_id."""

    def __init__(self, code: str, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.limit = limit


class ReminderFileError(OSError):
    """reminders.json exists but cannot be parsed; it is never overwritten automatically."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path.name} is not valid JSON: fix or move it (nothing was changed)")
        self.path = path


@dataclass(frozen=True)
class Reminder:
    id: str
    chat_id: str
    at: datetime  # aware, UTC
    text: str
    status: str = PENDING
    thread_id: int | None = None
    created: str = ""
    user_id: int | None = None
    via: str = ""
    notice: bool = False  # the "maybe interrupted" message was claimed
    extra: dict[str, Any] = field(default_factory=dict)  # finishing fields: sent_at, message_id, reason, …

    @property
    def pending(self) -> bool:
        return self.status == PENDING

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "chat_id": self.chat_id,
            "thread_id": self.thread_id,
            "at": self.at.astimezone(UTC).isoformat(timespec="seconds"),
            "text": self.text,
            "status": self.status,
            "created": self.created,
        }
        if self.user_id is not None:
            out["user_id"] = self.user_id
        if self.via:
            out["via"] = self.via
        if self.notice:
            out["notice"] = True
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, data: Any) -> Reminder | None:
        if not isinstance(data, Mapping):
            return None
        rid, chat, text, status = data.get("id"), data.get("chat_id"), data.get("text"), data.get("status")
        if not isinstance(rid, str) or not isinstance(chat, str) or not isinstance(text, str):
            return None
        try:
            at = datetime.fromisoformat(str(data.get("at")))
        except ValueError:
            return None
        if at.tzinfo is None or status not in (PENDING, SENDING, *FINISHED):
            return None
        thread, user = data.get("thread_id"), data.get("user_id")
        known = {"id", "chat_id", "thread_id", "at", "text", "status", "created", "user_id", "via", "notice"}
        return cls(
            id=rid,
            chat_id=chat,
            at=at.astimezone(UTC),
            text=text,
            status=str(status),
            thread_id=thread if isinstance(thread, int) and not isinstance(thread, bool) else None,
            created=str(data.get("created", "")),
            user_id=user if isinstance(user, int) and not isinstance(user, bool) else None,
            via=str(data.get("via", "")),
            notice=data.get("notice") is True,
            extra={k: v for k, v in data.items() if k not in known},
        )


def clean_text(text: Any) -> str:
    """A reminder's text without surrounding whitespace (inner line breaks are kept)."""
    return str(text or "").strip()


def checked_text(text: Any) -> str:
    """The cleaned text, or ReminderError when it is empty or too long."""
    cleaned = clean_text(text)
    if not cleaned:
        raise ReminderError("empty", "the reminder text is empty: say what to remind of")
    if len(cleaned) > MAX_TEXT_CHARS:
        raise ReminderError(
            "too_long",
            f"the reminder text is {len(cleaned)} characters long; the limit is {MAX_TEXT_CHARS}",
            limit=MAX_TEXT_CHARS,
        )
    return cleaned


Listener = Callable[[Reminder], None]


class ReminderStore:
    """All reminders of all chats in one small JSON file under ``data_dir``."""

    def __init__(self, data_dir: Path | str, *, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.root = Path(data_dir)
        self.path = self.root / "reminders.json"
        self.lock_path = self.root / "reminders.lock"
        self.archive_path = self.root / "reminders.archive.jsonl"
        self.now = now
        self._listeners: list[Listener] = []

    # -- listeners: the bot's scheduler hears of reminders added or cancelled in this process ----
    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(reminder)`` after a reminder is added or cancelled (in the caller's thread)."""
        self._listeners.append(listener)

    def _notify(self, reminder: Reminder) -> None:
        for listener in list(self._listeners):
            try:
                listener(reminder)
            except Exception:  # a listener never breaks the change that was made
                log.warning("reminder listener failed", exc_info=True)

    # -- reading -----------------------------------------------------------------------
    def _read(self) -> tuple[int, list[Reminder]]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return 1, []
        try:
            data = json.loads(raw)
            items = data.get("reminders", [])
        except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            log.error("%s is unreadable: reminders are off until it is fixed (the file is left as it is)", self.path)
            raise ReminderFileError(self.path) from None
        reminders = []
        for item in items if isinstance(items, list) else []:
            r = Reminder.from_json(item)
            if r is None:
                log.warning("%s: skipping an unreadable reminder: %r", self.path.name, item)
            else:
                reminders.append(r)
        numbers = [int(r.id) for r in reminders if r.id.isdigit()]
        next_id = data.get("next_id")
        if not isinstance(next_id, int) or next_id <= max(numbers, default=0):
            next_id = max(numbers, default=0) + 1
        return next_id, reminders

    def all(self) -> list[Reminder]:
        """Every reminder in the file, in the order they were set (ReminderFileError if unreadable)."""
        return self._read()[1]

    def get(self, reminder_id: str) -> Reminder | None:
        return next((r for r in self.all() if r.id == reminder_id), None)

    def pending(self, chat_id: int | str | None = None) -> list[Reminder]:
        """The reminders still to be sent (of one chat, or of all), soonest first."""
        key = None if chat_id is None else str(chat_id)
        found = [r for r in self.all() if r.pending and (key is None or r.chat_id == key)]
        return sorted(found, key=lambda r: (r.at, int(r.id) if r.id.isdigit() else 0))

    def signature(self) -> tuple[int, int] | None:
        """(mtime in ns, size) of the file, to notice changes made by another process; None if absent."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return st.st_mtime_ns, st.st_size

    # -- writing -----------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self) -> Iterator[tuple[int, list[Reminder]]]:
        ensure_private_dir(self.root)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield self._read()
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _write(self, next_id: int, reminders: list[Reminder]) -> None:
        finished = [r for r in reminders if r.status in FINISHED]
        if len(finished) > KEEP_FINISHED:
            moved = {r.id for r in finished[: len(finished) - KEEP_FINISHED]}
            self._archive([r for r in reminders if r.id in moved])
            reminders = [r for r in reminders if r.id not in moved]
        atomic_write_json(
            self.path, {"version": VERSION, "next_id": next_id, "reminders": [r.to_json() for r in reminders]}
        )

    def _archive(self, reminders: list[Reminder]) -> None:
        """Append finished reminders to the archive (fsynced) before they leave the live file."""
        data = "".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in reminders).encode()
        fd = os.open(self.archive_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    def _stamp(self) -> str:
        return self.now().astimezone().isoformat(timespec="seconds")

    def add(
        self,
        chat_id: int | str,
        at: datetime,
        text: Any,
        *,
        thread_id: int | None = None,
        user_id: int | None = None,
        via: str = "",
    ) -> Reminder:
        """Store a new pending reminder; ReminderError when the text is empty or too long, or the chat
        has too many pending. (Whether ``at`` makes sense is the caller's to check.)"""
        if at.tzinfo is None:
            raise ValueError("a reminder's time must be timezone-aware")
        cleaned = checked_text(text)
        with self._locked() as (next_id, reminders):
            waiting = [r for r in reminders if r.chat_id == str(chat_id) and r.status in (PENDING, SENDING)]
            if len(waiting) >= MAX_PENDING_PER_CHAT:
                raise ReminderError(
                    "too_many",
                    f"this chat already has {len(waiting)} pending reminders (the limit is {MAX_PENDING_PER_CHAT}): "
                    "cancel one first",
                    limit=MAX_PENDING_PER_CHAT,
                )
            theirs = sum(1 for r in waiting if user_id is not None and r.user_id == user_id)
            if theirs >= MAX_PENDING_PER_PERSON:
                raise ReminderError(
                    "too_many_mine",
                    f"the person asking already has {theirs} pending reminders in this chat (the limit is "
                    f"{MAX_PENDING_PER_PERSON} a person): cancel one of theirs first",
                    limit=MAX_PENDING_PER_PERSON,
                )
            reminder = Reminder(
                id=str(next_id),
                chat_id=str(chat_id),
                at=at.astimezone(UTC),
                text=cleaned,
                thread_id=thread_id,
                created=self._stamp(),
                user_id=user_id,
                via=via,
            )
            self._write(next_id + 1, [*reminders, reminder])
        self._notify(reminder)
        return reminder

    def cancel_from(self, chat_id: int | str, user_id: int) -> list[Reminder]:
        """Cancel every pending reminder ``user_id`` set in ``chat_id``, in one write; the cancelled ones."""
        with self._locked() as (next_id, reminders):
            mine = {r.id for r in reminders if r.chat_id == str(chat_id) and r.user_id == user_id and r.pending}
            if not mine:
                return []
            stamp = {"cancelled_at": self._stamp()}
            changed = [
                replace(r, status=CANCELLED, extra={**r.extra, **stamp}) if r.id in mine else r for r in reminders
            ]
            self._write(next_id, changed)
        done = [r for r in changed if r.id in mine]
        for r in done:
            self._notify(r)
        return done

    def cancel(self, chat_id: int | str, reminder_id: Any) -> Reminder:
        """Cancel one pending reminder of ``chat_id``; ReminderError("unknown_id") otherwise."""
        key = str(reminder_id).strip().lstrip("#")
        with self._locked() as (next_id, reminders):
            index = next(
                (i for i, r in enumerate(reminders) if r.id == key and r.chat_id == str(chat_id) and r.pending), None
            )
            if index is None:
                known = ", ".join(r.id for r in reminders if r.chat_id == str(chat_id) and r.pending) or "none"
                raise ReminderError("unknown_id", f"no pending reminder with id {key!r} here (pending ids: {known})")
            cancelled = replace(
                reminders[index], status=CANCELLED, extra={**reminders[index].extra, "cancelled_at": self._stamp()}
            )
            reminders[index] = cancelled
            self._write(next_id, reminders)
        self._notify(cancelled)
        return cancelled

    def _transition(
        self, reminder_id: str, allowed: Callable[[Reminder], bool], change: Callable[[Reminder], Reminder]
    ) -> Reminder | None:
        with self._locked() as (next_id, reminders):
            index = next((i for i, r in enumerate(reminders) if r.id == reminder_id), None)
            if index is None or not allowed(reminders[index]):
                return None
            reminders[index] = change(reminders[index])
            self._write(next_id, reminders)
            return reminders[index]

    def claim(self, reminder_id: str) -> Reminder | None:
        """pending → sending, durably, before the message is sent; None if it is not pending (any more)."""
        stamp = self._stamp()
        return self._transition(
            reminder_id,
            lambda r: r.pending,
            lambda r: replace(r, status=SENDING, extra={**r.extra, "claimed_at": stamp}),
        )

    def claim_notice(self, reminder_id: str) -> Reminder | None:
        """An interrupted send (``sending`` without notice) → its notice is claimed; None otherwise."""
        stamp = self._stamp()
        return self._transition(
            reminder_id,
            lambda r: r.status == SENDING and not r.notice,
            lambda r: replace(r, notice=True, extra={**r.extra, "notice_at": stamp}),
        )

    def release(self, reminder_id: str) -> Reminder | None:
        """sending → pending, when Telegram certainly did not take the message (e.g. flood control)."""
        return self._transition(
            reminder_id, lambda r: r.status == SENDING and not r.notice, lambda r: replace(r, status=PENDING)
        )

    def finish(self, reminder_id: str, status: str, **fields: Any) -> Reminder | None:
        """sending → sent, failed or unconfirmed, with extra fields (message_id, reason, …)."""
        if status not in (SENT, FAILED, UNCONFIRMED):
            raise ValueError(f"not a finishing status: {status!r}")
        stamp = self._stamp()
        return self._transition(
            reminder_id,
            lambda r: r.status == SENDING,
            lambda r: replace(r, status=status, extra={**r.extra, **fields, "done_at": stamp}),
        )
