"""Who may talk to the bot: ``$DATA_DIR/access.json`` (written atomically, mode 0600).

::

    {"version": 1,
     "owner": {"id": 123, "since": "2026-11-29T23:05:00+09:00", "via": "pairing"},
     "users": {"456": {"added_at": "…", "added_by": 123}},
     "groups": {"-100789": {"title": "Family", "added_at": "…", "added_by": 123}},
     "names": {"123": {"first_name": "Minji", "username": "minji"}}}

``owner`` is set by pairing (an owner named in the configuration is not stored here);
``users`` and ``groups`` are added and removed by the owner; ``names`` are the Telegram names
of allowed people as last seen, for the owner's ``/users`` list. Nobody else is ever written
down. The policy lives in bot/core/access.py; this is only the file.
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

from memory.files import atomic_write_json

FILE_NAME = "access.json"
VERSION = 1


class AccessFileError(Exception):
    """access.json exists but cannot be used; the message says what to do (nothing was changed)."""


def _id_map(raw: Any, name: str, path: Path) -> dict[str, dict[str, Any]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise AccessFileError(f"{path}: {name!r} must be an object; fix or move the file")
    out: dict[str, dict[str, Any]] = {}
    for key, value in raw.items():
        try:
            int(key)
        except ValueError:
            raise AccessFileError(f"{path}: {name} key {key!r} is not a numeric id; fix or move the file") from None
        out[str(int(key))] = dict(value) if isinstance(value, dict) else {}
    return out


class AccessStore:
    """The access file, loaded once and kept in memory; ``save()`` writes the current state."""

    def __init__(self, data_dir: Path | str) -> None:
        self.path = Path(data_dir) / FILE_NAME
        self._lock = threading.Lock()
        self._data: dict[str, Any] = {"version": VERSION, "owner": None, "users": {}, "groups": {}, "names": {}}

    def load(self) -> AccessStore:
        """Read the file if there is one; raises AccessFileError when it is unusable (it is left as it is)."""
        try:
            raw = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return self
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise AccessFileError(f"{self.path} is not valid JSON ({e}); fix or move the file") from None
        if not isinstance(raw, dict):
            raise AccessFileError(f"{self.path} must hold a JSON object; fix or move the file")
        owner = raw.get("owner")
        if owner is not None and not (isinstance(owner, dict) and isinstance(owner.get("id"), int)):
            raise AccessFileError(f"{self.path}: 'owner' must be null or {{\"id\": <number>, …}}; fix or move the file")
        with self._lock:
            self._data = {
                "version": VERSION,
                "owner": dict(owner) if owner else None,
                "users": _id_map(raw.get("users"), "users", self.path),
                "groups": _id_map(raw.get("groups"), "groups", self.path),
                "names": _id_map(raw.get("names"), "names", self.path),
            }
        return self

    def save(self) -> None:
        """Write the current state atomically (temp file, fsync, rename; 0600). Call it off the event loop.

        The state is copied under the lock at write time and writes are serialized, so the
        last write always carries the newest state.
        """
        with self._lock:
            snapshot = copy.deepcopy(self._data)
            atomic_write_json(self.path, snapshot)

    # -- owner -----------------------------------------------------------------
    @property
    def owner(self) -> int | None:
        with self._lock:
            owner = self._data["owner"]
            return int(owner["id"]) if owner else None

    def set_owner(self, user_id: int, since: str, via: str = "pairing") -> None:
        with self._lock:
            self._data["owner"] = {"id": user_id, "since": since, "via": via}

    # -- users and groups ------------------------------------------------------
    def _ids(self, kind: str) -> dict[int, dict[str, Any]]:
        with self._lock:
            return {int(k): dict(v) for k, v in self._data[kind].items()}

    def users(self) -> dict[int, dict[str, Any]]:
        return self._ids("users")

    def groups(self) -> dict[int, dict[str, Any]]:
        return self._ids("groups")

    def names(self) -> dict[int, dict[str, Any]]:
        return self._ids("names")

    def has_user(self, user_id: int) -> bool:
        with self._lock:
            return str(user_id) in self._data["users"]

    def has_group(self, chat_id: int) -> bool:
        with self._lock:
            return str(chat_id) in self._data["groups"]

    def _add(self, kind: str, key: int, info: dict[str, Any]) -> bool:
        with self._lock:
            if str(key) in self._data[kind]:
                return False
            self._data[kind][str(key)] = dict(info)
            return True

    def _remove(self, kind: str, key: int) -> bool:
        with self._lock:
            return self._data[kind].pop(str(key), None) is not None

    def add_user(self, user_id: int, info: dict[str, Any]) -> bool:
        """Allow a user; False if already allowed."""
        return self._add("users", user_id, info)

    def remove_user(self, user_id: int) -> bool:
        """Take a user's access away (and their name); False if they were not in the list."""
        removed = self._remove("users", user_id)
        self._remove("names", user_id)
        return removed

    def add_group(self, chat_id: int, info: dict[str, Any]) -> bool:
        return self._add("groups", chat_id, info)

    def remove_group(self, chat_id: int) -> bool:
        return self._remove("groups", chat_id)

    def set_name(self, user_id: int, first_name: str, username: str) -> bool:
        """Remember an allowed person's Telegram names; True if they changed (then save)."""
        entry = {k: v for k, v in (("first_name", first_name), ("username", username)) if v}
        with self._lock:
            if self._data["names"].get(str(user_id)) == entry:
                return False
            self._data["names"][str(user_id)] = entry
            return True
