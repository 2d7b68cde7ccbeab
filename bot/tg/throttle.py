"""Command replies per person in a group, throttled: one member's flood of free commands cannot stall the group.

A group's replies share Telegram's budget of 20 messages a minute (bot/tg/ratelimit.py), so 40 ``/memory``
from one member would push everyone's answers back by two minutes (and a burst of 5 replies already made
the admin's answers 4x slower in ``bench.hostile --part commands``; 2 leave them as quiet).

Each person gets a small bucket per group: ``BURST`` commands at once, then one more every
``REFILL_SECONDS``; a command beyond it is dropped (logged, no reply: a reply would spend the very
budget the throttle keeps). The owner is never throttled, nor anyone in a private chat (their replies
use their own chat's budget). Questions are not commands: they have their own lanes and daily limits.
With ``TELEGRAM_RATE_FACTOR`` (a Bot API server that allows more, such as the tests' fake) the bucket is
that many times larger and faster: it keeps the same share of the group's budget.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from telegram import Update
from telegram.ext import ContextTypes

from bot.tg.access import guard
from bot.tg.groups import is_group

log = logging.getLogger(__name__)

BURST = 2
REFILL_SECONDS = 30.0  # 2 commands a minute a person, a tenth of a group's 20 messages a minute
MAX_KEYS = 10_000  # buckets kept; full ones are forgotten first

THROTTLE = "command_throttle"

Callback = Callable[[Update, ContextTypes.DEFAULT_TYPE], Awaitable[None]]


class CommandThrottle:
    """A token bucket per (chat, person), on an injected clock."""

    def __init__(
        self, now: Callable[[], datetime], burst: int = BURST, refill: float = REFILL_SECONDS, factor: float = 1.0
    ) -> None:
        self.now = now
        self.burst = max(1, round(burst * factor))
        self.refill = refill / factor
        self._buckets: dict[tuple[int, int], tuple[float, datetime]] = {}

    def allow(self, chat_id: int, user_id: int) -> bool:
        """Take one command from the person's bucket in the chat; False when it is empty."""
        now = self.now()
        tokens, since = self._buckets.get((chat_id, user_id), (float(self.burst), now))
        tokens = min(float(self.burst), tokens + max(0.0, (now - since).total_seconds()) / self.refill)
        if tokens < 1.0:
            self._buckets[(chat_id, user_id)] = (tokens, now)
            return False
        self._buckets[(chat_id, user_id)] = (tokens - 1.0, now)
        if len(self._buckets) > MAX_KEYS:
            self._forget_full(now)
        return True

    def _forget_full(self, now: datetime) -> None:
        full = [k for k, (n, t) in self._buckets.items() if n + (now - t).total_seconds() / self.refill >= self.burst]
        for key in full:
            del self._buckets[key]


def throttled(callback: Callback) -> Callback:
    """``callback`` for a command, run only while the sender's bucket in a group has room."""

    async def run(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, user = update.effective_message, update.effective_user
        if message is not None and user is not None and is_group(message.chat):
            throttle: CommandThrottle = context.bot_data[THROTTLE]
            if not guard(context).access.is_owner(user.id) and not throttle.allow(message.chat.id, user.id):
                log.info("chat %s: a command from user %s dropped (too many commands a minute)", message.chat.id,
                         user.id)  # fmt: skip
                return
        await callback(update, context)

    return run
