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
reads) plus what it wrote. Tokens are recorded only after a call, so many questions at once would
all pass a check made on arrival; instead the limit is *reserved*:

- ``admit`` holds ``ADMISSION_TOKENS`` for the question it accepts (released at its first model
  call, or after ``HOLD_FOR`` if it never makes one);
- ``reserve(user, request)`` is called before **every** model call (answers, tool rounds,
  summaries): it refuses (``OverBudget``) when what the user spent today plus what their calls
  in flight and their admitted questions hold has reached the limit, else holds an estimate of
  this call (its whole prompt and ``max_tokens``) until the call's usage is recorded.

So whatever arrives at once, the last call let through saw budget left: the day ends at most one
call over the limit (the call that crosses it is still answered).

Web searches (``DAILY_SEARCH_LIMIT``) are held the same way: a call that may search holds the
``searches`` its request may run (the web tool's ``max_uses``) until its usage is recorded, and a call
may search only while the searches spent today plus those held by the user's calls in flight are under
the limit. So the day ends at most one call's ``max_uses`` over the limit, whatever runs at once.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.core.ask import Spend
from memory.usage import UsageLedger

TERMINAL = "terminal"
"""The ledger's user for model calls without a Telegram user (the terminal chat: the owner at the keyboard)."""

WEEKDAYS_KO = "월화수목금토일"

ADMISSION_TOKENS = 3000
"""Tokens held for an accepted question until its first model call (a short question with memory)."""
HOLD_FOR = timedelta(minutes=15)
"""An admission hold whose question never made a model call (a failed download, …) lapses after this."""
IMAGE_TOKENS = 1600
"""Tokens counted for one image block (Claude scales images to about 1.15 megapixels: ~1,600 tokens)."""
CALLS_PER_QUESTION = 5
"""Model calls one question may make at most (the tool rounds and the answer; the Assistant sets its own)."""
OUTPUT_TOKENS = 4096
"""Output tokens held for a call that sets no ``max_tokens``."""


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


class OverBudget(Exception):
    """A model call refused before it was made: the user's daily token budget is spent or spoken for."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(f"daily {refusal.kind} limit {refusal.limit} reached")
        self.refusal = refusal


def _blocks_tokens(value: Any) -> int:
    """A generous token estimate of API content: ~3 UTF-8 bytes a token, a fixed figure per image."""
    if isinstance(value, list):
        return sum(_blocks_tokens(v) for v in value)
    if isinstance(value, Mapping):
        if value.get("type") == "image":
            return IMAGE_TOKENS
        return sum(_blocks_tokens(v) for v in value.values()) + 2
    if isinstance(value, str):
        return math.ceil(len(value.encode("utf-8")) / 3)
    return 1


def request_tokens(request: Mapping[str, Any]) -> int:
    """What one model call may cost at most, roughly: its whole prompt (system, tools, messages) and max_tokens."""
    prompt = sum(_blocks_tokens(request.get(k)) for k in ("system", "tools", "messages"))
    out = request.get("max_tokens")
    return prompt + (out if isinstance(out, int) and out > 0 else OUTPUT_TOKENS)


@dataclass(eq=False)
class Hold:
    """Tokens held for a user: an admitted question (until its first call), or a question's model call.

    A call's hold is *running* while the call is made; between two rounds of its question it is
    *parked* (the next call will cost about as much); it ends with ``release`` when the question does.
    """

    limits: Limits
    user: str
    tokens: int
    until: datetime | None = None  # an admission hold lapses then
    running: bool = False
    released: bool = False
    searches: int = 0  # web searches held for this call (its max_uses) until its usage is recorded
    search: bool = True  # whether this call may search (the user's search budget was not spent or held)

    def park(self) -> None:
        """The call ended (its usage is recorded): keep the tokens for the question's next round."""
        self.limits._park(self)

    def release(self) -> None:
        self.limits._release(self)


class Limits:
    def __init__(
        self,
        ledger: UsageLedger,
        *,
        messages: int = 0,
        tokens: int = 0,
        searches: int = 0,
        timezone: str = "Asia/Seoul",
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self.ledger = ledger
        self.messages = messages
        self.tokens = tokens
        self.searches = searches  # DAILY_SEARCH_LIMIT: web searches a day per user but the owner (0: unlimited)
        self.timezone = timezone
        self.tz = ZoneInfo(timezone)
        self.now = now
        self.calls_per_question = CALLS_PER_QUESTION  # a question's model calls at most (its tool rounds + 1)
        self._holds: dict[str, list[Hold]] = {}  # user -> tokens held (admitted questions, calls in flight)
        self._lock = threading.Lock()  # holds may be released from any thread
        self._waiters: list[asyncio.Future[None]] = []  # calls waiting for a call in flight to end
        self._searches_held: dict[str, int] = {}  # user -> searches held by their calls in flight

    def day(self, when: datetime | None = None) -> str:
        """The day (``YYYY-MM-DD`` in TIMEZONE) that ``when`` (default: now) counts toward."""
        return (when or self.now()).astimezone(self.tz).date().isoformat()

    def resets_at(self, when: datetime | None = None) -> datetime:
        """The next midnight in TIMEZONE after ``when`` (default: now), as an aware local time."""
        local = (when or self.now()).astimezone(self.tz)
        return datetime.combine(local.date() + timedelta(days=1), time(0), self.tz)

    def held(self, user: str) -> int:
        """Tokens ``user``'s admitted questions and calls in flight hold now (lapsed admission holds dropped)."""
        now = self.now()
        with self._lock:
            holds = self._holds.get(user, [])
            for h in [h for h in holds if h.until is not None and now >= h.until]:
                h.released = True
                holds.remove(h)
            return sum(h.tokens for h in holds)

    def over(self, user: str, *, holds: bool = True) -> Refusal | None:
        """The limit ``user`` has reached today (tokens held count as spent unless ``holds`` is False), or None."""
        now = self.now()
        today = self.ledger.user_day(user, self.day(now))
        if self.messages and today.questions >= self.messages:
            return Refusal("messages", self.messages, self.resets_at(now))
        return self._over_tokens(user, today.total_tokens(), now, holds=holds)

    def _over_tokens(self, user: str, spent: int, now: datetime, *, holds: bool = True) -> Refusal | None:
        if self.tokens and spent + (self.held(user) if holds else 0) >= self.tokens:
            return Refusal("tokens", self.tokens, self.resets_at(now))
        return None

    def may_search(self, user_id: int | None, *, exempt: bool = False) -> bool:
        """Whether ``user_id`` may search the web now: the searches spent today and held by their calls in
        flight are under DAILY_SEARCH_LIMIT."""
        if exempt or not self.searches:
            return True
        user = user_key(user_id)
        with self._lock:
            held = self._searches_held.get(user, 0)
        return self.ledger.user_day(user, self.day()).searches + held < self.searches

    def _hold_searches(self, hold: Hold, wanted: int, exempt: bool) -> None:
        """Decide whether the call of ``hold`` may search, and hold its ``wanted`` searches if it may."""
        if exempt or not self.searches or wanted <= 0:
            return
        spent = self.ledger.user_day(hold.user, self.day()).searches
        with self._lock:
            held = self._searches_held.get(hold.user, 0)
            hold.search = spent + held < self.searches
            if hold.search:
                hold.searches = wanted
                self._searches_held[hold.user] = held + wanted

    def _free_searches(self, hold: Hold) -> None:  # under self._lock
        if hold.searches:
            left = self._searches_held.get(hold.user, 0) - hold.searches
            if left > 0:
                self._searches_held[hold.user] = left
            else:
                self._searches_held.pop(hold.user, None)
            hold.searches = 0

    def admit(
        self, user_id: int | None, chat_id: int | str, *, exempt: bool = False, hold: bool = True
    ) -> Refusal | None:
        """Accept a question (count it, hold ``ADMISSION_TOKENS`` for it unless ``hold`` is False: no model
        call follows) or say which limit refuses it. Cheap: no file I/O.
        """
        user = user_key(user_id)
        if not exempt and (refusal := self.over(user)) is not None:
            return refusal
        self.ledger.add_question(user, str(chat_id), self.day())
        if hold and not exempt and self.tokens:
            self._hold(Hold(self, user, ADMISSION_TOKENS, self.now() + HOLD_FOR))
        return None

    async def reserve(
        self, user_id: int | None, request: Mapping[str, Any], *, previous: Hold | None = None, exempt: bool = False
    ) -> Hold:
        """Before a model call: hold its estimated tokens, wait for the user's other calls, or refuse.

        ``previous`` is the hold of the question's last call (None for its first call: that gives
        back one admission hold of the user). Raises OverBudget when the tokens spent today reached
        the limit. Otherwise:

        - a question under way makes its next call when the tokens spent and held by the user's
          other calls (running, or parked between the rounds of other questions) are under the
          limit, or when no other call of the user is running (one at a time);
        - a new question starts when no other is under way, or when those under way could all make
          ``calls_per_question`` calls of their size within the limit;

        else it waits for the user's other calls. So every call that goes saw the budget not spent
        with every call in flight counted, and questions already started are finished first: at
        most one call crosses the limit (when the estimates are not below the real calls).
        """
        user = user_key(user_id)
        unlimited = exempt or not self.tokens
        # the estimate walks the whole prompt: only where a budget needs it (at 200 questions at once it was
        # 2-9 % of the bot's loop, bench/RESULTS.md, issue 34)
        hold = Hold(self, user, 0 if unlimited else request_tokens(request), running=True)
        wanted = request.get("searches")
        wanted = wanted if isinstance(wanted, int) else 0
        if unlimited:
            hold.released = True  # no tokens to hold: never limited
            self._hold_searches(hold, wanted, exempt)
            return hold
        if previous is None:
            with self._lock:
                admitted = [h for h in self._holds.get(user, []) if h.until is not None]
                if admitted:
                    self._drop(admitted[0])
        while True:
            now = self.now()
            spent = self.ledger.user_day(user, self.day(now)).total_tokens()
            if spent >= self.tokens:
                if previous is not None:
                    previous.release()
                raise OverBudget(Refusal("tokens", self.tokens, self.resets_at(now)))
            with self._lock:
                others = [h for h in self._holds.get(user, []) if h.until is None and h is not previous]
                if previous is not None:  # under way: go if the calls in flight leave room, or as the only one
                    go = spent + sum(h.tokens for h in others) < self.tokens or not any(h.running for h in others)
                else:  # a new question starts only if the ones under way can all finish (or there are none)
                    go = not others or spent + sum(h.tokens for h in others) * self.calls_per_question < self.tokens
                if go:
                    if previous is not None:
                        self._drop(previous)
                    self._holds.setdefault(user, []).append(hold)
                else:
                    waiter = asyncio.get_running_loop().create_future()
                    self._waiters.append(waiter)
            if go:
                self._hold_searches(hold, wanted, exempt)
                return hold
            try:
                await waiter  # another call of this user ended: look again
            finally:
                with self._lock:
                    if waiter in self._waiters:
                        self._waiters.remove(waiter)

    def _hold(self, hold: Hold) -> None:
        with self._lock:
            self._holds.setdefault(hold.user, []).append(hold)

    def _drop(self, hold: Hold) -> None:  # under self._lock
        hold.released = True
        holds = self._holds.get(hold.user, [])
        if hold in holds:
            holds.remove(hold)
        if not holds:
            self._holds.pop(hold.user, None)

    def _wake(self) -> None:  # under self._lock
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.get_loop().call_soon_threadsafe(_wake, waiter)

    def _park(self, hold: Hold) -> None:
        with self._lock:
            self._free_searches(hold)  # its searches are recorded now
            if not hold.released and hold.running:
                hold.running = False
                self._wake()

    def _release(self, hold: Hold) -> None:
        with self._lock:
            self._free_searches(hold)
            if not hold.released:
                self._drop(hold)
                self._wake()

    def record(self, spend: Spend) -> None:
        """The Assistant's ``on_spend`` sink: charge one model call to its user and chat (cheap: in memory)."""
        u = spend.usage
        tokens = (u.input_tokens, u.output_tokens, u.cache_write_tokens, u.cache_read_tokens)
        self.ledger.add_usage(user_key(spend.user_id), spend.chat_id, spend.model, tokens, self.day())
        if u.web_searches:
            self.ledger.add_searches(user_key(spend.user_id), spend.chat_id, u.web_searches, self.day())


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def when_text(moment: datetime, timezone: str, lang: str) -> str:
    """``11월 30일 (월) 00:00 (한국 시각)`` / ``Mon Nov 30, 00:00 (Korea time)`` in ``timezone``."""
    local = moment.astimezone(ZoneInfo(timezone))
    if lang == "ko":
        where = "한국 시각" if timezone == "Asia/Seoul" else f"{timezone} 시각"
        return f"{local.month}월 {local.day}일 ({WEEKDAYS_KO[local.weekday()]}) {local:%H:%M} ({where})"
    where = "Korea time" if timezone == "Asia/Seoul" else f"{timezone} time"
    return f"{local:%a %b} {local.day}, {local:%H:%M} ({where})"
