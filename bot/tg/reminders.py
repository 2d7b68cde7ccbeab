"""Delivering reminders: scheduled with python-telegram-bot's job queue, sent at most once, then told.

``ReminderDelivery`` decides what to send and when; it gets its clock, its timers and its
sender injected (tests drive it with a fake clock and fake timers; the bot uses the job queue
and the Bot API). The store (memory/reminders.py) is the truth; the timers are only wake-ups:

- **start** — every reminder found ``sending`` was being sent when the bot stopped: it may or
  may not have reached the chat, so it is never sent again as such; the chat is told once
  (``⏰ text`` with a note that it may be a repeat). Every pending reminder is scheduled; one
  whose time passed while the bot was down goes out at once, with a note of its original time.
- **due** — the reminder is *claimed* (``pending`` → ``sending``, fsynced) before the message is
  sent and marked ``sent`` after. So a kill between the two never sends it twice: at most
  once, then told. Telegram refusing for good (bot blocked, chat gone) ends it as ``failed``;
  flood control puts it back to ``pending`` for later; a network error (did it arrive?) is
  treated like a kill: the chat is told once, a minute later.
- **memory** — a delivered reminder is appended to the chat's transcript as one whole turn (a
  user-role note ``[알림 전송됨 / reminder delivered] …`` and the ``⏰`` message, both marked
  ``"reminder": id``), so Claude knows it was sent and the file's turns stay valid.
- **other processes** — the terminal chat sets reminders in the same file; the store's signature
  is checked every ``RESCAN_SECONDS`` and new ones are scheduled.
- **access** — a reminder goes out only while the person who set it could still talk to the bot in
  that chat (``may_deliver``: not after ``/deny`` of that person, nor in a group closed with ``/deny``
  unless they are allowed themselves; a reminder that names no setter goes out only if it was set at
  the terminal). Otherwise it is *held*: kept pending in the file, never
  deleted, not sent (so it costs nothing, no summary either); the owner sees held reminders in
  ``/reminders`` in their private chat, and a rescan sends them if access comes back.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from telegram import Update
from telegram.error import BadRequest, ChatMigrated, Forbidden, RetryAfter
from telegram.ext import Application, ContextTypes, Job, JobQueue

from bot.commands.reminders import CANCEL_WORDS, cancel_from_whom, reminders_text
from bot.core.ask import Assistant
from bot.texts import t
from bot.tg.groups import is_group
from bot.tg.handlers import check_allowed
from bot.tg.replies import lang_for, reply, services
from bot.tg.stream import retry_seconds
from bot.tools.reminders import local_time, zone_label
from memory.reminders import (
    CANCELLED,
    FAILED,
    FINISHED,
    PENDING,
    SENDING,
    SENT,
    UNCONFIRMED,
    Reminder,
    ReminderFileError,
    ReminderStore,
)

log = logging.getLogger(__name__)

LATE_AFTER = timedelta(minutes=1)  # a reminder sent later than this gets a note of its original time
NOTICE_AFTER = timedelta(minutes=1)  # after a send whose outcome is unknown, the chat is told then
EARLY = timedelta(seconds=1)  # a timer that fires earlier than this before the time is re-armed
RESCAN_SECONDS = 10.0  # how often the file is checked for reminders set by another process
NOTE = "[알림 전송됨 / reminder delivered]"
_HANGUL = re.compile("[\uac00-\ud7a3]")


class Refused(Exception):
    """Telegram refused the message for good: it was not delivered and will not be."""


class RetryLater(Exception):
    """Telegram did not take the message now (flood control); try again after ``after`` seconds."""

    def __init__(self, after: float) -> None:
        super().__init__(f"retry after {after} s")
        self.after = after


Send = Callable[[Reminder, str], Awaitable[int | None]]
"""Sends the text to the reminder's chat and topic; returns the message id. Raises Refused, RetryLater,
or anything else when it is unknown whether the message arrived."""
Record = Callable[[Reminder, str], Awaitable[None]]
"""Records a delivered reminder (and the text shown) in the chat's memory."""
MayDeliver = Callable[[Reminder], bool]
"""Whether the reminder's setter may still talk to the bot in its chat (False: it is held, not sent)."""


