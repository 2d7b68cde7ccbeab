"""Ranking: BM25 candidates from FTS5, re-scored with the conversation around them.

1. The query is read against the chat (memory.recall.query): its terms and their related terms with their weights
   (idf, counted in the chat's range of the index), the dates it names, whose turns it asks for (a speaker's name,
   memory.recall.names), and whether it asks about now or before. The turns worth scoring are chosen from a bounded
   number of postings (memory.recall.candidates). How much is read is an ``Effort`` (memory.recall.tuning):
   ``THOROUGH`` for a search asked for, ``QUICK`` for the automatic recall.
2. Every candidate, and the turns next to the best, get a BM25 score of their own (``own``) from their terms.
3. A turn's final score (``Weights``, memory.recall.tuning) adds what surrounds it (an answer follows its question):
   ``own + neighbour * best own of the turns next to it in its session (past "lol", "omg": told.filler)
        + neighbour2 * best own of the turns two away + session * best own of the other turns of its session``,
   multiplied by ``1 + news`` when the other person's reply asks something (what is news gets asked about) and by
   ``1 - asking`` when it is itself a question (it tells little of what happened); plus ``answer * own`` of the
   question it answers (the turn before, by the other person, with a "?" in it; and that of the message a reply
   quotes, however far back: its own words are scored apart from the quote, memory.recall.text.split_quote, and a
   quote related to the query makes it related) and ``thread * own`` of what its speaker said before that question
   (a story goes on in the answer to the friend's question about it: "I moved!" / "How's the area?" / "Quiet, with
   a park"), at ``crossed`` of both when a message unrelated to the query stands between the question and its
   answer; then multiplied by ``1 + date`` when its day is one the query names, by ``1 + speaker`` when the query
   names who said it, and by ``1 + recency * r`` where ``r`` goes from 0 (oldest candidate) to 1 (newest), so that
   of two equal matches the later (a fact that changed) comes first; by ``1 + tense * r`` when the query asks about
   now ("now", "currently", "요즘"), by ``1 + tense * (1 - r)`` when about before ("before", "used to", "전에"); by
   ``1 + place`` when the query asks where and the turn names a place (memory.recall.answer: "Kyoto").
   A question asking for a guess about someone ("Would Deb enjoy a cabin weekend?": query.asks_for_guess), a list ("What
   hobbies does Deb have?": spread.asks_for_many), when someone did something (``when_lived``) or a fact about them in
   other words (``unsaid_lived``) multiplies by ``1 + disclose`` a turn telling of its speaker ("I", "my"; not a
   question): the answer rests on what they told of their life; and by ``min(1, terms / brief)`` a turn of fewer than
   ``brief`` index terms ("lol"): a few words tell little of anyone's life; and, when it names whose life it asks about
   (not the last two), by ``others`` a turn said by anyone else (the friend's own hobbies). The relevance floor counts
   them (``Weights.disclose_floor``). With recall by meaning the turns closest to the query in meaning are candidates
   too, and a turn's ``own`` gains ``meaning * (the query's full weight) * (its similarity above the floor, scaled to
   0..1)``, the similarity taken around the chat's mean vector: a turn that says it in other words scores like one
   holding the query's words; ``meaning_lived`` instead of ``meaning`` for a list, a guess, two people, when someone did
   something or a fact in other words.
4. A turn with the same words as a better one by the same person (small talk repeats itself; case and punctuation
   aside), or saying it again with more around it (``repeat_within`` words or more of it, an aside added: "I keep
   saying I'll start exercising more. Side note, ..."), keeps ``duplicate`` of its score for each (the echoes'
   bonus of step 5 included), so the places go to different turns.
5. A list ("What hobbies does Deb have?"): after the ``keep`` best, turns of other sessions echoing them (spread.py).

With ``Effort.relevant_only`` (the automatic recall) only ``relevant`` turns are returned (memory.recall.tuning: the
share of the query's term weight a turn itself contains).

The relevance floor (memory.recall.tuning): only turns related to the query come back, and a question finds nothing
unless one is clearly about it or scores high; a question asking for a fact (memory.recall.query.asks_for_fact)
also needs a turn whose own score reaches ``Weights.fact`` of the whole question (``_states_fact``; a Korean one
``fact_ko`` of that). A guess about someone the question names returns its related turns even when none is clearly
about it (``Weights.guess_related``): a guess is never said outright.

Every statistic is the chat's own (its turns, their average length, document frequencies in its range of rowids),
so one chat's words never change another's ranking.
"""

