"""A query read against one chat: its terms, their related terms and weights, dates, speakers, tense.

The query's terms (memory.recall.text) and dates (memory.recall.dates). A query word that is
the name of a speaker (a turn's ``name``, or the ``"Name: "`` it starts with; in a chat with
no names, the name one role greets the other with: memory.recall.names) says whose turns to
prefer and is not searched as a word. Each term brings its related terms (memory.recall.lexicon:
"pets" -> dog, puppy, cat ...; and theirs, ``Weights.twice``: "fit" -> exercise -> yoga) at a share of
their weight, and a turn counts only the best term of each such group. Each term's document frequency
is counted in the chat's range of the index (estimated for common terms, see ``postings``), which
gives its weight (idf); the postings counted exactly are kept (``Stats``) for choosing the candidates
(memory.recall.candidates). Words such as "now" or "before" say whether the query asks for the
current or an earlier state.
"""

from __future__ import annotations

import math
import re
import sqlite3
from dataclasses import dataclass, field
from datetime import date

from memory.recall.dates import DayRange, asks_when, plain_when, query_dates
from memory.recall.lexicon import korean_related, related
from memory.recall.names import addressee, korean_forms, korean_named, people, speaker_called, without_words
from memory.recall.spread import asks_for_many, plain_list
from memory.recall.store import ChatRow
from memory.recall.text import HANGUL_RUN, Term, query_terms, word_term
from memory.recall.tuning import DEFAULT_WEIGHTS, THOROUGH, Effort, Weights


@dataclass(frozen=True, slots=True)
class Query:
    terms: list[Term]  # what is searched: the query's own terms and related ones (memory.recall.lexicon)
    idf: dict[Term, float]  # the weight of each term (a related term's at its share)
    group: dict[Term, Term]  # each term -> the query term it stands for (a turn scores its best per group)
    ranges: list[DayRange]
    speakers: frozenset[str]
    tense: int  # +1: asks for the current state ("now", "요즘"), -1: for an earlier one ("before", "전에")
    total: float = 0.0  # the weight of a turn holding every query term: the best weight of each group, added
    exact: dict[str, tuple[float, int]] = field(default_factory=dict)  # term text -> (weight, group number)
    prefixes: list[tuple[str, float, int]] = field(default_factory=list)  # (prefix, weight, group number)
    names: frozenset[str] = frozenset()  # the query's words that name whose turns it asks for ("Deb", "Andy")
    unknown: float = 0.0  # the weight of the query's words no turn of the chat holds (nor a related word)
    called: frozenset[int] = frozenset()  # the group numbers of capitalised words inside it that name no
    # speaker: a nickname ("Aud", "Mel") finds the turns calling someone so, but is not what the query is about
    fact: bool = False  # it asks for a fact the chat would have said (``asks_for_fact``), not for a guess
    hangul: bool = False  # written in Korean (its terms are bigrams: memory.recall.tuning.FACT_KO_WORDS)
    many: bool = False  # it asks for a list (memory.recall.spread.asks_for_many: "What hobbies does Deb have?")
    pair: bool = False  # it names two people or more: what they told of themselves (Weights.pair)
    when: bool = False  # it asks when (memory.recall.dates.asks_when: "How long ago did Deb go camping?")

    @property
    def unsaid(self) -> bool:
        """An English question for a fact holding a word the chat never said ("What vehicle did Deb get?" where the
        chat says "I finally bought a car"): told in other words, read as one about what its person told
        (memory.recall.rank, ``Weights.unsaid_lived``)."""
        return self.fact and self.unknown > 0 and not self.hangul

    @property
    def whole(self) -> float:
        """The weight of every word of the query, those the chat never said included: what a turn's
        ``relevance`` is a share of (a turn holding "place" is not all of "the wifi password at her place")."""
        return self.total + self.unknown

    @classmethod
    def make(
        cls, idf: dict[Term, float], group: dict[Term, Term], ranges: list[DayRange], speakers: frozenset[str],
        tense: int, names: frozenset[str] = frozenset(), unknown: float = 0.0, called: frozenset[str] = frozenset(),
        fact: bool = False, hangul: bool = False, many: bool = False, pair: bool = False, when: bool = False,
    ) -> Query:  # fmt: skip
        numbers = {g: i for i, g in enumerate(dict.fromkeys(group.values()))}
        best: dict[Term, float] = {}
        for t, w in idf.items():
            best[group[t]] = max(best.get(group[t], 0.0), w)
        exact = {t.text: (w, numbers[group[t]]) for t, w in idf.items() if not t.prefix}
        prefixes = [(t.text, w, numbers[group[t]]) for t, w in idf.items() if t.prefix]
        total = sum(best.values())
        nicknames = frozenset(numbers[group[t]] for t in idf if t.text in called and group[t] == t)
        return cls(
            list(idf), idf, group, ranges, speakers, tense, total, exact, prefixes, names, unknown, nicknames, fact,
            hangul, many, pair, when,
        )  # fmt: skip


