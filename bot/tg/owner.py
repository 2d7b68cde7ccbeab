"""The owner's commands in Telegram: /allow, /deny, /users, and the usage lines of /stats (/stats all).

They build on the gate and the guard (bot/tg/access.py): only the owner may use them, in private
chats and in groups (``/allow`` / ``/deny`` alone in a group open or close it).
"""

from __future__ import annotations

import asyncio
import logging

from telegram import Chat, Update, User
from telegram.ext import ContextTypes

from bot.commands.usage import all_users_text, chat_usage_text
from bot.core.access import Change
from bot.texts import t
from bot.tg.access import STAND_INS, Guard, guard, owner_only, save_access
from bot.tg.groups import is_group
from bot.tg.replies import lang_for, reply

log = logging.getLogger(__name__)


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
    if target is None or target < 0:  # this group, or a group named by its id (negative)
        group = chat.id if target is None else target
        change = g.access.allow_group(group, (chat.title or "") if group == chat.id else "", user.id)
        if change is Change.DONE:
            log.info("the owner opened group %s", group)
            await save_access(g)
        key = "allow.group" if change is Change.DONE else "allow.group_already"
        await reply(update, context, t(key if target is None else key.replace("group", "group_id"), lang, chat=group))
        return
    if target in STAND_INS:
        await reply(update, context, t("allow.not_person", lang, who=target))
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
    if target is None or target < 0:  # this group, or a group named by its id (from a private chat too)
        group = chat.id if target is None else target
        change = g.access.deny_group(group)
        if change is Change.DONE:
            log.info("the owner closed group %s", group)
            await save_access(g)
        key = "deny.group" if change is Change.DONE else "deny.group_already"
        await reply(update, context, t(key if target is None else key.replace("group", "group_id"), lang, chat=group))
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
