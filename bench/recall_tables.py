"""What bench.recall_persona's conversations are made of, in one language (English there, Korean in
bench.recall_persona_ko)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Topic:
    """An episode of someone's life. ``say``: (who, text) lines, who 'S' (the subject) or 'O' (the
    friend); ``asks``: (kind, question, index of the evidence line in ``say``); ``again``: a later
    episode on the same topic (its asks may point at lines of both: 'a<i>' for ``again``'s lines);
    ``cat``: the topic's kind for the 'multi' questions across topics."""

    key: str
    cat: str
    say: list[tuple[str, str]]
    asks: list[tuple[str, str, int]]
    slots: dict[str, list[str]] = field(default_factory=dict)
    again: list[tuple[str, str]] | None = None
    again_asks: list[tuple[str, str, list[str]]] = field(default_factory=list)


@dataclass(frozen=True)
class Tables:
    """What a conversation is made of, in one language: its people (name, short name, pronoun), their
    lives' episodes, the small talk (greetings first, ``closings`` the farewells), the friend's chatter per
    kind of topic, the questions across topics, the weekdays an episode names and the questions no
    conversation answers. bench.recall_persona_ko has the Korean ones."""

    people: list[tuple[str, str, str]]
    topics: list[Topic]
    small: list[str]
    echo: dict[str, list[str]]
    multi_cats: dict[str, list[str]]
    off_topic: list[str]
    threads: list[tuple[str, tuple[str, ...]]]  # the harder questions (bench.recall_persona_hard): over topics
    guesses: list[tuple[str, str, int]]  # ... and from one episode
    weekdays: tuple[str, ...] = ("Friday", "Saturday", "Sunday", "Tuesday")
    mentions: bool = True  # episodes mentioned again in passing (bench.recall_persona_spread: English sentences)
    # the harder "when" questions (bench.recall_persona_when): (topic key, question) in other words, and by month
    when_words: list[tuple[str, str]] = field(default_factory=list)
    when_months: dict[str, str] = field(default_factory=dict)
    when_long: list[tuple[str, str]] = field(default_factory=list)  # ... and how long ("How long has {S} had...")
    when_forms: tuple[str, ...] = ()  # ... and other ways to ask when ("How long ago did "), for "When did " questions
    single_words: list[tuple[str, str]] = field(default_factory=list)  # one fact in other words (recall_persona_single)
    list_forms: tuple[str, ...] = ()  # other ways to ask for a list ("What kinds of ": recall_persona_lists)
    greetings: int = 4  # small[:greetings] open a session
    closings: tuple[int, int] = (16, 20)  # small[slice] closes one
