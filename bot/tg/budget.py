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

Nothing cheaper is safe without knowing where in the round trip Telegram counts. A message whose bytes
left at ``w`` and whose answer came in at ``a`` may have been counted at any moment between; a second
``[t, t + 1)`` at Telegram's end can hold 31 of them exactly when 31 messages have ``w < t + 1`` and
``a >= t``, i.e. all 31 intervals ``[w, a + 1)`` contain the moment just before ``t + 1``. So the rule
"never more than 30 of the intervals ``[w, a + 1)`` at once" is both necessary and sufficient, and what a
message must be charged is exactly from its bytes leaving until a second after its answer came in.

What it costs beyond that is the bot's own: the limiter knows ``s <= w`` (its grant) and ``a`` only as
late as its event loop gets there. On a busy loop those turns dominate: a send through PTB, httpx and
httpcore takes 6-7 turns of the loop from the grant to the socket and 4 from the answer back to the
limiter (35-45 ms with 100 busy tasks), against a loopback round trip of about 1 ms. Two things take
them off (bot/tg/sendgate.py):

- **Early grants** (``take`` with ``lead``): with every place taken, a final may be granted up to ``lead``
  before the earliest place frees; it takes that place over (its entry leaves the heap) and its request
  waits at the socket, in ``GatedStream``, until the moment the place frees (``not_before``). It counts
  in flight from its grant, and its bytes leave only once the message it replaces stopped counting, so
  each place still holds at most one message whose ``[w, a + 1)`` covers any moment: the rule above holds.
- **The answer's time is taken at the socket**: ``a`` is when the answer's first bytes were read, the
  earliest moment the bot knows Telegram received the message, not when the limiter saw the result.

Both moments are taken on an event loop that does nothing but Telegram's HTTP (``IOThread``), so a busy
bot loop no longer makes a gate open late or an answer be noticed late.

What it costs then: a message holds its place for one second plus its round trip at the socket (the
way there, Telegram's work, the way back), so in a minute when every place is taken the bot sends
``30 / (1 + round trip)`` a second: about 30 on loopback, about 27 against a Telegram 100 ms away.
Without a gate on the request's path (another HTTP stack), nothing is granted early (``FloodLimiter``).

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

    def take(self, now: float, lead: float = 0.0) -> float:
        """Count a message from ``now``; the moment its bytes may leave: ``now`` if a place is free, else
        (``lead`` > 0, ``ready``) the moment the earliest-freeing place frees, which it takes over."""
        early = lead > 0 and not self.has(1, now)
        self.in_flight += 1
        return heapq.heappop(self._until) if early else now

    def ready(self, now: float, lead: float) -> bool:
        """A message may be granted now: a place is free, or (``lead`` > 0) one frees within ``lead``."""
        if self.has(1, now):
            return True
        return lead > 0 and self.level(now) >= -EPS and bool(self._until) and self._until[0] <= now + lead

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
