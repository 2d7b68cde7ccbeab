"""What kind of answer a question asks for, and the turns that hold one: places (issue 32, eighteenth round). Whether
a question asks when is memory.recall.dates.asks_when.

A question asking where ("Where did Deb travel recently?", "Which city did Cal move to?", "Which places have Deb
and Andy been to?": ``asks_where``) is answered by a turn naming a place, and a chat writes a place with a capital
letter after a word leading to it: "We're back from Kyoto!" answers the first question without one of its words.
``Places.named``: a turn whose own words (memory.recall.told.said) hold, after from, in, to, at, of, near or visit
(and maybe "the"), a word written with a capital that is not the name of someone in the chat nor a day or a month,
and that few turns of the chat hold (at most PLACE_MOST: the street of the café the small talk keeps mentioning is
not what the question asks about); or such a word typed in lower case ("we're back from kyoto") when the chat writes
it with a capital inside a sentence at least once (memory.recall.names.capitalised, which reads a question typed in
lower case). A capital after any other word is most often something else: a
band seen ("I saw Coldplay"), a car ("a used Toyota"), a friend greeted. A place written as a common noun counts
too, after from, in, to, at, near or visit and maybe a determiner and one word ("from the rescue center", "at the
animal shelter", "to the beach": PLACE_NOUNS), so that those answers are not put behind the turns naming a
capitalised place. memory.recall.rank multiplies such a turn's score by ``1 + Weights.place``.

Not seen: a place without such a word before it ("Kyoto was amazing", "another trip, Peru in the fall"), one the
chat only ever types in lower case, and Korean places (Hangul has no capitals). Each word is looked up once per
search, in at most PLACE_MOST + 1 turns, and only for a question asking where.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from typing import Protocol

from memory.recall.dates import MONTHS, WEEKDAYS
from memory.recall.names import capitalised
from memory.recall.query import postings
from memory.recall.store import ChatRow
from memory.recall.text import Term, word_term

# where, or which / what city, country, place, town, or places, cities, countries anywhere ("What cities has Mel
# visited?", "What country is her grandma from?")
_WHERE = re.compile(
    r"^\W*where\b|\b(?:which|what)\s+(?:city|cities|country|countries|place|places|town|towns)\b"
    r"|\b(?:places|cities|countries)\b",
    re.IGNORECASE,
)
# the words that lead to a place ("back from Kyoto", "our new place in denver", "at the animal shelter")
_LEADS = r"from|in|to|at|near|visit|visited|visiting"
# a word after one of them, or after "of" ("photos of Kyoto"), maybe with "the" between ("a week in the Alps").
# Eighteenth round (bench/RESULTS.md; beside two lexicon lines since removed), @10 `named` / `real`, any capitalised
# word inside a sentence -> only after such a word: tuning 74.7 / 70.0 -> 74.6 / 70.4, held out 73.3 / 66.3 -> 73.9 /
# 66.4, fresh 73.9 / 68.2 -> 73.6 / 68.5
_AFTER = re.compile(rf"\b(?i:{_LEADS}|of)\s+(?:the\s+)?([A-Za-z][a-z]+)\b")
# places written as common nouns, after a word leading to one and maybe a determiner and one word ("from the rescue
# center"). Eighteenth round (bench/RESULTS.md; beside two lexicon lines since removed), @10 `named` / `real`:
# tuning 74.6 / 70.4 -> 74.6 / 70.6, held out 73.9 / 66.4 -> 73.8 / 66.6, fresh 73.6 / 68.5 -> 73.9 / 68.6 (@1 +0.6
# to +1.1 on every set)
PLACE_NOUNS = (
    "beach sea ocean coast lake river mountain mountains forest woods park trail island city town village country "
    "museum gallery library shelter hospital clinic school college university office studio gym pool cafe restaurant "
    "bar church market mall store shop zoo farm campsite cabin hotel airport station stadium theater theatre center "
    "centre"
).split()
_AT_PLACE = re.compile(
    rf"\b(?i:{_LEADS})\s+(?:(?:the|a|an|my|our|his|her|their)\s+)?(?:[a-z]+\s+)?(?:{'|'.join(PLACE_NOUNS)})s?\b"
)
_NOT_PLACES = frozenset(MONTHS) | frozenset(WEEKDAYS)
# a word more turns of the chat hold is its daily life, not the place asked about. Eighteenth round
# (bench/RESULTS.md), tuning `named` / `real` @10 with no limit 73.8 / 69.0, at 15 73.8 / 69.1, at 5 73.8 / 69.0;
# held out 73.4 / 66.0, 73.5 / 66.1, 73.5 / 66.2
PLACE_MOST = 5


def asks_where(text: str) -> bool:
    """Whether an English question asks for a place: "Where did Deb travel recently?", "Which city did Cal move
    to?", "Which places have Deb and Andy been to?"."""
    return bool(_WHERE.search(text))


class Scored(Protocol):
    score: float


class Places:
    """For one search: which turns name a place (see above), each word looked up in the chat once."""

    def __init__(self, conn: sqlite3.Connection, chat: ChatRow) -> None:
        self._conn = conn
        self._chat = chat
        people = [r[0] for r in conn.execute("SELECT name FROM speakers WHERE chat=?", (chat.id,))]
        self._skip = {w.casefold() for name in people for w in re.findall(r"\w+", name)} | _NOT_PLACES
        self._place_of: dict[str, bool] = {}
        self._named: dict[str, bool] = {}

    def _place(self, word: str) -> bool:
        """Whether ``word``, after a word leading to a place, names one (see above), looked up once a search."""
        if word not in self._place_of:
            term = word_term(word)
            rare = term is not None and word.casefold() not in self._skip and self._rare(term)
            self._place_of[word] = rare and (
                word[0].isupper() or capitalised(self._conn, self._chat, word, term, mostly=False)
            )
        return self._place_of[word]

    def _rare(self, term: str) -> bool:
        return postings(self._conn, self._chat, Term(term), (self._chat.lo, self._chat.hi), PLACE_MOST).ids is not None

    def named(self, text: str) -> bool:
        """Whether ``text`` (a turn's own words) names a place."""
        if text not in self._named:
            self._named[text] = bool(_AT_PLACE.search(text)) or any(map(self._place, _AFTER.findall(text)))
        return self._named[text]

    def weigh(self, turns: Iterable[tuple[Scored, str]], place: float) -> None:
        """Multiply by ``1 + place`` the score of each turn of ``turns`` (a turn, its own words) naming a place."""
        for t, text in turns:
            if self.named(text):
                t.score *= 1 + place
