"""Ranking: BM25 candidates from FTS5, re-scored with the conversation around them.

1. The query's terms (memory.recall.text) and dates (memory.recall.dates). Terms are looked up
   in the chat's vocabulary for their document frequency; the rarest terms (up to a budget of
   postings) fetch the ``CANDIDATES`` best turns by BM25 from FTS5, and a date in the query adds
   the turns of those days.
2. Every candidate, and the turns next to the best of them, get a BM25 score of their own
   (``own``), computed here from their text so that all turns are scored on one scale.
3. A turn's final score (``Weights``) adds what surrounds it, because a question and its answer are spread
   over an exchange and a topic over a session:
   ``own + neighbour * best own of the turns next to it in its session
        + session * best own of the other turns of its session``,
   then multiplied by ``1 + date`` when its day is one the query names, by
   ``1 + speaker`` when the query names who said it, and by ``1 + recency * r`` where ``r``
   goes from 0 (oldest candidate) to 1 (newest), so that of two equal matches the later (a fact
   that changed) comes first.

``relevance`` is the share of the query's term weight (idf) that a turn itself contains: the
automatic recall keeps only turns above a threshold (memory.recall.block).
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter
from dataclasses import dataclass
from datetime import date

from memory.recall.dates import DayRange, query_dates
from memory.recall.store import ChatRow
from memory.recall.text import Term, doc_terms, query_terms

K1 = 1.2
B = 0.75
CANDIDATES = 200  # turns fetched from FTS5 by BM25
EXPAND = 40  # best candidates whose neighbours are fetched
POSTINGS_BUDGET = 200_000  # most postings read by the FTS5 query; common terms beyond it only re-score
DATE_CANDIDATES = 300


@dataclass(frozen=True, slots=True)
class Weights:
    """How much each signal adds to a turn's own BM25 score (see the module docstring)."""

    neighbour: float = 0.5
    session: float = 0.15
    date: float = 1.0
    speaker: float = 0.1
    recency: float = 0.05

    @classmethod
    def bm25(cls) -> Weights:
        """Plain BM25 over single turns (the baseline of bench.recall_eval)."""
        return cls(neighbour=0.0, session=0.0, date=0.0, speaker=0.0, recency=0.0)


DEFAULT_WEIGHTS = Weights()
_COLUMNS = "id, file, line, offset, ts, day, at, role, name, session, dead, content"


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
    session: int
    dead: int
    content: str
    own: float = 0.0
    relevance: float = 0.0
    matched: float = 0.0
    score: float = 0.0
    prev: Turn | None = None
    next: Turn | None = None
    neighbours_known: bool = False


@dataclass(frozen=True, slots=True)
class Query:
    terms: list[Term]
    idf: dict[Term, float]
    ranges: list[DayRange]
    speakers: frozenset[str]


def _df(conn: sqlite3.Connection, chat: ChatRow, term: Term) -> int:
    if term.prefix:
        row = conn.execute(
            f"SELECT sum(doc) FROM {chat.vocab} WHERE term >= ? AND term < ?", (term.text, term.text + "\U0010ffff")
        ).fetchone()
    else:
        row = conn.execute(f"SELECT doc FROM {chat.vocab} WHERE term = ?", (term.text,)).fetchone()
    return int(row[0] or 0) if row else 0


def parse(conn: sqlite3.Connection, chat: ChatRow, text: str, today: date | None) -> tuple[Query, dict[Term, int]]:
    ranges, rest = query_dates(text, today)
    terms = query_terms(rest)
    n = max(chat.docs, 1)
    dfs = {t: min(_df(conn, chat, t), n) for t in terms}
    terms = [t for t in terms if dfs[t] > 0]
    idf = {t: math.log(1 + (n - dfs[t] + 0.5) / (dfs[t] + 0.5)) for t in terms}
    names = {r[0] for r in conn.execute("SELECT name FROM speakers WHERE chat=?", (chat.id,))}
    words = set(rest.split())
    speakers = frozenset(n for n in names if n in words or any(w.startswith(n) for w in words))
    return Query(terms, idf, ranges, speakers), dfs


