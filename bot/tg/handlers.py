"""Telegram update handlers: small functions that hand each chat's messages to the assistant.

Every turn runs under the chat's lock (``Services.chat_lock``, bot/tg/replies.py, the Assistant's one lock map):
ask, stream and deliver the reply, strictly one after another per chat. The memory upkeep
(compaction) then starts in the background, outside the lock. In groups only
messages for the bot (a mention or a reply to it) are answered and stored, as
``"<first name>: <text>"`` with ``name`` and ``user_id`` beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from telegram import Chat, Update
from telegram.constants import ChatAction
from telegram.error import TelegramError
from telegram.ext import Application, CallbackContext, ContextTypes

from bot.claude.model import ModelError, TextCallback
from bot.core.ask import Answer, NothingToRetry, Question
from bot.texts import t
from bot.tg import documents, photos
from bot.tg.access import admit, gate, guard, manager_check, within_limits
from bot.tg.failures import failure_text
from bot.tg.groups import is_for_bot, is_group, strip_mention
from bot.tg.references import reference_of, thread_meta, with_reference
from bot.tg.replies import lang_for, reply, reply_later, services, target_for
from bot.tg.send import send_plain
from bot.tg.stream import ReplyStream

log = logging.getLogger(__name__)

TYPING_EVERY = 4.0  # seconds; Telegram shows "typing…" for about 5 s
FORWARDED = "[전달된 메시지 / Forwarded message]"


def backlog_full(application: Application, update: object) -> None:  # type: ignore[type-arg]
    """A chat's lane is full (bot/tg/lanes.py): tell an allowed sender, once, that this message was skipped.

    Strangers and group chatter not for the bot hear nothing. Not awaited: the notice takes its turn
    in the chat's own queue.
    """

    if not isinstance(update, Update):
        return
    message, user = update.effective_message, update.effective_user
    if message is None or user is None or user.is_bot:
        return
    context = CallbackContext.from_update(update, application)
    group = is_group(message.chat)
    if group and not is_for_bot(message, application.bot.username, application.bot.id):
        return
    if not guard(context).access.chat_allowed(message.chat.id, user.id, group=group):
        return
    reply_later(update, context, t("busy.dropped", lang_for(update)), spare_only=False)


@contextlib.asynccontextmanager
async def typing(
    context: ContextTypes.DEFAULT_TYPE, chat_id: int, thread_id: int | None = None, every: float = TYPING_EVERY
) -> AsyncIterator[None]:
    """Keep the "typing…" indicator alive while the block runs (it fades after about 5 s)."""

    async def keep_typing() -> None:
        while True:
            with contextlib.suppress(TelegramError):
                await context.bot.send_chat_action(chat_id, ChatAction.TYPING, message_thread_id=thread_id)
            await asyncio.sleep(every)

    task = asyncio.create_task(keep_typing())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def check_allowed(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """True if the sender may use the bot in this chat; strangers are told their id (bot/tg/access.py)."""

    return await gate(update, context)


async def admitted(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """True if the question may go to the model now: counted against the sender's daily limits."""

    return await admit(update, context)


async def incoming(update: Update, context: ContextTypes.DEFAULT_TYPE) -> str | None:
    """The text (or caption) the user is saying to the bot, or None when the update is not for it.

    Group messages that neither mention the bot nor reply to it are ignored (nothing
    is answered or stored); in groups the mention is removed from the text.
    """
    message = update.effective_message
    if message is None:
        return None
    if message.from_user is not None and message.from_user.is_bot:
        log.info("chat %s: ignored a message from another bot", message.chat.id)  # never two bots in a loop
        return None
    text = message.text if message.text is not None else message.caption or ""
    if is_group(message.chat):
        username, bot_id = context.bot.username, context.bot.id
        if not is_for_bot(message, username, bot_id):
            return None
        text = strip_mention(message, username, bot_id)
    if not await check_allowed(update, context):
        return None
    return text


