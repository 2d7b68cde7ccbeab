"""What goes in and out of the ask() service: the question, the answer, and what a model call spends.

Front ends build a ``Question`` and get an ``Answer`` (bot/core/ask.py); ``Spend`` reports one model
call's usage with the user who caused it; ``Held``/``Reserve`` are how the daily token budget is held
before each call (bot/core/limits.py implements them).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from bot.claude.model import Usage

ChatId = int | str


@dataclass(frozen=True)
class Spend:
    """One model call's usage and who caused it (``kind``: answer, tool, summary)."""

    chat_id: str
    user_id: int | None
    kind: str
    model: str
    usage: Usage


SpendSink = Callable[[Spend], None]


class Held(Protocol):
    """What a model call holds of its user's daily token budget (bot/core/limits.py ``Hold``), and whether
    it may search the web (its searches are held too: DAILY_SEARCH_LIMIT)."""

    search: bool

    def park(self) -> None:
        """The call ended and its usage is recorded; the question may make another."""

    def release(self) -> None:
        """The question ended."""


Reserve = Callable[[int | None, Mapping[str, Any], Held | None], Awaitable[Held]]
"""(user, request, the hold of the question's previous call) before a model call -> its hold; may wait for
the user's other calls; raises ModelError("limit") when the user's daily token budget is spent."""


class NothingToRetry(Exception):
    """/retry with no question to re-ask."""


@dataclass(frozen=True)
class Answer:
    text: str
    usage: Usage = field(default_factory=Usage)
    tool_rounds: int = 0
    tool_calls: tuple[str, ...] = ()  # names of the tools that ran, in order
    saved: bool = True  # False: the turn could not be written (disk full, read-only); the user must be told
    sources: tuple[tuple[str, str], ...] = ()  # (title, url) of the web pages listed under ``text``
    note: str = ""  # the line under the answer when the web could not be searched (also in ``text``)


@dataclass(frozen=True)
class Question:
    """A question as the front end received it."""

    text: str
    attachments: tuple[dict[str, Any], ...] = ()  # API content blocks sent with it, never stored
    meta: Mapping[str, Any] = field(default_factory=dict)  # extra fields stored with the user turn
    user_id: int | None = None  # who asks (for cost accounting; not stored unless in meta)
    may_manage: Callable[[], bool] | None = None  # the asker's rights for the tools (ToolContext); None: all


def valid_text(text: str) -> str:
    """``text`` with lone surrogates (invalid Unicode a client may send) replaced by U+FFFD.

    Neither the API (JSON in UTF-8) nor the transcript can carry them.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def utc_now() -> datetime:
    return datetime.now(UTC)
