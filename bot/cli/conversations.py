"""The terminal's list of conversations (``/chats`` and ``python -m bot chat --list``), and finding
one by its number in that list or by its name (memory/conversations.py reads them)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot.cli.texts import text
from memory.conversations import Conversation, find_conversation, list_conversations
from memory.transcript import Transcript


def conversations_text(conversations: list[Conversation], current: str | None, timezone: str, lang: str) -> str:
    """Numbered, the most recently used first: name, last used, first words; archived ones marked,
    and ``current`` (the chat of the session, None for ``--list``) with a star."""
    if not conversations:
        return text("chats.none", lang)
    zone = ZoneInfo(timezone)
    names = [c.name + (f" ({text('chats.archived', lang)})" if c.archived else "") for c in conversations]
    width = max(len(n) for n in names)
    lines = [text("chats.header" if current is not None else "chats.header_list", lang)]
    for number, (conversation, name) in enumerate(zip(conversations, names, strict=True), 1):
        mark = "*" if not conversation.archived and conversation.chat_id == current else " "
        when = datetime.fromtimestamp(conversation.last_used, zone).strftime("%Y-%m-%d %H:%M")
        lines.append(f"{mark}{number:>3}  {name:<{width}}  {when}  {conversation.first_words}".rstrip())
    return "\n".join(lines)


def pick(transcript: Transcript, choice: str, listed: list[Conversation] | None = None) -> Conversation | None:
    """The conversation numbered ``choice`` in ``listed`` (else in a fresh list), or named ``choice``."""
    if choice.isdigit():
        conversations = listed if listed else list_conversations(transcript)
        number = int(choice)
        return conversations[number - 1] if 1 <= number <= len(conversations) else None
    return find_conversation(transcript, choice)


def last_used(transcript: Transcript) -> str | None:
    """The chat id of the most recently used current conversation (``chat -c``), if any."""
    conversations = list_conversations(transcript, archived=False)
    return conversations[0].chat_id if conversations else None
