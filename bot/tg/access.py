"""Access and cost in Telegram: the gate, pairing, daily limits (the owner's commands: bot/tg/owner.py).

- ``gate`` (what ``handlers.check_allowed`` asks): allowed people pass; in a group also anyone
  when the owner opened the group. Strangers cost nothing and hold nothing up: no model call, no
  file (their name is kept in memory only, for a later ``/allow``); in a private chat one short
  reply with their id every few minutes at most, sent in the background; in groups silence.
- ``/start <code>`` pairs the first owner while none is known (``pairing``, called by /start);
  the code was logged once at start (``announce_pairing``).
- ``/allow``, ``/deny``, ``/users``, ``/stats all``: the owner's, in bot/tg/owner.py.
- ``admit``: the daily limits, checked and counted when a question is accepted (bot/core/limits.py).
- ``may_manage``: in groups ``/reset`` and ``/forget`` need the owner or a group administrator.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from telegram import ChatMember, Update, User
from telegram.error import TelegramError
from telegram.ext import Application, ContextTypes

from bot.claude.model import ModelError
from bot.claude.pricing import PriceTable
from bot.config import ConfigError, Settings
from bot.core.access import Access, PairResult, Person, utc_now
from bot.core.ask import Held, Reserve, Spend, SpendSink
from bot.core.limits import Hold, Limits, OverBudget, user_key, when_text
from bot.texts import t
from bot.tg.groups import is_group
from bot.tg.menu import register_owner_menu
from bot.tg.replies import lang_for, reply, reply_later
from bot.tools import ToolContext
from memory.access import AccessFileError, AccessStore
from memory.reminders import Reminder
from memory.usage import UsageLedger

log = logging.getLogger(__name__)
pairing_log = logging.getLogger("bot.pairing")  # shown at any LOG_LEVEL: the owner needs the code

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
        searches=settings.web.daily_limit,
        timezone=settings.timezone,
        now=now,
    )
    return Guard(settings, access, limits, PriceTable(settings.model_prices, search_price=settings.web.price_per_1000))


def charging(g: Guard, also: SpendSink | None = None) -> SpendSink:
    """The Assistant's usage sink: every model call is charged to its user in the ledger (then ``also``)."""
    if also is None:
        return g.limits.record

    def both(spend: Spend) -> None:
        g.limits.record(spend)
        also(spend)

    return both


def reserving(g: Guard) -> Reserve:
    """The Assistant's check before every model call: hold the call's tokens of its user's daily budget.

    The owner and calls without a user (the terminal) are never limited. Refused: ModelError("limit").
    """

    async def reserve(user_id: int | None, request: Mapping[str, Any], previous: Held | None) -> Held:
        exempt = user_id is None or g.access.is_owner(user_id)
        last = previous if isinstance(previous, Hold) else None
        try:
            return await g.limits.reserve(user_id, request, previous=last, exempt=exempt)
        except OverBudget as e:
            log.info("user %s: model call refused, the daily token budget is spent", user_id)
            raise ModelError("limit", str(e)) from None

    return reserve


def reminder_deliverable(g: Guard) -> Callable[[Reminder], bool]:
    """Whether a reminder may go out: its setter could still talk to the bot in its chat (else it is held).

    A reminder without a setter goes out only when it was set at the terminal (the owner); one from an
    older file that names no setter and no terminal is held (kept, not sent: the owner sees it in /reminders).
    """

    def check(r: Reminder) -> bool:
        if r.user_id is None:
            return r.via == "terminal"
        chat = int(r.chat_id)
        return g.access.chat_allowed(chat, r.user_id, group=chat < 0)

    return check


def reminder_check(g: Guard) -> Callable[[ToolContext], str | None]:
    """Refuse new reminders to a user over today's limits (the owner never is); pending ones still go out."""

    def check(ctx: ToolContext) -> str | None:
        if ctx.user_id is None or g.access.is_owner(ctx.user_id):
            return None
        refusal = g.limits.over(user_key(ctx.user_id), holds=False)
        if refusal is None:
            return None
        reset = refusal.resets_at.isoformat(timespec="minutes")
        return (
            f"the user has reached today's {refusal.kind} limit ({refusal.limit}); new reminders cannot be set "
            f"until {reset}. Tell them so; reminders already set will still be delivered"
        )

    return check


def search_check(g: Guard) -> Callable[[int | None], bool]:
    """Who may search the web now: WEB_SEARCH=owner keeps it to the owner; others under DAILY_SEARCH_LIMIT."""

    def check(user_id: int | None) -> bool:
        owner = user_id is None or g.access.is_owner(user_id)
        if g.settings.web.mode == "owner" and not owner:
            return False
        return g.limits.may_search(user_id, exempt=owner)

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
STAND_INS = frozenset({1087968824, 136817688, 777000})
"""Telegram's stand-in senders, never a person: GroupAnonymousBot (anonymous group admins), Channel_Bot
(posting as a channel), and 777000 (service messages, posts forwarded from a linked channel)."""


