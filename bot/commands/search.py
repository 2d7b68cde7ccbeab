"""/search <words>: the best matches over the chat's whole history, with their dates (Telegram and terminal)."""

from __future__ import annotations

from bot.core.ask import Assistant, ChatId
from bot.texts import t
from memory.recall import hit_lines

SEARCH_LIMIT = 8


def search_text(assistant: Assistant, chat_id: ChatId, query: str, lang: str) -> str:
    """The reply to /search (file and index I/O: call it off the event loop)."""
    if not query.strip():
        return t("search.usage", lang)
    hits = assistant.search(chat_id, query, SEARCH_LIMIT)
    if not hits:
        return t("search.none", lang, query=query.strip())
    lines = [t("search.header", lang, query=query.strip(), n=len(hits))]
    lines += [f"{i}. {line}" for i, line in enumerate(hit_lines(hits, assistant.timezone, width=160), 1)]
    return "\n".join(lines)