def question_for(
    update: Update, text: str, *, attachments: tuple[dict[str, Any], ...] = (), meta: Mapping[str, Any] | None = None
) -> Question:
    """The question as it is sent and stored; group turns carry the sender's first name.

    A message that replies to (or quotes) another carries that text before the question, and
    the reference (``reply_to``); a message in a forum topic carries its ``thread_id``.
    """
    message, user = update.effective_message, update.effective_user
    extra = dict(meta or {})
    reference = reference_of(message) if message is not None else None
    if message is not None:
        extra.update(thread_meta(message))
    if reference is not None:
        extra["reply_to"] = reference.meta()
    if message is not None and message.forward_origin is not None:
        text = f"{FORWARDED} {text}"  # someone else's words, passed on: Claude should know
        extra["forwarded"] = True
    if message is not None and is_group(message.chat) and user is not None:
        name = user.first_name or str(user.id)
        said = with_reference(f"{name}: {text}", reference)
        return Question(said, attachments, {"name": name, "user_id": user.id, **extra}, user.id)
    return Question(with_reference(text, reference), attachments, extra, user.id if user is not None else None)


async def respond(
    update: Update, context: ContextTypes.DEFAULT_TYPE, ask: Callable[[TextCallback], Awaitable[Answer]]
) -> None:
    """One turn under the chat's lock: stream the answer while it is written, deliver it, then upkeep."""
    message = update.effective_message
    if message is None:
        return
    chat = message.chat
    svc = services(context)
    lang = lang_for(update)
    async with svc.chat_lock(chat.id):
        target = target_for(message)
        stream = ReplyStream(
            context.bot,
            target,
            drafts=chat.type == Chat.PRIVATE and chat.id not in svc.no_drafts,
            interval=svc.stream_interval,
        )
        try:
            try:
                # a place among the questions preparing at once, first come first served, given back as
                # the model call starts (bot/core/admission.py); "typing…" starts with it
                async with svc.assistant.admission.turn(), typing(context, chat.id, target.thread_id):
                    answer = await ask(stream.feed)
            except ModelError as e:
                await stream.fail(await failure_text(update, context, e.kind, lang))
                return
            except NothingToRetry:
                await stream.fail(t("retry.nothing", lang))
                return
            except BaseException:
                await stream.cancel()
                raise
            await stream.finish(answer.text)
            if not answer.saved:
                await send_plain(context.bot, target, t("error.not_saved", lang))
        finally:
            if stream.drafts_refused:
                svc.no_drafts.add(chat.id)
    # compaction runs in the background, outside the chat's lock: the next message never waits for it
    user = update.effective_user
    await svc.assistant.maintain(chat.id, user_id=user.id if user else None, wait=False)


async def answer_question(update: Update, context: ContextTypes.DEFAULT_TYPE, question: Question) -> None:
    """Ask Claude ``question`` in this update's chat and deliver the answer (see ``respond``)."""

    chat_id = update.effective_message.chat.id  # type: ignore[union-attr]
    question = replace(question, may_manage=manager_check(update, context))  # tools act with the asker's rights
    await respond(update, context, lambda on_text: services(context).assistant.ask(chat_id, question, on_text=on_text))


async def on_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Answer a text message with Claude and the chat's memory (in groups only when addressed)."""
    text = await incoming(update, context)
    if text is None:
        return
    if not text.strip():
        await reply(update, context, t("group.empty", lang_for(update)))
        return
    if not await admitted(update, context):
        return
    question = question_for(update, text)
    await answer_question(update, context, question)


