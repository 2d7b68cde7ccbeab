"""Entry point: ``python -m bot`` runs the Telegram bot; ``python -m bot chat`` the terminal chat;
``python -m bot search`` searches a chat's history."""

from __future__ import annotations

import gc
import logging
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from dotenv import load_dotenv

from bot.config import ConfigError, Settings, load_settings, log_level, version_line
from bot.core.turnlog import content_enabled

USAGE = (
    "usage: ./bot.sh [--log-level LEVEL]   run the Telegram bot (long polling, or a webhook: WEBHOOK_URL)\n"
    "       ./bot.sh chat                   chat in the terminal (see --help there)\n"
    "       ./bot.sh doctor [--offline]     check settings, data and connections (see --help there)\n"
    "       ./bot.sh search                 search a chat's whole history (see --help there)\n"
    "       ./bot.sh import FILE...         import ChatGPT, Claude or Telegram exports (see --help there)\n"
    "       ./bot.sh export                 write a chat's whole history (see --help there)\n"
    "       ./bot.sh --version              the version\n"
    "(./bot.sh runs python -m bot in the project's virtual environment, setting it up on first use)"
)


class Redact(logging.Filter):
    """Replaces secrets (the bot token, the webhook secret) in every log record, whatever logged it."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)  # whatever their length

    def _clean(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        clean = self._clean(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            # a traceback may quote a request URL, and Telegram's URLs hold the token
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._clean(record.exc_text)
        if record.stack_info:
            record.stack_info = self._clean(record.stack_info)
        return True


def secrets_of(settings: Settings) -> list[str]:
    token = settings.telegram_bot_token
    # the part after ':' is the secret half of a bot token; redact it also on its own
    return [token, token.partition(":")[2], settings.webhook_secret, settings.anthropic_api_key]


def setup_logging(level: str = "INFO", secrets: Iterable[str] = ()) -> None:
    logging.basicConfig(
        level=getattr(logging, level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    redact = Redact(secrets)
    for handler in logging.getLogger().handlers:
        handler.addFilter(redact)
    # these loggers print request URLs, and Telegram's URLs contain the bot token: WARNING at any level
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)
    # the reminders' scheduler logs two INFO lines at every run of its 10-second rescan job
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    if level == "DEBUG" and not content_enabled():
        # the libraries' debug output shows every update and request, message text included:
        # only with LOG_CONTENT=1; DEBUG alone is for the bot's own loggers
        for name in ("telegram", "tornado"):
            logging.getLogger(name).setLevel(logging.INFO)


def _pop_log_level(args: list[str]) -> tuple[str | None, list[str]]:
    """(--log-level value or None, the other arguments)."""
    rest: list[str] = []
    value: str | None = None
    it = iter(args)
    for arg in it:
        if arg == "--log-level":
            value = next(it, "")
        elif arg.startswith("--log-level="):
            value = arg.partition("=")[2]
        else:
            rest.append(arg)
    return value, rest


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "chat":
        from bot.cli import terminal

        return terminal.main(args[1:])
    if args and args[0] == "doctor":
        from bot import doctor

        return doctor.main(args[1:])
    if args and args[0] == "search":
        from bot.cli import search

        return search.main(args[1:])
    if args and args[0] in ("import", "export"):
        from bot.cli import transfer

        return (transfer.import_main if args[0] == "import" else transfer.export_main)(args[1:])
    if args and args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if args and args[0] in ("-V", "--version"):
        print(version_line())
        return 0
    level_arg, rest = _pop_log_level(args)
    if rest:
        print(f"error: unknown argument {rest[0]!r}\n{USAGE}", file=sys.stderr)
        return 2
    from bot.doctor.preflight import open_data_dir, startup_problems

    load_dotenv(Path.cwd() / ".env", override=False)
    # the doctor's configuration checks (keys, the endpoint), before anything is started: one line each
    problems, notes = startup_problems(os.environ, telegram=True)
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    if problems:
        return 2
    for line in notes:
        print(f"note: {line}", file=sys.stderr)
    try:
        settings = load_settings(dotenv=False)
        level = log_level(level_arg, "--log-level") if level_arg is not None else settings.log_level
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    setup_logging(level, secrets_of(settings))
    # whatever the service manager's umask (Docker's is 022): files this process creates are private
    os.umask(0o077)
    stopped = open_data_dir(settings.data_dir)
    if stopped:
        print(f"error: {stopped}", file=sys.stderr)
        return 2
    from bot.tg.app import StartupFailure, run

    try:
        run(settings)
    except ConfigError as e:  # e.g. an unreadable access.json
        print(f"error: {e}", file=sys.stderr)
        return 2
    except StartupFailure as e:  # Telegram refused the token or the webhook, or could not be reached
        logging.getLogger("bot").error("%s", e)
        return e.code
    return 0


if __name__ == "__main__":
    code = main()
    # Everything is closed by now. The interpreter's final collection of the ~200,000 objects of the
    # loaded libraries would take a second or more of CPU at every exit (every restart); leave that
    # memory to the operating system instead. atexit handlers (logging's flush) still run.
    gc.freeze()
    sys.exit(code)
