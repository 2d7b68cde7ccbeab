"""A small pool of SQLite connections to the recall index, shared by every thread.

Each connection holds its own copy of the schema and its own page cache, so their number is
bounded whatever the number of threads that search (the bot's worker threads, tools, the
terminal chat): a thread takes an idle connection, or opens one while fewer than ``size`` are
open, or waits for one to be given back. A connection is used by one thread at a time.

After the database was found unusable and removed (``discard``), connections opened before are
closed instead of being reused: idle ones at once, those in use when they are given back.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator

CLOSE_WAIT = 60.0  # seconds close() waits for the calls in progress


class PoolClosed(RuntimeError):
    """The pool (the RecallIndex) was closed."""


class Pool:
    """At most ``size`` connections made by ``opener``, lent to one thread at a time."""

    def __init__(self, opener: Callable[[], sqlite3.Connection], size: int) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one connection")
        self._opener = opener
        self.size = size
        self._cond = threading.Condition()
        self._idle: list[sqlite3.Connection] = []
        self._busy: dict[sqlite3.Connection, int] = {}  # connection in use -> generation it was opened in
        self._born: dict[sqlite3.Connection, int] = {}  # idle connection -> its generation
        self._opening = 0
        self._generation = 0
        self._closed = False

    @property
    def open_connections(self) -> int:
        with self._cond:
            return len(self._idle) + len(self._busy) + self._opening

    @contextlib.contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """Lend a connection for the ``with`` block (waiting while all ``size`` are in use)."""
        conn, generation = self._take()
        try:
            yield conn
        finally:
            self._give_back(conn, generation)

    def _take(self) -> tuple[sqlite3.Connection, int]:
        with self._cond:
            while True:
                if self._closed:
                    raise PoolClosed("RecallIndex is closed")
                if self._idle:
                    conn = self._idle.pop()
                    generation = self._born.pop(conn)
                    self._busy[conn] = generation
                    return conn, generation
                if len(self._busy) + self._opening < self.size:
                    self._opening += 1
                    generation = self._generation
                    break
                self._cond.wait()
        try:
            conn = self._opener()  # outside the lock: it may wait for the database
        except BaseException:
            with self._cond:
                self._opening -= 1
                self._cond.notify()
            raise
        with self._cond:
            self._opening -= 1
            self._busy[conn] = generation
        return conn, generation

    def _give_back(self, conn: sqlite3.Connection, generation: int) -> None:
        with self._cond:
            self._busy.pop(conn, None)
            stale = self._closed or generation != self._generation
            if not stale:
                self._idle.append(conn)
                self._born[conn] = generation
            self._cond.notify_all()
        if stale:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def discard(self) -> None:
        """Stop reusing the connections open now (the database file is about to be replaced)."""
        with self._cond:
            self._generation += 1
            idle, self._idle = self._idle, []
            self._born.clear()
        for conn in idle:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def close(self) -> None:
        """Close every connection. Calls still running in other threads (a sync when the bot stops)
        are interrupted and awaited first: closing a connection in use would crash the process.
        Idle connections are not interrupted (that would skip their checkpoint at close and leave
        the WAL behind)."""
        with self._cond:
            self._closed = True
            for conn in self._busy:
                with contextlib.suppress(sqlite3.Error):
                    conn.interrupt()
            self._cond.wait_for(lambda: not self._busy and not self._opening, timeout=CLOSE_WAIT)
            idle, self._idle = self._idle, []
            self._born.clear()
            self._cond.notify_all()
        for conn in idle:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