class Timers(Protocol):
    def schedule(self, reminder_id: str, when: datetime) -> None:
        """Call the delivery's ``due(reminder_id)`` at ``when`` (replacing an earlier wake-up for it)."""
        ...

    def cancel(self, reminder_id: str) -> None: ...


def utc_now() -> datetime:
    return datetime.now(UTC)


def text_lang(text: str) -> str:
    """The language of the bot's notes around a reminder: Korean if the reminder has Hangul."""
    return "ko" if _HANGUL.search(text) else "en"


def reminder_message(r: Reminder, tz: str, note: str | None = None) -> str:
    """``⏰ text``, or with a note: ``late`` (sent after a restart) or ``interrupted`` (maybe a repeat)."""
    if note is None:
        return f"⏰ {r.text}"
    lang = text_lang(r.text)
    when = f"{local_time(r.at, tz, lang)} ({zone_label(tz, lang)})"
    return t(f"reminder.{note}", lang, text=r.text, when=when)


def reminder_turn(r: Reminder, shown: str, tz: str, now: datetime) -> list[dict[str, Any]]:
    """The whole turn recorded in the chat's transcript when a reminder was delivered."""
    at = now.astimezone().isoformat(timespec="seconds")
    note = f"{NOTE} #{r.id} · {local_time(r.at, tz)} ({zone_label(tz)})"
    return [
        {"role": "user", "content": note, "at": at, "reminder": r.id},
        {"role": "assistant", "content": shown, "at": at, "reminder": r.id},
    ]


