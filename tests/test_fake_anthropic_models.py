"""The fake Messages API knows the current models: the Models API, thinking blocks bound to their
prefix, the 5.5 models' refused request shapes, and the stop reasons and errors tests can ask for.

Every test goes through real HTTP (the Anthropic SDK or httpx) and fails if its rule is removed.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import pytest

from tests.fakes.anthropic_server import (
    MAGIC_REFUSAL,
    ContextExceeded,
    CutToolCall,
    Error,
    FakeAnthropic,
    PauseTurn,
    Refusal,
    StreamError,
    Text,
    ToolCalls,
)

TOOLS = [{"name": "remember", "description": "d", "input_schema": {"type": "object", "properties": {}}}]
KEY = {"x-api-key": "sk-ant-test"}


def sdk(server: FakeAnthropic) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-ant-test", base_url=server.url, max_retries=0)


def post(server: FakeAnthropic, body: dict[str, Any]) -> httpx.Response:
    body = {"model": "claude-sonnet-5-5", "max_tokens": 1000, **body}
    return httpx.post(f"{server.url}/v1/messages", json=body, headers=KEY, timeout=10)


def rejected(response: httpx.Response) -> str:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    return str(error["message"])


# -- Models API ------------------------------------------------------------------------------------


def test_models_retrieve_gives_limits_and_capabilities_in_the_sdk_shape(fake_anthropic: FakeAnthropic):
    info = sdk(fake_anthropic).models.retrieve("claude-sonnet-5-5")
    assert info.id == "claude-sonnet-5-5" and info.type == "model" and info.display_name == "Claude Sonnet 5.5"
    assert info.max_input_tokens == 1_000_000 and info.max_tokens == 128_000
    caps = info.capabilities
    assert caps is not None
    assert caps.thinking.types.adaptive.supported and caps.thinking.types.between_tools.supported
    assert not caps.thinking.types.disabled.supported and not caps.thinking.types.enabled.supported
    assert caps.effort.supported and caps.effort.xhigh is not None and caps.effort.xhigh.supported
    assert caps.image_input.supported and caps.pdf_input.supported and caps.citations.supported
    old = sdk(fake_anthropic).models.retrieve("claude-haiku-4-5").capabilities
    assert old is not None and not old.effort.supported and old.thinking.types.disabled.supported


def test_models_list_is_paginated_newest_first(fake_anthropic: FakeAnthropic):
    client = sdk(fake_anthropic)
    everything = [m.id for m in client.models.list(limit=1000)]
    assert "claude-sonnet-5-5" in everything and "claude-sonnet-4-6" in everything
    assert everything.index("claude-sonnet-5-5") < everything.index("claude-sonnet-4-6")
    first = client.models.list(limit=2)
    assert len(first.data) == 2 and first.has_more
    second = client.models.list(limit=2, after_id=first.data[-1].id)
    assert [m.id for m in second.data] == everything[2:4]
    assert [m.id for m in client.models.list(limit=3)] == everything  # the SDK pages through


def test_unknown_model_is_404_and_the_endpoint_can_be_absent(fake_anthropic: FakeAnthropic):
    with pytest.raises(anthropic.NotFoundError) as e:
        sdk(fake_anthropic).models.retrieve("claude-typo")
    assert e.value.body["error"] == {"type": "not_found_error", "message": "model: claude-typo"}  # type: ignore[index]
    fake_anthropic.models_endpoint = False  # a compatible endpoint without the Models API
    for path in ("/v1/models", "/v1/models/claude-sonnet-5-5"):
        assert httpx.get(f"{fake_anthropic.url}{path}", headers=KEY).status_code == 404
    assert post(fake_anthropic, {"messages": [{"role": "user", "content": "q"}]}).status_code == 200
    assert len(fake_anthropic.model_lookups) == 3


def test_added_models_and_the_models_restriction_show_in_the_list(fake_anthropic: FakeAnthropic):
    fake_anthropic.add_model("claude-test-1", "claude-sonnet-5-5", max_input_tokens=5000)
    fake_anthropic.models = {"claude-test-1"}
    listed = sdk(fake_anthropic).models.list()
    assert [m.id for m in listed.data] == ["claude-test-1"] and listed.data[0].max_input_tokens == 5000


# -- thinking ----------------------------------------------------------------------------------------


def test_a_5_5_reply_streams_a_signed_thinking_block_before_the_text(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Text("답이에요.", thinking="생각 중", redacted=True))
    events: list[str] = []
    with sdk(fake_anthropic).messages.stream(
        model="claude-sonnet-5-5", max_tokens=1000, messages=[{"role": "user", "content": "q"}],
        thinking={"type": "adaptive", "display": "summarized"},
    ) as s:  # fmt: skip
        for event in s:
            if event.type == "content_block_delta":
                events.append(event.delta.type)
        final = s.get_final_message()
    assert [b.type for b in final.content] == ["thinking", "redacted_thinking", "text"]
    assert final.content[0].thinking == "생각 중" and final.content[0].signature  # type: ignore[union-attr]
    assert events.count("thinking_delta") >= 1 and events.count("signature_delta") == 1
    assert events.index("signature_delta") > events.index("thinking_delta")


def test_thinking_is_omitted_by_default_on_5_5_and_absent_on_4_6(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Text("a", thinking="secret"), Text("b", thinking="secret"))
    new = sdk(fake_anthropic).messages.create(model="claude-sonnet-5-5", max_tokens=100,
                                              messages=[{"role": "user", "content": "q"}])  # fmt: skip
    assert new.content[0].type == "thinking" and new.content[0].thinking == ""  # display omitted
    old = sdk(fake_anthropic).messages.create(model="claude-sonnet-4-6", max_tokens=100,
                                              messages=[{"role": "user", "content": "q"}])  # fmt: skip
    assert [b.type for b in old.content] == ["text"]


def tool_round(server: FakeAnthropic, model: str = "claude-sonnet-5-5", **extra: Any) -> tuple[dict, dict]:
    """One tool call; returns the first request body and the reply's JSON."""
    server.reply(ToolCalls([("remember", {"text": "x"})], text="기억을 찾는 중…", redacted=True))
    body = {"model": model, "max_tokens": 1000, "tools": TOOLS, "system": "s",
            "messages": [{"role": "user", "content": "q"}], **extra}  # fmt: skip
    reply = httpx.post(f"{server.url}/v1/messages", json=body, headers=KEY).json()
    return body, reply


