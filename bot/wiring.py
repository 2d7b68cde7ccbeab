"""Building the shared services from Settings (used by every front end)."""

from __future__ import annotations

from bot.ask import Assistant
from bot.claude import ClaudeModel
from bot.config import Settings
from memory.transcript import Transcript


def make_assistant(settings: Settings) -> Assistant:
    """The assistant with the real Claude client and the file memory under DATA_DIR."""
    model = ClaudeModel(
        settings.anthropic_model,
        api_key=settings.anthropic_api_key,
        max_tokens=settings.max_tokens,
        max_retries=settings.anthropic_max_retries,
        timeout=settings.anthropic_timeout,
    )
    return Assistant(
        transcript=Transcript(settings.data_dir),
        model=model,
        timezone=settings.timezone,
        max_messages=settings.max_history_messages,
        max_chars=settings.max_history_chars,
    )
