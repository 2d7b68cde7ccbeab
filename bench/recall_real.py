# ruff: noqa: E501  (tables of sentences)
"""The ``real`` layout of bench.recall_persona: its conversations made as untidy as chats between people are.

The same lives, sessions and questions (bench.recall_persona, ``named``), rewritten as a messenger
export of two friends would read (an own random stream per seed: the questions and the lives stay):

- both people in the ``user`` role, each message's sender in ``name`` only (no ``"Name: "``), and one of
  them renamed partway (the display name changes: "Caroline" becomes "caro_p"), so one person has two names;
- the friend calls them by nicknames, in lowercase, and misspells names ("mel", "Melly", "Melaine");
- bursts: a fact comes after "omg" / "ok so guess what" from the same person, a reply is followed by
  "lol" or "sooo true", several short messages in a row by one person;
- long messages mixing topics: a message with a sentence about something else before or after it ("Btw my
  kettle died on me today."), the facts and the small talk alike, each aside made from parts so that few are
  said twice (until 2026-12-04 only the facts, from six sentences: a message with one of them was always some
  question's answer, and the rare words of the six linked the answers to each other);
- typed fast: a quarter of the messages not mixing topics in lower case, without their last full stop, the
  facts as well as the small talk (until 2026-12-04 only the messages that were no question's evidence: a
  ranking could have learnt that a message in lower case is never the answer);
- photos with only a caption: "[shared an image: …]" becomes a message of its own, "[photo] …";
- more small talk between the facts;
- with ``replies`` (the ``replies`` style of bench.recall_eval): an answer to the other person's question sent
  as a Telegram reply, half of them when other messages came between and a fifth otherwise, stored as the bot
  stores a reply and imports one (memory.imports.formats): the question quoted before it (an own random stream:
  the conversation is otherwise the ``real`` one);
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
from memory.content import MAX_REPLY_CHARS, quote_block, shorten
from memory.recall.text import split_quote

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
# Asides, a sentence about something else: made from parts, so that nearly every one is said once (a chat's
# asides are not six sentences repeated; repeated, their words would link the messages holding them). None
# touches what a question never answered in the chat asks (bench.recall_persona.OFF_TOPIC: no election, no
# repairs, no bar, no club): an aside must not answer it
_OPEN = ["Also", "Btw", "Oh and", "Side note,", "Anyway", "Ugh and", "Random but", "Unrelated, but"]
_THINGS = ["car", "phone", "fridge", "heater", "kettle", "washing machine", "dishwasher", "toaster", "printer",
           "microwave", "vacuum cleaner", "headphones", "doorbell"]  # fmt: skip
_BROKE = ["made a weird noise again this morning", "died on me today", "is acting up again",
          "is fine again, no idea why", "stopped working, great timing", "needs replacing soon",
          "is making that clicking sound again"]  # fmt: skip
_SHOWS = ["the finale", "that documentary", "the debate", "the talk show", "the awards", "the quiz show",
          "the new season", "the cooking contest", "the weather forecast", "the baking show"]  # fmt: skip
_SHOPS = ["cafe", "bakery", "pharmacy", "noodle place", "hardware store", "dry cleaner", "taco place", "florist",
          "ice cream shop", "barber"]  # fmt: skip
_STREETS = ["on 5th", "on Main Street", "on Elm", "on Oak Avenue", "round the corner", "on Pine Road", "by the station"]
_CHORES = ["done my taxes", "called the dentist", "returned that parcel", "renewed my passport",
           "answered my emails", "cleaned the oven", "paid the parking ticket", "sorted the recycling",
           "sent that form back", "booked the car service"]  # fmt: skip
_WEATHER = ["awful", "so weird", "freezing", "way too hot", "grey and gloomy", "surprisingly nice", "so windy",
            "drizzly all day"]  # fmt: skip
_SMALL_ASIDES = ["my {thing} {broke}.", "did you watch {show} last night?", "the new {shop} {street} is finally open.",
                 "I still haven't {chore}.", "the weather is {weather} here today."]  # fmt: skip


def _aside(rnd: random.Random) -> str:
    """A sentence about something else ("Btw my kettle died on me today.")."""
    body = rnd.choice(_SMALL_ASIDES).format(
        thing=rnd.choice(_THINGS), broke=rnd.choice(_BROKE), show=rnd.choice(_SHOWS), shop=rnd.choice(_SHOPS),
        street=rnd.choice(_STREETS), chore=rnd.choice(_CHORES), weather=rnd.choice(_WEATHER),
    )  # fmt: skip
    return f"{rnd.choice(_OPEN)} {body}"


MIX_SHARE = 0.3  # of every message of five words or more: an aside before or after it
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


def generate(seed: int, *, hard: bool = True, typos: bool = False, replies: bool = False) -> Conversation:
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
    replying = random.Random(seed * 7919 + 5)  # replies: a stream of their own, the conversation stays
    asked: tuple[int, str] | None = None  # the latest line's message (its index in ``out``, who), if it asks

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
        if len(text.split()) >= 5 and rnd.random() < MIX_SHARE:  # the facts and the small talk alike
            text = f"{text} {_aside(rnd)}" if rnd.random() < 0.5 else f"{_aside(rnd)} {text}"
        elif rnd.random() < 0.25:
            text = text.lower().rstrip(".!")  # typed fast: the facts too (a message in lower case may be the answer)
        if replies and asked is not None and asked[1] != name:
            question = out[asked[0]]
            if replying.random() < (0.5 if asked[0] < len(out) - 1 else 0.2):  # more when messages came between
                # what the question said, not what it quoted (as the bot and the importer quote a message)
                said = shorten(f"{question['name']}: {split_quote(str(question['content']))[1]}", MAX_REPLY_CHARS)
                text = f"{quote_block(said)}\n\n{text}"
        emit(name, text, at)
        moved[number] = len(out)
        asked = (len(out) - 1, name) if "?" in split_quote(text)[1] else None
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
