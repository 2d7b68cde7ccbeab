"""Helpers shared by the summary-memory tests: a scripted fake summarizer and checks."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from bot.core.ask import Assistant
from memory.summary import HEADINGS, Budget
from memory.transcript import Transcript
from memory.window import content_text

SummarizerScript = str | Exception | Callable[[str | None, list[dict[str, Any]]], str]


def memo(facts: Sequence[str], *, goal: str = "대화를 이어가기") -> str:
    """A valid memo with the fixed headings; ``facts`` go under 핵심 사실."""
    body = {h: "없음" for h in HEADINGS}
    body["사용자의 목표"] = f"- {goal}"
    if facts:
        body["핵심 사실"] = "\n".join(f"- {f}" for f in facts)
    return "\n".join(f"## {h}\n{body[h]}" for h in HEADINGS)


def facts_of(summary: str | None) -> list[str]:
    """The fact lines of a memo written by ``memo``."""
    if not summary:
        return []
    section = summary.split("## 핵심 사실", 1)[1].split("\n## ", 1)[0]
    return [line[2:] for line in section.splitlines() if line.startswith("- ")]


def digit_facts(previous: str | None, messages: list[dict[str, Any]]) -> str:
    """Keeps the previous facts and adds every message text that contains a digit."""
    facts = facts_of(previous)
    for m in messages:
        text = content_text(m.get("content"))
        if re.search(r"\d", text) and text not in facts:
            facts.append(text)
    return memo(facts)


class FakeSummarizer:
    """A scripted summarizer: each call takes the next item (text, exception or function).

    With the script empty it keeps the previous facts plus messages with digits.
    ``calls`` records exactly what it received.
    """

    def __init__(self, *script: SummarizerScript) -> None:
        self.script: list[SummarizerScript] = list(script)
        self.calls: list[tuple[str | None, list[dict[str, Any]]]] = []
        self.name = "fake-summarizer"

    def queue(self, *items: SummarizerScript) -> None:
        self.script.extend(items)

    async def __call__(self, previous: str | None, messages: list[dict[str, Any]]) -> str:
        self.calls.append((previous, [dict(m) for m in messages]))
        item = self.script.pop(0) if self.script else digit_facts
        if isinstance(item, Exception):
            raise item
        if callable(item):
            return item(previous, messages)
        return item


def small_budget(**kw: int) -> Budget:
    values = {
        "trigger_messages": 8,
        "trigger_chars": 100_000,
        "trigger_tokens": 100_000,
        "keep_messages": 4,
        "max_summary_chars": 100_000,
        "chunk_messages": 40,
    }
    values.update(kw)
    return Budget(**values)


def check_invariant(assistant: Assistant, transcript: Transcript, chat_id: int | str) -> None:
    """Summary coverage + the verbatim tail = every stored message, with no gap and no overlap."""
    everything = list(transcript.read(chat_id))
    summary = assistant.memory.load(chat_id)
    end = summary.end if summary else 0
    covered = [e for e in everything if e.end <= end]
    after = [e for e in everything if e.offset >= end]
    assert len(covered) + len(after) == len(everything)  # no entry straddles the offset
    assert (summary.covers if summary else 0) == len(covered)
    if covered:
        assert covered[-1].end == end
    # the next request carries exactly the messages after the coverage, verbatim
    history = assistant.history(chat_id)
    assert history == [dict(e.data) for e in after], "the verbatim tail is not the rest of the transcript"
    if history:
        assert history[0]["role"] == "user"
