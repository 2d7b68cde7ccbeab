"""The SQLite file that holds the recall index: schema, connections, and indexing of transcripts.

One database, ``$DATA_DIR/recall.sqlite3`` (mode 0600, WAL). Everything in it is derived from
the transcripts and can be deleted at any time: it is rebuilt when missing, when its version is
not ours, when it is corrupt, and per transcript file when that file is not the one indexed
(another inode, shrunk, or different bytes where indexing stopped).

Tables:

- ``chats``: one row per chat, with its document and term counts (for BM25);
- ``files``: the transcript files of a chat (``name`` is ``''`` for the live one, else the archive
  file name), the inode, how many bytes (``done``) and physical lines (``lines``) are indexed, and a
  hash of the first and the last indexed line to notice a file that was replaced;
- ``turns``: one row per stored message with its 1-based physical ``line``, byte ``offset``, ``at``,
  day (yyyymmdd), role, name, session number, ``dead`` (superseded by a retry), text, and its terms
  as put into ``fts`` (ranking reads them instead of making them again, and a file that is
  forgotten takes exactly them out of ``fts``);
- ``fts``: ONE contentless FTS5 table for every chat over the terms of ``memory.recall.text``.
  A turn's id (its FTS5 rowid too) is ``chat << ID_BITS | n``: each chat owns a range of rowids
  (``ChatRow.lo`` .. ``ChatRow.hi``) and every query on ``fts`` is bounded to it with
  ``rowid BETWEEN``, which FTS5 seeks in its doclists, so a chat's search reads no other chat's
  postings. The statistics of BM25 are the chat's own (``chats.docs`` and ``chats.terms``, and
  document frequencies counted in its range, memory.recall.query); FTS5's ``bm25()`` is never used
  (its statistics are the whole table's, and it counts a term's postings over every chat).
  One table instead of one per chat (version 2) keeps the schema, which SQLite holds in memory
  once per connection, the same size for ten chats or ten thousand.

Writers use ``BEGIN IMMEDIATE``. Indexing reads and parses a batch of lines (memory.recall.lines)
before it, from the file's progress read without the lock, and inside the transaction checks that
the progress is unchanged (else reads again from the new one) and only inserts: two processes (the
bot and the terminal chat, or the background worker) can index the same chat at once without a line
twice or a line lost, and the write lock is never held while Python splits text into terms. Large
files are indexed in batches, one transaction each.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.files import FILE_MODE, ensure_private_dir, locked
from memory.recall.lines import Batch, head_digest, read_batch, tail_digest

log = logging.getLogger(__name__)

VERSION = "4"  # bump when the schema or the terms made by memory.recall.text change (4: a reply's quote apart)
DB_NAME = "recall.sqlite3"
SESSION_GAP = 3 * 3600.0  # seconds of silence that start a new session
BATCH_LINES = 20_000  # lines per transaction when indexing a large file
BUSY_TIMEOUT_MS = 30_000
CACHE_KIB = 2_000  # page cache per connection (SQLite's default; a bigger one made no search faster)
ID_BITS = 40  # a turn's id is chat << ID_BITS | n: a trillion turns per chat, 8 million chats
MAX_CHATS = (1 << (63 - ID_BITS)) - 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chats(
    id INTEGER PRIMARY KEY,
    chat TEXT NOT NULL UNIQUE,
    docs INTEGER NOT NULL DEFAULT 0,
    terms INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY,
    chat INTEGER NOT NULL,
    name TEXT NOT NULL,
    dev INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    seen INTEGER NOT NULL DEFAULT 0,
    mtime INTEGER NOT NULL DEFAULT 0,
    lines INTEGER NOT NULL DEFAULT 0,
    head TEXT NOT NULL DEFAULT '',
    tail TEXT NOT NULL DEFAULT '',
    UNIQUE(chat, name)
);
CREATE TABLE IF NOT EXISTS turns(
    id INTEGER PRIMARY KEY,
    chat INTEGER NOT NULL,
    file INTEGER NOT NULL,
    line INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    ts REAL,
    day INTEGER,
    at TEXT,
    role TEXT NOT NULL,
    name TEXT,
    speaker TEXT,
    session INTEGER NOT NULL,
    dead INTEGER NOT NULL DEFAULT 0,
    nterms INTEGER NOT NULL,
    terms TEXT NOT NULL,
    content TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_file_line ON turns(file, line);
CREATE INDEX IF NOT EXISTS turns_chat_day ON turns(chat, day);
CREATE TABLE IF NOT EXISTS speakers(chat INTEGER NOT NULL, name TEXT NOT NULL, PRIMARY KEY(chat, name));
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    body, content='', columnsize=0, tokenize='unicode61 remove_diacritics 0', prefix='1'
);
"""


