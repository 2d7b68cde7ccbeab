"""/reminders and /reminders cancel <id>: the user's view of the chat's reminders (Telegram and terminal).

Does the work (file I/O: call it off the event loop) and returns the reply in the user's
language; bad input gets a clear text, never an exception.
"""

from __future__ import annotations

from bot.texts import t
from bot.tools.reminders import local_time, zone_label
from memory.reminders import ReminderError, ReminderFileError, ReminderStore

CANCEL_WORDS = ("cancel", "취소", "삭제", "delete", "remove")
USER_WORDS = ("user", "from", "사용자")


def cancel_from_whom(argument: str) -> int | None:
    """The user id of ``cancel user <id>`` (every pending reminder that person set here), else None."""
    words = argument.split()
    if len(words) == 3 and words[0].lower() in CANCEL_WORDS and words[1].lower() in USER_WORDS:
        who = words[2].lstrip("#")
        return int(who) if who.isdigit() else None
    return None


def pending_lines(store: ReminderStore, chat_id: int | str, lang: str, tz: str) -> list[str]:
    """``#3 · 2026년 11월 30일 (월) 09:00 — 약 먹기`` for each pending reminder, soonest first; in a group with
    who set it (``· 👤 501``), so an admin can cancel one person's at once."""
    group = str(chat_id).startswith("-")
    return [
        f"#{r.id} · {local_time(r.at, tz, lang)} — {r.text}" + (f" · 👤 {r.user_id}" if group and r.user_id else "")
        for r in store.pending(chat_id)
    ]


def reminders_text(store: ReminderStore, chat_id: int | str, argument: str, lang: str, tz: str) -> str:
    """The reply to /reminders [cancel <id> | cancel user <user id>]."""
    words = argument.split()
    try:
        if not words:
            lines = pending_lines(store, chat_id, lang, tz)
            if not lines:
                return t("reminders.empty", lang)
            header = t("reminders.header", lang, n=len(lines), zone=zone_label(tz, lang))
            return "\n".join([header, *lines, "", t("reminders.footer", lang)])
        if (who := cancel_from_whom(argument)) is not None:
            done = store.cancel_from(chat_id, who)
            if not done:
                return t("reminders.none_from", lang, user=who)
            return t("reminders.cancelled_from", lang, n=len(done), user=who)
        if words[0].lower() not in CANCEL_WORDS or len(words) != 2:
            return t("reminders.usage", lang)
        try:
            r = store.cancel(chat_id, words[1])
        except ReminderError:
            return t("reminders.unknown", lang, id=words[1].lstrip("#"))
        return t("reminders.cancelled", lang, id=r.id, when=local_time(r.at, tz, lang), text=r.text)
    except ReminderFileError:
        return t("reminders.unreadable", lang)
