# ruff: noqa: E501  (a table of sentences)
"""One fact asked in other words than it was told in, for bench.recall_persona (issue 32, twentieth round).

recall_persona's questions for one fact repeat the words of the turn that tells it ("What car did Deb buy?" for "I
finally bought a car, a used Subaru Outback!"), so the recall finds 99-100% of them at 10 where the undisclosed public
set finds 88.7% of its "one fact, one turn" questions. Real questions for one fact are often worded otherwise: "What
vehicle did Deb get?", "What is Andy's new occupation?" for "I got the job as a nurse at Brightwell!".

``OTHER_WORDS``: (topic key, question) asked about the turn that opens the topic's first episode (its ``say[0]``,
told by the person the question names). About half of the episodes, from a random stream of their own, added after
every other question, so the conversation and the earlier questions stay the ones recall_persona wrote. Like the
questions of bench.recall_persona_hard and recall_persona_when's: relate no more of their words in the lexicon
(memory.recall.lexicon), or it measures itself. English only (``Tables.single_words``).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from bench.recall_persona_when import Line, Told, of_episodes

# (topic key, question): the evidence is the first line of the topic's ``say`` (the subject's)
OTHER_WORDS = [
    ("pottery", "What new craft did {S} take up?"),
    ("painting", "What did {S} create on canvas recently?"),
    ("camping", "Where did {S} spend nights outdoors with {p} children?"),
    ("hiking", "How far did {S} walk on the mountain path?"),
    ("swimming", "How does {S} exercise before the workday?"),
    ("running", "What athletic event did {S} do for a good cause?"),
    ("yoga", "What does {S} do a few times a week to relax?"),
    ("gardening", "What vegetables has {S} harvested?"),
    ("guitar", "What did {S} purchase to learn music?"),
    ("violin", "Which instrument did {S} return to after a decade?"),
    ("dog", "What animal did {S}'s family take in?"),
    ("cat", "What new pet joined {S}'s home?"),
    ("kids_museum", "Where did {S} take {p} children for a day out?"),
    ("sibling", "Which relative is coming to see {S}?"),
    ("job", "What is {S}'s new occupation?"),
    ("study", "What subject is {S} going to take up at university?"),
    ("support_group", "What kind of meetings does {S} go to?"),
    ("shelter", "Where does {S} give {p} time for free?"),
    ("trip", "Which place did {S} just come home from?"),
    ("injury", "What happened to {S}'s foot?"),
    ("move", "Which city does {S} live in now?"),
    ("concert", "Which musicians did {S} watch perform?"),
    ("car", "What vehicle did {S} get?"),
]  # fmt: skip


def questions(
    seed: int,
    told: list[Told],
    called: Callable[[str], str],
    pronoun: Callable[[str], str],
    table: list[tuple[str, str]],
    friend: Callable[[str], str] | None = None,
) -> list[tuple[str, str, list[Line]]]:
    """(text, "single", [the topic's first line]) for about half of the episodes ``told`` whose topic ``table`` asks
    about; nothing for an empty ``table``. With ``friend`` (who the other person is), then, for about half of them,
    the same question asked of the friend ("adversarial", its evidence the turn of the one it is true of), unless the
    friend lived the topic too."""
    rnd, wrong = random.Random(seed * 6151 + 13), random.Random(seed * 2749 + 3)
    return of_episodes(rnd, wrong, told, table, "single", called, pronoun, friend)
