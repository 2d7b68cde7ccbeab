"""End to end: long-term facts and the tool loop through the real ``python -m bot`` and the fake servers.

The fake Messages API validates every request as the real one does, so a tool exchange that
is stored or replayed malformed fails these tests.
"""

from tests.fakes.anthropic_server import FakeAnthropic, Text, ToolCalls
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import convo, stored

CHAT = 5151
FAST = {"STREAM_INTERVAL": "0.1", "TELEGRAM_RATE_FACTOR": "20"}
"""Quick previews, and answers without Telegram's second between two in a chat (the fake has no flood limit)."""


def ask(tg: FakeTelegram, text: str, chat_id: int = CHAT, **kw) -> str:
    before = len(tg.visible(chat_id))
    tg.send_text(chat_id, text, **kw)
    return tg.wait_visible(chat_id, before + 1)[before]


def system_text(body) -> str:
    return "\n".join(b["text"] for b in body["system"])


def test_a_fact_learned_through_a_tool_survives_a_restart_and_a_reset(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    bot = start_bot(**FAST)
    fake_anthropic.reply(
        ToolCalls([("remember", {"text": "생일은 3월 14일"})], text="기억해 둘게요!"),
        Text("3월 14일, 잊지 않을게요."),
    )
    fake_telegram.send_text(CHAT, "내 생일은 3월 14일이야")
    fake_telegram.wait_for(lambda: any("잊지 않을게요" in v for v in fake_telegram.visible(CHAT)))
    shown = fake_telegram.visible(CHAT)[-1]
    # on the 5.5 models the note before the tool call comes back as thinking (shown: a progress line)
    assert shown == "3월 14일, 잊지 않을게요." and "기억해 둘게요!" not in shown
    second = fake_anthropic.requests[1]
    assert convo(second)[-1]["content"][0]["type"] == "tool_result"
    assert "remembered as fact 1" in convo(second)[-1]["content"][0]["content"]
    rows = stored(data_dir, CHAT)
    assert [r["role"] for r in rows] == ["user", "assistant", "user", "assistant"]  # one turn, four lines
    assert "🔧 remember: 생일은 3월 14일" in ask(fake_telegram, "/history")
    assert bot.stop() == 0

    bot2 = start_bot(**FAST)
    fake_anthropic.reply("3월 14일이에요.")
    assert ask(fake_telegram, "내 생일 언제였지?") == "3월 14일이에요."
    last = fake_anthropic.requests[-1]
    assert "[1] 생일은 3월 14일" in system_text(last)
    # the stored exchange is replayed exactly as the API requires (the fake would have answered 400)
    assert [m["role"] for m in convo(last)] == ["user", "assistant", "user", "assistant", "user"]
    assert fake_anthropic.rejected == []

    assert "새 대화" in ask(fake_telegram, "/reset")
    fake_anthropic.reply("3월 14일!")
    ask(fake_telegram, "생일?")
    after_reset = fake_anthropic.requests[-1]
    assert convo(after_reset) == [{"role": "user", "content": "생일?"}]  # a fresh conversation …
    assert "[1] 생일은 3월 14일" in system_text(after_reset)  # … that still knows the fact
    assert bot2.stop() == 0


def test_memory_remember_and_forget_commands(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    assert "아직 기억하고 있는 사실이 없어요" in ask(fake_telegram, "/memory")
    assert "예: /remember" in ask(fake_telegram, "/remember")
    assert ask(fake_telegram, "/remember 땅콩 알레르기가 있어") == "🧠 기억했어요 (1번): 땅콩 알레르기가 있어"
    assert "(2번)" in ask(fake_telegram, "/remember 차 번호는 12가 3456")
    listing = ask(fake_telegram, "/memory")
    assert "1. 땅콩 알레르기가 있어" in listing and "2. 차 번호는 12가 3456" in listing
    assert "Remembered (#3)" in ask(fake_telegram, "/remember Call me Jun", language_code="en")
    assert "x" * 10 not in ask(fake_telegram, "/remember " + "x" * 600)  # too long: a clear reply, not an echo
    assert "최대 500자" in fake_telegram.visible(CHAT)[-1]
    assert ask(fake_telegram, "/forget 2") == "🗑 잊었어요 (2번): 차 번호는 12가 3456"
    assert "7번 사실은 없어요" in ask(fake_telegram, "/forget 7")
    fake_anthropic.reply("네")
    ask(fake_telegram, "안녕")
    system = system_text(fake_anthropic.requests[-1])
    assert "[1] 땅콩 알레르기가 있어" in system and "12가 3456" not in system and "[3] Call me Jun" in system
    assert "2개를 모두 잊었어요" in ask(fake_telegram, "/forget all")
    archived = list((data_dir / "chats" / "archive").glob(f"{CHAT}.*.facts.json"))
    assert len(archived) == 1 and "땅콩" in archived[0].read_text(encoding="utf-8")  # renamed, never deleted
    assert "잊을 사실이 없어요" in ask(fake_telegram, "/forget all")
    assert len(fake_anthropic.requests) == 1  # the commands never reached the model
