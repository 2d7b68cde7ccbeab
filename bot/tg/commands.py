"""The bot's commands: /start, /help, /history, /summary, /memory, /remember, /forget, /reset, /retry, /stats,
/export.

Commands that change memory (/reset, /retry) run under the chat's lock, after any turn in progress;
/export reads every transcript of the chat (the live one up to a size taken under its file lock: whole
turns) in a thread, into a temporary file, and sends it as a document (memory.imports.history).
"""

from __future__ import annotations

import asyncio
import io
import logging
import math
import tempfile
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from telegram import ReplyParameters, Update
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.claude.model import TextCallback
from bot.commands.facts import forget_text, memory_text, remember_text
from bot.commands.model import model_text
from bot.commands.search import search_text
from bot.commands.transfer import Format, write_history
from bot.core.ask import Answer, Assistant, Question
from bot.texts import t
from bot.tg import access as tg_access
from bot.tg import documents, owner, photos
from bot.tg.groups import is_group
from bot.tg.handlers import admitted, check_allowed, respond
from bot.tg.render import Part, escape, html_to_text
from bot.tg.replies import lang_for, reply, services, target_for
from bot.tg.send import send_part
from memory.content import display_text
from memory.files import ensure_private_dir

log = logging.getLogger(__name__)

HISTORY_ITEM_CHARS = 200  # each message is trimmed to this for display
EXPORT_MAX_BYTES = 49 * 1024 * 1024  # bots may send documents up to 50 MB
EXPORT_EVERY = timedelta(minutes=10)  # one /export per chat and person this often (it uploads up to 49 MB)
EXPORTS_REMEMBERED = 10_000  # (chat, person) pairs kept for the export throttle, the oldest dropped first


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/start and /help: what the bot is, what it remembers, and the commands (``/start <code>``: pairing)."""
    message = update.effective_message
    if message is None or await tg_access.pairing(update, context) or not await check_allowed(update, context):
        return
    html_text = t("help", lang_for(update), bot=escape("@" + (context.bot.username or "bot")))
    await send_part(context.bot, target_for(message), Part(html_text, html_to_text(html_text)))


def _one_line(text: str, limit: int = HISTORY_ITEM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


async def may_read_history(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """The gate of the commands that show a chat's past (/history, /summary, /search, /export).

    In a group only the owner and the group's administrators may read it: a member who joined
    today must not read what was said before (Telegram may hide that history from newcomers too).
    In private chats the chat is the person's own.
    """
    return await check_allowed(update, context) and await tg_access.may_manage(update, context)


async def history_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/history: the recent messages the next request will carry, numbered and trimmed."""
    message = update.effective_message
    if message is None or not await may_read_history(update, context):
        return
    assistant, lang = services(context).assistant, lang_for(update)
    messages = await asyncio.to_thread(assistant.history, message.chat.id)
    if not messages:
        await reply(update, context, t("history.empty", lang))
        return
    lines = [t("history.header", lang, n=len(messages))]
    for i, m in enumerate(messages, 1):
        icon = "👤" if m.get("role") == "user" else "🤖"
        lines.append(f"{i}. {icon} {_one_line(display_text(m.get('content')))}")
    if await asyncio.to_thread(assistant.summary, message.chat.id):
        lines.append(t("history.summary_note", lang))
    await reply(update, context, "\n".join(lines))


async def summary_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/summary: the chat's summary of its older conversation, or a clear "no summary yet"."""
    message = update.effective_message
    if message is None or not await may_read_history(update, context):
        return
    lang = lang_for(update)
    summary = await asyncio.to_thread(services(context).assistant.summary, message.chat.id)
    if not summary or not summary.strip():
        await reply(update, context, t("summary.none", lang))
        return
    await reply(update, context, f"{t('summary.header', lang)}\n\n{summary.strip()}")


def _argument(update: Update) -> str:
    """The text after the command (``/remember 내 생일은 3월 14일`` → ``내 생일은 3월 14일``)."""
    message = update.effective_message
    text = (message.text or "") if message is not None else ""
    parts = text.split(maxsplit=1)
    return parts[1] if len(parts) > 1 else ""


TextCommand = Callable[[Assistant, int, str, str], str]
"""(assistant, chat id, the text after the command, language) -> the reply; does file I/O."""


async def _text_command(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    make: TextCommand,
    gate: Callable[[Update, ContextTypes.DEFAULT_TYPE], Awaitable[bool]] = check_allowed,
) -> None:
    """Run a command whose reply is one text computed off the event loop (/search, /memory, …) past ``gate``."""
    message = update.effective_message
    if message is None or not await gate(update, context):
        return
    assistant, lang = services(context).assistant, lang_for(update)
    text = await asyncio.to_thread(make, assistant, message.chat.id, _argument(update), lang)
    await reply(update, context, text)


