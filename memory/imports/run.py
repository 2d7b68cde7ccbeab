"""Importing one export file into a chat's history: open it (JSON or a zip), recognize the format from the
content, stream its conversations into archived transcripts (memory.imports.store), and report.

A conversation is written only when it was read whole and sound. A malformed conversation (or a Telegram
chat with a malformed message) is skipped and named in the report; the others are imported. A file that
is not an export, is not JSON, or ends in the middle stops there: what was read whole before is kept
(and said), nothing after it.
"""

from __future__ import annotations

import contextlib
import os
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from memory.imports import formats
from memory.imports.formats import BadEntry, Conversation
from memory.imports.jsonstream import JsonError, JsonStream, Truncated
from memory.imports.store import ImportStore, Pending

MEMBERS = ("conversations.json", "result.json")  # the file inside an export's zip, by preference
MAX_PROBLEMS = 5  # problems kept word for word in a report (the rest are counted)
NOT_EXPORT = "not a ChatGPT, Claude or Telegram export"


@dataclass(slots=True)
class ImportReport:
    """What one file gave: ``conversations`` imported (with something new), ``messages`` added,
    ``present`` messages found already imported, ``skipped`` conversations left out, and ``error``: why
    reading stopped before the end (None: the whole file was read)."""

    file: str
    source: str | None = None
    conversations: int = 0
    messages: int = 0
    present: int = 0
    read: int = 0  # conversations read whole (imported now, before, or with nothing to keep)
    skipped: int = 0
    problems: list[str] = field(default_factory=list)
    error: str | None = None
    first: str | None = None
    last: str | None = None
    bytes_read: int = 0
    total_bytes: int = 0

    def problem(self, text: str) -> None:
        self.skipped += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)

    def took(self, pending: Pending) -> None:
        self.read += 1
        self.present += pending.present
        if pending.added:
            self.conversations += 1
            self.messages += pending.added
            if pending.first and (self.first is None or pending.first < self.first):
                self.first = pending.first
            if pending.last and (self.last is None or pending.last > self.last):
                self.last = pending.last


Progress = Callable[[ImportReport], None]


@contextlib.contextmanager
def open_export(path: Path) -> Iterator[tuple[IO[bytes], int]]:
    """The export's JSON as a binary stream and its size: the file itself, or the member of its zip."""
    with open(path, "rb") as f:
        magic = f.read(4)
        f.seek(0)
        if magic != b"PK\x03\x04":
            yield f, os.fstat(f.fileno()).st_size
            return
        try:
            archive = zipfile.ZipFile(f)
        except (zipfile.BadZipFile, OSError) as e:
            raise JsonError(f"a damaged zip file ({e})") from None
        with archive:
            members = [i for i in archive.infolist() if i.filename.rsplit("/", 1)[-1] in MEMBERS]
            if not members:
                raise JsonError(f"the zip holds no {' or '.join(MEMBERS)}")
            best = min(members, key=lambda i: (MEMBERS.index(i.filename.rsplit("/", 1)[-1]), len(i.filename)))
            try:
                with archive.open(best) as member:
                    yield member, best.file_size
            except (zipfile.BadZipFile, EOFError, OSError) as e:  # a CRC error, a cut zip
                raise Truncated(f"{best.filename} in the zip is damaged ({e})") from None


def import_file(
    path: Path | str, data_dir: Path | str, chat: str, *, progress: Progress | None = None, every: float = 0.5
) -> ImportReport:
    """Import the export at ``path`` into ``chat``'s history under ``data_dir``; never raises for a bad file."""
    path = Path(path)
    report = ImportReport(str(path))
    store = ImportStore(data_dir, chat)
    last_said = [0.0]

    def tick(stream: JsonStream, force: bool = False) -> None:
        report.bytes_read = stream.bytes_read
        now = time.monotonic()
        if progress is not None and (force or now - last_said[0] >= every):
            last_said[0] = now
            progress(report)

    try:
        try:
            with open_export(path) as (raw, size):
                report.total_bytes = size
                stream = JsonStream(raw)
                first = stream.peek()
                if first == "[":
                    _conversations(stream, store, report, tick)
                elif first == "{":
                    _telegram(stream, store, report, tick)
                else:
                    raise JsonError(f"{NOT_EXPORT} (not JSON)" if first else "the file is empty")
                if not stream.at_end():
                    raise JsonError("more data after the end of the export")
                tick(stream, force=True)
        finally:
            store.flush()  # the whole conversations read before anything went wrong
    except Truncated as e:
        report.error = f"the file is cut short ({e})"
    except JsonError as e:
        report.error = str(e)
    except OSError as e:
        report.error = f"cannot read it or write the history: {e.strerror or e}"
    return report


