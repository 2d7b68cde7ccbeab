"""bench.recall_persona_lists: questions for a list asked in other forms, in bench.recall_eval's persona generator."""

from __future__ import annotations

import dataclasses

import pytest

from bench import recall_persona, recall_persona_lists
from bench.recall_persona import ENGLISH
from bench.recall_persona_ko import KOREAN
from bench.recall_tables import Tables
from memory.recall.spread import asks_for_many


@pytest.mark.parametrize(("seed", "tables"), [(1, ENGLISH), (7, ENGLISH), (13, ENGLISH), (7, KOREAN)])
def test_the_lists_in_other_forms_come_last_and_leave_the_rest_as_it_was(seed: int, tables: Tables) -> None:
    without = recall_persona.generate(seed, tables=dataclasses.replace(tables, list_forms=()))
    conv = recall_persona.generate(seed, tables=tables)
    assert conv.files == without.files and conv.never == without.never
    added = [q for q in conv.questions if q not in without.questions]
    assert [q for q in conv.questions if q not in added] == without.questions  # in the same order
    if tables is KOREAN:
        assert added == []  # English forms only
        return
    assert len(added) >= 3 and {q.kind for q in added} == {"multi"}
    likes = [q for q in added if not q.text.startswith(recall_persona_lists.LIST_FORMS)]
    assert likes and added[-len(likes) :] == likes  # "What does Deb enjoy doing?" after the other forms
    assert all(q.text.startswith("What does ") for q in likes)


@pytest.mark.parametrize("seed", [1, 7])
def test_each_asks_a_list_question_again_with_its_evidence(seed: int) -> None:
    """Each new question is an earlier ``multi`` one in another form: the same evidence, and the same noun."""
    conv = recall_persona.generate(seed)
    without = recall_persona.generate(seed, tables=dataclasses.replace(ENGLISH, list_forms=()))
    earlier = {tuple(q.evidence): q.text for q in without.questions if q.kind == "multi"}
    for q in [q for q in conv.questions if q not in without.questions]:
        source = earlier[tuple(q.evidence)]
        if q.text.startswith("What does "):  # what someone likes: their hobbies or free-time activities, no noun
            who = next(m["who"] for pattern, _ in recall_persona_lists.LIKES if (m := pattern.fullmatch(source)))
            assert q.text.startswith(f"What does {who} ") and q.text != source
            continue
        noun = recall_persona_lists._ASKS.fullmatch(source)["noun"]
        assert noun in q.text and q.text != source


def test_the_forms_and_about_half() -> None:
    asked = [
        ("What hobbies does Deb have?", "multi", [("c", 1)]),
        ("Which places has Cal travelled to or planned to visit?", "multi", [("c", 2)]),
        ("What pets do Aud and Cal have?", "multi", [("c", 3)]),
        ("What activities does Mel enjoy in her free time?", "multi", [("c", 4)]),
        ("What has Deb painted?", "multi", [("c", 5)]),  # no noun: not asked again
        ("What hobby does Deb have?", "multi", [("c", 6)]),  # one thing
        ("What pets does Deb have?", "single", [("c", 7)]),  # not a list question
    ]
    every = [q for q in recall_persona_lists.forms(1, asked * 40, ("Name the ",)) if q[0].startswith("Name the ")]
    assert {text for text, _, _ in every} == {
        "Name the hobbies Deb has.",
        "Name the places Cal has travelled to or planned to visit.",
        "Name the pets Aud and Cal have.",
        "Name the activities Mel enjoys in her free time.",
    }
    assert 160 * 0.4 < len(every) < 160 * 0.6
    kinds = {text for text, _, _ in recall_persona_lists.forms(2, asked * 10, ("What kinds of ", "What type of "))}
    assert "What kinds of hobbies does Deb have?" in kinds
    assert "What type of places has Cal travelled to or planned to visit?" in kinds
    assert recall_persona_lists.forms(1, asked, ()) == []
    assert all(asks_for_many(text) for text in kinds | {text for text, _, _ in every})  # read as lists


def test_what_someone_likes_asked_for_every_hobbies_question() -> None:
    asked = [
        ("What hobbies does Deb have?", "multi", [("c", 1)]),
        ("What activities does Mel enjoy in her free time?", "multi", [("c", 4)]),
        ("What activities does Cal enjoy in his free time?", "multi", [("c", 5)]),
        ("What hobbies does Deb have?", "single", [("c", 6)]),  # not a list question
        ("What pets does Deb have?", "multi", [("c", 7)]),  # not what she likes doing
    ]
    likes = recall_persona_lists.likes(3, asked * 20)
    assert len(likes) == 60 and {kind for _, kind, _ in likes} == {"multi"}
    assert {text: evidence[0][1] for text, _, evidence in likes} == {
        "What does Deb enjoy doing?": 1,
        "What does Deb like to do?": 1,
        "What does Deb love doing?": 1,
        "What does Mel enjoy in her free time?": 4,
        "What does Mel like doing in her free time?": 4,
        "What does Cal enjoy in his free time?": 5,
        "What does Cal like doing in his free time?": 5,
    }
    assert all(asks_for_many(text) for text, _, _ in likes)  # read as lists
    assert recall_persona_lists.forms(3, asked, ()) == []  # not in Korean


@pytest.mark.parametrize(
    ("verb", "said"),
    [
        ("have", "has"),
        ("enjoy", "enjoys"),
        ("go", "goes"),
        ("carry", "carries"),
        ("play", "plays"),
        ("watch", "watches"),
    ],
)
def test_a_verb_said_of_one_person(verb: str, said: str) -> None:
    assert recall_persona_lists._third_person(verb) == said
