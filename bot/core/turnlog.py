"""One INFO line per answered (or failed) turn: who, how long, how many tokens, how it ended.

The line never contains what was said unless ``LOG_CONTENT=1`` is set (read at each call,
so ``.env`` and the environment both work): message text is the user's, not the operator's.

    turn chat=4242 outcome=ok latency=1.84s tokens_in=1532 tokens_out=211 cached=1280 tool_rounds=0
"""

from __future__ import annotations

import json
import logging
import os

from bot.claude.model import Usage

log = logging.getLogger("bot.turn")

CONTENT_LIMIT = 500  # characters of the question and of the answer shown with LOG_CONTENT=1

_TRUE = ("1", "true", "yes", "on")


def content_enabled() -> bool:
    """True when LOG_CONTENT asks for message text in the log."""
    return os.environ.get("LOG_CONTENT", "").strip().lower() in _TRUE


def _clip(text: str) -> str:
    if len(text) > CONTENT_LIMIT:
        text = text[:CONTENT_LIMIT] + "…"
    return json.dumps(text, ensure_ascii=False)  # one line, quotes and newlines escaped


def format_turn(
    chat_id: int | str,
    *,
    latency: float,
    usage: Usage | None,
    tool_rounds: int,
    outcome: str,
    question: str | None = None,
    answer: str | None = None,
    content: bool = False,
) -> str:
    u = usage or Usage()
    parts = [
        f"turn chat={chat_id}",
        f"outcome={outcome}",
        f"latency={latency:.2f}s",
        f"tokens_in={u.input_tokens}",
        f"tokens_out={u.output_tokens}",
        f"cached={u.cache_read_tokens}",
        f"cache_write={u.cache_write_tokens}",
        f"tool_rounds={tool_rounds}",
    ]
    if content:
        if question is not None:
            parts.append(f"question={_clip(question)}")
        if answer is not None:
            parts.append(f"answer={_clip(answer)}")
    return " ".join(parts)


def log_turn(
    chat_id: int | str,
    *,
    latency: float,
    usage: Usage | None,
    tool_rounds: int,
    outcome: str,
    question: str | None = None,
    answer: str | None = None,
) -> None:
    """Log one turn at INFO. ``outcome``: "ok", or the failure's kind (e.g. "rate_limit", "auth")."""
    if not log.isEnabledFor(logging.INFO):
        return
    log.info(
        "%s",
        format_turn(
            chat_id,
            latency=latency,
            usage=usage,
            tool_rounds=tool_rounds,
            outcome=outcome,
            question=question,
            answer=answer,
            content=content_enabled(),
        ),
    )
