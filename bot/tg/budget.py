"""The flood limiter's budgets: a token bucket (each chat's) and the bot's global window.

How the global window counts a message (``Window``)
----------------------------------------------------
Telegram counts a message when it *receives* it, and at most 30 may fall in any one second at
its end. The bot knows two moments of each message: when it sent it (``s``) and when the answer
came back (``a``). Telegram received it in between: after a *way there*, before a *way back*.

The strictest reading counts a message from ``s`` until ``a + 1 s``: then no second at Telegram's
end can hold more than the limit, whatever the delays. But it charges every message one second
plus its whole round trip, so the bot sends ``30 / (1 + round trip)`` a second — about 27 against
a Telegram 100 ms away, 24 at 250 ms, although most of that time is distance, the same for every
message, which cannot put two messages closer together at Telegram's end than they were sent.

So the window counts a message from the moment it is sent, for as long as it is in flight, and
once answered until ``a + 1 s − share × f``, where ``f`` is the fastest round trip of the last
``FLOOR_SECONDS`` (``RoundTrips``, trusted from ``FLOOR_SAMPLES`` answers on; before that, the
strict reading) and ``share`` is ``FLOOR_SHARE``. A message then costs one second plus what its
round trip took *beyond the fastest* (its jitter) plus a fifth of the fastest, instead of one
second plus its whole round trip.

Why that is safe. Take any message ``i`` received in the same second as a later-sent message ``n``
(``r_n − r_i < 1``). ``i`` reached Telegram at ``r_i ≤ a_i − back_i``, ``n`` at ``r_n ≥ s_n +
there_n``, so ``s_n < a_i + 1 − (back_i + there_n)``. The fastest round trip ``f`` was one way there
plus one way back; if it had both at their fastest — a quiet moment, which is what makes it the
fastest — then ``back_i + there_n ≥ f ≥ share × f``, so ``s_n < a_i + 1 − share × f``: ``i`` was
still counted (in flight, or within ``a_i + 1 − share × f``) when ``n`` was sent. The window let ``n``
go only with fewer than the limit counted, so fewer than the limit others share a second with it
at Telegram's end.

What is assumed, and what covers it:

- No way there or back is faster than in the fastest round trip seen. A minimum over a sample is
  above the true one (the more, the fewer round trips it has seen, and the more they vary): hence
  the share (80 %: a fifth of the fastest round trip is still charged) and the 50 answers before
  the floor is used at all. In virtual time (the harness of ``tests/test_tg_ratelimit.py``, 450
  messages queued at once), a way there varying by a half-normal 50–300 ms or a uniform 0–300 ms,
  with ways back of 10–200 ms, never put 31 in a second in 30 runs of each case; leaving the whole
  fastest round trip uncharged did in 3–9 runs of 30, 90 % of it in 1.
- A path that gets faster (a shorter route) is the risk, for about one round trip: its first
  faster answer lowers the floor, which only makes later messages cost more. A path that gets
  slower keeps the old floor for ``FLOOR_SECONDS``, which is on the safe side.
- If it is ever wrong, Telegram answers 429: the message is sent again after ``retry_after``, and
  429s from several chats at once lower the rate (see ``bot/tg/ratelimit.py``).

What it does not save: a round trip that *varies* is charged in full, because a message delayed
on its way can land next to one sent a second later. On loopback (the tests' fake Telegram) the
fastest round trip is a millisecond and nearly all of the round trip is variation (the bot's and
the fake's own queues), so there the rule costs what the strict one does. Charging less than the
variation was tried (a margin of 4 mean deviations, as TCP's RFC 6298 sizes its retransmission
timer): on a loaded machine (load 8) it let slow spells of the way there end in bunches, 48 429s in one
benchmark run (``bench/RESULTS.md``).
"""

from __future__ import annotations

import heapq
import math
from collections import deque

EPS = 1e-6
FLOOR_SECONDS = 10.0  # the fastest round trip is taken over this long (as BBR's min_rtt filter)
FLOOR_SAMPLES = 50  # and trusted only with at least this many round trips in that time (else 0: strict)
FLOOR_SHARE = 0.8  # of the fastest round trip left uncharged; the rest covers how far the minimum seen may be off


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
    """The fastest round trip of the last ``FLOOR_SECONDS`` (a sliding-window minimum)."""

    def __init__(self) -> None:
        self._fastest: deque[tuple[float, float]] = deque()  # (answered at, round trip), both increasing
        self._answers: deque[float] = deque()  # when each round trip of the last FLOOR_SECONDS ended

    def add(self, rtt: float, now: float) -> None:
        while self._fastest and self._fastest[-1][1] >= rtt:
            self._fastest.pop()
        self._fastest.append((now, rtt))
        self._answers.append(now)
        while self._fastest[0][0] <= now - FLOOR_SECONDS:
            self._fastest.popleft()
        while self._answers[0] <= now - FLOOR_SECONDS:
            self._answers.popleft()

    @property
    def floor(self) -> float:
        """The fastest round trip; 0 with fewer than ``FLOOR_SAMPLES`` (one is no sign of a path's floor)."""
        return self._fastest[0][1] if len(self._answers) >= FLOOR_SAMPLES else 0.0


class Window:
    """At most ``limit`` messages in any ``period`` seconds at Telegram's end (the module doc says why).

    A message counts from ``take`` while in flight, then until ``period`` after its answer less the
    fastest round trip.
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
        self.round_trips.add(now - sent, now)
        until = now + self.period - FLOOR_SHARE * self.round_trips.floor
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
