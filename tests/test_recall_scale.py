"""The recall index with many chats: one FTS5 table for all of them (each chat's statistics its own),
a bounded number of connections, and the quick path of the automatic recall."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from memory.recall import RecallIndex, rank, store
from memory.recall import index as recall_index
from memory.recall.pool import Pool, PoolClosed
from memory.transcript import Transcript


def msg(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content, "at": "2026-11-01T10:00:00+09:00"}


def pair(q: str, a: str = "ok") -> list[dict[str, str]]:
    return [msg("user", q), msg("assistant", a)]


def schema(data_dir: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(data_dir / "recall.sqlite3")
    try:
        return db.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall()
    finally:
        db.close()


def test_more_chats_add_rows_not_tables(transcript: Transcript, data_dir: Path):
    """SQLite keeps the whole schema in memory once per connection: it must not grow with the chats."""
    transcript.append("c0", pair("first chat says marmalade", "hi"))
    with RecallIndex(data_dir) as idx:
        idx.sync("c0")
    first = schema(data_dir)
    size_one = (data_dir / "recall.sqlite3").stat().st_size  # closed: everything is in the file
    with RecallIndex(data_dir) as idx:
        for i in range(1, 60):
            transcript.append(f"c{i}", pair(f"chat {i} talks about topic{i}", f"answer {i}"))
            idx.sync(f"c{i}")
        assert schema(data_dir) == first
        for i in (0, 17, 59):
            hits = idx.search(f"c{i}", f"topic{i}" if i else "marmalade", 5)
            assert hits[0].line == 1 and {h.line for h in hits} <= {1, 2}, i
        assert idx.search("c17", "topic18", 5) == []  # another chat's words are not found here
    grown = (data_dir / "recall.sqlite3").stat().st_size - size_one
    assert grown < 59 * 2048  # a few rows per chat (a table per chat took several 4 KB pages each)


def test_each_chats_statistics_are_its_own(transcript: Transcript, data_dir: Path):
    """How rare a word is counts in the chat searched: a word said everywhere in another chat
    does not lose its weight here."""
    transcript.append("b", pair("the anchor word is alpha", "noted"))
    for i in range(3):
        transcript.append("b", pair(f"beta one beta two number {i}", "fine"))
    transcript.append("b", pair("filler about lunch", "sandwich"))
    with RecallIndex(data_dir) as idx:
        before = idx.search("b", "alpha beta", 1)
        assert before and before[0].content == "the anchor word is alpha"  # alpha is rarer than beta in b
        for i in range(300):
            transcript.append("a", pair(f"alpha alpha {i}", "alpha"))
        idx.sync("a")
        after = idx.search("b", "alpha beta", 4)
        assert [h.content for h in after][:1] == ["the anchor word is alpha"]
        assert [(h.line, round(h.score, 6)) for h in after][:1] == [(before[0].line, round(before[0].score, 6))]


def test_connections_are_bounded_whatever_the_number_of_threads(transcript, data_dir, monkeypatch):
    opened: list[sqlite3.Connection] = []
    real = recall_index.connect

    def counting(path: Path) -> sqlite3.Connection:
        conn = real(path)
        opened.append(conn)
        return conn

    monkeypatch.setattr(recall_index, "connect", counting)
    for chat in "abcdefgh":
        transcript.append(chat, pair(f"secret of {chat} is {chat}xyz"))
    start = threading.Barrier(8)
    with RecallIndex(data_dir, connections=2) as idx:

        def work(chat: str) -> str:
            start.wait()
            return idx.search(chat, f"{chat}xyz", 1)[0].content

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(work, "abcdefgh"))
    assert results == [f"secret of {c} is {c}xyz" for c in "abcdefgh"]
    assert 1 <= len(opened) <= 2


def test_close_interrupts_a_call_in_progress_and_refuses_new_ones(tmp_path: Path):
    pool = Pool(lambda: sqlite3.connect(tmp_path / "x.db", check_same_thread=False), 2)
    running = threading.Event()
    give_up = threading.Event()  # ends the query if close() failed to (so a failing test still ends)
    outcome: list[str] = []

    def endless() -> None:
        with pool.connection() as conn:
            conn.set_progress_handler(lambda: running.set() or give_up.is_set(), 1000)
            try:
                conn.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")
            except sqlite3.OperationalError as e:
                outcome.append(str(e))

    worker = threading.Thread(target=endless, daemon=True)
    worker.start()
    assert running.wait(30)
    try:
        pool.close()  # returns once the call was interrupted and gave its connection back
        assert outcome == ["interrupted"]
    finally:
        give_up.set()
        worker.join(30)
    assert pool.open_connections == 0
    with pytest.raises(PoolClosed), pool.connection():
        pass


def test_quick_recall_reads_no_turn_when_none_can_be_relevant(transcript, data_dir, monkeypatch):
    """Each of three words is said often, never two together: no turn holds enough of "apple banana
    cherry" to be recalled unasked, and the quick path finds that from the postings alone."""
    for i in range(40):
        word = ("apple", "banana", "cherry")[i % 3]
        transcript.append("c", pair(f"{word} story number {i}", "nice"))
    fetched: list[int] = []
    real = rank._rows
    monkeypatch.setattr(rank, "_rows", lambda *a: fetched.append(1) or real(*a))
    with RecallIndex(data_dir) as idx:
        assert idx.search("c", "apple banana cherry", 5)  # the thorough search still lists matches
        fetched.clear()
        assert idx.related("c", "apple banana cherry") == []
        assert fetched == []
        transcript.append("c", pair("apple and banana pie", "yum"))
        hits = idx.related("c", "apple banana cherry")
        assert [h.content for h in hits] == ["apple and banana pie"] and hits[0].relevant