async def fetchable(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """True if a file may be downloaded now: the sender is not over today's limits (nothing counted yet)."""

    return await within_limits(update, context)


@contextlib.asynccontextmanager
async def file_turn(update: Update, context: ContextTypes.DEFAULT_TYPE) -> AsyncIterator[None]:
    """A file is downloaded, read and answered in its chat's turn (the lock, re-entered by ``respond``):
    a chat holds one file in memory at a time, however many it sends at once."""
    async with services(context).chat_lock(update.effective_message.chat.id):  # type: ignore[union-attr]
        yield


async def answer_image(
    update: Update, context: ContextTypes.DEFAULT_TYPE, file_id: str, size: int | None, caption: str
) -> None:
    """Download an image, send it to Claude with its caption; store only the caption and the file_id.

    The daily limits are checked before anything is downloaded. An image that cannot go to Claude
    (over Telegram's download limit, too many pixels, unreadable) gets a clear reply before any
    model call, and nothing is stored.
    """
    lang = lang_for(update)
    if not await fetchable(update, context):
        return
    async with file_turn(update, context):
        try:
            block = await photos.fetch_block(context.bot, file_id, size)
        except photos.PhotoTooBig:
            await reply(update, context, t("photo.too_big", lang, mb=photos.MAX_DOWNLOAD // (1024 * 1024)))
            return
        except photos.TooManyPixels:
            await reply(update, context, t("photo.too_many_pixels", lang, mp=photos.MAX_PIXELS // 1_000_000))
            return
        except photos.UnreadableImage as e:
            log.info("could not read an image (%s)", e)
            await reply(update, context, t("photo.unreadable", lang))
            return
        except TelegramError as e:
            log.warning("could not download a photo: %s", e)
            await reply(update, context, t("photo.failed", lang))
            return
        if not await admitted(update, context):
            return
        question = question_for(update, photos.stored_text(caption), attachments=(block,), meta={"photo": file_id})
        del block
        await answer_question(update, context, question)


async def answer_document(
    update: Update, context: ContextTypes.DEFAULT_TYPE, doc: documents.DocInfo, caption: str
) -> None:
    """Download a PDF or text file and send it to Claude with the caption as the question.

    Only a marker (``[문서] name — question``) and the file's id, name, type and size are
    stored. The daily limits are checked before anything is downloaded; a file that cannot go to
    Claude (too big, too many pages, encrypted, unreadable, not text) gets a clear reply before
    any model call, and nothing is stored.
    """
    lang = lang_for(update)
    if not await fetchable(update, context):
        return
    async with file_turn(update, context):
        try:
            block = await documents.fetch_block(context.bot, doc)
        except documents.DocumentError as e:
            log.info("refused a document (%s: %s)", e.code, e)
            await reply(update, context, t(f"document.{e.code}", lang, **e.fields))
            return
        except TelegramError as e:
            log.warning("could not download a document: %s", e)
            await reply(update, context, t("document.failed", lang))
            return
        if not await admitted(update, context):
            return
        question_text = caption.strip() or t("document.default_question", lang)
        stored = documents.stored_text(doc.name, question_text)
        question = question_for(update, stored, attachments=(block,), meta={"document": doc.meta()})
        del block
        await answer_question(update, context, question)


async def on_photo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A photo (with or without caption) goes to Claude as an image block."""
    message = update.effective_message
    caption = await incoming(update, context)
    if message is None or caption is None or not message.photo:
        return
    size = photos.pick_size(message.photo)
    await answer_image(update, context, size.file_id, size.file_size, caption)


async def on_document(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """PDFs and text files are read, images sent as files like photos; other files are declined (nothing
    stored)."""
    message = update.effective_message
    caption = await incoming(update, context)
    if message is None or caption is None or message.document is None:
        return
    doc = message.document
    kind = documents.kind_of(doc.file_name, doc.mime_type)
    if kind == "image":
        await answer_image(update, context, doc.file_id, doc.file_size, caption)
        return
    if kind in ("pdf", "text"):
        name = doc.file_name or ("document.pdf" if kind == "pdf" else "document.txt")
        info = documents.DocInfo(doc.file_id, name, doc.mime_type or "", doc.file_size, kind)
        await answer_document(update, context, info, caption)
        return
    await reply(update, context, t("document.unsupported", lang_for(update)))


async def on_other(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Politely decline other messages (stickers, voice, …); nothing is stored."""
    if await incoming(update, context) is None:
        return
    await reply(update, context, t("text_only", lang_for(update)))


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log the error and, where there is a chat, say something went wrong."""
    log.error("error while handling an update: %s", context.error, exc_info=context.error)
    if isinstance(update, Update) and update.effective_chat is not None:
        with contextlib.suppress(TelegramError):
            await context.bot.send_message(update.effective_chat.id, t("error.internal", lang_for(update)))