_VECS = "CREATE TABLE IF NOT EXISTS vecs(id INTEGER PRIMARY KEY, v BLOB NOT NULL)"  # memory.recall.meaning
_SCHEMA += _VECS + ";"


class IndexCorrupt(Exception):
    """The database file cannot be used and has to be rebuilt."""


@dataclass(frozen=True, slots=True)
class ChatRow:
    id: int
    docs: int
    terms: int

    @property
    def lo(self) -> int:
        """The first turn id (FTS5 rowid) of this chat's range."""
        return self.id << ID_BITS

    @property
    def hi(self) -> int:
        """The last turn id (FTS5 rowid) of this chat's range."""
        return (self.id << ID_BITS) | ((1 << ID_BITS) - 1)


@dataclass(slots=True)
class FileRow:
    id: int
    name: str
    dev: int
    ino: int
    done: int
    seen: int
    mtime: int
    lines: int
    head: str
    tail: str


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating with mode 0600) the index database in WAL mode, autocommit.

    Raises IndexCorrupt when the file cannot be used as the index (and must be rebuilt), and
    sqlite3.OperationalError when it stays locked: connections opened at once on a new file wait
    for the one that switches it to WAL and creates the tables (that switch does not always wait
    by itself).
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return _open(path)
        except sqlite3.OperationalError as e:
            if not _locked(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def _locked(e: sqlite3.Error) -> bool:
    text = str(e).lower()
    return "locked" in text or "busy" in text


def _open(path: Path) -> sqlite3.Connection:
    ensure_private_dir(path.parent)
    if not path.exists():
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if conn.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
            raise IndexCorrupt("cannot switch to WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # the index is derived: losing its last commits is fine
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        version = _version(conn)
        if version is None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if _version(conn) is None:
                    for stmt in _SCHEMA.split(";"):
                        if stmt.strip():
                            conn.execute(stmt)
                    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('version', ?)", (VERSION,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        elif version != VERSION:
            raise IndexCorrupt(f"index version {version!r}, expected {VERSION!r}")
        elif conn.execute("SELECT 1 FROM sqlite_master WHERE name='vecs'").fetchone() is None:
            conn.execute(_VECS)  # an index of the release before recall by meaning: its words stay
    except sqlite3.DatabaseError as e:
        conn.close()
        if isinstance(e, sqlite3.OperationalError) and _locked(e):
            raise
        raise IndexCorrupt(str(e)) from e
    except BaseException:
        conn.close()
        raise
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError, PermissionError):
            os.chmod(str(path) + suffix, FILE_MODE)
    return conn


def _version(conn: sqlite3.Connection) -> str | None:
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if not exists:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()
    return row[0] if row else None


def remove_database(path: Path) -> None:
    """Delete the (derived) index database and its WAL files."""
    for p in (path, Path(str(path) + "-wal"), Path(str(path) + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def file_id(path: Path) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the file at ``path``, None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def chat_row(conn: sqlite3.Connection, chat: str, *, create: bool) -> ChatRow | None:
    row = conn.execute("SELECT id, docs, terms FROM chats WHERE chat=?", (chat,)).fetchone()
    if row is None and create:
        with write_transaction(conn):
            row = conn.execute("SELECT id, docs, terms FROM chats WHERE chat=?", (chat,)).fetchone()
            if row is None:
                cur = conn.execute("INSERT INTO chats(chat) VALUES(?)", (chat,))
                cid = int(cur.lastrowid or 0)
                if not 0 < cid <= MAX_CHATS:
                    raise IndexCorrupt(f"chat number {cid} is out of range")
                row = (cid, 0, 0)
    return ChatRow(*row) if row else None


def file_rows(conn: sqlite3.Connection, chat_id: int) -> dict[str, FileRow]:
    rows = conn.execute(
        "SELECT id, name, dev, ino, done, seen, mtime, lines, head, tail FROM files WHERE chat=?", (chat_id,)
    ).fetchall()
    return {r[1]: FileRow(*r) for r in rows}


def file_row(conn: sqlite3.Connection, chat_id: int, name: str) -> FileRow | None:
    """One file's row (a chat with thousands of archived transcripts: not all of them)."""
    r = conn.execute(
        "SELECT id, name, dev, ino, done, seen, mtime, lines, head, tail FROM files WHERE chat=? AND name=?",
        (chat_id, name),
    ).fetchone()
    return FileRow(*r) if r else None


def file_matches(path: Path, row: FileRow, st: os.stat_result) -> bool:
    """Whether the file on disk is still the one whose first ``row.done`` bytes were indexed."""
    if (st.st_dev, st.st_ino) != (row.dev, row.ino) or st.st_size < row.done:
        return False
    if row.done == 0:
        return True
    try:
        with open(path, "rb") as f:
            return head_digest(f) == row.head and tail_digest(f, row.done) == row.tail
    except OSError:
        return False


def locked_size(path: Path) -> int | None:
    """The file's size learned under a shared lock (a turn boundary), or None if it is gone."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        with locked(fd, exclusive=False):
            return os.fstat(fd).st_size
    finally:
        os.close(fd)


def forget_file(conn: sqlite3.Connection, chat: ChatRow, file_id: int) -> int:
    """Remove one file's turns from the index (inside the caller's transaction)."""
    rows = conn.execute("SELECT id, terms, nterms FROM turns WHERE file=?", (file_id,)).fetchall()
    conn.executemany("INSERT INTO fts(fts, rowid, body) VALUES('delete', ?, ?)", ((rid, body) for rid, body, _ in rows))
    terms = sum(n for _, _, n in rows)
    if rows:  # their vectors (memory.recall.meaning) go too, and the mark goes back before them
        first = min(rid for rid, _, _ in rows)
        conn.execute("DELETE FROM vecs WHERE id IN (SELECT id FROM turns WHERE file=?)", (file_id,))
        conn.execute(
            "UPDATE meta SET value=? WHERE key=? AND CAST(value AS INTEGER) >= ?",
            (str(first - 1), f"meaning:{chat.id}", first),
        )
    conn.execute("DELETE FROM turns WHERE file=?", (file_id,))
    conn.execute("DELETE FROM files WHERE id=?", (file_id,))
    conn.execute("UPDATE chats SET docs=docs-?, terms=terms-? WHERE id=?", (len(rows), terms, chat.id))
    return len(rows)


def index_file(
    conn: sqlite3.Connection, chat: ChatRow, name: str, path: Path, size: int, limit: int | None = None
) -> tuple[int, bool]:
    """Index the complete lines of ``path`` up to ``size`` that are not indexed yet; return (turns
    added, whether lines are left because ``limit`` turns were indexed).

    Batch by batch: the lines are read and split into terms (memory.recall.lines) from the file's
    progress as read WITHOUT the write lock, then one transaction checks that the progress is still
    that one (no other indexer committed meanwhile, the file is the one read) and only inserts; else
    the batch is dropped and read again from the new progress. So a concurrent indexer of the same
    file is never duplicated, and the write lock is held for the inserts alone.
    """
    added = 0
    while True:
        batch = BATCH_LINES if limit is None else min(BATCH_LINES, limit - added)
        if batch <= 0:
            return added, True
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return added, False
        seen = file_row(conn, chat.id, name)  # the progress read = what the transaction expects
        row = seen if seen is not None and file_matches(path, seen, st) else None
        if row is not None and row.seen == size and row.mtime == st.st_mtime_ns:
            return added, False
        read = read_batch(path, row.done if row else 0, row.lines if row else 0, size, batch)
        if read is None:
            return added, False
        if (read.dev, read.ino) != (st.st_dev, st.st_ino):
            continue  # replaced between the stat and the read
        with write_transaction(conn):
            try:
                now = os.stat(path)
            except FileNotFoundError:
                return added, False
            if file_row(conn, chat.id, name) != seen or (now.st_dev, now.st_ino) != (read.dev, read.ino):
                continue  # another indexer got there first (or the file was renamed, replaced): read again
            if seen is not None and row is None:
                log.info("recall index: %s changed, indexing it again", path.name)
                forget_file(conn, chat, seen.id)
            if row is None:
                cur = conn.execute(
                    "INSERT INTO files(chat, name, dev, ino) VALUES(?, ?, ?, ?)", (chat.id, name, read.dev, read.ino)
                )
                row = FileRow(int(cur.lastrowid or 0), name, read.dev, read.ino, 0, 0, 0, 0, "", "")
            n, more = _index_batch(conn, chat, row, read, size, st.st_mtime_ns)
            added += n
        if not more:
            return added, False


def _index_batch(
    conn: sqlite3.Connection, chat: ChatRow, row: FileRow, read: Batch, size: int, mtime: int
) -> tuple[int, bool]:
    """Insert the turns ``read`` from ``row.done`` (inside the caller's transaction, which re-checked that
    nothing was indexed since); return (turns added, more to do). Ids, sessions and the turns a retry
    marks dead come from the index here, under the lock."""
    if read.end == row.done:
        conn.execute("UPDATE files SET seen=?, mtime=? WHERE id=?", (size, mtime, row.id))
        return 0, False
    last = conn.execute(
        "SELECT id, role, content, ts, session, dead FROM turns WHERE file=? AND dead=0 ORDER BY line DESC LIMIT 2",
        (row.id,),
    ).fetchall()
    recent = [(r[0], r[1], r[2]) for r in reversed(last)]  # the last two live turns, for retries
    prev_ts: float | None = last[0][3] if last else None
    session: int | None = last[0][4] if last else None
    turn_rows: list[tuple[Any, ...]] = []
    dead_ids: list[int] = []
    last_id = conn.execute("SELECT max(id) FROM turns WHERE id BETWEEN ? AND ?", (chat.lo, chat.hi)).fetchone()[0]
    next_id = (last_id or chat.lo) + 1
    for t in read.turns:
        if session is None or (t.ts is not None and prev_ts is not None and not 0 <= t.ts - prev_ts <= SESSION_GAP):
            # a long silence, or a step back in time: the next of the conversations imported into one file
            session = next_id
        if t.ts is not None:
            prev_ts = t.ts
        if (
            t.role == "user"
            and t.retry
            and len(recent) >= 2
            and recent[-1][1] == "assistant"
            and recent[-2][1] == "user"
            and recent[-2][2] == t.text
        ):
            dead_ids.extend(r[0] for r in recent[-2:])
            recent = recent[:-2]
        turn_rows.append(
            (next_id, chat.id, row.id, t.line, t.offset, t.ts, t.day, t.at, t.role, t.name, t.speaker, session)
            + (t.nterms, t.body, t.text)
        )
        recent = [*recent[-1:], (next_id, t.role, t.text)]
        next_id += 1
    conn.executemany(
        "INSERT INTO turns(id, chat, file, line, offset, ts, day, at, role, name, speaker, session, nterms, terms, "
        "content) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        turn_rows,
    )
    conn.executemany("INSERT INTO fts(rowid, body) VALUES(?, ?)", ((r[0], r[13]) for r in turn_rows))
    if dead_ids:
        conn.executemany("UPDATE turns SET dead=1 WHERE id=?", ((i,) for i in dead_ids))
    speakers = {t.speaker for t in read.turns if t.speaker}
    if speakers:
        conn.executemany("INSERT OR IGNORE INTO speakers(chat, name) VALUES(?, ?)", ((chat.id, s) for s in speakers))
    conn.execute(
        "UPDATE files SET done=?, seen=?, mtime=?, lines=?, head=?, tail=? WHERE id=?",
        (read.end, size if not read.more else read.end, mtime, read.lines, read.head, read.tail, row.id),
    )
    terms = sum(t.nterms for t in read.turns)
    conn.execute("UPDATE chats SET docs=docs+?, terms=terms+? WHERE id=?", (len(turn_rows), terms, chat.id))
    return len(turn_rows), read.more
