"""End to end: the real bot process remembers a code from 40 turns ago through its summary."""

from __future__ import annotations

import json
import re
from typing import Any

from bot.claude.summarizer import SYSTEM_MARK
from tests.fakes.anthropic_server import FakeAnthropic, Text, last_user_text
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import asked_text, convo, recalled, turn_context
from tests.summary_helpers import memo

CHAT = 4343
FAST = {"TELEGRAM_RATE_FACTOR": "20"}
"""The fake Telegram has no flood limit: the bot need not wait a second between two answers in a chat."""
TOPICS = ["날씨", "점심 메뉴", "주말 계획", "운동", "영화", "책", "커피", "산책", "음악", "여행"]


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or []
    if isinstance(system, str):
        return system
    return "\n".join(str(b.get("text", "")) for b in system)


def is_summary_request(body: dict[str, Any]) -> bool:
    return SYSTEM_MARK in system_text(body)


def fake_claude(body: dict[str, Any]) -> Text:
    """Chat requests are echoed; summary requests get a valid memo keeping every line with a 4-digit number."""
    if not is_summary_request(body):  # the question (not the quoted memories after it)
        return Text(f"echo: {asked_text(body)}")
    text = last_user_text(body)
    facts: list[str] = []
    for line in text.splitlines():
        line = re.sub(r"^(- |\[[^\]]*\] ?)", "", line.strip())  # list marks, "[date role]" prefixes
        if re.search(r"\d{4}", line) and line not in facts:
            facts.append(line)
    return Text(memo(facts))


