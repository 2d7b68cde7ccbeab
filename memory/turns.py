"""Turns: a question and everything that answers it, as one unit that is never split.

A turn starts with a user message that is not a tool result and runs up to the next such
message: the question, then for each tool round an assistant message with ``tool_use``
blocks and a user message with their ``tool_result`` blocks, then the final answer. The
Messages API rejects a ``tool_use`` that is not answered in the very next message, so
windows and summaries cut only between turns.

Incomplete turns (a question whose answer was never stored, a torn write that lost the
end of a tool exchange) are left out of what is sent; the transcript itself keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memory.content import is_tool_result_message, tool_result_ids, tool_use_ids

Message = Mapping[str, Any]
Turn = list[Message]


def starts_turn(message: Message) -> bool:
    """A user message that asks something (not a tool result)."""
    return message.get("role") == "user" and not is_tool_result_message(message)


def split_turns(messages: Sequence[Message]) -> list[Turn]:
    """Group messages into turns; messages before the first question are dropped."""
    turns: list[Turn] = []
    for m in messages:
        if starts_turn(m):
            turns.append([m])
        elif turns:
            turns[-1].append(m)
    return turns


def is_complete(turn: Sequence[Message]) -> bool:
    """True if ``turn`` can be sent to the API as it is.

    It starts with a question, alternates roles, ends with an assistant message that
    calls no tool, and every tool call is answered by a result in the next message (and
    every result answers a call in the message before it).
    """
    if len(turn) < 2 or not starts_turn(turn[0]) or turn[-1].get("role") != "assistant":
        return False
    for i, m in enumerate(turn):
        if m.get("role") != ("user" if i % 2 == 0 else "assistant"):
            return False
        if i > 0 and m.get("role") == "user" and not is_tool_result_message(m):
            return False
    if tool_use_ids(turn[-1].get("content")):
        return False
    for i in range(1, len(turn) - 1, 2):
        calls = tool_use_ids(turn[i].get("content"))
        results = tool_result_ids(turn[i + 1].get("content"))
        if not calls or sorted(calls) != sorted(results):
            return False
    return True


def _has_tools(turn: Sequence[Message]) -> bool:
    return any(tool_use_ids(m.get("content")) or is_tool_result_message(m) for m in turn)


def repair(turn: Sequence[Message]) -> Turn | None:
    """``turn`` if complete; a plain question with several answers keeps the last; else None."""
    if is_complete(turn):
        return list(turn)
    if not _has_tools(turn) and len(turn) > 2 and turn[-1].get("role") == "assistant":
        fixed = [turn[0], turn[-1]]
        return fixed if is_complete(fixed) else None
    return None


def complete_turns(messages: Sequence[Message]) -> list[Turn]:
    """The turns of ``messages`` that can be sent, oldest first (incomplete ones left out)."""
    out: list[Turn] = []
    for turn in split_turns(messages):
        fixed = repair(turn)
        if fixed is not None:
            out.append(fixed)
    return out


def drop_superseded_turns(turns: Sequence[Turn]) -> list[Turn]:
    """Remove the turns that a later retry replaced.

    A question stored with ``"retry": true`` re-asks the question of the turn just
    before it; that earlier turn is then left out of what is sent.
    """
    out: list[Turn] = []
    for turn in turns:
        first = turn[0]
        if first.get("retry") and out and out[-1][0].get("content") == first.get("content"):
            out.pop()
        out.append(turn)
    return out


def flatten(turns: Sequence[Turn]) -> list[Message]:
    return [m for turn in turns for m in turn]