def _rows(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> list[Turn]:
    return [Turn(*r) for r in conn.execute(sql, args)]


def _bm25(turn: Turn, q: Query, avgdl: float) -> None:
    terms = doc_terms(turn.content)
    counts = Counter(terms)
    dl = len(terms)
    norm = K1 * (1 - B + B * dl / avgdl)
    score = 0.0
    matched = 0.0
    keys = frozenset(counts)
    for t, w in q.idf.items():
        if t.prefix:
            tf = sum(c for k, c in counts.items() if k.startswith(t.text))
        else:
            tf = counts.get(t.text, 0) if t.text in keys else 0
        if tf:
            score += w * tf * (K1 + 1) / (tf + norm)
            matched += w
    total = sum(q.idf.values())
    turn.own = score
    turn.matched = matched
    turn.relevance = matched / total if total else 0.0


def _candidates(conn: sqlite3.Connection, chat: ChatRow, q: Query, dfs: dict[Term, int]) -> list[int]:
    ids: list[int] = []
    if q.terms:
        chosen: list[Term] = []
        budget = 0
        for t in sorted(q.terms, key=lambda t: dfs[t]):
            if chosen and budget + dfs[t] > POSTINGS_BUDGET:
                break
            chosen.append(t)
            budget += dfs[t]
        expr = " OR ".join(t.fts() for t in chosen)
        if budget > POSTINGS_BUDGET:  # even the rarest term is everywhere: look at the newest turns only
            floor = conn.execute(
                "SELECT id FROM turns WHERE chat=? ORDER BY id DESC LIMIT 1 OFFSET ?", (chat.id, POSTINGS_BUDGET)
            ).fetchone()
            sql = f"SELECT rowid FROM {chat.fts} WHERE {chat.fts} MATCH ? AND rowid > ? ORDER BY rank LIMIT ?"
            ids = [r[0] for r in conn.execute(sql, (expr, floor[0] if floor else 0, CANDIDATES))]
        else:
            sql = f"SELECT rowid FROM {chat.fts} WHERE {chat.fts} MATCH ? ORDER BY rank LIMIT ?"
            ids = [r[0] for r in conn.execute(sql, (expr, CANDIDATES))]
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
    """Link each turn to the live turns just before and after it in its file; return the new ones."""
    added: list[Turn] = []
    for t in turns:
        if t.neighbours_known:
            continue
        t.neighbours_known = True
        rows = _rows(
            conn,
            f"SELECT {_COLUMNS} FROM turns WHERE file=? AND line BETWEEN ? AND ? ORDER BY line",
            (t.file, t.line - 4, t.line + 4),
        )
        before = [r for r in rows if r.line < t.line and not r.dead]
        after = [r for r in rows if r.line > t.line and not r.dead]
        for side, found in (("prev", before[-1] if before else None), ("next", after[0] if after else None)):
            if found is None:
                continue
            known = pool.get(found.id)
            if known is None:
                known = pool[found.id] = found
                added.append(found)
            setattr(t, side, known)
            back = "next" if side == "prev" else "prev"
            if getattr(known, back) is None:
                setattr(known, back, t)
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
    q, dfs = parse(conn, chat, text, today)
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
    return out[:limit]


def _score(pool: dict[int, Turn], q: Query, w: Weights) -> None:
    session_best: dict[int, list[float]] = {}
    for t in pool.values():
        session_best.setdefault(t.session, []).append(t.own)
    for v in session_best.values():
        v.sort(reverse=True)
    stamps = sorted((t.ts if t.ts is not None else float(t.id)) for t in pool.values())
    lo, hi = stamps[0], stamps[-1]
    for t in pool.values():
        near = [n.own for n in (t.prev, t.next) if n is not None and n.session == t.session]
        neighbour = max(near, default=0.0)
        best = session_best[t.session]
        other = best[1] if best and best[0] == t.own and len(best) > 1 else (best[0] if best else 0.0)
        score = t.own + w.neighbour * neighbour + w.session * other
        if w.date and q.ranges and any(r.contains(t.day) for r in q.ranges):
            score = (score + 0.01) * (1 + w.date)  # a turn of a named day counts even without a word
        if q.speakers and t.name and t.name.casefold() in q.speakers:
            score *= 1 + w.speaker
        stamp = t.ts if t.ts is not None else float(t.id)
        if hi > lo:
            score *= 1 + w.recency * (stamp - lo) / (hi - lo)
        t.score = score
