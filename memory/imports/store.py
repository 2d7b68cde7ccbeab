"""Imported conversations as archived transcripts: ``chats/archive/<chat>.<stamp>-imported-<source>-<n>.jsonl``.

Imported conversations go into archived transcripts of the chat, like those ``/reset`` leaves, read by
recall, ``/search``, the ``search_memory`` tool and ``/export`` as any other; the live transcript is never
touched. Each conversation is one block of consecutive lines with its own dates. The conversations of a
source share a "volume" file until it holds ``VOLUME_BYTES`` (then a new one starts): a ChatGPT account
holds thousands of conversations, and recall looks at every transcript file of a chat at every question
(a stat each), so a file per conversation would make each question slower by a second at 40,000 of them.
A new conversation starts a new session for recall (its first message is either more than SESSION_GAP
after the previous line or earlier than it: memory.recall.store).

A line is a transcript message (``role``, ``content``, ``at``, ``name`` for Telegram senders) plus ``src``
(the format), ``src_id`` (the message's own id there), ``src_conv`` (its conversation's) and, on the first
line of a conversation written, its ``title``. Importing again recognizes every message by source and id
(an 8-byte hash of each message already imported is kept in a sorted array per volume: 8 bytes a message, a million
messages in 8 MB): a conversation that went on gets only its new messages, and nothing else changes.

A conversation becomes part of the history only once it was read whole: its lines wait in memory (past
SPILL_CHARS in a temporary file), then join its source's batch, a temporary file (``.import-*.tmp`` in the
archive folder, a name no reader takes for a transcript) that goes into the volume every COMMIT_BYTES and
at the end: linked into place as a new volume (fsynced), or appended to the current volume under the
transcript lock, fsynced (memory.transcript's rules). One fsync per batch, not two per conversation:
they were 70% of an import's time.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import os
import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from memory.files import FILE_MODE, ensure_private_dir, fsync_dir, locked
from memory.imports.formats import Message
from memory.transcript import check_chat_id, encode_line

VOLUME_BYTES = 32 * 1024 * 1024  # an imported volume takes no new batch past this size
COMMIT_BYTES = 8 * 1024 * 1024  # whole conversations written into their volume together (one fsync)
SPILL_CHARS = 4 * 1024 * 1024  # a conversation's lines held in memory at most; the rest in a temporary file
_NAME = re.compile(r"^(?P<chat>[A-Za-z0-9_-]+)\.(?P<stamp>\d{8}T\d{6}Z)-imported-(?P<source>[a-z]+)-\d{4,}\.jsonl$")
_TMP = re.compile(r"^\.import-(?P<pid>\d+)-\d+\.tmp$")
_COPY = 1 << 20


def message_hash(source: str, key: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{source}\0{key}".encode(), digest_size=8).digest(), "big", signed=True)


def is_volume(name: str) -> bool:
    """Whether an archive file name is one of imported conversations."""
    return _NAME.match(name) is not None


class ImportStore:
    """The imported volumes of one chat, and the messages they hold."""

    def __init__(self, data_dir: Path | str, chat: str, *, now: datetime | None = None) -> None:
        self.chat = check_chat_id(chat)
        self.root = Path(data_dir)
        self.dir = self.root / "chats" / "archive"
        self.stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        self.volumes: dict[str, list[Path]] = {}  # source -> its volumes, oldest first
        with contextlib.suppress(FileNotFoundError):
            for name in sorted(os.listdir(self.dir)):
                m = _NAME.match(name)
                if m and m["chat"] == self.chat:
                    self.volumes.setdefault(m["source"], []).append(self.dir / name)
        self._known: list[array[int]] | None = None
        self._tmp_n = 0
        self._batches: dict[str, _Batch] = {}
        _clean_temporary(self.dir)

    def known(self) -> list[array[int]]:
        """The hashes of every message imported before, one sorted array per volume (read once, at the first
        conversation; sorted volume by volume, so no more than one volume's hashes are ever a list)."""
        if self._known is None:
            self._known = [array("q", sorted(read_hashes(path))) for paths in self.volumes.values() for path in paths]
        return self._known

    def imported(self, h: int) -> bool:
        for known in self.known():
            i = bisect.bisect_left(known, h)
            if i < len(known) and known[i] == h:
                return True
        return False

    def begin(self, source: str, key: str, title: str = "") -> Pending:
        return Pending(self, source, key, title)

    def _temporary(self) -> Path:
        for d in (self.root, self.dir.parent, self.dir):
            ensure_private_dir(d)
        self._tmp_n += 1
        return self.dir / f".import-{os.getpid()}-{self._tmp_n}.tmp"

    def _take(self, pending: Pending) -> None:
        """Add a whole conversation to its source's batch; a batch of COMMIT_BYTES goes into its volume."""
        batch = self._batches.get(pending.source)
        if batch is None:
            path = self._temporary()
            batch = self._batches[pending.source] = _Batch(path, open(path, "w", encoding="utf-8", newline="\n"))  # noqa: SIM115
            os.chmod(path, FILE_MODE)
        batch.size += pending.write_to(batch.f)
        if batch.size >= COMMIT_BYTES:
            self._flush(pending.source)

    def flush(self) -> None:
        """Write every batch into its volume (at the end of a file, and before any error is reported)."""
        for source in list(self._batches):
            self._flush(source)

    def _flush(self, source: str) -> None:
        batch = self._batches.pop(source)
        try:
            batch.f.flush()
            target, new = self._target(source)
            if new:
                os.fsync(batch.f.fileno())
                try:
                    os.link(batch.path, target)  # never over a file that appeared meanwhile
                except FileExistsError:
                    new = False
                else:
                    fsync_dir(self.dir)
                    self.volumes.setdefault(source, []).append(target)
            if not new:
                _append(batch.path, target)
        finally:
            batch.f.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(batch.path)

    def _target(self, source: str) -> tuple[Path, bool]:
        """The volume the next conversation of ``source`` goes into, and whether it is a new one."""
        paths = self.volumes.get(source, [])
        if paths:
            with contextlib.suppress(FileNotFoundError):
                if os.stat(paths[-1]).st_size < VOLUME_BYTES:
                    return paths[-1], False
        n = len(paths) + 1
        name = f"{self.chat}.{self.stamp}-imported-{source}-{n:04d}.jsonl"  # sorts in the order written
        return self.dir / name, True


def _clean_temporary(folder: Path) -> None:
    """Remove what an import that died (its process is gone) left half written: never part of a history."""
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(folder):
            m = _TMP.match(name)
            if m and int(m["pid"]) != os.getpid() and not _alive(int(m["pid"])):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(folder / name)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_hashes(path: Path) -> Iterable[int]:
    """The hash of every imported message in a volume."""
    with contextlib.suppress(FileNotFoundError), open(path, "rb") as f:
        for raw in f:
            try:
                data = json.loads(raw)
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("src_id"), str) and isinstance(data.get("src"), str):
                yield message_hash(data["src"], data["src_id"])


