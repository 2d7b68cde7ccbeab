"""Telegram update handlers: small functions that hand each chat's text to the assistant."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from telegram import Update
from telegram.constants import ChatAction
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.ask import Assistant, Question
from bot.config import Settings
from bot.model import ModelError
from bot.texts import error_text, lang_of, t
from bot.tg.split import split_text

log = logging.getLogger(__name__)

TYPING_EVERY = 4.0  # seconds; Telegram shows "typing…" for about 5 s


@dataclass
class Services:
    """What the handlers share, kept in ``application.bot_data["services"]``."""

    settings: Settings
    assistant: Assistant
    chat_locks: dict[int, asyncio.Lock] = field(default_factory=dict)

    def chat_lock(self, chat_id: int) -> asyncio.Lock:
        """Handling of one chat's messages is strictly sequential, across ask, reply and upkeep."""
        lock = self.chat_locks.get(chat_id)
        if lock is None:
            lock = self.chat_locks[chat_id] = asyncio.Lock()
        return lock


def services(context: ContextTypes.DEFAULT_TYPE) -> Services:
    return context.bot_data["services"]  # type: ignore[no-any-return]


@contextlib.asynccontextmanager
async def typing(context: ContextTypes.DEFAULT_TYPE, chat_id: int) -> AsyncIterator[None]:
    """Keep the "typing…" indicator alive while the block runs."""

    async def keep_typing() -> None:
        while True:
            with contextlib.suppress(TelegramError):
                await context.bot.send_chat_action(chat_id, ChatAction.TYPING)
            await asyncio.sleep(TYPING_EVERY)

    task = asyncio.create_task(keep_typing())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def check_allowed(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """True if the sender may use the bot; otherwise tell them their id and how to be added."""
    user = update.effective_user
    if services(context).settings.user_allowed(user.id if user else None):
        return True
    message = update.effective_message
    if message is not None and user is not None:
        log.info("refused user %s", user.id)
        await message.reply_text(t("not_allowed", lang_of(user.language_code), user_id=user.id))
    return False


async def send_long(context: ContextTypes.DEFAULT_TYPE, chat_id: int, text: str) -> None:
    """Send ``text``, split into Telegram-sized parts."""
    for part in split_text(text):
        await context.bot.send_message(chat_id, part)


async def on_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Answer a text message with Claude and the chat's memory."""
    message = update.effective_message
    chat = update.effective_chat
    if message is None or chat is None or not message.text:
        return
    if not await check_allowed(update, context):
        return
    svc = services(context)
    user = update.effective_user
    lang = lang_of(user.language_code if user else None)
    async with svc.chat_lock(chat.id):
        try:
            async with typing(context, chat.id):
                answer = await svc.assistant.ask(chat.id, Question(message.text))
        except ModelError as e:
            await message.reply_text(error_text(e.kind, lang))
            return
        await send_long(context, chat.id, answer.text)
        await svc.assistant.maintain(chat.id)


async def on_other(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Politely decline messages that are not text (nothing is stored)."""
    message = update.effective_message
    if message is None or not await check_allowed(update, context):
        return
    user = update.effective_user
    await message.reply_text(t("text_only", lang_of(user.language_code if user else None)))


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log the error and, where there is a chat, say something went wrong."""
    log.error("error while handling an update: %s", context.error, exc_info=context.error)
    if isinstance(update, Update) and update.effective_chat is not None:
        user = update.effective_user
        with contextlib.suppress(TelegramError):
            await context.bot.send_message(
                update.effective_chat.id, t("error.internal", lang_of(user.language_code if user else None))
            )