class ReminderDelivery:
    """Schedules the store's reminders and sends each one at most once (see the module doc)."""

    def __init__(
        self,
        store: ReminderStore,
        *,
        send: Send,
        record: Record,
        timers: Timers,
        tz: str,
        clock: Callable[[], datetime] = utc_now,
        late_after: timedelta = LATE_AFTER,
        notice_after: timedelta = NOTICE_AFTER,
        may_deliver: MayDeliver | None = None,
    ) -> None:
        self.store = store
        self.may_deliver = may_deliver
        self.held: set[str] = set()  # pending reminders not sent: their setter lost access to the chat
        self.send = send
        self.record = record
        self.timers = timers
        self.tz = tz
        self.clock = clock
        self.late_after = late_after
        self.notice_after = notice_after
        self.planned: dict[str, datetime] = {}  # reminder id -> when its timer fires
        self._inflight: set[str] = set()
        self._signature: tuple[int, int, int] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.started = False

    # -- timers ----------------------------------------------------------------------------
    def _schedule(self, reminder_id: str, when: datetime) -> None:
        when = max(when, self.clock())
        self.planned[reminder_id] = when
        self.timers.schedule(reminder_id, when)

    def _unschedule(self, reminder_id: str) -> None:
        if self.planned.pop(reminder_id, None) is not None:
            self.timers.cancel(reminder_id)

    def changed(self, reminder: Reminder) -> None:
        """Store listener (any thread): a reminder was added or cancelled in this process."""
        loop = self._loop
        if loop is None or not self.started:
            return  # start() reads them all
        try:
            loop.call_soon_threadsafe(self._apply_change, reminder)
        except RuntimeError:  # the loop is closed: the bot is stopping
            pass

    def _apply_change(self, reminder: Reminder) -> None:
        if reminder.status == PENDING:
            self._schedule(reminder.id, reminder.at)
        elif reminder.status == CANCELLED:
            self._unschedule(reminder.id)

    # -- start and rescan ------------------------------------------------------------------------
    async def start(self) -> None:
        """Tell the chats of interrupted sends, then schedule every pending reminder (past ones at once)."""
        self._loop = asyncio.get_running_loop()
        try:
            self._signature = await asyncio.to_thread(self._file_signature)
            everything = await asyncio.to_thread(self.store.all)
        except ReminderFileError as e:
            log.error("reminders are not delivered: %s", e)
            self.started = True
            return
        self.started = True
        interrupted = [r for r in everything if r.status == SENDING]
        pending = sorted((r for r in everything if r.status == PENDING), key=lambda r: r.at)
        for r in pending:
            self._schedule(r.id, r.at)
        overdue = sum(1 for r in pending if r.at <= self.clock())
        log.info(
            "reminders: %d pending (%d overdue), %d interrupted while sending", len(pending), overdue, len(interrupted)
        )
        for r in interrupted:
            await self.due(r.id)

    def _file_signature(self) -> tuple[int, int, int] | None:
        sig = self.store.signature()
        if sig is None:
            return None
        try:
            inode = self.store.path.stat().st_ino
        except FileNotFoundError:
            return None
        return (inode, *sig)

    async def rescan(self) -> None:
        """Schedule reminders set (or cancelled) by another process since the last look."""
        if not self.started:
            return
        signature = await asyncio.to_thread(self._file_signature)
        if signature == self._signature and not self.held:  # held ones: access may have come back
            return
        self._signature = signature
        try:
            everything = await asyncio.to_thread(self.store.all)
        except ReminderFileError as e:
            log.error("reminders: %s", e)
            return
        for r in everything:
            if r.status == PENDING and r.id not in self.planned and r.id not in self._inflight:
                if r.id in self.held and not self.deliverable(r):
                    continue  # still no access: stays held
                self.held.discard(r.id)
                self._schedule(r.id, r.at)  # a reminder's time never changes: only new ones need a timer
            elif r.status in FINISHED:
                self._unschedule(r.id)

    # -- delivery --------------------------------------------------------------------------------
    async def due(self, reminder_id: str) -> None:
        """A timer fired (or start found an interrupted send): deliver, tell, or re-arm. Never raises."""
        self.planned.pop(reminder_id, None)
        try:
            r = await asyncio.to_thread(self.store.get, reminder_id)
            if r is None or reminder_id in self._inflight:
                return
            if r.status == PENDING:
                if r.at - self.clock() > EARLY:
                    self._schedule(r.id, r.at)  # woken too early (e.g. the clock was set back)
                    return
                if not self.deliverable(r):
                    self.held.add(r.id)
                    log.info("reminder %s: held, not sent (user %s has no access to chat %s now)", r.id, r.user_id,
                             r.chat_id)  # fmt: skip
                    return
                await self._deliver(r)
            elif r.status == SENDING and r.notice:
                # the notice itself was interrupted: nothing more is sent
                await asyncio.to_thread(self.store.finish, r.id, UNCONFIRMED)
                log.warning("reminder %s: the notice about an interrupted send was interrupted too", r.id)
            elif r.status == SENDING:
                await self._tell(r)
        except Exception:
            log.exception("reminder %s: delivery failed", reminder_id)

    def deliverable(self, r: Reminder) -> bool:
        """May ``r`` go out now (its setter still has access to its chat)? Never raises."""
        if self.may_deliver is None:
            return True
        try:
            return self.may_deliver(r)
        except Exception:
            log.warning("reminder %s: could not check access; held", r.id, exc_info=True)
            return False

    async def _deliver(self, r: Reminder) -> None:
        self._inflight.add(r.id)
        try:
            claimed = await asyncio.to_thread(self.store.claim, r.id)  # durable before sending
            if claimed is None:
                return  # cancelled or taken meanwhile
            late = self.clock() - claimed.at > self.late_after
            text = reminder_message(claimed, self.tz, "late" if late else None)
            if await self._send(claimed, text, notice=False):
                await self._record(claimed, text)
        finally:
            self._inflight.discard(r.id)

    async def _tell(self, r: Reminder) -> None:
        """The send of ``r`` was interrupted: tell the chat once, marked as a possible repeat."""
        self._inflight.add(r.id)
        try:
            claimed = await asyncio.to_thread(self.store.claim_notice, r.id)
            if claimed is None:
                return
            text = reminder_message(claimed, self.tz, "interrupted")
            if await self._send(claimed, text, notice=True):
                await self._record(claimed, text)
        finally:
            self._inflight.discard(r.id)

    async def _send(self, r: Reminder, text: str, *, notice: bool) -> bool:
        """Send and record the outcome in the store; True when it was delivered."""
        try:
            message_id = await self.send(r, text)
        except RetryLater as e:
            await asyncio.to_thread(self.store.release, r.id)
            self._schedule(r.id, self.clock() + timedelta(seconds=e.after))
            log.info("reminder %s: flood control, trying again in %.0f s", r.id, e.after)
            return False
        except Refused as e:
            await asyncio.to_thread(self.store.finish, r.id, FAILED, reason=str(e))
            log.warning("reminder %s: chat %s refused it (%s); not sent", r.id, r.chat_id, e)
            return False
        except Exception as e:  # did it arrive? unknown: never send it again as such
            if notice:
                await asyncio.to_thread(self.store.finish, r.id, UNCONFIRMED, reason=repr(e))
                log.warning("reminder %s: the notice may not have arrived (%r); giving up", r.id, e)
            else:
                self._schedule(r.id, self.clock() + self.notice_after)
                log.warning("reminder %s: sending may have failed (%r); the chat will be told once", r.id, e)
            return False
        stamp = self.clock().astimezone().isoformat(timespec="seconds")
        await asyncio.to_thread(self.store.finish, r.id, SENT, message_id=message_id, sent_at=stamp)
        log.info("reminder %s: sent to chat %s%s", r.id, r.chat_id, " (notice)" if notice else "")
        return True

    async def _record(self, r: Reminder, shown: str) -> None:
        try:
            await self.record(r, shown)
        except Exception:  # the reminder was delivered; only the memory of it is missing
            log.warning("reminder %s: could not record it in the chat's memory", r.id, exc_info=True)


