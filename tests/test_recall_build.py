"""A long history is never indexed on a question's path: it is built in the background (memory.recall.build).

The builder thread is held at a gate (an Event) inside its first batch, so what the question path
did is observed while nothing has been built yet; no test depends on timing.
"""

from __future__ import annotations

import sqlite3
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

HEADER = "[관련 기억 / Related memories]"
BUDGET = 4_096  # bytes a question may index (the real default is 256 KiB)
WAIT = 120.0  # generous: only reached if the code is broken


class Gate:
    """Holds the background builder inside ``index_file`` until opened; the caller's thread passes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, free_calls: int = 0) -> None:
        self.open = threading.Event()
        self.reached = threading.Event()
        self.free = free_calls
        self.caller_turns = 0  # turns indexed on threads other than the builder
        real = index_module.index_file

        def gated(*args: Any, **kwargs: Any) -> tuple[int, bool]:
            if threading.current_thread().name == "recall-build":
                if self.free > 0:
                    self.free -= 1
                else:
                    self.reached.set()
                    assert self.open.wait(WAIT), "the test never opened the gate"
                return real(*args, **kwargs)
            n, more = real(*args, **kwargs)
            self.caller_turns += n
            return n, more

        monkeypatch.setattr(index_module, "index_file", gated)


def plant(transcript: Transcript, chat: int | str, n: int, secret: str = "사물함 비밀번호는 8264야") -> None:
    transcript.append(
        chat,
        [
            {"role": "user", "content": secret, "at": "2026-08-01T10:00:00+09:00"},
            {"role": "assistant", "content": "네, 기억할게요.", "at": "2026-08-01T10:00:00+09:00"},
        ],
    )
    for i in range(n):
        transcript.append(
            chat,
            [
                {"role": "user", "content": f"오늘 {i}번째 잡담: 날씨가 좋네", "at": "2026-09-01T10:00:00+09:00"},
                {"role": "assistant", "content": f"그렇네요 {i}", "at": "2026-09-01T10:00:00+09:00"},
            ],
        )


def indexed(data_dir: Path, chat: str) -> int:
    con = sqlite3.connect(data_dir / "recall.sqlite3")
    try:
        row = con.execute("SELECT docs FROM chats WHERE chat=?", (chat,)).fetchone()
        return int(row[0]) if row else 0
    finally:
        con.close()


@pytest.fixture
def index(data_dir: Path) -> Iterator[RecallIndex]:
    idx = RecallIndex(data_dir, sync_budget=BUDGET)
    yield idx
    idx.close()


def test_a_long_history_is_built_in_the_background_not_by_the_question(
    index: RecallIndex, transcript: Transcript, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch)
    plant(transcript, 1, 300)
    assert index.related(1, "사물함 비밀번호 뭐였지?") == []  # answered at once, without recall …
    assert gate.caller_turns == 0 and indexed(data_dir, "1") == 0  # … and nothing indexed on its path
    assert gate.reached.wait(WAIT)  # the builder took it
    status = index.status(1)
    assert not status.ready and status.building and status.percent == 0 and status.total > BUDGET
    gate.open.set()
    assert index.wait_built(WAIT)
    assert index.status(1).ready and indexed(data_dir, "1") == 602
    assert "8264" in index.related(1, "사물함 비밀번호 뭐였지?")[0].content
    assert gate.caller_turns == 0


def test_the_turns_since_the_last_sync_are_indexed_at_once(
    index: RecallIndex, transcript: Transcript, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch)
    plant(transcript, 1, 5)
    hits = index.search(1, "사물함 비밀번호")
    assert hits and "8264" in hits[0].content
    assert gate.caller_turns == 12 and index.builder.idle() and index.builder.built == 0
    assert not gate.reached.is_set()


def test_other_chats_are_indexed_and_searched_while_one_is_built(
    index: RecallIndex, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch)
    plant(transcript, "long", 300)
    plant(transcript, "short", 3, secret="현관 비밀번호는 5931이야")
    index.catch_up("long")
    assert gate.reached.wait(WAIT)
    hits = index.search("short", "현관 비밀번호")  # the long chat's build holds nothing it needs
    assert hits and "5931" in hits[0].content and index.status("short").ready
    assert not index.status("long").ready
    gate.open.set()
    assert index.wait_built(WAIT) and index.status("long").ready


def test_the_doctor_sees_the_build_in_progress(
    index: RecallIndex, transcript: Transcript, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "BUILD_BATCH", 100)
    gate = Gate(monkeypatch, free_calls=1)  # one batch of 100 turns, then held
    plant(transcript, 1, 300)
    index.catch_up(1)
    assert gate.reached.wait(WAIT)
    notes = [n for n in inspect_index(data_dir).notes if "in the background" in n]
    assert len(notes) == 1 and "chat 1:" in notes[0]
    percent = int(notes[0].split("background: ")[1].split("%")[0])
    assert 0 < percent < 100
    assert indexed(data_dir, "1") == 100
    gate.open.set()
    assert index.wait_built(WAIT)
    assert not [n for n in inspect_index(data_dir).notes if "in the background" in n]


def test_a_rebuilt_index_is_built_in_the_background_too(
    data_dir: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    plant(transcript, 1, 300)
    with RecallIndex(data_dir, sync_budget=None) as old:
        old.sync(1)
    con = sqlite3.connect(data_dir / "recall.sqlite3")
    con.execute("UPDATE meta SET value='0' WHERE key='version'")  # an index of another format (an upgrade)
    con.commit()
    con.close()
    gate = Gate(monkeypatch)
    with RecallIndex(data_dir, sync_budget=BUDGET) as idx:
        assert idx.search(1, "사물함 비밀번호") == []
        assert gate.reached.wait(WAIT) and gate.caller_turns == 0
        gate.open.set()
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
    return next((b["text"] for b in call.system if b["text"].startswith(HEADER)), "")


async def test_the_first_question_is_answered_while_the_history_is_built(
    assistant: tuple[Assistant, FakeModel, RecallIndex], transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, model, idx = assistant
    gate = Gate(monkeypatch)
    plant(transcript, 1, 300)
    await a.ask(1, "사물함 비밀번호 뭐였지?")  # answered though the builder is held
    assert related_text(model.calls[-1]) == "" and gate.caller_turns == 0
    await a.maintain(1)  # the upkeep after the reply does not build it either
    assert gate.caller_turns == 0
    assert "9%" not in search_text(a, 1, "사물함", "en")
    assert "still being indexed (0% done)" in search_text(a, 1, "사물함 비밀번호", "en")
    assert "색인하는 중" in search_text(a, 1, "사물함 비밀번호", "ko")
    gate.open.set()
    assert idx.wait_built(WAIT)
    await a.ask(1, "사물함 비밀번호 뭐였지?")
    assert "8264" in related_text(model.calls[-1])
    answer = search_text(a, 1, "사물함 비밀번호", "en")
    assert "8264" in answer and "indexed" not in answer


async def test_the_search_tool_says_the_history_is_still_being_indexed(
    assistant: tuple[Assistant, FakeModel, RecallIndex], transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, model, idx = assistant
    gate = Gate(monkeypatch)
    plant(transcript, 1, 300)
    model.queue(tool_call("search_memory", {"query": "사물함 비밀번호"}), "모르겠어요")
    await a.ask(1, "내 사물함 번호 찾아 줘")
    result = str(model.calls[-1].messages[-1]["content"])
    assert "still being indexed" in result
    gate.open.set()
    assert idx.wait_built(WAIT)
