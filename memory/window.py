"""The verbatim recent window: the newest whole turns, trimmed by count and by characters.

The window is made of complete turns (memory/turns.py), so it starts on a question, ends
on an answer, and never separates a tool call from its result. Normally it holds the whole
unsummarized tail; it trims only when summarizing fell behind.

The newest turn is always kept whole up to a hard cap well above the budget (4x by
default), so "fix line 250 of the script you just wrote" still sees the script. Older
turns are added while they fit; the first one that does not fit is shortened into what
is left of the budget (when enough is left), and everything older is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memory.content import CUT_MARK, content_chars, content_text, shorten
from memory.turns import Turn, complete_turns, drop_superseded_turns, flatten, split_turns

__all__ = [
    "CUT_MARK",
    "HARD_CAP_FACTOR",
    "content_chars",
    "content_text",
    "drop_superseded",
    "fit_turn",
    "message_chars",
    "recent_window",
    "shorten",
]

HARD_CAP_FACTOR = 4
"""The newest turn is kept whole up to this many times the character budget."""

MIN_PARTIAL_CHARS = 400
"""An older turn is shortened into the rest of the budget only if at least this much is left."""


def message_chars(message: Mapping[str, Any]) -> int:
    return content_chars(message.get("content"))


def turn_chars(turn: Sequence[Mapping[str, Any]]) -> int:
    return sum(message_chars(m) for m in turn)


def drop_superseded(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The messages without the turns that a later retry replaced (see memory/turns.py)."""
    return flatten(drop_superseded_turns(split_turns(messages)))


def _shorten_content(content: Any, limit: int) -> Any:
    if isinstance(content, str):
        return shorten(content, limit)
    out: list[Any] = []
    for b in content:
        if isinstance(b, Mapping) and b.get("type") == "text":
            out.append({**b, "text": shorten(str(b.get("text", "")), limit)})
        elif isinstance(b, Mapping) and b.get("type") == "tool_result" and isinstance(b.get("content"), str):
            out.append({**b, "content": shorten(str(b["content"]), limit)})
        else:
            out.append(b)
    return out


def _shares(sizes: Sequence[int], limit: int) -> list[int]:
    """Split ``limit`` over messages of ``sizes``: small ones whole, the rest an equal share each."""
    shares = [0] * len(sizes)
    left, pending = limit, len(sizes)
    for i in sorted(range(len(sizes)), key=lambda k: sizes[k]):
        fair = max(1, left // pending)
        shares[i] = min(sizes[i], fair)
        left -= shares[i]
        pending -= 1
    return shares


def fit_turn(turn: Sequence[Mapping[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Shrink the texts of one turn to about ``limit`` characters together.

    Short messages stay whole; the long ones share the rest equally (the question gets at
    most a third) and lose the middles of their texts. Tool calls are kept as they are.
    """
    sizes = [message_chars(m) for m in turn]
    if len(turn) > 1 and sizes[0] > limit // 3:
        shares = [limit // 3, *_shares(sizes[1:], limit - limit // 3)]
    else:
        shares = _shares(sizes, limit)
    out: list[dict[str, Any]] = []
    for m, size, share in zip(turn, sizes, shares, strict=True):
        copy = dict(m)
        if size > share:
            copy["content"] = _shorten_content(m.get("content"), share)
        out.append(copy)
    return out


def recent_window(
    messages: Sequence[Mapping[str, Any]],
    max_messages: int,
    max_chars: int,
    *,
    hard_cap: int | None = None,
) -> list[dict[str, Any]]:
    """The newest complete turns within ``max_messages`` and ``max_chars``, oldest first.

    The result starts on a question and ends on an answer. The newest turn is always kept
    (whole up to ``hard_cap``, default 4x ``max_chars``, then its middles are cut), even
    when it alone is over the budgets.
    """
    turns = complete_turns(messages)
    if max_messages < 2 or max_chars <= 0 or not turns:
        return []
    cap = hard_cap if hard_cap is not None else HARD_CAP_FACTOR * max_chars
    newest = turns[-1]
    size = turn_chars(newest)
    kept: list[Turn] = [fit_turn(newest, cap) if size > cap else [dict(m) for m in newest]]
    count, chars = len(newest), min(size, cap)
    for turn in reversed(turns[:-1]):
        size = turn_chars(turn)
        if count + len(turn) > max_messages:
            break
        if chars + size > max_chars:
            left = max_chars - chars
            if left >= MIN_PARTIAL_CHARS:
                kept.append(fit_turn(turn, left))
            break
        kept.append([dict(m) for m in turn])
        count += len(turn)
        chars += size
    kept.reverse()
    return [dict(m) for m in flatten(kept)]
