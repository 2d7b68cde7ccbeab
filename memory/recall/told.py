"""What someone told of themselves: the priors of memory.recall.rank for a question about a person.

A question asking for a guess about someone or for a list (memory.recall.query, memory.recall.spread), or naming
two people, rests on what they told of their own life: a turn saying "I", "my", "we" (``discloses``) weighs more,
a message of a few words less (``brief``), and the turns of others than the people it names less (``of_them``).
Any other English question naming someone gets the cut of a short message alone. The relevance floor reads the
best score with or without them (``unprompted``). The weights are memory.recall.tuning's.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memory.recall.text import own_terms, split_quote
from memory.recall.tuning import Weights

if TYPE_CHECKING:
    from memory.recall.rank import Turn

_FIRST = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|im|ive|my|me|mine|we|we're|we've|our|us)\b", re.IGNORECASE)


def discloses(t: Turn) -> bool:
    """Whether ``t`` tells something of its speaker: "I", "my", "we" ... in a turn that is not a question."""
    return bool(_FIRST.search(own_text(t))) and not question(t)


def of_them(t: Turn, w: Weights, asked: frozenset[str] = frozenset()) -> float:
    """What a question asking for a guess about someone or a list multiplies ``t``'s score by: ``1 +
    Weights.disclose`` if it tells of its speaker, times ``min(1, its terms / Weights.brief)``, times
    ``Weights.others`` if the question names whose turns it asks for (``asked``: Query.speakers) and not its."""
    told = 1 + w.disclose if discloses(t) else 1.0
    other = w.others if asked and not by(t, asked) else 1.0
    return told * other * brief(t, w.brief)


def brief(t: Turn, under: float) -> float:
    """What a message of fewer than ``under`` index terms keeps of its score: ``min(1, terms / under)``."""
    return min(1.0, max(words(t), 1) / under) if under > 0 else 1.0


def by(t: Turn, speakers: frozenset[str]) -> bool:
    """Whether ``t`` was said by one of ``speakers`` (Query.speakers: names, or "@role" in a chat without names)."""
    return t.speaker in speakers or (t.speaker is None and "@" + t.role in speakers)


def unprompted(
    out: list[Turn], lived: bool, w: Weights, asked: frozenset[str] = frozenset(), short: bool = False
) -> float:
    """The best score of ``out`` (best first) that the relevance floor compares: as shown with
    ``Weights.disclose_floor``, else without what ``of_them`` (``lived``: a guess, a list, two people) or, for
    any other question naming someone, ``brief`` (``short``) multiplied (the floor the same as for any question)."""
    if not (lived or short) or w.disclose_floor:
        return out[0].score
    return max(t.score / (of_them(t, w, asked) if lived else brief(t, w.brief_named)) for t in out)


# Words of a message that only keeps the chat going ("lol", "omg", "sooo true", "ㅋㅋㅋ"): chat English and Korean
_FILLERS = frozenset(
    """
    lol lmao lmfao rofl omg omfg brb ikr idk tbh ngl smh btw ty thx np k kk ok okay oh ah aw aww yay yeah yep yup
    yes nah true same wait listen hey hi wow hmm um uh ugh cool nice guess what so anyway
    응 ㅇㅇ 헐 대박 아 오 와 네 넵 엥 흠 음 아하 오오
    """.split()
)
_LAUGH = re.compile(r"(?:[ㅋㅎㅠㅜ]+|(?:ha)+h?|(?:he)+|lo+l+|so+|ha+|a+w+)")  # "ㅋㅋㅋ", "hahaha", "looool", "sooo"
_WORD = re.compile(r"\w+")
FILLER_CHARS = 40  # longer, a message says something (four fillers and a laugh fit: "lmao omg ikr hahahahaha")


def own_text(t: Turn) -> str:
    """``t``'s text without the message it quotes if it is a reply (memory.recall.text.split_quote)."""
    return split_quote(t.content)[1]


def said(t: Turn) -> str:
    """``t``'s own text without its "Name: " prefix."""
    text = own_text(t)
    if t.speaker and text[: len(t.speaker) + 1].casefold() == t.speaker + ":":
        return text[len(t.speaker) + 1 :]
    return text


def filler(t: Turn) -> bool:
    """Whether ``t`` only keeps the chat going: at most four words, each a filler, or an emoji, and no question.
    The turns around a turn skip it (memory.recall.rank): "lol" and "omg" between a question and its answer
    do not part them."""
    text = said(t)
    if len(text) > FILLER_CHARS or _asking(text):  # most messages: one look at the length
        return False
    found = _WORD.findall(text.casefold())
    return len(found) <= 4 and all(w in _FILLERS or _LAUGH.fullmatch(w) for w in found)


def words(t: Turn) -> int:
    """How many index terms ``t`` holds (stopwords are not terms; a reply's quote aside)."""
    terms = own_terms(t.terms)
    return terms.count(" ") + 1 if terms else 0


def question(t: Turn) -> bool:
    """Whether ``t`` ends in a question mark."""
    return t.content.rstrip().endswith(("?", "？"))


def same(a: Turn, b: Turn) -> bool:
    """Whether ``a`` and ``b`` were said by the same person."""
    return (a.speaker, a.role) == (b.speaker, b.role)


def asks(asked: Turn, answer: Turn) -> bool:
    """Whether ``asked`` is a question by the other person than ``answer``'s (the turn after it answers it; the
    turn before it is what it asks about): a question mark anywhere in it, as a message mixing topics asks in its
    middle ("What made you decide? Side note, the weather is grey here today.")."""
    return not same(asked, answer) and _asking(own_text(asked))


def _asking(text: str) -> bool:
    """Whether ``text`` holds a question mark anywhere (Latin or full-width)."""
    return "?" in text or "？" in text
