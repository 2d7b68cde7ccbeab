"""bench.recall_persona_when: the harder "when" questions of bench.recall_eval's persona generator."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import pytest

from bench import recall_persona, recall_persona_when
from bench.recall_persona import ENGLISH
from bench.recall_persona_ko import KOREAN
from bench.recall_tables import Tables


@pytest.mark.parametrize(("seed", "tables"), [(1, ENGLISH), (7, ENGLISH), (7, KOREAN)])
def test_the_when_questions_leave_the_conversation_and_the_other_questions_as_they_were(
    seed: int, tables: Tables
) -> None:
    without = recall_persona.generate(seed, tables=dataclasses.replace(tables, when_words=[]))
    conv = recall_persona.generate(seed, tables=tables)
    assert conv.files == without.files and conv.never == without.never
    assert conv.questions[: len(without.questions)] == without.questions
    added = conv.questions[len(without.questions) :]
    kinds = {
        q.kind for q in added
    }  # and one fact in other words, lists in other forms (test_recall_eval_single, _lists)
    assert len(added) >= 5 and {"temporal", "adversarial"} <= kinds <= {"temporal", "adversarial", "single", "multi"}


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_a_question_naming_a_month_points_at_the_episode_of_that_month(seed: int) -> None:
    conv = recall_persona.generate(seed)
    months = [f"{datetime(2000, m, 1):%B}" for m in range(1, 13)]
    asked = [(q, m) for q in conv.questions for m in months if q.text.endswith(f" in {m}?")]
    for q, month in asked:
        (file, line), *_ = q.evidence
        assert f"{datetime.fromisoformat(str(conv.files[file][line - 1]['at'])):%B}" == month


def test_two_episodes_of_one_month_are_not_asked_apart() -> None:
    first, again = ("chat", 10), ("chat", 90)
    june, july, june_later = datetime(2023, 6, 3), datetime(2023, 7, 20), datetime(2024, 6, 9)

    def ask(second_day: datetime) -> list[tuple[str, str, list[tuple[str | None, int]]]]:
        told = [("camping", "Mel", first, june, again, second_day)]
        return recall_persona_when.questions(3, told, lambda s: s, lambda s: "her")

    apart = [q for q in ask(july) if "camping in" in q[0]]
    assert len(apart) == 1
    text, kind, evidence = apart[0]
    assert kind == "temporal" and (text, evidence) in (
        ("When did Mel go camping in June?", [first]),
        ("When did Mel go camping in July?", [again]),
    )
    assert not [q for q in ask(june_later) if "camping in" in q[0]]


def test_a_when_question_is_asked_of_the_wrong_person_only_when_they_did_not_do_it_too() -> None:
    day, later = datetime(2023, 6, 3), datetime(2023, 8, 9)
    told = [("camping", "Mel", ("c", 10), day, ("c", 90), later), ("camping", "Jon", ("c", 30), day, None, day)]
    others = [key for key, _ in recall_persona_when.OTHER_WORDS if key != "camping"]
    told += [(key, "Mel", ("c", 40 + i), day, None, day) for i, key in enumerate(others)]
    friend = {"Mel": "Jon", "Jon": "Mel"}.__getitem__
    plain = recall_persona_when.questions(5, told, lambda s: s, lambda s: "her")
    both = recall_persona_when.questions(5, told, lambda s: s, lambda s: "her", friend)
    assert both[: len(plain)] == plain and {k for _, k, _ in plain} == {"temporal"}
    wrong = both[len(plain) :]
    assert wrong and {k for _, k, _ in wrong} == {"adversarial"}
    camped = [text for text, _, _ in plain if "camping" in text or "tent" in text]
    assert camped and all(text.startswith("When did Jon ") for text, _, _ in wrong)
    assert not [text for text, _, _ in wrong if "camping" in text or "tent" in text]  # Jon went camping too
    asked_of_mel = {text.replace("When did Mel ", ""): ev for text, _, ev in plain}
    assert all(asked_of_mel[text.replace("When did Jon ", "")] == ev for text, _, ev in wrong)


@pytest.mark.parametrize("seed", [1, 7])
def test_when_questions_asked_in_other_forms_copy_an_earlier_when_question(seed: int) -> None:
    """``Tables.when_forms``: some "When did ..." questions asked again as "How long ago did ...", "In which month
    did ..."; the same kind and evidence, added last; none naming a month (that would ask it twice)."""
    others = {"single_words": [], "list_forms": (), "when_long": []}  # the rest of what comes after
    without = recall_persona.generate(seed, tables=dataclasses.replace(ENGLISH, when_forms=(), **others))
    conv = recall_persona.generate(seed, tables=dataclasses.replace(ENGLISH, **others))
    assert conv.files == without.files and conv.questions[: len(without.questions)] == without.questions
    added = conv.questions[len(without.questions) :]
    asked = {(q.text.removeprefix("When did "), q.kind): q.evidence for q in without.questions}
    assert len(added) >= 3 and len({q.text.split(" did ")[0] for q in added}) >= 2
    for q in added:
        form = next(f for f in recall_persona_when.FORMS if q.text.startswith(f))
        assert asked[(q.text.removeprefix(form), q.kind)] == q.evidence
        assert not q.text.endswith(tuple(f" in {datetime(2000, m, 1):%B}?" for m in range(1, 13)))
    assert len(added) < len([q for q in without.questions if q.text.startswith("When did ")]) / 2  # only some


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_how_long_questions_point_at_the_turn_telling_the_start(seed: int) -> None:
    """ "How long has Deb been doing yoga?": the evidence is the first line of the topic's first episode, said by the
    person the question names; asked of the friend (``adversarial``), the same evidence, said by the other person."""
    conv = recall_persona.generate(seed)
    without = recall_persona.generate(seed, tables=dataclasses.replace(ENGLISH, when_long=[]))
    assert [q for q in conv.questions if q in without.questions] == without.questions
    added = [q for q in conv.questions if q not in without.questions]
    assert added == conv.questions[-len(added) :] and {q.kind for q in added} == {"temporal", "adversarial"}
    opening = {t.key: t.say[0][1].split("{")[0] for t in recall_persona.TOPICS}
    people = {full: (short, pronoun) for full, short, pronoun in recall_persona.PEOPLE}
    for q in added:
        (file, line), *_ = q.evidence
        said = conv.files[file][line - 1]
        asked = {
            text.format(S=n, p=people[full][1]): (key, full)
            for key, text in recall_persona_when.HOW_LONG
            for full in people
            for n in (full, people[full][0])
        }
        key, named = asked[q.text]
        assert opening[key] in str(said["content"])  # the turn telling the start
        assert (named == said["name"]) is (q.kind == "temporal")
    assert recall_persona_when.how_long(seed, [], str, str, str, ENGLISH) == []


