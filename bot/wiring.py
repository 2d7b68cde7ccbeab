"""Building the shared services from Settings (used by every front end)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bot.claude.client import ClaudeModel
from bot.claude.model import Usage
from bot.claude.modelinfo import ModelCatalog
from bot.claude.summarizer import Summarizer
from bot.config import Settings
from bot.core.ask import Assistant, SpendSink
from bot.core.upkeep import payer
from bot.tools.reminders import MayCreate, reminder_tools
from bot.tools.web import WebSearch, supports_web_search
from memory.recall import RecallIndex, meaning
from memory.reminders import ReminderStore
from memory.summary import Budget
from memory.transcript import Transcript

SUMMARY_MAX_TOKENS = 8192
"""Output limit of a summary: a memo of SUMMARY_MAX_CHARS at most, plus the thinking of the lowest setting."""


def make_assistant(
    settings: Settings,
    *,
    on_spend: SpendSink | None = None,
    reminders: ReminderStore | None = None,
    may_remind: MayCreate | None = None,
) -> Assistant:
    """The assistant with the real Claude client and the file memory under DATA_DIR.

    ``on_spend`` receives the usage of every model call (answers, tool rounds, summaries)
    with the user who caused it. ``reminders`` is the store of the reminder tools (default:
    DATA_DIR/reminders.json); ``may_remind`` may refuse new reminders (e.g. over a daily limit).
    It is read when a reminder is set, so a front end may set ``assistant.may_remind`` later
    (the Telegram bot does, once its limits are loaded).
    """
    catalog = ModelCatalog(settings.data_dir)
    model = ClaudeModel(
        catalog.selected_for(settings.anthropic_model) or settings.anthropic_model,  # /model outlives restarts
        api_key=settings.anthropic_api_key,
        base_url=settings.anthropic_base_url or None,  # unset: ANTHROPIC_BASE_URL of the environment, else Anthropic's
        max_tokens=settings.max_tokens,
        max_retries=settings.anthropic_max_retries,
        timeout=settings.anthropic_timeout,
        effort=settings.effort,
        catalog=catalog,
        configured=settings.anthropic_model,
    )
    # the summarizer asks for the least thinking each model accepts, on the same HTTP client;
    # without SUMMARY_MODEL it follows the chat model (also after a /model switch)
    summary_model = ClaudeModel(
        settings.summary_model or model.name,
        share=model,
        max_tokens=SUMMARY_MAX_TOKENS,
        purpose="lowest",
        follow=None if settings.summary_model else model,
    )
    summarizer = Summarizer(summary_model, max_chars=settings.summary_max_chars, max_tokens=SUMMARY_MAX_TOKENS)
    assistant = Assistant(
        transcript=Transcript(settings.data_dir),
        model=model,
        timezone=settings.timezone,
        max_messages=settings.max_history_messages,
        max_chars=settings.max_history_chars,
        summarizer=summarizer,
        summary_budget=Budget(
            trigger_messages=settings.summary_trigger_messages,
            trigger_chars=settings.summary_trigger_chars,
            trigger_tokens=settings.summary_trigger_tokens,
            keep_messages=settings.summary_keep_messages,
            max_summary_chars=settings.summary_max_chars,
        ),
        summary_timeout=settings.summary_timeout,
        on_spend=on_spend,
        # the model is made on first use: a chat without vectors yet (a fresh one) never waits for it
        recall=RecallIndex(settings.data_dir, meaning=meaning.load(settings.recall_meaning, lazy=True)),
        recall_turns=settings.recall_turns,
        web=WebSearch(settings.web, settings.timezone, model_supports=supports_web_search(settings.anthropic_model)),
        tools=reminder_tools(
            reminders or ReminderStore(settings.data_dir),
            settings.timezone,
            may_create=lambda ctx: assistant.may_remind(ctx) if assistant.may_remind is not None else None,
        ),
    )
    assistant.may_remind = may_remind

    def charge(usage: Usage, model_name: str) -> None:
        owner = payer.get()  # set for the background compaction of a chat
        if owner is not None:
            assistant.spend(owner[0], owner[1], "summary", model_name, usage)

    async def reserve(request: Mapping[str, Any]) -> Callable[[], None]:
        owner = payer.get()  # the summary is held against the daily budget of the user who pays for it
        if owner is None or assistant.reserve is None:
            return lambda: None
        return (await assistant.reserve(owner[1], request, None)).release

    summarizer.on_usage = charge
    summarizer.before_call = reserve
    return assistant
