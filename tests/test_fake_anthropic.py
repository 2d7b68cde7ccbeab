"""The fake Messages API is as strict as the real one, streams tool use as it does, and applies caching rules."""

import httpx
import pytest

from bot.claude.client import ClaudeModel
from bot.claude.model import ModelError
from tests.fakes.anthropic_server import FakeAnthropic, Text, ToolCalls
from tests.fakes.prompt_cache import PromptCache, minimum_tokens

USE = {"type": "tool_use", "id": "toolu_1", "name": "remember", "input": {"text": "x"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
TOOLS = [{"name": "remember", "description": "d", "input_schema": {"type": "object", "properties": {}}}]


def post(server: FakeAnthropic, body: dict) -> httpx.Response:
    body = {"model": "claude-sonnet-4-6", "max_tokens": 10, **body}
    return httpx.post(f"{server.url}/v1/messages", json=body, headers={"x-api-key": "sk-ant-test"}, timeout=10)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"tools": TOOLS, "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [USE]},
                                          {"role": "user", "content": "next"}]},
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1",
        ),
        (
            {"tools": TOOLS, "messages": [{"role": "user", "content": [RESULT]}]},
            "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1",
        ),
        (
            {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [USE]},
                          {"role": "user", "content": [RESULT]}]},
            "Requests which include `tool_use` or `tool_result` blocks must define tools.",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]},
            "text content blocks must be non-empty",
        ),
        ({"messages": [{"role": "user", "content": [{"type": "text", "text": " \n"}]}]}, "non-whitespace text"),
        ({"messages": [{"role": "user", "content": ""}]}, "all messages must have non-empty content"),
        ({"system": [{"type": "text", "text": ""}], "messages": [{"role": "user", "content": "q"}]}, "system: text"),
        (
            {"system": [{"type": "text", "text": f"s{i}", "cache_control": {"type": "ephemeral"}} for i in range(5)],
             "messages": [{"role": "user", "content": "q"}]},
            "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        ),
        ({"messages": [{"role": "assistant", "content": "a"}]}, 'first message must use the "user" role'),
    ],
)  # fmt: skip
def test_malformed_requests_get_400_with_the_real_wording(fake_anthropic: FakeAnthropic, body, message):
    response = post(fake_anthropic, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and message in error["message"]
    assert fake_anthropic.rejected[-1] == error["message"]


def test_a_well_formed_tool_exchange_is_accepted(fake_anthropic: FakeAnthropic):
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [USE]},
                {"role": "user", "content": [RESULT]}]  # fmt: skip
    assert post(fake_anthropic, {"tools": TOOLS, "messages": messages}).status_code == 200
    assert fake_anthropic.rejected == []


async def test_the_real_client_streams_tool_calls_and_reports_a_rejected_request(fake_anthropic: FakeAnthropic):
    model = ClaudeModel("claude-sonnet-4-6", api_key="k", base_url=fake_anthropic.url, max_retries=0)
    call = ("remember", {"text": "생일은 3월 14일", "n": [1, 2, 3]})
    fake_anthropic.reply(ToolCalls([call], text="기억할게요.", chunk=7))
    seen: list[str] = []

    async def on_text(delta: str) -> None:
        seen.append(delta)

    question = [{"role": "user", "content": "q"}]
    system = [{"type": "text", "text": "s"}]
    reply = await model.complete(system=system, messages=question, tools=TOOLS, on_text=on_text)
    assert reply.stop_reason == "tool_use" and "".join(seen) == "기억할게요."
    assert reply.tool_calls[0]["input"] == {"text": "생일은 3월 14일", "n": [1, 2, 3]}  # from input_json_delta pieces
    assert reply.blocks[0] == {"type": "text", "text": "기억할게요."}
    with pytest.raises(ModelError) as e:
        await model.complete(system=[], messages=[{"role": "user", "content": [RESULT]}], tools=TOOLS)
    assert e.value.kind == "bad_request" and "unexpected `tool_use_id`" in str(e.value)
    await model.aclose()


