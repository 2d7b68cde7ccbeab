"""The pace at which answers start: in a busy second, no faster than one and a half times what Telegram's window
lets go.

Telegram delivers about 30 messages a second for the whole bot (``FloodLimiter``). When 200 questions come
in the same second, starting all 200 answers at once makes none of them reach anyone sooner: the window
lets 30 finals go in each second whatever happens. But all 200 model calls are then made, streamed and
stored on the bot's one event loop at the same time, and the first 30 answers, ready after the model's
second, waited behind the other 170's work to reach Telegram (``bench/RESULTS.md``, issue 34: the 200 first
calls left the bot over 1.6-2.9 s, and the 30th final reached Telegram at 2.3-3.3 s instead of ~1.2 s).

``StartPace`` paces the first model call of each question. While fewer than ``burst`` questions (the
window's rate: a second's worth of finals) are under way, from their first call until they end, a question
starts at once: with a quick model, or at low load, nothing ever waits. Beyond that, starts follow a pace:
one every ``1 / (factor × rate)`` seconds, ``rate`` being the limiter's current global rate (lowered after a
wave of 429s), with no burst on top: the ``burst`` under way are the burst. Why this never costs throughput,
whatever the model's latency ``L``: answers start at ``factor × rate`` a second at least, so after ``L``
they end at least that fast, more than the window lets go; the window, not the pace, stays the
bottleneck, and in a busy second an answer that waited for its start would have waited as long for its
place in the window. Only the first call of a question is paced: its tool rounds never wait here.

Pacing every start, also below ``burst`` under way, was measured first: at a 1 s model the same gain, but
with the model answering at once on a loaded machine the runs were 0.5 s slower than without a pace. A
second burst of ``burst`` starts once that many were under way, at twice the rate, was the next version:
60 questions then prepared in the first half second, and the first 30 answers reached Telegram later
(the 30th final at 1.57-1.79 s against 1.46-1.52 s without it, bench/RESULTS.md, issue 34).

A summary's call (bot/wiring.py) counts as a question's first call: it runs in the background, off every
user's path. A call that waits is cancelled like any other (a shutdown); the last place taken is then given
back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from bot.core.question import Held, Reserve

FACTOR = 1.5
"""Answers start at up to this many times the rate at which Telegram's window lets finals go."""


class StartPace:
    """Spaces the starts of answers (see the module doc); ``rate`` is read at every start.

    Beyond ``burst`` questions under way, ``_due`` is when the next start is due at the steady pace: a start
    goes at once when that is not ahead of now (no credit is saved up while nobody waits).
    """

    def __init__(
        self,
        rate: Callable[[], float],
        *,
        factor: float = FACTOR,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.rate = rate
        self.factor = factor
        self.clock = clock
        self.sleep = sleep
        self._due = float("-inf")
        self.under_way = 0  # questions from their first call until they end (their hold released)
        self.waited = 0  # starts that had to wait (for the logs and the tests)

    def _interval(self) -> tuple[float, int]:
        rate = max(1.0, self.rate())
        return 1.0 / (self.factor * rate), max(1, int(rate))

    async def wait(self) -> None:
        """Return when this start may go: at once while fewer than ``burst`` questions are under way."""
        interval, burst = self._interval()
        if self.under_way < burst:
            return
        now = self.clock()
        at = max(self._due, now)
        self._due = at + interval
        if at <= now:
            return
        self.waited += 1
        try:
            await self.sleep(at - now)
        except asyncio.CancelledError:
            if self._due == at + interval:  # nobody took a place after this one: give it back
                self._due = at
            raise

    def paced(self, reserve: Reserve) -> Reserve:
        """``reserve`` (the check before every model call), its first call of a question paced, and the
        question counted as under way until its hold is released (the core always releases it)."""

        async def paced_reserve(user_id: int | None, request: Mapping[str, Any], previous: Held | None) -> Held:
            if previous is None:  # a question's first call; its later rounds go on at once
                await self.wait()
                self.under_way += 1
                try:
                    return _UnderWay(await reserve(user_id, request, None), self)
                except BaseException:
                    self.under_way -= 1
                    raise
            if not isinstance(previous, _UnderWay):
                return await reserve(user_id, request, previous)
            hold = await reserve(user_id, request, previous.hold)
            if previous.counted:  # the question goes on: the count moves to the hold of its next call
                previous.counted = False
                return _UnderWay(hold, self)
            return hold

        return paced_reserve


class _UnderWay:
    """A question's hold (``Held``) while the question is under way: the pace counts it until released."""

    __slots__ = ("counted", "hold", "pace")

    def __init__(self, hold: Held, pace: StartPace) -> None:
        self.hold = hold
        self.pace = pace
        self.counted = True

    @property
    def search(self) -> bool:
        return self.hold.search

    def park(self) -> None:
        self.hold.park()

    def release(self) -> None:
        if self.counted:
            self.counted = False
            self.pace.under_way -= 1
        self.hold.release()