def test_quick_recall_agrees_with_the_thorough_search_on_a_small_chat(transcript, data_dir):
    """Where the quick path's budgets hold every candidate, it keeps what the thorough search keeps."""
    transcript.append("c", pair("my locker code is 4719 at the gym", "saved"))
    for i in range(3):
        transcript.append("c", pair(f"where is the apple banana basket number {i}?", "by the door"))
    for i in range(30):
        transcript.append("c", pair(f"gym session {i} with banana bread", f"good workout {i}"))
    with RecallIndex(data_dir) as idx:
        for query in ("what is my locker code", "apple banana", "gym workout locker", "banana basket door"):
            thorough = [(h.line, h.content) for h in idx.search("c", query, 20) if h.relevant][:3]
            quick = [(h.line, h.content) for h in idx.related("c", query, 3)]
            assert quick and quick == thorough, query


def test_a_database_locked_while_it_is_set_up_is_waited_for_not_rebuilt(data_dir, tmp_path, monkeypatch):
    """Connections opened at once on a new index file: the one switching it to WAL holds it, and
    another may get "database is locked" at once (seen with 8 threads: the switch does not always
    wait). That one must wait and retry; taking it for a damaged file would delete the database
    under the first one."""

    calls: list[int] = []
    real_open = store._open

    def flaky(path: Path) -> sqlite3.Connection:
        calls.append(1)
        if len(calls) <= 3:
            conn = sqlite3.connect(":memory:")
            try:  # what SQLite raises, raised through the real error handling of the setup
                raise sqlite3.OperationalError("database is locked")
            finally:
                conn.close()
        return real_open(path)

    monkeypatch.setattr(store, "_open", flaky)
    conn = store.connect(data_dir / "recall.sqlite3")
    conn.close()
    assert len(calls) == 4
    monkeypatch.setattr(store, "_open", real_open)
    # locked for longer than it waits (here: not at all): "locked", never "damaged" (IndexCorrupt)
    monkeypatch.setattr(store, "BUSY_TIMEOUT_MS", 0)
    other = tmp_path / "new.sqlite3"
    other.touch()
    holder = sqlite3.connect(other, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        store.connect(other)
    holder.execute("ROLLBACK")
    holder.close()
    store.connect(other).close()