def test_a_tool_call_of_the_current_turn_must_come_back_unmodified(fake_anthropic: FakeAnthropic):
    """Rule (Handle tool calls; Thinking in tool and multi-turn workflows): within the turn the
    assistant content goes back as returned; a completed earlier turn may be rebuilt."""
    fake_anthropic.reply(ToolCalls([("remember", {"text": "x"})]), "ok", "ok")
    question = [{"role": "user", "content": "q"}]
    data = post(fake_anthropic, {"tools": TOOLS, "messages": question}).json()
    use = data["content"][-1]
    assert use["caller"] == {"type": "direct"}
    result = {"type": "tool_result", "tool_use_id": use["id"], "content": "ok"}
    rebuilt = {k: use[k] for k in ("type", "id", "name", "input")}
    for blocks, status in (([rebuilt], 400), ([use], 200)):
        messages = [*question, {"role": "assistant", "content": blocks}, {"role": "user", "content": [result]}]
        assert post(fake_anthropic, {"tools": TOOLS, "messages": messages}).status_code == status
    assert "`tool_use` block differs from the block the API returned" in fake_anthropic.rejected[-1]
    later = [*question, {"role": "assistant", "content": [rebuilt]}, {"role": "user", "content": [result]},
             {"role": "assistant", "content": "done"}, {"role": "user", "content": "next question"}]  # fmt: skip
    assert post(fake_anthropic, {"tools": TOOLS, "messages": later}).status_code == 200


def test_tool_choice_none_gets_a_text_answer(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(ToolCalls([("remember", {"text": "x"})], text="그냥 답할게요."))
    body = {"tools": TOOLS, "tool_choice": {"type": "none"}, "messages": [{"role": "user", "content": "q"}]}
    data = post(fake_anthropic, body).json()
    assert data["stop_reason"] == "end_turn" and data["content"] == [{"type": "text", "text": "그냥 답할게요."}]


# -- prompt caching rules ----------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def body(system_text: str, question: str = "q", *, model: str = "claude-sonnet-4-6", marks: int = 1) -> dict:
    system = [{"type": "text", "text": system_text, "cache_control": {"type": "ephemeral"}}]
    system += [{"type": "text", "text": f"extra {i}", "cache_control": {"type": "ephemeral"}} for i in range(marks - 1)]
    system.append({"type": "text", "text": "지금은 10:00"})
    return {"model": model, "system": system, "messages": [{"role": "user", "content": question}]}


LONG = "stable persona text " * 400  # ~2,400 tokens


def test_a_repeated_prefix_is_written_once_then_read():
    cache = PromptCache(Clock())
    first = cache.apply(body(LONG, "q1"))
    second = cache.apply(body(LONG, "q2"))
    assert first.cache_read == 0 and first.cache_write > 2000
    assert second.cache_read == first.cache_write and second.cache_write == 0
    assert second.input_tokens < 50  # only what follows the breakpoint


def test_a_prefix_under_the_model_minimum_is_never_cached():
    cache = PromptCache(Clock())
    short = "short persona " * 50  # ~200 tokens
    for _ in range(2):
        usage = cache.apply(body(short))
        assert usage.cache_read == 0 and usage.cache_write == 0
    haiku = PromptCache(Clock())
    for _ in range(2):  # ~2,400 tokens: enough for Sonnet, not for Haiku 4.5 (4,096)
        usage = haiku.apply(body(LONG, model="claude-haiku-4-5"))
        assert usage.cache_read == 0 and usage.cache_write == 0
    assert minimum_tokens("claude-haiku-4-5") == 4096 and minimum_tokens("claude-sonnet-4-6") == 1024


def test_any_change_before_the_breakpoint_misses():
    cache = PromptCache(Clock())
    cache.apply(body(LONG))
    changed = cache.apply(body(LONG.replace("stable", "Stable", 1)))
    assert changed.cache_read == 0 and changed.cache_write > 2000


def test_entries_expire_after_five_minutes_without_use():
    clock = Clock()
    cache = PromptCache(clock)
    cache.apply(body(LONG))
    clock.now += 299
    assert cache.apply(body(LONG)).cache_read > 0  # a hit refreshes the lifetime
    clock.now += 299
    assert cache.apply(body(LONG)).cache_read > 0
    clock.now += 301
    assert cache.apply(body(LONG)).cache_read == 0


def test_the_longest_cached_breakpoint_wins_and_a_later_change_keeps_the_earlier_part():
    cache = PromptCache(Clock())
    two = {
        "model": "claude-sonnet-4-6",
        "system": [
            {"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "summary v1 " * 300, "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [{"role": "user", "content": "q"}],
    }
    first = cache.apply(two)
    again = cache.apply(two)
    assert again.cache_read == first.cache_write
    two["system"][1]["text"] = "summary v2 " * 300  # a new summary: breakpoint 2 misses, breakpoint 1 still hits
    after = cache.apply(two)
    assert 0 < after.cache_read < again.cache_read and after.cache_write > 0


def test_the_server_reports_cache_usage_from_the_rules(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Text("a"), Text("b"))
    one = post(fake_anthropic, body(LONG, "q1")).json()["usage"]
    two = post(fake_anthropic, body(LONG, "q2")).json()["usage"]
    assert one["cache_creation_input_tokens"] > 0 and one["cache_read_input_tokens"] == 0
    assert two["cache_read_input_tokens"] == one["cache_creation_input_tokens"]
