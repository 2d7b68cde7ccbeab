"""Which turns are worth scoring: a bounded number of postings read whatever the chat's size.

The postings of the rarest query terms (up to a budget) bring the best turns by an estimate of
BM25 made from them (``_estimate``), common terms the newest turns where they meet or appear,
related terms only their rarest, and a date in the query adds the turns of those days. How much
is read is an ``Effort`` (memory.recall.tuning): ``THOROUGH`` for a search asked for, ``QUICK``
for the automatic recall before every answer (fewer candidates, and only turns that can pass the
threshold of ``relevant``; no turn is read when none can be, only postings).
"""

from __future__ import annotations

import sqlite3

from memory.recall.dates import DayRange
from memory.recall.query import Query, Stats
from memory.recall.store import ChatRow
from memory.recall.text import Term
from memory.recall.tuning import K1, MIN_MATCHED, MIN_RELEVANCE, B, Effort


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


def candidates(conn: sqlite3.Connection, chat: ChatRow, q: Query, stats: Stats, effort: Effort) -> list[int]:
    """Turn ids worth scoring, reading a bounded number of postings whatever the chat's size.

    Only the rarest terms, up to ``effort.postings`` postings together, are ranked over the whole
    history (``_estimate``). Common terms (each in more messages than that) bring the newest turns
    where they meet (AND: FTS5 skips through the lists) and the newest that hold any of them,
    unranked. Related terms (memory.recall.lexicon) fetch turns only through their rarest, up to
    ``effort.related_postings`` postings: a common related word says little. All candidates are
    then scored alike (memory.recall.rank). With ``effort.relevant_only`` the common terms are searched
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
