"""Imported conversations as archived transcripts: ``chats/archive/<chat>.<start>-<source>-<hash>.jsonl``.

Each imported conversation is one archived transcript of the chat, like those ``/reset`` leaves (its name
starts with the time of its first message, so archives sort by date), read by recall, ``/search``, the
``search_memory`` tool and ``/export`` as any other. The live transcript is never touched.

A line is a transcript message (``role``, ``content``, ``at``, ``name`` for Telegram senders) plus
``src`` (the format) and ``src_id`` (the message's own id there). Importing again recognizes every
message by its ``src_id``: a conversation already imported gets only its new messages appended (the
export of a chat that went on), one not seen before gets a new file, and nothing else changes.

A conversation is written to a temporary file first (``.import-*.tmp`` in the archive folder, a name no
reader takes for a transcript) and becomes visible only when it was read whole: renamed into place
(fsynced), or appended to its existing file in one write under the transcript lock, fsynced.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from memory.files import FILE_MODE, ensure_private_dir, fsync_dir, locked
from memory.imports.formats import Message
from memory.transcript import check_chat_id, encode_line

_NAME = re.compile(
    r"^(?P<chat>[A-Za-z0-9_-]+)\.(?P<stamp>\d{8}T\d{6}Z)-(?P<source>[a-z]+)-(?P<hash>[0-9a-f]{12})\.jsonl$"
)
_COPY = 1 << 20


def conversation_hash(source: str, key: str) -> str:
    return hashlib.blake2b(f"{source}\0{key}".encode(), digest_size=6).hexdigest()


def stamp_of(at: str | None) -> str:
    """``YYYYmmddTHHMMSSZ`` of an ISO time (naive: as written), the epoch's for none."""
    from datetime import UTC, datetime

    if at:
        try:
            dt = datetime.fromisoformat(at.replace("Z", "+00:00"))
        except ValueError:
            dt = None
        if dt is not None:
            if dt.tzinfo is not None:
                dt = dt.astimezone(UTC)
            return dt.strftime("%Y%m%dT%H%M%SZ")
    return "19700101T000000Z"


def message_line(m: Message, source: str) -> str:
    data: dict[str, object] = {"role": m.role, "content": m.text}
    if m.at:
        data["at"] = m.at
    if m.name:
        data["name"] = m.name
    data["src"] = source
    data["src_id"] = m.key
    return encode_line(data)


class ImportStore:
    """The archive folder of one chat, as far as imports are concerned."""

    def __init__(self, data_dir: Path | str, chat: str) -> None:
        self.chat = check_chat_id(chat)
        self.dir = Path(data_dir) / "chats" / "archive"
        self._known: dict[tuple[str, str], Path] | None = None
        self._tmp_n = 0

    def _files(self) -> dict[tuple[str, str], Path]:
        """(source, conversation hash) -> its file, from one listing of the folder."""
        if self._known is None:
            self._known = {}
            with contextlib.suppress(FileNotFoundError):
                for name in os.listdir(self.dir):
                    m = _NAME.match(name)
                    if m and m["chat"] == self.chat:
                        self._known.setdefault((m["source"], m["hash"]), self.dir / name)
        return self._known

    def existing(self, source: str, key: str) -> Path | None:
        return self._files().get((source, conversation_hash(source, key)))

    def begin(self, source: str, key: str) -> Pending:
        ensure_private_dir(self.dir.parent.parent)
        ensure_private_dir(self.dir.parent)
        ensure_private_dir(self.dir)
        self._tmp_n += 1
        tmp = self.dir / f".import-{os.getpid()}-{self._tmp_n}.tmp"
        path = self.existing(source, key)
        return Pending(self, source, key, tmp, path, read_keys(path) if path else set())

    def _register(self, source: str, key: str, path: Path) -> None:
        self._files()[(source, conversation_hash(source, key))] = path


def read_keys(path: Path) -> set[str]:
    """The ``src_id`` of every message in an imported transcript."""
    keys: set[str] = set()
    with contextlib.suppress(FileNotFoundError), open(path, "rb") as f:
        for raw in f:
            with contextlib.suppress(ValueError):
                data = json.loads(raw)
                if isinstance(data, dict) and isinstance(data.get("src_id"), str):
                    keys.add(data["src_id"])
    return keys


class Pending:
    """One conversation being written: ``add`` its messages, then ``commit`` (or ``abort``)."""

    def __init__(self, store: ImportStore, source: str, key: str, tmp: Path, path: Path | None, keys: set[str]) -> None:
        self.store, self.source, self.key = store, source, key
        self.tmp, self.path, self.keys = tmp, path, keys
        self._f = open(tmp, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - closed in commit/abort
        os.chmod(tmp, FILE_MODE)
        self.added = 0
        self.present = 0  # messages already imported before
        self.first: str | None = None
        self.last: str | None = None

    def add(self, messages: Iterable[Message]) -> None:
        for m in messages:
            if m.key in self.keys:
                self.present += 1
                continue
            self.keys.add(m.key)
            self._f.write(message_line(m, self.source))
            self.added += 1
            if m.at:
                self.first = m.at if self.first is None or m.at < self.first else self.first
                self.last = m.at if self.last is None or m.at > self.last else self.last

    def commit(self, started: str | None = None) -> Path | None:
        """Make the messages added part of the chat's history; the file written to (None: nothing new)."""
        self._f.flush()
        os.fsync(self._f.fileno())
        self._f.close()
        try:
            if not self.added:
                return self.path
            if self.path is None:
                stamp = stamp_of(self.first or started)
                name = f"{self.store.chat}.{stamp}-{self.source}-{conversation_hash(self.source, self.key)}.jsonl"
                target = self.store.dir / name
                try:
                    os.link(self.tmp, target)  # never over a file that appeared meanwhile
                except FileExistsError:
                    self.path = target
                else:
                    fsync_dir(self.store.dir)
                    self.store._register(self.source, self.key, target)
                    return target
            _append(self.tmp, self.path)
            return self.path
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.tmp)

    def abort(self) -> None:
        with contextlib.suppress(OSError):
            self._f.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.tmp)


def _append(src: Path, target: Path) -> None:
    """Append the lines of ``src`` to ``target`` under the transcript's lock, fsynced; a failure takes the
    written part back (as memory.transcript does)."""
    fd = os.open(target, os.O_WRONLY | os.O_APPEND)
    try:
        with locked(fd, exclusive=True):
            size = os.fstat(fd).st_size
            try:
                if size and _last_byte(target, size) != b"\n":
                    os.write(fd, b"\n")
                with open(src, "rb") as f:
                    while chunk := f.read(_COPY):
                        view = memoryview(chunk)
                        while view:
                            view = view[os.write(fd, view) :]
                os.fsync(fd)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise
    finally:
        os.close(fd)


def _last_byte(path: Path, size: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(size - 1)
        return f.read(1)