# -- the Telegram side ------------------------------------------------------------------------------
def telegram_sender(app: Application) -> Send:
    """Send with the application's bot, mapping Telegram's answers to Refused / RetryLater."""

    async def send(r: Reminder, text: str) -> int | None:
        chat = int(r.chat_id)
        try:
            try:
                message = await app.bot.send_message(chat, text, message_thread_id=r.thread_id)
            except BadRequest as e:
                if r.thread_id is None or "thread" not in str(e).lower():
                    raise
                log.info("reminder %s: topic %s is gone; sending to the chat", r.id, r.thread_id)
                message = await app.bot.send_message(chat, text)
        except RetryAfter as e:
            raise RetryLater(retry_seconds(e)) from e
        except (BadRequest, Forbidden, ChatMigrated) as e:  # Telegram answered: it was not delivered
            raise Refused(str(e)) from e
        return message.message_id

    return send


def transcript_recorder(assistant: Assistant, tz: str) -> Record:
    """Append the reminder's turn under the chat's lock (after a turn in progress), then index it."""

    async def record(r: Reminder, shown: str) -> None:
        turn = reminder_turn(r, shown, tz, assistant.now())
        async with assistant.lock(r.chat_id):
            await asyncio.to_thread(assistant.transcript.append, r.chat_id, turn)
        # a summary it causes is charged to (and limited by) whoever set the reminder, never the owner
        await assistant.maintain(r.chat_id, user_id=r.user_id, wait=False)

    return record


class JobTimers:
    """Timers on python-telegram-bot's job queue (APScheduler): one job per reminder, never dropped as late."""

    def __init__(self, job_queue: JobQueue, fire: Callable[[str], Awaitable[None]]) -> None:
        self.job_queue = job_queue
        self.fire = fire
        self.jobs: dict[str, Job] = {}

    def schedule(self, reminder_id: str, when: datetime) -> None:
        self.cancel(reminder_id)

        async def callback(context: ContextTypes.DEFAULT_TYPE) -> None:
            if self.jobs.get(reminder_id) is job:
                del self.jobs[reminder_id]
            await self.fire(reminder_id)

        job = self.job_queue.run_once(
            callback,
            when=when,
            name=f"reminder-{reminder_id}",
            job_kwargs={"misfire_grace_time": None},  # a busy loop delays a reminder, never skips it
        )
        self.jobs[reminder_id] = job

    def cancel(self, reminder_id: str) -> None:
        job = self.jobs.pop(reminder_id, None)
        if job is not None:
            job.schedule_removal()


