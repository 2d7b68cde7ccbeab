"""Access and cost in Telegram: the gate, pairing, the owner's commands, daily limits, usage in /stats.

- ``gate`` (what ``handlers.check_allowed`` asks): allowed people pass; in a group also anyone
  when the owner opened the group. Strangers get one short reply with their id and cost nothing:
  no model call, no file (their name is kept in memory only, for a later ``/allow``).
- ``/start <code>`` pairs the first owner while none is known (``pairing``, called by /start);
  the code was logged once at start (``announce_pairing``).
- ``/allow``, ``/deny``, ``/users``: the owner's, in private chats and groups.
- ``admit``: the daily limits, checked and counted when a question is accepted (bot/core/limits.py).
- ``may_manage``: in groups ``/reset`` and ``/forget`` need the owner or a group administrator.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from telegram import BotCommand, BotCommandScopeChat, Chat, ChatMember, Update, User
from telegram.error import TelegramError
from telegram.ext import Application, ContextTypes

from bot.claude.pricing import PriceTable
from bot.commands.usage import all_users_text, chat_usage_text
from bot.config import ConfigError, Settings
from bot.core.access import Access, Change, PairResult, Person, utc_now
from bot.core.ask import Spend, SpendSink
from bot.core.limits import Limits, user_key, when_text
from bot.texts import t
from bot.tg.groups import is_group
from bot.tg.handlers import lang_for, reply
from bot.tools import ToolContext
from memory.access import AccessFileError, AccessStore
from memory.usage import UsageLedger

log = logging.getLogger(__name__)
pairing_log = logging.getLogger("bot.pairing")  # shown at any LOG_LEVEL: the owner needs the code

OWNER_MENU = ("users", "allow", "deny")  # added to the owner's own command menu
FLUSH_AFTER = 1.0  # seconds: usage counters reach the file this soon after a change
NAMES_SAVE_AFTER = 2.0  # seconds: changed names of allowed people are written together, this soon after


@dataclass
class Guard:
    """Access, limits and prices, kept in ``application.bot_data["guard"]``."""

    settings: Settings
    access: Access
    limits: Limits
    prices: PriceTable
    _names_save: asyncio.Task[None] | None = None

    def save_soon(self) -> None:
        """Write access.json a little later, off the event loop: one write for many changed names."""
        if self._names_save is None or self._names_save.done():
            self._names_save = asyncio.get_running_loop().create_task(self._save_later(), name="save-access")

    async def _save_later(self) -> None:
        await asyncio.sleep(NAMES_SAVE_AFTER)
        await save_access(self)

    async def aclose(self) -> None:
        """At shutdown: write names still waiting, and flush the usage counters."""
        task = self._names_save
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await save_access(self)
        try:
            await asyncio.to_thread(self.limits.ledger.close)
        except OSError as e:
            log.error("could not write the usage counters: %s", e)


def make_guard(settings: Settings, now: Callable[[], datetime] = utc_now) -> Guard:
    """Load access.json and the usage ledger; ConfigError when access.json is unusable."""
    try:
        store = AccessStore(settings.data_dir).load()
    except AccessFileError as e:
        raise ConfigError(str(e)) from None
    access = Access(store, owner_id=settings.owner_id, allowed=settings.allowed_users, now=now)
    ledger = UsageLedger(settings.data_dir, flush_after=FLUSH_AFTER)
    limits = Limits(
        ledger,
        messages=settings.daily_message_limit,
        tokens=settings.daily_token_limit,
        timezone=settings.timezone,
        now=now,
    )
    return Guard(settings, access, limits, PriceTable(settings.model_prices))


def charging(g: Guard, also: SpendSink | None = None) -> SpendSink:
    """The Assistant's usage sink: every model call is charged to its user in the ledger (then ``also``)."""
    if also is None:
        return g.limits.record

    def both(spend: Spend) -> None:
        g.limits.record(spend)
        also(spend)

    return both


def reminder_check(g: Guard) -> Callable[[ToolContext], str | None]:
    """Refuse new reminders to a user over today's limits (the owner never is); pending ones still go out."""

    def check(ctx: ToolContext) -> str | None:
        if ctx.user_id is None or g.access.is_owner(ctx.user_id):
            return None
        refusal = g.limits.over(user_key(ctx.user_id))
        if refusal is None:
            return None
        reset = refusal.resets_at.isoformat(timespec="minutes")
        return (
            f"the user has reached today's {refusal.kind} limit ({refusal.limit}); new reminders cannot be set "
            f"until {reset}. Tell them so; reminders already set will still be delivered"
        )

    return check


def guard(context: ContextTypes.DEFAULT_TYPE) -> Guard:
    return context.bot_data["guard"]  # type: ignore[no-any-return]


