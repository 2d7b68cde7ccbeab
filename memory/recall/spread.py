"""Results over the conversation's history, not one afternoon of it (issue 32): a step after the scores.

A question whose answer is spread over many days ("What hobbies does Deb have?", "Which places have Mel
and Caro been to?") finds its best-matching episodes first; the other days mention the same things in
passing, in other words ("still unpacking boxes in Denver", "Luna stole a sock"), and rank far below the
friend's chatter that shares the question's words. The step (switches of ``Weights``, memory.recall.tuning;
measured by bench.recall_eval, each with and without):

- ``echo``: the turns that echo the best ones. The ``echo_top`` best related turns (one a session) are
  anchors; a turn said by the same person in another session echoes an anchor by the rare terms it shares
  with it (a term of at most RARE turns of the chat, not one of the query's: a place, a pet's name, a
  trail, a studio), and gains ``echo`` times the anchor's score times the weight of the terms it shares
  (one held by three turns of the chat: all of it; a term the anchor writes only in lower case, "clay" or
  "boxes", ``echo_plain`` of that: a name it capitalises, "Luna", "Cedar Ridge", ties two days of one
  episode more surely). The turns holding those terms join the candidates;
  a turn that echoes an anchor is related to the query (the relevance floor), and comes back by its echo alone when it
  holds no word of the question ("What does Deb enjoy doing?": her pottery's later days at the studio). Echoes by
  meaning (a turn's similarity to the anchor's vector around the chat's mean) were measured too: nothing more on the
  tuning seeds (bench/RESULTS.md), so only the words count.
- ``gate``: only for a question that asks for a list (``asks_for_many``: a plural noun, "both", "how
  many", "what has X done", "들", "모두"); elsewhere the echoes of the best turn crowded out the evidence
  of a question about the other person (bench.recall_eval's adversarial kind). And (``echo_guess``) for a
  guess about someone the question names ("Would Gi enjoy a farmers market?": her garden, over many days).
- ``keep``: the ``keep`` best places stay as the ranking put them (the step only fills the places
  after them; the automatic recall, with at most ``keep`` turns, is left as it was).

Tried on the tuning seeds and left out (bench/RESULTS.md has the figures): per-episode coverage
(round-robin over sessions after the best three), the closest turns in meaning of the person the
question names, the question's vector moved towards its best turns (pseudo-relevance feedback), a
question naming two people answered for each in turn. ``spread``: each turn keeps ``spread`` of its
score for every better turn of its session ahead of it (the first attempt; off).
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory.recall.stem import stem
from memory.recall.text import DOC_STOPWORDS, doc_terms, own_terms, plain_terms, split_quote

if TYPE_CHECKING:
    from memory.recall.rank import Turn

# "what do / does" and whom it asks about, a name or a few words ("Mel's kids", "Deb and Cal"), then its verb
_WHAT_DOES = r"\bwhat\s+(?:do|does)\s+\S+(?:\s+\S+){0,2}?\s+"
_LIKE = r"(?:like|love|enjoy|adore)"  # what someone likes: "What does Deb enjoy doing?"
_MANY = re.compile(
    r"\b(?:both|how many|how often|all the)\b|\b(?:what|which|where|how)\s+(?:has|have)\b"
    rf"|\b(?:what|which)\s+(?:are|were)\b|{_WHAT_DOES}do\s+(?:to|for|in|on)\b|{_WHAT_DOES}{_LIKE}\b"
    r"|들[은는이을도]?\b|모두|다\s*(?:어디|뭐|무엇)"
)
# Korean marks no plural: a question word said twice ("뭐뭐 했어?", "어디어디"), how many times or kinds ("몇 번",
# "몇 가지"), "어떤 것들", or a span or habit ("지금까지", "그동안", "여태", "평소", "주로": what they have done, do)
_KO_MANY = re.compile(r"뭐뭐|어디어디|누구누구|몇\s*(?:번|가지|군데)|어떤\s*것들|지금까지|그동안|여태|평소|주로")
# "what" or "which", a kind of thing or not, a noun of one or two words, a verb: "What hobbies does", "Which musical
# instruments can", "What kind of pets does", "What types of desserts has", "What LGBTQ+ events has", "What DIY
# projects has", "What musical artists/bands has" (real sets' several-sessions questions; the twenty-first round)
_HEAD = re.compile(
    r"\b(?:[Ww]hat|[Ww]hich)(?:\s+(kinds|types|sorts|varieties|kind|type|sort|genre|variety)\s+of)?"
    r"((?:\s+[\w+&/-]+)?\s+[\w+&/-]+)\s+(?:does|do|did|has|have|had|is|are|was|were|can|could|will|would)\b"
)
# "Name the cities Evan has been to.", "List all the pets Andy adopted.": a plural noun among the next words
_NAME = re.compile(r"\W*(?:name|list)\s+(?:(?:all|some|the|of)\s+)*((?:\S+\s+){0,2}\S+)", re.IGNORECASE)
_KINDS = frozenset(("kinds", "types", "sorts", "varieties"))
# "What does Deb enjoy doing?", "What does Cal like to do in his free time?", "What do Mel's kids love?": what someone
# likes doing, no thing named, is their hobbies; searched for that word instead of the verb and when (memory.recall.
# lexicon: the kinds of hobby; "enjoy" or "free", words the chat may never say, would leave nothing related)
_LIKES_DOING = re.compile(
    rf"{_WHAT_DOES}(?P<verb>{_LIKE}(?:\s+doing|\s+to\s+do)?"
    r"(?:\s+(?:in\s+\S+\s+(?:free|spare)\s+time|for\s+fun|on\s+(?:the\s+)?weekends?))?)\W*$",
    re.IGNORECASE,
)
_NOT_PLURAL = frozenset("does has is was his hers its this us yes always perhaps sometimes lately news plus".split())
# ... or a plural noun (after an adjective or not) and a verb of its own: "What animals live with Gi?", "Which songs
# make her cry?"; not a verb and its object ("What helps her sleep?": "her" is a stopword)
_NOUN_VERB = re.compile(r"\b(?:[Ww]hat|[Ww]hich)\s+([a-z]+)\s+([a-z]+)(?:\s+([a-z]+))?")


def spread(turns: list[Turn], share: float) -> None:
    """Each turn keeps ``share`` of its score for every better turn of its session already ahead of it (the
    two turns of one exchange count once); ``turns`` is sorted best first and stays so."""
    ahead: Counter[int] = Counter()
    taken: set[int] = set()
    for t in turns:
        partner = {n.id for k, n in t.near.items() if abs(k) == 1}
        if ahead[t.session] and not partner & taken:
            t.score *= share ** ahead[t.session]
        ahead[t.session] += 1
        taken.add(t.id)
    turns.sort(key=lambda t: (-t.score, -t.id))


RARE = 12  # a term of at most this many turns of the chat names a thing (a place, a pet, a person, a trail)


@dataclass(slots=True)
class Echoes:
    """The best turns of a search (one a session) and their rare terms."""

    anchors: list[tuple[Turn, float, dict[str, float]]] = field(default_factory=list)  # turn, score, rare terms
    ids: list[int] = field(default_factory=list)  # the turns holding their rare terms


def echoes(
    conn: sqlite3.Connection,
    lo: int,
    hi: int,
    docs: int,
    ranked: list[Turn],
    top: int,
    asked: frozenset[str],
    plain: float = 1.0,
) -> Echoes:
    """The ``top`` best related turns of ``ranked`` (best first; one a session), their rare terms (of at
    most RARE turns of the chat, ids ``lo``..``hi``, ``docs`` turns; not the query's own terms and their
    related terms, ``asked``, nor the speaker's name) with their weights, and the turns holding them. A term
    the turn writes only in lower case weighs ``plain`` of its idf: a capitalised one names the episode (a pet,
    a place, a trail), a plain one ("clay", "boxes") may be any day's."""
    out = Echoes()
    sessions: set[int] = set()
    sql = (
        "SELECT count(*), group_concat(rowid) FROM (SELECT rowid FROM fts WHERE fts MATCH ? AND rowid "
        "BETWEEN ? AND ? LIMIT ?)"
    )
    for t in ranked:
        if len(out.anchors) >= top:
            break
        if not t.related or t.session in sessions:
            continue
        sessions.add(t.session)
        rare: dict[str, float] = {}
        name = set(doc_terms(t.speaker or ""))  # its speaker's name, in its "Name: " prefix
        lower = plain_terms(split_quote(t.content)[1]) if plain < 1 else set()
        # what it names beyond the query's words (sorted: the same sums, so the same order of equal scores, in
        # every process)
        for term in sorted(set(own_terms(t.terms).split()) - asked - name):
            n, ids = conn.execute(sql, (f'"{term}"', lo, hi, RARE + 1)).fetchone()
            if 1 < n <= RARE:
                rare[term] = math.log(1 + (docs - n + 0.5) / (n + 0.5)) * (plain if term in lower else 1.0)
                out.ids += [int(i) for i in ids.split(",")]
        out.anchors.append((t, t.score, rare))
    return out


def mark_echoes(found: Echoes, turns: Iterable[Turn], docs: int) -> None:
    """Each turn's ``echo``: the most it echoes of a turn of ``found`` said by the same person in another
    session: that turn's score times the weight of its rare terms the turn holds (one held by three turns
    of the chat, of ``docs``: all of it); a turn that echoes one is related to the query as it is."""
    full = math.log(1 + (docs - 3 + 0.5) / 3.5)
    for t in turns:
        best = 0.0
        held = set(own_terms(t.terms).split())
        for a, score, rare in found.anchors:
            if a.session == t.session or (a.speaker, a.role) != (t.speaker, t.role):
                continue
            best = max(best, score * min(1.0, sum(w for term, w in rare.items() if term in held) / full))
        t.echo = best
        if best > 0:
            t.related = True


def asks_for_many(text: str) -> bool:
    """Whether a question asks for a list, the answer spread over many days: what or which and a plural
    noun ("What hobbies does Deb have?", "Which places have Mel and Caro been to?"), "what are X's
    hobbies?", "both", "how many", "what has X done", "where has X camped", "what does X do to / for / in /
    on ..." ("to stay fit", "for fun": what they do, not what they did once), "what does X like / love / enjoy
    ..." ("What do Mel's kids like?", "What does Deb enjoy doing?": what they like, no thing named), "what
    animals live with X", "What kind of pets does X have?", "Name the cities X has been to.", "취미들", "모두",
    "뭐뭐", "몇 번", "지금까지 뭘 그렸어?", "주로 뭐 해?"."""
    if _MANY.search(text.casefold()) or _KO_MANY.search(text):
        return True
    head = _HEAD.search(text)
    if head is not None:  # "hobbies", "places", "musical instruments", "artists/bands"; "kinds of" anything
        return head.group(1) in _KINDS or any(_plural(w) for w in re.split(r"\s+|/", head.group(2)) if w)
    named = _NAME.match(text)
    if named is not None:
        return any(_plural(w) for w in re.findall(r"[\w']+", named.group(1)))  # "List Deb's hobbies."
    said = _NOUN_VERB.search(text)
    return said is not None and any(
        verb is not None and verb not in DOC_STOPWORDS and _plural(noun)
        for noun, verb in ((said.group(1), said.group(2)), (said.group(2), said.group(3)))
    )


def plain_list(text: str, many: bool | None = None) -> str:
    """``text`` without the verb asking for a list: "Name the cities Evan has been to." -> "cities Evan has been to."
    ("name" and "list" are no words to find: a chat that never says them would have nothing related); what someone
    likes doing asked for their hobbies: "What does Deb enjoy doing?" -> "What does Deb hobbies?" (the question names
    nothing else to find). ``many``: ``asks_for_many(text)`` when known already."""
    likes = _LIKES_DOING.search(text)
    if likes is not None:
        return f"{text[: likes.start('verb')]}hobbies{text[likes.end('verb') :]}"
    named = _NAME.match(text)
    return text[named.start(1) :] if named is not None and (asks_for_many(text) if many is None else many) else text


def _plural(word: str) -> bool:
    """Whether ``word`` is an English plural noun, as far as its ending tells ("hobbies", not "class", "news")."""
    lower = word.casefold()
    return (
        len(lower) > 3
        and lower.endswith("s")
        and not lower.endswith("ss")
        and lower not in _NOT_PLURAL
        and stem(lower) != lower
    )