_NOW = re.compile(
    r"\b(?:now|current|currently|nowadays|these days|latest|newest|still|anymore)\b|지금|요즘|현재|최근|요새"
)
_BEFORE = re.compile(
    r"\b(?:before|previous|previously|used to|originally|formerly|at first|earlier|old)\b|전에|예전|원래|처음|이전"
)

# a question for a particular fact: a question word first ("What tattoo did Deb get?", "Where did she see a
# zebra?", "How much did he pay?"), unless it asks for a guess ("What would Deb likely study?")
_FACT = re.compile(r"^\W*(?:what|which|where|who|whom|whose|when|how)\b", re.IGNORECASE)
_GUESS = re.compile(r"\b(?:would|could|might|likely|probably|should|guess)\b", re.IGNORECASE)
# in Korean the question word may stand anywhere ("회의실 예약 어디로 했어?", "내 차 번호판이 뭐야?"); a guess
# ends in -까 or says 아마 / 것 같 / -겠 ("무슨 책을 좋아할까?"); a yes/no question has no question word
_FACT_KO = re.compile(r"뭐|뭘|무엇|무슨|언제|어디|누구|누가|몇|얼마|어느")
_GUESS_KO = re.compile(r"아마|것\s*같|겠|까\s*[?？.!~]*\s*$")
# what someone does or did ("뭐 했어?", "주말에 뭘 해?", "뭐 하면서 놀아?"): told in other words than the question's, as
# a list is (Korean has no plural to say so): not a fact. Seventeenth round (bench/RESULTS.md), `ko` @10 several
# sessions, held out 62.1 -> 65.5; English ("What has Deb done out in the wild?") measured the same either way
_DOING_KO = re.compile(r"(?:뭐|뭘)\s*(?:했|해|하)")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def asks_for_fact(text: str, many: bool | None = None) -> bool:
    """Whether ``text`` asks for a fact the chat would have said in words close to the question's: an English
    question starting with a question word ("What tattoo did Deb get?", "How much did Gi pay the plumber?"),
    not one asking for a guess (would, could, might, likely, probably: "What would Deb likely study?"), nor a
    yes/no question ("Is Mel a bookworm?", answered from what she said about her books), nor one asking for
    a list (memory.recall.spread.asks_for_many: "What hobbies does Deb have?", gathered from many days, told
    in other words). In Korean, a question word anywhere ("내 차 번호판이 뭐야?"), not a guess ("무슨 책을
    좋아할까?", 아마, 것 같, -겠), nor what someone does or did ("도시를 벗어나서 뭘 했어?"). Other languages: no.
    ``many``: ``asks_for_many(text)`` when known already."""
    if asks_for_many(text) if many is None else many:
        return False
    if _HANGUL.search(text):
        return bool(_FACT_KO.search(text)) and not _GUESS_KO.search(text) and not _DOING_KO.search(text)
    return bool(_FACT.search(text)) and not _GUESS.search(text)


# a question asking for a guess from what someone told of their life: would / might / likely / probably anywhere
# ("What would Deb likely study?"), or a yes/no question ("Is Mel a bookworm?", "Could Cal strum along at a
# bonfire?"); "could" inside a question for a fact ("What could Deb see from the top?") is not one
_INFER = re.compile(r"\b(?:would|might|likely|probably)\b", re.IGNORECASE)
_YES_NO = re.compile(r"^\W*(?:is|are|was|were|do|does|did|can|could|would|will|has|have|had)\b", re.IGNORECASE)


