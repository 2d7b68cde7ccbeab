"""Long-term facts: the durable things about a user, kept per chat for good.

File ``chats/<chat_id>.facts.json`` (atomic writes: temp file, fsync, rename; mode 0600)::

    {"version": 1, "next_id": 4, "facts": [
        {"id": "3", "text": "생일은 3월 14일", "at": "2026-11-29T23:05:00+09:00",
         "source": {"offset": 1234, "via": "tool", "by": 501, "name": "Minji", "from": "document"},
         "updated": "…"}]}

``source`` says where a fact came from (its provenance): ``via`` ``command`` (/remember) or ``tool``
(Claude's ``remember`` tool, on someone's question); ``by`` the Telegram user id of the person who
added it or asked for it (``"terminal"``: the owner at the keyboard), ``name`` their first name when
known, ``from`` what the question carried (``document``, ``photo``, ``forwarded``), ``web`` (a
fact Claude saved after a web search or fetch came back in the same question) the URLs of the pages
read by then, at most 5, cited and fetched first (``[]``: not known). Facts written
before provenance was recorded have no ``by``: they read as "who added it is unknown" (``Fact.by``
is None), and the file is never rewritten for it.

Ids are short numbers as strings, never reused, so "fact 3" means the same fact for as
long as it exists. A changed fact replaces the old one under the same id (never two
contradicting versions). Facts belong to the chat, not to a conversation: /reset keeps
them; /forget all renames the file into ``chats/archive/`` (nothing is deleted). A fact forgotten
or replaced one by one is appended first to ``chats/archive/facts/<chat_id>.removed.jsonl`` (with
when and why), so nothing is lost there either. (A folder of its own: the archived transcripts beside it
are ``chats/archive/<chat_id>.*.jsonl``, which recall and the doctor read as conversations.)

A group's facts go into every request made there, whoever asks: they have a smaller budget
(``GROUP_MAX_FACTS`` facts, ``GROUP_MAX_TOTAL_CHARS`` characters in all) than a private chat's.

Read-modify-write runs under an exclusive ``flock`` on ``<chat_id>.facts.lock``, so the
Telegram bot and the terminal chat can change one chat's facts at the same time.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.files import atomic_write_json, ensure_private_dir, flocked, fsync_dir
from memory.transcript import check_chat_id

log = logging.getLogger(__name__)

FACTS_VERSION = 1
MAX_FACTS = 100
MAX_FACT_CHARS = 500
GROUP_MAX_FACTS = 30
GROUP_MAX_TOTAL_CHARS = 3000
"""A group's facts: at most this many, and this many characters in all (about 1,000 to 3,000 tokens)."""


class FactError(ValueError):
    """A fact cannot be added, replaced or forgotten; the message says why (shown to Claude or the user).

    ``code`` names the reason: empty, too_long, too_many, too_much (a group's characters in all), unknown_id.
    """

    def __init__(self, code: str, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.limit = limit


@dataclass(frozen=True)
class Fact:
    id: str
    text: str
    at: str
    source: dict[str, Any] = field(default_factory=dict)
    updated: str = ""

    @property
    def by(self) -> int | str | None:
        """Who added the fact or asked for it: a Telegram user id, ``"terminal"``, or None (not recorded)."""
        who = self.source.get("by")
        return who if isinstance(who, int | str) and not isinstance(who, bool) and str(who) else None

    @property
    def via(self) -> str:
        """``command``, ``tool``, or "" (not recorded)."""
        via = self.source.get("via")
        return via if via in ("command", "tool") else ""

    @property
    def web(self) -> tuple[str, ...] | None:
        """The pages read before the fact was saved (empty: not known), or None when it came after no web search."""
        pages = self.source.get("web")
        if not isinstance(pages, list):
            return None
        return tuple(p for p in pages if isinstance(p, str) and p)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "text": self.text, "at": self.at, "source": dict(self.source)}
        if self.updated:
            out["updated"] = self.updated
        return out

    @classmethod
    def from_json(cls, data: Any) -> Fact | None:
        if not isinstance(data, Mapping):
            return None
        fid, text = data.get("id"), data.get("text")
        if not isinstance(fid, str) or not fid or not isinstance(text, str) or not text.strip():
            return None
        source = data.get("source")
        return cls(
            id=fid,
            text=text,
            at=str(data.get("at", "")),
            source=dict(source) if isinstance(source, Mapping) else {},
            updated=str(data.get("updated", "")),
        )


