"""The Claude client and the tool loop on the current models, against the strict fake Messages API.

The fake (tests/fakes/) signs thinking blocks against their prefix and answers 400 for every
request shape the 5.5 documentation refuses, so a request the client builds wrongly fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.claude.client import ClaudeModel
from bot.claude.model import ModelError
from bot.claude.modelinfo import ModelCatalog
from bot.claude.summarizer import Summarizer
from bot.core.ask import Assistant, Question
from memory.transcript import Transcript
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.prompt_cache import segments
from tests.fakes.scripts import (
    ContextExceeded,
    CutToolCall,
    Error,
    PauseTurn,
    Refusal,
    StreamError,
    Text,
    ToolCalls,
)
from tests.helpers import convo, stored, turn_context


def claude(server: FakeAnthropic, data_dir: Path, model: str = "claude-sonnet-5-5", **kw) -> ClaudeModel:
    kw.setdefault("effort", "medium")
    return ClaudeModel(
        model, api_key="sk-test", base_url=server.url, max_retries=0, timeout=30.0, catalog=ModelCatalog(data_dir), **kw
    )


def make_assistant(server: FakeAnthropic, data_dir: Path, model: str = "claude-sonnet-5-5") -> Assistant:
    return Assistant(transcript=Transcript(data_dir), model=claude(server, data_dir, model))


async def test_a_tool_round_sends_the_thinking_back_verbatim_and_stores_the_turn_without_it(
    fake_anthropic: FakeAnthropic, data_dir: Path
):
    assistant = make_assistant(fake_anthropic, data_dir)
    call = ToolCalls([("remember", {"text": "생일은 3월 14일"})], text="기억해 둘게요")
    fake_anthropic.reply(call, Text("기억했어요."))
    shown: list[str] = []

    async def on_text(delta: str) -> None:
        shown.append(delta)

    answer = await assistant.ask(1, "내 생일은 3월 14일이야", on_text=on_text)
    assert answer.text == "기억했어요." and answer.tool_calls == ("remember",)
    assert fake_anthropic.rejected == []  # the fake checks every signature and its prefix
    first, second = fake_anthropic.requests[-2:]
    sent_back = second["messages"][-2]
    assert sent_back["role"] == "assistant"
    # exactly the blocks of the first reply: thinking (with its signature) first, then the tool call
    kinds = [b["type"] for b in sent_back["content"]]
    assert kinds[0] == "thinking" and kinds[-1] == "tool_use" and sent_back["content"][0]["signature"]
    assert sent_back["content"][-1]["caller"] == {"type": "direct"}  # every field as received (issue 30 item 2)
    # the per-turn context (with the time) follows the question; both rounds send one system prompt
    # (that it has no clock is test_the_next_question_reads_the_last_one_from_the_cache's)
    assert first["system"] == second["system"] and "(한국 시각)이다." in turn_context(first)
    assert first["output_config"] == {"effort": "medium"} and "thinking" not in first
    # the preview said what was going on between the tool calls (the 5.5 models write that as thinking)
    assert "".join(shown) == "📝 기억해 두는 중…\n\n기억했어요."
    rows = stored(data_dir, 1)
    assert [r["role"] for r in rows] == ["user", "assistant", "user", "assistant"]
    assert "thinking" not in json.dumps(rows)  # a completed turn is stored without its thinking

    # the next turn replays the stored turn (no thinking: allowed; the new fact changed the system
    # prompt, so little of it is cached: test_the_next_question_reads_the_last_one_from_the_cache)
    fake_anthropic.reply(Text("3월 14일이에요."))
    await assistant.ask(1, "내 생일 언제야?")
    third = fake_anthropic.requests[-1]
    assert fake_anthropic.rejected == []
    assert [m["role"] for m in convo(third)] == ["user", "assistant", "user", "assistant", "user"]
    assert "[1] 생일은 3월 14일" in json.dumps(third["system"], ensure_ascii=False)


async def test_the_next_question_reads_the_last_one_from_the_cache(
    fake_anthropic: FakeAnthropic, data_dir: Path, clock
):
    """Asked 95 minutes later, the next question sends the same system prompt (the time is in the
    turn's own context, after the question) and reads the prompt through the last question from the
    cache: that question carried a cache breakpoint."""
    assistant = make_assistant(fake_anthropic, data_dir)
    assistant.now = clock
    fake_anthropic.reply(Text("좋은 아침이에요."))
    await assistant.ask(1, "좋은 아침! 오늘 할 일을 같이 정리해 줄래? 장보기, 운동, 책 읽기가 있어.")
    clock.advance(minutes=95)
    fake_anthropic.reply(Text("운동부터 하세요."))
    later = await assistant.ask(1, "뭐부터 할까?")
    first, second = fake_anthropic.requests[-2:]
    assert fake_anthropic.rejected == []
    assert second["system"] == first["system"] and turn_context(second) != turn_context(first)
    segs = segments(second)
    first_question = next(i for i, seg in enumerate(segs) if seg.in_messages)
    assert later.usage.cache_read_tokens >= sum(seg.tokens for seg in segs[: first_question + 1])


async def test_a_refusal_stores_nothing_and_is_not_kept_for_retry(fake_anthropic: FakeAnthropic, data_dir: Path):
    assistant = make_assistant(fake_anthropic, data_dir)
    fake_anthropic.reply(Refusal(text="I can"))
    with pytest.raises(ModelError) as e:
        await assistant.ask(1, "something refused")
    assert e.value.kind == "refusal"
    assert stored(data_dir, 1) == []
    assert assistant.pending.load(1) is None and "1" not in assistant._failed


async def test_max_tokens_in_a_tool_call_never_runs_it(fake_anthropic: FakeAnthropic, data_dir: Path):
    assistant = make_assistant(fake_anthropic, data_dir)
    fake_anthropic.reply(CutToolCall("remember", {"text": "차 번호는 12가 3456"}))
    with pytest.raises(ModelError) as e:
        await assistant.ask(1, "내 차 번호 기억해")
    assert e.value.kind == "cut"
    assert assistant.list_facts(1) == [] and stored(data_dir, 1) == []  # the truncated call never ran
    assert len(fake_anthropic.requests) == 1


async def test_a_context_window_cut_is_stored_and_said(fake_anthropic: FakeAnthropic, data_dir: Path):
    assistant = make_assistant(fake_anthropic, data_dir)
    fake_anthropic.reply(ContextExceeded(text="The answer so far"))
    answer = await assistant.ask(1, "a long question")
    assert answer.text.startswith("The answer so far") and "/reset" in answer.text
    assert stored(data_dir, 1)[-1]["content"] == "The answer so far"  # the notice is shown, not stored


async def test_pause_turn_is_continued_with_the_paused_content(fake_anthropic: FakeAnthropic, data_dir: Path):
    assistant = make_assistant(fake_anthropic, data_dir)
    fake_anthropic.reply(PauseTurn(), Text("다 찾았어요."))
    answer = await assistant.ask(1, "최신 뉴스 찾아 줘")
    assert answer.text == "다 찾았어요." and fake_anthropic.rejected == []
    resumed = fake_anthropic.requests[-1]["messages"][-1]
    assert resumed["role"] == "assistant" and resumed["content"][-1]["type"] == "server_tool_use"


@pytest.mark.parametrize(
    ("script", "kind"),
    [
        # inside the stream (HTTP 200 and an error event): by the error's type, whatever its message says
        (StreamError(text="부분", type="overloaded_error", message="Please try again later"), "overloaded"),
        (StreamError(type="rate_limit_error", message="Slow down"), "rate_limit"),
        (StreamError(type="api_error", message="Internal"), "server"),
        (Error.unknown_model("claude-sonnet-5-5"), "not_found"),
        (Error.too_large(), "too_large"),
    ],
)
async def test_errors_are_classified_by_type(fake_anthropic: FakeAnthropic, data_dir: Path, script, kind):
    model = claude(fake_anthropic, data_dir)
    fake_anthropic.reply(script)
    with pytest.raises(ModelError) as e:
        await model.complete(system=[{"type": "text", "text": "sys"}], messages=[{"role": "user", "content": "hi"}])
    assert e.value.kind == kind


@pytest.mark.parametrize(
    ("model", "shape"),
    [
        ("claude-sonnet-5-5", {"thinking": {"type": "between_tools"}, "output_config": {"effort": "low"}}),
        ("claude-opus-5-5", {"output_config": {"effort": "low"}}),  # thinking always on: no thinking field
        # Haiku 5.5 and Opus 5 turn thinking off with ``disabled`` (accepted at effort high or below; the
        # summarizer asks for the lowest); Haiku 5.5 has no ``between_tools`` (What's new in Claude Haiku 5.5)
        ("claude-haiku-5-5", {"thinking": {"type": "disabled"}, "output_config": {"effort": "low"}}),
        ("claude-sonnet-4-6", {"thinking": {"type": "disabled"}, "output_config": {"effort": "low"}}),
        ("claude-haiku-4-5", {"thinking": {"type": "disabled"}}),  # no effort parameter
    ],
)
async def test_the_summarizer_asks_for_the_least_thinking_each_model_accepts(
    fake_anthropic: FakeAnthropic, data_dir: Path, model: str, shape: dict
):
    fake_anthropic.reply(Text("## 메모\n요약"))
    summarizer = Summarizer(claude(fake_anthropic, data_dir, model, purpose="lowest"), max_tokens=8192)
    assert await summarizer(None, [{"role": "user", "content": "안녕", "at": "2026-12-01T10:00:00+09:00"}])
    body = fake_anthropic.requests[-1]
    assert fake_anthropic.rejected == []
    assert {k: body[k] for k in ("thinking", "output_config") if k in body} == shape


async def test_capabilities_are_read_once_and_kept(fake_anthropic: FakeAnthropic, data_dir: Path):
    model = claude(fake_anthropic, data_dir)
    info = await model.info()
    assert info.max_tokens == 128_000 and info.thinking_type("between_tools") and "xhigh" in info.efforts()
    lookups = len(fake_anthropic.model_lookups)
    again = claude(fake_anthropic, data_dir)  # a restart: read from DATA_DIR/models.json
    assert (await again.info()).max_input_tokens == 1_000_000
    assert len(fake_anthropic.model_lookups) == lookups
    assert json.loads((data_dir / "models.json").read_text())["models"]["claude-sonnet-5-5"]["max_tokens"] == 128_000


async def test_an_endpoint_without_the_models_api_gets_the_api_defaults(fake_anthropic: FakeAnthropic, data_dir: Path):
    fake_anthropic.models_endpoint = False
    model = claude(fake_anthropic, data_dir)
    fake_anthropic.reply(Text("네"))
    reply = await model.complete(system=[{"type": "text", "text": "s"}], messages=[{"role": "user", "content": "hi"}])
    assert reply.text == "네"
    body = fake_anthropic.requests[-1]
    assert "thinking" not in body and "output_config" not in body and fake_anthropic.rejected == []
    assert await model.wants_system_messages() is False  # the layout every model takes


async def test_without_the_models_api_the_time_line_stays_in_the_system_prompt(
    fake_anthropic: FakeAnthropic, data_dir: Path
):
    fake_anthropic.models_endpoint = False
    assistant = make_assistant(fake_anthropic, data_dir)
    fake_anthropic.reply(Text("네"))
    await assistant.ask(1, "안녕")
    body = fake_anthropic.requests[-1]
    assert all(m["role"] != "system" for m in body["messages"]) and "(한국 시각)이다." in body["system"][-1]["text"]


async def test_max_tokens_is_capped_at_the_models_limit(fake_anthropic: FakeAnthropic, data_dir: Path):
    model = claude(fake_anthropic, data_dir, "claude-sonnet-4-6", max_tokens=500_000)
    fake_anthropic.reply(Text("네"))
    await model.complete(system=[{"type": "text", "text": "s"}], messages=[{"role": "user", "content": "hi"}])
    assert fake_anthropic.requests[-1]["max_tokens"] == 64_000


async def test_a_model_without_system_messages_gets_the_time_in_the_system_prompt(
    fake_anthropic: FakeAnthropic, data_dir: Path
):
    """Issue 30 item 3: no model is tried with a system message unless its documentation says it takes one."""
    assistant = make_assistant(fake_anthropic, data_dir, "claude-sonnet-4-6")
    fake_anthropic.reply(Text("안녕하세요"))
    assert (await assistant.ask(1, "안녕")).text == "안녕하세요"
    answered = fake_anthropic.requests[-1]
    assert fake_anthropic.rejected == [] and len(fake_anthropic.requests) == 1
    assert all(m["role"] != "system" for m in answered["messages"])
    assert "(한국 시각)이다." in answered["system"][-1]["text"]


@pytest.mark.parametrize(
    ("model", "wanted"),
    [("claude-sonnet-5-5", True), ("claude-opus-5-5", False), ("claude-haiku-5-5", False), ("claude-fable-5-2", False),
     ("claude-sonnet-4-6", False)],
)  # fmt: skip
async def test_system_messages_come_from_the_documentation_and_survive_a_refresh(
    fake_anthropic: FakeAnthropic, data_dir: Path, model: str, wanted: bool
):
    """Issue 33 (modelinfo.py:211), replaced: the choice is by documented model id, so ``/model refresh``
    (a new Models API read) cannot forget or change it."""
    m = claude(fake_anthropic, data_dir, model)
    assert await m.wants_system_messages() is wanted
    await m.fetch_info()  # /model refresh
    assert await claude(fake_anthropic, data_dir, model).wants_system_messages() is wanted


async def test_a_documented_model_that_refuses_the_system_message_still_answers(
    fake_anthropic: FakeAnthropic, data_dir: Path
):
    """Were a documented model to answer 400 (documented type invalid_request_error), the question is asked
    again in the layout every model takes; nothing is learned from the message's wording."""
    fake_anthropic.add_model("claude-sonnet-5-5-20260928", "claude-sonnet-5-5", system_messages=False)
    assistant = make_assistant(fake_anthropic, data_dir, "claude-sonnet-5-5-20260928")
    for n in (1, 2):
        fake_anthropic.reply(Text(f"답 {n}"))
        assert (await assistant.ask(1, f"질문 {n}")).text == f"답 {n}"
        refused, answered = fake_anthropic.requests[-2:]
        assert refused["messages"][-1]["role"] == "system" and len(fake_anthropic.rejected) == n
        assert all(m["role"] != "system" for m in answered["messages"])


@pytest.mark.parametrize("script", [Refusal(text="I can"), Text("")], ids=["refusal", "empty"])
async def test_a_refused_or_empty_answer_is_charged_with_its_searches(
    fake_anthropic: FakeAnthropic, data_dir: Path, script
):
    """Issue 29 item 4: the API bills a refusal and an empty answer; the asker is charged, searches included."""
    from bot.core.ask import Spend

    spent: list[Spend] = []
    assistant = make_assistant(fake_anthropic, data_dir)
    assistant.on_spend = spent.append
    script.usage.update({"input_tokens": 150_300, "server_tool_use": {"web_search_requests": 2}})
    fake_anthropic.reply(script)
    with pytest.raises(ModelError) as e:
        await assistant.ask(1, Question("뭐든", user_id=7))
    assert e.value.kind == ("refusal" if isinstance(script, Refusal) else "empty")
    assert [(s.user_id, s.usage.input_tokens, s.usage.web_searches) for s in spent] == [(7, 150_300, 2)]
    assert stored(data_dir, 1) == []


async def test_a_refused_summary_is_charged(fake_anthropic: FakeAnthropic, data_dir: Path):
    charged: list[tuple[int, str]] = []
    summarize = Summarizer(claude(fake_anthropic, data_dir), on_usage=lambda u, m: charged.append((u.input_tokens, m)))
    fake_anthropic.reply(Refusal(usage={"input_tokens": 4321}))
    with pytest.raises(ModelError):
        await summarize(None, [{"role": "user", "content": "x"}])
    assert charged == [(4321, "claude-sonnet-5-5")]


async def test_the_round_after_the_limit_reads_the_cached_messages(fake_anthropic: FakeAnthropic, data_dir: Path):
    """Issue 30 item 5: past the tool-round limit the request keeps its tool_choice, so the cached messages
    (the question and the first round) are read, not written again (the fake applies the prompt caching
    page's rule: a changed tool_choice invalidates the message blocks' cache)."""
    from bot.core.ask import Spend

    spent: list[Spend] = []
    assistant = Assistant(transcript=Transcript(data_dir), model=claude(fake_anthropic, data_dir), max_tool_rounds=1)
    assistant.on_spend = spent.append
    fake_anthropic.reply(ToolCalls([("remember", {"text": "a"})]), ToolCalls([("remember", {"text": "b"})]), Text("끝"))
    answer = await assistant.ask(1, "기억해 " + "가나다라마바사 " * 200)
    assert answer.text == "끝" and fake_anthropic.rejected == []
    assert all("tool_choice" not in r for r in fake_anthropic.requests)
    first, second, last = (s.usage for s in spent)
    # every call reads what the call before it cached: the whole prefix up to its last breakpoint
    assert second.cache_read_tokens >= first.cache_read_tokens + first.cache_write_tokens
    assert last.cache_read_tokens >= second.cache_read_tokens + second.cache_write_tokens
    assert [f.text for f in assistant.list_facts(1)] == ["a"]  # the call past the limit did not run


async def test_after_a_fact_changes_the_tools_and_persona_are_still_read_from_the_cache(
    fake_anthropic: FakeAnthropic, data_dir: Path
):
    """bench.prompt_cache --people: the ideal reads the unchanged tools and persona after a fact changed;
    a breakpoint on the persona (and only one breakpoint in a later round's messages, within the 4) does."""
    from bot.core.ask import Spend

    spent: list[Spend] = []
    assistant = make_assistant(fake_anthropic, data_dir)
    assistant.on_spend = spent.append
    fake_anthropic.reply(ToolCalls([("remember", {"text": "생일은 3월 14일"})]), Text("기억했어요."), Text("네"))
    await assistant.ask(1, "내 생일은 3월 14일이야")
    await assistant.ask(1, "고마워")  # the facts in the system prompt changed since the last request
    assert fake_anthropic.rejected == []
    assert spent[-1].usage.cache_read_tokens >= 512  # tools and persona, read
