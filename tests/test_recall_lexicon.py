"""Related words of the lexicon a question asks in (memory.recall.lexicon; issue 32, eighteenth round)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.recall import RecallIndex
from memory.recall.lexicon import related
from memory.recall.text import word_term
from memory.recall.tuning import Weights

FILLER = ["How was your week?", "Pretty busy, work has been a lot.", "Let's catch up soon!", "Sounds good."]
YOGA = "I've started doing yoga three times a week, it really calms me."
CAR = "I finally bought a car, a used hatchback! No more waiting in the rain."


def write(data_dir: Path, texts: list[str]) -> None:
    path = data_dir / "chats" / "c.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(json.dumps({"role": "user" if i % 2 else "assistant", "content": text}) + "\n")


def test_wellbeing_and_spending_have_related_words() -> None:
    assert related(word_term("wellbeing"), word_term)[word_term("yoga")] > 0
    assert related(word_term("spent"), word_term)[word_term("bought")] > 0


@pytest.mark.parametrize(("question", "answer"), [("What does she do for her wellbeing?", YOGA),
                                                  ("What has she spent money on?", CAR)])  # fmt: skip
def test_a_question_in_general_words_finds_the_turn_in_particular_ones(
    data_dir: Path, question: str, answer: str
) -> None:
    write(data_dir, [FILLER[i % len(FILLER)] for i in range(30)] + [YOGA, CAR] + FILLER * 5)
    with RecallIndex(data_dir, weights=Weights(floor=False)) as index:
        assert answer in [h.content for h in index.search("c", question, 1)]
    with RecallIndex(data_dir, weights=Weights(floor=False, expand=0.0)) as index:  # without related words
        assert answer not in [h.content for h in index.search("c", question, 1)]
