"""The recall index deleted (by the user, or a restore) while its background build runs.

``DATA_DIR/recall.sqlite3`` is derived from the transcripts: deleting it, alone or with its
``-wal``/``-shm`` files, while the worker process (memory.recall.worker) is in the middle of a build
costs no answer and no exception; searches go on answering, and the index ends up complete again (at
the latest once the chat's next question has it built), every turn exactly once, the transcripts
untouched. The worker is held at its gate (tests/recall_worker_gate.py) after one committed batch, so
the deletion happens mid-build every time; nothing depends on timing.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from pathlib import Path

import pytest

from memory.recall import RecallIndex
from memory.transcript import Transcript
from tests.helpers import BUDGET, WAIT, Gate, indexed, plant
from tests.helpers import budget_index as budget_index  # the fixture ``index``

SECRET = "사물함 비밀번호"  # in the first turn (indexed by the batch committed before the deletion)
LAST = "299번째 잡담"  # in one of the last turns (indexed only after the deletion)
TURNS = 602  # what plant(…, 300) stores


def transcripts(data_dir: Path) -> dict[str, str]:
    """Every transcript file under DATA_DIR/chats and a digest of its bytes."""
    chats = data_dir / "chats"
    files = sorted(p for p in chats.rglob("*") if p.is_file())
    return {str(p.relative_to(chats)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def on_disk(data_dir: Path) -> tuple[int, int, int, str]:
    """What the file DATA_DIR/recall.sqlite3 holds, read by another connection (which creates nothing):
    (turns, distinct (file, line) among them, the chat's document count, integrity check)."""
    con = sqlite3.connect(f"file:{data_dir / 'recall.sqlite3'}?mode=ro", uri=True)
    try:
        turns, distinct = con.execute("SELECT count(*), count(DISTINCT file || ':' || line) FROM turns").fetchone()
        check = con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()
    return int(turns), int(distinct), indexed(data_dir, "1"), str(check)


@pytest.mark.parametrize("suffixes", [("",), ("", "-wal", "-shm")], ids=["database", "database-wal-shm"])
def test_an_index_deleted_during_its_background_build_is_built_again(
    index: RecallIndex,
    transcript: Transcript,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    suffixes: tuple[str, ...],
) -> None:
    caplog.set_level(logging.INFO)
    gate = Gate(monkeypatch, tmp_path, free_calls=1, batch=100)  # one batch committed, then held
    plant(transcript, 1, 300)
    before = transcripts(data_dir)
    assert not index.catch_up(1).ready
    assert gate.reached()
    assert SECRET.split()[0] in index.search(1, SECRET)[0].content  # the bot's connections use the file too

    for suffix in suffixes:
        (data_dir / f"recall.sqlite3{suffix}").unlink()

    # meanwhile every call answers (with what the index holds now, maybe nothing yet), none raises
    index.search(1, SECRET)
    index.related(1, "사물함 비밀번호 뭐였지?")
    index.status(1)
    index.catch_up(1)

    gate.open()
    assert index.wait_built(WAIT)
    index.related(1, "사물함 비밀번호 뭐였지?")  # the chat's next question: has it built again if needed
    assert index.wait_built(WAIT)

    assert index.status(1).ready
    assert "8264" in index.search(1, SECRET)[0].content
    assert "299번째" in index.search(1, LAST)[0].content
    assert on_disk(data_dir) == (TURNS, TURNS, TURNS, "ok")  # the file at the path, every turn once
    with RecallIndex(data_dir, sync_budget=BUDGET) as other:  # another process's view (the terminal chat)
        assert other.status(1).ready
        assert "8264" in other.search(1, SECRET, sync=False)[0].content
    assert transcripts(data_dir) == before
    problems = [r.getMessage() for r in caplog.records if "exited with" in r.getMessage() or r.exc_info]
    assert problems == [] and "Traceback" not in caplog.text  # no worker crashed, no exception was logged
