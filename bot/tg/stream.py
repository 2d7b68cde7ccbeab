"""Showing an answer while Claude writes it, then delivering it in full.

One ``ReplyStream`` per answer. Its ``feed`` is the model's ``on_text`` callback: it
only collects text and wakes a background task, so Telegram never slows the model down.
That task shows previews:

- in private chats as Bot API drafts (``sendMessageDraft``), which Telegram animates;
- elsewhere (or when a server refuses drafts) as one message, edited as text arrives.

Previews are plain text (half-written Markdown is rarely balanced), at most one per
``interval`` seconds, never the same text twice, and paused after a ``RetryAfter`` until
Telegram's delay has passed. ``finish`` stops the previews and delivers the whole answer
rendered as HTML: with ``sendMessage`` after drafts, or as a final edit of the preview
message (plus further messages when the answer needs several parts).

With the bot's ``FloodLimiter`` (bot/tg/ratelimit.py) previews are best effort: each is sent
only with spare capacity within ``interval`` seconds, else it is skipped (``Dropped``) and the
next one carries newer text. The answer never waits for a preview that has not gone out yet:
``finish`` drops it. One already on its way is awaited (a round trip, never a flood-control
pause: the limiter does not retry previews), and the limiter keeps each chat's requests in
order, so the final text is always the last one shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from telegram import Bot
from telegram.error import BadRequest, EndPointNotFound, Forbidden, InvalidToken, RetryAfter, TelegramError

from bot.tg.ratelimit import BestEffort, Dropped, FloodLimiter, retry_seconds
from bot.tg.send import Target, finish_in_message, is_not_modified, send_markdown, send_plain
from bot.tg.split import TELEGRAM_LIMIT, utf16_len

log = logging.getLogger(__name__)

ELLIPSIS = "…"


def preview_text(text: str, limit: int = TELEGRAM_LIMIT) -> str:
    """What a preview shows: the text so far, or its newest end when it outgrew one message."""
    text = text.strip()
    if utf16_len(text) <= limit:
        return text
    budget = limit - utf16_len(ELLIPSIS) - 1
    units = 0
    start = len(text)
    while start > 0:
        units += 2 if ord(text[start - 1]) > 0xFFFF else 1
        if units > budget:
            break
        start -= 1
    tail = text[start:]
    # start on a line or word boundary when one is near
    for sep in ("\n", " "):
        cut = tail.find(sep, 0, len(tail) // 4)
        if cut >= 0:
            tail = tail[cut + 1 :]
            break
    return f"{ELLIPSIS}\n{tail.lstrip()}"


def _nothing() -> None:
    """No limiter to tell (a bot without the FloodLimiter)."""


class ReplyStream:
    """Previews of one answer while it is written, then the answer itself."""

    def __init__(
        self,
        bot: Bot,
        target: Target,
        *,
        drafts: bool,
        interval: float = 1.0,
        limit: int = TELEGRAM_LIMIT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot = bot
        self.target = target
        self.drafts = drafts  # False once Telegram refused a draft
        self.drafts_refused = False
        self.interval = interval
        self.limit = limit
        self.clock = clock
        self.draft_id = random.randint(1, 2**31 - 1)  # non-zero; one per answer
        self.message_id: int | None = None  # the preview message (edit mode)
        self.shown = ""  # the text of the last preview
        self.previews = 0
        self._chunks: list[str] = []
        self._next_at = 0.0  # the throttle: no preview before this time
        self._paused_until = 0.0  # Telegram's RetryAfter
        self._wake = asyncio.Event()
        self._closed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        limiter = getattr(bot, "rate_limiter", None)
        self._limited = isinstance(limiter, FloodLimiter)
        self._pending: BestEffort | None = None  # the last preview handed to the limiter
        # the limiter keeps a window slot free of previews for this answer's final until it is sent
        self._end_answer = limiter.begin_answer() if isinstance(limiter, FloodLimiter) else _nothing

    @property
    def text(self) -> str:
        return "".join(self._chunks)

    async def feed(self, delta: str) -> None:
        """Take the next piece of the answer (the model's ``on_text``); never waits for Telegram."""
        if not delta or self._closed.is_set():
            return
        self._chunks.append(delta)
        self._wake.set()
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"preview-{self.target.chat_id}")

    # -- previews -----------------------------------------------------------------------
    async def _run(self) -> None:
        try:
            while not self._closed.is_set():
                await self._wake.wait()
                delay = max(self._next_at, self._paused_until) - self.clock()
                if delay > 0:
                    await self._closed_within(delay)
                # checked after every wait (wait_for may time out just as the stream closed),
                # and never an await between this check and clearing the wake-up
                if self._closed.is_set():
                    return
                self._wake.clear()
                text = preview_text(self.text, self.limit)
                if not text or text == self.shown:
                    continue
                if not await self._show(text):
                    return
                self._next_at = self.clock() + self.interval
        except Exception:  # a preview must never break the answer
            log.exception("chat %s: previews stopped", self.target.chat_id)

    async def _closed_within(self, seconds: float) -> None:
        """Sleep ``seconds``, or less if the stream closes meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closed.wait(), seconds)

    def _best_effort(self) -> dict[str, Any]:
        """The keyword that marks a call as a droppable preview for the limiter (none without one)."""
        if not self._limited:
            return {}
        self._pending = BestEffort(max_wait=self.interval)
        return {"rate_limit_args": self._pending}

    async def _show(self, text: str) -> bool:
        """Show one preview; False when previews should stop for this answer."""
        t = self.target
        try:
            if self.drafts:
                await self.bot.send_message_draft(
                    t.chat_id, self.draft_id, text, message_thread_id=t.thread_id, **self._best_effort()
                )
            elif self.message_id is None:
                message = await send_plain(self.bot, t, text, **self._best_effort())
                if message is not None:
                    self.message_id = message.message_id
            else:
                await self.bot.edit_message_text(
                    text, chat_id=t.chat_id, message_id=self.message_id, **self._best_effort()
                )
        except Dropped:  # no spare capacity: skipped, the next preview shows newer text
            self._wake.set()
            return True
        except RetryAfter as e:
            wait = retry_seconds(e)
            log.info("chat %s: flood control, previews paused for %.0f s", t.chat_id, wait)
            self._paused_until = self.clock() + wait
            self._wake.set()  # try again with the newest text once the pause is over
            return True
        except (BadRequest, Forbidden, InvalidToken, EndPointNotFound) as e:
            if is_not_modified(e):
                self.shown = text
                return True
            if self.drafts:
                log.info("chat %s: drafts refused (%s); editing a message instead", t.chat_id, e)
                self.drafts = False
                self.drafts_refused = True
                self._wake.set()
                return True
            log.warning("chat %s: preview refused (%s); no more previews for this answer", t.chat_id, e)
            return False
        except TelegramError as e:  # network trouble: skip this preview, the next one may work
            log.info("chat %s: preview failed (%s)", t.chat_id, e)
            return True
        self.shown = text
        self.previews += 1
        return True

    async def _stop(self) -> None:
        """Stop previews. One still waiting in the limiter is dropped; one already on its way is
        awaited (a round trip), so that the final text comes after it."""
        self._closed.set()
        self._wake.set()
        task = self._task
        try:
            if task is not None and not task.done():
                if self._limited and self._pending is not None and not self._pending.sent:
                    task.cancel()  # waiting for spare capacity: nothing has reached Telegram
                await asyncio.wait({task})
        finally:
            self._end_answer()  # the final (or the failure notice) is queued next

    # -- the end of the answer ----------------------------------------------------------
    async def finish(self, markdown: str) -> None:
        """Deliver the whole answer, rendered as HTML (plain text where Telegram refuses it)."""
        await self._stop()
        if self.message_id is not None:
            await finish_in_message(self.bot, self.target, self.message_id, self.shown, markdown)
        else:
            await send_markdown(self.bot, self.target, markdown)

    async def fail(self, notice: str) -> None:
        """The answer failed: replace the preview message with ``notice`` (or send it)."""
        await self._stop()
        if self.message_id is not None:
            try:
                await self.bot.edit_message_text(notice, chat_id=self.target.chat_id, message_id=self.message_id)
                return
            except TelegramError as e:
                log.info("chat %s: could not replace the preview (%s)", self.target.chat_id, e)
        await send_plain(self.bot, self.target, notice)

    async def cancel(self) -> None:
        """Stop previews without delivering anything (the handler is being cancelled)."""
        self._end_answer()
        self._closed.set()
        self._wake.set()
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
