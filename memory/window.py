"""The verbatim recent window: the last turns, trimmed by count and by characters.

The window always starts on a user turn, alternates roles and ends on an assistant
turn, so that the next user question can be appended and the API accepts it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CUT_MARK = "\n…[중략 / trimmed]…\n"


def content_chars(content: Any) -> int:
    """Characters of a message's text (image blocks count a small constant)."""
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content or []:
        if isinstance(block, Mapping) and block.get("type") == "text":
            total += len(str(block.get("text", "")))
        else:
            total += 100
    return total


def content_text(content: Any) -> str:
    """The text of a message's content (image and other blocks as a short marker)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, Mapping):
            parts.append(f"[{block.get('type', 'block')}]")
    return "\n".join(parts)


def message_chars(message: Mapping[str, Any]) -> int:
    return content_chars(message.get("content"))


def shorten(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters by removing its middle."""
    if len(text) <= limit:
        return text
    if limit <= len(CUT_MARK) + 2:
        return text[:limit]
    keep = limit - len(CUT_MARK)
    head = keep * 2 // 3
    return text[:head] + CUT_MARK + text[len(text) - (keep - head) :]


def drop_superseded(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Remove the turns that a later retry replaced.

    A user message stored with ``"retry": true`` re-asks the question just before
    it; the earlier question and its answer are then left out of what is sent.
    Callers apply this before ``recent_window``.
    """
    out: list[Mapping[str, Any]] = []
    for m in messages:
        if (
            m.get("role") == "user"
            and m.get("retry")
            and len(out) >= 2
            and out[-1].get("role") == "assistant"
            and out[-2].get("role") == "user"
            and out[-2].get("content") == m.get("content")
        ):
            del out[-2:]
        out.append(m)
    return out


def alternating(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Make ``messages`` alternate user/assistant, start on user and end on assistant.

    Where two messages of one role follow each other (a turn lost to a torn line),
    the later one is kept.
    """
    out: list[dict[str, Any]] = []
    for m in reversed(messages):
        if not out:
            if m.get("role") != "assistant":
                continue  # an unanswered question at the end
        elif m.get("role") == out[-1].get("role"):
            continue
        out.append(dict(m))
    while out and out[-1].get("role") != "user":
        out.pop()
    out.reverse()
    return out


def recent_window(messages: Sequence[Mapping[str, Any]], max_messages: int, max_chars: int) -> list[dict[str, Any]]:
    """The newest messages within ``max_messages`` and ``max_chars``.

    The result alternates roles, starts on a user turn and ends on an assistant turn.
    If even the newest turn is larger than the character budget it is kept, with the
    middle of its texts cut, so that the model always sees the last exchange.
    """
    turns = alternating(messages)
    if max_messages < 2 or max_chars <= 0 or not turns:
        return []
    kept: list[dict[str, Any]] = []
    chars = 0
    # walk back one turn (user + assistant) at a time so the window starts on a user turn
    for i in range(len(turns) - 2, -1, -2):
        pair = turns[i : i + 2]
        size = sum(message_chars(m) for m in pair)
        if len(kept) + 2 > max_messages:
            break
        if chars + size > max_chars:
            if not kept:
                kept = _fit_pair(pair, max_chars)
            break
        kept[:0] = pair
        chars += size
    return kept


def _fit_pair(pair: list[dict[str, Any]], max_chars: int) -> list[dict[str, Any]]:
    """Shrink the texts of one user/assistant pair to fit ``max_chars`` together."""
    user, answer = (dict(m) for m in pair)
    user_budget = min(message_chars(user), max_chars // 3)
    for m, budget in ((user, user_budget), (answer, max_chars - user_budget)):
        content = m["content"]
        if isinstance(content, str):
            m["content"] = shorten(content, budget)
        else:
            m["content"] = [
                {**b, "text": shorten(str(b.get("text", "")), budget)}
                if isinstance(b, Mapping) and b.get("type") == "text"
                else b
                for b in content
            ]
    return [user, answer]
