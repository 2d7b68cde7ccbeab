"""A rate limiter for python-telegram-bot that puts final answers first.

Telegram allows a bot about 30 messages a second in all, about one a second in a private chat
(short bursts are tolerated) and 20 a minute in a group; beyond that it answers 429 with a
``retry_after``. ``FloodLimiter`` plugs into PTB (``ApplicationBuilder().rate_limiter(...)``) and
sees every request with its endpoint and chat:

- **Finals** — everything not marked best-effort: ``sendMessage``, ``editMessageText``,
  ``sendDocument``, ``deleteMessage`` … — wait in their chat's queue (FIFO) and go as soon as the
  global and the chat's budgets allow, the oldest waiting chat first. A chat has one request in
  flight at a time, so its messages and edits reach Telegram in the order they were made.
- **Best-effort** calls — ``sendMessageDraft``, ``sendChatAction``, and any call made with
  ``rate_limit_args=BestEffort(...)`` (the streamed previews) — use spare capacity only: they go
  while the budgets are nearly full (so they never eat what finals need), and are dropped,
  raising ``Dropped``, when that does not happen within their ``max_wait``, as soon as a final of
  the same chat is queued (the preview would be stale), or while the chat's previews are paused.
  A preview also leaves a slot of the global window for every answer being written
  (``begin_answer``, told by bot/tg/stream.py): it goes only while the window has room for it *and*
  for the final of each of those answers, so in a busy minute previews never take the slots the
  coming answers need (a preview sent just before a burst of answers held its slot for a second
  after its answer, and the answer waiting for it kept that slot's place in every later second).
- **A 429** pauses only what it must. On a final: that chat, for ``retry_after``; the final is sent
  again (up to ``max_retries`` times), still before the chat's later messages. On a best-effort
  call: that chat's best-effort calls, for ``retry_after``; the 429 is raised to the caller and
  finals are not delayed. Telegram's 429s do not say whether the global limit was hit; 429s from
  ``GLOBAL_CHATS`` chats within ``GLOBAL_SIGNAL`` seconds are taken as the sign (one or two can be a
  chat's own limit, or requests that arrived bunched up), and the global rate is then
  lowered (×0.8), and raised back by a tenth every ``RECOVER_EVERY`` seconds without a 429 (full
  rate again about two seconds after the last one).
- **The global budget is a sliding window** (``Window`` in ``bot/tg/budget.py``, which says why it
  is safe): at most ``per_second`` messages in any one second at Telegram's end. A message counts
  from the moment it is sent, for as long as it is in flight, and once answered until one second
  after the answer, both moments taken at the socket; with every place taken, a final may be granted
  ``lead`` early and wait there for its place (bot/tg/sendgate.py). There is no idle burst on top, so a
  burst never provokes 429s and then needs slowing down.
- Calls without a chat (getMe, setMyCommands, getFile …) and ``get…`` methods pass straight through.

Chat actions ("typing…") are not messages: they have a budget of their own and are never queued
behind a chat's messages, but they too go only while the message budget has room to spare, and only
while no more answers are being written (``begin_answer``) than the global window lets go in a second.
Beyond that the answers will wait for Telegram anyway, and each "typing…" costs the bot a request's
work on the event loop that every answer waits behind: with 200 questions at once the chat actions
sent while they were prepared delayed the first answer from 1.1 s to 2.1 s (bench/RESULTS.md, issue 34).
Such an action is dropped at once (``Dropped``; the caller tries again later).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import time
import warnings
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Protocol

from telegram.error import RetryAfter, TelegramError
from telegram.ext import BaseRateLimiter
from telegram.warnings import PTBDeprecationWarning

from bot.tg.budget import Bucket, Window
from bot.tg.sendgate import GATE, Gate

log = logging.getLogger(__name__)

GLOBAL_SIGNAL = 1.0  # seconds: 429s from GLOBAL_CHATS chats this close together mean the global limit
GLOBAL_CHATS = 3
RECOVER_EVERY = 1.0  # seconds without a 429 for each step (a tenth of the full rate) back up
BEST_EFFORT_ENDPOINTS = frozenset({"sendMessageDraft", "sendChatAction"})
Result = bool | dict[str, Any] | list[dict[str, Any]]


def retry_seconds(error: RetryAfter) -> float:
    """The delay Telegram asked for, in seconds."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = error.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


