"""A failed answer in Telegram: what the person who asked sees, and what the bot's owner is told.

Some failures only the owner can fix (the Claude API errors page: a refused key, a billing problem, a key
without access, a spend limit or the tier's monthly cap, a model that is gone). A member then sees a
short message that it is not about their message, and the owner gets what to fix in a private message
(at most once per kind every ``ALERT_EVERY`` seconds, so a busy group does not flood it). The owner who
asks in a private chat is told what to fix right there. Everything else (overloaded, rate limited,
too large, …) is worded the same for everyone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from telegram import Chat, Update
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.texts import error_text
from bot.tg.access import guard
from bot.tg.replies import services
from bot.tg.send import Target, send_plain

log = logging.getLogger(__name__)

OWNER_FIXES = frozenset({"auth", "permission", "billing", "spend_limit", "spend_cap", "not_found"})
ALERT_EVERY = 3600.0  # seconds between two private messages to the owner about the same kind of failure
OWNER_LANG = "ko"  # the owner's private messages (the bot's default language; the owner's own is not known)


async def failure_text(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    kind: str,
    lang: str,
    *,
    now: Callable[[], float] = time.monotonic,
) -> str:
    """The text for the asker of a failed answer of ``kind``; tells the owner when only they can fix it."""
    if kind not in OWNER_FIXES:
        return error_text(kind, lang)
    model = services(context).assistant.model.name
    owner = guard(context).access.owner
    user = update.effective_user
    chat = update.effective_chat
    if owner is not None and user is not None and user.id == owner and chat is not None and chat.type == Chat.PRIVATE:
        return error_text(kind, lang, where="owner", model=model)
    if owner is None:
        log.warning("answer failed (%s): only the owner can fix it, and no owner is known yet", kind)
    else:
        await _tell_owner(context, owner, kind, model, now())
    return error_text(kind, lang, model=model)


async def _tell_owner(context: ContextTypes.DEFAULT_TYPE, owner: int, kind: str, model: str, at: float) -> None:
    sent: dict[str, float] = context.bot_data.setdefault("owner_alerts", {})
    last = sent.get(kind)
    if last is not None and at - last < ALERT_EVERY:
        return
    sent[kind] = at
    try:
        await send_plain(context.bot, Target(owner), error_text(kind, OWNER_LANG, where="owner", model=model))
    except TelegramError as e:  # e.g. the owner blocked the bot: the log still says it
        log.warning("could not tell the owner about a failed answer (%s): %s", kind, e)
