"""The ``search_memory`` tool: Claude searches the chat's whole history when it needs to look further."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.texts import t
from bot.tools import Tool, ToolContext, ToolResult
from memory.recall import RecallIndex, hit_lines

SEARCH_MEMORY = "search_memory"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20


def recall_tools(index: RecallIndex, tz: str) -> list[Tool]:
    """``search_memory`` over ``index``; dates are shown in ``tz``."""

    def search(ctx: ToolContext, value: Mapping[str, Any]) -> ToolResult:
        query = value.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult("'query' must be the words to search for", True)
        limit = value.get("limit", DEFAULT_LIMIT)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            return ToolResult(f"'limit' must be a whole number from 1 to {MAX_LIMIT}", True)
        today = ctx.now.astimezone(ZoneInfo(tz)).date() if isinstance(ctx.now, datetime) else None
        hits = index.search(ctx.chat_id, query, min(limit, MAX_LIMIT), today=today)
        status = index.status(ctx.chat_id)
        building = "" if status.ready else "\n" + t("search.tool_building", "en", percent=status.percent)
        if not hits:
            return ToolResult(
                f"nothing found: no earlier message of this chat is related to {query!r} (none holds these words "
                f"or means anything close){building}"
            )
        lines = hit_lines(hits, tz, width=400)
        return ToolResult(f"{len(hits)} matches, best first (date, who, text):\n" + "\n".join(lines) + building)

    return [
        Tool(
            SEARCH_MEMORY,
            "Search the whole history of this chat — every earlier conversation, also those before a reset — "
            "for messages about something, and get the best matches with their dates and who said them. Use "
            "it when the user refers to something from the past that is not in the summary, the facts or the "
            'related memories you were given ("what was that restaurant I mentioned in May?"). Search with '
            "the distinctive words (names, places, numbers, topics), in the language they were said in.",
            {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "The words to search for."},
                    "limit": {
                        "type": "integer",
                        "description": f"How many matches to return (default {DEFAULT_LIMIT}, at most {MAX_LIMIT}).",
                    },
                },
                "required": ["query"],
            },
            search,
        )
    ]
