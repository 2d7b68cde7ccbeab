# ruff: noqa: E501  (tables of sentences)
"""What makes bench.recall_persona's questions spread over many days as hard as real ones (issue 32).

Its ``multi`` questions had their evidence in the turn that tells each episode ("I finally signed up for
a pottery class!"), two to four of them, each close to the question through the lexicon or its meaning;
its ``open`` questions one such turn. In long real conversations a life comes up again in passing,
sessions later and in other words ("sorry, my hands were covered in clay all afternoon", "my hair still
smells like chlorine"), a question may ask about both people ("Which places have Mel and Caro been
to?"), and an inference rests on several such turns ("Would Mel enjoy a cabin in the woods?" for the
camping trip, the hike and the garden). So, unless ``hard=False``:

- ``mentions``: each episode told is mentioned again in passing, in one or two later sessions, by the
  person it is about, in words unlike the episode's; the ``multi`` questions about a person's episodes
  (``What hobbies does X have?``, bench.recall_persona_hard's threads) count those turns as evidence too;
- ``both``: ``multi`` questions about the two people at once, their episodes and mentions as evidence;
- ``infer``: ``open`` questions whose evidence is every episode and mention of a person's interest.

Evidence lists are capped at ``CAP`` turns, ``FIRST`` of them episodes when there are mentions. Its own random stream: the conversation's other turns and
questions stay those bench.recall_persona wrote, the mentions are added between them.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Hashable

CAP = 5  # evidence turns of a question at most (as in public benchmarks: two to five)
FIRST = 3  # of which episodes told, when there are mentions too

# said in passing in a later session, by the person whose episode it is: (topic key) -> texts
MENTIONS = {
    "pottery": ["Sorry for the late reply, my hands were covered in clay all afternoon.", "Can't stay long, I have to pick up my {thing} from the kiln before the studio closes."],
    "painting": ["I lost track of time at my easel again, the evening light was perfect.", "Got acrylic all over my favourite jeans, oops."],
    "camping": ["Still finding sand from {park} in the tent bag, haha.", "The kids begged to sleep outside under the stars again this weekend."],
    "hiking": ["Broke in my new boots on the {trail} path this morning.", "My calves are killing me after that climb yesterday."],
    "swimming": ["My hair still smells like chlorine from this morning's laps.", "Forty lengths before breakfast today, a new record!"],
    "running": ["Did a quick jog around the block before dinner, my legs are jelly.", "Signed up for another race, training starts Monday."],
    "yoga": ["Just rolled up my mat after class, feeling so zen.", "The instructor made us hold a pose for five minutes today, I was shaking."],
    "gardening": ["The {veg} are taking over the whole backyard!", "Spent the morning pulling weeds, my knees are filthy."],
    "guitar": ["Practised '{song}' until my fingertips went numb.", "Changed the strings myself for the first time!"],
    "violin": ["Orchestra rehearsal ran late again tonight.", "My bow needs new hair, it's been squeaking all week."],
    "dog": ["{Pet} stole a sock and ran around the yard with it.", "Just got back from the vet with {Pet}, all her shots are done."],
    "cat": ["{Cat} knocked my coffee off the desk this morning.", "{Cat} has claimed the sunny spot on the windowsill."],
    "kids_museum": ["My youngest is still drawing {exhibit} on everything, haha.", "The kids asked to go back to the {museum} museum for their birthday."],
    "sibling": ["Just got off a long call with {rname}, we talk every week now.", "{rname} sent me a postcard from {home}."],
    "job": ["Long day at {company}, back-to-back meetings.", "My shift ran over again, I'm exhausted."],
    "study": ["Wrote my first essay for class, it was about {field}.", "Exams are coming up, I'm buried in textbooks."],
    "support_group": ["The group was small tonight but it still helped to talk.", "Someone at group shared a story that stuck with me all week."],
    "shelter": ["Spent my Saturday morning at the {shelter} again, {task}.", "We had so many donations this week, I was there till noon."],
    "trip": ["Still scrolling through my photos of {place}.", "I keep craving {food} since we got back."],
    "book": ["Stayed up way too late finishing a chapter again.", "Finished '{title}', now I need something new to read."],
    "injury": ["Finally off the crutches, walking feels weird.", "Physical therapy for my ankle was brutal today."],
    "move": ["Still unpacking boxes in {city}, I can't find any of my mugs.", "Our new neighbours in {city} brought us cookies."],
    "concert": ["I've had {band} on repeat all week.", "Found my ticket stub from the show in my jacket pocket."],
    "car": ["Drove to work for the first time instead of taking the bus!", "Took the {car} in for its first oil change."],
}  # fmt: skip

# both people at once: (question, topic keys); evidence: both people's episodes of those topics and their mentions
BOTH = [
    ("What pets do {A} and {B} have?", ("dog", "cat")),
    ("Which places have {A} and {B} been to?", ("trip", "move", "camping")),
    ("What do {A} and {B} do to stay active?", ("hiking", "swimming", "running", "yoga")),
    ("What creative hobbies do {A} and {B} have?", ("pottery", "painting", "guitar", "violin", "gardening")),
    ("How do {A} and {B} help other people?", ("shelter", "support_group", "running")),
]
# an inference from several episodes of one person: (question, topic keys); asked when two or more were told
INFER = [
    ("What field would {S} likely pursue in {p} education?", ("support_group", "shelter", "study")),
    ("Would {S} enjoy a weekend in a cabin in the woods?", ("camping", "hiking", "gardening")),
    ("Would {S} make a good pet sitter?", ("dog", "cat", "shelter")),
    ("Would {S} enjoy an arts and crafts fair?", ("pottery", "painting", "gardening")),
    ("Would {S} sign up for a triathlon?", ("swimming", "running", "hiking")),
    ("What kind of gift would {S} appreciate from a music shop?", ("guitar", "violin", "concert")),
]

Line = tuple[str | None, int]
Told = tuple[str, str, dict[str, str], int]  # topic key, subject, slot values, session it was told in


class Spread:
    """The mentions of one conversation: which go into which session (``at``), and the questions
    that need them (``questions``, ``widen``)."""

    def __init__(self, seed: int, told: list[Told], sessions: int) -> None:
        self.rnd = random.Random(seed * 6151 + 29)
        self.by_session: dict[int, list[tuple[str, str, Hashable]]] = {}
        self.keys: dict[tuple[str, str], list[Hashable]] = {}  # (topic key, subject) -> its mentions' keys
        for key, subject, values, s in told:
            texts = MENTIONS.get(key)
            later = list(range(s + 1, sessions))
            if not texts or not later:
                continue
            n = min(len(later), self.rnd.choice((1, 2, 2)))
            for i, si in enumerate(sorted(self.rnd.sample(later, n))):
                mark = ("mention", key, subject, i)
                self.by_session.setdefault(si, []).append((subject, texts[i % len(texts)].format(**values), mark))
                self.keys.setdefault((key, subject), []).append(mark)

    def at(self, session: int, turns: list[tuple[str, str, Hashable | None]]) -> None:
        """Put the mentions of ``session`` among its ``turns`` (after the greetings, before the goodbye)."""
        for subject, text, mark in self.by_session.get(session, []):
            turns.insert(self.rnd.randint(2, max(2, len(turns) - 1)), (subject, text, mark))

    def lines(self, key: str, subject: str, evidence: dict[Hashable, Line]) -> list[Line]:
        return [evidence[m] for m in self.keys.get((key, subject), []) if m in evidence]

    def widen(
        self, evs: list[Line], episodes: dict[Line, tuple[str, str]], evidence: dict[Hashable, Line]
    ) -> list[Line]:
        """``evs`` (lines telling episodes) with the mentions of those episodes, at most CAP."""
        more = _interleave([self.lines(*episodes[e], evidence) for e in evs if e in episodes])
        return list(dict.fromkeys((evs[:FIRST] if more else evs) + more))[:CAP]

    def questions(
        self, people: tuple[str, str], episodes: dict[Line, tuple[str, str]], evidence: dict[Hashable, Line],
        called: Callable[[str], str], pronoun: Callable[[str], str],
    ) -> list[tuple[str, str, list[Line]]]:  # fmt: skip
        """(text, kind, evidence) of the ``both`` (multi) and ``infer`` (open) questions."""
        told = {v: k for k, v in episodes.items()}  # (topic key, subject) -> its episode's line

        def about(subject: str, keys: tuple[str, ...]) -> tuple[list[Line], list[Line]]:
            first = [told[(k, subject)] for k in keys if (k, subject) in told]
            return first, _interleave([self.lines(k, subject, evidence) for k in keys if (k, subject) in told])

        out: list[tuple[str, str, list[Line]]] = []
        a, b = people
        for text, keys in BOTH:
            (ea, ma), (eb, mb) = about(a, keys), about(b, keys)
            if ea and eb:
                evs = list(dict.fromkeys(ea[:2] + eb[:2] + _interleave([ma, mb])))[:CAP]
                out.append((text.format(A=called(a), B=called(b)), "multi", evs))
        for text, keys in INFER:
            for subject in people:
                first, more = about(subject, keys)
                if len(first) >= 2 and self.rnd.random() < 0.7:
                    evs = list(dict.fromkeys(first[:FIRST] + more))[:CAP]
                    out.append((text.format(S=called(subject), p=pronoun(subject)), "open", evs))
        return out


def _interleave(lists: list[list[Line]]) -> list[Line]:
    """The first of each list, then the second of each, and so on."""
    return [x for group in itertools.zip_longest(*lists) for x in group if x is not None]