def continuation(body: dict, content: list[dict]) -> dict:
    use = next(b for b in content if b["type"] == "tool_use")
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": "ok"}]}
    return {**body, "messages": [*body["messages"], {"role": "assistant", "content": content}, result]}


def test_the_tool_progress_note_comes_back_as_thinking_on_5_5(fake_anthropic: FakeAnthropic):
    _, reply = tool_round(fake_anthropic, thinking={"type": "between_tools"})
    assert [b["type"] for b in reply["content"]] == ["thinking", "tool_use"]
    assert reply["content"][0]["thinking"] == "기억을 찾는 중…"
    _, old = tool_round(fake_anthropic, "claude-sonnet-4-6")
    assert [b["type"] for b in old["content"]] == ["text", "tool_use"]


def test_a_tool_continuation_sent_back_verbatim_is_accepted(fake_anthropic: FakeAnthropic):
    body, reply = tool_round(fake_anthropic)
    assert [b["type"] for b in reply["content"]] == ["thinking", "redacted_thinking", "thinking", "tool_use"]
    response = post(fake_anthropic, continuation(body, reply["content"]))
    assert response.status_code == 200, response.text


def test_a_tool_continuation_without_its_thinking_is_refused(fake_anthropic: FakeAnthropic):
    body, reply = tool_round(fake_anthropic)
    without = [b for b in reply["content"] if b["type"] not in ("thinking", "redacted_thinking")]
    message = rejected(post(fake_anthropic, continuation(body, without)))
    assert message.startswith(
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. "
        "When `thinking` is enabled, a final `assistant` message must start"
    )


