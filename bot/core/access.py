"""Access policy: closed by default, one owner who decides who may talk.

- Nobody is allowed unless named: the owner, the ids in ``ALLOWED_USERS`` (always allowed), and
  the users the owner added with ``/allow`` (stored in ``$DATA_DIR/access.json``, memory/access.py).
- The owner is ``OWNER_ID``, else the first id of ``ALLOWED_USERS``, else whoever paired.
- Pairing: while no owner is known a fresh random code lives in memory only (logged once at
  start); whoever sends it first becomes the owner and the code is gone. Wrong codes are
  counted per user: ``MAX_TRIES`` within ``TRY_WINDOW`` and that user is ignored for ``LOCKOUT``.
- In groups the bot answers when the group was allowed by the owner, or the sender is allowed.

Strangers are never written down: what is known of them (their name for a later ``/allow``,
their wrong tries) stays in bounded memory.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum

from memory.access import AccessStore

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: easy to type from a log on a phone
CODE_LENGTH = 10
MAX_TRIES = 5
TRY_WINDOW = timedelta(minutes=10)
LOCKOUT = timedelta(hours=1)
MAX_REMEMBERED = 1000  # strangers' names and tries kept in memory at most


def utc_now() -> datetime:
    return datetime.now(UTC)


def new_code(length: int = CODE_LENGTH) -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))


class PairResult(Enum):
    PAIRED = "paired"
    WRONG = "wrong"  # refused; not yet locked out
    LOCKED_OUT = "locked_out"  # refused, and this was the last wrong try: ignored from now on
    LOCKED = "locked"  # locked out already: ignore them
    CLOSED = "closed"  # no pairing is open (an owner is known)


class Pairing:
    """The one-time owner code and the wrong-code counter (in memory only)."""

    def __init__(self, now: Callable[[], datetime] = utc_now, code: str | None = None) -> None:
        self.code: str | None = code  # None: closed (an owner is known, or the code was used)
        self.now = now
        self._tries: OrderedDict[int, list[datetime]] = OrderedDict()
        self._locked: OrderedDict[int, datetime] = OrderedDict()  # user -> until

    def locked(self, user_id: int) -> bool:
        until = self._locked.get(user_id)
        if until is None:
            return False
        if self.now() >= until:
            del self._locked[user_id]
            return False
        return True

    def attempt(self, user_id: int, code: str) -> PairResult:
        """Check a code; PAIRED only for the right one from a user who is not locked out (then it is closed)."""
        if self.locked(user_id):
            return PairResult.LOCKED
        if self.code is None:
            return PairResult.CLOSED
        if secrets.compare_digest(code.strip().upper().encode(), self.code.encode()):
            self.code = None  # used: nothing matches any more
            return PairResult.PAIRED
        now = self.now()
        tries = [t for t in self._tries.pop(user_id, []) if now - t < TRY_WINDOW] + [now]
        if len(tries) >= MAX_TRIES:
            self._locked[user_id] = now + LOCKOUT
            _trim(self._locked)
            return PairResult.LOCKED_OUT
        self._tries[user_id] = tries
        _trim(self._tries)
        return PairResult.WRONG


def _trim(d: OrderedDict) -> None:  # type: ignore[type-arg]
    while len(d) > MAX_REMEMBERED:
        d.popitem(last=False)


@dataclass(frozen=True)
class Person:
    """A Telegram user as the bot saw them."""

    id: int
    first_name: str = ""
    username: str = ""

    def label(self) -> str:
        """``Minji (@minji)``, ``Minji``, ``@minji`` or ``''``."""
        if self.first_name and self.username:
            return f"{self.first_name} (@{self.username})"
        return self.first_name or (f"@{self.username}" if self.username else "")


class Change(Enum):
    DONE = "done"
    ALREADY = "already"  # nothing to do
    CONFIG = "config"  # named in the configuration: cannot be changed from Telegram
    OWNER = "owner"  # the owner cannot be denied


@dataclass(frozen=True)
class Member:
    """One line of the owner's /users list."""

    person: Person
    role: str  # owner, config, added
    added_at: str = ""


