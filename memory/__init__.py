"""File-backed conversation memory: storage and memory policy (standard library only).

This package never imports from ``bot`` nor from Telegram or Anthropic libraries.
"""

from memory.summary import Budget, Summarize, Summary, SummaryMemory, SummaryStore
from memory.transcript import Entry, InvalidChatId, Transcript
from memory.window import recent_window

__all__ = [
    "Budget",
    "Entry",
    "InvalidChatId",
    "Summarize",
    "Summary",
    "SummaryMemory",
    "SummaryStore",
    "Transcript",
    "recent_window",
]
