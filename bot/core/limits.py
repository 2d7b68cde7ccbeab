"""Daily limits and usage accounting: who may ask now, and what every model call cost whom.

``Limits`` sits between the front end and the ledger (memory/usage.py):

- ``admit(user, chat)`` is called when a question is accepted for answering, before any model
  call: it refuses a user over ``DAILY_MESSAGE_LIMIT`` questions or ``DAILY_TOKEN_LIMIT`` tokens
  today (days in ``TIMEZONE``), else counts the question at once, so many parallel messages
  cannot slip past the limit. A refused question is not counted, and nothing else is stored.
  An accepted question counts even if its answer then fails (it may have cost tokens, and
  failing on purpose must not be a way around the limit).
- ``record(spend)`` is the Assistant's ``on_spend`` sink: answers, tool rounds and summaries
  are charged to the user who caused them, in memory at once and in the file soon after.
- The owner is never limited (but counted). 0 means unlimited.

The token limit counts every token the model read (uncached input, cache writes and cache
reads) plus what it wrote; it is checked before a question, so the answer that crosses it is
still given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.core.ask import Spend
from memory.usage import UsageLedger

TERMINAL = "terminal"
"""The ledger's user for model calls without a Telegram user (the terminal chat: the owner at the keyboard)."""

WEEKDAYS_KO = "월화수목금토일"


def utc_now() -> datetime:
    return datetime.now(UTC)


def user_key(user_id: int | None) -> str:
    return TERMINAL if user_id is None else str(user_id)


@dataclass(frozen=True)
class Refusal:
    """Why a question was not accepted: which limit (``messages`` or ``tokens``), its value, when it resets."""

    kind: str
    limit: int
    resets_at: datetime


class Limits:
    def __init__(
        self,
        ledger: UsageLedger,
        *,
        messages: int = 0,
        tokens: int = 0,
        timezone: str = "Asia/Seoul",
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self.ledger = ledger
        self.messages = messages
        self.tokens = tokens
        self.timezone = timezone
        self.tz = ZoneInfo(timezone)
        self.now = now

    def day(self, when: datetime | None = None) -> str:
        """The day (``YYYY-MM-DD`` in TIMEZONE) that ``when`` (default: now) counts toward."""
        return (when or self.now()).astimezone(self.tz).date().isoformat()

    def resets_at(self, when: datetime | None = None) -> datetime:
        """The next midnight in TIMEZONE after ``when`` (default: now), as an aware local time."""
        local = (when or self.now()).astimezone(self.tz)
        return datetime.combine(local.date() + timedelta(days=1), time(0), self.tz)

    def over(self, user: str) -> Refusal | None:
        """The limit ``user`` has reached today, or None."""
        now = self.now()
        today = self.ledger.user_day(user, self.day(now))
        if self.messages and today.questions >= self.messages:
            return Refusal("messages", self.messages, self.resets_at(now))
        if self.tokens and today.total_tokens() >= self.tokens:
            return Refusal("tokens", self.tokens, self.resets_at(now))
        return None

    def admit(self, user_id: int | None, chat_id: int | str, *, exempt: bool = False) -> Refusal | None:
        """Accept a question (and count it) or say which limit refuses it. Cheap: no file I/O."""
        user = user_key(user_id)
        if not exempt and (refusal := self.over(user)) is not None:
            return refusal
        self.ledger.add_question(user, str(chat_id), self.day())
        return None

    def record(self, spend: Spend) -> None:
        """The Assistant's ``on_spend`` sink: charge one model call to its user and chat (cheap: in memory)."""
        u = spend.usage
        tokens = (u.input_tokens, u.output_tokens, u.cache_write_tokens, u.cache_read_tokens)
        self.ledger.add_usage(user_key(spend.user_id), spend.chat_id, spend.model, tokens, self.day())


def when_text(moment: datetime, timezone: str, lang: str) -> str:
    """``11월 30일 (월) 00:00 (한국 시각)`` / ``Mon Nov 30, 00:00 (Korea time)`` in ``timezone``."""
    local = moment.astimezone(ZoneInfo(timezone))
    if lang == "ko":
        where = "한국 시각" if timezone == "Asia/Seoul" else f"{timezone} 시각"
        return f"{local.month}월 {local.day}일 ({WEEKDAYS_KO[local.weekday()]}) {local:%H:%M} ({where})"
    where = "Korea time" if timezone == "Asia/Seoul" else f"{timezone} time"
    return f"{local:%a %b} {local.day}, {local:%H:%M} ({where})"
