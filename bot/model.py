"""The model interface the assistant talks to, and a fake model for tests.

``ClaudeModel`` (bot/claude.py) is the real implementation; ``FakeModel`` sits
beside the interface it fakes: it answers from a queue and records what it was sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

TextCallback = Callable[[str], Awaitable[None]]
"""Receives each new piece of text as the model writes it."""


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "input": self.input_tokens,
            "output": self.output_tokens,
            "cache_read": self.cache_read_tokens,
            "cache_write": self.cache_write_tokens,
        }


@dataclass(frozen=True)
class Reply:
    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    stop_reason: str | None = None


class ModelError(Exception):
    """The model call failed. ``kind`` picks the message the user sees.

    kinds: rate_limit, overloaded, auth, timeout, connection, bad_request, server, empty
    """

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail


class Model(Protocol):
    name: str

    async def complete(
        self,
        *,
        system: Sequence[dict[str, Any]],
        messages: Sequence[dict[str, Any]],
        max_tokens: int | None = None,
        on_text: TextCallback | None = None,
    ) -> Reply: ...


Script = str | Exception | Callable[[Sequence[dict[str, Any]], Sequence[dict[str, Any]]], str]


@dataclass
class Call:
    system: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    max_tokens: int | None

    @property
    def system_text(self) -> str:
        return "\n".join(str(b.get("text", "")) for b in self.system)

    @property
    def last_user_text(self) -> str:
        content = self.messages[-1]["content"]
        if isinstance(content, str):
            return content
        return "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")


class FakeModel:
    """A scripted model: each call takes the next item of ``responses``.

    An item is the reply text, an exception to raise, or a function of
    (system, messages) returning the text. With the queue empty it echoes.
    ``calls`` records what every call was sent.
    """

    def __init__(self, responses: Sequence[Script] = (), *, name: str = "fake-model", chunk: int = 8) -> None:
        self.name = name
        self.responses: list[Script] = list(responses)
        self.calls: list[Call] = []
        self.chunk = chunk
        self.delay = 0.0

    def queue(self, *items: Script) -> None:
        self.responses.extend(items)

    async def complete(
        self,
        *,
        system: Sequence[dict[str, Any]],
        messages: Sequence[dict[str, Any]],
        max_tokens: int | None = None,
        on_text: TextCallback | None = None,
    ) -> Reply:
        call = Call([dict(b) for b in system], [dict(m) for m in messages], max_tokens)
        self.calls.append(call)
        if self.delay:
            await asyncio.sleep(self.delay)
        item: Script = self.responses.pop(0) if self.responses else f"echo: {call.last_user_text}"
        if isinstance(item, Exception):
            raise item
        text = item(system, messages) if callable(item) else item
        if on_text is not None:
            for i in range(0, len(text), self.chunk):
                await on_text(text[i : i + self.chunk])
        chars = sum(len(str(m.get("content"))) for m in messages) + len(call.system_text)
        return Reply(text, Usage(input_tokens=chars // 3, output_tokens=len(text) // 3), self.name, "end_turn")