def asks_for_guess(text: str) -> bool:
    """Whether an English question asks for a guess from what someone told of themselves, not in the question's
    words: "What would Deb likely study?", "Would Mel enjoy a cabin weekend?" (would, might, likely, probably),
    or a yes/no question ("Is Mel a bookworm?", "Does Cal have a green thumb?"). Korean: -까 at the end, 아마, 것 같
    or -겠 ("지호는 도자기 전시회를 좋아할까?"): it weighs the meaning and brings its related turns as an English guess
    does, without the step that reads who tells of themselves (English words: memory.recall.told.discloses)."""
    if _HANGUL.search(text):
        return bool(_GUESS_KO.search(text))
    return bool(_INFER.search(text) or _YES_NO.search(text))


def postings(conn: sqlite3.Connection, chat: ChatRow, term: Term, span: tuple[int, int], budget: int) -> Postings:
    """How many turns hold ``term``, and which: exact up to ``budget``, else estimated from how
    densely it occurs among the chat's oldest turns (counting every posting of a common term would
    cost more than the whole search). Counted inside SQLite, in rowid order from the start of the
    chat's range (FTS5 seeks there; going backwards from its end costs more), without bringing
    more than ``budget`` ids into Python."""
    sql = (
        "SELECT count(*), max(rowid), group_concat(rowid) FROM (SELECT rowid FROM fts "
        "WHERE fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rowid LIMIT ?)"
    )
    n, last, ids = conn.execute(sql, (term.fts(), chat.lo, chat.hi, budget + 1)).fetchone()
    if n <= budget:
        return Postings(n, list(map(int, ids.split(","))) if n else [])
    lo, hi = span
    return Postings(min(chat.docs, int(n * (hi - lo + 1) / max(last - lo + 1, 1))), None)


_NAME_WORD = re.compile(r"(?<=\S )([A-Z][a-z]+)\b")  # a capitalised word, not the first one
_CAPITALISED = re.compile(r"\b([A-Z][a-z]+)\b")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Postings:
    df: int  # how many turns of the chat hold the term (estimated for a common term)
    ids: list[int] | None  # which (None for a common term)


@dataclass(slots=True)
class Stats:
    """What the index says about a query's terms in one chat."""

    df: dict[Term, int]  # document frequency (estimated over the budget)
    ids: dict[Term, list[int]]  # the turns holding each term, for the terms counted exactly
    newest: int = 0  # the chat's newest turn id


