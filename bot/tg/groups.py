"""Group chats: is a message for the bot, and what is it saying without the @mention.

In a group the bot answers only when mentioned (``@botname``, or a text mention of
the bot's account) or when someone replies to one of its messages. Telegram gives
entity offsets in UTF-16 code units, so the mention is cut out of the UTF-16 text.
"""

from __future__ import annotations

import re

from telegram import Chat, Message, MessageEntity


def is_group(chat: Chat) -> bool:
    return chat.type in (Chat.GROUP, Chat.SUPERGROUP)


def _text_and_entities(message: Message) -> tuple[str, tuple[MessageEntity, ...]]:
    if message.text is not None:
        return message.text, tuple(message.entities or ())
    return message.caption or "", tuple(message.caption_entities or ())


def _slice(data: bytes, offset: int, length: int) -> str:
    return data[offset * 2 : (offset + length) * 2].decode("utf-16-le", errors="replace")


def _mention_spans(message: Message, username: str, bot_id: int) -> list[tuple[int, int]]:
    """(offset, length) in UTF-16 units of every mention of the bot in the text or caption."""
    text, entities = _text_and_entities(message)
    data = text.encode("utf-16-le")
    spans = []
    for e in entities:
        if (
            e.type == MessageEntity.MENTION
            and username
            and _slice(data, e.offset, e.length).lower() == ("@" + username.lower())
        ):
            spans.append((e.offset, e.length))
        elif e.type == MessageEntity.TEXT_MENTION and e.user is not None and e.user.id == bot_id:
            spans.append((e.offset, e.length))
    return spans


def _plain_mention(username: str) -> re.Pattern[str]:
    return re.compile(rf"@{re.escape(username)}(?!\w)", re.IGNORECASE)


def is_for_bot(message: Message, username: str, bot_id: int) -> bool:
    """A group message is for the bot when it mentions the bot or replies to one of its messages."""
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == bot_id:
        return True
    if _mention_spans(message, username, bot_id):
        return True
    text, _ = _text_and_entities(message)
    return bool(username) and _plain_mention(username).search(text) is not None


def strip_mention(message: Message, username: str, bot_id: int) -> str:
    """The message's text (or caption) with the bot's mentions removed and tidied up."""
    text, _ = _text_and_entities(message)
    data = text.encode("utf-16-le")
    for offset, length in sorted(_mention_spans(message, username, bot_id), reverse=True):
        end = (offset + length) * 2
        if data[end : end + 2] == b" \x00":
            end += 2  # one space after the mention goes with it
        data = data[: offset * 2] + data[end:]
    text = data.decode("utf-16-le", errors="replace")
    if username:
        text = _plain_mention(username).sub("", text)
    return re.sub(r"^[\s,:;]+", "", text).strip()