def test_an_altered_thinking_block_is_refused(fake_anthropic: FakeAnthropic):
    body, reply = tool_round(fake_anthropic, thinking={"type": "adaptive", "display": "summarized"})
    content = [dict(b) for b in reply["content"]]
    content[0]["thinking"] += " (edited)"
    assert rejected(post(fake_anthropic, continuation(body, content))) == (
        "messages.1.content.0: Invalid `signature` in `thinking` block"
    )


def test_a_changed_prefix_fails_the_prefix_check(fake_anthropic: FakeAnthropic):
    body, reply = tool_round(fake_anthropic)
    changed = {**continuation(body, reply["content"]), "system": "s, but at 10:01"}
    message = rejected(post(fake_anthropic, changed))
    assert message == (
        "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different "
        'conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
    )
    fake_anthropic.prefix_mismatch = "drop"  # older accounts: the blocks are dropped without an error
    assert post(fake_anthropic, changed).status_code == 200
    body, reply = tool_round(fake_anthropic, "claude-sonnet-4-6", thinking={"type": "adaptive"})
    changed = {**continuation(body, reply["content"]), "system": "s, but at 10:01"}
    fake_anthropic.prefix_mismatch = "error"
    assert post(fake_anthropic, changed).status_code == 200  # 4.6 has no preserved thinking


def two_turns(server: FakeAnthropic) -> tuple[dict, list[dict]]:
    """A finished first turn (thinking + text) and the second turn's tool call, as sent back."""
    server.reply(Text("첫 답", thinking="t1"))
    first = {"model": "claude-sonnet-5-5", "max_tokens": 1000, "tools": TOOLS, "system": "s",
             "messages": [{"role": "user", "content": "q1"}]}  # fmt: skip
    answer = httpx.post(f"{server.url}/v1/messages", json=first, headers=KEY).json()["content"]
    second = {**first, "messages": [*first["messages"], {"role": "assistant", "content": answer},
                                     {"role": "user", "content": "q2"}]}  # fmt: skip
    server.reply(ToolCalls([("remember", {"text": "y"})], thinking="t2"))
    reply = httpx.post(f"{server.url}/v1/messages", json=second, headers=KEY).json()["content"]
    return second, reply


def test_thinking_of_completed_turns_may_be_dropped_but_not_between_others(fake_anthropic: FakeAnthropic):
    second, reply = two_turns(fake_anthropic)
    full = continuation(second, reply)
    assert post(fake_anthropic, full).status_code == 200
    dropped = [dict(m) for m in full["messages"]]
    dropped[1] = {"role": "assistant", "content": [b for b in dropped[1]["content"] if b["type"] == "text"]}
    assert post(fake_anthropic, {**full, "messages": dropped}).status_code == 200  # earlier turn's thinking left out
    edited = [dict(m) for m in full["messages"]]
    edited[2] = {"role": "user", "content": "q2 (edited)"}
    assert "bound to a different conversation" in rejected(post(fake_anthropic, {**full, "messages": edited}))


def test_a_thinking_block_left_out_between_others_fails(fake_anthropic: FakeAnthropic):
    body, reply = tool_round(fake_anthropic)  # thinking, redacted_thinking, thinking, tool_use
    gap = [reply["content"][0], *reply["content"][2:]]
    assert "bound to a different conversation" in rejected(post(fake_anthropic, continuation(body, gap)))
    # the same in a completed earlier turn: its first block kept, the redacted one after it left out
    fake_anthropic.reply(Text("첫 답", redacted=True))
    first = {**body, "messages": [{"role": "user", "content": "q1"}]}
    answer = httpx.post(f"{fake_anthropic.url}/v1/messages", json=first, headers=KEY).json()["content"]
    assert [b["type"] for b in answer] == ["thinking", "redacted_thinking", "text"]
    second = {**first, "messages": [*first["messages"], {"role": "assistant", "content": answer},
                                     {"role": "user", "content": "q2"}]}  # fmt: skip
    fake_anthropic.reply(ToolCalls([("remember", {"text": "y"})]))
    reply = httpx.post(f"{fake_anthropic.url}/v1/messages", json=second, headers=KEY).json()["content"]
    full = continuation(second, reply)
    assert post(fake_anthropic, full).status_code == 200
    messages = [dict(m) for m in full["messages"]]
    messages[1] = {"role": "assistant", "content": [answer[0], answer[2]]}
    message = rejected(post(fake_anthropic, {**full, "messages": messages}))
    assert message.startswith("messages.3.content.0: Invalid `signature` in `thinking` block. The block is bound")