@dataclass(slots=True)
class _Batch:
    """Whole conversations waiting for their volume, in a temporary file."""

    path: Path
    f: IO[str]
    size: int = 0


class Pending:
    """One conversation being read: ``add`` its messages, then ``commit`` (or ``abort``). Its lines are held
    in memory, and past SPILL_CHARS (a Telegram chat of years) in a temporary file of its own."""

    def __init__(self, store: ImportStore, source: str, key: str, title: str) -> None:
        self.store, self.source, self.key, self.title = store, source, key, title
        self._lines: list[str] = []
        self._chars = 0
        self._spill: tuple[Path, IO[str]] | None = None
        self._mine: set[int] = set()  # this conversation's messages (an export that repeats one)
        self.added = 0
        self.present = 0  # messages imported before
        self.first: str | None = None
        self.last: str | None = None

    def add(self, messages: Iterable[Message]) -> None:
        for m in messages:
            h = message_hash(self.source, m.key)
            if h in self._mine or self.store.imported(h):
                self.present += 1
                continue
            self._mine.add(h)
            data: dict[str, object] = {"role": m.role, "content": m.text}
            if m.at:
                data["at"] = m.at
            if m.name:
                data["name"] = m.name
            data.update(src=self.source, src_conv=self.key, src_id=m.key)
            if not self.added and self.title:
                data["title"] = self.title
            self._write(encode_line(data))
            self.added += 1
            if m.at:
                self.first = m.at if self.first is None or m.at < self.first else self.first
                self.last = m.at if self.last is None or m.at > self.last else self.last

    def _write(self, line: str) -> None:
        if self._spill is not None:
            self._spill[1].write(line)
            return
        self._lines.append(line)
        self._chars += len(line)
        if self._chars > SPILL_CHARS:
            path = self.store._temporary()
            f = open(path, "w+", encoding="utf-8", newline="\n")  # noqa: SIM115 - closed in write_to/abort
            os.chmod(path, FILE_MODE)
            f.writelines(self._lines)
            self._lines, self._spill = [], (path, f)

    def write_to(self, out: IO[str]) -> int:
        """Copy the lines into ``out``; the characters written."""
        if self._spill is None:
            out.writelines(self._lines)
            return self._chars
        path, f = self._spill
        f.seek(0)
        n = 0
        while chunk := f.read(_COPY):
            out.write(chunk)
            n += len(chunk)
        self.abort()
        return n

    def commit(self) -> None:
        """The conversation was read whole: it becomes part of the chat's history (with its source's batch)."""
        if self.added:
            self.store._take(self)
        self.abort()

    def abort(self) -> None:
        self._lines = []
        if self._spill is not None:
            path, f = self._spill
            self._spill = None
            with contextlib.suppress(OSError):
                f.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def _append(src: Path, target: Path) -> None:
    """Append the lines of ``src`` to ``target`` under the transcript's lock, fsynced; a failure takes the
    written part back (as memory.transcript does)."""
    fd = os.open(target, os.O_RDWR | os.O_APPEND)
    try:
        with locked(fd, exclusive=True):
            size = os.fstat(fd).st_size
            try:
                if size and os.pread(fd, 1, size - 1) != b"\n":
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
