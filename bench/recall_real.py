# ruff: noqa: E501  (tables of sentences)
"""The ``real`` layout of bench.recall_persona: its conversations made as untidy as chats between people are.

The same lives, sessions and questions (bench.recall_persona, ``named``), rewritten as a messenger
export of two friends would read (an own random stream per seed: the questions and the lives stay):

- both people in the ``user`` role, each message's sender in ``name`` only (no ``"Name: "``), and one of
  them renamed partway (the display name changes: "Caroline" becomes "caro_p"), so one person has two names;
- the friend calls them by nicknames, in lowercase, and misspells names ("mel", "Melly", "Melaine");
- bursts: a fact comes after "omg" / "ok so guess what" from the same person, a reply is followed by
  "lol" or "sooo true", several short messages in a row by one person;
- long messages mixing topics: a fact with a sentence about something else before or after it;
- typed fast: a quarter of the messages not mixing topics in lower case, without their last full stop, the
  facts as well as the small talk (until 2026-12-04 only the messages that were no question's evidence: a
  ranking could have learnt that a message in lower case is never the answer);
- photos with only a caption: "[shared an image: …]" becomes a message of its own, "[photo] …";
- more small talk between the facts;
- with ``typos`` (the ``typos`` style of bench.recall_eval): typing errors in the messages' words too, a
  letter swapped, dropped or doubled in one word of a share of the messages (an own random stream: the
  conversation is otherwise the ``real`` one). The questions are spelt right.

Every question keeps its evidence (the message holding the fact, wherever it moved); the questions
still name people by their full or short name, as someone asking would.
"""

from __future__ import annotations

import random
import re

from bench import recall_persona
from bench.recall_persona import ECHO, SMALL, Conversation, Question

NICKS = {
    "Caroline": ["caro", "Carrie", "C"], "Melanie": ["mel", "Melly", "M"], "Jonathan": ["jon", "Jonny", "J"],
    "Gina": ["gi", "Gigi", "G"], "Nathaniel": ["nate", "Nat", "N"], "Joanna": ["jo", "Jojo", "J"],
    "Deborah": ["deb", "Debbie", "D"], "Calvin": ["cal", "Cally", "C"], "Andrew": ["andy", "Drew", "A"],
    "Audrey": ["aud", "Auds", "A"], "Timothy": ["tim", "Timmy", "T"], "Evangeline": ["evie", "Eve", "E"],
    "Maximilian": ["max", "Maxie", "M"], "Samantha": ["sam", "Sammy", "S"], "Roberto": ["rob", "Robbie", "R"],
    "Priyanka": ["priya", "Pri", "P"],
}  # fmt: skip
BEFORE = ["omg", "ok so guess what", "wait", "sooo", "hey!!", "ok listen", "haha ok"]
AFTER = ["lol", "sooo true", "haha", "anyway", "😂", "yeah", "ikr", "brb", "ok", "omg yes"]
MIXED = [
    "Also my car made a weird noise again this morning.", "Btw did you watch the game last night?",
    "Ugh and I still haven't done my taxes.", "Side note, the new cafe on 5th is finally open.",
    "Oh and my phone screen cracked, great timing.", "Anyway the weather is awful here today.",
]  # fmt: skip
_IMAGE = re.compile(r"\s*\[shared an image: ([^\]]+)\]")


def _misspell(name: str, rnd: random.Random) -> str:
    """A typo: two letters swapped, one dropped or doubled."""
    if len(name) < 4:
        return name.lower()
    i = rnd.randrange(1, len(name) - 2)
    kind = rnd.randrange(3)
    if kind == 0:
        return name[:i] + name[i + 1] + name[i] + name[i + 2 :]
    if kind == 1:
        return name[:i] + name[i + 1 :]
    return name[:i] + name[i] + name[i:]


TYPO_SHARE = 0.3  # of the messages (of those with a word to mistype) with a typing error in one word
_TYPO_WORD = re.compile(r"\b[a-z]{5,}\b")


def _typos(lines: list[dict[str, object]], seed: int) -> None:
    """A typing error in one word of TYPO_SHARE of the messages: a word of five letters or more in lower case
    (a capitalised name stays; one typed in lower case may get a second typo). Photos' captions stay."""
    rnd = random.Random(seed * 104729 + 11)
    for m in lines:
        text = str(m["content"])
        if text.startswith("[photo]") or rnd.random() >= TYPO_SHARE:
            continue
        words = list(_TYPO_WORD.finditer(text))
        if words:
            w = rnd.choice(words)
            m["content"] = text[: w.start()] + _misspell(w.group(0), rnd) + text[w.end() :]


def generate(seed: int, *, hard: bool = True, typos: bool = False) -> Conversation:
    """The ``named`` conversation of ``seed``, untidy (see the module); its questions' evidence follows
    the messages."""
    conv = recall_persona.generate(seed, layout="named", hard=hard)
    rnd = random.Random(seed * 7727 + 3)
    lines = conv.files[None]
    names = sorted({str(m["name"]) for m in lines})
    renamed = rnd.choice(names)
    rename_at = rnd.randrange(len(lines) // 3, 2 * len(lines) // 3)
    display = {renamed: renamed.lower()[:4] + "_" + rnd.choice("pkms")}
    evidence = {line for q in conv.questions for f, line in q.evidence if f is None}
    out: list[dict[str, object]] = []
    moved: dict[int, int] = {}

    def emit(name: str, text: str, at: object) -> None:
        shown = display[name] if name in display and len(out) >= rename_at else name
        out.append({"role": "user", "name": shown, "content": text, "at": at})

    def call_names(text: str) -> str:
        for person in names:
            for short in (person, *NICKS.get(person, [])[:1]):
                said = re.compile(rf"\b{re.escape(short)}\b")  # the name as a word: not "cal" in "calves"
                if short and said.search(text) and rnd.random() < 0.6:
                    choice = rnd.choice([short.lower(), _misspell(short, rnd), *NICKS.get(person, [])[1:2]])
                    text = said.sub(choice, text)
        return text

    for number, m in enumerate(lines, 1):
        name, at = str(m["name"]), m["at"]
        text = str(m["content"]).split(": ", 1)[1] if ": " in str(m["content"]) else str(m["content"])
        text = call_names(text)
        image = _IMAGE.search(text)
        if image:
            text = _IMAGE.sub("", text)
        if number in evidence and rnd.random() < 0.4:
            emit(name, rnd.choice(BEFORE), at)  # a burst: the fact comes after a short message
        if number in evidence and rnd.random() < 0.3:
            text = f"{text} {rnd.choice(MIXED)}" if rnd.random() < 0.5 else f"{rnd.choice(MIXED)} {text}"
        elif rnd.random() < 0.25:
            text = text.lower().rstrip(".!")  # typed fast: the facts too (a message in lower case may be the answer)
        emit(name, text, at)
        moved[number] = len(out)
        if image:
            emit(name, f"[photo] {image.group(1)}", at)
        if rnd.random() < 0.3:
            for _ in range(rnd.randint(1, 3)):
                emit(name, rnd.choice(AFTER), at)  # several short messages in a row
        if rnd.random() < 0.15:  # more small talk between the facts
            other = next(n for n in names if n != name)
            emit(other, rnd.choice([s.format(o=call_names(name)) for s in SMALL] + ECHO[rnd.choice(sorted(ECHO))]), at)
    if typos:
        _typos(out, seed)
    questions = [Question(q.text, q.kind, [(f, moved[n]) for f, n in q.evidence]) for q in conv.questions]
    return Conversation(conv.chat, {None: out}, questions, conv.never)
