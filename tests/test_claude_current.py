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
from bot.core.ask import Assistant
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
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(api_key="sk-test", base_url=server.url, max_retries=0, timeout=30.0)
    kw.setdefault("effort", "medium")
    return ClaudeModel(model, client=client, catalog=ModelCatalog(data_dir), **kw)


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
    assistant = make_assistant(fake_anthropic, data_dir, "claude-sonnet-4-6")
    fake_anthropic.reply(Text("안녕하세요"))
    assert (await assistant.ask(1, "안녕")).text == "안녕하세요"
    # the first try was refused, learned and kept; then the old layout
    refused, answered = fake_anthropic.requests[-2:]
    assert refused["messages"][-1]["role"] == "system" and len(fake_anthropic.rejected) == 1
    assert all(m["role"] != "system" for m in answered["messages"])
    assert "(한국 시각)이다." in answered["system"][-1]["text"]
    assert ModelCatalog(data_dir).get("claude-sonnet-4-6").system_messages is False
    fake_anthropic.reply(Text("또 안녕"))
    await assistant.ask(1, "또")
    assert len(fake_anthropic.rejected) == 1  # never tried again
