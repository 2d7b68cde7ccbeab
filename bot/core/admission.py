"""Questions take their turn: the work a question does before its model call, a few at a time, in order.

In a busy minute hundreds of questions start together, each in its chat's lane (bot/tg/lanes.py). On
one event loop their steps interleave breadth-first: every question's preparation (reading memory,
recall, building the request) ran before any was sent to the model, all the model calls were in
flight together, and the first answer was ready only when nearly every other one was. Telegram
delivers 30 answers a second, so what a busy minute needs is the first answers early and the rest
in the order they came: measured with the throughput bench (200 chats at once, an instant model),
the first answer reached Telegram 1.2-2.5 s after the questions, the 30th a second later still.

``Admission`` lets ``limit`` questions at a time do that work, first come first served. A question
gives its place back the moment its model call starts (``leave``, from the Assistant's check before
every call): the model's time is never held, so the calls of later questions still overlap it, and a
question waiting for its user's other calls (the daily token budget) waits without a place. A turn
that ends before any model call (a refusal, an error) gives it back as it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator
from contextvars import ContextVar

LIMIT = 8  # questions preparing at once (more than the 6 threads of the default executor that prepare)


class _Place:
    """One question's place; given back once (``leave`` and the end of the turn may both try)."""

    __slots__ = ("admission", "held")

    def __init__(self, admission: Admission) -> None:
        self.admission = admission
        self.held = True

    def give_back(self) -> None:
        if self.held:
            self.held = False
            self.admission._release()


_CURRENT: ContextVar[_Place | None] = ContextVar("admission_place", default=None)


class Admission:
    """At most ``limit`` questions between their start and their model call, admitted in arrival order."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._free = limit
        self._waiting: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        """Questions waiting for a place."""
        return sum(1 for f in self._waiting if not f.done())

    @property
    def busy(self) -> int:
        """Places held now."""
        return self.limit - self._free

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold a place from here until ``leave`` (the model call) or the end of the block."""
        await self._acquire()
        place = _Place(self)
        token = _CURRENT.set(place)
        try:
            yield
        finally:
            _CURRENT.reset(token)
            place.give_back()

    async def _acquire(self) -> None:
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # the place came just as the question was cancelled: the next one gets it
            raise  # (a cancelled waiter left in the queue is skipped by _release)

    def _release(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the place passes to the oldest waiting question
                return
        self._free += 1


def leave() -> None:
    """The current question's model call starts: its place goes to the next question (nothing outside a turn)."""
    place = _CURRENT.get()
    if place is not None:
        place.give_back()