@dataclass(frozen=True)
class Change:
    """What one change did: the fact now stored (or removed) and the one it replaced."""

    fact: Fact
    previous: Fact | None = None
    unchanged: bool = False  # the same fact was already known


def clean_text(text: Any) -> str:
    """A fact's text on one line, without surrounding or repeated whitespace."""
    return " ".join(str(text or "").split())


class FactStore:
    """Per-chat fact files under ``<data_dir>/chats``."""

    def __init__(
        self,
        data_dir: Path | str,
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        max_facts: int = MAX_FACTS,
        max_chars: int = MAX_FACT_CHARS,
    ) -> None:
        self.root = Path(data_dir)
        self.dir = self.root / "chats"
        self.now = now
        self.max_facts = max_facts
        self.max_chars = max_chars
        self.group_max_facts = min(max_facts, GROUP_MAX_FACTS)
        self.group_max_total = GROUP_MAX_TOTAL_CHARS

    @staticmethod
    def is_group(chat_id: int | str) -> bool:
        """Telegram's group and channel ids are negative."""
        return str(chat_id).startswith("-")

    def _room(self, chat_id: int | str, facts: list[Fact], new: str, dropped: Fact | None = None) -> None:
        """FactError when ``new`` (replacing ``dropped``) does not fit the chat's budget."""
        group = self.is_group(chat_id)
        most = self.group_max_facts if group else self.max_facts
        if dropped is None and len(facts) >= most:
            raise FactError(
                "too_many",
                f"there are already {len(facts)} facts (the limit is {most}): forget or replace an old one first",
                limit=most,
            )
        if group:
            total = sum(len(f.text) for f in facts) - (len(dropped.text) if dropped else 0) + len(new)
            if total > self.group_max_total:
                raise FactError(
                    "too_much",
                    f"this group's facts would have {total} characters; the limit is {self.group_max_total} in "
                    "all: forget or shorten old ones first",
                    limit=self.group_max_total,
                )

    def removed_path(self, chat_id: int | str) -> Path:
        return self.dir / "archive" / "facts" / f"{check_chat_id(chat_id)}.removed.jsonl"

    def _keep_removed(self, chat_id: int | str, fact: Fact, why: str) -> None:
        """Append a fact that is forgotten or replaced to the chat's removed-facts file (fsynced) first."""
        target_dir = ensure_private_dir(self.removed_path(chat_id).parent)
        line = json.dumps({**fact.to_json(), "removed": self._stamp(), "why": why}, ensure_ascii=False) + "\n"
        fd = os.open(self.removed_path(chat_id), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(target_dir)

    def path(self, chat_id: int | str) -> Path:
        return self.dir / f"{check_chat_id(chat_id)}.facts.json"

    def lock_path(self, chat_id: int | str) -> Path:
        return self.dir / f"{check_chat_id(chat_id)}.facts.lock"

    # -- reading ---------------------------------------------------------------------
    def _read(self, chat_id: int | str) -> tuple[int, list[Fact]]:
        path = self.path(chat_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return 1, []
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            log.warning("facts %s are unreadable: ignored until fixed (the file is left as it is)", path.name)
            raise FactFileError(path) from None
        if not isinstance(data, dict) or not isinstance(data.get("facts", []), list):
            log.warning("facts %s are not a facts file: ignored until fixed (the file is left as it is)", path.name)
            raise FactFileError(path)
        facts = [f for f in (Fact.from_json(x) for x in data.get("facts", [])) if f is not None]
        numbers = [int(f.id) for f in facts if f.id.isdigit()]
        next_id = data.get("next_id")
        if not isinstance(next_id, int) or next_id <= max(numbers, default=0):
            next_id = max(numbers, default=0) + 1
        return next_id, facts

    def list(self, chat_id: int | str) -> list[Fact]:
        """The chat's facts in the order they were learned (an unreadable file reads as none)."""
        try:
            return self._read(chat_id)[1]
        except FactFileError:
            return []

    # -- writing ---------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self, chat_id: int | str) -> Iterator[None]:
        ensure_private_dir(self.root)
        ensure_private_dir(self.dir)
        with flocked(self.lock_path(chat_id)):
            yield

    def _write(self, chat_id: int | str, next_id: int, facts: list[Fact]) -> None:
        atomic_write_json(
            self.path(chat_id),
            {"version": FACTS_VERSION, "next_id": next_id, "facts": [f.to_json() for f in facts]},
        )

    def _stamp(self) -> str:
        return self.now().astimezone().isoformat(timespec="seconds")

    def _checked(self, text: Any) -> str:
        cleaned = clean_text(text)
        if not cleaned:
            raise FactError("empty", "the fact is empty: give its text")
        if len(cleaned) > self.max_chars:
            raise FactError(
                "too_long",
                f"the fact is {len(cleaned)} characters long; the limit is {self.max_chars}: "
                "keep only the durable point",
                limit=self.max_chars,
            )
        return cleaned

    def add(self, chat_id: int | str, text: Any, *, source: Mapping[str, Any] | None = None) -> Change:
        """Store a new fact; FactError when it is empty, too long or there are too many."""
        cleaned = self._checked(text)
        with self._locked(chat_id):
            next_id, facts = self._read(chat_id)
            same = next((f for f in facts if f.text == cleaned), None)
            if same is not None:
                return Change(same, unchanged=True)
            self._room(chat_id, facts, cleaned)
            fact = Fact(str(next_id), cleaned, self._stamp(), dict(source or {}))
            self._write(chat_id, next_id + 1, [*facts, fact])
            return Change(fact)

    def replace(
        self, chat_id: int | str, fact_id: Any, text: Any, *, source: Mapping[str, Any] | None = None
    ) -> Change:
        """Replace fact ``fact_id`` with ``text`` (same id); FactError for an unknown id or bad text."""
        cleaned = self._checked(text)
        key = str(fact_id).strip()
        with self._locked(chat_id):
            next_id, facts = self._read(chat_id)
            index = next((i for i, f in enumerate(facts) if f.id == key), None)
            if index is None:
                raise FactError("unknown_id", _unknown(key, facts))
            old = facts[index]
            self._room(chat_id, facts, cleaned, dropped=old)
            self._keep_removed(chat_id, old, "replaced")
            new = Fact(old.id, cleaned, old.at, dict(source or old.source), updated=self._stamp())
            facts[index] = new
            self._write(chat_id, next_id, facts)
            return Change(new, old)

    def forget(self, chat_id: int | str, fact_id: Any) -> Fact:
        """Remove fact ``fact_id`` and return it; FactError for an unknown id."""
        key = str(fact_id).strip()
        with self._locked(chat_id):
            next_id, facts = self._read(chat_id)
            found = next((f for f in facts if f.id == key), None)
            if found is None:
                raise FactError("unknown_id", _unknown(key, facts))
            self._keep_removed(chat_id, found, "forgotten")
            self._write(chat_id, next_id, [f for f in facts if f.id != key])
            return found

    def archive(self, chat_id: int | str, stamp: str) -> Path | None:
        """Rename the facts file into ``chats/archive/`` (forget all); None when there are no facts."""
        with self._locked(chat_id):
            path = self.path(chat_id)
            if not path.exists():
                return None
            target_dir = ensure_private_dir(self.dir / "archive")
            stem = f"{check_chat_id(chat_id)}.{stamp}"
            target = target_dir / f"{stem}.facts.json"
            for n in itertools.count(2):
                if not target.exists():
                    break
                target = target_dir / f"{stem}-{n}.facts.json"
            os.rename(path, target)
            fsync_dir(self.dir)
            fsync_dir(target_dir)
            return target


class FactFileError(OSError):
    """The facts file exists but cannot be parsed; it is never overwritten automatically."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path.name} is not valid JSON: fix or move it (nothing was changed)")
        self.path = path


def _unknown(key: str, facts: list[Fact]) -> str:
    known = ", ".join(f.id for f in facts) or "none"
    return f"there is no fact with id {key!r} (known ids: {known})"
