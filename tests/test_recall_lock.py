"""Indexing holds SQLite's write lock for its inserts only, and two indexers of one file never index a line twice.

The lines of a batch are read, parsed and split into terms before the write transaction
(memory.recall.lines); the transaction checks that nobody indexed the file meanwhile and only
inserts. These tests stop an indexer in the middle of its parsing (in ``json.loads`` of a
transcript line) and look at the database from there: no timing is involved.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memory.recall import RecallIndex
from memory.recall import index as index_module
from memory.transcript import Transcript

CHAT = "c"
MARK = "lockprobe"  # in the text of the line the hook stops at


def msg(role: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "at": "2026-11-01T10:00:00+09:00", **extra}


QUESTION = f"best hiking trail nearby? {MARK}"


def write_history(transcript: Transcript) -> None:
    """Six turns; the fifth retries the second question, so the two turns before it are superseded."""
    transcript.append(CHAT, [msg("user", "first question"), msg("assistant", "first answer")])
    write_rest(transcript)


def write_rest(transcript: Transcript) -> None:
    transcript.append(CHAT, [msg("user", QUESTION), msg("assistant", "The ridge walk (old answer)")])
    transcript.append(CHAT, [msg("user", QUESTION, retry=True), msg("assistant", "The lake loop is nicer.")])


def stop_at_parse(monkeypatch: pytest.MonkeyPatch, meanwhile: Callable[[], None]) -> list[int]:
    """Run ``meanwhile`` once, when a transcript line with MARK is being parsed by an indexer (and not
    again while ``meanwhile`` itself parses); return the list that counts the calls."""
    real = json.loads
    calls: list[int] = []

    def loads(s: Any, *args: Any, **kwargs: Any) -> Any:
        text = s.decode("utf-8", "replace") if isinstance(s, bytes | bytearray) else str(s)
        if MARK in text and not calls:
            calls.append(1)
            meanwhile()
        return real(s, *args, **kwargs)

    monkeypatch.setattr(json, "loads", loads)
    return calls


@pytest.fixture
def db(data_dir: Path) -> Iterator[Callable[[str], list[tuple[Any, ...]]]]:
    conns: list[sqlite3.Connection] = []

    def query(sql: str) -> list[tuple[Any, ...]]:
        if not conns:
            conns.append(sqlite3.connect(data_dir / "recall.sqlite3"))
        return conns[0].execute(sql).fetchall()

    yield query
    for c in conns:
        c.close()


def test_another_connection_can_write_while_an_indexer_parses(
    data_dir: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch, db
) -> None:
    write_history(transcript)
    took: list[bool] = []

    def try_to_write() -> None:
        other = sqlite3.connect(data_dir / "recall.sqlite3", timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # the write lock, at once or never
            other.execute("ROLLBACK")
            took.append(True)
        except sqlite3.OperationalError:
            took.append(False)
        finally:
            other.close()

    calls = stop_at_parse(monkeypatch, try_to_write)
    with RecallIndex(data_dir, sync_budget=None, build_in="thread") as index:
        assert index.sync(CHAT) == 6
    assert calls == [1] and took == [True]  # the line was parsed with nobody holding the write lock
    assert db("SELECT line FROM turns ORDER BY line") == [(n,) for n in range(1, 7)]


@pytest.mark.parametrize("first", [2, None], ids=["two-turns-first", "all-first"])
@pytest.mark.parametrize("known", [False, True], ids=["new-file", "indexed-file"])
def test_an_indexer_that_parsed_while_another_committed_reads_again(
    data_dir: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch, db, first: int | None, known: bool
) -> None:
    """A reads the file from where it was indexed (its start, or after the first two turns); while A
    parses, B commits the next two turns (or all). A's transaction sees that the file's progress moved,
    drops its batch and goes on from B's end: every line once, the retry marking the two turns before
    it dead though B indexed them."""
    a = RecallIndex(data_dir, sync_budget=None, build_in="thread")
    b = RecallIndex(data_dir, sync_budget=None, build_in="thread")
    try:
        b.sync("other")  # B's connection and the database exist before A starts
        transcript.append(CHAT, [msg("user", "first question"), msg("assistant", "first answer")])
        if known:
            assert a.sync(CHAT) == 2
        write_rest(transcript)
        if first is None:
            calls = stop_at_parse(monkeypatch, lambda: b.sync(CHAT))
        else:
            monkeypatch.setattr(index_module, "BUILD_BATCH", first + (0 if known else 2))
            calls = stop_at_parse(monkeypatch, lambda: b.build_step(CHAT))
        added = a.sync(CHAT)
        assert calls == [1]
        assert db("SELECT line, dead FROM turns ORDER BY line") == [(1, 0), (2, 0), (3, 1), (4, 1), (5, 0), (6, 0)]
        assert added == (2 if first else 0)  # only what B had not indexed
        assert db("SELECT docs, terms FROM chats WHERE chat='c'") == db(
            "SELECT count(*), sum(nterms) FROM turns WHERE chat=(SELECT id FROM chats WHERE chat='c')"
        )
        assert db("SELECT lines, done FROM files WHERE name=''") == [(6, transcript.path(CHAT).stat().st_size)]
        hits = a.search(CHAT, "hiking trail", 10)
        assert hits and all("old answer" not in h.content for h in hits)

        # a torn last line waits for its end, then is indexed once
        with open(transcript.path(CHAT), "ab") as f:
            f.write(b'{"role": "user", "content": "a torn ')
        assert a.sync(CHAT) == 0 and b.sync(CHAT) == 0
        with open(transcript.path(CHAT), "ab") as f:
            f.write(b'line", "at": "2026-11-01T10:00:00+09:00"}\n')
        assert a.sync(CHAT) + b.sync(CHAT) == 1
        assert db("SELECT line FROM turns ORDER BY line") == [(n,) for n in range(1, 8)]
        assert a.search(CHAT, "torn", 5)[0].line == 7
    finally:
        a.close()
        b.close()
