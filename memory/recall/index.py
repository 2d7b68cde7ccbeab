"""RecallIndex: keep a chat's whole history searchable and search it.

Thread-safe (a few SQLite connections shared by every thread: memory.recall.pool) and safe across
processes (see memory.recall.store).
A database that cannot be used (corrupt, another version) is deleted and rebuilt from the
transcripts, which are never written here.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from memory.recall import rank as ranking
from memory.recall.pool import Pool
from memory.recall.store import (
    DB_NAME,
    ChatRow,
    IndexCorrupt,
    chat_row,
    connect,
    file_rows,
    forget_file,
    index_file,
    locked_size,
    remove_database,
    write_transaction,
)
from memory.transcript import check_chat_id

log = logging.getLogger(__name__)

T = TypeVar("T")
CONNECTIONS = 3  # SQLite connections at most, whatever the number of threads (memory.recall.pool)
_TRANSIENT = ("locked", "busy", "full", "readonly", "interrupt", "unable to open", "disk i/o")


@dataclass(frozen=True, slots=True)
class Hit:
    """One stored message found by a search.

    ``file`` is None for the live transcript, else the archived file's name; ``line`` is its
    1-based physical line in that file and ``offset`` its byte offset; ``relevance`` the share of
    the query's weight (idf) it contains (0..1) and ``matched`` that weight; ``context`` the
    neighbouring turn that completes the exchange (the answer to a question, or the question of
    an answer), if any.
    """

    file: str | None
    line: int
    offset: int
    at: str | None
    role: str
    content: str
    score: float
    name: str | None = None
    relevance: float = 0.0
    matched: float = 0.0
    context: tuple[Hit, ...] = field(default=())

    @property
    def relevant(self) -> bool:
        """Whether this hit is good enough to be recalled without being asked for."""
        return ranking.relevant(self.matched, self.relevance)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line, "at": self.at, "role": self.role, "content": self.content}
        if self.name:
            out["name"] = self.name
        if self.file is not None:
            out["file"] = self.file
        out["score"] = round(self.score, 4)
        return out


class RecallIndex:
    """The recall index of every chat under ``data_dir`` (``data_dir/recall.sqlite3``)."""

    def __init__(
        self,
        data_dir: Path | str,
        *,
        path: Path | None = None,
        weights: ranking.Weights = ranking.DEFAULT_WEIGHTS,
        connections: int = CONNECTIONS,
    ) -> None:
        self.weights = weights
        self.data_dir = Path(data_dir)
        self.chats_dir = self.data_dir / "chats"
        self.path = path or self.data_dir / DB_NAME
        self._pool = Pool(lambda: connect(self.path), connections)

    # -- connections -------------------------------------------------------
    def _reset(self, reason: str) -> None:
        log.warning("recall index %s unusable (%s): rebuilding it from the transcripts", self.path, reason)
        self._pool.discard()
        remove_database(self.path)

    def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` with a connection of the pool; rebuild the database once if it is unusable."""
        for attempt in (1, 2):
            try:
                with self._pool.connection() as conn:
                    return fn(conn)
            except IndexCorrupt as e:
                if attempt == 2:
                    raise
                reason = str(e)
            except sqlite3.DatabaseError as e:
                if attempt == 2 or any(w in str(e).lower() for w in _TRANSIENT):
                    raise
                reason = str(e)
            self._reset(reason)  # with the connection given back
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close every connection. A call still running in another thread (a sync when the bot stops) is
        interrupted and awaited first: closing a connection in use would crash the process."""
        self._pool.close()

    def __enter__(self) -> RecallIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- files ------------------------------------------------------------
    def _files(self, chat: str) -> dict[str, Path]:
        """The chat's transcript files by index name: '' for the live one, else the archive file name."""
        out: dict[str, Path] = {}
        archive = self.chats_dir / "archive"
        prefix = chat + "."
        try:
            names = sorted(n for n in os.listdir(archive) if n.startswith(prefix) and n.endswith(".jsonl"))
        except (FileNotFoundError, NotADirectoryError):
            names = []
        for n in names:
            out[n] = archive / n
        live = self.chats_dir / f"{chat}.jsonl"
        if live.exists():
            out[""] = live
        return out

    # -- indexing ---------------------------------------------------------
    def sync(self, chat_id: int | str) -> int:
        """Index what is new in the chat's live and archived transcripts; return the turns added.

        Cheap when nothing changed (a stat per file). Raises InvalidChatId for a bad chat id.
        """
        chat = check_chat_id(chat_id)
        return self._run(lambda conn: self._sync(conn, chat))

    def _sync(self, conn: sqlite3.Connection, chat: str) -> int:
        files = self._files(chat)
        row = chat_row(conn, chat, create=bool(files))
        if row is None:
            return 0
        stats: dict[str, os.stat_result] = {}
        for name, path in files.items():
            with contextlib.suppress(FileNotFoundError):
                stats[name] = os.stat(path)
        known = file_rows(conn, row.id)
        if set(known) == set(stats) and all(
            (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (r.dev, r.ino, r.seen, r.mtime)
            for n, st in stats.items()
            for r in (known[n],)
        ):
            return 0
        if set(known) - set(stats) or any(
            n in stats and (stats[n].st_dev, stats[n].st_ino) != (r.dev, r.ino) for n, r in known.items()
        ):
            self._follow_renames(conn, row, stats)
        added = 0
        for name in sorted(stats, key=lambda n: (n == "", n)):  # archives (oldest first), then the live file
            path = files[name]
            size = locked_size(path) if name == "" else stats[name].st_size
            if size is None:
                continue
            added += index_file(conn, row, name, path, size)
        return added

    def _follow_renames(self, conn: sqlite3.Connection, chat: ChatRow, stats: dict[str, os.stat_result]) -> None:
        """A /reset renames the live file into the archive: keep its index under the new name.

        Files that are gone are forgotten (their turns leave the index).
        """
        with write_transaction(conn):
            rows = list(file_rows(conn, chat.id).values())
            by_name = {r.name: r for r in rows}
            by_inode = {(st.st_dev, st.st_ino): n for n, st in stats.items()}
            gone: set[int] = set()
            for r in rows:
                if r.id in gone:
                    continue
                now = by_inode.get((r.dev, r.ino))
                if now == r.name:
                    continue
                if now is None:
                    forget_file(conn, chat, r.id)  # deleted, or replaced by another file
                    gone.add(r.id)
                    continue
                occupant = by_name.get(now)
                if occupant is not None and occupant is not r:
                    forget_file(conn, chat, occupant.id)
                    gone.add(occupant.id)
                conn.execute("UPDATE files SET name=? WHERE id=?", (now, r.id))
                if by_name.get(r.name) is r:
                    del by_name[r.name]
                by_name[now] = r
                r.name = now

    # -- searching --------------------------------------------------------
    def search(
        self,
        chat_id: int | str,
        query: str,
        limit: int = 5,
        *,
        before: int | None = None,
        today: date | None = None,
        sync: bool = True,
    ) -> list[Hit]:
        """The ``limit`` best turns of the chat's whole history for ``query``, best first.

        ``before`` is a byte offset in the live transcript: live turns at or after it are left out
        (they are sent verbatim anyway); archived turns are always allowed. ``today`` anchors
        relative dates in the query ("yesterday", "지난주"); None ignores them. Never raises on
        a bad query (empty, punctuation, FTS5 syntax): it just finds nothing.
        """
        chat = check_chat_id(chat_id)
        if sync:
            self.sync(chat)
        return self._run(lambda conn: self._search(conn, chat, query, limit, before, today, ranking.THOROUGH))

    def _search(
        self,
        conn: sqlite3.Connection,
        chat: str,
        query: str,
        limit: int,
        before: int | None,
        today: date | None,
        effort: ranking.Effort,
    ) -> list[Hit]:
        row = chat_row(conn, chat, create=False)
        if row is None or not query or not query.strip():
            return []
        files = {r.id: r for r in file_rows(conn, row.id).values()}
        live = next((r.id for r in files.values() if r.name == ""), None)
        exclude = (live, before) if before is not None and live is not None else None
        turns = ranking.rank(
            conn, row, query, limit, exclude_from=exclude, today=today, weights=self.weights, effort=effort
        )

        def hit(t: ranking.Turn, context: tuple[Hit, ...] = ()) -> Hit:
            name = files[t.file].name if t.file in files else ""
            return Hit(
                file=name or None, line=t.line, offset=t.offset, at=t.at, role=t.role, content=t.content,
                score=t.score, name=t.name, relevance=t.relevance, matched=t.matched, context=context,
            )  # fmt: skip

        out = []
        for t in turns:
            other = t.next if t.role == "user" else t.prev
            ctx = ()
            if other is not None and other.role != t.role and other.session == t.session:
                if not (exclude and other.file == exclude[0] and other.offset >= exclude[1]):
                    ctx = (hit(other),)
            out.append(hit(t, ctx))
        return out

    def related(
        self, chat_id: int | str, text: str, limit: int = 5, *, before: int | None = None, today: date | None = None
    ) -> list[Hit]:
        """The automatic recall for a new message: the best ``limit`` hits that are ``relevant``.

        Syncs first, like ``search``, then reads much less of the index (memory.recall.rank.QUICK:
        fewer candidates, only turns that can be relevant, no turn read when none can be), so that
        it costs about the same at any history length.
        """
        if limit <= 0:
            return []
        chat = check_chat_id(chat_id)
        self.sync(chat)
        hits = self._run(lambda conn: self._search(conn, chat, text, limit, before, today, ranking.QUICK))
        return [h for h in hits if h.relevant]

    def chat_exists(self, chat_id: int | str) -> bool:
        """Whether the chat has a live or archived transcript."""
        return bool(self._files(check_chat_id(chat_id)))
