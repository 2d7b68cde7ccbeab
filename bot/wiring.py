"""Building the shared services from Settings (used by every front end)."""

from __future__ import annotations

from bot.ask import Assistant
from bot.claude import ClaudeModel
from bot.config import Settings
from bot.summarizer import Summarizer
from memory.summary import Budget
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
    summary_model = model
    if settings.summary_model and settings.summary_model != settings.anthropic_model:
        # the same HTTP client (closed with the chat model's at shutdown), another model name
        summary_model = ClaudeModel(settings.summary_model, client=model.client, max_tokens=2048)
    return Assistant(
        transcript=Transcript(settings.data_dir),
        model=model,
        timezone=settings.timezone,
        max_messages=settings.max_history_messages,
        max_chars=settings.max_history_chars,
        summarizer=Summarizer(summary_model, max_chars=settings.summary_max_chars),
        summary_budget=Budget(
            trigger_messages=settings.summary_trigger_messages,
            trigger_chars=settings.summary_trigger_chars,
            trigger_tokens=settings.summary_trigger_tokens,
            keep_messages=settings.summary_keep_messages,
            max_summary_chars=settings.summary_max_chars,
        ),
    )