def parse(
    conn: sqlite3.Connection,
    chat: ChatRow,
    text: str,
    today: date | None,
    weights: Weights = DEFAULT_WEIGHTS,
    effort: Effort = THOROUGH,
) -> tuple[Query, Stats]:
    many = asks_for_many(text)
    # "What year did...", "Name the cities...": "year" and "name" are no words to find
    ranges, rest = query_dates(plain_when(plain_list(text, many)), today)
    names = {r[0] for r in conn.execute("SELECT name FROM speakers WHERE chat=?", (chat.id,))}
    person = people(names)  # a name with the person's other names ("andrew" and "andr_s", renamed)
    speaker_terms = {word_term(part): person[n] for n in names for part in n.split() if len(part) > 1}
    inner = set(_NAME_WORD.findall(text))
    two = len(set(person.values())) == 2  # a chat of two people
    for word in _CAPITALISED.findall(text):  # a short name: "Mel" for Melanie, "Jon" for Jonathan, "Gi" for Gina
        term = word_term(word)
        short = word.casefold()
        if term and term not in speaker_terms and (len(short) >= 3 or (len(short) == 2 and word in inner)):
            whose = {person[n] for n in names for part in n.split() if part.startswith(short) and part != short}
            if len(whose) == 1:  # one person, under one name or more
                speaker_terms[term] = whose.pop()
            elif not whose and two and weights.speaker:
                called = speaker_called(conn, chat, word, term, person)  # "Andy" for Andrew: how the other greets him
                if called is not None:
                    speaker_terms[term] = called
    # "하나는 뭐 샀어?": whose turns (최하나's), not the pieces 최하 / 하나 to search (memory.recall.names)
    forms = {form: person[n] for n in names for form in korean_forms(n)}
    named_ko = korean_named(rest, forms) if forms and _HANGUL.search(rest) else {}
    asked = without_words(rest, named_ko) if named_ko else rest
    own = query_terms(asked) or (query_terms(rest) if named_ko else [])  # a question of names only: as it was
    speakers = {n for t in own if t.text in speaker_terms for n in speaker_terms[t.text]}
    speakers |= {n for who in named_ko.values() for n in who}
    words = rest.split()
    speakers |= {m for n in names if n in words or any(w.startswith(n) for w in words) for m in person[n]}  # 민수가
    if weights.speaker:
        for word in _NAME_WORD.findall(text):
            term = word_term(word)
            if term and term not in speaker_terms and Term(term) in own:
                role = addressee(conn, chat, word, term)
                if role is not None:
                    speaker_terms[term] = frozenset({"@" + role})
                    speakers.add("@" + role)
        own = [t for t in own if t.text not in speaker_terms] or own  # who said it, not a word to find
    group: dict[Term, Term] = {t: t for t in own}
    share: dict[Term, float] = {t: 1.0 for t in own}
    if weights.expand:
        for t in own:
            if t.prefix:
                continue
            near = related(t.text, word_term, twice=weights.twice)
            for r, w in sorted(near.items(), key=lambda x: -x[1])[: effort.max_related]:
                rt = Term(r)
                if rt not in group:
                    group[rt] = t
                    share[rt] = w * weights.expand
    endings: dict[Term, list[Term]] = {}  # a Korean word with related words: its first piece -> the pieces after it
    if weights.expand and _HANGUL.search(rest):  # a Korean word's related words (memory.recall.lexicon): by pieces
        for word in HANGUL_RUN.findall(asked):
            pieces = [t for t in query_terms(word) if not t.prefix]
            if not pieces or pieces[0] not in group:
                continue
            near = korean_related(tuple(t.text for t in pieces))
            for r, w in sorted(near.items(), key=lambda x: -x[1])[: effort.max_related]:
                rt = Term(r)
                if rt not in group:
                    group[rt] = pieces[0]
                    share[rt] = w * weights.expand
            if near:
                endings.setdefault(pieces[0], []).extend(pieces[1:])
    terms = list(group)
    n = max(chat.docs, 1)
    hi = conn.execute("SELECT max(id) FROM turns WHERE id BETWEEN ? AND ?", (chat.lo, chat.hi)).fetchone()[0]
    stats = Stats({}, {}, hi or 0)
    if terms:
        lo = conn.execute("SELECT min(id) FROM turns WHERE id BETWEEN ? AND ?", (chat.lo, chat.hi)).fetchone()[0]
        for t in terms:
            budget = effort.postings if group[t] == t else effort.related_postings
            found = postings(conn, chat, t, (lo or 0, hi or 0), budget)
            stats.df[t] = min(found.df, n)
            if found.ids is not None:
                stats.ids[t] = found.ids
    terms = [t for t in terms if stats.df[t] > 0]
    idf = {t: share[t] * math.log(1 + (n - stats.df[t] + 0.5) / (stats.df[t] + 0.5)) for t in terms}
    said = {group[t] for t in terms}
    # a related word the chat holds stands for the whole Korean word: its ending's pieces were not "never said"
    # ("다쳤어" -> 쳤어, when the chat says 접질렸어); not for the automatic recall, which spends tokens unasked and
    # brought turns for more of the questions never answered (seventeenth round, bench/RESULTS.md)
    if not effort.relevant_only:
        said.update(p for head, rest_ in endings.items() if any(group[t] == head != t for t in terms) for p in rest_)
    # a word the chat never said weighs as one it said once (in a chat of a few turns, as much as any); a
    # capitalised word inside the query is a name, maybe a nickname the chat writes otherwise: not counted
    called = {word_term(w) for w in inner}
    unknown = sum(
        math.log(1 + (n - 0.5) / 1.5)
        for t in dict.fromkeys(own)
        if t not in said and not t.prefix and t.text not in called
    )
    lowered = text.casefold()
    tense = 1 if _NOW.search(lowered) else -1 if _BEFORE.search(lowered) else 0
    names = frozenset(w for w in _WORD.findall(text) if word_term(w) in speaker_terms or w in named_ko)
    pair = weights.pair and len({person[n] for n in speakers if n in person}) > 1
    query = Query.make(
        idf,
        {t: group[t] for t in terms},
        ranges,
        frozenset(speakers),
        tense,
        names,
        unknown,
        frozenset(called),
        asks_for_fact(text, many),
        bool(_HANGUL.search(text)),
        many,
        pair,
        asks_when(text),
    )
    return query, stats
