"""Each chat's updates in a lane of their own, so that no chat can hold up another.

python-telegram-bot processes updates concurrently up to a shared limit, and an update holds one
of those shared slots until its handler returns: a handler waiting for its own chat (the chat's
lock, or the chat's flood budget) kept a slot that every other chat needed. ``ChatLanes`` is the
application's update processor instead: the shared slot is held only while an update is put in
its chat's lane, and each lane runs its updates itself, at most ``per_chat`` at a time (a
question waiting for the chat's lock waits in its own lane). A lane keeps at most ``backlog``
updates waiting; beyond that an update is dropped and ``on_overflow`` is called once (the user is
told), until the lane is empty again. Updates without a chat share one lane.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from telegram import Update
from telegram.ext import Application, BaseUpdateProcessor

log = logging.getLogger(__name__)

PER_CHAT = 8  # updates of one chat handled at once (the others of the chat wait in its lane)
BACKLOG = 24  # updates of one chat waiting at most; more are dropped (and the user told once)
OverflowHook = Callable[[object], None]


class _Lane:
    __slots__ = ("key", "running", "told", "waiting")

    def __init__(self, key: int | None) -> None:
        self.key = key
        self.running = 0
        self.waiting: deque[Awaitable[Any]] = deque()
        self.told = False  # on_overflow was called since the lane was last empty


def chat_key(update: object) -> int | None:
    if isinstance(update, Update) and update.effective_chat is not None:
        return update.effective_chat.id
    return None


class ChatLanes(BaseUpdateProcessor):
    """One lane per chat (see the module doc). ``application`` must be set before updates come."""

    def __init__(self, per_chat: int = PER_CHAT, backlog: int = BACKLOG, shared: int = 256) -> None:
        super().__init__(max_concurrent_updates=shared)  # held only while an update is put in its lane
        self.per_chat = per_chat
        self.backlog = backlog
        self.application: Application | None = None  # type: ignore[type-arg]
        self.on_overflow: OverflowHook | None = None
        self._lanes: dict[int | None, _Lane] = {}
        self.dropped = 0

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release: the lanes' tasks are the application's, awaited when it stops."""

    def lanes(self) -> int:
        return len(self._lanes)

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        key = chat_key(update)
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _Lane(key)
        if lane.running < self.per_chat:
            lane.running += 1
            self._start(lane, coroutine, update)
        elif len(lane.waiting) < self.backlog:
            lane.waiting.append(coroutine)
        else:
            self.dropped += 1
            if isinstance(coroutine, Coroutine):
                coroutine.close()  # never run
            log.warning("chat %s: %d updates waiting already, one dropped", key, len(lane.waiting))
            if not lane.told and self.on_overflow is not None:
                lane.told = True
                try:
                    self.on_overflow(update)
                except Exception:  # a notice must never break the intake
                    log.exception("chat %s: could not announce a dropped update", key)

    def _start(self, lane: _Lane, coroutine: Awaitable[Any], update: object) -> None:
        run = self._run(lane, coroutine)
        if self.application is not None:
            self.application.create_task(run, update=update, name=f"lane:{lane.key}")  # awaited at stop
        else:
            asyncio.get_running_loop().create_task(run, name=f"lane:{lane.key}")

    async def _run(self, lane: _Lane, coroutine: Awaitable[Any]) -> None:
        """Handle ``coroutine``, then the lane's waiting updates, one after another."""
        try:
            while True:
                try:
                    await coroutine
                except Exception:  # Application.process_update reports handler errors itself
                    log.exception("chat %s: an update failed", lane.key)
                if not lane.waiting:
                    break
                coroutine = lane.waiting.popleft()
        finally:
            lane.running -= 1
            if lane.running == 0 and not lane.waiting:
                lane.told = False
                if self._lanes.get(lane.key) is lane:
                    del self._lanes[lane.key]
