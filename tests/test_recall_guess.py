"""A question asking for a guess about someone (issue 32, item 2: "Would Deb enjoy a cabin weekend?", "Does Mia
have a garden?") or for a list (item 1: "Which gardens has Mia been to?") rests on what they told of themselves:
the turns saying "I", "my", "we" come first (memory.recall.rank, ``Weights.disclose``), and the relevance floor is
decided as without it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot.cli import search as search_cli
from memory.recall import RecallIndex
from memory.recall.meaning import Dense
from memory.recall.query import asks_for_guess
from memory.recall.store import ChatRow
from memory.recall.tuning import Weights
from memory.transcript import Transcript
from tests.test_recall_spread import CHAT, sessions

TOLD = "Mia: I spend every evening in the garden now, the tomatoes are ripe."  # what Mia told of herself
SAID = "Mia: The garden show is on the radio tonight."  # the question's word, nothing of her life


def garden_chat(transcript: Transcript) -> None:
    sessions(
        transcript,
        [
            [("Mia", TOLD.removeprefix("Mia: ")), ("Leo", "Lovely.")],
            [("Leo", "Work was long."), ("Mia", "Same here.")],
            [("Mia", SAID.removeprefix("Mia: ")), ("Leo", "Nice.")],
        ],
    )


def found(data_dir: Path, question: str, **weights: Any) -> list[str]:
    with RecallIndex(data_dir, weights=Weights(**weights)) as index:
        return [h.content for h in index.search(CHAT, question, 5)]


def test_a_guess_about_someone_puts_what_they_told_of_themselves_first(transcript, data_dir):
    garden_chat(transcript)
    question = "Does Mia have a garden?"
    assert found(data_dir, question, disclose=0.0) == [SAID, TOLD]  # the shorter, newer turn, by its words
    assert found(data_dir, question) == [TOLD, SAID]


def test_a_question_asking_for_a_list_puts_them_first_too(transcript, data_dir):
    garden_chat(transcript)
    question = "Which gardens has Mia been to?"
    assert found(data_dir, question, disclose=0.0) == [SAID, TOLD]
    assert found(data_dir, question) == [TOLD, SAID]


def test_a_question_not_asking_for_a_guess_is_left_as_it_was(transcript, data_dir):
    garden_chat(transcript)
    question = "Tell me about Mia's garden"
    assert found(data_dir, question) == found(data_dir, question, disclose=0.0) == [SAID, TOLD]


def test_bot_search_answers_a_guess_the_same_way(transcript, data_dir, capsys):
    garden_chat(transcript)
    assert search_cli.main(["--chat", CHAT, "--data-dir", str(data_dir), "Does Mia have a garden?"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["content"] for r in rows] == [TOLD, SAID]


HIKE = "Mia: I spent the whole weekend hiking in the hills with friends."


def test_the_relevance_floor_is_decided_without_it(transcript, data_dir, monkeypatch):
    """A guess in no word of the chat ("zebra safari"), its closest turn related by meaning only, below the floor's
    score as it is and above it when multiplied (``Weights.disclose_floor``): it still finds nothing."""
    sessions(transcript, [[("Mia", HIKE.removeprefix("Mia: ")), ("Leo", "Sounds tiring.")], [("Leo", "Work.")]])

    def by_meaning(self: RecallIndex, conn: sqlite3.Connection, row: ChatRow, *_: object) -> object:
        ids = [i for i, text in conn.execute("SELECT id, content FROM turns WHERE id BETWEEN ? AND ?", (row.lo, row.hi))
               if text == HIKE]  # fmt: skip
        dense = Dense(top=ids, floor=0.0, centred=True, crowded=False, _rows={ids[0]: 0}, _sims=[0.3])
        return lambda _text: lambda: dense  # the hike at 0.3 around the chat's mean: related, not a paraphrase

    monkeypatch.setattr(RecallIndex, "_by_meaning", by_meaning)
    question = "Would Mia enjoy a zebra safari?"
    assert found(data_dir, question, disclose_floor=True) == [HIKE]  # the multiplied score passes the floor
    assert found(data_dir, question) == []
    assert found(data_dir, question, disclose=0.0) == []


@pytest.mark.parametrize(
    ("question", "guess"),
    [
        ("What would Deb likely study?", True),
        ("Would Mel enjoy a cabin weekend?", True),
        ("Is Mel a bookworm?", True),
        ("Could Cal strum along at a bonfire?", True),
        ("Which job might Gi take?", True),
        ("What could Deb see from the top of the trail?", False),
        ("What hobbies does Deb have?", False),
        ("When did Deb move?", False),
        ("Tell me about Mia's garden", False),
        ("무슨 책을 좋아할까?", False),
    ],
)
def test_which_questions_ask_for_a_guess(question, guess):
    assert asks_for_guess(question) is guess
