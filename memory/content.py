"""Message content: plain strings or lists of API content blocks (text, image, tool_use, tool_result).

Helpers to measure, show and clean content the same way everywhere (window, summary,
recall, /history), so a tool call is never shown as raw JSON and never sent malformed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

CUT_MARK = "\n…[중략 / trimmed]…\n"
TOOL_RESULT_MAX_CHARS = 2000
"""Tool results longer than this are shrunk (head and tail kept) before they are stored or replayed."""

OTHER_BLOCK_CHARS = 100
"""What an image or document block counts for in character budgets."""

MAX_REPLY_CHARS = 500
"""A whole message a reply answers is quoted before it shortened to this (it may already be in the history)."""


def blocks(content: Any) -> list[Mapping[str, Any]]:
    """The content as a list of blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, Mapping)]


def _inner_text(value: Any) -> str:
    """The text of a tool_result's ``content`` (a string or a list of blocks)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):
        return "\n".join(str(b.get("text", "")) for b in value if isinstance(b, Mapping) and b.get("type") == "text")
    return ""


def _input_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) if value is not None else ""


def content_chars(content: Any) -> int:
    """Characters of a message's content: text, tool inputs and results; other blocks a constant."""
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in blocks(content):
        kind = block.get("type")
        if kind == "text":
            total += len(str(block.get("text", "")))
        elif kind == "tool_use":
            total += len(str(block.get("name", ""))) + len(_input_text(block.get("input")))
        elif kind == "tool_result":
            total += len(_inner_text(block.get("content")))
        else:
            total += OTHER_BLOCK_CHARS
    return total


def content_text(content: Any) -> str:
    """The text of a message's content (other blocks as a short ``[type]`` marker)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in blocks(content):
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            parts.append(f"[{block.get('type', 'block')}]")
    return "\n".join(parts)


def tool_call_line(name: str, value: Any, limit: int = 120) -> str:
    """A tool call as one short line, e.g. ``🔧 remember: 생일은 3월 14일``."""
    if isinstance(value, Mapping) and len(value) == 1:
        shown = str(next(iter(value.values())))
    elif isinstance(value, Mapping) and not value:
        shown = ""
    else:
        shown = _input_text(value)
    shown = " ".join(shown.split())
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return f"🔧 {name}: {shown}" if shown else f"🔧 {name}"


def display_text(content: Any, *, result_limit: int = 120) -> str:
    """The content as a person reads it: text, tool calls as ``🔧 name: …``, results as ``↳ …``."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in blocks(content):
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text", ""))
            if text.strip():
                parts.append(text)
        elif kind == "tool_use":
            parts.append(tool_call_line(str(block.get("name", "?")), block.get("input")))
        elif kind == "tool_result":
            text = " ".join(_inner_text(block.get("content")).split())
            if len(text) > result_limit:
                text = text[: result_limit - 1] + "…"
            parts.append(f"↳ {'⚠️ ' if block.get('is_error') else ''}{text}")
        else:
            parts.append(f"[{kind or 'block'}]")
    return "\n".join(parts)


def shorten(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters by removing its middle."""
    if len(text) <= limit:
        return text
    if limit <= len(CUT_MARK) + 2:
        return text[:limit]
    keep = limit - len(CUT_MARK)
    head = keep * 2 // 3
    return text[:head] + CUT_MARK + text[len(text) - (keep - head) :]


def quote_block(text: str) -> str:
    """``text`` as a Markdown quote ("> " before each line): what a reply answers, stored before it (a reply
    received by the bot, bot.tg.references, and one imported from Telegram, memory.imports.formats)."""
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines())


def unquote_block(quote: str) -> str:
    """The text of a Markdown quote (``quote_block``'s): each line without its "> " or ">"."""
    return "\n".join(line[2:] if line.startswith("> ") else line.removeprefix(">") for line in quote.splitlines())


def shrink_tool_result(text: str, limit: int = TOOL_RESULT_MAX_CHARS) -> str:
    """A long tool result cut to about ``limit`` characters: head and tail kept, with a note of the cut."""
    if len(text) <= limit:
        return text
    note_room = 120
    keep = max(2, limit - note_room)
    head = keep * 3 // 5
    tail = keep - head
    cut = len(text) - head - tail
    note = f"\n…[{cut:,}자 생략 / {cut:,} characters cut of {len(text):,}; ask again to see them]…\n"
    return text[:head] + note + text[len(text) - tail :]


def tool_use_ids(content: Any) -> list[str]:
    return [str(b.get("id")) for b in blocks(content) if b.get("type") == "tool_use"]


def tool_result_ids(content: Any) -> list[str]:
    return [str(b.get("tool_use_id")) for b in blocks(content) if b.get("type") == "tool_result"]


def is_tool_result_message(message: Mapping[str, Any]) -> bool:
    """A user message that answers tool calls (it belongs to the assistant message before it)."""
    return message.get("role") == "user" and bool(tool_result_ids(message.get("content")))


def api_content(content: Any) -> str | list[dict[str, Any]]:
    """Stored content as the Messages API accepts it again.

    Empty text blocks are dropped (the API rejects them), tool results are shrunk, and
    only the fields the API knows are kept.
    """
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for block in blocks(content):
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text", ""))
            if text.strip():
                out.append({"type": "text", "text": text})
        elif kind == "tool_use":
            value = block.get("input")
            out.append(
                {
                    "type": "tool_use",
                    "id": str(block.get("id")),
                    "name": str(block.get("name")),
                    "input": dict(value) if isinstance(value, Mapping) else {},
                }
            )
        elif kind == "tool_result":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": str(block.get("tool_use_id")),
                "content": shrink_tool_result(_inner_text(block.get("content"))) or "(empty)",
            }
            if block.get("is_error"):
                result["is_error"] = True
            out.append(result)
        else:
            out.append(dict(block))
    return out
