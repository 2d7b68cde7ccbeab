# ruff: noqa: E501  (tables of sentences)
"""Harder questions for bench.recall_persona: evidence that shares few words with the question.

The questions of recall_persona were written alongside the lexicon (memory.recall.lexicon), so
"What hobbies does X have?" meets "pottery class" through it; a public benchmark's questions do
not. These are asked in words the lexicon does not relate to their evidence:

- ``multi`` over several sessions: a common thread of several episodes of someone's life
  ("What does X do to stay fit?" for the hike, the morning laps and the charity race);
- ``open`` (inference): a guess from one episode ("Would X need a leash?" for the puppy).

They come from their own random stream, so the conversation stays the one recall_persona wrote
and the earlier questions stay the same.
"""

from __future__ import annotations

import random
from collections.abc import Callable

# a thread through several topics (the evidence: the line telling each episode of the subject's)
THREADS = [
    ("What does {S} do to stay fit?", ("hiking", "swimming", "running", "yoga")),
    ("What has {S} done out in the wild?", ("camping", "hiking", "trip")),
    ("What big changes has {S} gone through lately?", ("job", "move", "study", "car")),
    ("What has {S} spent money on?", ("car", "guitar", "trip", "move")),
    ("What does {S} do for {p} wellbeing?", ("yoga", "painting", "support_group", "swimming")),
    ("What has {S} created with {p} own hands?", ("pottery", "painting", "gardening")),
    ("Which outings has {S} shared with loved ones?", ("camping", "kids_museum", "sibling", "move")),
    ("How does {S} give back?", ("shelter", "running", "support_group")),
    ("What animals live with {S}?", ("dog", "cat")),
]

# a guess from one episode: (topic, question, index of the evidence line in the topic's ``say``)
GUESSES = [
    ("pottery", "Would {S} like a gift of handmade glaze samples?", 0),
    ("painting", "Would {S} want a new set of brushes?", 0),
    ("camping", "Is {S} comfortable roughing it in the wilderness?", 0),
    ("hiking", "Is {S} in good physical shape?", 0),
    ("swimming", "Would {S} want goggles as a present?", 0),
    ("running", "Does {S} care about good causes?", 0),
    ("yoga", "Is {S} into mindfulness?", 0),
    ("gardening", "Does {S} have a green thumb?", 0),
    ("guitar", "Could {S} strum along at a bonfire?", 0),
    ("violin", "Did {S} have music lessons as a child?", 0),
    ("dog", "Would {S} need a leash?", 0),
    ("cat", "Does {S} have a furry companion at home?", 0),
    ("kids_museum", "Is {S} a parent?", 0),
    ("sibling", "Does {S} have relatives living far away?", 0),
    ("job", "Is {S} employed?", 0),
    ("study", "Would {S} enjoy a book about the human mind?", 0),
    ("support_group", "Does {S} find comfort in sharing with strangers?", 2),
    ("shelter", "Does {S} give {p} weekends to others for free?", 0),
    ("trip", "Does {S} have a passport?", 0),
    ("book", "Is {S} a bookworm?", 1),
    ("injury", "Can {S} go dancing this month?", 0),
    ("move", "Did {S} recently change address?", 0),
    ("concert", "Does {S} enjoy loud evenings out?", 0),
    ("car", "Does {S} still rely on public transport?", 0),
]

Line = tuple[str | None, int]


def questions(
    seed: int,
    subjects: list[str],
    told: Callable[[str, str, int], Line | None],
    called: Callable[[str], str],
    pronoun: Callable[[str], str],
    threads: list[tuple[str, tuple[str, ...]]],
    guesses: list[tuple[str, str, int]],
) -> list[tuple[str, str, list[Line]]]:
    """(text, kind, evidence) of the harder questions; ``told(topic key, subject, i)``: the line of
    the ``i``-th line of the subject's (first) episode of that topic, None if not told; ``threads`` and
    ``guesses``: the language's (THREADS and GUESSES here, bench.recall_persona_ko's in Korean)."""
    rnd = random.Random(seed * 7877 + 11)
    out: list[tuple[str, str, list[Line]]] = []
    for text, topics in threads:
        for subject in subjects:
            evs = [ev for t in topics if (ev := told(t, subject, 0)) is not None]
            if len(evs) >= 2 and rnd.random() < 0.7:
                out.append((text.format(S=called(subject), p=pronoun(subject)), "multi", evs[:4]))
    for key, text, i in guesses:
        for subject in subjects:
            ev = told(key, subject, i)
            if ev is not None and rnd.random() < 0.35:
                out.append((text.format(S=called(subject), p=pronoun(subject)), "open", [ev]))
    return out
