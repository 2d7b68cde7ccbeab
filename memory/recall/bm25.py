"""BM25 of a turn's terms against a query (memory.recall.rank scores every turn with it, a reply's quote apart).

Terms of one group (a query word and its related words, memory.recall.query) count once, by the best of them:
a turn saying "puppy" and "dog" is not twice about pets. ``K1`` and ``B`` are memory.recall.tuning's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from memory.recall.query import Query
from memory.recall.tuning import K1, B


@dataclass(frozen=True, slots=True)
class Match:
    score: float = 0.0
    matched: float = 0.0  # the weight of the query's groups it holds
    topic: float = 0.0  # ``matched`` without the weight of nicknames (Query.called): what the floor counts


NONE = Match()


def bm25(terms: list[str], q: Query, avgdl: float) -> Match:
    """How ``terms`` (a turn's, in order, repeats kept) match ``q`` in a chat whose turns hold ``avgdl`` terms on
    average."""
    exact = q.exact
    counts = Counter([t for t in terms if t in exact])
    if not counts and not q.prefixes:
        return NONE
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
    matched = sum(w for _, w in best.values())
    topic = sum(w for g, (_, w) in best.items() if g not in q.called)  # a nickname alone is not the topic
    return Match(sum(s for s, _ in best.values()), matched, topic)