class Access:
    """Who may use the bot, from the settings and the access file."""

    def __init__(
        self,
        store: AccessStore,
        *,
        owner_id: int | None = None,
        allowed: frozenset[int] = frozenset(),
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self.store = store
        self.configured_owner = owner_id
        self.allowed = allowed
        self.now = now
        # the code exists only while no owner is known; wrong tries are remembered either way
        self.pairing = Pairing(now, None if self.owner is not None else new_code())
        self._seen: OrderedDict[int, Person] = OrderedDict()  # refused people, for a later /allow

    @property
    def owner(self) -> int | None:
        return self.configured_owner if self.configured_owner is not None else self.store.owner

    def is_owner(self, user_id: int | None) -> bool:
        return user_id is not None and user_id == self.owner

    def user_allowed(self, user_id: int | None) -> bool:
        if user_id is None:
            return False
        return self.is_owner(user_id) or user_id in self.allowed or self.store.has_user(user_id)

    def group_allowed(self, chat_id: int) -> bool:
        return self.store.has_group(chat_id)

    def chat_allowed(self, chat_id: int, user_id: int | None, *, group: bool) -> bool:
        """May ``user_id`` talk to the bot in this chat (a group counts when the owner allowed it)?"""
        return self.user_allowed(user_id) or (group and user_id is not None and self.group_allowed(chat_id))

    def ignored(self, user_id: int | None) -> bool:
        """Locked out after too many wrong pairing codes: no answer at all."""
        return user_id is not None and self.pairing.locked(user_id)

    # -- people ----------------------------------------------------------------
    def saw_stranger(self, person: Person) -> None:
        """Keep a refused person's names in memory (never on disk), for the owner's /allow."""
        self._seen.pop(person.id, None)
        self._seen[person.id] = person
        _trim(self._seen)

    def saw_member(self, person: Person) -> bool:
        """Note an allowed person's current names; True if the file should be saved."""
        return self.store.set_name(person.id, person.first_name, person.username)

    def person(self, user_id: int) -> Person:
        known = self.store.names().get(user_id)
        if known:
            return Person(user_id, str(known.get("first_name", "")), str(known.get("username", "")))
        return self._seen.get(user_id, Person(user_id))

    # -- pairing ---------------------------------------------------------------
    def pair(self, person: Person, code: str) -> PairResult:
        """Try ``code``; on success ``person`` is the owner (call ``store.save()`` next) and the code is gone."""
        if self.owner is not None:
            self.pairing.code = None
        result = self.pairing.attempt(person.id, code)
        if result is PairResult.PAIRED:
            self.store.set_owner(person.id, self.now().astimezone().isoformat(timespec="seconds"))
            self.store.set_name(person.id, person.first_name, person.username)
        return result

    @property
    def pairing_code(self) -> str | None:
        """The open pairing code (to log once at start), or None."""
        return self.pairing.code if self.owner is None else None

    # -- the owner's commands --------------------------------------------------
    def _stamp(self, by: int) -> dict[str, object]:
        return {"added_at": self.now().astimezone().isoformat(timespec="seconds"), "added_by": by}

    def allow_user(self, user_id: int, by: int) -> Change:
        if self.is_owner(user_id):
            return Change.ALREADY
        if user_id in self.allowed:
            return Change.CONFIG
        if not self.store.add_user(user_id, self._stamp(by)):
            return Change.ALREADY
        seen = self._seen.pop(user_id, None)
        if seen is not None:
            self.store.set_name(user_id, seen.first_name, seen.username)
        return Change.DONE

    def deny_user(self, user_id: int) -> Change:
        if self.is_owner(user_id):
            return Change.OWNER
        if user_id in self.allowed:
            return Change.CONFIG
        return Change.DONE if self.store.remove_user(user_id) else Change.ALREADY

    def allow_group(self, chat_id: int, title: str, by: int) -> Change:
        return Change.DONE if self.store.add_group(chat_id, {"title": title, **self._stamp(by)}) else Change.ALREADY

    def deny_group(self, chat_id: int) -> Change:
        return Change.DONE if self.store.remove_group(chat_id) else Change.ALREADY

    def members(self) -> list[Member]:
        """The owner, the configured users and the added users, in that order."""
        out: list[Member] = []
        owner = self.owner
        if owner is not None:
            out.append(Member(self.person(owner), "owner"))
        out += [Member(self.person(uid), "config") for uid in sorted(self.allowed) if uid != owner]
        for uid, info in sorted(self.store.users().items()):
            if uid != owner and uid not in self.allowed:
                out.append(Member(self.person(uid), "added", str(info.get("added_at", ""))))
        return out

    def groups(self) -> dict[int, str]:
        return {cid: str(info.get("title", "")) for cid, info in sorted(self.store.groups().items())}