async def search_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/search <words>: the best matches over the chat's whole history, with their dates (groups: admins)."""
    await _text_command(update, context, search_text, may_read_history)


async def memory_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/memory: the facts the assistant keeps about this chat, numbered."""
    await _text_command(update, context, lambda assistant, chat, _, lang: memory_text(assistant, chat, lang))


async def remember_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/remember <text>: add a fact; it counts against the daily question limit (it grows every request)."""

    async def gate(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
        if not await check_allowed(update, context):
            return False
        return not _argument(update).strip() or await tg_access.admit(update, context, model=False)

    await _text_command(update, context, remember_text, gate)


async def forget_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/forget <n> removes a fact; /forget all puts them all aside (archived, never deleted). Groups: admins."""
    message = update.effective_message
    if message is None or not await check_allowed(update, context) or not await tg_access.may_manage(update, context):
        return
    assistant, lang = services(context).assistant, lang_for(update)
    text = await asyncio.to_thread(forget_text, assistant, message.chat.id, _argument(update), lang)
    await reply(update, context, text)


async def reset_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/reset: a fresh conversation; the old transcript is archived (renamed), never deleted. Groups: admins."""
    message = update.effective_message
    if message is None or not await check_allowed(update, context) or not await tg_access.may_manage(update, context):
        return
    svc, lang = services(context), lang_for(update)
    async with svc.chat_lock(message.chat.id):
        name = await svc.assistant.reset(message.chat.id)
    await reply(update, context, t("reset.done", lang, name=name) if name else t("reset.empty", lang))


async def retry_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/retry: ask the last question again (after a failure, or for another answer that replaces the last)."""
    message = update.effective_message
    if message is None or not await check_allowed(update, context) or not await admitted(update, context):
        return
    assistant = services(context).assistant
    chat_id = message.chat.id

    async def restore(question: Question) -> Question:
        """Download the photo or document of a stored question again (only its file id was stored)."""
        doc = documents.DocInfo.from_meta(question.meta.get("document"))
        if doc is not None:
            try:
                block = await documents.fetch_block(context.bot, doc)
            except (documents.DocumentError, TelegramError) as e:
                log.warning("retry: could not download the document again (%s); asking with the text only", e)
                return question
            return replace(question, attachments=(block,))
        file_id = question.meta.get("photo")
        if not isinstance(file_id, str):
            return question
        try:
            block = await photos.fetch_block(context.bot, file_id)
        except (photos.ImageError, TelegramError) as e:
            log.warning("retry: could not download the photo again (%s); asking with the caption only", e)
            return question
        return replace(question, attachments=(block,))

    async def ask(on_text: TextCallback) -> Answer:
        user = update.effective_user
        _, answer = await assistant.retry(
            chat_id,
            on_text=on_text,
            restore=restore,
            user_id=user.id if user else None,
            may_manage=tg_access.manager_check(update, context),
        )
        return answer

    await respond(update, context, ask)


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "0"


async def stats_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/stats: messages stored, summary coverage, tokens and estimated cost in this chat; /stats all: per person."""
    message = update.effective_message
    if message is None:
        return
    if _argument(update).strip().lower() == "all":
        await owner.stats_all(update, context)
        return
    if not await check_allowed(update, context):
        return
    lang = lang_for(update)
    # cheap whatever the history's length: sizes and counts here, the tokens from the usage ledger
    info = await asyncio.to_thread(services(context).assistant.chat_info, message.chat.id)
    covers = info.get("summary_covers")
    summary = t("stats.covers", lang, n=_number(covers)) if covers else t("stats.no_summary", lang)
    size = _size(info.get("bytes", 0))
    usage = await owner.chat_usage(context, message.chat.id, lang)
    text = t("stats", lang, summary=summary, size=size, facts=_number(info.get("facts")))
    await reply(update, context, text + "\n" + usage)


def _size(n: int) -> str:
    """``812 B``, ``12.3 KB``, ``4.5 MB``."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


async def model_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/model (owner): the current model and what the Models API says; /model <id> switches (kept)."""
    if update.effective_message is None or not await tg_access.owner_only(update, context):
        return
    assistant = services(context).assistant
    await reply(update, context, await model_text(assistant.model, _argument(update), lang_for(update)))


class _TooBig(Exception):
    pass


class _Capped(io.TextIOWrapper):
    """A text file that refuses to grow past ``limit`` bytes (an export Telegram cannot take is not written
    whole first)."""

    def __init__(self, raw: IO[bytes], limit: int) -> None:
        super().__init__(raw, encoding="utf-8", newline="\n")
        self.limit = limit
        self.size = 0

    def write(self, text: str) -> int:
        self.size += len(text.encode("utf-8"))
        if self.size > self.limit:
            raise _TooBig
        return super().write(text)


def _history_file(data_dir: Path, chat_id: int, fmt: Format, raw: IO[bytes]) -> int | None:
    """Write the chat's whole history into ``raw``; the messages written, None if over EXPORT_MAX_BYTES."""
    out = _Capped(raw, EXPORT_MAX_BYTES)
    try:
        n = write_history(data_dir, chat_id, fmt, out)
        out.flush()
    except _TooBig:
        return None
    finally:
        out.detach()
    raw.seek(0)
    return n


async def export_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/export [md]: the chat's whole history (archived and imported conversations included) as a .jsonl or
    .md document (groups: admins; once per EXPORT_EVERY per person)."""
    message = update.effective_message
    if message is None or not await may_read_history(update, context):
        return
    svc, lang = services(context), lang_for(update)
    arg = _argument(update).lower()
    fmt: Format | None = {"": "jsonl", "jsonl": "jsonl", "json": "jsonl", "md": "md", "markdown": "md"}.get(arg)
    if fmt is None:
        await reply(update, context, t("export.usage", lang))
        return
    chat_id = message.chat.id
    who = (chat_id, update.effective_user.id if update.effective_user else 0)
    if (left := _export_wait(context, who)) is not None:
        minutes = int(EXPORT_EVERY.total_seconds() // 60)
        await reply(update, context, t("export.wait", lang, minutes=minutes, left=max(1, math.ceil(left / 60))))
        return
    data_dir = Path(svc.settings.data_dir)
    with tempfile.TemporaryFile(dir=ensure_private_dir(data_dir)) as raw:
        # the live transcript is read up to a size taken under its lock: whole turns, no chat lock needed
        n = await asyncio.to_thread(_history_file, data_dir, chat_id, fmt, raw)
        if n is None:
            _export_undo(context, who)  # nothing was sent: it does not count
            command = f"python -m bot export --chat {chat_id}" + (" --format md" if fmt == "md" else "")
            await reply(update, context, t("export.too_big", lang, command=command))
            return
        if n == 0:
            _export_undo(context, who)
            await reply(update, context, t("export.empty", lang))
            return
        target = target_for(message)
        quote = ReplyParameters(target.reply_to, allow_sending_without_reply=True) if target.reply_to else None
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        await context.bot.send_document(
            chat_id,
            document=raw,
            filename=f"chat-{chat_id}-{stamp}.{fmt}",
            caption=t("export.caption" if fmt == "jsonl" else "export.caption_md", lang),
            message_thread_id=target.thread_id,
            reply_parameters=quote,
        )


def _exports(context: ContextTypes.DEFAULT_TYPE) -> OrderedDict[tuple[int, int], datetime]:
    return context.bot_data.setdefault("exports", OrderedDict())  # type: ignore[no-any-return]


def _export_wait(context: ContextTypes.DEFAULT_TYPE, who: tuple[int, int]) -> float | None:
    """Seconds until this person (chat, user) may /export here again, or None (then this export counts now)."""
    exports = _exports(context)
    now = tg_access.guard(context).limits.now()  # the limits' clock (tests move it)
    last = exports.get(who)
    if last is not None and now - last < EXPORT_EVERY:
        return (EXPORT_EVERY - (now - last)).total_seconds()
    exports.pop(who, None)
    exports[who] = now
    while len(exports) > EXPORTS_REMEMBERED:
        exports.popitem(last=False)
    return None


def _export_undo(context: ContextTypes.DEFAULT_TYPE, who: tuple[int, int]) -> None:
    _exports(context).pop(who, None)


async def unknown_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Commands the bot does not know get a short hint instead of going to the model."""
    message = update.effective_message
    if message is None or not message.text:
        return
    command = message.text.split()[0]
    addressee = command.partition("@")[2]
    if addressee and addressee.lower() != (context.bot.username or "").lower():
        return  # /cmd@otherbot
    if is_group(message.chat) and not addressee:
        return  # in a group a bare /cmd may be for another bot
    if not await check_allowed(update, context):
        return
    await reply(update, context, t("unknown_command", lang_for(update)))