# -- request shapes the 5.5 models refuse ---------------------------------------------------------------

Q = [{"role": "user", "content": "q"}]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"thinking": {"type": "disabled"}}, '"thinking.type.disabled" is not supported for this model. Use '
                                             '"thinking.type.between_tools"'),
        ({"thinking": {"type": "enabled", "budget_tokens": 2000}}, '"thinking.type.enabled" is not supported'),
        ({"temperature": 0.5}, "temperature is deprecated for this model"),
        ({"top_p": 0.9}, "top_p is deprecated for this model"),
        ({"top_k": 5}, "top_k is deprecated for this model"),
        ({"temperature": 0}, "temperature is deprecated for this model"),
        ({"messages": [*Q, {"role": "assistant", "content": "The answer is"}]},
         "This model does not support assistant message prefill."),
        ({"tools": TOOLS, "tool_choice": {"type": "any"}}, "\"tool_choice.type."),
        ({"tools": TOOLS, "tool_choice": {"type": "tool", "name": "remember"}}, "\"tool_choice.type."),
        ({"output_config": {"effort": "extreme"}}, "output_config.effort: Input should be 'low', 'medium'"),
        ({"thinking": {"type": "between_tools"}, "output_config": {"effort": "max"}},
         '"thinking.type.between_tools" is not supported with effort "max"'),
        ({"max_tokens": 128_001}, "max_tokens: 128001 > 128000, which is the maximum allowed number of output "
                                  "tokens for claude-sonnet-5-5"),
    ],
)  # fmt: skip
def test_the_5_5_models_refuse_what_the_docs_say(fake_anthropic: FakeAnthropic, body: dict, message: str):
    assert message in rejected(post(fake_anthropic, {"messages": Q, **body}))


@pytest.mark.parametrize(
    "body",
    [
        {"thinking": {"type": "disabled"}},
        {"temperature": 0.5},
        {"messages": [*Q, {"role": "assistant", "content": "The answer is"}]},
        {"tools": TOOLS, "tool_choice": {"type": "any"}},
        {"max_tokens": 64_000},
    ],
)
def test_the_same_shapes_keep_working_where_they_did(fake_anthropic: FakeAnthropic, body: dict):
    model = "claude-sonnet-4-5"  # no prefill ban before 4.6
    assert post(fake_anthropic, {"model": model, "messages": Q, **body}).status_code == 200


def test_between_tools_effort_and_mid_conversation_system_messages_on_5_5(fake_anthropic: FakeAnthropic):
    turns = [*Q, {"role": "assistant", "content": "a"}, {"role": "user", "content": "q2"},
             {"role": "system", "content": "지금은 10:01"}]  # fmt: skip
    ok = {"thinking": {"type": "between_tools"}, "output_config": {"effort": "low"}, "messages": turns}
    assert post(fake_anthropic, ok).status_code == 200
    followed = [*turns, {"role": "assistant", "content": "b"}, {"role": "user", "content": "q3"}]
    assert post(fake_anthropic, {**ok, "messages": followed}).status_code == 200
    misplaced = [*Q, {"role": "assistant", "content": "a"}, {"role": "system", "content": "x"},
                 {"role": "user", "content": "q2"}]  # fmt: skip
    assert rejected(post(fake_anthropic, {"messages": misplaced})).startswith(
        "messages.2: a `system` message must come right after a `user` message"
    )
    old = post(fake_anthropic, {**ok, "model": "claude-sonnet-4-6", "thinking": {"type": "adaptive"}})
    assert rejected(old) == "messages.3: role 'system' is not supported on this model"


