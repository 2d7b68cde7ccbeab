"""End to end with an injected clock: daily limits across midnight in Korea, and /stats with its cost.

The real Telegram application (python-telegram-bot, every handler) and the real Claude client run
in this process against the fake Telegram and Anthropic servers, so the limits' clock can be
moved by hand. A restart is a new application on the same DATA_DIR.
"""

import asyncio
import contextlib
import json
from datetime import UTC, datetime

import pytest

from bot.config import load_settings
from bot.texts import t
from bot.tg.app import build_application
from bot.wiring import make_assistant
from tests.conftest import Clock
from tests.fakes.anthropic_server import FakeAnthropic, Text
from tests.fakes.telegram_server import FakeTelegram

OWNER = 1
FRIEND = 7
OTHER = 8
HASTY = 9
# usage of one answer with every kind of token (what the real API reports with prompt caching)
USAGE = {
    "input_tokens": 1000,
    "output_tokens": 500,
    "cache_creation_input_tokens": 2000,
    "cache_read_input_tokens": 10000,
}
# on Sonnet ($3 in, $15 out, $3.75 cache write, $0.30 cache read per million): 3000 + 7500 + 7500 + 3000 µ$
COST = "$0.0130"  # Claude Sonnet 5.5, the default: $2 / $10, cache writes $2.50, reads $0.10


@pytest.fixture
def env(monkeypatch, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)  # read by the Anthropic client
    return {
        "TELEGRAM_BOT_TOKEN": fake_telegram.token,
        "TELEGRAM_BASE_URL": fake_telegram.base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "ANTHROPIC_MAX_RETRIES": "0",
        "DATA_DIR": str(data_dir),
        "OWNER_ID": str(OWNER),
        "ALLOWED_USERS": f"{FRIEND},{OTHER},{HASTY}",
        "STREAM_INTERVAL": "0.1",
        "TELEGRAM_RATE_FACTOR": "20",  # the fake has no flood limit: no second between two answers in a chat
        "RECALL_MEANING": "off",  # as in bot_env: the model and ~50 ms of CPU a stored turn, for tests not of it
    }


@contextlib.asynccontextmanager
async def running(env: dict[str, str], clock: Clock):
    """The bot's application, polling the fake Telegram server, until the block ends (then a clean stop)."""
    settings = load_settings(env, dotenv=False)
    app = build_application(settings, make_assistant(settings), now=clock)
    await app.initialize()
    await app.start()
    await app.updater.start_polling(timeout=1, allowed_updates=["message"])
    try:
        yield app
    finally:
        await app.updater.stop()
        await app.stop()
        await app.post_shutdown(app)
        await app.shutdown()


async def ask(tg: FakeTelegram, user: int, text: str) -> str:
    """Send ``text`` from ``user`` (a private chat) and wait for the bot's next message there."""
    n = len(tg.sent(user)) + 1
    tg.send_text(user, text, first_name=f"user{user}")
    return (await _wait(tg, lambda: len(s := tg.sent(user)) >= n and s))[n - 1]


async def _wait(tg: FakeTelegram, predicate):
    return await asyncio.to_thread(tg.wait_for, predicate)


def midnight_reply(kind: str, limit: str, lang: str = "ko") -> str:
    when = "11월 30일 (월) 00:00 (한국 시각)" if lang == "ko" else "Mon Nov 30, 00:00 (Korea time)"
    return t(f"limit.{kind}", lang, limit=limit, when=when)


