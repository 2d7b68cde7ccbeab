"""Ranking: BM25 candidates from FTS5, re-scored with the conversation around them.

1. The query's terms (memory.recall.text) and dates (memory.recall.dates). A query word that is
   the name of a speaker (a turn's ``name``, or the ``"Name: "`` it starts with; in a chat with
   no names, the name one role greets the other with: ``_addressee``) says whose turns to prefer
   and is not searched as a word. Each term brings its related terms (memory.recall.lexicon:
   "pets" -> dog, puppy, cat ...) at a share of their weight, and a turn counts only the best
   term of each such group. Each term's document frequency is counted in the chat's range of the
   index (estimated for common terms, see ``_postings``); the postings of the rarest terms (up to
   a budget) bring the best turns by an estimate of BM25 made from them, common terms the newest
   turns where they meet or appear (see ``_candidates``), and a date in the query adds the turns
   of those days. How much is read is an ``Effort``: ``THOROUGH`` for a search asked for,
   ``QUICK`` for the automatic recall before every answer (fewer candidates, and only turns that
   can pass the threshold of ``relevant``; no turn is read when none can be, only postings).
2. Every candidate, and the turns next to the best of them, get a BM25 score of their own
   (``own``), computed here from their terms (kept with each turn), all on one scale.
3. A turn's final score (``Weights``) adds what surrounds it, because a question and its answer
   are spread over an exchange and a topic over a session:
   ``own + neighbour * best own of the turns next to it in its session
        + neighbour2 * best own of the turns two away + session * best own of the other turns
        of its session``,
   plus ``answer * own`` of the question it answers (the turn before, by the other person, ending
   in "?"), then multiplied by ``1 + date`` when its day is one the query names, by
   ``1 + speaker`` when the query names who said it, and by ``1 + recency * r`` where ``r``
   goes from 0 (oldest candidate) to 1 (newest), so that of two equal matches the later (a fact
   that changed) comes first; by ``1 + tense * r`` when the query asks about now ("now",
   "currently", "요즘"), by ``1 + tense * (1 - r)`` when about before ("before", "used to", "전에").
4. A turn with the same text as a better one (small talk repeats itself) keeps ``duplicate`` of
   its score for each, so the places go to different turns.

The weights were chosen on bench.recall_eval (two generators, several transcript layouts,
seeds 1-6, checked on 7-12); they sit on a plateau there (±0.1 changes recall@10 by about 1 point).

``relevance`` is the share of the query's term weight (idf) that a turn itself contains: the
automatic recall keeps only turns that are ``relevant`` (at least MIN_RELEVANCE of it, or MIN_MATCHED).

Every statistic is the chat's own (its turns, their average length, document frequencies in its
range of rowids), so one chat's words never change another's ranking.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from datetime import date

from memory.recall.dates import DayRange, query_dates
from memory.recall.lexicon import related
from memory.recall.store import ID_BITS, ChatRow
from memory.recall.text import Term, query_terms, word_term

K1 = 1.2
B = 0.5
ID_MASK = (1 << ID_BITS) - 1  # a turn id's number within its chat
# the automatic recall keeps a turn holding at least MIN_RELEVANCE of the query's term weight (idf),
# or matched terms weighing MIN_MATCHED together (about two uncommon words, or one rare word of a
# long message); greetings and small talk ("hi", "안녕", "thanks") have no searchable term at all
MIN_RELEVANCE = 0.5
MIN_MATCHED = 4.0


def relevant(matched: float, relevance: float) -> bool:
    """Whether a turn holding ``matched`` of the query's weight (``relevance`` of it) is recalled unasked."""
    return matched > 0 and (relevance >= MIN_RELEVANCE or matched >= MIN_MATCHED)


@dataclass(frozen=True, slots=True)
class Effort:
    """How much of the index one search reads (see ``_candidates``)."""

    postings: int = 1_500  # postings of the rarest query terms ranked over the whole history
    candidates: int = 100  # turns they bring
    few: int = 40  # turns brought by each query on the common terms
    expand: int = 30  # best candidates whose neighbours are fetched and scored
    related_postings: int = 300  # postings of related terms ranked (the rarest first)
    related_candidates: int = 40  # turns they bring
    max_related: int = 64  # related terms per query term (each costs a look-up)
    dates: int = 300  # turns brought by a date the query names
    relevant_only: bool = False  # only turns that can be ``relevant`` (the automatic recall)
    lengths: bool = True  # the estimate of the rare terms' best turns reads their lengths
    neighbours: int = 6  # turns on each side read at once to find the two live ones next to a turn


