"""Wiring the Telegram application: builder, handlers, start and stop."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.ext import AIORateLimiter, Application, ApplicationBuilder, CommandHandler, MessageHandler, filters

from bot.ask import Assistant
from bot.config import Settings
from bot.tg import commands, handlers, reminders
from bot.wiring import make_assistant
from memory.reminders import ReminderStore

log = logging.getLogger(__name__)


def file_base_url(base_url: str) -> str:
    """The file-download URL that goes with a Bot API base URL (``…/bot`` → ``…/file/bot``)."""
    base = base_url.rstrip("/")
    if base.endswith("/bot"):
        return base[: -len("/bot")] + "/file/bot"
    return base + "/file/bot"


def build_application(settings: Settings, assistant: Assistant, store: ReminderStore | None = None) -> Application:
    """The PTB application with all handlers registered; nothing runs yet.

    ``store`` holds the reminders to deliver: pass the one the assistant's reminder tools use, so a
    reminder set here is scheduled at once (others are found by a rescan of the file).
    """

    async def post_shutdown(app: Application) -> None:
        await assistant.aclose()  # a compaction in flight is cancelled and writes nothing
        close = getattr(getattr(assistant.model, "client", None), "close", None)
        if close is not None:
            await close()

    app = (
        ApplicationBuilder()
        .token(settings.telegram_bot_token)
        .base_url(settings.telegram_base_url)
        .base_file_url(file_base_url(settings.telegram_base_url))
        .concurrent_updates(64)
        .rate_limiter(AIORateLimiter(max_retries=3))
        .post_init(commands.register_menu)
        .post_shutdown(post_shutdown)
        .build()
    )
    app.bot_data["services"] = handlers.Services(
        settings=settings, assistant=assistant, stream_interval=settings.stream_interval
    )
    new = filters.UpdateType.MESSAGE  # edited messages are not answered again
    for names, callback in (
        (("start", "help"), commands.help_command),
        (("history",), commands.history_command),
        (("summary",), commands.summary_command),
        (("search",), commands.search_command),
        (("memory",), commands.memory_command),
        (("remember",), commands.remember_command),
        (("forget",), commands.forget_command),
        (("reset",), commands.reset_command),
        (("retry",), commands.retry_command),
        (("reminders",), reminders.reminders_command),
        (("stats",), commands.stats_command),
        (("export",), commands.export_command),
    ):
        app.add_handler(CommandHandler(names, callback, filters=new))
    app.add_handler(MessageHandler(new & filters.COMMAND, commands.unknown_command))
    app.add_handler(MessageHandler(new & filters.TEXT & ~filters.COMMAND, handlers.on_text))
    app.add_handler(MessageHandler(new & filters.PHOTO, handlers.on_photo))
    app.add_handler(MessageHandler(new & filters.Document.ALL, handlers.on_document))
    app.add_handler(MessageHandler(new & ~filters.TEXT & ~filters.StatusUpdate.ALL, handlers.on_other))
    app.add_error_handler(handlers.on_error)
    reminders.install(app, assistant, store or ReminderStore(settings.data_dir), settings.timezone)
    return app


def run(settings: Settings) -> None:
    """Long-poll until SIGINT/SIGTERM; in-flight turns finish before the process exits."""
    store = ReminderStore(settings.data_dir)
    app = build_application(settings, make_assistant(settings, reminders=store), store)
    log.info("starting long polling (data in %s)", settings.data_dir.resolve())
    app.run_polling(allowed_updates=Update.ALL_TYPES, drop_pending_updates=False)
    log.info("stopped")
