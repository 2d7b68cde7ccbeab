"""The flood limiter's budgets: a token bucket (each chat's) and the bot's global window.

How the global window counts a message (``Window``)
----------------------------------------------------
Telegram counts a message when it *receives* it, and at most 30 may fall in any one second at
its end. The bot knows two moments of each message: when it sent it (``s``) and when the answer
came back (``a``); Telegram received it somewhere in between, after a way there ``u`` of between
0 and the round trip ``a − s``.

The strictest reading counts a message from ``s`` until ``a + 1 s``: then no second at Telegram's
end can ever hold more than the limit, whatever the delays — but every message costs one second
*plus its round trip*, so the bot sends ``30 / (1 + round trip)`` a second, and the round trip as
the bot sees it includes its own event loop's lag, which is longest when the bot is busiest.

What actually matters is not how long the way to Telegram is, but how much it *varies*. Messages
sent at most ``limit`` per ``1 + m`` seconds (by their sending moments) reach Telegram at most
``limit`` per second as long as no message's way there is longer, by more than ``m``, than the
way of a message sent a second later: those that reach Telegram within one second were then sent
within ``1 + m`` seconds. So the window counts a message

- from the moment it is sent, for as long as it is in flight (its way there may be anything up
  to the round trip still to come: a slow request keeps its slot until it is answered), and
- once answered, until ``s + 1 + m`` — but never past ``a + 1`` (the strict reading is the most it
  ever costs, so a round trip shorter than the margin is charged as before),

where the margin ``m`` is the variation of the round trip as measured (``RoundTrips``: the
smoothed mean deviation of TCP's retransmission timer, RFC 6298, ×4 — what TCP uses to bound a
round trip with high confidence), never below ``MIN_MARGIN``. A round trip that grows is fed to the
estimate before its own message's slot is set, so a slow answer widens the margin at once (one
sample moves it by its full deviation); a quiet path narrows it within about a second.

Why that is safe: a second at Telegram's end can hold more than the limit only if a message's way
there was longer, by more than the margin, than that of a message sent ``1 + m`` seconds after it
— a message still in flight is never in that case (it is counted), so it takes one that was
already answered, with a round trip longer than the margin, followed by one that is much faster.
The margin is sized from exactly those variations, so that takes a sudden change bigger than four
mean deviations of everything seen recently. It is a bound with high confidence, not a proof
(only the strict reading is one): if it ever fails, Telegram answers 429, the message is sent
again after ``retry_after``, and 429s from several chats at once lower the rate (see the limiter).
"""

from __future__ import annotations

import heapq
import math

EPS = 1e-6
MIN_MARGIN = 0.02  # seconds: the margin when round trips do not vary (the timer's and clock's slack)
JITTER_FACTOR = 4.0  # RFC 6298: RTO = SRTT + 4 × RTTVAR bounds a round trip with high confidence


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


class RoundTrips:
    """The smoothed round trip and its mean deviation, as TCP estimates them (RFC 6298, section 2)."""

    def __init__(self) -> None:
        self.smoothed: float | None = None
        self.deviation = 0.0

    def add(self, rtt: float) -> None:
        if self.smoothed is None:
            self.smoothed, self.deviation = rtt, rtt / 2
        else:
            self.deviation = 0.75 * self.deviation + 0.25 * abs(self.smoothed - rtt)
            self.smoothed = 0.875 * self.smoothed + 0.125 * rtt

    @property
    def margin(self) -> float:
        """How much longer one message's way to Telegram may be than another's (see the module doc)."""
        return max(MIN_MARGIN, JITTER_FACTOR * self.deviation)


class Window:
    """At most ``limit`` messages in any ``period`` seconds at Telegram's end (the module doc says why).

    A message counts from ``take`` while in flight, then until ``sent + period + margin``, at most
    until ``period`` after its answer.
    """

    def __init__(self, limit: float, period: float = 1.0) -> None:
        self.limit = limit
        self.period = period
        self.in_flight = 0
        self.round_trips = RoundTrips()
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

    def done(self, sent: float, now: float) -> None:
        """The message sent at ``sent`` was answered (or failed) at ``now``."""
        self.in_flight = max(0, self.in_flight - 1)
        self.round_trips.add(now - sent)
        until = min(now + self.period, sent + self.period + self.round_trips.margin)
        if until > now:
            heapq.heappush(self._until, until)

    def wait(self, need: float, now: float) -> float:
        """Seconds until the level reaches ``need``: 0 if it has, inf while that depends on answers to come."""
        missing = need - self.level(now)
        if missing <= EPS:
            return 0.0
        k = math.ceil(missing - EPS)
        if k > len(self._until):
            return math.inf  # the pump runs again when a request in flight is answered
        return heapq.nsmallest(k, self._until)[-1] - now + EPS
