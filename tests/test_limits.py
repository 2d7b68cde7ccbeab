"""Daily limits and charging (bot/core/limits.py): days in TIMEZONE, counted at acceptance, charged to the user."""

from datetime import UTC, datetime

import pytest

from bot.claude.model import Usage
from bot.core.ask import Question, Spend
from bot.core.limits import TERMINAL, Limits, when_text
from memory.usage import UsageLedger
from tests.conftest import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 11, 29, 14, 59, 0, tzinfo=UTC))  # 23:59 on Sunday in Seoul


def limits(data_dir, clock, **kw) -> Limits:
    return Limits(UsageLedger(data_dir, flush_after=None), now=clock, **kw)


def test_questions_over_the_daily_limit_are_refused_until_midnight_in_korea(data_dir, clock):
    lim = limits(data_dir, clock, messages=2)
    assert lim.admit(7, 7) is None and lim.admit(7, -100) is None  # counted per user, in any chat
    refusal = lim.admit(7, 7)
    assert refusal is not None and refusal.kind == "messages" and refusal.limit == 2
    assert refusal.resets_at == datetime(2026, 11, 29, 15, 0, tzinfo=UTC)  # 00:00 Monday in Seoul
    assert lim.ledger.user_day("7", "2026-11-29").questions == 2  # the refused one is not counted
    assert lim.admit(8, 8) is None  # another user has their own day
    clock.advance(seconds=59)
    assert lim.admit(7, 7) is not None  # 23:59:59 is still Sunday
    clock.advance(seconds=1)
    assert lim.day() == "2026-11-30" and lim.admit(7, 7) is None


def test_many_questions_at_once_cannot_pass_the_limit(data_dir, clock):
    lim = limits(data_dir, clock, messages=3)
    results = [lim.admit(7, 7) for _ in range(10)]  # as ten handlers accepting at the same moment
    assert results.count(None) == 3


def test_the_token_limit_counts_every_token_of_the_day(data_dir, clock):
    lim = limits(data_dir, clock, tokens=1000)
    lim.record(Spend("7", 7, "answer", "claude-sonnet-4-6", Usage(100, 100, 300, 400)))
    assert lim.admit(7, 7) is None  # 900 used
    lim.record(Spend("7", 7, "summary", "claude-haiku-4-5", Usage(50, 50, 0, 0)))  # a summary counts too
    refusal = lim.admit(7, 7)
    assert refusal is not None and refusal.kind == "tokens"


def test_the_owner_is_counted_but_never_refused(data_dir, clock):
    lim = limits(data_dir, clock, messages=1, tokens=1)
    for _ in range(5):
        assert lim.admit(1, 1, exempt=True) is None
    assert lim.ledger.user_day("1", lim.day()).questions == 5


def test_zero_means_unlimited(data_dir, clock):
    lim = limits(data_dir, clock)
    lim.record(Spend("7", 7, "answer", "m", Usage(10**9, 10**9)))
    assert all(lim.admit(7, 7) is None for _ in range(500))


def test_days_follow_the_configured_time_zone(data_dir, clock):
    berlin = limits(data_dir, clock, timezone="Europe/Berlin", messages=1)
    assert berlin.day() == "2026-11-29"  # 15:59 in Berlin
    assert berlin.resets_at() == datetime(2026, 11, 29, 23, 0, tzinfo=UTC)


def test_calls_without_a_telegram_user_are_the_terminals(data_dir, clock):
    lim = limits(data_dir, clock)
    lim.record(Spend("local", None, "answer", "m", Usage(1, 2)))
    assert lim.ledger.user_total(TERMINAL).total_tokens() == 3 and lim.ledger.chat_total("local").total_tokens() == 3


def test_reset_time_is_said_in_korean_time():
    midnight = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    assert when_text(midnight, "Asia/Seoul", "ko") == "11월 30일 (월) 00:00 (한국 시각)"
    assert when_text(midnight, "Asia/Seoul", "en") == "Mon Nov 30, 00:00 (Korea time)"
    assert when_text(midnight, "Europe/Berlin", "ko") == "11월 29일 (일) 16:00 (Europe/Berlin 시각)"


