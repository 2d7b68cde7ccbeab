"""Who a name in a query stands for, when the chat's turns do not say it themselves.

A query word that names a speaker says whose turns to prefer (memory.recall.query.parse). When
the turns carry no names, or the name is a short form of one ("Andy" for Andrew), it is learned
from how the people talk: the one greeted and thanked by that name ("Hey Mel!", "Thanks, Andy.")
by the other, if that is how the name is mostly used, and by one of them only. Each look-up reads
at most VOCATIVE_SAMPLE of the newest turns holding the word.

A query typed without capitals ("what did mel paint", on a phone or in a hurry) first gets those the chat
writes (``cased``): "mel" is "Mel" inside its sentences, a name; "car" stays a car.

A Korean question names someone by the whole name or, as friends do, the given name ("민지" for 김민지),
with a particle after it ("민지는", "김민지의"): ``korean_forms`` and ``korean_named`` find those words, so
that they say whose turns to prefer instead of being searched as two-letter pieces ("최하" and "하나" of
최하나, the second also the word for "one").

A person who changed their display name partway ("Andrew", later "andr_s") has two speaker names:
``people`` takes two names for one person when the letters one starts with (at least HEAD of them)
begin the other's ("andr" of "andr_s" and "andrew"; not "Jo" of "Jonathan" and "Joanna"), unless more
than RENAMES names of the chat start with the same HEAD letters ("user1", "user2", ...).
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Callable

from memory.recall.store import ChatRow
from memory.recall.text import HANGUL_RUN, Term, split_quote, word_term

_VOCATIVE_LEAD = (
    r"(?:^|[.!?]\s+|,\s*|\b(?:hey|hi|hello|thanks|thank you|bye|oh|wow|congrats|congratulations|yeah|yes|aw+|"
    r"sorry|dear|morning|night),?\s+)"
)
VOCATIVE_SAMPLE = 100
HEAD = 4  # letters a display name starts with that tie it to another name of the same person
RENAMES = 3  # at most this many names start so: more are different people
_LETTERS = re.compile(r"[^\W\d_]+")


# the commonest one-syllable family names: a name of three syllables starting with one is called by the other two
_SURNAMES = frozenset(
    "김이박최정강조윤장임한오서신권황안송류전홍고문양손배백허유남심노하곽성차주우구민진나지엄채원천방공현함변염여추"
    "도소석선설마길연위표명기반왕금옥육인맹제모탁국어은편용예경봉사부"
)
# what may follow a name in a question ("민지는", "민지가", "민지한테", "민지네"): not 도 / 만, which make a word
# of the given name 하나 ("하나도", "하나만")
_NAME_PARTICLES = frozenset(
    "는 은 이 가 의 를 을 와 과 랑 이랑 하고 에게 한테 에게서 한테서 께서 씨 님 네 이네 이는 이가 이의 이랑은".split()
) | {""}


def korean_forms(name: str) -> set[str]:
    """The forms of a speaker name a Korean question names them by: the whole (spaces taken out), the given
    name of a name of three syllables after a family name (김민지 -> 민지), and each part of two syllables or more
    of a spaced one ("김 민지" -> 민지). Nothing for a name without Hangul."""
    parts = HANGUL_RUN.findall(name)
    whole = "".join(parts)
    forms = {whole} if len(whole) >= 2 else set()
    if len(parts) == 1 and len(whole) == 3 and whole[0] in _SURNAMES:
        forms.add(whole[1:])
    if len(parts) > 1:
        forms |= {p for p in parts if len(p) >= 2}
    return forms


def korean_named(text: str, forms: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """The words of ``text`` that name a speaker (one of ``forms``, maybe with a family name before it and a
    particle after it: "김민지는" for a 민지 whose Telegram first name is her given name), with whose names each is
    ({word: that person's names})."""
    out: dict[str, frozenset[str]] = {}
    for word in HANGUL_RUN.findall(text):
        bare = (word, word[1:]) if len(word) > 2 and word[0] in _SURNAMES else (word,)
        for form, who in forms.items():
            if any(w.startswith(form) and w[len(form) :] in _NAME_PARTICLES for w in bare):
                out[word] = out.get(word, frozenset()) | who
    return out


def without_words(text: str, words: set[str] | dict[str, frozenset[str]]) -> str:
    """``text`` with the Hangul ``words`` taken out."""
    return HANGUL_RUN.sub(lambda m: "" if m.group(0) in words else m.group(0), text)


def _head(name: str) -> str:
    """The letters ``name`` starts with ("andr" of "andr_s", "gina" of "gina 🌸")."""
    m = _LETTERS.match(name.casefold())
    return m.group(0) if m else ""


def people(names: set[str]) -> dict[str, frozenset[str]]:
    """Each speaker name with every name of the same person (itself included; see the module)."""
    heads = {n: _head(n) for n in names}
    alike: dict[str, list[str]] = {}  # names by their first HEAD letters: a group chat has many speakers
    for n, head in heads.items():
        if len(head) >= HEAD:
            alike.setdefault(head[:HEAD], []).append(n)

    def same(a: str, b: str) -> bool:
        x, y = sorted((heads[a], heads[b]), key=len)
        return y.startswith(x)

    out = {n: frozenset({n}) for n in names}
    for group in alike.values():
        if len(group) > RENAMES:  # "user1_x", "user2_x", "member 7": many people, not one renamed
            continue
        for n in group:
            out[n] = frozenset(m for m in group if m == n or same(n, m))
    return out


def _caller(
    conn: sqlite3.Connection, chat: ChatRow, word: str, term: str, *, named: bool, same: Callable[[str], str] = str
) -> str | None:
    """Who calls ``word`` as a name ("Hey Mel!", "Thanks, Andy."): the role (``named`` False: turns
    without speaker names) or the speaker (``named``: turns with them; ``same``: one name for each person's
    names) that says it so, if that is how the word is mostly used, and by that one only; else None."""
    who_column, speaker_test = ("t.speaker", "IS NOT NULL") if named else ("t.role", "IS NULL")
    sql = (
        f"SELECT {who_column}, t.content FROM fts f JOIN turns t ON t.id = f.rowid "
        f"WHERE fts MATCH ? AND f.rowid BETWEEN ? AND ? AND t.speaker {speaker_test} ORDER BY f.rowid DESC LIMIT ?"
    )
    rows: list[tuple[str, str]] = []
    for who, content in conn.execute(sql, (Term(term).fts(), chat.lo, chat.hi, VOCATIVE_SAMPLE)):
        quote, own = split_quote(content)  # a reply's own words: "Hey Mel!" quoted in Mel's reply is not Mel's
        if not quote or word.casefold() in own.casefold():
            rows.append((who, own))
    if len(rows) < 3:
        return None
    vocative = re.compile(_VOCATIVE_LEAD + re.escape(word) + r"\s*[!?,.]", re.IGNORECASE)
    said_by = Counter(same(who) for who, content in rows if vocative.search(content))
    if not said_by or sum(said_by.values()) < 0.5 * len(rows):
        return None
    who, n = said_by.most_common(1)[0]
    return who if n >= 0.85 * sum(said_by.values()) else None


def addressee(conn: sqlite3.Connection, chat: ChatRow, word: str, term: str) -> str | None:
    """The role of the person called ``word``, in a chat whose turns carry no names: who the
    other one greets and thanks by that name, if that is how the name is mostly used, and by one
    role only; else None."""
    role = _caller(conn, chat, word, term, named=False)
    if role is None:
        return None
    return "assistant" if role == "user" else "user"


def speaker_called(
    conn: sqlite3.Connection, chat: ChatRow, word: str, term: str, names: dict[str, frozenset[str]]
) -> frozenset[str] | None:
    """In a chat of two people (``names``: each speaker name with every name of its person, see ``people``), the
    names of the one called ``word`` by the other ("Thanks, Andy!"), if that is how the word is mostly used, and by
    one of them only; else None."""
    who = _caller(conn, chat, word, term, named=True, same=lambda n: min(names.get(n, {n})))  # before and after
    if who is None or who not in names:  # a rename, one caller
        return None
    return frozenset(names) - names[who]


# a capital after the first word, "I" ("I'm", "I've") aside: the writer capitalises names ("what did I tell mel": not)
_UPPER_INNER = re.compile(r"(?<=\S )(?!I\b)[A-Z]")
_LOWER = re.compile(r"\b([a-z]{2,})\b")
CASE_SAMPLE = 30  # the newest turns holding a word read to see how the chat writes it


def cased(conn: sqlite3.Connection, chat: ChatRow, text: str, words: int) -> str:
    """``text`` with the words the chat writes capitalised written so ("what hobbies does mel have" → "what
    hobbies does Mel have"; "car" stays "car"), when it capitalises no word after its first but "I" (typed in a
    hurry, or on a phone, which capitalises "I" by itself): its names would be words to find, not people. Looks
    up ``words`` of its words at most, each in the CASE_SAMPLE newest turns holding it (0.1 ms a question at a
    million messages)."""
    if words <= 0 or _UPPER_INNER.search(text):
        return text
    terms = {w: word_term(w) for w in dict.fromkeys(m.group(1) for m in _LOWER.finditer(text))}
    todo = [(w, term) for w, term in terms.items() if term is not None][:words]
    upper = {w for w, term in todo if capitalised(conn, chat, w, term)}
    if not upper:
        return text
    return _LOWER.sub(lambda m: m.group(1).capitalize() if m.group(1) in upper else m.group(1), text)


def capitalised(conn: sqlite3.Connection, chat: ChatRow, word: str, term: str, mostly: bool = True) -> bool:
    """Whether the chat mostly writes ``word`` (index term ``term``) with a capital inside a sentence (a name: "Hey
    Mel!", "in Denver"); ``mostly`` False: at least once (a place typed in lower case as often as not, elsewhere
    written with a capital: memory.recall.answer)."""
    sql = (
        "SELECT t.content FROM fts f JOIN turns t ON t.id = f.rowid "
        "WHERE fts MATCH ? AND f.rowid BETWEEN ? AND ? ORDER BY f.rowid DESC LIMIT ?"
    )
    found = re.compile(rf"\b{re.escape(word)}\b", re.IGNORECASE)
    up = down = 0
    for (quoted,) in conn.execute(sql, (Term(term).fts(), chat.lo, chat.hi, CASE_SAMPLE)):
        content = split_quote(quoted)[1]  # a reply's own words
        for m in found.finditer(content):
            if _starts(content, m.start()):  # a sentence's first word, or a message's ("Mel: " too)
                continue
            if m.group(0)[0].isupper():
                up += 1
            else:
                down += 1
    return up > down if mostly else up > 0


def _starts(text: str, at: int) -> bool:
    """Whether a sentence starts at ``at`` of ``text``: nothing but spaces before it since the text's start, a
    full stop, "!", "?" or ":"."""
    i = at - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return i < 0 or text[i] in ".!?:"
