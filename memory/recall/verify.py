"""Does the recall index still describe the transcripts? A read-only check (``python -m bot doctor``).

For every transcript file the index recorded (memory.recall.store ``files``: inode, bytes and
lines indexed, hashes of the first line and of the bytes before where indexing stopped) it
compares the file on disk, without rebuilding, syncing or writing anything (the database is
opened read-only), reading at most two small pieces of each file:

- not indexed yet, or grown since (a chat that has not spoken or been searched since): a note,
  harmless — the index catches up at the chat's next message or search;
- renamed by ``/reset`` (the live file now in ``archive/``), or copied with the same content (a
  restore): a note — the next sync follows the rename, or indexes the copy again;
- changed where it was indexed (other first line, other bytes before the indexed end, shorter
  than what was indexed), gone, or the index's own rows disagreeing with what it recorded: a
  problem — transcripts are append-only and never deleted by the bot; the next sync drops the
  file's turns (and indexes the file again if it is there), but something or someone changed it;
- an index that cannot be read or is of another version: a note, nothing compared (the
  integrity of the file is the doctor's "recall index" check; the bot rebuilds it).

``deep=True`` also counts the lines of each indexed part (reads whole files).

    inspect_index(data_dir) -> IndexReport(problems, notes, files, chats)
    verify_index(data_dir) -> list[str]        # the problems only ([] = the index matches)
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from memory.recall.build import BUILDING_KEY
from memory.recall.store import DB_NAME, VERSION, head_digest, tail_digest
from memory.transcript import InvalidChatId, check_chat_id

MAX_LINES = 20  # problems listed one by one; the rest are counted
_CHUNK = 1 << 20


@dataclass
class IndexReport:
    """What ``inspect_index`` found: ``problems`` (something changed a transcript, or the index is
    unreadable), ``notes`` (harmless: not indexed yet, renamed), and what was compared."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: int = 0  # transcript files on disk
    chats: int = 0  # chats with a transcript on disk
    indexed: int = 0  # files the index records


@dataclass(frozen=True, slots=True)
class _Recorded:
    id: int
    chat: str
    name: str  # '' for the live transcript, else the archive file name
    dev: int
    ino: int
    done: int
    lines: int
    head: str
    tail: str


def _disk(chats_dir: Path) -> dict[str, dict[str, os.stat_result]]:
    """chat -> {index name: stat} of every transcript under ``chats_dir`` (live and archived)."""
    found: dict[str, dict[str, os.stat_result]] = defaultdict(dict)
    for folder, archived in ((chats_dir, False), (chats_dir / "archive", True)):
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if not entry.name.endswith(".jsonl"):
                continue
            chat = entry.name.split(".", 1)[0] if archived else entry.name.removesuffix(".jsonl")
            try:
                check_chat_id(chat)
                st = entry.stat()
            except (InvalidChatId, OSError):
                continue
            if entry.is_file():
                found[chat][entry.name if archived else ""] = st
    return found


def _path(chats_dir: Path, chat: str, name: str) -> Path:
    return chats_dir / f"{chat}.jsonl" if name == "" else chats_dir / "archive" / name


def _label(chat: str, name: str) -> str:
    return f"chats/{chat}.jsonl" if name == "" else f"chats/archive/{name}"


def _count_lines(path: Path, end: int) -> int:
    n = 0
    with open(path, "rb") as f:
        left = end
        while left > 0:
            block = f.read(min(_CHUNK, left))
            if not block:
                break
            n += block.count(b"\n")
            left -= len(block)
    return n


def _same_content(path: Path, r: _Recorded, st: os.stat_result) -> str | None:
    """None if the file's first ``r.done`` bytes are the ones indexed (as far as the hashes tell),
    else what differs."""
    if st.st_size < r.done:
        return f"it is shorter ({st.st_size:,} bytes) than the {r.done:,} bytes indexed"
    if r.done == 0:
        return None
    try:
        with open(path, "rb") as f:
            if head_digest(f) != r.head:
                return "its first line is not the one indexed"
            if tail_digest(f, r.done) != r.tail:
                return f"the bytes before byte {r.done:,} (where indexing stopped) are not the ones indexed"
    except OSError as e:
        return f"it cannot be read ({e.strerror or e})"
    return None


