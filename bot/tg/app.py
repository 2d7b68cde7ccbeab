"""Wiring the Telegram application: builder, handlers, start and stop."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from telegram import Update
from telegram.ext import AIORateLimiter, Application, ApplicationBuilder, CommandHandler, MessageHandler, filters

from bot.ask import Assistant
from bot.config import Settings
from bot.tg import access as tg_access
from bot.tg import commands, handlers
from bot.wiring import make_assistant

log = logging.getLogger(__name__)


def file_base_url(base_url: str) -> str:
    """The file-download URL that goes with a Bot API base URL (``…/bot`` → ``…/file/bot``)."""
    base = base_url.rstrip("/")
    if base.endswith("/bot"):
        return base[: -len("/bot")] + "/file/bot"
    return base + "/file/bot"


def build_application(
    settings: Settings, assistant: Assistant, *, now: Callable[[], datetime] = tg_access.utc_now
) -> Application:
    """The PTB application with all handlers registered; nothing runs yet.

    Loads access.json and the usage ledger (ConfigError when access.json is unusable); the
    assistant's model calls are charged to their users there. ``now`` is the clock of the
    daily limits (tests move it).
    """
    guard = tg_access.make_guard(settings, now)
    assistant.on_spend = tg_access.charging(guard, assistant.on_spend)

    async def post_init(app: Application) -> None:
        await commands.register_menu(app)
        await tg_access.post_init(app)  # the pairing code (no owner yet) or the owner's menu

    async def post_shutdown(app: Application) -> None:
        await assistant.aclose()  # a compaction in flight is cancelled and writes nothing
        await guard.aclose()  # the usage counters reach the file
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
        .post_init(post_init)
        .post_shutdown(post_shutdown)
        .build()
    )
    app.bot_data["services"] = handlers.Services(
        settings=settings, assistant=assistant, stream_interval=settings.stream_interval
    )
    app.bot_data["guard"] = guard
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
        (("stats",), commands.stats_command),
        (("export",), commands.export_command),
        (("allow",), tg_access.allow_command),
        (("deny",), tg_access.deny_command),
        (("users",), tg_access.users_command),
    ):
        app.add_handler(CommandHandler(names, callback, filters=new))
    app.add_handler(MessageHandler(new & filters.COMMAND, commands.unknown_command))
    app.add_handler(MessageHandler(new & filters.TEXT & ~filters.COMMAND, handlers.on_text))
    app.add_handler(MessageHandler(new & filters.PHOTO, handlers.on_photo))
    app.add_handler(MessageHandler(new & filters.Document.ALL, handlers.on_document))
    app.add_handler(MessageHandler(new & ~filters.TEXT & ~filters.StatusUpdate.ALL, handlers.on_other))
    app.add_error_handler(handlers.on_error)
    return app


def run(settings: Settings) -> None:
    """Long-poll until SIGINT/SIGTERM; in-flight turns finish before the process exits."""
    app = build_application(settings, make_assistant(settings))
    log.info("starting long polling (data in %s)", settings.data_dir.resolve())
    app.run_polling(allowed_updates=Update.ALL_TYPES, drop_pending_updates=False)
    log.info("stopped")