from __future__ import annotations

import re
import sqlite3
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date

from memory.recall.answer import Places, asks_where
from memory.recall.bm25 import NONE, Match, bm25
from memory.recall.candidates import candidates
from memory.recall.meaning import Dense
from memory.recall.names import cased
from memory.recall.query import Query, asks_for_guess, parse
from memory.recall.spread import echoes, mark_echoes, spread
from memory.recall.store import ID_BITS, ChatRow
from memory.recall.text import QUOTE
from memory.recall.told import asks as _asks
from memory.recall.told import brief as _brief
from memory.recall.told import by as _by
from memory.recall.told import filler as _filler
from memory.recall.told import of_them as _of_them
from memory.recall.told import question as _question
from memory.recall.told import said as _said
from memory.recall.told import same as _same
from memory.recall.told import unprompted as _unprompted
from memory.recall.told import words as _words
from memory.recall.tuning import (
    DEFAULT_WEIGHTS,
    FACT_KO_WORDS,
    FACT_WORDS,
    FLOOR_CLOSE,
    MEANING_WORDS,
    THOROUGH,
    Effort,
    Weights,
    confident,
    finds,
    is_related,
    relevant,
    states_fact,
)

ID_MASK = (1 << ID_BITS) - 1  # a turn id's number within its chat
_WORDS = re.compile(r"(\w+)")
REPEAT_SCAN = 80  # the best turns compared for a repeat within a longer message (Weights.repeat_within)
_COLUMNS = "id, file, line, offset, ts, day, at, role, name, speaker, session, dead, terms, content"


@dataclass(slots=True)
class Turn:
    id: int
    file: int
    line: int
    offset: int
    ts: float | None
    day: int | None
    at: str | None
    role: str
    name: str | None
    speaker: str | None
    session: int
    dead: int
    terms: str  # its index terms, space-separated (memory.recall.text.doc_terms)
    content: str
    own: float = 0.0
    relevance: float = 0.0  # the share of the weight of the query's words the chat said that it holds
    share: float = 0.0  # the same of every word of the query, those the chat never said too (Query.whole)
    topic: float = 0.0  # ``matched`` without the weight of nicknames (Query.called): what the floor counts
    matched: float = 0.0
    similarity: float = 0.0  # its similarity in meaning to the query (Dense.similarity; 0 without meaning)
    closeness: float = 0.0  # the same on one scale for every chat (Dense.closeness: about 0 for unrelated turns)
    related: bool = False  # above the relevance floor by its own words or its meaning (memory.recall.tuning)
    echo: float = 0.0  # what it echoes of a better turn of another session (memory.recall.spread.echoes)
    replied: Match = NONE  # how the message a reply quotes matches the query (memory.recall.text.split_quote)
    score: float = 0.0
    near: dict[int, Turn] = field(default_factory=dict)  # -2, -1, +1, +2: the live turns around it, fillers skipped
    neighbours_known: bool = False

    @property
    def prev(self) -> Turn | None:
        return self.near.get(-1)

    @property
    def next(self) -> Turn | None:
        return self.near.get(1)


