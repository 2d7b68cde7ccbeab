"""End to end on the default model (Claude Sonnet 5.5) against the strict fake Messages API:
a tool exchange, a refusal, a max_tokens cut in the middle of a tool call, an overloaded error
inside the stream, and a conversation across a compaction and a restart — each checked for what
the user saw and what was stored. The fake signs thinking blocks against their prefix and
answers 400 for every request shape the 5.5 documentation refuses.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from bot.claude.summarizer import SYSTEM_MARK
from bot.texts import t
from tests.conftest import TEST_OWNER
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.scripts import CutToolCall, Refusal, StreamError, Text, ToolCalls
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import asked_text, convo, stored, turn_context
from tests.summary_helpers import memo

CHAT = 5555
FAST = {"STREAM_INTERVAL": "0.05", "TELEGRAM_RATE_FACTOR": "20"}
"""Quick previews, and answers without Telegram's second between two in a chat (the fake has no flood limit)."""


def ask(tg: FakeTelegram, text: str) -> str:
    before = len(tg.visible(CHAT))
    tg.send_text(CHAT, text)
    return tg.wait_visible(CHAT, before + 1)[before]


def test_a_tool_exchange_shows_progress_and_stores_the_turn_without_thinking(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    bot = start_bot(**FAST)
    gate = threading.Event()  # the answer after the tool waits until the preview showed the progress line
    fake_anthropic.reply(
        ToolCalls([("remember", {"text": "자전거 자물쇠 4719"})], text="기억해 둘게요"),
        Text("자물쇠 번호 4719, 기억했어요.", gate=gate, gate_after=0),
    )
    fake_telegram.send_text(CHAT, "내 자전거 자물쇠 번호는 4719야")
    # between the tool calls the preview says what is going on (the 5.5 models write that as thinking)
    fake_telegram.wait_for(lambda: any("📝 기억해 두는 중…" in d for d in fake_telegram.drafts(CHAT)), timeout=30)
    gate.set()
    assert fake_telegram.wait_visible(CHAT, 1) == ["자물쇠 번호 4719, 기억했어요."]
    first, second = fake_anthropic.requests
    assert first["model"] == "claude-sonnet-5-5" and fake_anthropic.rejected == []
    assert [b["type"] for b in second["messages"][-2]["content"]][0] == "thinking"  # sent back verbatim
    rows = stored(data_dir, CHAT)
    assert [r["role"] for r in rows] == ["user", "assistant", "user", "assistant"]
    assert "thinking" not in json.dumps(rows) and "signature" not in json.dumps(rows)
    assert "4719" in (data_dir / "chats" / f"{CHAT}.facts.json").read_text(encoding="utf-8")
    assert bot.stop() == 0


def test_a_refusal_is_said_in_the_users_language_and_stores_nothing(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    bot = start_bot(**FAST)
    fake_anthropic.reply(Refusal(text="I'll start", usage={"input_tokens": 150_300}))
    assert ask(fake_telegram, "이상한 부탁") == t("error.refusal", "ko")
    assert stored(data_dir, CHAT) == []
    # the refused question is not replayed: the next request does not carry it
    fake_anthropic.reply(Text("네, 물어보세요."))
    assert ask(fake_telegram, "다른 질문") == "네, 물어보세요."
    assert convo(fake_anthropic.requests[-1]) == [{"role": "user", "content": "다른 질문"}]
    assert not (data_dir / "chats" / f"{CHAT}.pending.json").exists()
    assert bot.stop() == 0
    from memory.usage import UsageLedger

    # issue 29 item 4: the refused call was billed, so it is charged to the person who asked
    assert UsageLedger(data_dir, flush_after=None).user_total(str(CHAT)).total_tokens() > 150_300


def test_max_tokens_in_a_tool_call_runs_nothing_and_says_the_answer_was_cut(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    fake_anthropic.reply(CutToolCall("remember", {"text": "차 번호 12가 3456"}))
    assert ask(fake_telegram, "내 차 번호 기억해 줘: 12가 3456") == t("error.cut", "ko")
    assert stored(data_dir, CHAT) == []
    assert not (data_dir / "chats" / f"{CHAT}.facts.json").exists()  # the truncated remember never ran
    assert len(fake_anthropic.requests) == 1


def test_an_overloaded_error_inside_the_stream_is_reported_as_overloaded(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST, ANTHROPIC_MAX_RETRIES="0")
    fake_anthropic.reply(StreamError(text="잠깐만요, 정리하면", type="overloaded_error"))
    assert ask(fake_telegram, "Tell me something") == t("error.overloaded", "ko")
    assert stored(data_dir, CHAT) == []
    fake_anthropic.reply(Text("Here it is."))
    assert ask(fake_telegram, "/retry") == "Here it is."  # kept for /retry, unlike a refusal
    assert stored(data_dir, CHAT)[0]["content"] == "Tell me something"


def _is_summary(body: dict[str, Any]) -> bool:
    return SYSTEM_MARK in "".join(b.get("text", "") for b in body.get("system") or [])


def test_a_conversation_across_a_compaction_and_a_restart(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    def claude(body: dict[str, Any]) -> Any:
        if _is_summary(body):
            return Text(memo(["자전거 자물쇠 번호 4719"]))
        text = asked_text(body)
        if text.startswith("기억해:") and body["messages"][-1]["role"] == "system":
            return ToolCalls([("remember", {"text": text.removeprefix("기억해:").strip()})], text="저장할게요")
        return Text(f"echo: {text}")

    fake_anthropic.default = claude
    budget = {"SUMMARY_TRIGGER_MESSAGES": "8", "SUMMARY_KEEP_MESSAGES": "4", **FAST}
    bot = start_bot(**budget)
    ask(fake_telegram, "내 자전거 자물쇠 번호는 4719야")
    for i in range(12):
        text = f"기억해: 좋아하는 숫자 {i}" if i % 4 == 0 else f"이야기 {i}"
        ask(fake_telegram, text)
    summary_file = data_dir / "chats" / f"{CHAT}.summary.json"
    fake_telegram.wait_for(lambda: summary_file.exists(), timeout=60)
    assert bot.stop() == 0

    bot2 = start_bot(**budget)
    assert ask(fake_telegram, "내 자물쇠 번호 뭐였지?") == "echo: 내 자물쇠 번호 뭐였지?"
    last = [b for b in fake_anthropic.requests if not _is_summary(b)][-1]
    assert fake_anthropic.rejected == []  # every request valid: thinking, summaries, the system message
    assert "4719" in last["system"][2]["text"]  # the summary, in the stable system prompt
    assert "(한국 시각)이다." in turn_context(last) and last["messages"][-1]["role"] == "system"
    summaries = [b for b in fake_anthropic.requests if _is_summary(b)]
    assert summaries and all(b.get("thinking") == {"type": "between_tools"} for b in summaries)
    rows = stored(data_dir, CHAT)
    assert len(rows) >= 2 * 14 and "thinking" not in json.dumps(rows)
    assert bot2.stop() == 0


def test_the_owner_sees_and_switches_the_model_in_telegram(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    owner, other = TEST_OWNER, 7
    bot = start_bot(**FAST)
    fake_telegram.send_text(other, "/model")
    assert fake_telegram.wait_visible(other, 1) == [t("owner_only", "ko")]
    fake_telegram.send_text(owner, "/model")
    shown = fake_telegram.wait_visible(owner, 1)[0]
    assert "claude-sonnet-5-5" in shown and "1,000,000" in shown and "claude-opus-5-5" in shown
    fake_telegram.send_text(owner, "/model claude-opus-5-5")
    assert "claude-opus-5-5" in fake_telegram.wait_visible(owner, 2)[1]
    assert bot.stop() == 0

    start_bot(**FAST)  # the choice outlives the restart
    fake_telegram.send_text(owner, "안녕")
    assert fake_telegram.wait_visible(owner, 3)[2] == "echo: 안녕"
    assert fake_anthropic.requests[-1]["model"] == "claude-opus-5-5" and fake_anthropic.rejected == []
