"""A long history is never indexed on a question's path: it is built in the background (memory.recall.build),
in a worker process (memory.recall.worker).

The worker is held at a gate (tests.helpers.Gate and tests/recall_worker_gate.py: files in a
directory) inside its first batch, so what the question path did is observed while nothing has been
built yet; no test depends on timing.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.claude.model import FakeModel, tool_call
from bot.commands.search import search_text
from bot.core.ask import Assistant
from memory.recall import RecallIndex, inspect_index
from memory.recall import index as index_module
from memory.transcript import Transcript
from tests.fakes.messages_rules import validate
from tests.helpers import BUDGET, WAIT, Gate, indexed, plant, recalled
from tests.helpers import budget_index as budget_index  # the fixture ``index``

HEADER = "[관련 기억 / Related memories]"


def test_a_long_history_is_built_in_the_background_not_by_the_question(
    index: RecallIndex, transcript: Transcript, data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gate = Gate(monkeypatch, tmp_path)
    plant(transcript, 1, 300)
    assert index.related(1, "사물함 비밀번호 뭐였지?") == []  # answered at once, without recall …
    assert gate.caller_turns == 0 and indexed(data_dir, "1") == 0  # … and nothing indexed on its path
    assert gate.reached()  # the worker took it
    status = index.status(1)
    assert not status.ready and status.building and status.percent == 0 and status.total > BUDGET
    gate.open()
    assert index.wait_built(WAIT)
    assert index.status(1).ready and indexed(data_dir, "1") == 602
    assert "8264" in index.related(1, "사물함 비밀번호 뭐였지?")[0].content
    assert gate.caller_turns == 0


def test_the_turns_since_the_last_sync_are_indexed_at_once(
    index: RecallIndex, transcript: Transcript, data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gate = Gate(monkeypatch, tmp_path)
    plant(transcript, 1, 5)
    hits = index.search(1, "사물함 비밀번호")
    assert hits and "8264" in hits[0].content
    assert gate.caller_turns == 12 and index.builder.idle() and index.builder.built == 0
    assert not (gate.dir / "worker").exists()  # no worker was started


def test_other_chats_are_indexed_and_searched_while_one_is_built(
    index: RecallIndex, transcript: Transcript, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gate = Gate(monkeypatch, tmp_path)
    plant(transcript, "long", 300)
    plant(transcript, "short", 3, secret="현관 비밀번호는 5931이야")
    index.catch_up("long")
    assert gate.reached()
    hits = index.search("short", "현관 비밀번호")  # the long chat's build holds nothing it needs
    assert hits and "5931" in hits[0].content and index.status("short").ready
    assert not index.status("long").ready
    gate.open()
    assert index.wait_built(WAIT) and index.status("long").ready


def test_the_doctor_sees_the_build_in_progress(
    index: RecallIndex, transcript: Transcript, data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gate = Gate(monkeypatch, tmp_path, free_calls=1, batch=100)  # one batch of 100 turns, then held
    plant(transcript, 1, 300)
    index.catch_up(1)
    assert gate.reached()
    notes = [n for n in inspect_index(data_dir).notes if "in the background" in n]
    assert len(notes) == 1 and "chat 1:" in notes[0]
    percent = int(notes[0].split("background: ")[1].split("%")[0])
    assert 0 < percent < 100
    assert indexed(data_dir, "1") == 100
    gate.open()
    assert index.wait_built(WAIT)
    assert not [n for n in inspect_index(data_dir).notes if "in the background" in n]


def test_a_rebuilt_index_is_built_in_the_background_too(
    data_dir: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    plant(transcript, 1, 300)
    with RecallIndex(data_dir, sync_budget=None) as old:
        old.sync(1)
    con = sqlite3.connect(data_dir / "recall.sqlite3")
    con.execute("UPDATE meta SET value='0' WHERE key='version'")  # an index of another format (an upgrade)
    con.commit()
    con.close()
    gate = Gate(monkeypatch, tmp_path)
    with RecallIndex(data_dir, sync_budget=BUDGET) as idx:
        assert idx.search(1, "사물함 비밀번호") == []
        assert gate.reached() and gate.caller_turns == 0
        gate.open()
        assert idx.wait_built(WAIT)
        assert "8264" in idx.search(1, "사물함 비밀번호")[0].content


@pytest.fixture
def assistant(transcript: Transcript, clock: Any, data_dir: Path) -> Iterator[tuple[Assistant, FakeModel, RecallIndex]]:
    model = FakeModel(validate=validate)
    idx = RecallIndex(data_dir, sync_budget=BUDGET)
    a = Assistant(transcript=transcript, model=model, now=clock, recall=idx, max_messages=6, max_chars=2000)
    yield a, model, idx
    idx.close()


def related_text(call: Any) -> str:
    assert not any(HEADER in b["text"] for b in call.system)  # data: never in the system prompt
    return recalled(call)


async def test_the_first_question_is_answered_while_the_history_is_built(
    assistant: tuple[Assistant, FakeModel, RecallIndex],
    transcript: Transcript,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    a, model, idx = assistant
    gate = Gate(monkeypatch, tmp_path)
    plant(transcript, 1, 300)
    await a.ask(1, "사물함 비밀번호 뭐였지?")  # answered though the builder is held
    assert related_text(model.calls[-1]) == "" and gate.caller_turns == 0
    await a.maintain(1)  # the upkeep after the reply does not build it either
    assert gate.caller_turns == 0
    assert "9%" not in search_text(a, 1, "사물함", "en")
    assert "still being indexed (0% done)" in search_text(a, 1, "사물함 비밀번호", "en")
    assert "색인하는 중" in search_text(a, 1, "사물함 비밀번호", "ko")
    gate.open()
    assert idx.wait_built(WAIT)
    await a.ask(1, "사물함 비밀번호 뭐였지?")
    assert "8264" in related_text(model.calls[-1])
    answer = search_text(a, 1, "사물함 비밀번호", "en")
    assert "8264" in answer and "indexed" not in answer


async def test_the_search_tool_says_the_history_is_still_being_indexed(
    assistant: tuple[Assistant, FakeModel, RecallIndex],
    transcript: Transcript,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    a, model, idx = assistant
    gate = Gate(monkeypatch, tmp_path)
    plant(transcript, 1, 300)
    model.queue(tool_call("search_memory", {"query": "사물함 비밀번호"}), "모르겠어요")
    await a.ask(1, "내 사물함 번호 찾아 줘")
    result = str(model.calls[-1].messages[-1]["content"])
    assert "still being indexed" in result
    gate.open()
    assert idx.wait_built(WAIT)


def test_the_build_runs_in_another_process_at_a_lower_priority(
    index: RecallIndex, transcript: Transcript, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: Any
) -> None:
    caplog.set_level("INFO", logger="memory.recall.build")
    gate = Gate(monkeypatch, tmp_path)
    plant(transcript, 1, 300)
    index.catch_up(1)
    assert gate.reached()
    pid, nice = gate.worker()
    assert pid != os.getpid() and nice > os.nice(0)  # not the bot's interpreter, and after the bot's threads
    gate.open()
    assert index.wait_built(WAIT) and index.status(1).ready and index.builder.built == 1
    log = caplog.text
    assert "chat 1: building in the background, 41% (0.0 of 0.1 MB, 250 turns so far)" in log  # the worker's
    assert "chat 1: built, 602 turns" in log


def test_the_worker_pauses_while_questions_are_in_progress(
    index: RecallIndex, transcript: Transcript, data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # hold: the worker waits for the questions however long they take (the bot: at most MAX_YIELD)
    gate = Gate(monkeypatch, tmp_path, free_calls=1, batch=100, hold=True)
    plant(transcript, 1, 300)
    index.catch_up(1)
    assert gate.reached()  # in its second batch
    with index.foreground():  # a question is being prepared …
        gate.open()
        assert gate.wait("paused")  # … the worker heard it after that batch, and waits
        assert indexed(data_dir, "1") == 200
    assert index.wait_built(WAIT / 2)  # resumed when the question was done, not after its WAIT
    assert indexed(data_dir, "1") == 602


def test_a_killed_build_goes_on_where_it_stopped(
    index: RecallIndex, transcript: Transcript, data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gate = Gate(monkeypatch, tmp_path, free_calls=1, batch=100)
    plant(transcript, 1, 300)
    index.catch_up(1)
    assert gate.reached()  # one batch committed, the second one under way
    os.kill(gate.worker()[0], signal.SIGKILL)
    assert index.wait_built(WAIT) and index.builder.built == 0
    status = index.status(1)
    assert not status.ready and not status.building and indexed(data_dir, "1") == 100
    gate.open()
    assert not index.catch_up(1).ready  # the next question has it built again, from where it was
    assert index.wait_built(WAIT) and index.status(1).ready
    con = sqlite3.connect(data_dir / "recall.sqlite3")
    try:
        assert con.execute("SELECT count(*), count(DISTINCT line) FROM turns").fetchone() == (602, 602)
    finally:
        con.close()
    assert "8264" in index.related(1, "사물함 비밀번호 뭐였지?")[0].content


def test_closing_the_index_stops_the_worker(
    data_dir: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gate = Gate(monkeypatch, tmp_path)
    plant(transcript, 1, 300)
    idx = RecallIndex(data_dir, sync_budget=BUDGET)
    idx.catch_up(1)
    assert gate.reached()
    pid = gate.worker()[0]
    idx.close()  # the gate is never opened: the worker is stopped, not waited for
    with pytest.raises(ProcessLookupError):  # gone, and reaped
        os.kill(pid, 0)
    with RecallIndex(data_dir, sync_budget=BUDGET) as again:
        assert not again.status(1).ready


def test_the_build_can_run_in_a_thread_of_this_process(
    data_dir: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gate = Gate(monkeypatch, tmp_path)
    threads: set[str] = set()
    counted = index_module.index_file

    def noted(*args: Any, **kwargs: Any) -> tuple[int, bool]:
        threads.add(threading.current_thread().name)
        return counted(*args, **kwargs)

    monkeypatch.setattr(index_module, "index_file", noted)
    plant(transcript, 1, 300)
    with RecallIndex(data_dir, sync_budget=BUDGET, build_in="thread") as idx:
        assert not idx.catch_up(1).ready
        assert idx.wait_built(WAIT) and idx.status(1).ready
        assert "8264" in idx.related(1, "사물함 비밀번호 뭐였지?")[0].content
    assert threads == {"recall-build"} and not (gate.dir / "worker").exists()


def test_a_worker_whose_bot_is_gone_stops(data_dir: Path, transcript: Transcript) -> None:
    plant(transcript, 1, 300)
    with RecallIndex(data_dir) as idx:
        assert not idx.status(1).ready  # creates the index file
        path = idx.path
    done = subprocess.run(  # its stdin ends at once: the bot that started it is gone
        [sys.executable, "-m", "memory.recall.worker", str(data_dir), str(path), "1"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=WAIT,
    )
    assert done.returncode == 3 and indexed(data_dir, "1") == 0
    worker = subprocess.Popen(  # with the bot there, saying nothing (no question): built to the end
        [sys.executable, "-m", "memory.recall.worker", str(data_dir), str(path), "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert worker.stdout is not None and worker.stdin is not None
    lines = worker.stdout.read().decode().splitlines()  # to its end: the worker exits when built
    worker.stdin.close()
    assert worker.wait(WAIT) == 0 and indexed(data_dir, "1") == 602
    assert json.loads(lines[-1]) == {"turns": 602, "ready": True, "done": 0, "total": 0}