def install(
    app: Application, assistant: Assistant, store: ReminderStore, tz: str, may_deliver: MayDeliver | None = None
) -> ReminderDelivery:
    """Deliver ``store``'s reminders from this application (start-up scan, rescans, one job per reminder)."""
    job_queue = app.job_queue
    if job_queue is None:
        raise RuntimeError("reminders need python-telegram-bot[job-queue] (APScheduler); reinstall the project")
    fire: Callable[[str], Awaitable[None]] = lambda rid: delivery.due(rid)  # noqa: E731
    delivery = ReminderDelivery(
        store,
        send=telegram_sender(app),
        record=transcript_recorder(assistant, tz),
        timers=JobTimers(job_queue, fire),
        tz=tz,
        may_deliver=may_deliver,
    )
    store.subscribe(delivery.changed)
    app.bot_data["reminders"] = delivery

    async def start(context: ContextTypes.DEFAULT_TYPE) -> None:
        await delivery.start()

    async def rescan(context: ContextTypes.DEFAULT_TYPE) -> None:
        await delivery.rescan()

    late_ok = {"misfire_grace_time": None}  # APScheduler skips a job over 1 s late: a busy start must not
    job_queue.run_once(start, when=0, name="reminders-start", job_kwargs=late_ok)
    job_queue.run_repeating(
        rescan, interval=RESCAN_SECONDS, first=RESCAN_SECONDS, name="reminders-rescan", job_kwargs=late_ok
    )
    return delivery


async def _may_cancel(update: Update, context: ContextTypes.DEFAULT_TYPE, store: ReminderStore, argument: str) -> bool:
    """In a group a member cancels only their own reminders; others' need the owner or an admin (as /forget)."""
    from bot.tg.access import may_manage  # that module builds on the handlers

    message, user = update.effective_message, update.effective_user
    words = argument.split()
    if message is None or user is None or not is_group(message.chat):
        return True
    if (who := cancel_from_whom(argument)) is not None:  # all of one person's: theirs, or an admin's call
        return who == user.id or await may_manage(update, context)
    if len(words) != 2 or words[0].lower() not in CANCEL_WORDS:
        return True
    try:
        r = await asyncio.to_thread(store.get, words[1].strip().lstrip("#"))
    except ReminderFileError:
        return True  # the command says the file is unreadable
    if r is None or r.chat_id != str(message.chat.id) or r.user_id == user.id:
        return True
    return await may_manage(update, context)


async def reminders_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/reminders lists the chat's pending reminders; /reminders cancel <id> cancels one."""
    message = update.effective_message
    if message is None or not await check_allowed(update, context):
        return
    delivery: ReminderDelivery = context.bot_data["reminders"]
    text = message.text or ""
    argument = text.split(maxsplit=1)[1] if len(text.split(maxsplit=1)) > 1 else ""
    tz = services(context).settings.timezone
    if not await _may_cancel(update, context, delivery.store, argument):
        return
    lang = lang_for(update)
    answer = await asyncio.to_thread(reminders_text, delivery.store, message.chat.id, argument, lang, tz)
    if not argument.strip() and message.chat.type == "private" and _is_owner(context, update):
        held = await asyncio.to_thread(_held_lines, delivery, lang, tz)
        if held:
            answer += "\n\n" + "\n".join([t("reminders.held", lang, n=len(held)), *held])
    await reply(update, context, answer)


def _is_owner(context: ContextTypes.DEFAULT_TYPE, update: Update) -> bool:
    user = update.effective_user
    return user is not None and context.bot_data["guard"].access.is_owner(user.id)


def _held_lines(delivery: ReminderDelivery, lang: str, tz: str) -> list[str]:
    """Every pending reminder that is held (its setter lost access), in any chat: for the owner."""
    try:
        pending = delivery.store.pending()
    except ReminderFileError:
        return []
    return [
        f"#{r.id} · {t('reminders.held_where', lang, chat=r.chat_id, user=r.user_id or '-')} · "
        f"{local_time(r.at, tz, lang)} — {r.text}"
        for r in pending
        if not delivery.deliverable(r)
    ]
