"""The ``set_reminder``, ``list_reminders`` and ``cancel_reminder`` tools: Claude keeps the chat's reminders.

Claude resolves "내일 아침 9시" against the time line of the system prompt and passes an
ISO-8601 date-time with its UTC offset. A time in the past, more than a year ahead, or one
that cannot be parsed comes back as an ``is_error`` result saying why. Reminders are delivered
by the Telegram bot (bot/tg/reminders.py) to the chat and topic where they were set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.tools import MANAGERS_ONLY, Tool, ToolContext, ToolResult
from memory.reminders import (
    MAX_TEXT_CHARS,
    Reminder,
    ReminderError,
    ReminderFileError,
    ReminderStore,
    checked_text,
)

SET_REMINDER = "set_reminder"
LIST_REMINDERS = "list_reminders"
CANCEL_REMINDER = "cancel_reminder"
MAX_AHEAD = timedelta(days=366)
MAX_PER_QUESTION = 5
"""Reminders one question may set, whatever its tool rounds (a document cannot make it set fifty)."""

MayCreate = Callable[[ToolContext], str | None]
"""Returns why the asker may not create a reminder now (e.g. over a daily limit), or None."""

WEEKDAYS_KO = "월화수목금토일"


def zone_label(tz: str, lang: str = "ko") -> str:
    if tz == "Asia/Seoul":
        return "한국 시각" if lang == "ko" else "Korean time"
    return tz


def local_time(at: datetime, tz: str, lang: str = "ko") -> str:
    """``2026년 11월 30일 (월) 09:00`` (Korean) or ``Mon 30 Nov 2026, 09:00`` (English), in ``tz``."""
    local = at.astimezone(ZoneInfo(tz))
    if lang == "ko":
        return f"{local.year}년 {local.month}월 {local.day}일 ({WEEKDAYS_KO[local.weekday()]}) {local:%H:%M}"
    return f"{local:%a} {local.day} {local:%b %Y, %H:%M}"


def _until(delta: timedelta) -> str:
    minutes = max(0, round(delta.total_seconds() / 60))
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = [f"{days} d"] if days else []
    parts += [f"{hours} h"] if hours else []
    parts += [f"{mins} min"] if mins or not parts else []
    return " ".join(parts)


def parse_at(value: Any, now: datetime, tz: str) -> datetime | str:
    """The reminder time, or why it cannot be used (a message for Claude)."""
    example = (now.astimezone(ZoneInfo(tz)) + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)
    if not isinstance(value, str) or not value.strip():
        return f"'at' must be an ISO-8601 date-time with its UTC offset, e.g. {example.isoformat()}"
    try:
        at = datetime.fromisoformat(value.strip())
    except ValueError:
        return f"'at' is not an ISO-8601 date-time: {value!r}; use e.g. {example.isoformat()}"
    if at.tzinfo is None:
        return f"'at' has no UTC offset: {value!r}. Add it, e.g. {example.isoformat()} (the user's time zone is {tz})"
    if at <= now:
        return (
            f"{value} is in the past: it is now {now.astimezone(ZoneInfo(tz)).isoformat(timespec='minutes')} "
            f"({tz}). Resolve the time again against the current time, or ask the user."
        )
    if at - now > MAX_AHEAD:
        return f"{value} is more than a year ahead; reminders can be set up to one year from now"
    return at


def is_telegram_chat(chat_id: str) -> bool:
    """Reminders are delivered by the Telegram bot: the chat must be a Telegram chat id."""
    return chat_id.lstrip("-").isdigit()


def reminder_line(r: Reminder, tz: str, lang: str = "ko") -> str:
    return f"[{r.id}] {local_time(r.at, tz, lang)} — {r.text}"


def reminder_tools(store: ReminderStore, tz: str, *, may_create: MayCreate | None = None) -> list[Tool]:
    """The three reminder tools over ``store``; times are shown in ``tz``. ``may_create`` can refuse new ones."""

    def set_reminder(ctx: ToolContext, value: Mapping[str, Any]) -> ToolResult:
        if not is_telegram_chat(ctx.chat_id):
            return ToolResult(
                "reminders are delivered through Telegram, and this conversation is not a Telegram chat "
                "(in the terminal, continue a Telegram chat with --chat <chat id> to set reminders there)",
                True,
            )
        at = parse_at(value.get("at"), ctx.now, tz)
        if isinstance(at, str):
            return ToolResult(at, True)
        text = value.get("text")
        if not isinstance(text, str):
            return ToolResult("'text' must be a string: what to remind the user of", True)
        try:
            text = checked_text(text)
        except ReminderError as e:
            return ToolResult(str(e), True)
        if may_create is not None and (reason := may_create(ctx)) is not None:
            return ToolResult(f"no new reminder can be set now: {reason}", True)
        if ctx.counts.get(SET_REMINDER, 0) >= MAX_PER_QUESTION:
            return ToolResult(
                f"refused: one question sets at most {MAX_PER_QUESTION} reminders, and this one has. Tell the "
                "person which were set; they can ask again for more",
                True,
            )
        thread = ctx.meta.get("thread_id")
        # every reminder has a setter: the person asking (a private chat's question carries no user_id in
        # its meta, the context has it); only the terminal (the owner at the keyboard) has none
        via = "terminal" if ctx.user_id is None else "telegram"
        try:
            r = store.add(
                ctx.chat_id,
                at,
                text,
                thread_id=thread if isinstance(thread, int) else None,
                user_id=ctx.user_id,
                via=via,
            )
        except (ReminderError, ReminderFileError) as e:
            return ToolResult(str(e), True)
        ctx.counts[SET_REMINDER] = ctx.counts.get(SET_REMINDER, 0) + 1
        when = f"{local_time(r.at, tz)} ({zone_label(tz)})"
        return ToolResult(f'reminder {r.id} set for {when}, in {_until(r.at - ctx.now)}: "{r.text}"')

    def list_reminders(ctx: ToolContext, value: Mapping[str, Any]) -> ToolResult:
        try:
            pending = store.pending(ctx.chat_id)
        except ReminderFileError as e:
            return ToolResult(str(e), True)
        if not pending:
            return ToolResult("no pending reminders in this chat")
        lines = [reminder_line(r, tz) for r in pending]
        return ToolResult(
            f"{len(pending)} pending reminders in this chat ([id] time ({zone_label(tz)}) — text), soonest first:\n"
            + "\n".join(lines)
        )

    def cancel_reminder(ctx: ToolContext, value: Mapping[str, Any]) -> ToolResult:
        rid = value.get("id")
        if not isinstance(rid, str | int) or isinstance(rid, bool) or not str(rid).strip():
            return ToolResult("'id' must be the id of a pending reminder (see list_reminders)", True)
        try:
            mine = store.get(str(rid).strip().lstrip("#"))
            if mine is not None and mine.chat_id == ctx.chat_id and mine.user_id != ctx.user_id and not ctx.manages():
                return ToolResult(MANAGERS_ONLY.format(what="cancel a reminder someone else set"), True)
            r = store.cancel(ctx.chat_id, rid)
        except (ReminderError, ReminderFileError) as e:
            return ToolResult(str(e), True)
        return ToolResult(f'reminder {r.id} ({local_time(r.at, tz)}) cancelled: "{r.text}"')

    return [
        Tool(
            SET_REMINDER,
            "Set a reminder: at the given time the bot sends the text to this chat (as '⏰ text'). Use it when "
            "the user asks to be reminded of something ('내일 아침 9시에 약 먹으라고 알려 줘', 'remind me in 20 "
            "minutes'). Resolve relative times against the current date and time given in the system prompt, in "
            "the user's time zone, and pass 'at' as an ISO-8601 date-time with its UTC offset "
            "(e.g. 2026-11-30T09:00:00+09:00). Write 'text' as the reminder the user should read then, in their "
            f"language. At most one year ahead and {MAX_TEXT_CHARS} characters. After setting it, tell the user "
            "briefly when they will be reminded.",
            {
                "type": "object",
                "properties": {
                    "at": {
                        "type": "string",
                        "description": "When to remind: ISO-8601 date-time with UTC offset, "
                        "e.g. 2026-11-30T09:00:00+09:00.",
                    },
                    "text": {"type": "string", "description": "What to remind the user of, e.g. '약 먹기'."},
                },
                "required": ["at", "text"],
            },
            set_reminder,
        ),
        Tool(
            LIST_REMINDERS,
            "List the reminders of this chat that are still to be sent, with their ids and times.",
            {"type": "object", "properties": {}},
            list_reminders,
        ),
        Tool(
            CANCEL_REMINDER,
            "Cancel a pending reminder of this chat by its id (from list_reminders), when the user no longer "
            "wants it or wants to move it (then set a new one).",
            {
                "type": "object",
                "properties": {"id": {"type": "string", "description": "The id of the reminder to cancel."}},
                "required": ["id"],
            },
            cancel_reminder,
        ),
    ]
