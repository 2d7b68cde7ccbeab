"""/reminders and /reminders cancel <id>: the user's view of the chat's reminders (Telegram and terminal).

Does the work (file I/O: call it off the event loop) and returns the reply in the user's
language; bad input gets a clear text, never an exception.
"""

from __future__ import annotations

from bot.texts import t
from bot.tools.reminders import local_time, zone_label
from memory.reminders import ReminderError, ReminderFileError, ReminderStore

CANCEL_WORDS = ("cancel", "취소", "삭제", "delete", "remove")


def pending_lines(store: ReminderStore, chat_id: int | str, lang: str, tz: str) -> list[str]:
    """``#3 · 2026년 11월 30일 (월) 09:00 — 약 먹기`` for each pending reminder, soonest first."""
    return [f"#{r.id} · {local_time(r.at, tz, lang)} — {r.text}" for r in store.pending(chat_id)]


def reminders_text(store: ReminderStore, chat_id: int | str, argument: str, lang: str, tz: str) -> str:
    """The reply to /reminders [cancel <id>]."""
    words = argument.split()
    try:
        if not words:
            lines = pending_lines(store, chat_id, lang, tz)
            if not lines:
                return t("reminders.empty", lang)
            header = t("reminders.header", lang, n=len(lines), zone=zone_label(tz, lang))
            return "\n".join([header, *lines, "", t("reminders.footer", lang)])
        if words[0].lower() not in CANCEL_WORDS or len(words) != 2:
            return t("reminders.usage", lang)
        try:
            r = store.cancel(chat_id, words[1])
        except ReminderError:
            return t("reminders.unknown", lang, id=words[1].lstrip("#"))
        return t("reminders.cancelled", lang, id=r.id, when=local_time(r.at, tz, lang), text=r.text)
    except ReminderFileError:
        return t("reminders.unreadable", lang)