async def test_daily_limits_across_midnight_in_korea_and_a_restart(
    env, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    env = {**env, "DAILY_MESSAGE_LIMIT": "2", "DAILY_TOKEN_LIMIT": "5000"}
    clock = Clock(datetime(2026, 11, 29, 14, 50, tzinfo=UTC))  # 23:50 on Sunday in Seoul
    async with running(env, clock):
        assert await ask(fake_telegram, FRIEND, "하나") == "echo: 하나"
        assert await ask(fake_telegram, FRIEND, "둘") == "echo: 둘"
        assert await ask(fake_telegram, FRIEND, "셋") == midnight_reply("messages", "2")
        # a file to read is a question too
        fake_telegram.files["notes"] = "장보기: 우유, 계란".encode()
        doc = {"file_id": "notes", "file_unique_id": "notes_u", "file_name": "notes.txt", "mime_type": "text/plain",
               "file_size": len(fake_telegram.files["notes"])}  # fmt: skip
        fake_telegram.push_update({"message": fake_telegram.message(FRIEND, None, document=doc, caption="요약해 줘")})
        refused = await _wait(fake_telegram, lambda: len(s := fake_telegram.sent(FRIEND)) >= 4 and s)
        assert refused[3] == midnight_reply("messages", "2")
        # the token limit: one big answer uses up OTHER's day (the answer that crosses it is still given)
        fake_anthropic.reply(Text("긴 답", usage={"input_tokens": 4900, "output_tokens": 200}))
        assert await ask(fake_telegram, OTHER, "길게") == "긴 답"
        assert await ask(fake_telegram, OTHER, "또") == midnight_reply("tokens", "5,000")
        # the owner is never limited
        for i in range(3):
            assert await ask(fake_telegram, OWNER, f"주인 {i}") == f"echo: 주인 {i}"
        # five questions at once: they are counted when accepted, so only two go to the model
        for i in range(5):
            fake_telegram.send_text(HASTY, f"급해 {i}")
        replies = await _wait(fake_telegram, lambda: len(s := fake_telegram.sent(HASTY)) >= 5 and s)
        assert sorted(replies).count(midnight_reply("messages", "2")) == 3
    assert len(fake_anthropic.requests) == 8  # refused questions cost no model call
    stored = (data_dir / "chats" / f"{FRIEND}.jsonl").read_text(encoding="utf-8")
    assert "셋" not in stored and stored.count('"role":"user"') == 2  # and nothing was stored for them
    ledger = json.loads((data_dir / "usage.json").read_text())
    assert ledger["days"]["2026-11-29"]["users"][str(FRIEND)]["q"] == 2  # refused questions are not counted

    clock.advance(minutes=9, seconds=30)  # 23:59:30: still Sunday in Seoul; a restart loses no count
    async with running(env, clock):
        fake_telegram.send_text(FRIEND, "넷", language_code="en")
        english = await _wait(fake_telegram, lambda: len(s := fake_telegram.sent(FRIEND)) >= 5 and s)
        assert english[4] == midnight_reply("messages", "2", "en")
        clock.advance(seconds=31)  # 00:00:01 on Monday in Seoul (15:00:01 UTC): a new day
        assert await ask(fake_telegram, FRIEND, "다섯") == "echo: 다섯"
        assert await ask(fake_telegram, OTHER, "이제 돼?") == "echo: 이제 돼?"
    ledger = json.loads((data_dir / "usage.json").read_text())
    assert ledger["days"]["2026-11-30"]["users"][str(FRIEND)]["q"] == 1
    assert ledger["total"]["users"][str(FRIEND)]["q"] == 3
    assert len(fake_anthropic.requests) == 10


async def test_stats_shows_tokens_and_cost_today_and_in_total(
    env, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    clock = Clock(datetime(2026, 11, 29, 14, 0, tzinfo=UTC))  # 23:00 in Seoul
    async with running(env, clock):
        fake_anthropic.reply(Text("첫 답", usage=USAGE))
        assert await ask(fake_telegram, FRIEND, "질문") == "첫 답"
        stats = await ask(fake_telegram, FRIEND, "/stats")
        tokens = "입력 1,000 · 출력 500 · 캐시 쓰기 2,000 · 캐시 읽기 10,000"
        assert f"오늘: 질문 1개, {tokens} → {COST}" in stats
        assert f"전체: 질문 1개, {tokens} → {COST}" in stats
        clock.advance(hours=1)  # the next day in Seoul
        fake_anthropic.reply(Text("둘째 답", usage=USAGE))
        await ask(fake_telegram, FRIEND, "또 질문")
        stats = await ask(fake_telegram, FRIEND, "/stats")
        assert f"오늘: 질문 1개, {tokens} → {COST}" in stats
        assert "전체: 질문 2개, 입력 2,000 · 출력 1,000 · 캐시 쓰기 4,000 · 캐시 읽기 20,000 → $0.0260" in stats

        # per person: the owner's /stats all; others may not
        assert await ask(fake_telegram, FRIEND, "/stats all") == t("owner_only")
        await ask(fake_telegram, OWNER, "안녕")
        everyone = await ask(fake_telegram, OWNER, "/stats all")
        lines = everyone.splitlines()
        assert lines[0] == t("stats.all_header")
        friend = f"• user{FRIEND} ({FRIEND}): 오늘 질문 1 · 토큰 13,500 · {COST} / 전체 질문 2 · 토큰 27,000"
        assert lines[1].startswith(friend)
        assert lines[2].startswith(f"• user{OWNER} ({OWNER}): 오늘 질문 1")
        assert "질문 50" in everyone and "토큰 200,000" in everyone  # the default limits

    env = {**env, "MODEL_PRICES": "claude-sonnet-5-5=4/20/5/0.2"}  # prices from the configuration: twice as much
    async with running(env, clock):
        stats = await ask(fake_telegram, FRIEND, "/stats")
        assert "→ $0.0260\n" in stats and stats.endswith("→ $0.0520")

    env = {**env, "MODEL_PRICES": "", "ANTHROPIC_MODEL": "claude-future-9"}  # no price known: said, not invented
    async with running(env, clock):
        assert await ask(fake_telegram, FRIEND, "새 모델?") == "echo: 새 모델?"
        stats = await ask(fake_telegram, FRIEND, "/stats")
        assert f"→ {COST} + 가격 모름 (claude-future-9)\n" in stats  # today: one priced answer, one not


@pytest.mark.parametrize(
    ("model", "cost"),
    [
        # $8 / $40, cache writes $10, reads $0.20: 8000 + 20000 + 20000 + 2000 µ$ (issue 30 item 7: it was unknown)
        ("claude-fable-5-2", "$0.0500"),
        ("claude-fable-5", "$0.0700"),  # $10 / $50, $12.50 writes, $1 reads: 10000 + 25000 + 25000 + 10000 µ$
    ],
)
async def test_stats_prices_the_newest_models(
    env, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, model: str, cost: str
):
    clock = Clock(datetime(2026, 12, 1, 3, 0, tzinfo=UTC))
    async with running({**env, "ANTHROPIC_MODEL": model}, clock):
        fake_anthropic.reply(Text("답", usage=USAGE))
        assert await ask(fake_telegram, FRIEND, "질문") == "답"
        assert fake_anthropic.requests[-1]["model"] == model
        stats = await ask(fake_telegram, FRIEND, "/stats")
        assert f"→ {cost}" in stats and "가격 모름" not in stats, stats
