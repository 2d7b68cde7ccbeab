"""The append-only JSONL transcript: one file per chat, one message per line.

The transcript is the source of truth. It is never rewritten: turns are appended
atomically (one ``write`` under an OS-level lock, then ``fsync``) and everything
else (windows, summaries, indexes) is derived from it.

Readers take the shared lock only to learn the file's size: the bytes before a size
seen under the lock are complete turns and never change, so they can be read
without holding the lock.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.files import FILE_MODE, ensure_private_dir, fsync_dir, locked

log = logging.getLogger(__name__)

_CHAT_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_BLOCK = 64 * 1024
ROLES = ("user", "assistant")


class InvalidChatId(ValueError):
    """A chat id that cannot name a file safely."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored message and where its line sits in the file (byte offsets)."""

    offset: int
    end: int
    data: dict[str, Any]

    @property
    def role(self) -> str:
        return str(self.data["role"])

    @property
    def content(self) -> Any:
        return self.data["content"]


def check_chat_id(chat_id: int | str) -> str:
    """Return the chat id as a file-safe string, or raise InvalidChatId."""
    text = str(chat_id)
    if not _CHAT_ID.match(text):
        raise InvalidChatId(f"invalid chat id {text!r}: use letters, digits, '_' or '-' (max 64)")
    return text


def is_message(data: Any) -> bool:
    """Whether a decoded transcript line is a message: a dict with a role and a content."""
    return isinstance(data, dict) and data.get("role") in ROLES and isinstance(data.get("content"), str | list)


class Transcript:
    """Per-chat JSONL files under ``<root>/chats``."""

    def __init__(self, data_dir: Path | str) -> None:
        self.root = Path(data_dir)
        self.dir = self.root / "chats"

    # -- paths -------------------------------------------------------------
    def path(self, chat_id: int | str) -> Path:
        return self.dir / f"{check_chat_id(chat_id)}.jsonl"

    def exists(self, chat_id: int | str) -> bool:
        return self.path(chat_id).exists()

    # -- writing -----------------------------------------------------------
    def append(self, chat_id: int | str, messages: Sequence[Mapping[str, Any]]) -> list[Entry]:
        """Append ``messages`` as one write under an exclusive lock, fsynced.

        Either every message of the call reaches the disk or, after a crash, the
        torn tail is skipped by readers. If the file does not end in a newline
        (a torn line from an earlier crash), the new lines start on a fresh line.
        """
        for m in messages:
            if not is_message(m):
                raise ValueError(f"not a storable message: {m!r}")
        lines = [encode_line(m) for m in messages]
        path = self.path(chat_id)
        ensure_private_dir(self.root)
        ensure_private_dir(self.dir)
        while True:
            created = not path.exists()
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
            try:
                with locked(fd, exclusive=True):
                    if not _same_file(fd, path):
                        continue  # archived (renamed) while we waited: open the new file
                    size = os.fstat(fd).st_size
                    prefix = b""
                    if size and _last_byte(path, size) != b"\n":
                        log.warning("transcript %s: torn last line, starting a new line", path.name)
                        prefix = b"\n"
                    data = prefix + "".join(lines).encode("utf-8")
                    try:
                        _write_all(fd, data)
                        os.fsync(fd)
                    except OSError:  # disk full, read-only, …: take back what was written, then report
                        with contextlib.suppress(OSError):
                            os.ftruncate(fd, size)
                        raise
            finally:
                os.close(fd)
            if created:
                fsync_dir(self.dir)
            break
        entries: list[Entry] = []
        pos = size + len(prefix)
        for m, line in zip(messages, lines, strict=True):
            n = len(line.encode("utf-8"))
            entries.append(Entry(pos, pos + n, dict(m)))
            pos += n
        return entries

    # -- reading -----------------------------------------------------------
    def size(self, chat_id: int | str) -> int:
        """The file's size at a turn boundary (0 if it does not exist)."""
        try:
            fd = os.open(self.path(chat_id), os.O_RDONLY)
        except FileNotFoundError:
            return 0
        try:
            with locked(fd, exclusive=False):
                return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def tail(self, chat_id: int | str, limit: int, *, stop: int = 0) -> list[Entry]:
        """The last ``limit`` valid messages, read backwards from the end of the file.

        Costs in proportion to the bytes of those messages, not to the file. Reading
        does not go before byte ``stop`` (used by the summary to read only what it
        does not cover).
        """
        if limit <= 0:
            return []
        path = self.path(chat_id)
        try:
            f = open(path, "rb")  # noqa: SIM115
        except FileNotFoundError:
            return []
        with f:
            with locked(f.fileno(), exclusive=False):
                size = os.fstat(f.fileno()).st_size
            out: list[Entry] = []
            for offset, end, raw in _lines_backwards(f, size, stop):
                entry = _parse(path, offset, end, raw)
                if entry is not None:
                    out.append(entry)
                    if len(out) >= limit:
                        break
        out.reverse()
        return out

    def read(self, chat_id: int | str, start: int = 0) -> Iterator[Entry]:
        """Every valid message from byte ``start`` on, in order."""
        path = self.path(chat_id)
        try:
            f = open(path, "rb")  # noqa: SIM115
        except FileNotFoundError:
            return
        with f:
            with locked(f.fileno(), exclusive=False):
                size = os.fstat(f.fileno()).st_size
            f.seek(start)
            pos = start
            while pos < size:
                raw = f.readline(size - pos)
                end = pos + len(raw)
                if not raw.endswith(b"\n"):
                    log.warning("transcript %s: skipping a torn last line at byte %d", path.name, pos)
                    return
                entry = _parse(path, pos, end, raw)
                if entry is not None:
                    yield entry
                pos = end

    def archive(self, chat_id: int | str, stamp: str) -> Path | None:
        """Rename the chat's transcript to ``archive/<id>.<stamp>.jsonl``; nothing is deleted."""
        path = self.path(chat_id)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            with locked(fd, exclusive=True):
                target_dir = ensure_private_dir(self.dir / "archive")
                target = target_dir / f"{check_chat_id(chat_id)}.{stamp}.jsonl"
                n = 1
                while target.exists():
                    n += 1
                    target = target_dir / f"{check_chat_id(chat_id)}.{stamp}-{n}.jsonl"
                os.rename(path, target)
                fsync_dir(self.dir)
                fsync_dir(target_dir)
                return target
        finally:
            os.close(fd)


