"""Questions for a list asked in other forms (issue 32): bench.recall_persona asks "What hobbies does Deb have?" and
"Which places has Cal travelled to?"; real sets also ask "What kind of pets does John have?", "What types of desserts
has Maria baked?" and "Name the cities Evan has been to." (the public benchmark's several-sessions questions).

``forms`` asks about half of the ``multi`` questions of the form "What / Which <plural noun> does / do / has / have
<someone> ...?" again in one of ``LIST_FORMS``, of the same kind and evidence, and every question for someone's hobbies
or free-time activities again without a noun, in one of ``LIKES`` ("What does Deb enjoy doing?"; real sets ask "What do
Melanie's kids like?"); from their own random streams and added after every other question, so the conversation and the
earlier questions stay the ones recall_persona wrote. English only (``Tables.list_forms``).
"""

from __future__ import annotations

import random
import re

Line = tuple[str | None, int]

LIST_FORMS = ("What kinds of ", "What type of ", "Name the ")
# what someone likes, asked without a noun: the hobbies question and the free-time one, each in one of its forms
LIKES = (
    (
        re.compile(r"What hobbies does (?P<who>\S+) have\?"),
        ("What does {who} enjoy doing?", "What does {who} like to do?", "What does {who} love doing?"),
    ),
    (
        re.compile(r"What activities does (?P<who>\S+) enjoy in (?P<whose>his|her) free time\?"),
        ("What does {who} enjoy in {whose} free time?", "What does {who} like doing in {whose} free time?"),
    ),
)

# "What creative hobbies do Aud and Cal have?": the noun (in lower case), the verb, who, the rest
_ASKS = re.compile(
    r"(?:What|Which) (?P<noun>[a-z]+(?: [a-z]+)?) (?P<verb>does|do|has|have) (?P<who>\S+(?: and \S+)?) (?P<rest>.+)\?"
)


def _third_person(verb: str) -> str:
    """The verb said of one person: "has" for "have", "enjoys", "goes", "carries"."""
    if verb in ("have", "do", "go"):
        return {"have": "has", "do": "does", "go": "goes"}[verb]
    if verb.endswith("y") and verb[-2:-1] not in tuple("aeiou"):
        return verb[:-1] + "ies"
    return verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "z")) else "s")


def _named(m: re.Match[str]) -> str:
    """The question as "Name the ...": "Name the hobbies Deb has.", "Name the places Cal has travelled to."."""
    verb, rest = m["verb"], m["rest"]
    if verb == "does":
        first, _, after = rest.partition(" ")
        rest = f"{_third_person(first)} {after}".rstrip()
    elif verb in ("has", "have"):
        rest = f"{verb} {rest}"
    return f"Name the {m['noun']} {m['who']} {rest}."


def forms(
    seed: int, asked: list[tuple[str, str, list[Line]]], ways: tuple[str, ...] = LIST_FORMS
) -> list[tuple[str, str, list[Line]]]:
    """About half of the ``multi`` questions in ``asked`` naming a plural noun ("What hobbies does Deb have?") asked
    again in another of ``ways`` ("What kinds of hobbies does Deb have?", "Name the hobbies Deb has."), of the same
    kind and evidence, then the questions of ``likes``. An own random stream; nothing without ``ways``."""
    rnd = random.Random(seed * 6007 + 11)
    out = []
    for text, kind, evidence in asked:
        m = _ASKS.fullmatch(text) if ways and kind == "multi" else None
        if m is None or not m["noun"].endswith("s"):
            continue
        if rnd.random() < 0.5:
            way = rnd.choice(ways)
            question = _named(m) if way == "Name the " else way + text.split(" ", 1)[1]
            out.append((question, kind, evidence))
    return out + likes(seed, asked) if ways else out


def likes(seed: int, asked: list[tuple[str, str, list[Line]]]) -> list[tuple[str, str, list[Line]]]:
    """Every ``multi`` question in ``asked`` for someone's hobbies or free-time activities asked again without a noun,
    in one of the forms of ``LIKES`` ("What does Deb enjoy doing?"), of the same kind and evidence. An own random
    stream."""
    rnd = random.Random(seed * 7919 + 5)
    out = []
    for text, kind, evidence in asked:
        for pattern, ways in LIKES if kind == "multi" else ():
            if (m := pattern.fullmatch(text)) is not None:
                out.append((rnd.choice(ways).format(**m.groupdict()), kind, evidence))
    return out