def person_of(user: User) -> Person:
    return Person(user.id, user.first_name or "", user.username or "")


async def save_access(g: Guard) -> None:
    try:
        await asyncio.to_thread(g.access.store.save)
    except OSError as e:  # the change holds until a restart
        log.error("could not write %s: %s", g.access.store.path, e)


# -- the gate ----------------------------------------------------------------------
async def gate(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """True if the sender may talk to the bot in this chat; otherwise one short reply (or silence)."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return False
    g = guard(context)
    group = is_group(message.chat)
    if g.access.chat_allowed(message.chat.id, user.id, group=group):
        if g.access.user_allowed(user.id) and g.access.saw_member(person_of(user)):
            g.save_soon()
        return True
    if g.access.ignored(user.id):
        return False  # locked out after wrong pairing codes: not even a reply
    g.access.saw_stranger(person_of(user))
    log.info("refused user %s in chat %s", user.id, message.chat.id)
    await reply(update, context, t("not_allowed.group" if group else "not_allowed", lang_for(update), user_id=user.id))
    return False


async def admit(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """Accept a question for answering (counted now) or tell the user when their daily limit resets."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return False
    g = guard(context)
    refusal = g.limits.admit(user.id, message.chat.id, exempt=g.access.is_owner(user.id))
    if refusal is None:
        return True
    log.info("user %s is over the daily %s limit", user.id, refusal.kind)
    lang = lang_for(update)
    when = when_text(refusal.resets_at, g.limits.timezone, lang)
    await reply(update, context, t(f"limit.{refusal.kind}", lang, limit=f"{refusal.limit:,}", when=when))
    return False


async def may_manage(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """In groups only the owner or an administrator may /reset or /forget; private chats always may."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return False
    if not is_group(message.chat) or guard(context).access.is_owner(user.id):
        return True
    try:
        member = await context.bot.get_chat_member(message.chat.id, user.id)
        if member.status in (ChatMember.OWNER, ChatMember.ADMINISTRATOR):
            return True
    except TelegramError as e:  # unknown: refuse
        log.warning("could not check whether user %s administers chat %s: %s", user.id, message.chat.id, e)
    await reply(update, context, t("group.admin_only", lang_for(update)))
    return False


async def owner_only(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    if not await gate(update, context):
        return False
    user = update.effective_user
    if user is not None and guard(context).access.is_owner(user.id):
        return True
    await reply(update, context, t("owner_only", lang_for(update)))
    return False


# -- pairing -----------------------------------------------------------------------
async def pairing(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """Handle ``/start <code>`` in a private chat while no owner is known; True if it was a pairing try.

    The right code makes the sender the owner and is used up; a wrong one gets a short refusal
    with no hint; after too many, the sender is ignored (bot/core/access.py). The code itself is
    never logged or repeated here.
    """
    message, user = update.effective_message, update.effective_user
    g = guard(context)
    args = context.args or []
    if message is None or user is None or not args or is_group(message.chat) or g.access.owner is not None:
        return False
    result = g.access.pair(person_of(user), args[0])
    lang = lang_for(update)
    if result is PairResult.PAIRED:
        log.info("user %s paired: they are the owner now (the pairing code is used up)", user.id)
        await save_access(g)
        await reply(update, context, t("pair.done", lang, user_id=user.id))
        await register_owner_menu(context.application)
    elif result is PairResult.WRONG:
        log.info("wrong pairing code from user %s", user.id)
        await reply(update, context, t("pair.wrong", lang))
    elif result is PairResult.LOCKED_OUT:
        log.warning("user %s sent too many wrong pairing codes: ignored for an hour", user.id)
        await reply(update, context, t("pair.wrong", lang))
    return result is not PairResult.CLOSED


# -- the owner's commands -------------------------------------------------------------
def _argument(context: ContextTypes.DEFAULT_TYPE) -> str:
    return (context.args or [""])[0].strip()


def _who(g: Guard, user_id: int) -> str:
    label = g.access.person(user_id).label()
    return f"{label} ({user_id})" if label else str(user_id)


async def _access_target(
    update: Update, context: ContextTypes.DEFAULT_TYPE, verb: str
) -> tuple[Chat, User, int | None] | None:
    """What /allow or /deny (``verb``) is about: (chat, owner, the user id named, or None for the group).

    The bare command means the group it is sent in; in a private chat, or with an argument that is
    not a number, the command's usage is shown. None when there is nothing more to do.
    """
    message, user = update.effective_message, update.effective_user
    if message is None or user is None or not await owner_only(update, context):
        return None
    raw = _argument(context)
    if not raw and is_group(message.chat):
        return message.chat, user, None
    try:
        return message.chat, user, int(raw)
    except ValueError:
        await reply(update, context, t(f"{verb}.usage", lang_for(update)))
        return None


async def allow_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/allow <id> lets a person in; /allow alone in a group opens the group (owner only)."""
    asked = await _access_target(update, context, "allow")
    if asked is None:
        return
    chat, user, target = asked
    g, lang = guard(context), lang_for(update)
    if target is None:
        change = g.access.allow_group(chat.id, chat.title or "", user.id)
        if change is Change.DONE:
            log.info("the owner opened group %s", chat.id)
            await save_access(g)
        await reply(update, context, t("allow.group" if change is Change.DONE else "allow.group_already", lang))
        return
    change = g.access.allow_user(target, user.id)
    if change is Change.DONE:
        log.info("the owner allowed user %s", target)
        await save_access(g)
    key = {Change.DONE: "allow.done", Change.CONFIG: "allow.config"}.get(change, "allow.already")
    await reply(update, context, t(key, lang, who=_who(g, target)))


async def deny_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/deny <id> takes a person's access away; /deny alone in a group closes the group (owner only)."""
    asked = await _access_target(update, context, "deny")
    if asked is None:
        return
    chat, _, target = asked
    g, lang = guard(context), lang_for(update)
    if target is None:
        change = g.access.deny_group(chat.id)
        if change is Change.DONE:
            log.info("the owner closed group %s", chat.id)
            await save_access(g)
        await reply(update, context, t("deny.group" if change is Change.DONE else "deny.group_already", lang))
        return
    who = _who(g, target)
    change = g.access.deny_user(target)
    if change is Change.DONE:
        log.info("the owner removed user %s", target)
        await save_access(g)
    key = {Change.DONE: "deny.done", Change.OWNER: "deny.owner", Change.CONFIG: "deny.config"}.get(
        change, "deny.already"
    )
    await reply(update, context, t(key, lang, who=who))


async def users_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/users: the owner, the configured and the added people (names when known), and the open groups."""
    if not await owner_only(update, context):
        return
    g, lang = guard(context), lang_for(update)
    lines = [t("users.header", lang)]
    for m in g.access.members():
        role = {"owner": t("users.owner", lang), "config": t("users.config", lang)}.get(m.role) or t(
            "users.added", lang, at=m.added_at[:10]
        )
        label = m.person.label()
        lines.append(f"• {label + ' — ' if label else ''}{m.person.id} ({role})")
    groups = g.access.groups()
    if groups:
        lines.append(t("users.groups", lang))
        lines += [f"• {title + ' — ' if title else ''}{cid}" for cid, title in groups.items()]
    lines.append(t("users.footer", lang))
    await reply(update, context, "\n".join(lines))


# -- usage in /stats ----------------------------------------------------------------
async def chat_usage(context: ContextTypes.DEFAULT_TYPE, chat_id: int, lang: str) -> str:
    """The chat's usage lines for /stats (today and in total, with the estimated cost)."""
    g = guard(context)
    await asyncio.to_thread(g.limits.ledger.refresh)  # what the terminal chat recorded meanwhile
    return chat_usage_text(g.limits, g.prices, chat_id, lang)


async def stats_all(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/stats all (owner only): usage per person, today and in total."""
    if not await owner_only(update, context):
        return
    g, lang = guard(context), lang_for(update)
    await asyncio.to_thread(g.limits.ledger.refresh)
    await reply(update, context, all_users_text(g.limits, g.prices, lambda user: _who(g, int(user)), lang))


# -- start and stop -------------------------------------------------------------------
async def register_owner_menu(app: Application) -> None:
    """The owner's own command menu: the public one plus /users, /allow, /deny."""
    from bot.tg.commands import menu as public_menu  # commands.py imports this module

    owner = app.bot_data["guard"].access.owner
    if owner is None:
        return
    try:
        for lang in ("ko", "en"):
            menu = public_menu(lang) + [BotCommand(name, t(f"cmd.{name}", lang)) for name in OWNER_MENU]
            await app.bot.set_my_commands(
                menu, scope=BotCommandScopeChat(owner), language_code="en" if lang == "en" else None
            )
    except TelegramError as e:  # the commands work without the menu
        log.warning("could not register the owner's command menu: %s", e)


def announce_pairing(app: Application) -> None:
    """While no owner is known, write the pairing code to the log: once, at start, and nowhere else."""
    code = app.bot_data["guard"].access.pairing_code
    if code is not None:
        pairing_log.setLevel(logging.WARNING)  # its own level: a quieter LOG_LEVEL must not hide it
        pairing_log.warning("pairing code: %s", code)
        pairing_log.warning("no owner yet: send /start followed by that code to the bot from your Telegram account")
