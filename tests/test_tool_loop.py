"""The tool loop in ask(): tools run, the whole exchange is one stored turn, replayed valid.

Every request goes through ``FakeModel(validate=...)``: a request the real API would reject
(a tool_use without its tool_result, an empty text block, …) fails the call.
"""

import asyncio
import json
import random

import pytest

from bot.claude.model import FakeModel, ModelError, Reply, tool_call
from bot.core.ask import Assistant, NothingToRetry, Question
from bot.tools import Tool, ToolResult
from memory.content import TOOL_RESULT_MAX_CHARS, display_text
from memory.summary import Budget
from memory.transcript import Transcript
from memory.turns import complete_turns, is_complete, starts_turn
from tests.fakes.messages_rules import validate


def rows(transcript: Transcript, chat=1):
    return [e.data for e in transcript.read(chat)]


async def test_a_tool_round_trip_is_stored_as_one_turn(assistant: Assistant, transcript, fake_model):
    call = tool_call("remember", {"text": "생일은 3월 14일"}, text="기억해 둘게요.")
    fake_model.queue(call, "3월 14일로 기억했어요.")
    shown: list[str] = []

    async def on_text(delta: str) -> None:
        shown.append(delta)

    answer = await assistant.ask(1, "내 생일은 3월 14일이야", on_text=on_text)
    # the text before the tool call was shown as it arrived, then what the tool is doing, then the answer;
    # the progress line is only in the preview, not in the answer
    assert answer.text == "기억해 둘게요.\n\n3월 14일로 기억했어요."
    assert "".join(shown) == "기억해 둘게요.\n\n📝 기억해 두는 중…\n\n3월 14일로 기억했어요."
    assert answer.tool_rounds == 1 and answer.tool_calls == ("remember",)
    stored = rows(transcript)
    assert [m["role"] for m in stored] == ["user", "assistant", "user", "assistant"]
    assert is_complete(stored)
    use = stored[1]["content"][-1]
    assert use["type"] == "tool_use" and use["name"] == "remember" and use["input"] == {"text": "생일은 3월 14일"}
    result = stored[2]["content"][0]
    assert result["tool_use_id"] == use["id"] and "remembered as fact 1" in result["content"]
    assert stored[3]["content"] == "3월 14일로 기억했어요."
    assert [f.text for f in assistant.list_facts(1)] == ["생일은 3월 14일"]
    # the second round carried the call and its result, with the tools still offered
    second = fake_model.calls[1]
    assert [m["role"] for m in second.messages] == ["user", "assistant", "user"]
    assert {t["name"] for t in second.tools} >= {"remember", "forget"}


async def test_the_next_request_replays_the_exchange_and_carries_the_fact(transcript, fake_model, clock, data_dir):
    first = Assistant(transcript=transcript, model=fake_model, now=clock)
    fake_model.queue(tool_call("remember", {"text": "자전거 자물쇠 번호는 4719"}), "기억했어요.")
    await first.ask(1, "내 자전거 자물쇠 번호는 4719야")
    # a new Assistant on the same files: as after a restart
    again = Assistant(transcript=Transcript(data_dir), model=fake_model, now=clock)
    await again.ask(1, "내 자물쇠 번호 뭐였지?")
    call = fake_model.calls[-1]
    assert "[1] 자전거 자물쇠 번호는 4719" in call.system_text
    roles = [m["role"] for m in call.messages]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    use = call.messages[1]["content"][-1]
    assert call.messages[2]["content"][0]["tool_use_id"] == use["id"]
    validate({"system": call.system, "messages": call.messages, "max_tokens": 10, "tools": call.tools})


async def test_at_most_four_tool_rounds_then_an_answer(assistant: Assistant, transcript, fake_model):
    fake_model.queue(*(tool_call("remember", {"text": f"fact {i}"}) for i in range(4)), "다 기억했어요.")
    answer = await assistant.ask(1, "remember four things")
    assert answer.tool_rounds == 4 and len(fake_model.calls) == 5 and answer.text == "다 기억했어요."
    # issue 30 item 5: tool_choice never changes (it would invalidate the cached messages)
    assert [c.tool_choice for c in fake_model.calls] == [None] * 5
    assert all(c.tools == fake_model.calls[0].tools for c in fake_model.calls)  # the cached prefix stays
    assert len(assistant.list_facts(1)) == 4
    stored = rows(transcript)
    assert len(stored) == 10 and is_complete(stored) and stored[-1]["content"] == answer.text


