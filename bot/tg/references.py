"""Replies and quotes: the message a user answers goes to Claude as context before the question.

When a message replies to an earlier one (or quotes part of it, Bot API 7 ``Message.quote``),
that text is put before the question as a Markdown quote (``> …``), shortened when long, in
private chats and in groups. It is stored as part of the user turn, with the reference
(``reply_to``: the message id and the quoted text), so /history, recall and later requests
show what was answered. A photo or document replied to is quoted by its marker and caption
(``[사진] …``, ``[문서] name — …``), never its content.

In forum topics every message "replies" to the topic's first message; that is not a reply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from telegram import Message

from bot.tg import documents, photos
from bot.tg.groups import is_group
from memory.content import MAX_REPLY_CHARS, quote_block, shorten

MAX_QUOTE_CHARS = 1000  # a part the user chose to quote (Telegram allows up to 1024)


@dataclass(frozen=True)
class Reference:
    message_id: int | None
    text: str  # as it is shown to Claude (shortened)
    quote: bool = False  # the user quoted a part of the message

    def meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message_id": self.message_id, "text": self.text}
        if self.quote:
            out["quote"] = True
        return out

    def block(self) -> str:
        return quote_block(self.text)


def message_text(message: Message) -> str:
    """What a message says, as the bot would store it: its text, or the marker of a photo or document."""
    if message.text:
        return message.text
    caption = message.caption or ""
    if message.photo:
        return photos.stored_text(caption)
    if message.document is not None:
        return documents.stored_text(message.document.file_name or "document", caption)
    return caption


def _is_topic_root(message: Message, replied: Message) -> bool:
    if replied.forum_topic_created is not None:
        return True
    return bool(message.is_topic_message and replied.message_id == message.message_thread_id)


def reference_of(message: Message) -> Reference | None:
    """The message or quote that ``message`` answers, or None."""
    replied = message.reply_to_message
    if replied is not None and _is_topic_root(message, replied):
        replied = None
    quote = message.quote
    if quote is not None and quote.text.strip():
        message_id = replied.message_id if replied is not None else None
        return Reference(message_id, shorten(quote.text.strip(), MAX_QUOTE_CHARS), quote=True)
    if replied is None:
        return None
    text = message_text(replied).strip()
    if not text:
        return None
    author = replied.from_user
    if is_group(message.chat) and author is not None and not author.is_bot:
        text = f"{author.first_name or author.id}: {text}"  # in groups: who said it
    return Reference(replied.message_id, shorten(text, MAX_REPLY_CHARS))


def with_reference(text: str, reference: Reference | None) -> str:
    """The question with the quoted message before it."""
    if reference is None:
        return text
    return f"{reference.block()}\n\n{text}" if text.strip() else reference.block()


def thread_meta(message: Message) -> dict[str, Any]:
    """The forum topic the message was sent in (replies and reminders go back there)."""
    if message.is_topic_message and message.message_thread_id is not None:
        return {"thread_id": message.message_thread_id}
    return {}