def _rows(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> list[Turn]:
    return [Turn(*r) for r in conn.execute(sql, args)]


def _bm25(turn: Turn, q: Query, avgdl: float, link: bool = True) -> None:
    """``turn``'s own score and matches, and (``link``) those of the message it quotes if it is a reply."""
    own, _, quoted = turn.terms.partition(QUOTE)
    m = bm25(own.split(), q, avgdl)
    turn.replied = bm25(quoted.split(), q, avgdl) if quoted and link else NONE
    turn.own, turn.topic = m.score, m.topic
    turn.matched = max(m.matched, turn.replied.matched)  # a reply is about what it answers: recalled unasked too
    turn.relevance = turn.matched / q.total if q.total else 0.0
    turn.share = turn.matched / q.whole if q.whole else 0.0


def _attach_neighbours(
    conn: sqlite3.Connection, turns: list[Turn], pool: dict[int, Turn], newest: int, width: int = 6, skip: bool = True
) -> list[Turn]:
    """Link each turn to the two live turns before and after it in its file, skipping the messages that only
    keep the chat going ("lol", "omg", "ㅋㅋ": memory.recall.told.filler) unless not ``skip``; return the new ones.

    Turns of one file are mostly indexed with consecutive ids, so one query by id ranges (``width``
    on each side) finds most neighbours; a turn whose window there is incomplete is looked up by
    file and line. Nothing follows the chat's ``newest`` turn.
    """
    todo = [t for t in turns if not t.neighbours_known]
    if not todo:
        return []
    ranges = " OR ".join("id BETWEEN ? AND ?" for _ in todo)
    args = tuple(x for t in todo for x in (t.id - width, t.id + width))
    near_rows: dict[int, list[Turn]] = {}
    for r in _rows(conn, f"SELECT {_COLUMNS} FROM turns WHERE {ranges}", args):
        near_rows.setdefault(r.file, []).append(r)
    by_line: dict[int, list[int]] = {}  # each file's rows in line order, and their lines (a slice per turn, not a scan)
    for file, found_rows in near_rows.items():
        found_rows.sort(key=lambda r: r.line)
        by_line[file] = [r.line for r in found_rows]
    added: list[Turn] = []
    for t in todo:
        t.neighbours_known = True
        in_file, at = near_rows.get(t.file, []), by_line.get(t.file, [])
        rows = in_file[bisect_left(at, t.line - width) : bisect_right(at, t.line + width)]
        lines = {r.line for r in rows}
        wanted = range(max(1, t.line - 2), t.line + (1 if t.id == newest else 3))
        if not all(x in lines for x in wanted if x != t.line):
            rows = _rows(
                conn,
                f"SELECT {_COLUMNS} FROM turns WHERE file=? AND line BETWEEN ? AND ? ORDER BY line",
                (t.file, t.line - 6, t.line + 6),
            )
        before = _two(reversed([r for r in rows if r.line < t.line]), skip)  # nearest first
        after = _two((r for r in rows if r.line > t.line), skip)
        steps = [(-1 - i, r) for i, r in enumerate(before)] + [(1 + i, r) for i, r in enumerate(after)]
        for step, found in steps:
            known = pool.get(found.id)
            if known is None:
                known = pool[found.id] = found
                added.append(found)
            t.near[step] = known
            known.near.setdefault(-step, t)
    return added


def _two(rows: Iterable[Turn], skip: bool) -> list[Turn]:
    """The first two live turns of ``rows``, past the fillers when ``skip`` ("lol" and "omg" part nothing)."""
    out: list[Turn] = []
    for r in rows:
        if not r.dead and not (skip and _filler(r)):
            out.append(r)
            if len(out) == 2:
                break
    return out


def rank(
    conn: sqlite3.Connection,
    chat: ChatRow,
    text: str,
    limit: int,
    *,
    exclude_from: tuple[int, int] | None = None,
    today: date | None = None,
    weights: Weights = DEFAULT_WEIGHTS,
    effort: Effort = THOROUGH,
    meaning: Callable[[str], Callable[[], Dense | None]] | None = None,
) -> list[Turn]:
    """The ``limit`` best turns for ``text``, best first (``exclude_from``: (file id, offset) cut-off).

    With ``effort.relevant_only`` (the automatic recall) only ``relevant`` turns are returned.
    ``meaning``: the turns closest in meaning to a text (memory.recall.meaning), asked with the query in
    lower case, without the names of whose turns it asks for (who said it is the speaker signal's: "Deb" in
    the question made the greetings "Hi Deb!" the closest turns); None to rank by words only. It is
    called as soon as the query is read and returns a function that gives the result: the question is
    embedded (in C, without the interpreter's lock) while the candidates are read here.
    """
    if limit <= 0 or chat.docs <= 0:
        return []
    text = cased(conn, chat, text, weights.cased)  # "what did mel paint": Mel, as the chat writes her
    q, stats = parse(conn, chat, text, today, weights, effort)
    # the model reads the question in lower case ("what hobbies does have?": Weights.lower, fourteenth round)
    asked = _without(text, q.names).lower() if weights.lower else _without(text, q.names)
    closest = meaning(asked) if meaning is not None and weights.meaning > 0 else None
    if closest is None and not q.terms and not q.ranges:
        return []
    ids = candidates(conn, chat, q, stats, effort) if q.terms or q.ranges else []
    dense = closest() if closest is not None else None
    if dense is not None:
        ids = list(dict.fromkeys(ids + dense.top[: effort.meaning]))
    if not ids:
        return []
    pool: dict[int, Turn] = {}
    # a guess about someone, a list of what they did, two people's ("How do Deb and Andy help other people?"), when
    # someone did something or a fact in other words (the other's turns kept, ``whose``): what they told (told.py)
    guess = asks_for_guess(text)
    named_guess = guess and bool(q.speakers)  # a guess about someone the question names
    theirs = weights.when_lived and q.when or weights.unsaid_lived and q.unsaid  # "When did..."; "What vehicle did..."
    theirs = theirs and bool(q.speakers) and not (q.many or q.pair or guess)
    lived, whose = q.many or q.pair or guess or theirs, frozenset[str]() if theirs else q.speakers
    of_them = (weights.disclose > 0 or weights.brief > 0 or weights.others < 1) and not q.hangul and lived
    # any other English question naming someone ("Where did Deb run the 5K?"): a message of a few words tells little
    short = weights.brief_named > 0 and not of_them and bool(q.speakers) and not q.hangul
    _load(conn, pool, ids)
    avgdl = max(chat.terms / max(chat.docs, 1), 1.0)
    scale = weights.meaning * max(q.total, 1.0)
    # a list, a guess or two people: what they told of their life, in other words than the question's (the meaning)
    ranked = (weights.meaning_lived if lived and weights.meaning_lived else weights.meaning) * max(q.total, 1.0)
    said = not q.unknown  # the chat said every word of the query

    def own(t: Turn) -> None:
        _bm25(t, q, avgdl, weights.quoted > 0)
        if dense is not None:  # meaning: the share of the similarity above the floor (Dense.floor)
            t.similarity = dense.similarity(t.id)
            t.own += scale * _above(t, dense)
        # a turn of a word or two ("ok", "test", "echo: x") is close to any short query: its meaning says nothing
        t.closeness = dense.closeness(t.similarity) if dense is not None and _words(t) >= MEANING_WORDS else 0.0
        t.related = is_related(t.topic, about(t.topic), said) or t.closeness >= FLOOR_CLOSE or on_day(t) or quotes(t)

    def quotes(t: Turn) -> bool:  # a reply quoting a related message answers it (as the turn after a question)
        return t.replied is not NONE and is_related(t.replied.topic, about(t.replied.topic), said)

    def about(topic: float) -> float:  # the share of every word of the query a turn's topic holds (Turn.topic)
        return topic / q.whole if q.whole else 0.0

    def on_day(t: Turn) -> bool:  # a date and no word the chat said ("어제", "what happened in May 2023"): that day
        return not q.total and any(r.contains(t.day) for r in q.ranges)

    for t in pool.values():
        own(t)

    def eligible(t: Turn) -> bool:
        if t.dead or (exclude_from and t.file == exclude_from[0] and t.offset >= exclude_from[1]):
            return False
        return relevant(t.matched, t.relevance, t.share) if effort.relevant_only else True

    floor = weights.floor and not effort.relevant_only  # the automatic recall: ``relevant`` is its floor
    places = Places(conn, chat) if weights.place and asks_where(text) else None  # a question asking where

    def scored(bonus: Callable[[Turn], float] | None = None) -> list[Turn]:
        best = sorted((t for t in pool.values() if eligible(t)), key=lambda t: t.own, reverse=True)[: effort.expand]
        for t in _attach_neighbours(conn, best, pool, stats.newest, effort.neighbours, weights.skip_fillers):
            own(t)
        _score(pool, q, weights, of_them, short, whose)
        if places is not None:  # a question asking where: the turns naming a place (memory.recall.answer)
            places.weigh(((t, _said(t)) for t in pool.values()), weights.place)
        if bonus is not None:  # before the repeats are counted (a repeat's bonus is shared out like its score), and
            for t in pool.values():  # before the turns of no score are left out: an echo may come back by it alone
                t.score += bonus(t)
        out = [
            t for t in pool.values() if t.score > 0 and eligible(t) and (not floor or _near_related(t, weights.crossed))
        ]
        out.sort(key=lambda t: (-t.score, -t.id))
        if weights.duplicate < 1:
            _penalise_repeats(out, weights.duplicate, weights.repeat_by_speaker, weights.repeat_within)
        return out

    if not any(eligible(t) for t in pool.values()):
        return []
    out = scored()
    norm = max(q.total, 1.0)
    sure = floor and any(
        confident(t.topic, about(t.topic), t.closeness, said) or on_day(t) for t in pool.values() if eligible(t)
    )
    held = not (weights.guess_related and named_guess)  # a guess about someone named: its related turns
    if floor and held and out and not finds(_unprompted(out, of_them, weights, whose, short) / norm, sure):
        return []  # nothing in the chat is clearly about it: below the relevance floor
    if (
        weights.floor
        and weights.fact
        and q.fact
        and not _states_fact(pool.values(), q, weights, effort, eligible, dense)
    ):
        if not any(on_day(t) for t in pool.values() if eligible(t)):  # "what happened on 2023-05-07": that day
            return []  # a fact the chat would have said in words close to the question's: no turn says enough of it
    if ranked != scale and dense is not None:  # the floor decided as for any question; the ranking weighs the meaning
        for t in pool.values():  # more: only the meaning's part of each turn's own score changes
            t.own += (ranked - scale) * _above(t, dense)
        scale = ranked  # ... and so for the turns next to the best ones that scored() reads
        out = scored()
    many = not weights.gate or q.many or (weights.echo_guess and named_guess)  # the steps for answers spread over days
    kept = out[: weights.keep]  # ... leave the best places of the ranking as they were
    if weights.echo > 0 and out and many and limit > weights.keep:  # the turns like the best ones, in other sessions
        found = echoes(conn, chat.lo, chat.hi, chat.docs, out, weights.echo_top, frozenset(q.exact), weights.echo_plain)
        new = [i for i in found.ids if i not in pool]
        _load(conn, pool, new)
        for i in new:
            if i in pool:
                own(pool[i])
        mark_echoes(found, pool.values(), chat.docs)
        out = scored(lambda t: weights.echo * t.echo)
    if weights.spread < 1:
        spread(out, weights.spread)
    if kept and out[: len(kept)] != kept:
        out = kept + [t for t in out if t not in kept]
    for t in out[:limit]:  # on one scale across questions: about 1 for a turn holding every word of the query
        t.score /= norm
    return out[:limit]


def _states_fact(
    turns: Iterable[Turn], q: Query, w: Weights, effort: Effort, eligible: Callable[[Turn], bool], dense: Dense | None
) -> bool:
    """Whether some turn says enough of a question asking for a fact (memory.recall.tuning.states_fact): its own
    score, or a closeness that alone makes it ``confident`` (a clear paraphrase). In the automatic recall, which
    reads no meaning, the weight of the question's words it holds, at FACT_WORDS (its own score there is by words
    only, which BM25 lowers for a long message: at ``w.fact`` it lost 3-5 points of one fact's evidence)."""
    if effort.relevant_only:
        if q.hangul:  # its own floor leaves ~80% of bench.recall_korean's off-topic questions adding nothing; the
            return True  # rule at FACT_WORDS lost 2 / 4 of 84 facts for 2 / 3 more of them (tuning / held out)
        return states_fact(max((t.matched for t in turns if eligible(t)), default=0.0), q.whole, FACT_WORDS)
    said = [t for t in turns if eligible(t)]
    if any(confident(0.0, 0.0, t.closeness, False) for t in said):
        return True  # a clear paraphrase in other words ("When is my trip to Japan?" for the flight to Tokyo)
    floor = w.fact * (1.0 if not q.hangul else w.fact_ko if dense is not None else FACT_KO_WORDS)
    return states_fact(max((t.own for t in said), default=0.0), q.whole, floor)


def _above(t: Turn, dense: Dense) -> float:
    """How far ``t``'s similarity to the query is above the floor (Dense.floor), scaled to 0..1."""
    return max(0.0, t.similarity - dense.floor) / (1 - dense.floor)


def _near_related(t: Turn, crossed: float) -> bool:
    """Whether ``t`` is above the relevance floor, or completes the exchange of a turn that is: the answer
    to a related question, the question of a related answer, or the story it goes on with in its answer
    to the other person's question about it ("I moved!" / "How's the area?" / "Quiet, with a park")."""
    if t.related:
        return True
    after = t.next
    if after is not None and after.session == t.session and after.related and _asks(t, after):
        return True  # the question of a related answer
    asked, told, _ = _exchange(t, crossed)
    return asked is not None and (asked.related or (told is not None and told.related))


def _exchange(t: Turn, crossed: float) -> tuple[Turn | None, Turn | None, float]:
    """The question ``t`` answers (the other person's turn before it, asking something) and the turn before that
    question (what it asks about), each None unless of ``t``'s session, with the share they count: 1, or
    ``crossed`` when a message unrelated to the query stands between the question and ``t`` ("what made you
    decide?" / "Have a great week!" / "My own counselor changed my life"; a related one there is the answer,
    and ``t`` only goes on with it)."""
    told = t.near.get(-2)
    asked = t.prev or (told.next if told is not None else None)  # the turn between may link only one way
    if asked is not None and _asks(asked, t):
        question, story, share = asked, told, 1.0
    elif crossed and told is not None and _asks(told, t) and (asked is None or not asked.related):
        question, story, share = told, told.prev, crossed
    else:
        return None, None, 0.0
    if question.session != t.session:
        return None, None, 0.0
    return question, story if story is not None and story.session == t.session else None, share


def _without(text: str, names: frozenset[str]) -> str:
    """``text`` without the words in ``names``."""
    if not names:
        return text
    return " ".join("".join(w for w in _WORDS.split(text) if w not in names).split())


def _load(conn: sqlite3.Connection, pool: dict[int, Turn], ids: list[int]) -> None:
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for t in _rows(conn, f"SELECT {_COLUMNS} FROM turns WHERE id IN ({marks})", tuple(chunk)):
            pool[t.id] = t


def _text_key(t: Turn, by_speaker: bool = True) -> tuple[str, str]:
    """What two repeats share: who said them (``by_speaker``: the other person saying the same words tells
    another thing: "I went to the support group yesterday"; else "") and their words, case and punctuation
    aside."""
    words = " ".join(_WORDS.findall(_said(t).casefold()))
    return (t.speaker or "@" + t.role) if by_speaker else "", words


def _penalise_repeats(turns: list[Turn], share: float, by_speaker: bool = True, within: int = 0) -> None:
    """Turns saying what a better one says (small talk repeats itself) keep ``share`` of their score for each
    better one; ``turns`` is sorted best first and stays so. ``within``: among the first ``REPEAT_SCAN``, words
    holding a better one's or held in them, as a run of that many words or more, are a repeat too; 0: no."""
    seen: Counter[tuple[str, str]] = Counter()
    runs: dict[str, list[tuple[tuple[str, str], str]]] = {}  # who -> (key, " words ") of better turns, for ``within``
    for n, t in enumerate(turns):
        key = _text_key(t, by_speaker)
        who, words = key
        times = seen[key]
        padded, run = f" {words} ", not times and 0 < within <= words.count(" ") + 1 and n < REPEAT_SCAN
        if run:  # (said word for word before: already among the runs)
            times = sum(seen[other] for other, held in runs.get(who, ()) if held in padded or padded in held)
        if times:
            t.score *= share**times
        if run:
            runs.setdefault(who, []).append((key, padded))
        seen[key] += 1
    turns.sort(key=lambda t: (-t.score, -t.id))


def _score(pool: dict[int, Turn], q: Query, w: Weights, of_them: bool, short: bool, whose: frozenset[str]) -> None:
    session_best: dict[int, list[float]] = {}
    for t in pool.values():
        session_best.setdefault(t.session, []).append(t.own)
    for v in session_best.values():
        v.sort(reverse=True)
    stamps = sorted((t.ts if t.ts is not None else float(t.id & ID_MASK)) for t in pool.values())
    lo, hi = stamps[0], stamps[-1]
    for t in pool.values():
        near1 = max((n.own for k, n in t.near.items() if abs(k) == 1 and n.session == t.session), default=0.0)
        near2 = max((n.own for k, n in t.near.items() if abs(k) == 2 and n.session == t.session), default=0.0)
        best = session_best[t.session]
        other = best[1] if best and best[0] == t.own and len(best) > 1 else (best[0] if best else 0.0)
        score = t.own + w.neighbour * near1 + w.neighbour2 * near2 + w.session * other
        after = t.next
        if w.news and after is not None and after.session == t.session and _asks(after, t):
            score *= 1 + w.news  # news: the other one asks about it
        if w.asking and _question(t):  # a question says little of what happened
            score *= 1 - w.asking
        score += w.quoted * t.replied.score  # the question a reply answers, quoted in it
        asked, told, share = _exchange(t, w.crossed)
        if asked is not None:
            score += share * w.answer * asked.own  # the answer to a question about it
            if w.thread and told is not None and _same(told, t):
                score += share * w.thread * told.own  # the rest of a story told before the question
        if w.date and q.ranges and any(r.contains(t.day) for r in q.ranges):
            score = (score + 0.01) * (1 + w.date)  # a turn of a named day counts even without a word
        if q.speakers and _by(t, q.speakers):
            score *= 1 + w.speaker
        stamp = t.ts if t.ts is not None else float(t.id & ID_MASK)
        if hi > lo:
            r = (stamp - lo) / (hi - lo)
            score *= 1 + w.recency * r
            if q.tense:
                score *= 1 + w.tense * (r if q.tense > 0 else 1 - r)
        if of_them:  # what its speaker told of themselves: a guess about them rests on it
            score *= _of_them(t, w, whose)
        elif short:  # any other question naming someone: a message of a few words tells little of them
            score *= _brief(t, w.brief_named)
        t.score = score