@dataclass
class BestEffort:
    """``rate_limit_args`` of a call that may be dropped (a streamed preview).

    It is sent only with spare capacity, within ``max_wait`` seconds, else ``Dropped`` is raised.
    ``sent`` turns True when the call goes out: from then on it can no longer be dropped.
    """

    max_wait: float = 1.0
    sent: bool = False


class Dropped(TelegramError):
    """A best-effort call was not sent: no spare capacity in time, stale, or paused by a 429."""


@dataclass(frozen=True)
class Limits:
    """The budgets: the bot's in all as a sliding window (``Window``), each chat's as a token bucket."""

    per_second: float = 30.0  # all messages of the bot, in any one second
    private_rate: float = 1.0  # per private chat
    private_burst: float = 2.0
    group_rate: float = 10 / 60  # per group: burst + 60 × rate = 19 in any minute (Telegram: 20)
    group_burst: float = 9.0
    actions_per_second: float = 30.0  # chat actions ("typing…"), a budget of their own
    spare: float = 0.2  # best effort only while a budget is above (1 − spare) of its burst (and ≥ 2)
    min_rate: float = 5.0  # the global rate is never lowered below this

    def faster_chats(self, factor: float) -> Limits:
        """These limits with each chat's rate ``factor`` times Telegram's (TELEGRAM_RATE_FACTOR; bursts unchanged)."""
        return replace(self, private_rate=self.private_rate * factor, group_rate=self.group_rate * factor)


class Timer(Protocol):
    def cancel(self) -> None: ...


CallLater = Callable[[float, Callable[[], None]], Timer]


class _Chat:
    __slots__ = ("bucket", "busy", "finals", "key", "last_final", "paused_until", "previews_until")

    def __init__(self, key: int | str, bucket: Bucket) -> None:
        self.key = key
        self.bucket = bucket
        self.finals: deque[_Request] = deque()
        self.busy = False  # a request of this chat is in flight
        self.last_final = -1  # the sequence number of the chat's newest final: older previews are stale
        self.paused_until = 0.0  # a 429 on a final: nothing goes before this
        self.previews_until = 0.0  # a 429 on a best-effort call: no best effort before this


class _Request:
    __slots__ = ("args", "chat", "deadline", "endpoint", "future", "granted", "kind", "not_before", "seq")

    def __init__(
        self, kind: str, chat: _Chat, endpoint: str, seq: int, deadline: float, args: BestEffort | None
    ) -> None:
        self.kind = kind  # "final", "preview" (best effort, one at a time per chat) or "action"
        self.chat = chat
        self.endpoint = endpoint
        self.seq = seq
        self.deadline = deadline
        self.args = args
        self.granted = False
        self.not_before = 0.0  # when granted: the moment its bytes may leave (bot/tg/sendgate.py)
        self.future: asyncio.Future[None] = asyncio.get_running_loop().create_future()