async def test_tool_calls_past_the_limit_are_answered_limit_reached_not_run(
    assistant: Assistant, transcript, fake_model
):
    fake_model.queue(*(tool_call("remember", {"text": f"fact {i}"}) for i in range(7)))
    answer = await assistant.ask(1, "remember seven things")
    assert len(assistant.list_facts(1)) == 4  # only the first four ran
    # the fifth and sixth calls were answered "limit reached", tool_choice unchanged; only then none
    assert [c.tool_choice for c in fake_model.calls] == [None] * 6 + [{"type": "none"}]
    refused = fake_model.calls[5].messages[-1]["content"][0]
    assert refused["is_error"] and "limit of tool calls" in refused["content"]
    assert answer.tool_rounds == 6 and is_complete(rows(transcript))


async def test_a_failure_mid_loop_stores_nothing_but_a_changed_fact_stays(assistant: Assistant, transcript, fake_model):
    fake_model.queue(tool_call("remember", {"text": "알레르기: 땅콩"}), ModelError("overloaded", "529"))
    with pytest.raises(ModelError):
        await assistant.ask(1, "나 땅콩 알레르기 있어")
    assert rows(transcript) == []
    assert [f.text for f in assistant.list_facts(1)] == ["알레르기: 땅콩"]
    fake_model.queue("알겠어요, 기억하고 있어요.")
    q, answer = await assistant.retry(1)
    assert q.text == "나 땅콩 알레르기 있어" and answer.text == "알겠어요, 기억하고 있어요."
    assert [m["content"] for m in rows(transcript)] == ["나 땅콩 알레르기 있어", "알겠어요, 기억하고 있어요."]


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("remember", {"text": ""}, "empty"),
        ("remember", {"text": "x" * 600}, "limit is 500"),
        ("remember", {"text": 42}, "must be a string"),
        ("remember", {"text": "new", "replaces": "7"}, "no fact with id '7'"),
        ("forget", {"id": "99"}, "no fact with id '99'"),
        ("forget", {}, "must be the id"),
    ],
)
async def test_bad_tool_input_gets_an_error_result_not_an_exception(
    assistant: Assistant, transcript, fake_model, name, value, error
):
    fake_model.queue(tool_call(name, value), "죄송해요, 다시 해 볼게요.")
    answer = await assistant.ask(1, "do it")
    assert answer.text == "죄송해요, 다시 해 볼게요."
    result = fake_model.calls[1].messages[-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True and error in result["content"]
    assert rows(transcript)[2]["content"][0]["is_error"] is True
    assert assistant.list_facts(1) == []


def test_an_unknown_tool_name_is_an_error_result_not_an_exception(assistant: Assistant):
    # not through the loop: the model names only declared tools, and the API refuses a request whose
    # history holds a tool_use of an undeclared tool (tests/fakes/messages_rules.py)
    from datetime import UTC, datetime

    from bot.tools import ToolContext

    result = assistant.toolbox.run("teleport", {"to": "Mars"}, ToolContext("1", datetime(2026, 1, 1, tzinfo=UTC)))
    assert result.is_error and "unknown tool 'teleport'" in result.text and "remember" in result.text


async def test_replace_through_the_tool_leaves_one_version(assistant: Assistant, fake_model):
    fake_model.queue(tool_call("remember", {"text": "사는 곳: 서울"}), "ok")
    await assistant.ask(1, "나 서울 살아")
    fake_model.queue(tool_call("remember", {"text": "사는 곳: 부산", "replaces": "1"}), "ok")
    await assistant.ask(1, "부산으로 이사했어")
    result = fake_model.calls[-1].messages[-1]["content"][0]["content"]
    assert "replaced" in result and "서울" in result and "부산" in result
    assert [(f.id, f.text) for f in assistant.list_facts(1)] == [("1", "사는 곳: 부산")]
    fake_model.queue(tool_call("forget", {"id": "1"}), "잊었어요")
    await assistant.ask(1, "그거 잊어줘")
    assert assistant.list_facts(1) == []


async def test_long_tool_results_are_shrunk_before_they_are_stored_and_replayed(transcript, fake_model, clock):
    big = "\n".join(f"row {i}: " + "데이터" * 10 for i in range(2000))
    dump = Tool("dump", "Returns a lot of text.", {"type": "object", "properties": {}}, lambda ctx, v: ToolResult(big))
    a = Assistant(transcript=transcript, model=fake_model, now=clock, tools=[dump])
    fake_model.queue(tool_call("dump", {}), "done")
    await a.ask(1, "dump it")
    stored = rows(transcript)[2]["content"][0]["content"]
    assert len(stored) <= TOOL_RESULT_MAX_CHARS + 10 and stored.startswith("row 0: ") and stored.endswith(big[-50:])
    assert "characters cut" in stored
    sent = fake_model.calls[1].messages[-1]["content"][0]["content"]
    assert sent == stored


async def test_a_cancel_while_a_tool_turn_is_stored_keeps_it_whole(assistant: Assistant, transcript, fake_model):
    fake_model.queue(tool_call("remember", {"text": "x"}), "done")
    task = asyncio.create_task(assistant.ask(1, "q"))
    answer = await task
    assert answer.text == "done" and is_complete(rows(transcript))


def test_history_shows_tool_calls_compactly():
    content = [
        {"type": "text", "text": "기억할게요."},
        {"type": "tool_use", "id": "t1", "name": "remember", "input": {"text": "생일은 3월 14일"}},
    ]
    assert display_text(content) == "기억할게요.\n🔧 remember: 생일은 3월 14일"
    result = [{"type": "tool_result", "tool_use_id": "t1", "content": "remembered as fact 1"}]
    assert display_text(result) == "↳ remembered as fact 1"
    assert "{" not in display_text(content)


# -- the cache-friendly layout -----------------------------------------------------------------------------


def cached_prefix(call) -> str:
    """tools + the system blocks up to the last cache breakpoint, serialized."""
    marks = [i for i, b in enumerate(call.system) if b.get("cache_control")]
    assert marks, "no cache breakpoint at all"
    return json.dumps([call.tools, call.system[: marks[-1] + 1]], ensure_ascii=False, sort_keys=True)


async def test_the_cached_prefix_is_identical_across_turns_and_the_clock_is_not_in_it(
    assistant: Assistant, fake_model, clock
):
    fake_model.queue(tool_call("remember", {"text": "이름은 민지"}), "반가워요 민지")
    await assistant.ask(1, "내 이름은 민지야")
    prefixes, clocks = [], []
    for i in range(3):
        clock.advance(minutes=1)
        await assistant.ask(1, f"질문 {i}")
        call = fake_model.calls[-1]
        prefixes.append(cached_prefix(call))
        clocks.append(next(b["text"] for b in call.system if b["text"].startswith("지금은")))
        last_mark = max(i for i, b in enumerate(call.system) if b.get("cache_control"))
        clock_index = next(i for i, b in enumerate(call.system) if b["text"].startswith("지금은"))
        assert clock_index > last_mark  # the time line comes after every breakpoint
    assert prefixes[0] == prefixes[1] == prefixes[2]  # byte-identical between compactions
    assert len(set(clocks)) == 3  # ... while the time line changed every minute
    assert "이름은 민지" in prefixes[0]  # the facts are inside the cached part


async def test_a_changed_fact_changes_the_prefix_and_nothing_else_does(assistant: Assistant, fake_model, clock):
    await assistant.ask(1, "a")
    await assistant.ask(1, "b")
    one, two = fake_model.calls[-2:]
    assert cached_prefix(one) == cached_prefix(two)
    assistant.remember(1, "좋아하는 색은 초록")
    await assistant.ask(1, "c")
    assert cached_prefix(fake_model.calls[-1]) != cached_prefix(two)


async def test_tool_rounds_mark_the_conversation_for_caching(assistant: Assistant, fake_model):
    fake_model.queue(tool_call("remember", {"text": "x1"}), tool_call("remember", {"text": "x2"}), "done")
    await assistant.ask(1, "q")
    first, second, third = fake_model.calls
    marks = lambda call: sum(  # noqa: E731
        1 for m in call.messages if isinstance(m["content"], list) for b in m["content"] if b.get("cache_control")
    )
    assert marks(first) == 0 and marks(second) == 1 and marks(third) == 1
    assert second.messages[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


# -- randomized: windows and summaries never split a tool call from its result ------------------------------


def _script(rng: random.Random, n: int) -> list:
    items: list = []
    for i in range(n):
        r = rng.random()
        if r < 0.35:
            rounds = rng.randint(1, 3)
            for k in range(rounds):
                name = rng.choice(["remember", "forget"])
                text = f"fact {i}.{k} " + "긴 내용 " * rng.randint(0, 40)
                value = {"text": text} if name == "remember" else {"id": "1"}
                items.append(tool_call(name, value, text=rng.choice(["", "잠깐만요."])))
            items.append("답 " * rng.randint(1, 200))
        elif r < 0.45:
            items.append(ModelError("overloaded"))
        else:
            items.append("답 " * rng.randint(1, 300))
    return items


async def _summarize(previous, messages) -> str:
    from memory.summary import HEADINGS

    return "\n".join(f"## {h}\n- {len(messages)} messages" for h in HEADINGS)


@pytest.mark.parametrize("seed", range(12))
async def test_randomized_histories_always_send_valid_requests(transcript, clock, seed):
    rng = random.Random(seed)
    model = FakeModel(_script(rng, 40), validate=validate)
    a = Assistant(
        transcript=transcript,
        model=model,
        now=clock,
        max_messages=rng.choice([4, 6, 10]),
        max_chars=rng.choice([300, 800, 3000]),
        summarizer=_summarize,
        summary_budget=Budget(trigger_messages=rng.choice([4, 6, 8]), trigger_chars=400, keep_messages=2),
    )
    for i in range(40):
        try:
            if rng.random() < 0.1:
                await a.retry(1)
            else:
                await a.ask(1, Question(f"질문 {i} " + "내용 " * rng.randint(0, 60)))
        except ModelError as e:
            assert e.kind == "overloaded", e  # a bad_request would mean a malformed request
        except NothingToRetry:
            pass
        await a.maintain(1)
        clock.advance(minutes=1)
        summary = a.memory.load(1)
        if summary is not None:  # the summary ends on a turn boundary: no tool result cut off from its call
            after = next(iter(transcript.read(1, start=summary.end)), None)
            assert after is None or starts_turn(after.data), after
    # every stored turn is complete, and the window of what is sent starts and ends on turn boundaries
    stored = rows(transcript)
    assert all(is_complete(turn) for turn in complete_turns(stored))
    assert len(complete_turns(stored)) * 2 <= len(stored)
    assert not any(c for c in model.calls if not c.messages or c.messages[0]["role"] != "user")


async def test_an_unanswered_tool_call_in_a_torn_turn_is_never_sent(transcript, fake_model, clock):
    a = Assistant(transcript=transcript, model=fake_model, now=clock)
    fake_model.queue(tool_call("remember", {"text": "x"}), "done")
    await a.ask(1, "first")
    # a crash mid-write left the next turn without its tool result and answer
    lines = [
        {"role": "user", "content": "torn question", "at": "2026-11-29T23:06:00+09:00"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t9", "name": "forget", "input": {"id": "1"}}]},
    ]
    transcript.append(1, lines)
    await a.ask(1, "next")
    sent = fake_model.calls[-1].messages
    assert [m["content"] for m in sent if isinstance(m["content"], str)][-1] == "next"
    assert "torn question" not in json.dumps(sent, ensure_ascii=False)
    assert isinstance(fake_model.calls[-1], object) and Reply  # the request passed validation
