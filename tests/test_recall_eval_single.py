"""bench.recall_persona_single: one fact asked in other words, in bench.recall_eval's persona generator."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import pytest

from bench import recall_persona, recall_persona_single
from bench.recall_persona import ENGLISH, TOPICS
from bench.recall_persona_ko import KOREAN
from bench.recall_tables import Tables


@pytest.mark.parametrize(("seed", "tables"), [(1, ENGLISH), (7, ENGLISH), (13, ENGLISH), (7, KOREAN)])
def test_the_questions_in_other_words_come_last_and_leave_the_rest_as_it_was(seed: int, tables: Tables) -> None:
    without = recall_persona.generate(seed, tables=dataclasses.replace(tables, single_words=[]))
    conv = recall_persona.generate(seed, tables=tables)
    assert conv.files == without.files and conv.never == without.never
    added = [q for q in conv.questions if q not in without.questions]
    assert [q for q in conv.questions if q not in added] == without.questions  # in the same order
    assert conv.questions[: conv.questions.index(added[0])] == without.questions[: conv.questions.index(added[0])]
    assert len(added) >= 5 and {q.kind for q in added} == {"single", "adversarial"}


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_each_points_at_the_turn_opening_the_topic_told_by_the_person_it_names(seed: int) -> None:
    """The evidence is the first line of the topic's first episode (its ``say[0]``, the subject's), said by the
    person the question names (by full or short name)."""
    conv = recall_persona.generate(seed)
    without = recall_persona.generate(seed, tables=dataclasses.replace(ENGLISH, single_words=[]))
    opening = {t.key: t.say[0][1].split("{")[0] for t in TOPICS}
    people = {full: (short, pronoun) for full, short, pronoun in recall_persona.PEOPLE}
    added = [q for q in conv.questions if q not in without.questions and q.kind == "single"]
    for q in added:
        (file, line), *_ = q.evidence
        said = conv.files[file][line - 1]
        name = str(said["name"])
        short, pronoun = people[name]
        asked = {
            text.format(S=n, p=pronoun): key for key, text in recall_persona_single.OTHER_WORDS for n in (name, short)
        }
        assert q.text in asked  # it names the one who told it
        assert opening[asked[q.text]] in str(said["content"])  # ... in the turn opening that topic
    assert len({q.evidence[0] for q in added}) == len(added)


def test_about_half_of_the_episodes_are_asked_and_none_without_a_table() -> None:
    day = datetime(2023, 6, 3)
    keys = [key for key, _ in recall_persona_single.OTHER_WORDS]
    told = [(key, "Mel", ("c", i + 1), day, None, day) for i, key in enumerate(keys * 4)]
    out = recall_persona_single.questions(3, told, lambda s: s, lambda s: "her", recall_persona_single.OTHER_WORDS)
    assert len(told) / 4 < len(out) < len(told) * 3 / 4
    assert all(kind == "single" and "Mel" in text for text, kind, _ in out)
    assert recall_persona_single.questions(3, told, lambda s: s, lambda s: "her", []) == []


def test_a_question_is_asked_of_the_wrong_person_only_when_they_did_not_live_the_topic_too() -> None:
    day = datetime(2023, 6, 3)
    keys = [key for key, _ in recall_persona_single.OTHER_WORDS]
    told = [(key, "Mel", ("c", i + 1), day, None, day) for i, key in enumerate(keys)]
    told += [("car", "Jon", ("c", 90), day, None, day)]  # Jon bought a car too
    friend = {"Mel": "Jon", "Jon": "Mel"}.__getitem__
    table = recall_persona_single.OTHER_WORDS
    plain = recall_persona_single.questions(5, told, lambda s: s, lambda s: "her", table)
    both = recall_persona_single.questions(5, told, lambda s: s, lambda s: "her", table, friend)
    assert both[: len(plain)] == plain and {k for _, k, _ in plain} == {"single"}
    wrong = both[len(plain) :]
    assert wrong and {k for _, k, _ in wrong} == {"adversarial"}
    asked_of_mel = {text.replace("Mel", "Jon"): ev for text, _, ev in plain}
    assert all(asked_of_mel[text] == ev for text, _, ev in wrong)  # the same question, the evidence Mel's turn
    assert "What vehicle did Jon get?" not in [text for text, _, _ in wrong]
    alone = recall_persona_single.questions(5, told[:-1], lambda s: s, lambda s: "her", table, friend)
    assert "What vehicle did Jon get?" in [text for text, kind, _ in alone if kind == "adversarial"]  # had he not