_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def encode_line(message: Mapping[str, Any]) -> str:
    """One message as one JSON line of valid UTF-8.

    Characters that some tools count as line breaks (U+2028, U+2029, NEL) are escaped, so every
    line-splitting reader sees one message per line; lone surrogates (invalid text, e.g. from a
    broken client) become U+FFFD instead of making the turn unwritable.
    """
    text = json.dumps(dict(message), ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in _LINE_BREAKS.items():
        if raw in text:
            text = text.replace(raw, escaped)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text + "\n"


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def _last_byte(path: Path, size: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(size - 1)
        return f.read(1)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _lines_backwards(f: Any, size: int, stop: int) -> Iterator[tuple[int, int, bytes]]:
    """Yield (offset, end, raw line) from the end of the file back to byte ``stop``.

    A last line without its newline is a torn write and is skipped with a warning.
    """
    # 1. find the end of the last complete line
    end = size
    pos = size
    while pos > stop:
        step = min(_BLOCK, pos - stop)
        pos -= step
        f.seek(pos)
        chunk = f.read(step)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            end = pos + cut + 1
            break
    else:
        end = stop
    if end < size:
        log.warning("transcript: skipping a torn last line at byte %d", end)
    # 2. walk complete lines backwards; buf holds the bytes [pos, line_end)
    pos = end
    buf = b""
    while True:
        cut = buf.rfind(b"\n", 0, len(buf) - 1) if buf else -1
        if cut >= 0:
            yield pos + cut + 1, pos + len(buf), buf[cut + 1 :]
            buf = buf[: cut + 1]
            continue
        if pos <= stop:
            if buf:
                yield pos, pos + len(buf), buf
            return
        step = min(_BLOCK, pos - stop)
        pos -= step
        f.seek(pos)
        buf = f.read(step) + buf


def _parse(path: Path, offset: int, end: int, raw: bytes) -> Entry | None:
    text = raw.strip()
    if not text:
        return None
    try:
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError):
        log.warning("transcript %s: skipping an unreadable line at byte %d", path.name, offset)
        return None
    if not is_message(data):
        log.warning("transcript %s: skipping a line that is not a message at byte %d", path.name, offset)
        return None
    return Entry(offset, end, data)
