"""Telegram's command menus: the public one (Korean, and English for English-language clients) and the owner's.

Registered at start (bot/tg/app.py) and again when an owner pairs (bot/tg/access.py).
"""

from __future__ import annotations

import logging

from telegram import BotCommand, BotCommandScopeChat
from telegram.error import TelegramError
from telegram.ext import Application

from bot.texts import t

log = logging.getLogger(__name__)

MENU = (
    "help", "history", "summary", "search", "memory", "remember", "forget", "reminders", "reset", "retry", "stats",
    "export",
)  # in Telegram's menu, in this order  # fmt: skip
OWNER_MENU = ("users", "allow", "deny", "import")  # added to the owner's own command menu


def menu(lang: str) -> list[BotCommand]:
    """The command menu in ``lang``."""
    return [BotCommand(name, t(f"cmd.{name}", lang)) for name in MENU]


async def register_menu(app: Application) -> None:
    """Put the commands in Telegram's menu: Korean by default, English for English-language clients."""
    try:
        await app.bot.set_my_commands(menu("ko"))
        await app.bot.set_my_commands(menu("en"), language_code="en")
    except TelegramError as e:  # the bot works without the menu
        log.warning("could not register the command menu: %s", e)


async def register_owner_menu(app: Application) -> None:
    """The owner's own command menu: the public one plus /users, /allow, /deny, /import."""
    owner = app.bot_data["guard"].access.owner
    if owner is None:
        return
    try:
        for lang in ("ko", "en"):
            commands = menu(lang) + [BotCommand(name, t(f"cmd.{name}", lang)) for name in OWNER_MENU]
            await app.bot.set_my_commands(
                commands, scope=BotCommandScopeChat(owner), language_code="en" if lang == "en" else None
            )
    except TelegramError as e:  # the commands work without the menu
        log.warning("could not register the owner's command menu: %s", e)
