"""End to end: the real ``python -m bot`` process against fake Telegram and Anthropic servers."""

import json
import signal
import subprocess
import sys
import threading

import pytest

from tests.fakes.anthropic_server import Error, FakeAnthropic, Text, last_user_text
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import convo, stored, turn_context

CHAT = 4242
FAST = {"TELEGRAM_RATE_FACTOR": "20"}
"""The fake has no flood limit: no second between two messages in a chat."""


def request_text(body) -> str:
    return json.dumps(body, ensure_ascii=False)


def test_restart_remembers_the_lock_code(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    bot = start_bot(**FAST)
    fake_anthropic.reply("기억해 둘게요.")
    fake_telegram.send_text(CHAT, "내 자전거 자물쇠 번호는 4719야")
    assert fake_telegram.wait_sent(CHAT) == ["기억해 둘게요."]
    assert bot.stop() == 0

    # a new process: nothing in memory but the files
    bot2 = start_bot(**FAST)
    fake_anthropic.reply("4719 였어요.")
    fake_telegram.send_text(CHAT, "내 자물쇠 번호 뭐였지?")
    assert fake_telegram.wait_sent(CHAT, 2)[-1] == "4719 였어요."
    last = fake_anthropic.requests[-1]
    assert convo(last)[0] == {"role": "user", "content": "내 자전거 자물쇠 번호는 4719야"}
    assert convo(last)[-1] == {"role": "user", "content": "내 자물쇠 번호 뭐였지?"}
    assert "4719" in request_text(convo(last)[:-1])
    # the fresh time line: in a system message after the question (the 5.5 models take them)
    assert "(한국 시각)이다." in turn_context(last) and last["messages"][-1]["role"] == "system"
    assert not any("(한국 시각)이다." in b["text"] for b in last["system"])  # the system prompt stays stable
    assert bot2.stop() == 0
    assert [m["content"] for m in stored(data_dir, CHAT)] == [
        "내 자전거 자물쇠 번호는 4719야",
        "기억해 둘게요.",
        "내 자물쇠 번호 뭐였지?",
        "4719 였어요.",
    ]
    for log in (bot.log, bot2.log):
        assert fake_telegram.token not in log
        assert fake_telegram.token.split(":")[1] not in log


def test_failed_model_call_stores_nothing_and_the_next_question_works(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    # a 400 on a request with a mid-conversation system message is asked once more in the other layout
    fake_anthropic.reply(Error(400, "invalid_request_error", "boom"), Error(400, "invalid_request_error", "boom"))
    fake_telegram.send_text(CHAT, "첫 질문")
    reply = fake_telegram.wait_sent(CHAT)[0]
    assert reply.startswith("⚠️")
    assert stored(data_dir, CHAT) == []
    fake_telegram.send_text(CHAT, "다시 질문")
    assert fake_telegram.wait_sent(CHAT, 2)[-1] == "echo: 다시 질문"
    assert convo(fake_anthropic.requests[-1]) == [{"role": "user", "content": "다시 질문"}]
    assert [m["role"] for m in stored(data_dir, CHAT)] == ["user", "assistant"]


def test_english_user_gets_english_error(start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic):
    start_bot(**FAST)
    fake_anthropic.reply(Error(401, "authentication_error", "bad key"))
    fake_telegram.send_text(CHAT, "hello", language_code="en")
    assert "API key" in fake_telegram.wait_sent(CHAT)[0]


def test_long_reply_is_split_and_arrives_whole(start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic):
    bot = start_bot(**FAST)
    paragraphs = [(f"문단 {i}: " + "가나다라 " * 150).rstrip() for i in range(14)]
    text = "\n\n".join(paragraphs)
    assert len(text) > 10_000
    fake_anthropic.reply(Text(text, chunk=500))
    fake_telegram.send_text(CHAT, "길게 말해 줘")
    fake_telegram.wait_for(lambda: "\n\n".join(fake_telegram.sent(CHAT)) == text)
    assert bot.settle(fake_telegram) == 0  # nothing more is sent after the whole text
    parts = fake_telegram.sent(CHAT)
    assert len(parts) == 3
    assert all(len(p.encode("utf-16-le")) // 2 <= 4096 for p in parts)
    assert "\n\n".join(parts) == text


def test_not_allowed_user_is_told_their_id(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(ALLOWED_USERS="111, 222", **FAST)
    fake_telegram.send_text(CHAT, "안녕", user_id=999)
    reply = fake_telegram.wait_sent(CHAT)[0]
    assert "999" in reply and "주인" in reply  # their id, to send to the owner
    fake_telegram.send_text(CHAT + 1, "안녕", user_id=222)
    assert fake_telegram.wait_sent(CHAT + 1) == ["echo: 안녕"]
    assert len(fake_anthropic.requests) == 1
    assert stored(data_dir, CHAT) == []


def test_non_text_message_is_declined_politely(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    sticker = {
        "file_id": "st1",
        "file_unique_id": "st1u",
        "type": "regular",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
    }
    fake_telegram.push_update({"message": fake_telegram.message(CHAT, None, sticker=sticker)})
    reply = fake_telegram.wait_sent(CHAT)[0]
    assert "텍스트" in reply
    assert fake_anthropic.requests == [] and stored(data_dir, CHAT) == []


def test_chats_run_concurrently_but_one_chat_in_order(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    gate = threading.Event()

    def script(body):
        text = last_user_text(body)
        return Text(f"re: {text}", gate=gate if text == "slow" else None)  # "slow" waits until chat 2 is answered

    fake_anthropic.default = script
    start_bot(**FAST)
    fake_telegram.send_text(1, "slow")
    fake_anthropic.wait_requests(1)
    fake_telegram.send_text(2, "fast")
    assert fake_telegram.wait_sent(2) == ["re: fast"]
    assert fake_telegram.sent(1) == []  # chat 2 was answered while chat 1 was still waiting
    gate.set()
    assert fake_telegram.wait_sent(1) == ["re: slow"]
    for i in range(5):
        fake_telegram.send_text(3, f"m{i}")
    assert fake_telegram.wait_sent(3, 5) == [f"re: m{i}" for i in range(5)]
    assert [m["content"] for m in stored(data_dir, 3)] == [x for i in range(5) for x in (f"m{i}", f"re: m{i}")]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stop_signal_finishes_the_turn_in_flight(
    sig, start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    bot = start_bot(**FAST)
    gate = threading.Event()
    fake_anthropic.reply(Text("늦은 답", gate=gate))  # held until the bot is stopping
    fake_telegram.send_text(CHAT, "천천히 답해")
    fake_anthropic.wait_requests(1)
    assert bot.proc is not None
    bot.proc.send_signal(sig)
    fake_telegram.wait_for(lambda: "Application is stopping" in bot.log, timeout=30)
    gate.set()  # the answer arrives only now, while the bot is shutting down
    assert bot.stop(sig=0) == 0  # (signal 0: nothing more is sent, only the exit awaited)
    assert fake_telegram.sent(CHAT) == ["늦은 답"]
    assert [m["content"] for m in stored(data_dir, CHAT)] == ["천천히 답해", "늦은 답"]


def test_missing_settings_stop_the_start_with_one_line(bot_env, tmp_path):
    for name in ("TELEGRAM_BOT_TOKEN", "ANTHROPIC_API_KEY"):
        env = {k: v for k, v in bot_env.items() if k != name}
        r = subprocess.run(
            [sys.executable, "-m", "bot"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert r.returncode == 2
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and name in lines[0], r.stderr


def test_token_stays_out_of_logs_when_telegram_fails(start_bot, fake_telegram: FakeTelegram):
    bot = start_bot(**FAST)
    for _ in range(2):
        fake_telegram.fail_next("getUpdates", 502, "Bad Gateway")
    fake_telegram.fail_next("sendMessage", 400, "Bad Request: chat not found")
    fake_telegram.send_text(CHAT, "안녕")
    fake_telegram.wait_for(lambda: len(fake_telegram.calls_of("sendMessage", CHAT)) >= 1)
    assert bot.settle(fake_telegram) == 0
    assert fake_telegram.sent(CHAT) == []  # refused: delivery stopped there
    secret = fake_telegram.token.split(":")[1]
    assert "Bad Gateway" in bot.log or "502" in bot.log or "chat not found" in bot.log  # the failures were logged
    assert secret not in bot.log
