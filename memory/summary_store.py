"""The stored summary: ``<chat_id>.summary.json``, verified against the transcript before use.

Written atomically (temp file, fsync, rename); a summary that does not belong to the current
transcript (e.g. left by a /reset) is ignored with a warning, never trusted.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memory.files import FILE_MODE, atomic_write_json, ensure_private_dir, fsync_dir
from memory.transcript import Entry, Transcript, check_chat_id

log = logging.getLogger(__name__)

SUMMARY_VERSION = 1

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
