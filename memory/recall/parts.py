"""A question split into its parts (issue 32): each searched on its own, the results merged.

"Which places has Deb travelled to or planned to visit?", "What pets do Gina and Cal have?", "What are
Deb's hobbies and pets?": the parts are the clauses joined by and / or / a comma (each with the question's
lead up to the person it names: "Which places has Deb planned to visit?"), each person of a question naming
two ("What pets do Gina have?", "What pets do Cal have?"), and with ``words`` each content word with the
people named. ``fuse`` merges the rankings by reciprocal rank.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from typing import TypeVar

from memory.recall.text import query_terms

T = TypeVar("T", bound=Hashable)

_JOIN = re.compile(r"\s*(?:,|;|\band\b|\bor\b|\bas well as\b|&)\s*", re.IGNORECASE)
_WORD = re.compile(r"[\w']+")
_POSSESSIVE = re.compile(r"'s?$")


def _content(text: str, names: frozenset[str]) -> bool:
    """Whether ``text`` holds a searchable word that is not a name."""
    return bool(query_terms(" ".join(w for w in _WORD.findall(text) if _POSSESSIVE.sub("", w) not in names)))


def _named(words: list[str], names: frozenset[str]) -> bool:
    return any(_POSSESSIVE.sub("", w) in names for w in words)


def parts(text: str, names: frozenset[str], words: bool = False) -> list[str]:
    """The parts of ``text`` (a question; ``names``: its words naming whose turns it asks for), [] when it has
    fewer than two (see the module's docstring)."""
    out: list[str] = []
    body = text.strip().rstrip("?!. ")
    pieces = _JOIN.split(body)
    clauses: list[str] = []
    for piece in pieces:  # names joined ("Gina and Cal"), or a piece with no word but names, stay together
        if clauses and (
            not _content(piece, names) or _named(piece.split()[:1], names) or _named(clauses[-1].split()[-1:], names)
        ):
            clauses[-1] += " and " + piece
        else:
            clauses.append(piece)
    if len(clauses) > 1:
        first = clauses[0].split()
        at = max((i for i, w in enumerate(first) if _POSSESSIVE.sub("", w) in names), default=-1)
        lead = " ".join(first[: at + 1])
        out += [clauses[0]] + [f"{lead} {c}".strip() for c in clauses[1:]]
    named = [n for n in dict.fromkeys(_POSSESSIVE.sub("", w) for w in _WORD.findall(body)) if n in names]
    if len(named) > 1:
        for n in named:
            others = "|".join(re.escape(o) for o in named if o != n)
            one = re.sub(rf"\s*(?:\band\b|&)?\s*\b(?:{others})(?:'s?)?\b\s*(?:\band\b|&)?", " ", body)
            one = re.sub(r"\bboth\b", " ", one, flags=re.IGNORECASE)
            out.append(" ".join(one.split()))
    if words:
        who = " ".join(named)
        for term in dict.fromkeys(
            w for w in _WORD.findall(body) if _POSSESSIVE.sub("", w) not in names and query_terms(w)
        ):
            out.append(f"{who} {term}".strip())
    out = [p for p in dict.fromkeys(out) if p != body]
    return out if len(out) > 1 else []


def fuse(main: Sequence[T], others: Sequence[Sequence[T]], keep: int, k: float, weight: float) -> list[T]:
    """``main``'s first ``keep``, then every item of the rankings by reciprocal rank (``weight`` / (``k`` +
    rank) in ``main``, 1 / (``k`` + rank) in each of ``others``), best first."""
    score: dict[T, float] = {}
    for i, x in enumerate(main):
        score[x] = score.get(x, 0.0) + weight / (k + i + 1)
    for ranking in others:
        for i, x in enumerate(ranking):
            score[x] = score.get(x, 0.0) + 1 / (k + i + 1)
    head = list(main[:keep])
    rest = sorted((x for x in score if x not in head), key=lambda x: -score[x])
    return head + rest
