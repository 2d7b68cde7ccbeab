"""The eviction policy of the summary memory: sizes, the budget, and how much to summarize now.

Pure functions over message dicts: when the unsummarized tail is over budget, which oldest
messages to evict (always whole turns: a cut only ever falls before a question, never
between a tool call and its result, nor between a retried question and what it replaced).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from memory.content import content_chars, content_text
from memory.turns import starts_turn

# -- sizes and the token estimate ------------------------------------------------------

_WIDE = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def estimate_tokens(text: str) -> int:
    """A rough, deliberately generous token count without a tokenizer.

    Heuristic: ASCII text is about 4 characters per token; a Hangul syllable or a CJK
    character is about 1 token; any other character (accented Latin, emoji, symbols)
    about 2 characters per token. Korean therefore counts ~4x more tokens per character
    than English, as it does with Claude's tokenizer. Good enough for budgets; never
    used for billing.
    """
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    wide = len(_WIDE.findall(text))
    other = len(text) - ascii_chars - wide
    return math.ceil(ascii_chars / 4 + wide + other / 2)


@dataclass(frozen=True)
class Size:
    messages: int
    chars: int
    tokens: int


def measure(messages: Sequence[Mapping[str, Any]]) -> Size:
    chars = sum(content_chars(m.get("content")) for m in messages)
    tokens = sum(estimate_tokens(content_text(m.get("content"))) for m in messages)
    return Size(len(messages), chars, tokens)


# -- the policy -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """When to compact and how much to keep. Defaults are sized for a phone chat.

    The unsummarized tail is compacted when it exceeds ``trigger_messages`` messages,
    ``trigger_chars`` characters or ``trigger_tokens`` estimated tokens. The newest
    messages stay verbatim: at most ``keep_messages`` and half of the character and
    token triggers, always starting on a user turn (at least the last turn is kept).
    The summary is capped at ``max_summary_chars``; one compaction evicts at most
    ``chunk_messages`` messages, so a huge backlog is caught up in bounded steps.
    """

    trigger_messages: int = 16
    trigger_chars: int = 6000
    trigger_tokens: int = 3000
    keep_messages: int = 6
    max_summary_chars: int = 2500
    chunk_messages: int = 40

    @property
    def keep_chars(self) -> int:
        return max(1, self.trigger_chars // 2)

    @property
    def keep_tokens(self) -> int:
        return max(1, self.trigger_tokens // 2)

    def fitted(self, window_messages: int, window_chars: int) -> Budget:
        """This budget made consistent, and no larger than the verbatim window.

        The window (``MAX_HISTORY_MESSAGES`` / ``MAX_HISTORY_CHARS``) must hold the whole
        unsummarized tail, or the safety-net trimming would cut messages that the
        summary does not cover.
        """
        trigger_messages = max(2, min(self.trigger_messages, window_messages))
        keep = max(2, min(self.keep_messages, trigger_messages - 2))
        return replace(
            self,
            trigger_messages=trigger_messages,
            trigger_chars=max(2, min(self.trigger_chars, window_chars)),
            trigger_tokens=max(2, self.trigger_tokens),
            keep_messages=keep,
            max_summary_chars=max(200, self.max_summary_chars),
            chunk_messages=max(self.chunk_messages, trigger_messages),
        )


def over_budget(messages: Sequence[Mapping[str, Any]], budget: Budget) -> bool:
    size = measure(messages)
    return (
        size.messages > budget.trigger_messages
        or size.chars > budget.trigger_chars
        or size.tokens > budget.trigger_tokens
    )


def _fits_keep(messages: Sequence[Mapping[str, Any]], budget: Budget) -> bool:
    size = measure(messages)
    return (
        size.messages <= budget.keep_messages and size.chars <= budget.keep_chars and size.tokens <= budget.keep_tokens
    )


def is_turn_start(message: Mapping[str, Any]) -> bool:
    """True if the summary may end just before ``message``.

    That is a user turn that is not a retry (a retry supersedes the pair before it, so the
    two stay on the same side) and not a tool result (which belongs to the tool call
    before it).
    """
    return starts_turn(message) and not message.get("retry")


def plan_eviction(messages: Sequence[Mapping[str, Any]], budget: Budget, *, complete: bool = True) -> int:
    """How many of the oldest unsummarized ``messages`` to summarize now (0: none).

    ``complete`` says whether ``messages`` reach the end of the transcript. When they do,
    nothing happens until the tail exceeds the budget; then the newest messages that fit
    the keep budget stay (at least the last turn). When they do not (a backlog), the
    whole chunk that was read may go, except its last ``keep_messages``. Either way at
    most ``chunk_messages`` are evicted, and the cut is always before a user turn.
    """
    if complete and not over_budget(messages, budget):
        return 0
    cuts = [i for i in range(1, len(messages)) if is_turn_start(messages[i])]
    if not cuts:
        return 0
    if complete:
        target = next((c for c in cuts if _fits_keep(messages[c:], budget)), cuts[-1])
    else:
        target = max(cuts[0], len(messages) - budget.keep_messages)
    limit = min(target, budget.chunk_messages)
    allowed = [c for c in cuts if c <= limit]
    return allowed[-1] if allowed else cuts[0]
