"""/import from the phone: the owner sends an export (ChatGPT's or Claude's conversations.json or .zip,
Telegram Desktop's result.json) with the caption ``/import``; the bot imports it into the chat it was sent
in and answers what it took in (memory.imports, worded by bot.commands.transfer).

Nothing is downloaded before the sender is admitted and is the owner (``owner_only``); a file over
Telegram's 20 MB download limit for bots is declined without a download (the command line takes any
size). The file goes to a private temporary folder in DATA_DIR and is deleted after the import; the
import runs in a thread, never on the event loop nor under the chat's lock (it never touches the live
transcript). The recall index then catches up in the background (a worker process for a long history).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import tempfile
from pathlib import Path

from telegram import Update
from telegram.constants import ChatAction
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.commands.transfer import import_text
from bot.texts import t
from bot.tg import photos
from bot.tg.access import owner_only
from bot.tg.replies import lang_for, reply, services
from memory.files import ensure_private_dir
from memory.imports import ImportReport, import_file

log = logging.getLogger(__name__)

MAX_DOWNLOAD = photos.MAX_DOWNLOAD  # Telegram's Bot API serves files up to 20 MB
CAPTION = r"^/import(@\w+)?(\s|$)"  # the caption that makes a document an import


async def import_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/import as a text: how to send an export (owner only)."""
    if update.effective_message is None or not await owner_only(update, context):
        return
    await reply(update, context, t("import.how", lang_for(update)))


async def on_import_document(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A document with the caption /import: the owner's export, imported into this chat."""
    message = update.effective_message
    if message is None or message.document is None or not await owner_only(update, context):
        return
    doc, lang = message.document, lang_for(update)
    if doc.file_size is not None and doc.file_size > MAX_DOWNLOAD:
        await reply(update, context, t("import.too_big", lang, size=math.ceil(doc.file_size / 1e6)))
        return
    svc = services(context)
    data_dir = Path(svc.settings.data_dir)
    name = Path(doc.file_name or "export.json").name
    chat_id = message.chat.id
    with contextlib.suppress(TelegramError):  # "typing…" while it downloads and imports
        await context.bot.send_chat_action(chat_id, ChatAction.TYPING, message_thread_id=message.message_thread_id)
    with tempfile.TemporaryDirectory(prefix="import-", dir=ensure_private_dir(data_dir)) as tmp:
        path = Path(tmp) / "export"
        try:
            file = await context.bot.get_file(doc.file_id)
            await file.download_to_drive(path)
        except TelegramError as e:  # e.g. "file is too big" when the size was not given
            log.warning("chat %s: could not download an export: %s", chat_id, e)
            await reply(update, context, t("import.too_big", lang, size=math.ceil((doc.file_size or 0) / 1e6) or "20+"))
            return
        report: ImportReport = await asyncio.to_thread(import_file, path, data_dir, str(chat_id))
    log.info(
        "chat %s: imported %s: %d conversations, %d messages (%d already there, %d skipped)%s",
        chat_id, report.source, report.conversations, report.messages, report.present, report.skipped,
        f"; {report.error}" if report.error else "",
    )  # fmt: skip
    await reply(update, context, import_text(report, lang, name=name))
    recall = svc.assistant.recall
    if report.messages and recall is not None:  # start indexing now rather than at the next question
        await asyncio.to_thread(recall.catch_up, chat_id)
