"""Delivering text to Telegram without ever losing it.

Answers go out as HTML parts (bot/tg/render.py). When Telegram refuses a part
("can't parse entities", or any other failure), that same part is sent again as plain
text: its Markdown source, split to Telegram's limit. A chat that cannot receive
messages at all (the user blocked the bot, the bot left the group, the chat is gone)
is not retried: the answer is already in the transcript, so it is logged and dropped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from telegram import Bot, Message, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, TelegramError

from bot.tg.render import Part, html_to_text, render_parts
from bot.tg.split import TELEGRAM_LIMIT, split_text, utf16_len

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Target:
    """Where a reply goes: the chat, its forum topic, and the message it answers (groups)."""

    chat_id: int
    thread_id: int | None = None
    reply_to: int | None = None


def is_parse_error(error: TelegramError) -> bool:
    """Telegram could not parse the HTML (a 400 "can't parse entities")."""
    return isinstance(error, BadRequest) and "parse entities" in str(error).lower()


def is_not_modified(error: TelegramError) -> bool:
    """An edit to exactly the text the message already has."""
    return isinstance(error, BadRequest) and "not modified" in str(error).lower()


def is_unreachable(error: TelegramError) -> bool:
    """The chat cannot receive messages: the bot was blocked or removed, or the chat does not exist."""
    return isinstance(error, Forbidden) or (isinstance(error, BadRequest) and "chat not found" in str(error).lower())


def _log_unreachable(target: Target, error: TelegramError) -> None:
    log.warning("chat %s: cannot deliver the answer (%s); it is kept in the transcript", target.chat_id, error)


def _reply(target: Target, first: bool) -> ReplyParameters | None:
    if not first or target.reply_to is None:
        return None
    return ReplyParameters(message_id=target.reply_to, allow_sending_without_reply=True)


async def send_plain(
    bot: Bot, target: Target, text: str, *, first: bool = True, rate_limit_args: object | None = None
) -> Message | None:
    """Send ``text`` without formatting, split into Telegram-sized parts; returns the first message.

    ``rate_limit_args`` go to the bot's rate limiter (bot/tg/ratelimit.py), e.g. to mark a preview.
    """
    sent: Message | None = None
    extra = {} if rate_limit_args is None else {"rate_limit_args": rate_limit_args}
    for chunk in split_text(text):
        message = await bot.send_message(
            target.chat_id,
            chunk,
            message_thread_id=target.thread_id,
            reply_parameters=_reply(target, first and sent is None),
            **extra,
        )
        sent = sent or message
    return sent


async def send_part(bot: Bot, target: Target, part: Part, *, first: bool = True) -> Message | None:
    """Send one part as HTML; if Telegram refuses it, send the part's plain text instead."""
    try:
        return await bot.send_message(
            target.chat_id,
            part.html,
            parse_mode=ParseMode.HTML,
            message_thread_id=target.thread_id,
            reply_parameters=_reply(target, first),
        )
    except TelegramError as e:
        if is_unreachable(e):
            raise
        reason = "Telegram could not parse the HTML" if is_parse_error(e) else "sending as HTML failed"
        log.warning("chat %s: %s (%s); sending that part as plain text", target.chat_id, reason, e)
    return await send_plain(bot, target, part.plain, first=first)


async def send_parts(bot: Bot, target: Target, parts: list[Part]) -> list[Message]:
    """Send every part in order; a part that fails even as plain text does not stop the others.

    A chat that cannot receive messages stops the delivery without an error (see the module doc).
    """
    sent: list[Message] = []
    failed: TelegramError | None = None
    for i, part in enumerate(parts):
        try:
            message = await send_part(bot, target, part, first=i == 0)
        except TelegramError as e:
            if is_unreachable(e):
                _log_unreachable(target, e)
                return sent
            log.error("chat %s: part %d of %d could not be delivered: %s", target.chat_id, i + 1, len(parts), e)
            failed = e
            continue
        if message is not None:
            sent.append(message)
    if failed is not None:
        raise failed
    return sent


async def send_markdown(bot: Bot, target: Target, markdown: str) -> list[Message]:
    """Send Claude's Markdown rendered as Telegram HTML, in as many parts as it needs."""
    return await send_parts(bot, target, render_parts(markdown))


async def edit_part(bot: Bot, target: Target, message_id: int, part: Part, shown: str) -> bool:
    """Replace a preview message (showing ``shown``) with ``part``; False if it cannot be edited.

    Raises the TelegramError when the chat cannot receive messages at all.
    """
    if part.html == shown and html_to_text(part.html) == part.html:
        return True  # the preview already shows exactly this text
    try:
        await bot.edit_message_text(part.html, chat_id=target.chat_id, message_id=message_id, parse_mode=ParseMode.HTML)
        return True
    except TelegramError as e:
        if is_not_modified(e):
            return True
        if is_unreachable(e):
            raise
        reason = "Telegram could not parse the HTML" if is_parse_error(e) else "editing as HTML failed"
        log.warning("chat %s: %s (%s); trying plain text", target.chat_id, reason, e)
    if utf16_len(part.plain) <= TELEGRAM_LIMIT and part.plain.strip():
        try:
            await bot.edit_message_text(part.plain, chat_id=target.chat_id, message_id=message_id)
            return True
        except TelegramError as e:
            if is_not_modified(e):
                return True
            log.warning("chat %s: editing the preview failed (%s); sending a new message", target.chat_id, e)
    return False


async def finish_in_message(bot: Bot, target: Target, message_id: int, shown: str, markdown: str) -> list[Message]:
    """Deliver the answer into an existing preview message: edit it to the first part, send the rest."""
    parts = render_parts(markdown)
    if not parts:
        return []
    try:
        edited = await edit_part(bot, target, message_id, parts[0], shown)
    except TelegramError as e:
        if not is_unreachable(e):
            raise
        _log_unreachable(target, e)
        return []
    if edited:
        return await send_parts(bot, Target(target.chat_id, target.thread_id), parts[1:])
    try:  # the preview cannot become the answer: remove it rather than leave a fragment
        await bot.delete_message(target.chat_id, message_id)
    except TelegramError as e:
        log.info("chat %s: could not delete the preview (%s)", target.chat_id, e)
    return await send_parts(bot, target, parts)
