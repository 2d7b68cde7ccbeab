"""RecallIndex: keep a chat's whole history searchable and search it.

Thread-safe (a few SQLite connections shared by every thread: memory.recall.pool) and safe across
processes (see memory.recall.store).
A database that cannot be used (corrupt, another version) is deleted and rebuilt from the
transcripts, which are never written here; one deleted or replaced while open is opened again at its path.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import TypeVar

from memory.recall import meaning as meanings
from memory.recall import rank as ranking
from memory.recall import tuning
from memory.recall.build import BUILD_BATCH, BUILDING_KEY, READY, Builder, BuildIn, IndexStatus
from memory.recall.hit import Hit, hits
from memory.recall.meaning_index import MeaningIndex
from memory.recall.plan import Plan, chat_files, follow_renames, read_plan
from memory.recall.pool import CLOSE_WAIT, Pool
from memory.recall.store import (
    DB_NAME,
    IndexCorrupt,
    chat_row,
    connect,
    file_id,
    file_rows,
    index_file,
    locked_size,
    remove_database,
)
from memory.transcript import check_chat_id

log = logging.getLogger(__name__)

T = TypeVar("T")
CONNECTIONS = 3  # SQLite connections at most, whatever the number of threads (memory.recall.pool)
SYNC_BUDGET = 256 * 1024  # bytes of transcript a question may index before it is answered (a few ms);
# more is built in the background (memory.recall.build)
_TRANSIENT = ("locked", "busy", "full", "readonly", "interrupt", "unable to open", "disk i/o")


class RecallIndex(MeaningIndex):
    """The recall index of every chat under ``data_dir`` (``data_dir/recall.sqlite3``); recall by meaning
    is its part in memory.recall.meaning_index."""

    def __init__(
        self,
        data_dir: Path | str,
        *,
        path: Path | None = None,
        weights: tuning.Weights = tuning.DEFAULT_WEIGHTS,
        connections: int = CONNECTIONS,
        sync_budget: int | None = SYNC_BUDGET,
        build_in: BuildIn = "process",
        meaning: meanings.Embedder | None = None,
    ) -> None:
        """``sync_budget``: bytes of transcript a search or ``catch_up`` indexes on the caller's path;
        a larger backlog is built in the background meanwhile. None: always everything at once
        (the behaviour before background builds; for batch tools and benchmarks' baselines).
        ``build_in``: where that background build runs, a worker process (memory.recall.worker) or a
        thread of this process (memory.recall.build says why the process).
        ``meaning``: the sentence embedding model of recall by meaning (memory.recall.meaning);
        None: recall by words only."""
        self.weights = weights
        self.data_dir = Path(data_dir)
        self.chats_dir = self.data_dir / "chats"
        self.path = path or self.data_dir / DB_NAME
        self.sync_budget = sync_budget
        self._pool = Pool(self._connect, connections)
        self._file: tuple[int, int] | None = None  # file_id of the database the pool's connections opened
        command = (lambda chat: self._worker_command(chat)) if build_in == "process" else None
        self.builder = Builder(self.build_step, command=command)
        self._start_meaning(meaning)

    def _worker_command(self, chat: str) -> list[str]:
        """The command line of the worker process that builds ``chat`` (memory.recall.build)."""
        return [sys.executable, "-m", "memory.recall.worker", str(self.data_dir), str(self.path), chat]

    # -- connections -------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        conn = connect(self.path)
        self._file = file_id(self.path) or (-1, -1)  # gone at once: the next call opens it again
        return conn

    def _check_file(self) -> None:
        """Stop using connections to a database file deleted or replaced meanwhile (the user, a restore):
        SQLite would go on using the deleted file, and the file at the path would never be built again."""
        if self._file is not None and file_id(self.path) != self._file:
            self._file = None
            log.warning("recall index %s was deleted or replaced: opening it again", self.path)
            self._pool.discard()

    def _reset(self, reason: str) -> None:
        log.warning("recall index %s unusable (%s): rebuilding it from the transcripts", self.path, reason)
        self._file = None
        self._pool.discard()
        remove_database(self.path)

    def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` with a connection of the pool; rebuild the database once if it is unusable."""
        self._check_file()  # a stat
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
        """Close every connection. A call still running in another thread (a sync when the bot stops, the
        background build) is interrupted and awaited first: closing a connection in use would crash the
        process. A build left unfinished goes on at the chat's next question."""
        self.builder.stop(timeout=0)
        self.meaning_builder.stop(timeout=0)
        self._pool.close()
        self.builder.stop(timeout=CLOSE_WAIT)
        self.meaning_builder.stop(timeout=CLOSE_WAIT)
        self._embedding.shutdown(wait=True)

    def __enter__(self) -> RecallIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- indexing ---------------------------------------------------------
    def sync(self, chat_id: int | str) -> int:
        """Index everything new in the chat's live and archived transcripts; return the turns added.

        Cheap when nothing changed (a stat per file), but as long as the backlog: a question's path
        uses ``catch_up`` instead. Raises InvalidChatId for a bad chat id.
        """
        chat = check_chat_id(chat_id)
        with self._foreground():
            return self._run(lambda conn: self._sync(conn, chat)[0])

    def catch_up(self, chat_id: int | str) -> IndexStatus:
        """Index what is new if that is at most ``sync_budget`` bytes of transcript (the turns since the
        last sync: about a millisecond), else have it built in the background and return at once.

        What questions, ``search`` and ``related`` call first. The status says whether the index now
        holds the whole history (``ready``) or how much of it is built so far.
        """
        chat = check_chat_id(chat_id)
        if self.sync_budget is None:
            self.sync(chat)
            return READY

        def fn(conn: sqlite3.Connection) -> IndexStatus:
            plan = self._plan(conn, chat)
            if plan is None:
                return READY
            if not plan.unchanged:
                if plan.cost > (self.sync_budget or 0):
                    self.builder.request(chat)
                    return plan.status(building=True)
                self._sync(conn, chat, plan=plan)
            self._hand_off_meaning(conn, chat, plan.row)
            return READY

        with self._foreground():
            return self._run(fn)

    def status(self, chat_id: int | str) -> IndexStatus:
        """How much of the chat's history is indexed (reads the index and stats the files; writes nothing)."""
        chat = check_chat_id(chat_id)

        def fn(conn: sqlite3.Connection) -> IndexStatus:
            plan = self._plan(conn, chat, create=False)
            if plan is None:
                if not chat_files(self.chats_dir, chat):
                    return READY
                return IndexStatus(False, 0, 0, self.builder.building(chat))
            return READY if plan.unchanged else plan.status(building=self.builder.building(chat))

        return self._run(fn)

    def foreground(self) -> contextlib.AbstractContextManager[None]:
        """Around a question's own work (bot/core/ask.py): a background build pauses between its batches."""
        return self._foreground()

    @contextlib.contextmanager
    def _foreground(self) -> Iterator[None]:
        """A question's own work: both background builders (words, meaning) pause between their batches."""
        with self.builder.foreground(), self.meaning_builder.foreground():
            yield

    def wait_built(self, timeout: float | None = None) -> bool:
        """Wait until the background builder has nothing left to do (tests, benchmarks, batch tools)."""
        return self.builder.wait_idle(timeout)

    def build_step(self, chat: str) -> tuple[int, IndexStatus]:
        """The background builder's unit of work: BUILD_BATCH more turns, in their own transaction
        (run by memory.recall.worker, or by the builder thread with ``build_in="thread"``)."""

        def fn(conn: sqlite3.Connection) -> tuple[int, IndexStatus]:
            added, _ = self._sync(conn, chat, limit=BUILD_BATCH)
            plan = self._plan(conn, chat, create=False)
            status = READY if plan is None or plan.unchanged else plan.status(building=True)
            key = BUILDING_KEY + chat
            if status.ready:
                conn.execute("DELETE FROM meta WHERE key=?", (key,))
            else:
                now = time.time()
                old = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
                try:
                    started = float(json.loads(old[0])["started"]) if old else now
                except (ValueError, KeyError, TypeError):
                    started = now
                value = {"done": status.done, "total": status.total, "started": started, "updated": now}
                conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, json.dumps(value)))
            return added, status

        return self._run(fn)

    def _plan(self, conn: sqlite3.Connection, chat: str, *, create: bool = True) -> Plan | None:
        return read_plan(conn, self.chats_dir, chat, create=create)

    def _sync(
        self, conn: sqlite3.Connection, chat: str, *, plan: Plan | None = None, limit: int | None = None
    ) -> tuple[int, bool]:
        """Index what is new (at most ``limit`` turns); return (turns added, whether all is indexed)."""
        plan = plan or self._plan(conn, chat)
        if plan is None or plan.unchanged:
            return 0, True
        row, files, stats, known = plan.row, plan.files, plan.stats, plan.known
        if set(known) - set(stats) or any(
            n in stats and (stats[n].st_dev, stats[n].st_ino) != (r.dev, r.ino) for n, r in known.items()
        ):
            follow_renames(conn, row, stats)
        added = 0
        for name in sorted(stats, key=lambda n: (n == "", n)):  # archives (oldest first), then the live file
            r, st = known.get(name), stats[name]
            if r is not None and (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (r.dev, r.ino, r.seen, r.mtime):
                continue  # indexed to its end and unchanged (plan.unchanged's test for one file)
            path = files[name]
            size = locked_size(path) if name == "" else stats[name].st_size
            if size is None:
                continue
            n, more = index_file(conn, row, name, path, size, None if limit is None else limit - added)
            added += n
            if more:
                return added, False
        return added, True

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

        With ``sync`` it first catches up (``catch_up``): a history not indexed yet is built in the
        background and the search covers what is indexed so far (``status`` tells how much).

        ``before`` is a byte offset in the live transcript: live turns at or after it are left out
        (they are sent verbatim anyway); archived turns are always allowed. ``today`` anchors
        relative dates in the query ("yesterday", "지난주"); None ignores them. Never raises on
        a bad query (empty, punctuation, FTS5 syntax): it just finds nothing.
        """
        chat = check_chat_id(chat_id)
        with self._foreground():  # a build in progress pauses between its batches meanwhile
            if sync:
                self.catch_up(chat)
            return self._run(lambda conn: self._search(conn, chat, query, limit, before, today, tuning.THOROUGH))

    def _search(
        self,
        conn: sqlite3.Connection,
        chat: str,
        query: str,
        limit: int,
        before: int | None,
        today: date | None,
        effort: tuning.Effort,
    ) -> list[Hit]:
        row = chat_row(conn, chat, create=False)
        if row is None or not query or not query.strip():
            return []
        files = {r.id: r for r in file_rows(conn, row.id).values()}
        live = next((r.id for r in files.values() if r.name == ""), None)
        exclude = (live, before) if before is not None and live is not None else None
        meaning = self._by_meaning(conn, row, self.weights, effort)
        turns = ranking.rank(
            conn, row, query, limit, exclude_from=exclude, today=today, weights=self.weights, effort=effort,
            meaning=meaning,
        )  # fmt: skip
        return hits(turns, files, exclude)

    def related(
        self, chat_id: int | str, text: str, limit: int = 5, *, before: int | None = None, today: date | None = None
    ) -> list[Hit]:
        """The automatic recall for a new message: the best ``limit`` hits that are ``relevant``.

        Catches up first, like ``search`` (never waiting for a build), then reads much less of the
        index (memory.recall.tuning.QUICK: fewer candidates, only turns that can be relevant, no turn
        read when none can be), so that it costs about the same at any history length.
        """
        if limit <= 0:
            return []
        chat = check_chat_id(chat_id)
        with self._foreground():
            self.catch_up(chat)
            found = self._run(lambda conn: self._search(conn, chat, text, limit, before, today, tuning.QUICK))
        return [h for h in found if h.relevant]

    def chat_exists(self, chat_id: int | str) -> bool:
        """Whether the chat has a live or archived transcript."""
        return bool(chat_files(self.chats_dir, check_chat_id(chat_id)))
