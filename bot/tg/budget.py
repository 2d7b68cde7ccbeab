"""The flood limiter's budgets: a token bucket (each chat's) and the bot's global window.

How the global window counts a message (``Window``)
----------------------------------------------------
Telegram counts a message when it *receives* it, and at most 30 may fall in any one second at
its end. The bot knows two moments of each message: when it sent it (``s``) and when the answer
came back (``a``). Telegram received it in between: after a *way there*, before a *way back*.

The window counts a message from ``s``, for as long as it is in flight, and once answered until
``a + 1 s``. Why that is safe, whatever the delays: take any message ``i`` received in the same
second as a later-sent message ``n``. ``i`` reached Telegram at ``r_i <= a_i`` and ``n`` at ``r_n >= s_n``,
so ``s_n <= r_n < r_i + 1 <= a_i + 1``: ``i`` was still counted when ``n`` was sent, and the window let
``n`` go only with fewer than the limit counted. A failed request counts like an answered one, from
its sending until a second after the bot gave up on it.

What it costs: a message holds its place for one second plus its round trip as the bot sees it (the
way there, Telegram's work, the way back and the bot's own event loop noticing the answer), so in a
minute when every place is taken the bot sends ``30 / (1 + round trip)`` a second: 29.9 on a quiet
loopback, about 27 against a Telegram 100 ms away.

Tried and withdrawn: leaving 80 % of the fastest round trip of the last 10 s uncharged (the
distance, which every round trip has). It rested on an assumption that cannot be checked from one
end: that no message's way there plus another's way back is shorter than the fastest round trip
seen. Where the round trip is the programs' own processing rather than distance, the two ways trade
places from one message to the next (a busy event loop on one side, then on the other) and the
assumption fails: on a loaded 2-core machine (four busy loops, three runs at once) the real bot
against the fake Telegram put 31 in a second in 9 runs of 12 (``tests/test_e2e_tg_flood.py``), and
still in 3 of 12 when only a fastest round trip of 20 ms or more, taken over 10 minutes, was
trusted; with the reading above, in none of 12. ``tests/test_tg_ratelimit.py`` keeps the case in
virtual time. Should Telegram answer 429 all the same, the message is sent again after
``retry_after``, and 429s from several chats at once lower the rate (see ``bot/tg/ratelimit.py``).
"""

from __future__ import annotations

import heapq
import math

EPS = 1e-6


class Bucket:
    """A token bucket: ``burst`` calls at once, refilled at ``rate`` per second."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self._level = burst
        self._at = now

    def level(self, now: float) -> float:
        if now > self._at:
            self._level = min(self.burst, self._level + (now - self._at) * self.rate)
            self._at = now
        return self._level

    def has(self, need: float, now: float) -> bool:
        return self.level(now) >= need - EPS

    def take(self, now: float) -> None:
        self._level = self.level(now) - 1

    def wait(self, need: float, now: float) -> float:
        """Seconds until the level reaches ``need`` (0 if it has)."""
        missing = need - self.level(now)
        return 0.0 if missing <= EPS else missing / self.rate + EPS


class Window:
    """At most ``limit`` messages in any ``period`` seconds at Telegram's end (the module doc says why).

    A message counts from ``take`` while in flight, then until ``period`` after its answer.
    """

    def __init__(self, limit: float, period: float = 1.0) -> None:
        self.limit = limit
        self.period = period
        self.in_flight = 0
        self._until: list[float] = []  # (heap) when each answered message stops counting

    def level(self, now: float) -> float:
        """Messages that may be sent now."""
        while self._until and self._until[0] <= now:
            heapq.heappop(self._until)
        return self.limit - self.in_flight - len(self._until)

    def has(self, need: float, now: float) -> bool:
        return self.level(now) >= need - EPS

    def take(self, now: float) -> None:
        self.in_flight += 1

    def done(self, now: float) -> None:
        """A message was answered (or failed) at ``now``: it counts until ``now + period``."""
        self.in_flight = max(0, self.in_flight - 1)
        heapq.heappush(self._until, now + self.period)

    def wait(self, need: float, now: float) -> float:
        """Seconds until the level reaches ``need``: 0 if it has, inf while that depends on answers to come."""
        missing = need - self.level(now)
        if missing <= EPS:
            return 0.0
        k = math.ceil(missing - EPS)
        if k > len(self._until):
            return math.inf  # the pump runs again when a request in flight is answered
        return heapq.nsmallest(k, self._until)[-1] - now + EPS