def inspect_index(data_dir: Path | str, *, path: Path | None = None, deep: bool = False) -> IndexReport:
    """Compare the index under ``data_dir`` (read-only) with the transcripts on disk."""
    data_dir = Path(data_dir)
    db = path or data_dir / DB_NAME
    chats_dir = data_dir / "chats"
    report = IndexReport()
    disk = _disk(chats_dir)
    report.chats = len(disk)
    report.files = sum(len(v) for v in disk.values())
    if not db.exists():
        if report.files:
            report.notes.append(f"no index yet: {report.files} transcript files are indexed at first use")
        return report
    try:
        conn = open_readonly(db)
    except sqlite3.Error as e:
        report.notes.append(f"nothing compared: {DB_NAME} cannot be opened ({e}); the bot rebuilds it when it cannot")
        return report
    try:
        return _compare(conn, chats_dir, disk, report, deep)
    except sqlite3.Error as e:  # damaged: the integrity check of the index says so; the bot rebuilds it
        report.notes.append(f"nothing compared: {DB_NAME} cannot be read ({e}); the bot rebuilds it when it cannot")
        return report
    finally:
        conn.close()


def open_readonly(db: Path) -> sqlite3.Connection:
    """A read-only connection that creates no file: a database in use (its WAL is there) is read
    through the WAL, one closed cleanly (no WAL file) as an immutable file, since a read-only
    connection would create the WAL and its index next to it and could not remove them."""
    live = Path(f"{db}-wal").exists() and Path(f"{db}-shm").exists()
    uri = f"{db.resolve().as_uri()}?mode=ro" + ("" if live else "&immutable=1")
    return sqlite3.connect(uri, uri=True, timeout=10)


