"""A question typed without capitals ("what did mel paint"): its names are read as the chat writes them
(memory.recall.names.cased). The model reads every question in lower case: tests/test_recall_meaning.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory.recall import RecallIndex
from memory.recall.names import cased
from memory.recall.store import chat_row
from memory.recall.tuning import Weights
from tests.test_recall_quality import SMALL_TALK, write
from tests.test_recall_quality import said_by as said

PAINTED = "I finished a painting of a lighthouse yesterday, near the old harbour."


def painted(data_dir: Path) -> None:
    """Melanie and Caroline, who calls her Mel, both paint a lighthouse; the chat writes "car" inside a sentence
    in lower case, but once."""
    greet = [said("Caroline", "Hey Mel! How was your week?"), said("Melanie", "Busy but good, thanks Caroline!"),
             said("Caroline", "Thanks, Mel. Talk soon!"), said("Melanie", "Bye!")]  # fmt: skip
    chat = [said(("Melanie", "Caroline")[i % 2], SMALL_TALK[i % len(SMALL_TALK)]) for i in range(30)]
    both = [
        said("Melanie", PAINTED),
        said("Caroline", "I finished a painting of a lighthouse too, funny, by the pier at dusk!"),
    ]
    cars = [said("Caroline", "The car needs new brakes."), said("Melanie", "A car is such a money pit."),
            said("Caroline", "Car trouble again. Car is fixed, finally! Car wash later?"),  # each starts a sentence
            said("Melanie", "I love the Car wash on 5th.")]  # fmt: skip
    write(data_dir, "c", greet * 3 + chat + both + cars + chat)


def written(data_dir: Path, text: str) -> str:
    """``text`` as memory.recall.names.cased writes it for the chat ``painted`` wrote."""
    with RecallIndex(data_dir) as index:
        index.search("c", "warm up", 1)  # indexes the chat
    with sqlite3.connect(data_dir / "recall.sqlite3") as conn:
        chat = chat_row(conn, "c", create=False)
        assert chat is not None
        return cased(conn, chat, text, Weights().cased)


def test_a_question_without_capitals_finds_the_person_it_names(data_dir):
    painted(data_dir)
    with RecallIndex(data_dir) as index:
        for question in ("what did mel paint", "What did mel paint?"):  # a phone capitalises the first word
            assert index.search("c", question, 1)[0].content == PAINTED, question
        assert index.search("c", "what did caroline paint", 1)[0].content.endswith("by the pier at dusk!")


def test_only_the_words_the_chat_writes_as_names_are_capitalised(data_dir):
    painted(data_dir)
    assert written(data_dir, "mel's car or caroline's?") == "Mel's car or Caroline's?"  # "car" is any car
    assert written(data_dir, "what did mel paint") == "what did Mel paint"
    # a phone writes "I" with a capital by itself: the question's names are still looked up
    assert written(data_dir, "what did I tell mel") == "what did I tell Mel"
    assert written(data_dir, "I'm sure mel painted it?") == "I'm sure Mel painted it?"
    # a question that capitalises a word after its first writes its names as it means them: left as it is
    assert written(data_dir, "What did Caroline say to mel?") == "What did Caroline say to mel?"


@pytest.mark.parametrize("question", ["", "   ", "?!", "ok"])
def test_a_question_with_nothing_to_capitalise_is_left_as_it_is(data_dir, question):
    painted(data_dir)
    assert written(data_dir, question) == question
