"""Wiring the Telegram application: builder, handlers, start and stop."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from telegram import Update
from telegram.error import BadRequest, InvalidToken, NetworkError, TelegramError
from telegram.ext import Application, ApplicationBuilder, CommandHandler, MessageHandler, filters
from telegram.request import BaseRequest

from bot.config import Settings
from bot.core.ask import Assistant
from bot.tg import access as tg_access
from bot.tg import commands, handlers, importing, menu, owner, reminders, replies, webhook
from bot.tg.lanes import ChatLanes
from bot.tg.pacing import StartPace
from bot.tg.ratelimit import FloodLimiter, Limits
from bot.tg.sendgate import GatedRequest
from bot.tg.throttle import THROTTLE, CommandThrottle, throttled
from bot.wiring import make_assistant
from memory.reminders import ReminderStore

log = logging.getLogger(__name__)

EXIT_SETTING = 2
"""A setting Telegram refused (the token, WEBHOOK_URL): a restart cannot fix it (the service unit's
RestartPreventExitStatus)."""
EXIT_UNREACHABLE = 75
"""Telegram could not be reached (EX_TEMPFAIL): the network may come back, so the service manager restarts."""
SEND_LEAD = 0.05
"""Seconds before its place in the flood window frees that a final may be granted: longer than the turns of the
loop a send takes to reach its socket on a busy bot (20-30 ms measured), where it then waits (bot/tg/sendgate.py)."""


class StartupFailure(Exception):
    """The bot could not start; the message is one line naming the setting and what to do (no secret)."""

    def __init__(self, message: str, code: int = EXIT_SETTING) -> None:
        super().__init__(message)
        self.code = code


class _QuietAborts(logging.Filter):
    """Drops python-telegram-bot's own report (a traceback, quoting the token) of a start-up call that
    failed for good: ``run`` turns that failure into one line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (message.startswith("Network Retry Loop") and "Abort" in message)


def _startup_failure(e: TelegramError, settings: Settings) -> StartupFailure:
    """The one line for a start that Telegram refused or that could not reach it."""
    host = urlsplit(settings.telegram_base_url)
    where = f"{host.scheme}://{host.netloc}" if host.netloc else settings.telegram_base_url
    if isinstance(e, InvalidToken):
        return StartupFailure(
            f"Telegram ({where}) refused TELEGRAM_BOT_TOKEN: check it in .env or the environment (@BotFather → "
            "/mybots → API Token; a revoked token must be replaced)"
        )
    if isinstance(e, NetworkError) and not isinstance(e, BadRequest):  # TimedOut included
        return StartupFailure(
            f"cannot reach Telegram at {where} ({type(e).__name__}): check the network, DNS, a proxy, or "
            "TELEGRAM_BASE_URL; the bot stopped and starts again when restarted",
            EXIT_UNREACHABLE,
        )
    detail = e.message[:200]  # logged: bot.__main__.Redact takes every secret out of it, the token's halves too
    if settings.webhook_url:
        return StartupFailure(
            f"Telegram refused WEBHOOK_URL {settings.webhook_url} ({detail}): it must be a public HTTPS URL on "
            "port 443, 80, 88 or 8443 that Telegram can reach; fix WEBHOOK_URL, or unset it for long polling"
        )
    return StartupFailure(f"Telegram refused the start ({detail}): check TELEGRAM_BASE_URL and TELEGRAM_BOT_TOKEN")


def file_base_url(base_url: str) -> str:
    """The file-download URL that goes with a Bot API base URL (``…/bot`` → ``…/file/bot``)."""
    base = base_url.rstrip("/")
    if base.endswith("/bot"):
        return base[: -len("/bot")] + "/file/bot"
    return base + "/file/bot"


