"""The usage ledger: questions and tokens per user and per chat, per day and in total.

One small file, ``$DATA_DIR/usage.json`` (mode 0600, written atomically), that stays small
over months: a row per user and per chat for each of the last ``keep_days`` days, and running
totals that are never pruned::

    {"version": 1,
     "days": {"2026-11-29": {"users": {"123": {"q": 3, "m": {"claude-sonnet-4-6": [in, out, cw, cr, calls]}}},
                             "chats": {"123": {"q": 3, "m": {…}}}}},
     "total": {"users": {…}, "chats": {…}}}

``q`` counts questions accepted for answering; ``m`` holds per model the input, output,
cache-write and cache-read tokens and the number of model calls; ``w`` (when not 0) counts the
web searches Anthropic ran and billed (``usage.server_tool_use.web_search_requests``). Tokens are kept (not money),
so a changed price list re-prices the past.

Recording is cheap (a few dict updates under a lock: fine on an event loop). Writes are
batched: the changes are kept in memory and merged into the file by a timer thread
``flush_after`` seconds after the first one (or by ``flush()``/``close()``). A flush re-reads
the file under a cross-process lock (``usage.lock``) and adds this process's changes, so the bot
and the terminal chat may record into one DATA_DIR. A crash loses at most the changes of the
last ``flush_after`` seconds; a clean stop (``close()``) loses nothing. Nothing is written
before something is recorded.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from memory.files import FILE_MODE, atomic_write_bytes, ensure_private_dir, locked

log = logging.getLogger(__name__)

FILE_NAME = "usage.json"
LOCK_NAME = "usage.lock"
VERSION = 1
KEEP_DAYS = 62
"""Per-day rows kept (about two months); totals are kept for good."""
FIELDS = ("input", "output", "cache_write", "cache_read", "calls")

Data = dict[str, Any]


@dataclass
class Tally:
    """Questions and, per model, [input, output, cache_write, cache_read, calls]."""

    questions: int = 0
    models: dict[str, list[int]] = field(default_factory=dict)
    searches: int = 0  # web searches (billed per search, on top of the tokens)

    def tokens(self) -> dict[str, int]:
        """Token counts summed over the models (input, output, cache_write, cache_read, calls)."""
        sums = [0] * len(FIELDS)
        for row in self.models.values():
            for i, v in enumerate(row):
                sums[i] += v
        return dict(zip(FIELDS, sums, strict=True))

    def total_tokens(self) -> int:
        """Every token read or written: input, cache write, cache read and output."""
        t = self.tokens()
        return t["input"] + t["output"] + t["cache_write"] + t["cache_read"]


def _empty() -> Data:
    return {"version": VERSION, "days": {}, "total": {"users": {}, "chats": {}}}


def _entity(group: Data, key: str) -> Data:
    return group.setdefault(key, {"q": 0, "m": {}})


def _day(data: Data, day: str) -> Data:
    return data["days"].setdefault(day, {"users": {}, "chats": {}})


def _add_entity(into: Data, other: Data) -> None:
    into["q"] = int(into.get("q", 0)) + int(other.get("q", 0))
    if other.get("w"):
        into["w"] = int(into.get("w", 0)) + int(other["w"])
    models = into.setdefault("m", {})
    for model, row in other.get("m", {}).items():
        mine = models.setdefault(model, [0] * len(FIELDS))
        for i, v in enumerate(row[: len(FIELDS)]):
            mine[i] += v


def _add_groups(into: Data, other: Data) -> None:
    for kind in ("users", "chats"):
        for key, entity in other.get(kind, {}).items():
            _add_entity(_entity(into.setdefault(kind, {}), key), entity)


def merge(into: Data, other: Data) -> Data:
    """Add ``other``'s counts to ``into`` (both in the file's shape); returns ``into``."""
    for day, groups in other.get("days", {}).items():
        _add_groups(_day(into, day), groups)
    _add_groups(into["total"], other.get("total", {}))
    return into


def _clean_entity(raw: Any) -> Data | None:
    """A well-formed copy of one entity, or None (malformed rows are dropped, never fatal)."""
    if not isinstance(raw, dict):
        return None
    q = raw.get("q", 0)
    out: Data = {"q": q if isinstance(q, int) and q >= 0 else 0, "m": {}}
    w = raw.get("w", 0)
    if isinstance(w, int) and w > 0:
        out["w"] = w
    models = raw.get("m", {})
    if isinstance(models, dict):
        for model, row in models.items():
            if isinstance(row, list) and len(row) == len(FIELDS) and all(isinstance(v, int) and v >= 0 for v in row):
                out["m"][str(model)] = list(row)
    return out


def _clean_groups(raw: Any) -> Data:
    out: Data = {"users": {}, "chats": {}}
    if isinstance(raw, dict):
        for kind in ("users", "chats"):
            group = raw.get(kind)
            if isinstance(group, dict):
                for key, entity in group.items():
                    if (clean := _clean_entity(entity)) is not None:
                        out[kind][str(key)] = clean
    return out


def _clean(raw: Any) -> Data:
    data = _empty()
    if not isinstance(raw, dict):
        return data
    days = raw.get("days")
    if isinstance(days, dict):
        for day, groups in days.items():
            with contextlib.suppress(ValueError, TypeError):
                date.fromisoformat(day)
                data["days"][day] = _clean_groups(groups)
    data["total"] = _clean_groups(raw.get("total"))
    return data


def prune(data: Data, keep_days: int) -> Data:
    """Drop the per-day rows older than ``keep_days`` before the newest day (totals stay)."""
    if not data["days"]:
        return data
    newest = max(date.fromisoformat(d) for d in data["days"])
    oldest = (newest - timedelta(days=keep_days - 1)).isoformat()
    data["days"] = {d: rows for d, rows in sorted(data["days"].items()) if d >= oldest}
    return data


class UsageLedger:
    """Per-user and per-chat usage, per day and in total, in ``data_dir/usage.json``."""

    def __init__(self, data_dir: Path | str, *, keep_days: int = KEEP_DAYS, flush_after: float | None = 1.0) -> None:
        self.root = Path(data_dir)
        self.path = self.root / FILE_NAME
        self.lock_path = self.root / LOCK_NAME
        self.keep_days = keep_days
        self.flush_after = flush_after
        self._lock = threading.Lock()  # guards _view and _pending
        self._flushing = threading.Lock()  # one flush at a time in this process
        self._timer: threading.Timer | None = None
        self._closed = False
        self._pending: Data = _empty()
        self._dirty = False
        self._view: Data = self._read()

    # -- reading ---------------------------------------------------------------
    def _read(self) -> Data:
        """The file's content; a file that is not JSON is renamed aside (kept) and replaced by an empty ledger."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return _empty()
        try:
            return _clean(json.loads(raw))
        except (UnicodeDecodeError, json.JSONDecodeError):
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            aside = self.path.with_name(f"{FILE_NAME}.corrupt-{stamp}")
            with contextlib.suppress(FileNotFoundError):
                os.replace(self.path, aside)
            log.warning("%s was not valid JSON: moved to %s; usage is counted afresh", self.path, aside.name)
            return _empty()

    def refresh(self) -> None:
        """Re-read the file (e.g. what the terminal chat recorded), keeping this process's unflushed changes.

        Never while a flush is under way: its changes are then neither pending nor on disk yet.
        """
        with self._flushing:
            disk = self._read()
            with self._lock:
                self._view = merge(disk, self._pending)

    def _tally(self, *path: str) -> Tally:
        with self._lock:
            node: Any = self._view
            for key in path:
                node = node.get(key) if isinstance(node, dict) else None
                if node is None:
                    return Tally()
            models = {m: list(row) for m, row in node.get("m", {}).items()}
            return Tally(int(node.get("q", 0)), models, int(node.get("w", 0)))

    def user_day(self, user: str, day: str) -> Tally:
        return self._tally("days", day, "users", user)

    def user_total(self, user: str) -> Tally:
        return self._tally("total", "users", user)

    def user_month(self, user: str, month: str) -> Tally:
        """The user's days of ``month`` (``YYYY-MM``) added up (per-day rows are kept KEEP_DAYS days)."""
        with self._lock:
            days = [d for day, d in self._view["days"].items() if day.startswith(f"{month}-")]
            sums: Data = {"q": 0, "m": {}}
            for groups in days:
                entity = groups.get("users", {}).get(user)
                if entity is not None:
                    _add_entity(sums, entity)
        return Tally(int(sums["q"]), sums["m"], int(sums.get("w", 0)))

    def chat_day(self, chat: str, day: str) -> Tally:
        return self._tally("days", day, "chats", chat)

    def chat_total(self, chat: str) -> Tally:
        return self._tally("total", "chats", chat)

    def users(self) -> list[str]:
        """Every user with a total, in no particular order."""
        with self._lock:
            return list(self._view["total"]["users"])

    # -- recording -------------------------------------------------------------
    def _both(self) -> Iterator[Data]:
        yield self._view
        yield self._pending

    def add_question(self, user: str, chat: str, day: str) -> None:
        """Count one question accepted for answering."""
        with self._lock:
            for data in self._both():
                for group in (_day(data, day), data["total"]):
                    _entity(group["users"], user)["q"] += 1
                    _entity(group["chats"], chat)["q"] += 1
            self._dirty = True
        self._schedule()

    def add_usage(self, user: str, chat: str, model: str, tokens: Sequence[int], day: str) -> None:
        """Add one model call: ``tokens`` = (input, output, cache_write, cache_read)."""
        row = [max(0, int(v)) for v in tokens[:4]] + [1]
        with self._lock:
            for data in self._both():
                for group in (_day(data, day), data["total"]):
                    for entity in (_entity(group["users"], user), _entity(group["chats"], chat)):
                        mine = entity["m"].setdefault(model, [0] * len(FIELDS))
                        for i, v in enumerate(row):
                            mine[i] += v
            self._dirty = True
        self._schedule()

    def add_searches(self, user: str, chat: str, searches: int, day: str) -> None:
        """Add ``searches`` web searches (billed per search) to the user and the chat."""
        if searches <= 0:
            return
        with self._lock:
            for data in self._both():
                for group in (_day(data, day), data["total"]):
                    for entity in (_entity(group["users"], user), _entity(group["chats"], chat)):
                        entity["w"] = int(entity.get("w", 0)) + searches
            self._dirty = True
        self._schedule()

    # -- writing ---------------------------------------------------------------
    def _schedule(self) -> None:
        if self.flush_after is None or self._closed:
            return
        with self._lock:
            if self._timer is not None and self._timer.is_alive():
                return
            self._timer = threading.Timer(self.flush_after, self._timed_flush)
            self._timer.daemon = True
            self._timer.name = "usage-flush"
            self._timer.start()

    def _timed_flush(self) -> None:
        try:
            self.flush()
        except Exception:  # counted again at the next flush
            log.warning("could not write %s; will retry", self.path, exc_info=True)

    def flush(self) -> None:
        """Merge this process's unflushed changes into the file (atomic, 0600). Raises OSError on failure."""
        with self._flushing:
            with self._lock:
                if not self._dirty:
                    return
                pending, self._pending, self._dirty = self._pending, _empty(), False
            try:
                ensure_private_dir(self.root)
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
                try:
                    with locked(fd, exclusive=True):
                        disk = prune(merge(self._read(), pending), self.keep_days)
                        text = json.dumps(disk, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
                        atomic_write_bytes(self.path, text.encode("utf-8") + b"\n")
                finally:
                    os.close(fd)
            except BaseException:
                with self._lock:  # keep the changes for the next flush
                    self._pending = merge(pending, self._pending)
                    self._dirty = True
                raise
            with self._lock:
                self._view = merge(disk, self._pending)

    def close(self) -> None:
        """Stop the timer and write what is left (at a clean stop)."""
        self._closed = True
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self.flush()