def test_korean_when_questions_asked_in_other_forms_say_the_when_another_way() -> None:
    """``FORMS_KO``: "민지는 언제 캠핑 갔어?" asked again as "민지는 몇 월에 캠핑 갔어?"; the same kind and
    evidence, none from a question naming a month ("10월 언제")."""
    asked = [
        ("민지는 언제 캠핑 갔어?", "temporal", [("c", 1)]),
        ("하나는 언제 이사했어?", "adversarial", [("c", 2)]),
        ("민지는 10월 언제 캠핑 갔어?", "temporal", [("c", 3)]),
        ("민지는 어디서 캠핑했어?", "single", [("c", 4)]),
    ]
    out = recall_persona_when.forms(3, asked * 30, recall_persona_when.FORMS_KO)
    said = {way: text for text, _, _ in out for way in recall_persona_when.FORMS_KO if way in text}
    assert set(said) == set(recall_persona_when.FORMS_KO) and "언제 " not in "".join(said.values())
    by_text = {text.replace(f" {way} ", " 언제 "): (kind, ev) for text, kind, ev in out for way in said if way in text}
    assert by_text == {
        "민지는 언제 캠핑 갔어?": ("temporal", [("c", 1)]),
        "하나는 언제 이사했어?": ("adversarial", [("c", 2)]),
    }
    assert 60 / 4 < len(out) < 60 / 2  # about a third
