"""Reminders in the terminal chat: set and listed there (the same tools), delivered by the Telegram bot."""

import io
from datetime import UTC, datetime

from bot.claude.model import FakeModel, tool_call
from bot.cli import ChatSession, stream_reader
from bot.config import load_settings
from bot.core.ask import Assistant
from bot.tools import ToolContext
from bot.tools.reminders import reminder_tools
from bot.wiring import make_assistant
from memory.reminders import ReminderStore
from memory.transcript import Transcript

TELEGRAM_CHAT = "123456789"


def run(assistant: Assistant, store: ReminderStore, chat: str, *lines: str, lang: str = "ko") -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    session = ChatSession(assistant, chat, out=out, err=err, lang=lang, reminders=store)
    assert session.run(stream_reader(io.StringIO("".join(f"{line}\n" for line in lines)))) == 0
    return out.getvalue(), err.getvalue()


def test_the_terminal_sets_lists_shows_and_cancels_reminders(
    transcript: Transcript, fake_model: FakeModel, clock, data_dir
):
    store = ReminderStore(data_dir)
    assistant = Assistant(transcript=transcript, model=fake_model, now=clock, tools=reminder_tools(store, "Asia/Seoul"))
    fake_model.queue(
        tool_call("set_reminder", {"at": "2026-11-30T09:00:00+09:00", "text": "약 먹기"}),
        "내일 아침 9시에 텔레그램으로 알려 드릴게요.",
    )
    out, err = run(assistant, store, TELEGRAM_CHAT, "내일 아침 9시에 약 먹으라고 알려 줘", "/reminders")
    assert err == ""
    assert "내일 아침 9시에 텔레그램으로 알려 드릴게요." in out
    assert "⏰ 예정된 알림 1개 (한국 시각):\n#1 · 2026년 11월 30일 (월) 09:00 — 약 먹기" in out
    (r,) = store.pending(TELEGRAM_CHAT)
    assert r.via == "terminal"  # the question's stored field reached the tool

    # a new session prints the pending reminders at start; /reminders cancel works as in Telegram
    out, err = run(assistant, ReminderStore(data_dir), TELEGRAM_CHAT, "/reminders cancel 1", "/reminders", lang="en")
    assert "⏰ 1 pending reminders (the Telegram bot delivers them):\n  #1 · Mon 30 Nov 2026, 09:00 — 약 먹기" in out
    assert "🗑 Cancelled reminder #1 (Mon 30 Nov 2026, 09:00): 약 먹기" in out
    assert "No reminders pending" in out
    assert store.pending(TELEGRAM_CHAT) == []

    # the terminal's own conversation is no Telegram chat: nothing can be delivered there
    out, err = run(assistant, store, "local", "/reminders")
    assert "이 대화는 텔레그램 채팅이 아니라서 알림이 없어요" in err


def test_make_assistant_gives_claude_the_reminder_tools(tmp_path):
    settings = load_settings({"TELEGRAM_BOT_TOKEN": "1:abc", "ANTHROPIC_API_KEY": "sk-x", "DATA_DIR": str(tmp_path)})
    store = ReminderStore(tmp_path)
    assistant = make_assistant(settings, reminders=store, may_remind=lambda ctx: "over the daily limit")
    names = [s["name"] for s in assistant.toolbox.schemas()]
    assert names == ["remember", "forget", "search_memory", "set_reminder", "list_reminders", "cancel_reminder"]
    assert assistant.toolbox.schemas() == make_assistant(settings).toolbox.schemas()  # stable text (cached prefix)
    # the limits hook is wired through: over the limit, no new reminder
    ctx = ToolContext("123", datetime(2026, 11, 29, 14, 5, tzinfo=UTC))
    result = assistant.toolbox.run("set_reminder", {"at": "2026-11-30T09:00:00+09:00", "text": "x"}, ctx)
    assert result.is_error and "over the daily limit" in result.text and store.all() == []