def test_lock_code_survives_40_turns_and_a_restart_through_the_summary(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    """41 turns in one chat, compacted ten times on the way, then a restart: the code is in the summary.

    The bot answers at 20 messages a second (``FAST``) instead of Telegram's one: the fake has no flood
    limit, and the chat is the same 41 turns (a minute of waiting before, seconds now)."""
    fake_anthropic.default = fake_claude
    budget = {"SUMMARY_TRIGGER_MESSAGES": "8", "SUMMARY_KEEP_MESSAGES": "4", "SUMMARY_MAX_CHARS": "1000", **FAST}
    bot = start_bot(**budget)
    fake_telegram.send_text(CHAT, "내 자전거 자물쇠 번호는 4719야")
    fake_telegram.wait_sent(CHAT, 1)
    for i in range(40):
        fake_telegram.send_text(CHAT, f"{TOPICS[i % len(TOPICS)]} 이야기 하나 더 해 줘")
        fake_telegram.wait_sent(CHAT, i + 2)
    # compaction runs in the background after the reply: wait for it to catch up, then stop
    summary_file = data_dir / "chats" / f"{CHAT}.summary.json"

    def covers() -> int:
        try:
            return int(json.loads(summary_file.read_text(encoding="utf-8"))["covers"])
        except (FileNotFoundError, ValueError, KeyError):
            return 0

    fake_telegram.wait_for(lambda: covers() >= 82 - 8, timeout=60)
    assert bot.stop() == 0
    stored = json.loads(summary_file.read_text(encoding="utf-8"))
    assert "4719" in stored["text"] and stored["covers"] >= 82 - 8

    # every summary request carried the previous summary plus a few evicted messages, never the whole chat
    summary_requests = [b for b in fake_anthropic.requests if is_summary_request(b)]
    assert len(summary_requests) >= 10
    for body in summary_requests:
        evicted_lines = [
            ln for ln in last_user_text(body).splitlines() if re.match(r"^\[\d{4}-\d\d-\d\d .*(사용자|비서)\]", ln)
        ]
        assert 0 < len(evicted_lines) <= 8

    bot2 = start_bot(**budget)
    fake_telegram.send_text(CHAT, "내 자물쇠 번호 뭐였지?")
    fake_telegram.wait_sent(CHAT, 42)
    # what the user sees of the memory: /summary shows the code, /stats how much the summary covers
    fake_telegram.send_text(CHAT, "/summary")
    assert "4719" in fake_telegram.wait_visible(CHAT, 43)[-1]
    fake_telegram.send_text(CHAT, "/stats")
    covered = re.search(r"앞의 메시지 (\d+)개를 요약함", fake_telegram.wait_visible(CHAT, 44)[-1])
    assert covered is not None and int(covered.group(1)) >= stored["covers"]
    assert bot2.stop() == 0
    chat_requests = [b for b in fake_anthropic.requests if not is_summary_request(b)]
    assert len(chat_requests) == 42  # the commands never reached the model
    last = chat_requests[-1]
    assert convo(last)[-1] == {"role": "user", "content": "내 자물쇠 번호 뭐였지?"}
    # the code is in the summary system block, not among the verbatim messages
    summary_block = last["system"][2]["text"]
    assert summary_block.startswith("[이전 대화 요약") and "4719" in summary_block
    assert "4719" not in json.dumps(convo(last), ensure_ascii=False)
    context = last["messages"][-1]
    assert context["role"] == "system" and "(한국 시각)이다." in turn_context(last)
    # recall brought the exact words back too, for this request only: quoted after the question in the
    # user turn (data, not the system message's authority), after the question's cache breakpoint
    assert "[관련 기억" in recalled(last) and "4719" in recalled(last) and "4719" not in turn_context(last)
    question_blocks = last["messages"][-2]["content"]
    assert question_blocks[0].get("cache_control") and "cache_control" not in question_blocks[-1]
    # bounded: at most the trigger's 8 verbatim messages plus the question, and a small request
    assert len(convo(last)) <= 9
    assert convo(last)[0]["role"] == "user"
    kept = last["system"]
    size = len(json.dumps({"system": kept, "messages": convo(last)}, ensure_ascii=False))
    first_request_size = len(json.dumps({k: chat_requests[0][k] for k in ("system", "messages")}, ensure_ascii=False))
    assert size < first_request_size + 1000 + 9 * 100  # persona + summary cap + window
    transcript = (data_dir / "chats" / f"{CHAT}.jsonl").read_text(encoding="utf-8").splitlines()
    everything = sum(len(json.loads(line)["content"]) for line in transcript)
    assert len(transcript) == 84 and size < first_request_size + everything / 2  # far from the full history


def test_a_stuck_summarizer_never_holds_up_the_chat_and_sigterm_still_exits(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    import threading

    summarizing = threading.Event()
    release = threading.Event()

    def claude(body: dict[str, Any]) -> Text:
        if is_summary_request(body):
            summarizing.set()
            release.wait(120)  # a summarizer far slower than any answer
            return Text(memo(["never used"]))
        return Text(f"echo: {last_user_text(body)}")

    fake_anthropic.default = claude
    bot = start_bot(STREAM_INTERVAL="0.1", SUMMARY_TRIGGER_MESSAGES="4", SUMMARY_KEEP_MESSAGES="2", **FAST)
    for i in range(3):
        fake_telegram.send_text(CHAT, f"질문 {i}")
        fake_telegram.wait_sent(CHAT, i + 1)
    assert summarizing.wait(30), "no compaction started"
    # the compaction is stuck in the summarizer: questions are still answered, one after another
    for i in range(3, 6):
        fake_telegram.send_text(CHAT, f"질문 {i}")
        assert fake_telegram.wait_sent(CHAT, i + 1)[-1] == f"echo: 질문 {i}"
    assert not (data_dir / "chats" / f"{CHAT}.summary.json").exists()
    # SIGTERM while the summarizer still has not answered: a clean exit, nothing half-written
    assert bot.stop(timeout=30) == 0
    release.set()
    assert not (data_dir / "chats" / f"{CHAT}.summary.json").exists()
    assert len([line for line in (data_dir / "chats" / f"{CHAT}.jsonl").read_text().splitlines() if line]) == 12
    assert "compaction cancelled" in bot.log
