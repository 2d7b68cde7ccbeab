"""A question asking where prefers the turns naming a place (memory.recall.answer; issue 32, eighteenth round)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memory.recall import RecallIndex
from memory.recall.answer import PLACE_MOST, Places, asks_where
from memory.recall.store import chat_row
from memory.recall.tuning import Weights

KYOTO = "Our trip is over, we're back from Kyoto! The temple was breathtaking."
VACATION = "I need a vacation so badly, no trip for us this year."
FILLER = ["How was your week?", "Pretty busy, work has been a lot.", "Let's catch up soon!", "Sounds good."]


def write(data_dir: Path, texts: list[tuple[str, str]]) -> None:
    path = data_dir / "chats" / "c.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        for i, (name, text) in enumerate(texts):
            role = "user" if name == "Deborah" else "assistant"
            at = f"2023-05-{1 + i // 20:02d}T10:00:00"
            f.write(json.dumps({"role": role, "content": text, "name": name, "at": at}) + "\n")


def chat(data_dir: Path) -> None:
    said = [("Deborah" if i % 2 else "Andrew", FILLER[i % len(FILLER)]) for i in range(40)]
    said[10] = ("Deborah", KYOTO)
    said[30] = ("Deborah", VACATION)
    said[33] = ("Deborah", "Porto was lovely, honestly.")  # a capital only where any sentence has one
    said[35] = ("Deborah", "still scrolling through my photos of kyoto")  # typed in lower case as often as not
    # the café's street, said in more turns than PLACE_MOST: the small talk's, not a place asked about
    said += [
        ("Andrew", f"Thanks, Deborah! The new bakery on Elm is finally open ({i}).") for i in range(PLACE_MOST + 1)
    ]
    write(data_dir, said)


@pytest.mark.parametrize(
    "question",
    ["Where did Deb travel recently?", "which city did Cal move to", "Which places have Deb and Andy been to?",
     "What cities has Mel visited?", "WHERE is the party?", "What country is her grandma from?"],
)  # fmt: skip
def test_questions_asking_where(question: str) -> None:
    assert asks_where(question)


@pytest.mark.parametrize(
    "question",
    ["What hobbies does Deb have?", "When did Deb move to Kyoto?", "Who visited Deb?", "Somewhere nice for dinner?",
     "What did Deb place on the shelf?"],
)  # fmt: skip
def test_questions_not_asking_where(question: str) -> None:
    assert not asks_where(question)


def test_which_turns_name_a_place(data_dir: Path) -> None:
    chat(data_dir)
    with RecallIndex(data_dir) as index:
        index.search("c", "trip", 1)  # indexes the chat
    with sqlite3.connect(data_dir / "recall.sqlite3") as conn:
        row = chat_row(conn, "c", create=False)
        assert row is not None
        places = Places(conn, row)
        assert places.named(KYOTO)
        assert places.named("We loved every day in Kyoto.")  # looked up again: the same answer
        assert not places.named(VACATION)
        assert not places.named("Kyoto was amazing.")  # no word leading to a place before it
        assert not places.named("Last night I saw Coldplay live!")  # a band seen
        assert places.named("A week in the Alps, finally.")
        # a place written as a common noun, after a word leading to it: not put behind the capitalised ones
        assert places.named("From the rescue center on the harbour, she was the smallest.")
        assert places.named("Spent Saturday at the animal shelter again.")
        assert not places.named("I walk in the morning, the shelter of routine.")  # no place after "in"
        assert not places.named("Say hi to Andrew for me!")  # someone in the chat, however seldom named
        assert not places.named("I start on Monday, see you in May.")  # a day, a month
        assert not places.named("The bakery on Elm is open.")  # the street the small talk keeps naming
        # typed in lower case after a word leading to a place: a place if the chat writes it with a capital (once
        # is enough: half its turns write "kyoto")
        assert places.named("we're back from kyoto")
        assert not places.named("we're back from lisbon")  # never written with a capital
        assert not places.named("we're back from porto")  # ... but at a sentence's start
        assert not places.named("a kyoto trip")  # no word leading to it
        assert not places.named("the new bakery near elm opens in may")  # the small talk's street; a month


def test_a_question_asking_where_finds_the_turn_naming_the_place(data_dir: Path) -> None:
    """ "Where did Deb travel recently?": the turn naming Kyoto ranks above the one holding more of the question's
    related words (trip, vacation) and no place; with ``Weights.place`` 0 it does not."""
    chat(data_dir)
    with RecallIndex(data_dir, weights=Weights(floor=False)) as index:
        found = [h.content for h in index.search("c", "Where did Deborah travel recently?", 2)]
    assert found[0] == KYOTO, found
    with RecallIndex(data_dir, weights=Weights(floor=False, place=0.0)) as index:
        found = [h.content for h in index.search("c", "Where did Deborah travel recently?", 2)]
    assert found[0] == VACATION, found
    with RecallIndex(data_dir, weights=Weights(floor=False)) as index:  # not asking where: as before
        found = [h.content for h in index.search("c", "How did Deborah travel recently?", 2)]
    assert found[0] == VACATION, found
