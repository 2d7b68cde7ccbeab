"""Replying in Telegram: the services the handlers share, the sender's language, and the bot's own short texts.

The lowest layer of the front end's handlers: the gate (access.py), the handlers, the commands and the
reminders all reply through these; this module imports none of them.
"""

from __future__ import annotations

import logging
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from telegram import Message, Update
from telegram.ext import ContextTypes

from bot.config import Settings
from bot.core.ask import Assistant
from bot.texts import lang_of
from bot.tg.groups import is_group
from bot.tg.ratelimit import BestEffort
from bot.tg.send import Target, send_plain

log = logging.getLogger(__name__)


@dataclass
class Services:
    """What the handlers share, kept in ``application.bot_data["services"]``."""

    settings: Settings
    assistant: Assistant
    stream_interval: float = 1.0  # seconds between two previews of an answer in one chat
    no_drafts: set[int] = field(default_factory=set)  # chats where Telegram refused draft previews

    def chat_lock(self, chat_id: int) -> AbstractAsyncContextManager[None]:
        """Handling of one chat's messages is strictly sequential, across ask and reply."""
        return self.assistant.lock(chat_id)


def services(context: ContextTypes.DEFAULT_TYPE) -> Services:
    return context.bot_data["services"]  # type: ignore[no-any-return]


def lang_for(update: Update) -> str:
    """The language of the bot's own texts for the sender (Korean by default)."""
    user = update.effective_user
    return lang_of(user.language_code if user else None)


def target_for(message: Message) -> Target:
    """Replies go to the message's chat and topic; in groups they quote the message they answer."""
    thread = message.message_thread_id if message.is_topic_message else None
    return Target(message.chat.id, thread, message.message_id if is_group(message.chat) else None)


async def reply(update: Update, context: ContextTypes.DEFAULT_TYPE, text: str) -> None:
    """Send one of the bot's own (plain) texts in answer to the update's message."""
    message = update.effective_message
    if message is not None:
        await send_plain(context.bot, target_for(message), text)


NOTICE_WAIT = 30.0  # seconds a background notice may wait for spare capacity before it is dropped


def reply_later(update: Update, context: ContextTypes.DEFAULT_TYPE, text: str, *, spare_only: bool = True) -> None:
    """Send one of the bot's own texts in the background: never awaited, so it holds nothing up.

    ``spare_only`` (a stranger's refusal): only with spare flood capacity, dropped when there is no
    room within NOTICE_WAIT seconds. Otherwise it takes its turn in the chat's queue like any reply.
    """
    message = update.effective_message
    if message is None:
        return
    limit = BestEffort(max_wait=NOTICE_WAIT) if spare_only else None

    async def send() -> None:
        try:
            await send_plain(context.bot, target_for(message), text, rate_limit_args=limit)
        except Exception as e:  # Dropped included (a notice is worth no wait), or the bot already stopping
            log.info("chat %s: a notice was not sent (%s)", message.chat.id, e)

    context.application.create_task(send(), update=update, name="notice")