def _conversations(stream: JsonStream, store: ImportStore, report: ImportReport, tick: Callable[..., None]) -> None:
    """A list of conversations: ChatGPT's or Claude's, told by the first one."""
    parse: Callable[[Any], Conversation] | None = None
    n = 0
    for _ in stream.items():
        value = stream.value()
        n += 1
        if parse is None:
            parse = _which(value)
            report.source = "chatgpt" if parse is formats.chatgpt else "claude"
        try:
            conv = parse(value)
        except BadEntry as e:
            report.problem(f"conversation {n}: {e}")
            continue
        del value
        pending = store.begin(conv.source, conv.key, conv.title)
        try:
            pending.add(conv.messages)
            pending.commit()
        except BaseException:
            pending.abort()
            raise
        report.took(pending)
        tick(stream)
    if parse is None:
        raise JsonError("an empty list: no conversations in it")


def _which(value: Any) -> Callable[[Any], Conversation]:
    if isinstance(value, dict):
        if "mapping" in value or "current_node" in value:
            return formats.chatgpt
        if "chat_messages" in value:
            return formats.claude
    raise JsonError(f"{NOT_EXPORT} (a list, but not of ChatGPT or Claude conversations)")


def _telegram(stream: JsonStream, store: ImportStore, report: ImportReport, tick: Callable[..., None]) -> None:
    """Telegram Desktop's result.json: one chat (``messages``) or the whole account (``chats.list``)."""
    meta: dict[str, Any] = {}
    found = False
    for key in stream.keys():
        if key == "messages":
            found = True
            report.source = "telegram"
            _telegram_chat_messages(stream, store, report, meta, tick)
        elif key in ("chats", "left_chats"):
            found = True
            report.source = "telegram"
            for inner in stream.keys():
                if inner != "list":
                    stream.skip()
                    continue
                for _ in stream.items():
                    _telegram_chat(stream, store, report, tick)
        elif key in ("name", "id", "type") and stream.peek() not in "[{":
            meta[key] = stream.value()
        else:
            stream.skip()
    if not found:
        raise JsonError(f"{NOT_EXPORT} (a JSON object without Telegram's 'messages' or 'chats')")


def _telegram_chat(stream: JsonStream, store: ImportStore, report: ImportReport, tick: Callable[..., None]) -> None:
    if stream.peek() != "{":
        report.problem("a chat that is not an object")
        stream.skip()
        return
    meta: dict[str, Any] = {}
    for key in stream.keys():
        if key == "messages":
            _telegram_chat_messages(stream, store, report, meta, tick)
        elif key in ("name", "id", "type") and stream.peek() not in "[{":
            meta[key] = stream.value()
        else:
            stream.skip()


def _telegram_chat_messages(
    stream: JsonStream, store: ImportStore, report: ImportReport, meta: dict[str, Any], tick: Callable[..., None]
) -> None:
    """One chat's ``messages``, streamed into one archived transcript, committed only if all were sound."""
    name = str(meta.get("name") or meta.get("id") or "?")
    if stream.peek() != "[":
        report.problem(f"chat {name!r}: 'messages' is not a list")
        stream.skip()
        return
    try:
        key = formats.telegram_chat_key(meta)
    except BadEntry as e:
        report.problem(f"chat {name!r}: {e}")
        stream.skip()
        return
    pending: Pending | None = store.begin("telegram", key, name)
    replies = formats.Replies()
    problem = None
    try:
        for _ in stream.items():
            value = stream.value()
            if pending is None:
                continue  # the chat is already known to be unsound: read past the rest
            try:
                message = formats.telegram_message(value, key, replies)
            except BadEntry as e:
                problem = f"chat {name!r}: {e}"
                pending.abort()
                pending = None
                continue
            if message is not None:
                pending.add((message,))
            tick(stream)
        if pending is not None:
            pending.commit()
            report.took(pending)
        else:
            report.problem(problem or f"chat {name!r}")
    except BaseException:
        if pending is not None:
            pending.abort()
        raise
