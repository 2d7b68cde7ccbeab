"""End to end: reminders in the real bot process (python-telegram-bot's job queue), across restarts and a kill.

Times here are real (the bot reads the real clock): reminders are set a few seconds ahead and
the tests wait for the ⏰ message itself, never asserting how long anything took nor what came first
(on a loaded machine the reminder may arrive before the answer of the turn that set it). Firing at the
exact moment is tested in-process with an injected clock (tests/test_reminder_delivery.py).
"""

import signal
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from memory.reminders import SENDING, SENT, ReminderStore
from tests.fakes.anthropic_server import FakeAnthropic, ToolCalls
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import convo, stored

CHAT = 5050
FAST = {"STREAM_INTERVAL": "0.1", "TELEGRAM_RATE_FACTOR": "20"}
"""Quick previews, and answers without Telegram's second between two in a chat (the fake has no flood limit)."""
SEOUL = ZoneInfo("Asia/Seoul")


def seoul_iso(delta: timedelta) -> str:
    return (datetime.now(UTC) + delta).astimezone(SEOUL).isoformat(timespec="seconds")


def reminders_sent(tg: FakeTelegram, prefix: str) -> list[str]:
    return [text for text in tg.visible(CHAT) if text.startswith(prefix)]


def test_a_reminder_set_through_claude_arrives_and_can_be_listed_and_cancelled(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    tomorrow = seoul_iso(timedelta(days=1))

    def set_two(body: dict) -> ToolCalls:  # the time is computed when Claude is asked, like the real model
        return ToolCalls(
            [
                ("set_reminder", {"at": seoul_iso(timedelta(seconds=3)), "text": "물 마시기"}),
                ("set_reminder", {"at": tomorrow, "text": "치과 예약 전화"}),
            ]
        )

    fake_anthropic.reply(set_two, "곧 물 마시라고, 내일은 치과 전화하라고 알려 드릴게요.")
    fake_telegram.send_text(CHAT, "3초 뒤에 물 마시라고 하고, 내일 이 시간에 치과 전화하라고 알려 줘")
    fake_telegram.wait_for(lambda: "⏰ 물 마시기" in fake_telegram.visible(CHAT), timeout=30)
    # the reminder may fire before or after the answer: every step below waits for its own condition
    second = fake_anthropic.wait_requests(2)[1]
    results = [b for b in convo(second)[-1]["content"] if b["type"] == "tool_result"]
    assert [r.get("is_error") for r in results] == [None, None] and "reminder 1 set for" in results[0]["content"]

    # memory: the delivered reminder is a whole turn after the question's turn
    fake_telegram.wait_for(lambda: len(stored(data_dir, CHAT)) == 6)
    rows = stored(data_dir, CHAT)  # question, tool calls, tool results, answer; then the reminder's turn
    assert [r["role"] for r in rows] == ["user", "assistant"] * 3
    assert [r.get("reminder") for r in rows] == [None, None, None, None, "1", "1"]
    assert rows[-1]["content"] == "⏰ 물 마시기"
    assert rows[-2]["content"].startswith("[알림 전송됨 / reminder delivered] #1")

    fake_telegram.send_text(CHAT, "/reminders")
    listing = fake_telegram.wait_for(lambda: [t for t in fake_telegram.visible(CHAT) if "예정된 알림" in t])
    assert "#2 · " in listing[0] and "치과 예약 전화" in listing[0] and "물 마시기" not in listing[0]
    assert "(한국 시각)" in listing[0]
    fake_telegram.send_text(CHAT, "/reminders cancel 2")
    fake_telegram.wait_for(lambda: any("알림 #2을 취소했어요" in t for t in fake_telegram.visible(CHAT)))
    fake_telegram.send_text(CHAT, "/reminders", language_code="en")
    fake_telegram.wait_for(lambda: any("No reminders pending" in t for t in fake_telegram.visible(CHAT)))
    statuses = {r.id: r.status for r in ReminderStore(data_dir).all()}
    assert statuses == {"1": SENT, "2": "cancelled"}
    assert reminders_sent(fake_telegram, "⏰ 물") == ["⏰ 물 마시기"]


def test_after_a_restart_pending_reminders_are_sent_and_missed_ones_once_with_their_time(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    store = ReminderStore(data_dir)  # what an earlier bot process left in the file
    missed = datetime.now(UTC) - timedelta(hours=2)
    store.add(CHAT, missed, "회의 자료 보내기")
    store.add(CHAT, datetime.now(UTC) + timedelta(seconds=2), "곧 나갈 시간")
    bot = start_bot(**FAST)
    fake_telegram.wait_for(lambda: len(reminders_sent(fake_telegram, "⏰")) == 2, timeout=30)
    when = missed.astimezone(SEOUL)
    day = f"{when.year}년 {when.month}월 {when.day}일 ({'월화수목금토일'[when.weekday()]}) {when:%H:%M}"
    assert reminders_sent(fake_telegram, "⏰ 회의") == [
        f"⏰ 회의 자료 보내기\n({day} (한국 시각) 알림이에요. 그때 봇이 꺼져 있어서 지금 보내요.)"
    ]
    assert reminders_sent(fake_telegram, "⏰ 곧") == ["⏰ 곧 나갈 시간"]

    # one more restart: nothing is sent again
    bot.stop()
    start_bot(**FAST)
    fake_anthropic.reply("안녕하세요!")
    fake_telegram.send_text(CHAT, "안녕")
    fake_telegram.wait_for(lambda: "안녕하세요!" in fake_telegram.visible(CHAT))
    assert len(reminders_sent(fake_telegram, "⏰")) == 2
    assert [r.status for r in ReminderStore(data_dir).all()] == [SENT, SENT]


def test_a_bot_killed_right_after_sending_never_sends_the_reminder_twice(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    ReminderStore(data_dir).add(CHAT, datetime.now(UTC), "약 먹기")
    # Telegram takes the message, but its answer is held until the bot is dead
    released = fake_telegram.hold("sendMessage", lambda p: str(p.get("text", "")).startswith("⏰"))
    bot = start_bot(**FAST)
    fake_telegram.wait_for(lambda: reminders_sent(fake_telegram, "⏰") == ["⏰ 약 먹기"], timeout=30)
    bot.stop(sig=signal.SIGKILL)
    released.set()
    (r,) = ReminderStore(data_dir).all()
    assert r.status == SENDING  # claimed before sending, never marked sent

    start_bot(**FAST)
    fake_telegram.wait_for(lambda: len(reminders_sent(fake_telegram, "⏰")) == 2, timeout=30)
    first, notice = reminders_sent(fake_telegram, "⏰")
    assert first == "⏰ 약 먹기"
    assert notice.startswith("⏰ 약 먹기\n(전송 중 중단되었을 수 있는 알림이에요 · ")
    assert notice.endswith("이미 받으셨다면 무시해 주세요.)")
    fake_anthropic.reply("네.")
    fake_telegram.send_text(CHAT, "고마워")
    fake_telegram.wait_for(lambda: "네." in fake_telegram.visible(CHAT))
    assert reminders_sent(fake_telegram, "⏰") == [first, notice]  # the plain reminder went out once
    # marked sent once Telegram's answer reached the bot: that is not ordered with the chat's answer
    (r,) = fake_telegram.wait_for(lambda: [r for r in ReminderStore(data_dir).all() if r.status == SENT])
    assert r.notice
    # remembered once it was surely delivered (after the chat's turn in progress, if any)
    fake_telegram.wait_for(lambda: [r["content"] for r in stored(data_dir, CHAT) if r.get("reminder")][-1:] == [notice])
