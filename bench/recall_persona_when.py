# ruff: noqa: E501  (tables of sentences)
"""Harder "when" questions for bench.recall_persona, in the manner of public long-term memory benchmarks.

recall_persona's temporal questions repeat the words of the turn telling the event ("When did X go
camping?" for "We just got back from camping..."), so even plain BM25 finds 97% of them at 10 where
the real sets find 80-83% (issue 32). Real "when" questions are harder in two ways, both here:

- ``OTHER_WORDS``: the event asked about in other words than the ones it was told in ("When did X take
  part in a fundraiser?" for "I ran a charity 5K last Saturday"). The lexicon (memory.recall.lexicon)
  relates some of them to the event's words (clay to pottery, a fundraiser to a charity) and not others
  ("giving her time for free" for volunteering, "a gig" for "I saw the Lumineers live"). Like the
  questions of bench.recall_persona_hard: relate no more of their words in the lexicon, or it measures itself.
- ``WHICH_TIME``: a topic told twice ("again": the second camping trip), asked about one of the two by
  the month it happened in ("When did X go camping in June?"); only when the two are in different months.
- ``HOW_LONG`` (``how_long``): about half of the episodes asked "How long has X been doing yoga?" (or "For how
  long", "Since when"; English only: ``Tables.when_long``), the evidence the turn telling its start; some of the
  wrong person.

- ``FORMS`` (``forms``): about a third of the "When did ..." questions (these and recall_persona's) asked again
  as "How long ago did ...", "In which month did ...", "What year did ..." or "On what day did ..."
  (``Tables.when_forms``), of the same kind and evidence; in Korean "언제" said as "몇 월에", "며칠에", "얼마 전에",
  "언제쯤" or "몇 년도에" (FORMS_KO).

The first two are ``temporal``; the evidence is the turn telling the event (the language's ``Tables.when_words`` and
``when_months``: these in English, bench.recall_persona_ko's in Korean). Then about half of them are asked of the
other person too (``adversarial``, as public benchmarks ask about the wrong person in every form: the
evidence is the turn of the one it is true of). They come from their own random streams and are added
after every other question, so the conversation and the earlier questions stay the ones recall_persona
wrote.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime

from bench.recall_tables import Tables

Line = tuple[str | None, int]

# (topic key, question): the evidence is the first line of the topic's ``say``
OTHER_WORDS = [
    ("pottery", "When did {S} start working with clay?"),
    ("painting", "When did {S} complete an artwork?"),
    ("camping", "When did {S} spend nights in a tent with the family?"),
    ("hiking", "When did {S} go on a long mountain walk?"),
    ("running", "When did {S} take part in a fundraiser?"),
    ("yoga", "When did {S} take up stretching classes?"),
    ("guitar", "When did {S} get a stringed instrument?"),
    ("dog", "When did {S}'s family welcome a new pet?"),
    ("cat", "When did {S} bring home a rescue animal?"),
    ("kids_museum", "When did {S} have an educational day out with the children?"),
    ("job", "When did {S} land a new position?"),
    ("support_group", "When did {S} attend a meeting for people in the same situation?"),
    ("shelter", "When did {S} begin giving {p} time for free?"),
    ("trip", "When did {S} return from abroad?"),
    ("injury", "When did {S} hurt {p} foot?"),
    ("move", "When did {S} relocate?"),
    ("concert", "When did {S} go to a gig?"),
]  # fmt: skip

# a topic told twice, asked about by the month of one of its two episodes ({month}: its name, {m}: its number)
WHICH_TIME = {
    "pottery": "When did {S} make something from clay in {month}?",
    "painting": "When did {S} finish a painting in {month}?",
    "camping": "When did {S} go camping in {month}?",
    "job": "When did {S} have good news about work in {month}?",
    "trip": "When did {S} talk about a trip in {month}?",
}

# how long someone has had or done something (``how_long``): the evidence is the turn telling its start
HOW_LONG = [
    ("pottery", "How long has {S} been taking pottery classes?"),
    ("painting", "How long has {S} been painting again?"),
    ("swimming", "How long has {S} been swimming laps in the morning?"),
    ("yoga", "How long has {S} been doing yoga?"),
    ("guitar", "How long has {S} had {p} guitar?"),
    ("violin", "For how long has {S} been practising the violin again?"),
    ("dog", "How long has {S} had the puppy?"),
    ("cat", "How long has {S}'s family had the kitten?"),
    ("job", "How long has {S} been in {p} new job?"),
    ("study", "How long has {S} been back at school?"),
    ("shelter", "How long has {S} been volunteering?"),
    ("move", "Since when has {S} lived in {p} new place?"),
    ("car", "How long has {S} had a car?"),
    ("support_group", "How long has {S} been going to the support group?"),
    ("gardening", "How long has {S} been growing tomatoes?"),
]

# other ways to ask when (``forms``), each followed by the rest of a "When did " question
FORMS = ("How long ago did ", "In which month did ", "What year did ", "On what day did ")
FORMS_KO = ("몇 월에", "며칠에", "얼마 전에", "언제쯤", "몇 년도에")  # ... and in Korean, each said for "언제"
_MONTHS = tuple(f" in {datetime(2000, m, 1):%B}?" for m in range(1, 13))

# (topic key, subject, the first episode's line 0, its day, the second episode's line 0 (None: not told), its day)
Told = tuple[str, str, Line | None, datetime, Line | None, datetime]


def questions(
    seed: int,
    told: list[Told],
    called: Callable[[str], str],
    pronoun: Callable[[str], str],
    friend: Callable[[str], str] | None = None,
    tables: Tables | None = None,
) -> list[tuple[str, str, list[Line]]]:
    """(text, "temporal", evidence) of the harder "when" questions, about half of the episodes; with ``friend`` (who
    the other person is), then, for about half of them, the same question asked of the friend ("adversarial", its
    evidence the turn of the one it is true of). ``tables``: the language's questions (``when_words``,
    ``when_months``; OTHER_WORDS and WHICH_TIME by default, bench.recall_persona_ko has the Korean ones)."""
    rnd = random.Random(seed * 3571 + 23)
    other = dict(tables.when_words if tables else OTHER_WORDS)
    which_time = tables.when_months if tables else WHICH_TIME
    asked: list[tuple[str, str, dict[str, str], str, Line]] = []  # (topic, question, values but S, subject, evidence)
    for key, subject, first, day, again, again_day in told:
        if key in other and first is not None and rnd.random() < 0.5:
            asked.append((key, other[key], {}, subject, first))
        if key in which_time and first is not None and again is not None:
            if day.month == again_day.month:
                continue  # "in June" would not tell them apart (a month names that month of any year)
            line, when = (first, day) if rnd.random() < 0.5 else (again, again_day)
            asked.append((key, which_time[key], {"month": f"{when:%B}", "m": str(when.month)}, subject, line))
    out = [(q.format(S=called(s), p=pronoun(s), **v), "temporal", [line]) for _, q, v, s, line in asked]
    if friend is not None:  # last, from a stream of its own: the questions above stay the same
        wrong = random.Random(seed * 2741 + 5)
        for i, other in of_the_friend(wrong, told, [(key, s) for key, _, _, s, _ in asked], friend):
            _, q, v, _, line = asked[i]
            out.append((q.format(S=called(other), p=pronoun(other), **v), "adversarial", [line]))
    return out


def how_long(
    seed: int,
    told: list[Told],
    short: Callable[[str], str],
    pronoun: Callable[[str], str],
    friend: Callable[[str], str],
    tables: Tables,
) -> list[tuple[str, str, list[Line]]]:
    """(text, "temporal", evidence) of "How long has Deb been doing yoga?" for about half of the episodes of the topics
    of ``tables.when_long`` (the evidence the turn telling its start), then, for about half of them, the same question
    asked of the friend (``adversarial``) unless they lived it too. A person is named in full or by the ``short`` name,
    half of the time each. Streams of its own: the other questions stay the same."""
    named = random.Random(seed * 7937 + 9)

    def called(person: str) -> str:
        return person if named.random() < 0.5 else short(person)

    rnd, wrong = random.Random(seed * 7919 + 3), random.Random(seed * 7933 + 1)
    return of_episodes(rnd, wrong, told, tables.when_long, "temporal", called, pronoun, friend)


def of_episodes(
    rnd: random.Random,
    wrong: random.Random,
    told: list[Told],
    table: list[tuple[str, str]],
    kind: str,
    called: Callable[[str], str],
    pronoun: Callable[[str], str],
    friend: Callable[[str], str] | None,
) -> list[tuple[str, str, list[Line]]]:
    """(text, ``kind``, [the topic's first line]) for about half of the episodes ``told`` whose topic ``table`` asks
    about (drawn from ``rnd``); with ``friend``, then, for about half of them (drawn from ``wrong``), the same question
    asked of the friend ("adversarial", its evidence the turn of the one it is true of) unless they lived it too."""
    asked = dict(table)
    chosen = [
        (key, s, first) for key, s, first, *_ in told if key in asked and first is not None and rnd.random() < 0.5
    ]
    out = [(asked[key].format(S=called(s), p=pronoun(s)), kind, [first]) for key, s, first in chosen]
    if friend is not None:  # last, from a stream of its own: the questions above stay the same
        for i, other in of_the_friend(wrong, told, [(key, s) for key, s, _ in chosen], friend):
            key, _, first = chosen[i]
            out.append((asked[key].format(S=called(other), p=pronoun(other)), "adversarial", [first]))
    return out


def of_the_friend(
    rnd: random.Random, told: list[Told], asked: list[tuple[str, str]], friend: Callable[[str], str]
) -> list[tuple[int, str]]:
    """Which of ``asked`` ((topic key, subject) of each question) to ask of the friend too, and the friend: about half,
    drawn from ``rnd``, but not one the friend lived too (``told``): a public benchmark asks about the wrong person."""
    lived = {(key, subject) for key, subject, first, *_ in told if first is not None}
    return [(i, friend(s)) for i, (key, s) in enumerate(asked) if rnd.random() < 0.5 and (key, friend(s)) not in lived]


def forms(
    seed: int, asked: list[tuple[str, str, list[Line]]], ways: tuple[str, ...] = FORMS
) -> list[tuple[str, str, list[Line]]]:
    """About a third of the "When did ..." questions in ``asked`` (not those naming a month) asked again in another
    of ``ways`` ("How long ago did Deb go camping?", "In which month did ..."), of the same kind and evidence: real
    sets ask for a time in these forms too. Korean: "언제" said another way ("민지는 몇 월에 캠핑 갔어?", FORMS_KO). An
    own random stream; nothing without ``ways``."""
    rnd = random.Random(seed * 4409 + 7)
    out = []
    for text, kind, evidence in asked:
        korean = " 언제 " in text
        if not ways or kind not in ("temporal", "adversarial") or not (text.startswith("When did ") or korean):
            continue
        if rnd.random() < 1 / 3 and not text.endswith(_MONTHS) and "월 언제" not in text:
            way = rnd.choice(ways)
            said = text.replace(" 언제 ", f" {way} ", 1) if korean else way + text.removeprefix("When did ")
            out.append((said, kind, evidence))
    return out