def _compare(
    conn: sqlite3.Connection,
    chats_dir: Path,
    disk: dict[str, dict[str, os.stat_result]],
    report: IndexReport,
    deep: bool,
) -> IndexReport:
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    version = conn.execute("SELECT value FROM meta WHERE key='version'").fetchone() if has_meta else None
    if version is None or version[0] != VERSION:
        found = "no version" if version is None else f"version {version[0]}"
        report.notes.append(
            f"the index has {found} (this program writes {VERSION}): it is rebuilt from the transcripts at first use"
        )
        return report
    _building_notes(conn, chats_dir, disk, report)
    rows = [
        _Recorded(*r)
        for r in conn.execute(
            "SELECT f.id, c.chat, f.name, f.dev, f.ino, f.done, f.lines, f.head, f.tail "
            "FROM files f JOIN chats c ON c.id = f.chat ORDER BY c.chat, f.name"
        )
    ]
    report.indexed = len(rows)
    problems: list[str] = []
    renamed = copied = grown = 0
    grown_bytes = 0
    covered: dict[str, set[str]] = defaultdict(set)  # chat -> names on disk that some recorded file accounts for
    by_chat: dict[str, list[_Recorded]] = defaultdict(list)
    for r in rows:
        by_chat[r.chat].append(r)
    for chat, recorded in by_chat.items():
        files = disk.get(chat, {})
        by_inode = {(st.st_dev, st.st_ino): name for name, st in files.items()}
        for r in recorded:
            label = _label(chat, r.name)
            now = by_inode.get((r.dev, r.ino))
            if now is not None and now != r.name:
                renamed += 1  # /reset renamed it into the archive; the next sync follows it
                covered[chat].add(now)
                st = files[now]
                where = _path(chats_dir, chat, now)
            elif now is not None:
                covered[chat].add(now)
                st = files[now]
                where = _path(chats_dir, chat, now)
            elif r.name in files:
                st = files[r.name]
                where = _path(chats_dir, chat, r.name)
                differs = _same_content(where, r, st)
                if differs is None:
                    copied += 1  # another inode, the same bytes: restored or copied; indexed again at next sync
                    covered[chat].add(r.name)
                    continue
                problems.append(
                    f"{label} is not the file that was indexed: {differs}. Transcripts are only appended to — "
                    "was it edited or replaced? The next sync drops its turns from the index and indexes it again"
                )
                covered[chat].add(r.name)
                continue
            else:
                problems.append(
                    f"{label} was indexed ({r.lines:,} lines) but is gone: the bot never deletes a transcript. "
                    "The next sync drops its turns from the index"
                )
                continue
            differs = _same_content(where, r, st)
            if differs is not None:
                problems.append(
                    f"{label} changed after it was indexed: {differs}. Transcripts are only appended to — "
                    "was it edited? The next sync drops its turns from the index and indexes it again"
                )
                continue
            last = conn.execute(
                "SELECT line, offset FROM turns WHERE file=? ORDER BY line DESC LIMIT 1", (r.id,)
            ).fetchone()
            if last is not None and (last[0] > r.lines or last[1] >= r.done):
                problems.append(
                    f"{label}: the index holds line {last[0]:,} at byte {last[1]:,} but records only {r.lines:,} "
                    f"lines and {r.done:,} bytes: delete {DB_NAME} to rebuild it"
                )
                continue
            if deep and r.done:
                counted = _count_lines(where, r.done)
                if counted != r.lines:
                    problems.append(
                        f"{label}: {counted:,} lines in the indexed part, the index recorded {r.lines:,}: "
                        f"delete {DB_NAME} to rebuild it"
                    )
                    continue
            if st.st_size > r.done:
                grown += 1
                grown_bytes += st.st_size - r.done
    new = sum(1 for chat, files in disk.items() for name in files if name not in covered[chat])
    new_chats = sum(1 for chat in disk if chat not in by_chat)
    if new or grown:
        parts = []
        if new:
            parts.append(f"{new} transcript file{'s' if new != 1 else ''} not indexed yet ({new_chats} new chats)")
        if grown:
            parts.append(f"{grown} grown by {grown_bytes:,} bytes since")
        report.notes.append(
            "; ".join(parts) + ": harmless, each chat is indexed at its next message or search (or /search)"
        )
    if renamed or copied:
        parts = []
        if renamed:
            parts.append(f"{renamed} renamed by /reset (followed at the chat's next sync)")
        if copied:
            parts.append(f"{copied} copied or restored with the same content (indexed again at the next sync)")
        report.notes.append("; ".join(parts))
    if len(problems) > MAX_LINES:
        problems[MAX_LINES:] = [f"… and {len(problems) - MAX_LINES} more files like these"]
    report.problems.extend(problems)
    return report


def _building_notes(
    conn: sqlite3.Connection, chats_dir: Path, disk: dict[str, dict[str, os.stat_result]], report: IndexReport
) -> None:
    """A note per chat the bot is building in the background (memory.recall.build): how far it got."""
    rows = conn.execute("SELECT key, value FROM meta WHERE key LIKE ? ORDER BY key", (BUILDING_KEY + "%",))
    for key, value in rows.fetchall():
        chat = key[len(BUILDING_KEY) :]
        try:
            data = json.loads(value)
            done, started, updated = int(data["done"]), float(data["started"]), float(data["updated"])
        except (ValueError, KeyError, TypeError):
            continue
        total = sum(st.st_size for st in disk.get(chat, {}).values()) or int(data.get("total") or 0)
        percent = min(99, done * 100 // total) if total else 0
        now = time.time()
        report.notes.append(
            f"chat {chat}: its history is being indexed in the background: {percent}% "
            f"({done / 1e6:.1f} of {total / 1e6:.1f} MB), started {_ago(now - started)} ago, last progress "
            f"{_ago(now - updated)} ago (searches meanwhile cover the part indexed; a stopped bot goes on at the "
            "chat's next message)"
        )


def _ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def verify_index(data_dir: Path | str) -> list[str]:
    """The problems ``inspect_index`` finds: [] when the index matches the transcripts (notes aside)."""
    return inspect_index(data_dir).problems
