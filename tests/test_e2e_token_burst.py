"""End to end: eight questions at once, each with a tool round, cannot spend the day's tokens many times over.

The real Telegram application and Claude client run in this process against the fake servers
(tests/test_e2e_limits.py's ``running``). The fake Anthropic server holds every model request until
all eight questions were accepted or refused, so all of them are in the bot at the same time.
"""

import asyncio
import threading
from datetime import UTC, datetime

import pytest

from bot.texts import t
from tests.conftest import Clock
from tests.fakes.anthropic_server import FakeAnthropic, Text, ToolCalls, tool_results
from tests.fakes.telegram_server import BOT_USERNAME, FakeTelegram
from tests.test_e2e_limits import FRIEND, running

USAGE = {"input_tokens": 2000, "output_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
CALL = 2100
LIMIT = 10_000


@pytest.fixture
def env(monkeypatch, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    return {"TELEGRAM_BOT_TOKEN": fake_telegram.token, "TELEGRAM_BASE_URL": fake_telegram.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-test-key", "ANTHROPIC_MAX_RETRIES": "0", "DATA_DIR": str(data_dir),
            "OWNER_ID": "1", "ALLOWED_USERS": str(FRIEND), "STREAM_INTERVAL": "0.1",
            "RECALL_MEANING": "off"}  # fmt: skip


async def test_a_burst_of_questions_with_tool_rounds_stays_within_one_call_of_the_token_limit(
    env, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    release = threading.Event()

    def answer(body):
        release.wait(60)
        if any(m["role"] == "user" and tool_results({"messages": [m]}) for m in body["messages"]):
            return Text("다 됐어요", usage=dict(USAGE))
        return ToolCalls([("list_reminders", {})], usage=dict(USAGE))

    fake_anthropic.default = answer
    env = {**env, "DAILY_MESSAGE_LIMIT": "0", "DAILY_TOKEN_LIMIT": str(LIMIT), "RECALL_TURNS": "0"}
    clock = Clock(datetime(2026, 11, 29, 5, 0, tzinfo=UTC))
    chats = [-100_700 - i for i in range(8)]
    refusal = t("limit.tokens", "ko", limit=f"{LIMIT:,}", when="")[:20]
    ends = {"다 됐어요": "answered", t("error.limit"): "stopped"}

    def outcome(chat: int) -> str | None:
        view = fake_telegram.chat_view(chat)
        if not view:
            return None
        return "refused" if view[-1].startswith(refusal) else ends.get(view[-1])

    async with running(env, clock) as app:
        ledger = app.bot_data["guard"].limits.ledger
        for chat in chats:
            fake_telegram.push_update({"message": fake_telegram.message(
                chat, f"@{BOT_USERNAME} 알림 정리해 줘", chat_type="supergroup", user_id=FRIEND)})  # fmt: skip
        arrived = lambda: ledger.user_total(str(FRIEND)).questions + [outcome(c) for c in chats].count("refused")  # noqa: E731
        await asyncio.to_thread(fake_telegram.wait_for, lambda: arrived() >= len(chats))
        release.set()  # all eight are in the bot: now the model answers
        await asyncio.to_thread(fake_telegram.wait_for, lambda: all(outcome(c) for c in chats))
        spent = ledger.user_day(str(FRIEND), "2026-11-29").total_tokens()
    outcomes = [outcome(c) for c in chats]
    assert spent <= LIMIT + CALL  # without the reservation: 8 x 2 calls = 33,600 tokens
    assert outcomes.count("answered") >= 1
    assert outcomes.count("refused") >= 1  # refused on arrival: the tokens held for the accepted ones
    assert len(fake_anthropic.requests) * CALL == spent