THOROUGH = Effort()
QUICK = Effort(
    postings=300, candidates=20, few=8, expand=5, related_postings=100, related_candidates=10, max_related=12,
    dates=40, relevant_only=True, lengths=False, neighbours=3,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Weights:
    """How much each signal adds to a turn's own BM25 score (see the module docstring)."""

    neighbour: float = 0.3
    neighbour2: float = 0.3
    session: float = 0.15
    tense: float = 0.5
    date: float = 1.0
    speaker: float = 0.5
    recency: float = 0.05
    answer: float = 0.4  # adds this share of the own score of the question a turn answers
    expand: float = 1.0  # share of a related word's weight (0: no query expansion)
    duplicate: float = 0.5  # a turn with the same text as a better one keeps this share of its score

    @classmethod
    def bm25(cls) -> Weights:
        """Plain BM25 over single turns (the baseline of bench.recall_eval)."""
        return cls(
            answer=0.0,
            neighbour=0.0,
            neighbour2=0.0,
            session=0.0,
            tense=0.0,
            date=0.0,
            speaker=0.0,
            recency=0.0,
            expand=0.0,
            duplicate=1.0,
        )


DEFAULT_WEIGHTS = Weights()
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
    relevance: float = 0.0
    matched: float = 0.0
    score: float = 0.0
    near: dict[int, Turn] = field(default_factory=dict)  # -2, -1, +1, +2: the live turns around it
    neighbours_known: bool = False

    @property
    def prev(self) -> Turn | None:
        return self.near.get(-1)

    @property
    def next(self) -> Turn | None:
        return self.near.get(1)


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

    @classmethod
    def make(
        cls, idf: dict[Term, float], group: dict[Term, Term], ranges: list[DayRange], speakers: frozenset[str],
        tense: int,
    ) -> Query:  # fmt: skip
        numbers = {g: i for i, g in enumerate(dict.fromkeys(group.values()))}
        best: dict[Term, float] = {}
        for t, w in idf.items():
            best[group[t]] = max(best.get(group[t], 0.0), w)
        exact = {t.text: (w, numbers[group[t]]) for t, w in idf.items() if not t.prefix}
        prefixes = [(t.text, w, numbers[group[t]]) for t, w in idf.items() if t.prefix]
        return cls(list(idf), idf, group, ranges, speakers, tense, sum(best.values()), exact, prefixes)


_NOW = re.compile(
    r"\b(?:now|current|currently|nowadays|these days|latest|newest|still|anymore)\b|지금|요즘|현재|최근|요새"
)
_BEFORE = re.compile(
    r"\b(?:before|previous|previously|used to|originally|formerly|at first|earlier|old)\b|전에|예전|원래|처음|이전"
)


def _postings(conn: sqlite3.Connection, chat: ChatRow, term: Term, span: tuple[int, int], budget: int) -> Postings:
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
_VOCATIVE_LEAD = (
    r"(?:^|[.!?]\s+|,\s*|\b(?:hey|hi|hello|thanks|thank you|bye|oh|wow|congrats|congratulations|yeah|yes|aw+|"
    r"sorry|dear|morning|night),?\s+)"
)
VOCATIVE_SAMPLE = 100


def _addressee(conn: sqlite3.Connection, chat: ChatRow, word: str, term: str) -> str | None:
    """The role of the person called ``word``, in a chat whose turns carry no names: who the
    other one greets and thanks by that name ("Hey Mel!", "Thanks, Mel."), if that is how the
    name is mostly used, and by one role only; else None."""
    sql = (
        "SELECT t.role, t.content FROM fts f JOIN turns t ON t.id = f.rowid "
        "WHERE fts MATCH ? AND f.rowid BETWEEN ? AND ? AND t.speaker IS NULL ORDER BY f.rowid DESC LIMIT ?"
    )
    rows = conn.execute(sql, (Term(term).fts(), chat.lo, chat.hi, VOCATIVE_SAMPLE)).fetchall()
    if len(rows) < 3:
        return None
    vocative = re.compile(_VOCATIVE_LEAD + re.escape(word) + r"\s*[!?,.]", re.IGNORECASE)
    said_by = Counter(role for role, content in rows if vocative.search(content))
    if not said_by or sum(said_by.values()) < 0.5 * len(rows):
        return None
    role, n = said_by.most_common(1)[0]
    if n < 0.85 * sum(said_by.values()):
        return None
    return "assistant" if role == "user" else "user"


def _called(conn: sqlite3.Connection, chat: ChatRow, word: str, term: str, names: set[str]) -> str | None:
    """In a chat of two named speakers, the one called ``word`` by the other ("Thanks, Andy!"), if
    that is how the word is mostly used, and by one of them only; else None."""
    sql = (
        "SELECT t.speaker, t.content FROM fts f JOIN turns t ON t.id = f.rowid "
        "WHERE fts MATCH ? AND f.rowid BETWEEN ? AND ? AND t.speaker IS NOT NULL ORDER BY f.rowid DESC LIMIT ?"
    )
    rows = conn.execute(sql, (Term(term).fts(), chat.lo, chat.hi, VOCATIVE_SAMPLE)).fetchall()
    if len(rows) < 3:
        return None
    vocative = re.compile(_VOCATIVE_LEAD + re.escape(word) + r"\s*[!?,.]", re.IGNORECASE)
    said_by = Counter(who for who, content in rows if vocative.search(content))
    if not said_by or sum(said_by.values()) < 0.5 * len(rows):
        return None
    who, n = said_by.most_common(1)[0]
    if n < 0.85 * sum(said_by.values()) or who not in names:
        return None
    return next(iter(names - {who}))


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
    ranges, rest = query_dates(text, today)
    names = {r[0] for r in conn.execute("SELECT name FROM speakers WHERE chat=?", (chat.id,))}
    speaker_terms = {word_term(part): n for n in names for part in n.split() if len(part) > 1}
    for word in _CAPITALISED.findall(text):  # a short name: "Mel" for Melanie, "Jon" for Jonathan
        term = word_term(word)
        short = word.casefold()
        if term and term not in speaker_terms and len(short) >= 3:
            whose = {n for n in names for part in n.split() if part.startswith(short) and part != short}
            if len(whose) == 1:
                speaker_terms[term] = whose.pop()
            elif not whose and len(names) == 2 and weights.speaker:
                called = _called(conn, chat, word, term, names)  # "Andy" for Andrew: how the other greets him
                if called is not None:
                    speaker_terms[term] = called
    own = query_terms(rest)
    speakers = {speaker_terms[t.text] for t in own if t.text in speaker_terms}
    words = rest.split()
    speakers |= {n for n in names if n in words or any(w.startswith(n) for w in words)}  # 민수가, 김민수는
    if weights.speaker:
        for word in _NAME_WORD.findall(text):
            term = word_term(word)
            if term and term not in speaker_terms and Term(term) in own:
                role = _addressee(conn, chat, word, term)
                if role is not None:
                    speaker_terms[term] = "@" + role
                    speakers.add("@" + role)
        own = [t for t in own if t.text not in speaker_terms] or own  # who said it, not a word to find
    group: dict[Term, Term] = {t: t for t in own}
    share: dict[Term, float] = {t: 1.0 for t in own}
    if weights.expand:
        for t in own:
            if t.prefix:
                continue
            for r, w in sorted(related(t.text, word_term).items(), key=lambda x: -x[1])[: effort.max_related]:
                rt = Term(r)
                if rt not in group:
                    group[rt] = t
                    share[rt] = w * weights.expand
    terms = list(group)
    n = max(chat.docs, 1)
    hi = conn.execute("SELECT max(id) FROM turns WHERE id BETWEEN ? AND ?", (chat.lo, chat.hi)).fetchone()[0]
    stats = Stats({}, {}, hi or 0)
    if terms:
        lo = conn.execute("SELECT min(id) FROM turns WHERE id BETWEEN ? AND ?", (chat.lo, chat.hi)).fetchone()[0]
        for t in terms:
            budget = effort.postings if group[t] == t else effort.related_postings
            found = _postings(conn, chat, t, (lo or 0, hi or 0), budget)
            stats.df[t] = min(found.df, n)
            if found.ids is not None:
                stats.ids[t] = found.ids
    terms = [t for t in terms if stats.df[t] > 0]
    idf = {t: share[t] * math.log(1 + (n - stats.df[t] + 0.5) / (stats.df[t] + 0.5)) for t in terms}
    lowered = text.casefold()
    tense = 1 if _NOW.search(lowered) else -1 if _BEFORE.search(lowered) else 0
    return Query.make(idf, {t: group[t] for t in terms}, ranges, frozenset(speakers), tense), stats


def _rows(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> list[Turn]:
    return [Turn(*r) for r in conn.execute(sql, args)]


def _bm25(turn: Turn, q: Query, avgdl: float) -> None:
    terms = turn.terms.split()
    exact = q.exact
    counts = Counter([t for t in terms if t in exact])
    if not counts and not q.prefixes:
        turn.own = turn.matched = turn.relevance = 0.0
        return
    norm = K1 * (1 - B + B * len(terms) / avgdl)
    best: dict[int, tuple[float, float]] = {}  # group -> (score, weight) of its best term here

    def add(tf: int, w: float, g: int) -> None:
        score = w * tf * (K1 + 1) / (tf + norm)
        if score > best.get(g, (0.0, 0.0))[0]:
            best[g] = (score, w)

    for text, tf in counts.items():
        add(tf, *exact[text])
    for prefix, w, g in q.prefixes:
        tf = sum(1 for k in terms if k.startswith(prefix))
        if tf:
            add(tf, w, g)
    turn.own = sum(s for s, _ in best.values())
    turn.matched = sum(w for _, w in best.values())
    turn.relevance = turn.matched / q.total if q.total else 0.0


def _estimate(
    conn: sqlite3.Connection,
    chat: ChatRow,
    q: Query,
    terms: list[Term],
    stats: Stats,
    limit: int,
    need: float,
    lengths: bool,
) -> list[int]:
    """The ``limit`` turns holding ``terms`` (all counted exactly: their postings are at hand) with
    the best BM25, estimated from the postings alone: the weight of the terms each turn holds (the
    best of each group) over its length, every term counted once. Turns that cannot hold ``need``
    of the query's weight (the best they could: the terms seen, and every group not among
    ``terms``) are left out. Without ``lengths``, turns holding the same weight are taken newest
    first. FTS5's own ``bm25()`` would use the statistics of the whole table and count each
    term's postings over every chat."""
    held: dict[int, dict[Term, float]] = {}
    for t in terms:
        w, g = q.idf[t], q.group[t]
        for rid in stats.ids[t]:
            groups = held.setdefault(rid, {})
            if w > groups.get(g, 0.0):
                groups[g] = w
    if need > 0:
        best: dict[Term, float] = {}
        for t, w in q.idf.items():
            if t not in terms:
                best[q.group[t]] = max(best.get(q.group[t], 0.0), w)
        held = {
            rid: gs
            for rid, gs in held.items()
            if sum(max(w, best.get(g, 0.0)) for g, w in gs.items()) + sum(w for g, w in best.items() if g not in gs)
            >= need
        }
    if len(held) <= limit:
        return sorted(held, reverse=True)
    if not lengths:
        return sorted(held, key=lambda rid: (sum(held[rid].values()), rid), reverse=True)[:limit]
    size: dict[int, int] = {}
    ids = list(held)
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        sql = f"SELECT id, nterms FROM turns WHERE id IN ({','.join('?' * len(chunk))})"
        size.update(conn.execute(sql, chunk).fetchall())
    avgdl = max(chat.terms / max(chat.docs, 1), 1.0)

    def estimate(rid: int) -> float:
        norm = K1 * (1 - B + B * size.get(rid, avgdl) / avgdl)
        return sum(held[rid].values()) * (K1 + 1) / (1 + norm)

    return sorted(held, key=lambda rid: (estimate(rid), rid), reverse=True)[:limit]


def _newest(conn: sqlite3.Connection, chat: ChatRow, terms: list[Term], op: str, limit: int) -> list[int]:
    expr = f" {op} ".join(t.fts() for t in terms)
    sql = "SELECT rowid FROM fts WHERE fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?"
    return [r[0] for r in conn.execute(sql, (expr, chat.lo, chat.hi, limit))]


def _need(q: Query, effort: Effort) -> float:
    """The least weight of the query a turn must hold to be kept (0: any turn)."""
    return min(MIN_RELEVANCE * q.total, MIN_MATCHED) if effort.relevant_only else 0.0


def _candidates(conn: sqlite3.Connection, chat: ChatRow, q: Query, stats: Stats, effort: Effort) -> list[int]:
    """Turn ids worth scoring, reading a bounded number of postings whatever the chat's size.

    Only the rarest terms, up to ``effort.postings`` postings together, are ranked over the whole
    history (``_estimate``). Common terms (each in more messages than that) bring the newest turns
    where they meet (AND: FTS5 skips through the lists) and the newest that hold any of them,
    unranked. Related terms (memory.recall.lexicon) fetch turns only through their rarest, up to
    ``effort.related_postings`` postings: a common related word says little. All candidates are
    then scored alike (``_bm25``). With ``effort.relevant_only`` the common terms are searched
    only when they weigh enough to make a turn relevant without the rare ones.
    """
    ids: list[int] = []
    dfs = stats.df
    need = _need(q, effort)
    own = [t for t in q.terms if q.group[t] == t]
    if own:
        rare: list[Term] = []
        common: list[Term] = []
        budget = 0
        for t in sorted(own, key=lambda t: dfs[t]):
            if t in stats.ids and budget + dfs[t] <= effort.postings:
                rare.append(t)
                budget += dfs[t]
            else:
                common.append(t)
        if rare:
            ids += _estimate(conn, chat, q, rare, stats, effort.candidates, need, effort.lengths)
        if not need:
            if len(common) >= 3:
                ids += _newest(conn, chat, common[:3], "AND", effort.few)
            if len(common) >= 2:
                ids += _newest(conn, chat, common[:2], "AND", effort.few)
            if common:
                ids += _newest(conn, chat, common, "OR", effort.few)
        else:  # only what can be relevant: the two rarest together, each one that weighs enough alone
            if len(common) >= 2 and q.idf[common[0]] + q.idf[common[1]] >= need:
                ids += _newest(conn, chat, common[:2], "AND", effort.few)
            enough = [t for t in common if q.idf[t] >= need]
            if enough:
                ids += _newest(conn, chat, enough, "OR", effort.few)
    related: list[Term] = []
    budget = 0
    for t in sorted((t for t in q.terms if q.group[t] != t), key=lambda t: dfs[t]):
        if t not in stats.ids or budget + dfs[t] > effort.related_postings:
            break
        related.append(t)
        budget += dfs[t]
    if related:
        ids += _estimate(conn, chat, q, related, stats, effort.related_candidates, need, effort.lengths)
    for r in q.ranges:
        for first, last in _day_spans(conn, chat, r):
            ids.extend(
                x[0]
                for x in conn.execute(
                    "SELECT id FROM turns WHERE chat=? AND day BETWEEN ? AND ? ORDER BY day, id LIMIT ?",
                    (chat.id, first, last, effort.dates),
                )
            )
    return list(dict.fromkeys(ids))


def _day_spans(conn: sqlite3.Connection, chat: ChatRow, r: DayRange) -> list[tuple[int, int]]:
    if not r.any_year:
        return [(r.first, r.last)]
    lo = conn.execute("SELECT min(day) FROM turns WHERE chat=? AND day IS NOT NULL", (chat.id,)).fetchone()[0]
    hi = conn.execute("SELECT max(day) FROM turns WHERE chat=?", (chat.id,)).fetchone()[0]
    if lo is None or hi is None:
        return []
    return [(y * 10000 + r.first, y * 10000 + r.last) for y in range(hi // 10000, lo // 10000 - 1, -1)][:30]


def _attach_neighbours(
    conn: sqlite3.Connection, turns: list[Turn], pool: dict[int, Turn], newest: int, width: int = 6
) -> list[Turn]:
    """Link each turn to the two live turns before and after it in its file; return the new ones.

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
    added: list[Turn] = []
    for t in todo:
        t.neighbours_known = True
        rows = [r for r in near_rows.get(t.file, []) if abs(r.line - t.line) <= width]
        lines = {r.line for r in rows}
        wanted = range(max(1, t.line - 2), t.line + (1 if t.id == newest else 3))
        if not all(x in lines for x in wanted if x != t.line):
            rows = _rows(
                conn,
                f"SELECT {_COLUMNS} FROM turns WHERE file=? AND line BETWEEN ? AND ? ORDER BY line",
                (t.file, t.line - 6, t.line + 6),
            )
        rows.sort(key=lambda r: r.line)
        before = [r for r in rows if r.line < t.line and not r.dead][-2:]
        after = [r for r in rows if r.line > t.line and not r.dead][:2]
        steps = [(-1 - i, r) for i, r in enumerate(reversed(before))] + [(1 + i, r) for i, r in enumerate(after)]
        for step, found in steps:
            known = pool.get(found.id)
            if known is None:
                known = pool[found.id] = found
                added.append(found)
            t.near[step] = known
            known.near.setdefault(-step, t)
    return added


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
) -> list[Turn]:
    """The ``limit`` best turns for ``text``, best first (``exclude_from``: (file id, offset) cut-off).

    With ``effort.relevant_only`` (the automatic recall) only ``relevant`` turns are returned.
    """
    if limit <= 0 or chat.docs <= 0:
        return []
    q, stats = parse(conn, chat, text, today, weights, effort)
    if not q.terms and not q.ranges:
        return []
    ids = _candidates(conn, chat, q, stats, effort)
    if not ids:
        return []
    pool: dict[int, Turn] = {}
    _load(conn, pool, ids)
    avgdl = max(chat.terms / max(chat.docs, 1), 1.0)
    for t in pool.values():
        _bm25(t, q, avgdl)

    def eligible(t: Turn) -> bool:
        if t.dead or (exclude_from and t.file == exclude_from[0] and t.offset >= exclude_from[1]):
            return False
        return relevant(t.matched, t.relevance) if effort.relevant_only else True

    best = sorted((t for t in pool.values() if eligible(t)), key=lambda t: t.own, reverse=True)[: effort.expand]
    if not best:
        return []
    for t in _attach_neighbours(conn, best, pool, stats.newest, effort.neighbours):
        _bm25(t, q, avgdl)
    _score(pool, q, weights)
    out = [t for t in pool.values() if t.score > 0 and eligible(t)]
    out.sort(key=lambda t: (-t.score, -t.id))
    if weights.duplicate < 1:
        _penalise_repeats(out, weights.duplicate)
    return out[:limit]


def _load(conn: sqlite3.Connection, pool: dict[int, Turn], ids: list[int]) -> None:
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for t in _rows(conn, f"SELECT {_COLUMNS} FROM turns WHERE id IN ({marks})", tuple(chunk)):
            pool[t.id] = t


def _text_key(t: Turn) -> str:
    text = t.content
    if t.speaker and text[: len(t.speaker) + 1].casefold() == t.speaker + ":":
        text = text[len(t.speaker) + 1 :]
    return " ".join(text.casefold().split())


def _penalise_repeats(turns: list[Turn], share: float) -> None:
    """Turns saying what a better one says (small talk repeats itself) keep ``share`` of their
    score for each better one; ``turns`` is sorted best first and stays so."""
    seen: Counter[str] = Counter()
    for t in turns:
        key = _text_key(t)
        if seen[key]:
            t.score *= share ** seen[key]
        seen[key] += 1
    turns.sort(key=lambda t: (-t.score, -t.id))


def _asks(asked: Turn, answer: Turn) -> bool:
    """Whether ``asked`` is a question that ``answer`` (the next turn, by the other person) answers."""
    other = (asked.speaker, asked.role) != (answer.speaker, answer.role)
    return other and asked.content.rstrip().endswith(("?", "？"))


def _score(pool: dict[int, Turn], q: Query, w: Weights) -> None:
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
        asked = t.prev
        if w.answer and asked is not None and asked.session == t.session and _asks(asked, t):
            score += w.answer * asked.own  # the answer to a question about it
        if w.date and q.ranges and any(r.contains(t.day) for r in q.ranges):
            score = (score + 0.01) * (1 + w.date)  # a turn of a named day counts even without a word
        if q.speakers and (t.speaker in q.speakers or (t.speaker is None and "@" + t.role in q.speakers)):
            score *= 1 + w.speaker
        stamp = t.ts if t.ts is not None else float(t.id & ID_MASK)
        if hi > lo:
            r = (stamp - lo) / (hi - lo)
            score *= 1 + w.recency * r
            if q.tense:
                score *= 1 + w.tense * (r if q.tense > 0 else 1 - r)
        t.score = score