def build_application(
    settings: Settings,
    assistant: Assistant,
    store: ReminderStore | None = None,
    *,
    get_updates_request: BaseRequest | None = None,
    now: Callable[[], datetime] = tg_access.utc_now,
) -> Application:
    """The PTB application with all handlers registered; nothing runs yet.

    ``store`` holds the reminders to deliver: pass the one the assistant's reminder tools use, so a
    reminder set here is scheduled at once (others are found by a rescan of the file).
    Loads access.json and the usage ledger (ConfigError when access.json is unusable); the
    assistant's model calls are charged to their users there. ``now`` is the clock of the
    daily limits (tests move it).
    """
    guard = tg_access.make_guard(settings, now)
    assistant.on_spend = tg_access.charging(guard, assistant.on_spend)
    assistant.may_remind = tg_access.reminder_check(guard)
    assistant.reserve = tg_access.reserving(guard)  # before every model call: the daily token budget
    guard.limits.calls_per_question = assistant.max_tool_rounds + 1
    if assistant.web is not None:
        assistant.web.may_search = tg_access.search_check(guard)

    async def menus(app: Application) -> None:
        while not app.running:  # once polling (or the webhook) started: a start Telegram refuses registers nothing
            await asyncio.sleep(0.05)
        await menu.register_menu(app)
        await menu.register_owner_menu(app)  # the owner's own menu, when an owner is known

    async def post_init(app: Application) -> None:
        tg_access.announce_pairing(app)  # no owner yet: the pairing code, logged once
        # what is loaded by now (the libraries, and what the start made) leaves the garbage collector's
        # view: a full collection in a busy minute, which stops the event loop and Telegram's I/O thread alike,
        # then walks only what the bot made since (132 ms -> 37 ms in bench.throughput; bench/RESULTS.md, issue 34)
        gc.freeze()
        # polling starts right away: the menus are registered meanwhile
        app.bot_data["menu_task"] = asyncio.create_task(menus(app), name="register-menu")

    async def post_shutdown(app: Application) -> None:
        task = app.bot_data.get("menu_task")
        if task is not None and not task.done():  # the start failed: the menus were never registered
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await assistant.aclose()  # a compaction in flight is cancelled and writes nothing
        await guard.aclose()  # the usage counters reach the file
        close = getattr(assistant.model, "aclose", None)
        if close is not None:
            await close()

    lanes = ChatLanes()  # each chat's updates in a lane of their own: no chat holds up another
    # PTB's own request (256 connections), its sockets gated: a final may then be granted SEND_LEAD before its
    # place in the window frees and wait at the socket instead of in PTB's and httpx's turns of the loop
    request = GatedRequest()
    lead = SEND_LEAD if request.gated else 0.0
    limiter = FloodLimiter(Limits().faster_chats(settings.telegram_rate_factor), lead=lead)
    # beyond a second of the window's answers under way, starts at 1.5 times its rate (bot/tg/pacing.py)
    pace = StartPace(lambda: limiter.rate)
    assistant.reserve = pace.paced(assistant.reserve)
    builder = ApplicationBuilder().request(request)
    if get_updates_request is not None:
        builder = builder.get_updates_request(get_updates_request)
    app = (
        builder.token(settings.telegram_bot_token)
        .base_url(settings.telegram_base_url)
        .base_file_url(file_base_url(settings.telegram_base_url))
        .concurrent_updates(lanes)
        # finals first; previews and chat actions only with spare capacity
        .rate_limiter(limiter)
        .post_init(post_init)
        .post_shutdown(post_shutdown)
        .build()
    )
    lanes.application = app
    lanes.on_overflow = lambda update: handlers.backlog_full(app, update)
    app.bot_data["services"] = replies.Services(
        settings=settings, assistant=assistant, stream_interval=settings.stream_interval
    )
    app.bot_data["guard"] = guard
    app.bot_data["start_pace"] = pace
    # command replies per person in a group: a share of the group's budget, as fast as the server allows
    app.bot_data[THROTTLE] = CommandThrottle(now, factor=settings.telegram_rate_factor)
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
        (("allow",), owner.allow_command),
        (("deny",), owner.deny_command),
        (("users",), owner.users_command),
        (("model",), commands.model_command),
        (("import",), importing.import_command),
    ):
        app.add_handler(CommandHandler(names, throttled(callback), filters=new))
    app.add_handler(MessageHandler(new & filters.COMMAND, throttled(commands.unknown_command)))
    app.add_handler(MessageHandler(new & filters.TEXT & ~filters.COMMAND, handlers.on_text))
    app.add_handler(MessageHandler(new & filters.PHOTO, handlers.on_photo))
    importing_caption = filters.Document.ALL & filters.CaptionRegex(importing.CAPTION)
    app.add_handler(MessageHandler(new & importing_caption, importing.on_import_document))
    app.add_handler(MessageHandler(new & filters.Document.ALL, handlers.on_document))
    app.add_handler(MessageHandler(new & ~filters.TEXT & ~filters.StatusUpdate.ALL, handlers.on_other))
    app.add_error_handler(handlers.on_error)
    reminders.install(
        app,
        assistant,
        store or ReminderStore(settings.data_dir),
        settings.timezone,
        tg_access.reminder_deliverable(guard),  # access changes reach reminders: held, never deleted
    )
    return app


def webhook_path(url: str) -> str:
    """The local path the webhook server answers on: the path of WEBHOOK_URL (a proxy forwards it as is)."""
    return urlsplit(url).path.strip("/")


def run(settings: Settings) -> None:
    """Long-poll (or serve the webhook) until SIGINT/SIGTERM; in-flight turns finish before the process exits.

    Raises StartupFailure when Telegram refuses the token or the webhook, or cannot be reached at start.
    """
    quiet = _QuietAborts()
    logging.getLogger("telegram.ext").addFilter(quiet)
    try:
        _run(settings)
    except TelegramError as e:
        raise _startup_failure(e, settings) from None
    finally:
        logging.getLogger("telegram.ext").removeFilter(quiet)


def _run(settings: Settings) -> None:
    from bot.tg import heartbeat

    beat = Path(settings.heartbeat_file) if settings.heartbeat_file else None
    polling_request = None
    if beat is not None and not settings.webhook_url:
        polling_request = heartbeat.PollingHeartbeatRequest(beat)
    store = ReminderStore(settings.data_dir)
    app = build_application(
        settings, make_assistant(settings, reminders=store), store, get_updates_request=polling_request
    )
    if not settings.webhook_url:
        log.info("starting long polling (data in %s)", settings.data_dir.resolve())
        app.run_polling(allowed_updates=Update.ALL_TYPES, drop_pending_updates=False)
        log.info("stopped")
        return
    if beat is not None:
        heartbeat.install_webhook_heartbeat(app, beat)
    path = webhook_path(settings.webhook_url)
    webhook.install()  # the secret header compared in constant time
    # the URL is public configuration, the secret is not: it is never logged
    log.info(
        "starting the webhook on %s:%d/%s for %s (data in %s)",
        settings.webhook_listen,
        settings.webhook_port,
        path,
        settings.webhook_url,
        settings.data_dir.resolve(),
    )
    # setWebhook(url, secret_token) at start; every request without the secret is refused with 403
    app.run_webhook(
        listen=settings.webhook_listen,
        port=settings.webhook_port,
        url_path=path,
        webhook_url=settings.webhook_url,
        secret_token=settings.webhook_secret,
        allowed_updates=Update.ALL_TYPES,
        drop_pending_updates=False,
    )
    log.info("stopped")