def impersonal(update: Update) -> bool:
    """Sent by nobody the bot can name: an anonymous admin, a channel, a service account or a bot.

    Such a message never runs a command or a question: the person behind it cannot be known, so
    neither their rights nor their limits can.
    """
    message, user = update.effective_message, update.effective_user
    if message is not None and message.sender_chat is not None:
        return True
    return user is None or user.is_bot or user.id in STAND_INS


async def gate(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """True if the sender may talk to the bot in this chat; otherwise False at once.

    A stranger costs next to nothing and waits for nothing: in a private chat they are told their
    id at most once per ``STRANGER_REPLY_EVERY`` (sent in the background, with spare capacity only);
    in a group nobody opened the bot stays silent.
    """
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return False
    if impersonal(update):  # silent: anonymous admins and channels cannot be told apart from each other
        log.info("ignored a message from %s in chat %s (not a person)", user.id, message.chat.id)
        return False
    g = guard(context)
    group = is_group(message.chat)
    if g.access.chat_allowed(message.chat.id, user.id, group=group):
        if g.access.user_allowed(user.id):
            g.access.forget_told(user.id)
            if g.access.saw_member(person_of(user)):
                g.save_soon()
        return True
    if g.access.ignored(user.id):
        return False  # locked out after wrong pairing codes: not even a reply
    g.access.saw_stranger(person_of(user))
    if group:
        log.debug("ignored user %s in group %s (not opened)", user.id, message.chat.id)
        return False
    if g.access.tell_stranger(user.id):
        log.info("refused user %s", user.id)
        reply_later(update, context, t("not_allowed", lang_for(update), user_id=user.id))
    return False


async def admit(update: Update, context: ContextTypes.DEFAULT_TYPE, *, model: bool = True) -> bool:
    """Accept a question for answering (counted now) or tell the user when their daily limit resets.

    ``model``: a model call follows (tokens are held for it); False for /remember, which writes memory.
    """
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return False
    g = guard(context)
    refusal = g.limits.admit(user.id, message.chat.id, exempt=g.access.is_owner(user.id), hold=model)
    if refusal is None:
        return True
    log.info("user %s is over the daily %s limit", user.id, refusal.kind)
    lang = lang_for(update)
    when = when_text(refusal.resets_at, g.limits.timezone, lang)
    await reply(update, context, t(f"limit.{refusal.kind}", lang, limit=f"{refusal.limit:,}", when=when))
    return False


async def is_manager(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    """The owner, or an administrator of the group (asked of Telegram; unknown counts as no)."""
    if guard(context).access.is_owner(user_id):
        return True
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
        return member.status in (ChatMember.OWNER, ChatMember.ADMINISTRATOR)
    except TelegramError as e:  # unknown: refuse
        log.warning("could not check whether user %s administers chat %s: %s", user_id, chat_id, e)
        return False


async def within_limits(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """Before any download or decode: True unless the sender is over today's limits (then told so).

    Nothing is counted here (``admit`` counts the question once its file could be read).
    """
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return False
    g = guard(context)
    if g.access.is_owner(user.id):
        return True
    refusal = g.limits.over(user_key(user.id))
    if refusal is None:
        return True
    log.info("user %s is over the daily %s limit: their file is not downloaded", user.id, refusal.kind)
    lang = lang_for(update)
    when = when_text(refusal.resets_at, g.limits.timezone, lang)
    await reply(update, context, t(f"limit.{refusal.kind}", lang, limit=f"{refusal.limit:,}", when=when))
    return False


async def may_manage(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """In groups only the owner or an administrator may /reset or /forget; private chats always may."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return False
    if not is_group(message.chat) or await is_manager(context, message.chat.id, user.id):
        return True
    await reply(update, context, t("group.admin_only", lang_for(update)))
    return False


def manager_check(update: Update, context: ContextTypes.DEFAULT_TYPE) -> Callable[[], bool] | None:
    """The asker's rights for the tools (``ToolContext.may_manage``): None in a private chat (their own);
    in a group a check that asks Telegram once, the first time a tool needs it, from the tool's thread."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None or not is_group(message.chat):
        return None
    loop = asyncio.get_running_loop()
    chat_id, user_id = message.chat.id, user.id
    known: list[bool] = []

    def check() -> bool:
        if not known:
            try:
                asyncio.get_running_loop()
                return False  # on the event loop itself it cannot wait for Telegram: refuse, never block
            except RuntimeError:
                pass
            answer = asyncio.run_coroutine_threadsafe(is_manager(context, chat_id, user_id), loop)
            try:
                known.append(answer.result(timeout=60))
            except Exception:  # no answer: refuse
                log.warning("could not check whether user %s administers chat %s", user_id, chat_id, exc_info=True)
                return False
        return known[0]

    return check


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


# -- start and stop -------------------------------------------------------------------
def announce_pairing(app: Application) -> None:
    """While no owner is known, write the pairing code to the log: once, at start, and nowhere else."""
    code = app.bot_data["guard"].access.pairing_code
    if code is not None:
        pairing_log.setLevel(logging.WARNING)  # its own level: a quieter LOG_LEVEL must not hide it
        pairing_log.warning("pairing code: %s", code)
        pairing_log.warning("no owner yet: send /start followed by that code to the bot from your Telegram account")