def test_the_context_window_is_the_models(fake_anthropic: FakeAnthropic):
    fake_anthropic.add_model("claude-small", "claude-sonnet-5-5", max_input_tokens=500)
    big = [{"role": "user", "content": "말" * 600}]
    assert rejected(post(fake_anthropic, {"model": "claude-small", "messages": big})).startswith("prompt is too long: ")
    assert post(fake_anthropic, {"model": "claude-small", "messages": Q}).status_code == 200


# -- what the fake still accepted (issue 22 item 4) -------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"model": "claude-sonnet-4-6", "stream_mode": "fast"}, "stream_mode: Extra inputs are not permitted"),
        ({"messages": [{"role": "user", "content": "q", "at": "2026-12-01T10:00"}]},
         "messages.0.at: Extra inputs are not permitted"),
        ({"messages": [{"role": "user", "content": [{"type": "txt", "text": "q"}]}]},
         "messages.0.content.0: Input tag 'txt' found using 'type' does not match any of the expected tags"),
        ({"tools": TOOLS, "messages": [*Q, {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "forget", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}]},
         "messages.1.content.0: tool_use block names tool 'forget', which is not defined in `tools`."),
        ({"system": [{"type": "text", "text": "s", "cache_control": {"type": "persistent"}}]},
         "system.0.cache_control.type: Input should be 'ephemeral'"),
        ({"messages": [{"role": "user", "content": [{"type": "text", "text": "q",
                                                     "cache_control": {"type": "ephemeral", "ttl": "1d"}}]}]},
         "messages.0.content.0.text.cache_control.ephemeral.ttl: Input should be '5m' or '1h'"),
        ({"model": "claude-sonnet-4-6", "max_tokens": 64_001},
         "max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-6"),
    ],
)  # fmt: skip
def test_what_the_real_api_refuses_is_refused(fake_anthropic: FakeAnthropic, body: dict, message: str):
    assert rejected(post(fake_anthropic, {"messages": Q, **body})).startswith(message)


# -- stop reasons and errors on demand ---------------------------------------------------------------------


def stream_of(server: FakeAnthropic, **extra: Any) -> anthropic.types.Message:
    with sdk(server).messages.stream(model="claude-sonnet-5-5", max_tokens=300, messages=Q, tools=TOOLS,
                                     **extra) as s:  # fmt: skip
        return s.get_final_message()


def test_a_refusal_streams_its_stop_details(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Refusal("I can", category="cyber", explanation="no"))
    final = stream_of(fake_anthropic)
    assert final.stop_reason == "refusal" and final.content[-1].text == "I can"  # type: ignore[union-attr]
    assert final.stop_details is not None and final.stop_details.category == "cyber"


def test_a_refused_turn_is_refused_again_until_removed_and_the_magic_string_refuses(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Refusal(), "fine")
    bad = {"role": "user", "content": "how do I build a weapon"}
    assert post(fake_anthropic, {"messages": [bad]}).json()["stop_reason"] == "refusal"
    again = [bad, {"role": "assistant", "content": "(declined)"}, {"role": "user", "content": "hello"}]
    assert post(fake_anthropic, {"messages": again}).json()["stop_reason"] == "refusal"  # the turn is still there
    reset = post(fake_anthropic, {"messages": [{"role": "user", "content": "hello"}]}).json()
    assert reset["stop_reason"] == "end_turn" and reset["content"][-1]["text"] == "fine"
    magic = [{"role": "user", "content": f"test {MAGIC_REFUSAL}"}]
    assert post(fake_anthropic, {"messages": magic}).json()["stop_reason"] == "refusal"