async def test_answers_tool_rounds_and_summaries_are_charged_to_the_user_who_caused_them(
    fake_anthropic, monkeypatch, data_dir, clock
):
    from bot.claude.summarizer import SYSTEM_MARK
    from bot.config import load_settings
    from bot.wiring import make_assistant
    from tests.fakes.anthropic_server import Text, ToolCalls, last_user_text
    from tests.test_background_compaction import memo

    def claude(body):
        if SYSTEM_MARK in body["system"][0]["text"]:
            return Text(memo("wired"), usage={"input_tokens": 700, "output_tokens": 70})
        return Text(f"echo: {last_user_text(body)}", usage={"input_tokens": 100, "output_tokens": 10})

    fake_anthropic.default = claude
    fake_anthropic.reply(ToolCalls([("remember", {"text": "생일은 3월 14일"})], usage={"input_tokens": 100}))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "DATA_DIR": str(data_dir), "SUMMARY_TRIGGER_MESSAGES": "4",
           "SUMMARY_KEEP_MESSAGES": "2", "ANTHROPIC_MAX_RETRIES": "0", "RECALL_TURNS": "5",
           "RECALL_MEANING": "off"}  # fmt: skip
    lim = limits(data_dir, clock)
    a = make_assistant(load_settings(env, need_telegram=False), on_spend=lim.record)
    try:
        for i in range(3):
            await a.ask(-100, Question(f"q{i} 생일", user_id=42))  # recall runs too: it makes no model call
        await a.maintain(-100, user_id=42)
    finally:
        await a.aclose()
        await a.model.aclose()
    assert a.summary(-100) == memo("wired")
    mine = lim.ledger.user_day("42", lim.day()).models["claude-sonnet-5-5"]
    # a tool round and its answer, two more answers, one summary: 5 calls, all charged to user 42
    assert mine[4] == 5 and len(fake_anthropic.requests) == 5
    assert mine[0] == 100 + 100 * 3 + 700 and mine[1] == sum(r["usage"]["output"] for r in _stored(data_dir)) + 70
    assert lim.ledger.chat_total("-100").models == lim.ledger.user_total("42").models


def _stored(data_dir):
    import json

    lines = (data_dir / "chats" / "-100.jsonl").read_text(encoding="utf-8").splitlines()
    return [m for m in map(json.loads, lines) if m["role"] == "assistant"]


def test_a_user_over_the_limit_cannot_set_reminders_but_the_owner_can(data_dir, clock, tmp_path):
    from bot.config import load_settings
    from bot.tg.access import make_guard, reminder_check
    from bot.tools import ToolContext
    from bot.tools.reminders import reminder_tools
    from memory.reminders import ReminderStore

    env = {"ANTHROPIC_API_KEY": "k", "TELEGRAM_BOT_TOKEN": "1:x", "DATA_DIR": str(data_dir), "OWNER_ID": "1",
           "ALLOWED_USERS": "1,7", "DAILY_MESSAGE_LIMIT": "1"}  # fmt: skip
    g = make_guard(load_settings(env, dotenv=False), now=clock)
    store = ReminderStore(data_dir)
    (set_reminder,) = [t for t in reminder_tools(store, "Asia/Seoul", may_create=reminder_check(g))
                       if t.name == "set_reminder"]  # fmt: skip
    value = {"at": "2026-11-30T09:00:00+09:00", "text": "약 먹기"}
    assert not set_reminder.handler(ToolContext("7", clock(), user_id=7), value).is_error  # under the limit
    assert g.limits.admit(7, 7) is None  # the day's one question
    refused = set_reminder.handler(ToolContext("7", clock(), user_id=7), value)
    assert refused.is_error and "limit" in refused.text and "still be delivered" in refused.text
    g.limits.admit(1, 1, exempt=True)
    g.limits.admit(1, 1, exempt=True)
    assert not set_reminder.handler(ToolContext("1", clock(), user_id=1), value).is_error  # the owner
    assert len(store.pending("7")) == 1 and len(store.pending("1")) == 1
