"""End to end: a chat the bot can no longer write to (the user blocked it, or the chat is gone).

The answer is stored before it is delivered, so nothing is lost; delivery stops after
Telegram's first refusal (no plain-text retry, no error handler), and other chats go on.
"""

import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import stored as transcript

OTHER = 5151
FAST = {"STREAM_INTERVAL": "0.1", "TELEGRAM_RATE_FACTOR": "20"}
"""Previews every 0.1 s; the fake has no flood limit: no second between two messages in a chat."""


def stored(data_dir, chat_id):
    return [(r["role"], r["content"]) for r in transcript(data_dir, chat_id)]


@pytest.mark.parametrize(
    ("chat_id", "chat_type", "how", "refusal"),
    [
        (4242, "private", "blocked_chats", "bot was blocked by the user"),
        (-1004242, "supergroup", "unknown_chats", "chat not found"),
    ],
)
def test_an_answer_to_an_unreachable_chat_is_stored_and_the_bot_carries_on(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir, chat_id, chat_type, how, refusal
):
    bot = start_bot(**FAST)
    text = "긴 답입니다. " * 900  # several parts: the delivery stops at the first refusal
    fake_anthropic.reply(text, "다른 채팅의 답")
    question = "안녕" if chat_type == "private" else "@memory_test_bot 안녕"
    getattr(fake_telegram, how).add(chat_id)  # e.g. the user blocks the bot right after asking
    fake_telegram.push_update({"message": fake_telegram.message(chat_id, question, chat_type=chat_type)})
    handled = ("cannot deliver the answer", "error while handling an update")
    fake_telegram.wait_for(lambda: any(line in bot.log for line in handled), timeout=30)
    assert "Traceback" not in bot.log and "error while handling an update" not in bot.log
    assert f"chat {chat_id}: cannot deliver the answer" in bot.log and refusal in bot.log.lower()

    fake_telegram.send_text(OTHER, "거기 있어?")  # the bot still answers everyone else
    assert fake_telegram.wait_visible(OTHER) == ["다른 채팅의 답"]

    asked = "안녕" if chat_type == "private" else "Minji: 안녕"
    assert stored(data_dir, chat_id) == [("user", asked), ("assistant", text.strip())]
    final = [c for c in fake_telegram.calls_of("sendMessage", chat_id) if c.params.get("parse_mode") == "HTML"]
    assert len(final) == 1  # the first part was refused; no other part and no plain-text copy was tried