class FloodLimiter(BaseRateLimiter[BestEffort]):
    """Finals first (FIFO per chat), previews and chat actions with spare capacity only (see module doc)."""

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        max_retries: int = 5,
        clock: Callable[[], float] = time.monotonic,
        call_later: CallLater | None = None,
        lead: float = 0.0,
    ) -> None:
        self.limits = limits or Limits()
        # a final may be granted up to ``lead`` seconds before its place in the window frees: only with
        # requests that wait for ``not_before`` at the socket (``GatedRequest``), see bot/tg/sendgate.py
        self.lead = lead
        self.max_retries = max_retries
        self._clock = clock
        self._call_later = call_later
        now = clock()
        self._global = Window(self.limits.per_second)
        self._actions = Bucket(self.limits.actions_per_second, self.limits.actions_per_second, now)
        self._chats: dict[int | str, _Chat] = {}
        self._waiting: dict[int | str, _Chat] = {}  # chats with queued finals
        self._spare: list[_Request] = []  # best-effort requests waiting for spare capacity
        self._seq = itertools.count()
        self._timer: Timer | None = None
        self._timer_at = float("inf")
        self._answers = 0  # answers being written (begin_answer): their finals will each need a slot
        self._recent_429: list[tuple[float, int | str]] = []
        self._last_429 = float("-inf")
        self._rate_changed = float("-inf")
        self.stats = {"final": 0, "preview": 0, "action": 0, "dropped": 0, "retry_after": 0}

    # -- PTB's interface -----------------------------------------------------------------
    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Drop waiting best-effort calls and stop the timer."""
        for request in self._spare:
            self._drop(request, "shutting down")
        self._spare.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer, self._timer_at = None, float("inf")

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, Result]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: BestEffort | None,
    ) -> Result:
        chat_id = data.get("chat_id")
        if chat_id is None or endpoint.startswith("get"):
            return await callback(*args, **kwargs)
        if isinstance(rate_limit_args, BestEffort) or endpoint in BEST_EFFORT_ENDPOINTS:
            kind = "action" if endpoint == "sendChatAction" else "preview"
        else:
            kind = "final"
        best = rate_limit_args if isinstance(rate_limit_args, BestEffort) else None
        max_wait = best.max_wait if best is not None else 1.0
        chat = self._chat(chat_id)
        request = _Request(kind, chat, endpoint, next(self._seq), self._clock() + max_wait, best)
        self._enqueue(request)
        attempt = 0
        while True:
            await self._granted(request)
            gate = Gate(request.not_before, self._clock)
            token = GATE.set(gate)
            try:
                result = await callback(*args, **kwargs)
                if gate.written is None and self.lead > 0:  # nothing waited at the gate: grant nothing early
                    log.warning("requests to Telegram are not gated; no message is granted early any more")
                    self.lead = 0.0
                return result
            except RetryAfter as e:
                attempt += 1
                if not self._on_retry_after(request, retry_seconds(e), attempt):
                    raise
            finally:
                GATE.reset(token)
                self._release(request, gate.answered)

    # -- queueing -------------------------------------------------------------------------
    def _chat(self, chat_id: Any) -> _Chat:
        try:
            key: int | str = int(chat_id)
        except (TypeError, ValueError):
            key = str(chat_id)  # "@channelusername"
        chat = self._chats.get(key)
        if chat is None:
            if len(self._chats) > 4096:
                self._forget_idle()
            lim, now = self.limits, self._clock()
            if isinstance(key, int) and key > 0:
                bucket = Bucket(lim.private_rate, lim.private_burst, now)
            else:
                bucket = Bucket(lim.group_rate, lim.group_burst, now)
            chat = self._chats[key] = _Chat(key, bucket)
        return chat

    def _forget_idle(self) -> None:
        now = self._clock()
        for key, chat in list(self._chats.items()):
            idle = not chat.busy and not chat.finals and chat.paused_until <= now and chat.previews_until <= now
            if idle and chat.bucket.has(chat.bucket.burst, now) and all(r.chat is not chat for r in self._spare):
                del self._chats[key]

    def _enqueue(self, request: _Request) -> None:
        if request.kind == "final":
            request.chat.finals.append(request)
            request.chat.last_final = request.seq
            self._waiting[request.chat.key] = request.chat
        else:
            self._spare.append(request)
        self._pump()

    async def _granted(self, request: _Request) -> None:
        try:
            await request.future
        except asyncio.CancelledError:
            if request.granted:
                self._release(request)
            else:
                self._remove(request)
            raise

    def _remove(self, request: _Request) -> None:
        chat = request.chat
        if request.kind == "final":
            if request in chat.finals:
                chat.finals.remove(request)
            if not chat.finals:
                self._waiting.pop(chat.key, None)
        elif request in self._spare:
            self._spare.remove(request)
        self._pump()

    def _release(self, request: _Request, answered: float | None = None) -> None:
        """``answered``: when the answer's first bytes came in (``Gate``); else it counts from now."""
        if request.granted and request.kind != "action":
            request.chat.busy = False
            self._global.done(self._clock() if answered is None else answered)
        request.granted = False
        self._pump()

    def _grant(self, request: _Request, now: float) -> None:
        if request.future.done():  # cancelled, and its task has not yet taken it out of the queue
            return
        if request.kind == "action":
            self._actions.take(now)
        else:
            request.not_before = self._global.take(now, self.lead if request.kind == "final" else 0.0)
            request.chat.bucket.take(now)
            request.chat.busy = True
        if request.args is not None:
            request.args.sent = True
        request.granted = True
        self.stats[request.kind] += 1
        request.future.set_result(None)

    def _drop(self, request: _Request, why: str) -> None:
        if not request.future.done():
            self.stats["dropped"] += 1
            request.future.set_exception(Dropped(f"{request.endpoint} not sent: {why}"))

    def _on_retry_after(self, request: _Request, seconds: float, attempt: int) -> bool:
        """Note a 429; True if the request was queued again (a final), False to raise it."""
        now = self._clock()
        chat = request.chat
        self.stats["retry_after"] += 1
        self._note_429(chat.key, now)
        if request.kind != "final":
            chat.previews_until = max(chat.previews_until, now + seconds)
            log.info("chat %s: flood control on %s, best effort paused %.0f s", chat.key, request.endpoint, seconds)
            return False
        chat.paused_until = max(chat.paused_until, now + seconds)
        if attempt > self.max_retries:
            log.warning("chat %s: flood control, giving up %s after %d tries", chat.key, request.endpoint, attempt)
            return False
        log.info("chat %s: flood control on %s, chat paused %.0f s", chat.key, request.endpoint, seconds)
        # back at the head of the chat's queue (before the release lets anything else of the chat go)
        request.future = asyncio.get_running_loop().create_future()
        chat.finals.appendleft(request)
        self._waiting[chat.key] = chat
        return True

    def _note_429(self, key: int | str, now: float) -> None:
        self._last_429 = now
        self._recent_429 = [(t, k) for t, k in self._recent_429 if t > now - GLOBAL_SIGNAL] + [(now, key)]
        if len({k for _, k in self._recent_429}) >= GLOBAL_CHATS and now - self._rate_changed >= 1.0:
            rate = max(self.limits.min_rate, self._global.limit * 0.8)
            if rate < self._global.limit:
                log.warning("flood control in several chats: sending at most %.1f messages a second", rate)
                self._global.limit = rate
                self._rate_changed = now

    def _recover(self, now: float) -> None:
        """A tenth of the full rate back for every RECOVER_EVERY seconds without a 429."""
        nominal = self.limits.per_second
        since = max(self._last_429, self._rate_changed)
        if self._global.limit < nominal and now - since >= RECOVER_EVERY:
            steps = math.floor((now - since) / RECOVER_EVERY)
            self._global.limit = min(nominal, self._global.limit + steps * nominal * 0.1)
            self._rate_changed = since + steps * RECOVER_EVERY

    def begin_answer(self) -> Callable[[], None]:
        """An answer is being written: until the returned callable is called (once is enough; it is the
        answer's final going to its queue, or the answer failing), previews leave a window slot for it."""
        self._answers += 1
        ended = False

        def end() -> None:
            nonlocal ended
            if not ended:
                ended = True
                self._answers -= 1
                self._pump()

        return end

    @property
    def answers(self) -> int:
        """Answers being written now (``begin_answer`` not yet ended)."""
        return self._answers

    @property
    def rate(self) -> float:
        """The current global rate (messages in any one second)."""
        return self._global.limit

    # -- the scheduler ----------------------------------------------------------------------
    def _spare_level(self, bucket: Bucket | Window) -> float:
        """The level a budget must have for a best-effort call: nearly full, and one left for a final."""
        full = bucket.limit if isinstance(bucket, Window) else bucket.burst
        return max(2.0, full * (1 - self.limits.spare))

    def _pump(self) -> None:
        """Grant what may go now, drop what is stale, and set the timer for the next change."""
        now = self._clock()
        self._recover(now)
        wake = float("inf")
        # finals: the oldest waiting chat first
        if self._global.ready(now, self.lead):
            ready = [c for c in self._waiting.values() if not c.busy and c.paused_until <= now]
            ready.sort(key=lambda c: c.finals[0].seq)
            for chat in ready:
                if not self._global.ready(now, self.lead):
                    break
                while chat.finals and chat.finals[0].future.done():  # cancelled, not yet taken out
                    chat.finals.popleft()
                if chat.finals and chat.bucket.has(1, now):
                    self._grant(chat.finals.popleft(), now)
                if not chat.finals:
                    del self._waiting[chat.key]
        # the next time a waiting final may go: its chat's turn, then the global budget
        first = float("inf")
        for chat in self._waiting.values():
            if not chat.busy:
                first = min(first, max(chat.paused_until, now + chat.bucket.wait(1, now)))
                if first <= now:
                    break
        if first < float("inf"):
            wake = max(first, now + max(0.0, self._global.wait(1, now) - self.lead))
        # best effort: only with spare capacity, and never once it is stale; a preview also leaves a slot
        # for the final of every answer being written
        global_floor = self._spare_level(self._global)
        no_spare = self._global.wait(global_floor, now)  # 0: spare capacity now (chat actions)
        preview_floor = max(global_floor, self._answers + 1.0)
        no_room = self._global.wait(preview_floor, now)  # 0: room for a preview now
        waiting: list[_Request] = []
        for request in self._spare:
            if request.future.done():
                continue
            chat = request.chat
            if request.kind == "preview" and chat.last_final > request.seq:
                self._drop(request, "a final of the chat came after it")
                continue
            if request.kind == "preview" and chat.previews_until > now:
                self._drop(request, "flood control")
                continue
            if request.deadline <= now:
                self._drop(request, "no spare capacity")
                continue
            if request.kind == "action" and self._answers > self._global.limit:
                self._drop(request, "more answers being written than a second's messages")
                continue
            if no_spare > 0 or (request.kind == "preview" and no_room > 0):
                at = now + (no_spare if request.kind == "action" else max(no_spare, no_room))
            elif request.kind == "action":
                if self._actions.has(1, now):
                    self._grant(request, now)
                    continue
                at = now + self._actions.wait(1, now)
            elif chat.busy:
                at = request.deadline  # looked at again when the chat's request ends
            else:
                floor = self._spare_level(chat.bucket)
                if chat.bucket.has(floor, now):
                    self._grant(request, now)
                    no_spare = self._global.wait(global_floor, now)
                    no_room = self._global.wait(preview_floor, now)
                    continue
                at = now + chat.bucket.wait(floor, now)
            waiting.append(request)
            wake = min(wake, request.deadline, at)
        self._spare = waiting
        self._schedule(wake, now)

    def _schedule(self, at: float, now: float) -> None:
        if at == self._timer_at:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer, self._timer_at = None, float("inf")
        if at == float("inf"):
            return
        call_later = self._call_later or asyncio.get_running_loop().call_later
        self._timer = call_later(max(0.0, at - now), self._fire)
        self._timer_at = at

    def _fire(self) -> None:
        self._timer, self._timer_at = None, float("inf")
        self._pump()