def test_max_tokens_in_the_middle_of_a_tool_call_leaves_partial_input(fake_anthropic: FakeAnthropic):
    full = {"n": 5, "text": "생일은 3월 14일이고 좋아하는 색은 파랑"}
    fake_anthropic.reply(CutToolCall("remember", full, keep=0.6))
    pieces: list[str] = []
    with sdk(fake_anthropic).messages.stream(model="claude-sonnet-5-5", max_tokens=300, messages=Q, tools=TOOLS) as s:
        for event in s:
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                pieces.append(event.delta.partial_json)
        final = s.get_final_message()
    sent = "".join(pieces)
    assert json.dumps(full, ensure_ascii=False).startswith(sent) and 0 < len(sent) < len(json.dumps(full))
    assert final.stop_reason == "max_tokens" and final.usage.output_tokens == 300
    use = final.content[-1]
    assert use.type == "tool_use" and use.input == {"n": 5}  # the SDK's partial parse of the cut JSON
    fake_anthropic.reply(CutToolCall("remember", {"text": "x" * 40}))
    plain = post(fake_anthropic, {"tools": TOOLS, "messages": Q}).json()
    assert plain["stop_reason"] == "max_tokens" and plain["content"][-1]["input"] == {}


def test_context_window_exceeded_and_pause_turn(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(ContextExceeded("half an ans"), PauseTurn("찾아볼게요", query="weather"))
    assert stream_of(fake_anthropic).stop_reason == "model_context_window_exceeded"
    body = {"tools": TOOLS, "messages": Q}
    paused = post(fake_anthropic, body).json()
    assert paused["stop_reason"] == "pause_turn" and paused["content"][-1]["type"] == "server_tool_use"
    resumed = {**body, "messages": [*Q, {"role": "assistant", "content": paused["content"]}]}
    assert post(fake_anthropic, resumed).status_code == 200  # the paused turn may be sent back as the last message
    other = [*Q, {"role": "assistant", "content": [{**paused["content"][-1], "id": "srvtoolu_other"}]}]
    assert "prefill" in rejected(post(fake_anthropic, {**body, "messages": other}))


def test_an_error_event_mid_stream_after_http_200(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(StreamError("부분 답", type="overloaded_error", message="Overloaded"))
    raw = httpx.post(f"{fake_anthropic.url}/v1/messages", headers=KEY,
                     json={"model": "claude-sonnet-5-5", "max_tokens": 100, "messages": Q, "stream": True})  # fmt: skip
    assert raw.status_code == 200
    assert (
        'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
        in raw.text
    )
    assert "message_stop" not in raw.text
    fake_anthropic.reply(StreamError())
    with pytest.raises(anthropic.APIStatusError) as e:
        stream_of(fake_anthropic)
    assert "overloaded_error" in str(e.value)
    fake_anthropic.reply(StreamError())
    assert post(fake_anthropic, {"messages": Q}).status_code == 529


@pytest.mark.parametrize(
    ("error", "kind"),
    [(Error.unknown_model("claude-x"), anthropic.NotFoundError), (Error.too_large(), anthropic.APIStatusError)],
)
def test_404_and_413_on_demand(fake_anthropic: FakeAnthropic, error: Error, kind: type[Exception]):
    fake_anthropic.reply(error)
    with pytest.raises(kind) as e:
        sdk(fake_anthropic).messages.create(model="claude-sonnet-5-5", max_tokens=10, messages=Q)
    assert e.value.status_code == error.status  # type: ignore[attr-defined]


def test_5_5_cache_minimum_is_512_tokens(fake_anthropic: FakeAnthropic):
    system = [{"type": "text", "text": "persona " * 250, "cache_control": {"type": "ephemeral"}}]  # ~600 tokens
    for model, cached in (("claude-sonnet-5-5", True), ("claude-sonnet-4-6", False)):
        fake_anthropic.reply(Text("a"), Text("b"))
        post(fake_anthropic, {"model": model, "system": system, "messages": Q})
        usage = post(fake_anthropic, {"model": model, "system": system, "messages": Q}).json()["usage"]
        assert (usage["cache_read_input_tokens"] > 0) is cached, model


def test_thinking_counts_toward_max_tokens_and_is_billed_when_omitted(fake_anthropic: FakeAnthropic):
    answer = "이 답은 꽤 길어요. " * 60  # ~500 tokens
    fake_anthropic.reply(Text(answer, thinking_tokens=900), Text(answer, thinking_tokens=900))
    cut = post(fake_anthropic, {"max_tokens": 1000, "messages": Q}).json()
    assert cut["stop_reason"] == "max_tokens" and cut["usage"]["output_tokens"] == 1000
    assert 0 < len(cut["content"][-1]["text"]) < len(answer)
    whole = post(fake_anthropic, {"max_tokens": 4000, "messages": Q}).json()
    assert whole["stop_reason"] == "end_turn" and whole["content"][-1]["text"] == answer
    assert whole["content"][0]["thinking"] == "" and whole["usage"]["output_tokens"] > 900  # omitted, still billed
    fake_anthropic.reply(ToolCalls([("remember", {"text": "x"})], thinking_tokens=2000))
    stopped = post(fake_anthropic, {"max_tokens": 1000, "tools": TOOLS, "messages": Q}).json()
    assert stopped["stop_reason"] == "max_tokens" and [b["type"] for b in stopped["content"]] == ["thinking"]
    fake_anthropic.reply(Text(answer, thinking_tokens=900))  # 4.6 does not think unless asked: nothing is cut
    old = post(fake_anthropic, {"model": "claude-sonnet-4-6", "max_tokens": 1000, "messages": Q}).json()
    assert old["stop_reason"] == "end_turn"


def test_forced_tool_use_where_it_is_accepted_skips_thinking(fake_anthropic: FakeAnthropic):
    forced = {"tools": TOOLS, "tool_choice": {"type": "any"}, "messages": Q}
    fake_anthropic.reply(ToolCalls([("remember", {"text": "x"})]), ToolCalls([("remember", {"text": "y"})]))
    haiku = post(fake_anthropic, {"model": "claude-haiku-5-5", **forced}).json()  # not in the docs' 400 list
    assert [b["type"] for b in haiku["content"]] == ["tool_use"]
    adaptive = post(fake_anthropic, {"model": "claude-sonnet-4-6", "thinking": {"type": "adaptive"}, **forced})
    assert [b["type"] for b in adaptive.json()["content"]] == ["tool_use"]
    manual = {"model": "claude-sonnet-4-6", "thinking": {"type": "enabled", "budget_tokens": 1024}, **forced}
    assert rejected(post(fake_anthropic, {**manual, "max_tokens": 2000})) == (
        "Thinking may not be enabled when tool_choice forces tool use."
    )


def test_a_stream_pings_and_may_carry_types_no_client_knows_yet(fake_anthropic: FakeAnthropic):
    """Streaming messages: "any number of ping events"; new event types may come (Versions: new variants
    of enum-like output values). The SDK, a client written before them, still reads the answer."""
    fake_anthropic.reply(Text("안녕", novel=True), Text("끊긴 답", drop=True))
    body = {"model": "claude-sonnet-5-5", "max_tokens": 100, "messages": Q, "stream": True}
    raw = httpx.post(f"{fake_anthropic.url}/v1/messages", headers=KEY, json=body, timeout=10).text
    assert 'event: ping\ndata: {"type": "ping"}' in raw
    assert "event: novel_event_fake" in raw and '"type": "novel_block_fake"' in raw and "novel_delta_fake" in raw
    assert raw.rstrip().endswith('event: message_stop\ndata: {"type": "message_stop"}')
    cut = ""  # a dropped stream ends without its last chunk: the client reads what came, then fails
    with httpx.stream("POST", f"{fake_anthropic.url}/v1/messages", headers=KEY, json=body, timeout=10) as r:
        with pytest.raises(httpx.RemoteProtocolError):
            for piece in r.iter_text():
                cut += piece
    assert "끊긴 답" in cut and "message_stop" not in cut and "content_block_stop" not in cut.split("끊긴")[-1]
    fake_anthropic.reply(Text("안녕", novel=True))
    assert "".join(b.text for b in stream_of(fake_anthropic).content if b.type == "text") == "안녕"
