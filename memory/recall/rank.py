"""Ranking: BM25 candidates from FTS5, re-scored with the conversation around them.

1. The query's terms (memory.recall.text) and dates (memory.recall.dates). A query word that is
   the name of a speaker (a turn's ``name``, or the ``"Name: "`` it starts with; in a chat with
   no names, the name one role greets the other with: ``_addressee``) says whose turns to prefer
   and is not searched as a word. Each term brings its related terms (memory.recall.lexicon:
   "pets" -> dog, puppy, cat ...) at a share of their weight, and a turn counts only the best
   term of each such group. Each term's document frequency is counted in the chat's index
   (estimated for common terms, see ``_df``); the rarest terms (up to a budget of postings) fetch
   the ``CANDIDATES`` best turns by BM25 from FTS5, common terms the newest turns where they meet
   or appear (see ``_candidates``), and a date in the query adds the turns of those days.
2. Every candidate, and the turns next to the best of them, get a BM25 score of their own
   (``own``), computed here from their text so that all turns are scored on one scale.
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
automatic recall keeps only turns above a threshold (memory.recall.block).
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
from memory.recall.store import ChatRow
from memory.recall.text import Term, doc_terms, query_terms, word_term

K1 = 1.2
B = 0.5
CANDIDATES = 100  # turns fetched from FTS5 by BM25 for the rare terms
FEW = 40  # ... for each query on common terms
EXPAND = 30  # best candidates whose neighbours are fetched
POSTINGS_BUDGET = 1_500  # postings ranked over the whole history (see _candidates)
DATE_CANDIDATES = 300
MAX_RELATED = 64  # related terms per query term (each costs a look-up)
RELATED_BUDGET = 300  # postings of related terms ranked over the whole history (the rarest first)
RELATED_CANDIDATES = 40  # turns they fetch


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
            neighbour=0.0, neighbour2=0.0, session=0.0, tense=0.0, date=0.0, speaker=0.0, recency=0.0, expand=0.0,
            duplicate=1.0,
        )


DEFAULT_WEIGHTS = Weights()
_COLUMNS = "id, file, line, offset, ts, day, at, role, name, speaker, session, dead, content"


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


def _df(conn: sqlite3.Connection, chat: ChatRow, term: Term, span: tuple[int, int], budget: int) -> int:
    """How many turns hold ``term``: exact up to ``budget``, else estimated from how densely it
    occurs among the newest turns (counting every posting of a common term would cost more than
    the whole search)."""
    sql = f"SELECT rowid FROM {chat.fts} WHERE {chat.fts} MATCH ? ORDER BY rowid DESC LIMIT ?"
    rows = conn.execute(sql, (term.fts(), budget + 1)).fetchall()
    if len(rows) <= budget:
        return len(rows)
    lo, hi = span
    return min(chat.docs, int(len(rows) * (hi - lo + 1) / max(hi - rows[-1][0] + 1, 1)))


_NAME_WORD = re.compile(r"(?<=\S )([A-Z][a-z]+)\b")  # a capitalised word, not the first one
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
        f"SELECT t.role, t.content FROM {chat.fts} f JOIN turns t ON t.id = f.rowid "
        f"WHERE {chat.fts} MATCH ? AND t.speaker IS NULL ORDER BY f.rowid DESC LIMIT ?"
    )
    rows = conn.execute(sql, (Term(term).fts(), VOCATIVE_SAMPLE)).fetchall()
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


def parse(
    conn: sqlite3.Connection, chat: ChatRow, text: str, today: date | None, weights: Weights = DEFAULT_WEIGHTS
) -> tuple[Query, dict[Term, int]]:
    ranges, rest = query_dates(text, today)
    names = {r[0] for r in conn.execute("SELECT name FROM speakers WHERE chat=?", (chat.id,))}
    speaker_terms = {word_term(part): n for n in names for part in n.split() if len(part) > 1}
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
            for r, w in sorted(related(t.text, word_term).items(), key=lambda x: -x[1])[:MAX_RELATED]:
                rt = Term(r)
                if rt not in group:
                    group[rt] = t
                    share[rt] = w * weights.expand
    terms = list(group)
    n = max(chat.docs, 1)
    lo = conn.execute("SELECT min(id) FROM turns WHERE chat=?", (chat.id,)).fetchone()[0] or 0
    hi = conn.execute("SELECT max(id) FROM turns WHERE chat=?", (chat.id,)).fetchone()[0] or 0  # apart: indexed
    dfs = {t: min(_df(conn, chat, t, (lo, hi), POSTINGS_BUDGET if group[t] == t else RELATED_BUDGET), n) for t in terms}
    terms = [t for t in terms if dfs[t] > 0]
    idf = {t: share[t] * math.log(1 + (n - dfs[t] + 0.5) / (dfs[t] + 0.5)) for t in terms}
    lowered = text.casefold()
    tense = 1 if _NOW.search(lowered) else -1 if _BEFORE.search(lowered) else 0
    return Query.make(idf, {t: group[t] for t in terms}, ranges, frozenset(speakers), tense), dfs


def _rows(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> list[Turn]:
    return [Turn(*r) for r in conn.execute(sql, args)]


def _bm25(turn: Turn, q: Query, avgdl: float) -> None:
    terms = doc_terms(turn.content)
    counts = Counter(terms)
    norm = K1 * (1 - B + B * len(terms) / avgdl)
    best: dict[int, tuple[float, float]] = {}  # group -> (score, weight) of its best term here

    def add(tf: int, w: float, g: int) -> None:
        score = w * tf * (K1 + 1) / (tf + norm)
        if score > best.get(g, (0.0, 0.0))[0]:
            best[g] = (score, w)

    for text, tf in counts.items():
        hit = q.exact.get(text)
        if hit is not None:
            add(tf, *hit)
    for prefix, w, g in q.prefixes:
        tf = sum(c for k, c in counts.items() if k.startswith(prefix))
        if tf:
            add(tf, w, g)
    turn.own = sum(s for s, _ in best.values())
    turn.matched = sum(w for _, w in best.values())
    turn.relevance = turn.matched / q.total if q.total else 0.0


def _ranked(conn: sqlite3.Connection, chat: ChatRow, terms: list[Term], limit: int) -> list[int]:
    expr = " OR ".join(t.fts() for t in terms)
    sql = f"SELECT rowid FROM {chat.fts} WHERE {chat.fts} MATCH ? ORDER BY rank LIMIT ?"
    return [r[0] for r in conn.execute(sql, (expr, limit))]


def _newest(conn: sqlite3.Connection, chat: ChatRow, terms: list[Term], op: str, limit: int) -> list[int]:
    expr = f" {op} ".join(t.fts() for t in terms)
    sql = f"SELECT rowid FROM {chat.fts} WHERE {chat.fts} MATCH ? ORDER BY rowid DESC LIMIT ?"
    return [r[0] for r in conn.execute(sql, (expr, limit))]


def _candidates(conn: sqlite3.Connection, chat: ChatRow, q: Query, dfs: dict[Term, int]) -> list[int]:
    """Turn ids worth scoring, reading a bounded number of postings whatever the chat's size.

    FTS5 computes BM25 for every match of a ranked query (1.5 µs each in a small index, 6-9 µs in
    one of a million messages), so only the rarest terms, up to POSTINGS_BUDGET postings together,
    are ranked over the whole history. Common terms (each in more messages than that) bring the
    newest turns where they meet (AND: FTS5 skips through the lists) and the newest that hold any
    of them, unranked. Related terms (memory.recall.lexicon) fetch turns only through their rarest,
    up to RELATED_BUDGET postings: a common related word says little. All candidates are then
    scored alike (``_bm25``).
    """
    ids: list[int] = []
    own = [t for t in q.terms if q.group[t] == t]
    if own:
        rare: list[Term] = []
        common: list[Term] = []
        budget = 0
        for t in sorted(own, key=lambda t: dfs[t]):
            if budget + dfs[t] <= POSTINGS_BUDGET:
                rare.append(t)
                budget += dfs[t]
            else:
                common.append(t)
        if rare:
            ids += _ranked(conn, chat, rare, CANDIDATES)
        if len(common) >= 3:
            ids += _newest(conn, chat, common[:3], "AND", FEW)
        if len(common) >= 2:
            ids += _newest(conn, chat, common[:2], "AND", FEW)
        if common:
            ids += _newest(conn, chat, common, "OR", FEW)
    related: list[Term] = []
    budget = 0
    for t in sorted((t for t in q.terms if q.group[t] != t), key=lambda t: dfs[t]):
        if budget + dfs[t] > RELATED_BUDGET:
            break
        related.append(t)
        budget += dfs[t]
    if related:
        ids += _ranked(conn, chat, related, RELATED_CANDIDATES)
    for r in q.ranges:
        for first, last in _day_spans(conn, chat, r):
            ids.extend(
                x[0]
                for x in conn.execute(
                    "SELECT id FROM turns WHERE chat=? AND day BETWEEN ? AND ? ORDER BY day, id LIMIT ?",
                    (chat.id, first, last, DATE_CANDIDATES),
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


def _attach_neighbours(conn: sqlite3.Connection, turns: list[Turn], pool: dict[int, Turn]) -> list[Turn]:
    """Link each turn to the two live turns before and after it in its file; return the new ones.

    Turns of one file are mostly indexed with consecutive ids, so one query by id ranges finds
    most neighbours; a turn whose window there is incomplete is looked up by file and line.
    """
    todo = [t for t in turns if not t.neighbours_known]
    if not todo:
        return []
    ranges = " OR ".join("id BETWEEN ? AND ?" for _ in todo)
    args = tuple(x for t in todo for x in (t.id - 6, t.id + 6))
    near_rows: dict[int, list[Turn]] = {}
    for r in _rows(conn, f"SELECT {_COLUMNS} FROM turns WHERE {ranges}", args):
        near_rows.setdefault(r.file, []).append(r)
    added: list[Turn] = []
    for t in todo:
        t.neighbours_known = True
        rows = [r for r in near_rows.get(t.file, []) if abs(r.line - t.line) <= 6]
        lines = {r.line for r in rows}
        if not all(x in lines for x in range(max(1, t.line - 2), t.line + 3) if x != t.line):
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
) -> list[Turn]:
    """The ``limit`` best turns for ``text``, best first (``exclude_from``: (file id, offset) cut-off)."""
    if limit <= 0 or chat.docs <= 0:
        return []
    q, dfs = parse(conn, chat, text, today, weights)
    if not q.terms and not q.ranges:
        return []
    ids = _candidates(conn, chat, q, dfs)
    if not ids:
        return []
    pool: dict[int, Turn] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for t in _rows(conn, f"SELECT {_COLUMNS} FROM turns WHERE id IN ({marks})", tuple(chunk)):
            pool[t.id] = t
    avgdl = max(chat.terms / max(chat.docs, 1), 1.0)
    for t in pool.values():
        _bm25(t, q, avgdl)
    best = sorted(pool.values(), key=lambda t: t.own, reverse=True)[:EXPAND]
    for t in _attach_neighbours(conn, best, pool):
        _bm25(t, q, avgdl)
    _score(pool, q, weights)
    out = [
        t
        for t in pool.values()
        if not t.dead
        and (t.score > 0)
        and not (exclude_from and t.file == exclude_from[0] and t.offset >= exclude_from[1])
    ]
    out.sort(key=lambda t: (-t.score, -t.id))
    if weights.duplicate < 1:
        _penalise_repeats(out, weights.duplicate)
    return out[:limit]


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
    stamps = sorted((t.ts if t.ts is not None else float(t.id)) for t in pool.values())
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
        stamp = t.ts if t.ts is not None else float(t.id)
        if hi > lo:
            r = (stamp - lo) / (hi - lo)
            score *= 1 + w.recency * r
            if q.tense:
                score *= 1 + w.tense * (r if q.tense > 0 else 1 - r)
        t.score = score
