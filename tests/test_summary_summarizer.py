"""bot/claude/summarizer.py: the prompt's demands and exactly what the summarizer model receives."""

from __future__ import annotations

from bot.claude.model import FakeModel
from bot.claude.summarizer import SYSTEM_MARK, Summarizer, format_messages
from bot.core.ask import Assistant
from memory.summary import HEADINGS, Budget, memo_problems
from memory.transcript import Transcript
from tests.fakes.messages_rules import validate
from tests.summary_helpers import memo

EVICTED = [
    {
        "role": "user",
        "content": "제주도 2박 3일, 어른 둘 아이 둘이에요. 예산 150만 원.",
        "at": "2026-11-29T23:05:00+09:00",
    },
    {"role": "assistant", "content": "동쪽 해안 숙소를 추천해요.", "at": "2026-11-29T23:05:09+09:00", "usage": {}},
    {"role": "user", "content": [{"type": "text", "text": "둘째 날은 비 와서 실내 일정으로 바꿀게요"}]},
]


async def test_prompt_demands_the_fixed_headings_numbers_people_decisions_and_changes():
    model = FakeModel([memo(["예산 150만 원"])], name="claude-haiku-test", validate=validate)
    s = Summarizer(model, max_chars=1800)
    text = await s(None, EVICTED)
    assert text == memo(["예산 150만 원"]) and s.name == "claude-haiku-test"
    call = model.calls[0]
    system = call.system_text
    assert system.startswith(SYSTEM_MARK)
    for heading in HEADINGS:
        assert f"## {heading}" in system
    for demand in ("숫자", "날짜", "금액", "번호", "사람", "인원", "결정", "바뀐 것", "이전 → 현재", "추측", "없음"):
        assert demand in system, demand
    assert "1800" in system  # the size cap is part of the prompt
    assert call.max_tokens == 2048
    # the template in the prompt is itself a valid memo skeleton
    assert memo_problems("\n".join(f"## {h}\n- x" for h in HEADINGS)) == []


async def test_the_summarizer_receives_the_previous_summary_and_the_evicted_messages_as_text():
    model = FakeModel(validate=validate)
    previous = memo(["자전거 자물쇠 번호 4719"])
    await Summarizer(model)(previous, EVICTED)
    [call] = model.calls
    assert len(call.messages) == 1 and call.messages[0]["role"] == "user"
    received = call.messages[0]["content"]
    assert isinstance(received, str)
    assert "generator object" not in received and "<" not in received.split("\n")[0]
    assert previous in received  # the whole previous memo, verbatim
    assert "[2026-11-29 23:05 사용자] 제주도 2박 3일, 어른 둘 아이 둘이에요. 예산 150만 원." in received
    assert "[2026-11-29 23:05 비서] 동쪽 해안 숙소를 추천해요." in received
    assert "[사용자] 둘째 날은 비 와서 실내 일정으로 바꿀게요" in received  # content blocks become text
    assert received.index("4719") < received.index("제주도")  # previous summary first


async def test_first_summary_and_condense_requests():
    model = FakeModel(validate=validate)
    s = Summarizer(model, max_chars=900)
    await s(None, EVICTED[:1])
    first = model.calls[0].messages[0]["content"]
    assert "첫 요약" in first and "제주도" in first
    await s(memo(["긴 메모"]), [])
    condense = model.calls[1].messages[0]["content"]
    assert "긴 메모" in condense and "900" in condense and "새로 밀려난 대화" not in condense


def test_long_messages_are_cut_in_the_middle():
    text = format_messages([{"role": "user", "content": "시작 " + "가" * 20_000 + " 끝 7788"}])
    assert len(text) < 6100 and text.startswith("[사용자] 시작") and text.endswith("끝 7788")


async def test_through_the_assistant_only_evicted_messages_reach_the_summarizer(tmp_path, clock):
    """The Assistant wired to the real Summarizer: what the summarizer model is sent, turn by turn."""
    chat_model = FakeModel(validate=validate)
    summary_model = FakeModel(name="sum-model", validate=validate)
    memos = iter(memo([f"요약 {i}"]) for i in range(100))
    summary_model.queue(*[lambda system, messages: next(memos)] * 100)
    a = Assistant(
        transcript=Transcript(tmp_path / "d"),
        model=chat_model,
        now=clock,
        summarizer=Summarizer(summary_model),
        summary_budget=Budget(trigger_messages=8, keep_messages=4, trigger_chars=50_000, trigger_tokens=50_000),
    )
    for i in range(9):
        await a.ask(1, f"질문 {i:02d}")
        await a.maintain(1)
    # compactions after turns 5 and 8 (10 unsummarized messages each time)
    assert len(summary_model.calls) == 2
    second = summary_model.calls[1].messages[0]["content"]
    assert "요약 0" in second  # the previous summary
    for i in range(3, 6):  # the messages evicted this time
        assert f"질문 {i:02d}" in second and f"echo: 질문 {i:02d}" in second
    for i in (0, 1, 2, 6, 7, 8):  # neither the already summarized nor the kept ones
        assert f"질문 {i:02d}" not in second
    assert a.memory.load(1).model == "sum-model"
    assert a.summary(1) == memo(["요약 1"])
