"""Entry point: ``python -m bot`` runs the Telegram bot; ``python -m bot chat`` the terminal chat;
``python -m bot search`` searches a chat's history."""

from __future__ import annotations

import logging
import sys

from bot.config import ConfigError, load_settings


def setup_logging() -> None:
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # these loggers print request URLs, and Telegram's URLs contain the bot token
    for name in ("httpx", "httpx2", "httpcore", "httpcore2"):
        logging.getLogger(name).setLevel(logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "chat":
        from bot import cli

        return cli.main(args[1:])
    if args and args[0] == "search":
        from bot import search_cli

        return search_cli.main(args[1:])
    if args and args[0] in ("-h", "--help"):
        print(
            "usage: python -m bot          run the Telegram bot (long polling)\n"
            "       python -m bot chat     chat in the terminal (see --help there)\n"
            "       python -m bot search   search a chat's whole history (see --help there)"
        )
        return 0
    setup_logging()
    try:
        settings = load_settings()
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from bot.tg.app import run

    try:
        run(settings)
    except ConfigError as e:  # e.g. an unreadable access.json
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
