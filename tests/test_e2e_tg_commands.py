"""End to end: the bot's commands, through the real ``python -m bot`` and the fake servers."""

import json

from tests.conftest import TEST_OWNER
from tests.fakes.anthropic_server import Error, FakeAnthropic, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import convo, stored

CHAT = 6161
FAST = {"STREAM_INTERVAL": "0.1", "TELEGRAM_RATE_FACTOR": "20"}
"""Quick previews, and answers without Telegram's second between two in a chat (the fake has no flood limit)."""


def ask(tg: FakeTelegram, text: str, chat_id: int = CHAT, **kw) -> str:
    """Send ``text`` and return what the user saw of the next message."""
    before = len(tg.visible(chat_id))
    tg.send_text(chat_id, text, **kw)
    return tg.wait_visible(chat_id, before + 1)[before]


def test_menu_help_and_unknown_commands_in_korean_and_english(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    bot = start_bot(**FAST)
    calls = fake_telegram.wait_for(lambda: len(c := fake_telegram.calls_of("setMyCommands")) >= 4 and c)
    menus = {c.params.get("language_code"): c.params["commands"] for c in calls if "scope" not in c.params}
    assert set(menus) == {None, "en"}  # Korean is the default list, English for English clients
    names = [c["command"] for c in menus[None]]
    assert names == [c["command"] for c in menus["en"]]
    assert set(names) == {
        "help", "history", "summary", "search", "memory", "remember", "forget", "reminders", "reset", "retry",
        "stats", "export",
    }  # fmt: skip
    assert "대화" in menus[None][1]["description"] and menus["en"][1]["description"].isascii()
    # the owner's own menu adds the access commands, in their chat only
    owner = {c.params.get("language_code"): c.params for c in calls if "scope" in c.params}
    assert set(owner) == {None, "en"}
    assert owner[None]["scope"] == {"type": "chat", "chat_id": TEST_OWNER}
    assert [c["command"] for c in owner["en"]["commands"]] == [*names, "users", "allow", "deny", "import"]

    ko = ask(fake_telegram, "/start")
    assert "기억" in ko and "/reset" in ko and "@memory_test_bot" in ko
    help_call = fake_telegram.calls_of("sendMessage", CHAT)[-1]
    assert help_call.params["parse_mode"] == "HTML" and "<b>" in help_call.params["text"]
    en = ask(fake_telegram, "/help", language_code="en")
    assert "Memory" in en and "/export" in en and "기억" not in en

    assert "/help" in ask(fake_telegram, "/frobnicate")
    assert "Unknown command" in ask(fake_telegram, "/frobnicate", language_code="en")
    fake_telegram.send_text(CHAT, "/help@some_other_bot")  # for another bot: silence
    assert "echo: 안녕" == ask(fake_telegram, "안녕")
    assert bot.settle(fake_telegram) == 0  # every update handled: nothing came after
    assert len(fake_telegram.visible(CHAT)) == 5
    assert [convo(r)[-1]["content"] for r in fake_anthropic.requests] == ["안녕"]  # commands never reach Claude


def test_history_summary_stats_export_and_reset(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    assert "저장된 대화가 없어요" in ask(fake_telegram, "/history")
    assert "내보낼 대화가 없어요" in ask(fake_telegram, "/export")
    usages = [
        {"input_tokens": 1234, "output_tokens": 56, "cache_read_input_tokens": 7, "cache_creation_input_tokens": 890},
        {"input_tokens": 2345, "output_tokens": 67, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 0},
    ]
    fake_anthropic.reply(Text("echo: 사과는 빨갛다", usage=usages[0]))
    assert ask(fake_telegram, "사과는 빨갛다") == "echo: 사과는 빨갛다"
    long_question = "바나나는 노랗다 " + "아주 " * 200
    fake_anthropic.reply(Text(f"echo: {long_question}", usage=usages[1]))
    ask(fake_telegram, long_question)

    history = ask(fake_telegram, "/history").split("\n")
    assert "(4개)" in history[0]
    assert history[1] == "1. 👤 사과는 빨갛다"
    assert history[2] == "2. 🤖 echo: 사과는 빨갛다"
    assert history[3].startswith("3. 👤 바나나는 노랗다 아주") and history[3].endswith("…")
    assert len(history[3]) < 220  # trimmed for display
    assert history[4].startswith("4. 🤖 echo: 바나나는")

    assert "아직 요약이 없어요" in ask(fake_telegram, "/summary")
    assert "No summary yet" in ask(fake_telegram, "/summary", language_code="en")

    stats = ask(fake_telegram, "/stats")
    size = (data_dir / "chats" / f"{CHAT}.jsonl").stat().st_size
    assert f"저장된 대화: {size / 1024:.1f} KB" in stats or f"저장된 대화: {size} B" in stats
    # the sums of what Claude reported for the two answers (from the usage ledger)
    assert "입력 3,579 · 출력 123 · 캐시 쓰기 890 · 캐시 읽기 1,007" in stats
    assert "요약: 아직 없음" in stats

    fake_telegram.send_text(CHAT, "/export")
    docs = fake_telegram.wait_for(lambda: fake_telegram.documents(CHAT))
    name, data = docs[0]
    assert name.startswith(f"chat-{CHAT}-") and name.endswith(".jsonl")
    assert data == (data_dir / "chats" / f"{CHAT}.jsonl").read_bytes()
    assert [json.loads(line)["content"] for line in data.decode().splitlines()][0] == "사과는 빨갛다"

    reset = ask(fake_telegram, "/reset")
    assert "새 대화" in reset and "보관" in reset
    archived = list((data_dir / "chats" / "archive").glob(f"{CHAT}.*.jsonl"))
    assert len(archived) == 1 and archived[0].name in reset
    assert archived[0].read_bytes() == data  # nothing lost
    assert not (data_dir / "chats" / f"{CHAT}.jsonl").exists()
    assert "저장된 대화가 없어요" in ask(fake_telegram, "/history")
    assert "보관할 이전 대화가 없었어요" in ask(fake_telegram, "/reset")
    ask(fake_telegram, "새로 시작")
    assert convo(fake_anthropic.requests[-1]) == [{"role": "user", "content": "새로 시작"}]


def test_retry_after_a_failure_and_retry_replacing_the_last_answer(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    bot = start_bot(**FAST)
    assert "다시 물을 질문이 없어요" in ask(fake_telegram, "/retry")
    fake_anthropic.reply(Error(500, "api_error", "boom"))
    assert ask(fake_telegram, "자전거 자물쇠 번호는 4719야").startswith("⚠️")
    assert stored(data_dir, CHAT) == []

    fake_anthropic.reply("기억할게요.")
    assert ask(fake_telegram, "/retry") == "기억할게요."
    assert convo(fake_anthropic.requests[-1]) == [{"role": "user", "content": "자전거 자물쇠 번호는 4719야"}]
    assert [m["content"] for m in stored(data_dir, CHAT)] == ["자전거 자물쇠 번호는 4719야", "기억할게요."]

    fake_anthropic.reply("네, 4719 기억했어요.")
    assert ask(fake_telegram, "/retry") == "네, 4719 기억했어요."
    # the retry re-asked the same question without the answer it replaces
    assert convo(fake_anthropic.requests[-1]) == [{"role": "user", "content": "자전거 자물쇠 번호는 4719야"}]
    rows = stored(data_dir, CHAT)
    assert len(rows) == 4 and rows[2]["retry"] is True

    ask(fake_telegram, "번호가 뭐였지?")
    sent = convo(fake_anthropic.requests[-1])
    assert [m["content"] for m in sent] == ["자전거 자물쇠 번호는 4719야", "네, 4719 기억했어요.", "번호가 뭐였지?"]
    assert bot.settle(fake_telegram) == 0
    assert len(fake_telegram.visible(CHAT)) == 5  # one message per answer: replaced, not duplicated
