"""Reminder delivery in-process, with an injected clock and fake timers: on time, after restarts, at most once.

The Telegram side is a fake ``send``; the memory side is the real transcript recorder over a
real Assistant whose model validates every request as the API does.
"""

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from bot.claude.model import FakeModel, tool_call
from bot.core.ask import Assistant, Question
from bot.tg.reminders import Refused, ReminderDelivery, RetryLater, transcript_recorder
from bot.tools.reminders import reminder_tools
from memory.reminders import CANCELLED, FAILED, SENDING, SENT, UNCONFIRMED, ReminderStore
from memory.turns import complete_turns, is_complete

CHAT = 123456789
TZ = "Asia/Seoul"
NINE = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)  # 2026-11-30 09:00 in Seoul


class FakeTimers:
    def __init__(self) -> None:
        self.planned: dict[str, datetime] = {}

    def schedule(self, reminder_id: str, when: datetime) -> None:
        self.planned[reminder_id] = when

    def cancel(self, reminder_id: str) -> None:
        self.planned.pop(reminder_id, None)


class Killed(BaseException):
    """The process died right after Telegram took the message (nothing after the send runs)."""


class FakeChat:
    """What the chats received; ``outcomes`` are raised by the next sends (None: delivered)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, int | None, str]] = []
        self.outcomes: list[BaseException | None] = []

    async def send(self, r, text: str) -> int:
        outcome = self.outcomes.pop(0) if self.outcomes else None
        if isinstance(outcome, Killed | RuntimeError):  # Telegram got it, the bot never heard back
            self.sent.append((r.chat_id, r.thread_id, text))
        if outcome is not None:
            raise outcome
        self.sent.append((r.chat_id, r.thread_id, text))
        return 1000 + len(self.sent)

    def texts(self) -> list[str]:
        return [text for _, _, text in self.sent]


def make_delivery(store, chat: FakeChat, assistant: Assistant, clock) -> tuple[ReminderDelivery, FakeTimers]:
    timers = FakeTimers()
    delivery = ReminderDelivery(
        store, send=chat.send, record=transcript_recorder(assistant, TZ), timers=timers, tz=TZ, clock=clock
    )
    store.subscribe(delivery.changed)
    return delivery, timers


async def fire_due(delivery: ReminderDelivery, timers: FakeTimers, clock) -> None:
    """Run the timers whose time has come on the injected clock."""
    for rid in sorted(rid for rid, when in timers.planned.items() if when <= clock()):
        timers.planned.pop(rid)
        await delivery.due(rid)


def rows(transcript, chat=CHAT):
    return [e.data for e in transcript.read(chat)]


async def test_a_reminder_set_by_a_tool_call_fires_at_its_time_and_is_remembered(
    transcript, fake_model: FakeModel, clock, data_dir
):
    store = ReminderStore(data_dir)
    assistant = Assistant(transcript=transcript, model=fake_model, now=clock, tools=reminder_tools(store, TZ))
    chat = FakeChat()
    delivery, timers = make_delivery(store, chat, assistant, clock)
    await delivery.start()
    fake_model.queue(
        tool_call("set_reminder", {"at": "2026-11-30T09:00:00+09:00", "text": "약 먹기"}), "내일 9시에 알려 드릴게요."
    )
    await assistant.ask(CHAT, Question("내일 아침 9시에 약 먹으라고 알려 줘", meta={"thread_id": 7}))
    await asyncio.sleep(0)  # the store's listener hands the new reminder to the loop
    assert timers.planned == {"1": NINE}

    clock.current = NINE - timedelta(minutes=1)  # 08:59: not yet
    await fire_due(delivery, timers, clock)
    assert chat.sent == []
    await delivery.due("1")  # a timer that fires a minute early is re-armed, nothing is sent
    assert chat.sent == [] and timers.planned == {"1": NINE}

    clock.current = NINE
    await fire_due(delivery, timers, clock)
    assert chat.sent == [(str(CHAT), 7, "⏰ 약 먹기")]  # to the chat and topic where it was set
    assert store.get("1").status == SENT and store.get("1").extra["message_id"] == 1001
    await fire_due(delivery, timers, clock)
    await delivery.due("1")  # a stray wake-up later sends nothing
    assert len(chat.sent) == 1

    # memory: one whole turn that keeps the transcript valid, and Claude sees it next time
    stored = rows(transcript)
    note, shown = stored[-2:]
    assert note == {
        "role": "user",
        "content": "[알림 전송됨 / reminder delivered] #1 · 2026년 11월 30일 (월) 09:00 (한국 시각)",
        "at": note["at"],
        "reminder": "1",
    }
    assert shown["role"] == "assistant" and shown["content"] == "⏰ 약 먹기" and shown["reminder"] == "1"
    assert all(is_complete(turn) for turn in complete_turns(stored)) and len(complete_turns(stored)) == 2
    fake_model.queue("네, 아까 알려 드렸어요.")
    await assistant.ask(CHAT, "약 먹으라고 알려 줬어?")
    sent = fake_model.calls[-1].messages
    assert [m["content"] for m in sent[-3:-1]] == [note["content"], "⏰ 약 먹기"]  # validated by the fake API rules
    assert "⏰ 약 먹기" in [m["content"] for m in assistant.history(CHAT)]


async def test_restart_reschedules_and_a_reminder_due_while_down_is_sent_once_with_its_time(
    transcript, fake_model, clock, data_dir
):
    assistant = Assistant(transcript=transcript, model=fake_model, now=clock)
    ReminderStore(data_dir).add(CHAT, clock() - timedelta(hours=2), "회의 준비")  # due while the bot was down
    ReminderStore(data_dir).add(CHAT, NINE, "약 먹기")  # still ahead
    ReminderStore(data_dir).add(CHAT, clock() - timedelta(seconds=20), "방금")  # due during the start-up
    chat = FakeChat()
    delivery, timers = make_delivery(ReminderStore(data_dir), chat, assistant, clock)
    await delivery.start()
    assert timers.planned == {"1": clock(), "2": NINE, "3": clock()}  # past ones at once, the rest at their time
    await fire_due(delivery, timers, clock)
    assert chat.texts() == [
        "⏰ 회의 준비\n(2026년 11월 29일 (일) 21:05 (한국 시각) 알림이에요. 그때 봇이 꺼져 있어서 지금 보내요.)",
        "⏰ 방금",  # less than a minute late: no note
    ]
    assert timers.planned == {"2": NINE}

    # another restart later: the sent ones are not sent again, the pending one is scheduled again
    clock.advance(hours=1)
    chat2 = FakeChat()
    delivery2, timers2 = make_delivery(ReminderStore(data_dir), chat2, assistant, clock)
    await delivery2.start()
    assert timers2.planned == {"2": NINE}
    clock.current = NINE
    await fire_due(delivery2, timers2, clock)
    assert chat2.texts() == ["⏰ 약 먹기"] and len(chat.sent) == 2


async def test_a_kill_right_after_sending_never_sends_it_twice_and_tells_once(transcript, fake_model, clock, data_dir):
    assistant = Assistant(transcript=transcript, model=fake_model, now=clock)
    store = ReminderStore(data_dir)
    store.add(CHAT, clock() + timedelta(minutes=5), "Call mom")
    chat = FakeChat()
    delivery, timers = make_delivery(store, chat, assistant, clock)
    await delivery.start()
    clock.advance(minutes=5)
    chat.outcomes = [Killed()]
    try:
        await fire_due(delivery, timers, clock)
    except Killed:
        pass
    assert chat.texts() == ["⏰ Call mom"] and store.get("1").status == SENDING

    # the restarted bot: the interrupted reminder is not sent as such again; the chat is told once
    clock.advance(minutes=2)
    restarted, timers2 = make_delivery(ReminderStore(data_dir), chat, assistant, clock)
    await restarted.start()
    await fire_due(restarted, timers2, clock)
    assert chat.texts() == [
        "⏰ Call mom",
        "⏰ Call mom\n(Sending this reminder (Sun 29 Nov 2026, 23:10 (Korean time)) may have been interrupted; "
        "ignore it if you already got it.)",
    ]
    done = ReminderStore(data_dir).get("1")
    assert done.status == SENT and done.notice
    assert [m["content"] for m in rows(transcript)][-1] == chat.texts()[-1]  # remembered once delivered
    # and no later restart sends anything more
    again, timers3 = make_delivery(ReminderStore(data_dir), chat, assistant, clock)
    await again.start()
    await fire_due(again, timers3, clock)
    assert len(chat.sent) == 2


async def test_a_notice_that_is_interrupted_too_ends_unconfirmed(transcript, fake_model, clock, data_dir):
    assistant = Assistant(transcript=transcript, model=fake_model, now=clock)
    store = ReminderStore(data_dir)
    r = store.add(CHAT, clock(), "x")
    store.claim(r.id)
    store.claim_notice(r.id)  # killed while sending the notice
    chat = FakeChat()
    delivery, timers = make_delivery(store, chat, assistant, clock)
    await delivery.start()
    await fire_due(delivery, timers, clock)
    assert chat.sent == [] and store.get(r.id).status == UNCONFIRMED


async def test_telegram_refusals_flood_control_and_network_errors(transcript, fake_model, clock, data_dir):
    assistant = Assistant(transcript=transcript, model=fake_model, now=clock)
    store = ReminderStore(data_dir)
    for text in ("blocked", "flood", "network"):
        store.add(CHAT, clock() + timedelta(minutes=1), text)
    chat = FakeChat()
    delivery, timers = make_delivery(store, chat, assistant, clock)
    await delivery.start()
    clock.advance(minutes=1)
    chat.outcomes = [Refused("Forbidden: bot was blocked by the user"), RetryLater(30), RuntimeError("timed out")]
    await fire_due(delivery, timers, clock)
    assert store.get("1").status == FAILED and "blocked" in store.get("1").extra["reason"]
    assert store.get("2").pending and timers.planned["2"] == clock() + timedelta(seconds=30)
    assert store.get("3").status == SENDING and timers.planned["3"] == clock() + timedelta(minutes=1)
    assert chat.texts() == ["⏰ network"]  # it may have arrived: Telegram got it, the answer was lost

    clock.advance(seconds=30)
    await fire_due(delivery, timers, clock)
    assert chat.texts()[-1] == "⏰ flood"
    clock.advance(seconds=30)
    await fire_due(delivery, timers, clock)
    assert chat.texts()[-1].startswith("⏰ network\n(Sending this reminder") and len(chat.sent) == 3
    assert timers.planned == {}
    assert [r.status for r in store.all()] == [FAILED, SENT, SENT]


async def test_cancelled_and_other_processes_reminders(transcript, fake_model, clock, data_dir):
    assistant = Assistant(transcript=transcript, model=fake_model, now=clock)
    store = ReminderStore(data_dir)
    chat = FakeChat()
    delivery, timers = make_delivery(store, chat, assistant, clock)
    await delivery.start()
    r = store.add(CHAT, clock() + timedelta(minutes=1), "cancel me")
    await asyncio.sleep(0)
    assert r.id in timers.planned
    store.cancel(CHAT, r.id)
    await asyncio.sleep(0)
    assert timers.planned == {}
    await delivery.due(r.id)  # a timer that fires anyway sends nothing
    assert chat.sent == [] and store.get(r.id).status == CANCELLED

    # the terminal chat (another process, another store on the same file) sets one: the rescan finds it
    terminal = ReminderStore(data_dir)
    other = terminal.add(CHAT, clock() + timedelta(minutes=3), "from the terminal")
    await delivery.rescan()
    assert timers.planned == {other.id: clock() + timedelta(minutes=3)}
    terminal.cancel(CHAT, other.id)
    await delivery.rescan()
    assert timers.planned == {}


async def test_retry_after_a_delivered_reminder_re_asks_the_last_question(transcript, clock, data_dir):
    model = FakeModel(["첫 답"])
    assistant = Assistant(transcript=transcript, model=model, now=clock)
    await assistant.ask(CHAT, "오늘 날씨 어때?")
    store = ReminderStore(data_dir)
    store.add(CHAT, clock(), "물 마시기")
    chat = FakeChat()
    delivery, timers = make_delivery(store, chat, assistant, clock)
    await delivery.start()
    await fire_due(delivery, timers, clock)
    model.queue("다시 한 답")
    question, _ = await assistant.retry(CHAT)
    assert question.text == "오늘 날씨 어때?"
    users = [m for m in rows(transcript) if m["role"] == "user"]
    assert [m["content"] for m in users][-1] == "오늘 날씨 어때?" and "retry" not in users[-1]
    # both answers stay in what is sent next (the reminder sits between them)
    assert [m["content"] for m in assistant.history(CHAT)][-1] == "다시 한 답"


class FakeBot:
    """Answers send_message with the next outcome (an exception, or a message id)."""

    def __init__(self, *outcomes) -> None:
        self.outcomes = list(outcomes)
        self.calls: list[tuple[int, str, int | None]] = []

    async def send_message(self, chat_id, text, message_thread_id=None):
        self.calls.append((chat_id, text, message_thread_id))
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return type("Sent", (), {"message_id": outcome})()


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")  # RetryAfter's own constructor
async def test_the_telegram_sender_maps_telegram_answers(data_dir):
    from telegram.error import BadRequest, Forbidden, RetryAfter, TimedOut

    from bot.tg.reminders import telegram_sender

    r = ReminderStore(data_dir).add(-100555, NINE, "토픽 알림", thread_id=9)

    async def send_with(*outcomes):
        bot = FakeBot(*outcomes)
        app = type("App", (), {"bot": bot})()
        try:
            return await telegram_sender(app)(r, "⏰ 토픽 알림"), bot.calls
        except BaseException as e:
            return e, bot.calls

    assert await send_with(501) == (501, [(-100555, "⏰ 토픽 알림", 9)])  # to the topic it was set in
    result, calls = await send_with(BadRequest("Message thread not found"), 502)
    assert result == 502 and [c[2] for c in calls] == [9, None]  # the topic is gone: to the chat
    result, _ = await send_with(Forbidden("Forbidden: bot was blocked by the user"))
    assert isinstance(result, Refused)
    result, _ = await send_with(BadRequest("Bad Request: chat not found"))
    assert isinstance(result, Refused)
    result, _ = await send_with(RetryAfter(12))
    assert isinstance(result, RetryLater) and result.after == 12
    result, _ = await send_with(TimedOut())
    assert isinstance(result, TimedOut)  # unknown whether it arrived: not a refusal


async def test_a_reminder_whose_setter_lost_access_is_held_not_sent_and_kept(transcript, fake_model, clock, data_dir):
    assistant = Assistant(transcript=transcript, model=fake_model, now=clock)
    store = ReminderStore(data_dir)
    chat = FakeChat()
    allowed = {CHAT}
    timers = FakeTimers()
    delivery = ReminderDelivery(store, send=chat.send, record=transcript_recorder(assistant, TZ), timers=timers,
                                tz=TZ, clock=clock, may_deliver=lambda r: r.user_id in allowed)  # fmt: skip
    store.subscribe(delivery.changed)
    maintained = []

    async def maintain(chat_id, *, user_id=None, wait=True):
        maintained.append(user_id)

    assistant.maintain = maintain  # type: ignore[method-assign]
    await delivery.start()
    r = store.add(CHAT, clock() + timedelta(minutes=1), "약 먹기", user_id=CHAT)
    kept = store.add(CHAT, clock() + timedelta(minutes=1), "물 마시기", user_id=CHAT)
    await asyncio.sleep(0)
    allowed.clear()  # the owner sent /deny for that user
    clock.advance(minutes=2)
    await fire_due(delivery, timers, clock)
    assert chat.sent == [] and rows(transcript) == []  # nothing sent, nothing recorded, no summary to pay
    assert store.get(r.id).pending and store.get(kept.id).pending  # kept, not deleted
    assert delivery.held == {r.id, kept.id} and timers.planned == {}
    await delivery.rescan()
    assert timers.planned == {}  # still no access: still held
    allowed.add(CHAT)  # /allow again: the next rescan sends them (late, with their time)
    await delivery.rescan()
    await fire_due(delivery, timers, clock)
    assert len(chat.sent) == 2 and delivery.held == set()
    assert maintained == [CHAT, CHAT]  # a summary they cause is charged to the setter, not the owner


async def test_the_start_scan_runs_even_when_the_job_queue_starts_late(data_dir, assistant: Assistant):
    """The start-up scan is a job on python-telegram-bot's queue (APScheduler), which skips a job more
    than a second late unless told otherwise: on a busy machine (a bot starting beside others) the scan
    must still run, else no reminder of this process is ever delivered."""
    import time

    from telegram.ext import ApplicationBuilder

    from bot.tg.reminders import install

    app = ApplicationBuilder().token("123456:TEST-TOKEN-abcdefghijklmnop").build()
    delivery = install(app, assistant, ReminderStore(data_dir), TZ)
    assert app.job_queue is not None
    await app.job_queue.start()
    try:
        time.sleep(1.5)  # the event loop is busy: the start job comes due and waits more than a second
        for _ in range(500):  # then it runs as soon as the loop is free (a hang guard, not a time limit)
            if delivery.started:
                break
            await asyncio.sleep(0.01)
        assert delivery.started
    finally:
        await app.job_queue.stop(wait=False)
