"""The fake's per-model rules (tests/fakes/README.md lists each with its page): Haiku 5.5, Opus 5, Sonnet 5,
Opus 4.7 / 4.8, Fable 5, the thinking config's fields, cache_control on thinking blocks, and an assistant
turn ending in an unfinished server_tool_use continued with tool results.

Each test goes through real HTTP and fails when its rule is taken out of the fake.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.fakes.anthropic_server import FakeAnthropic, Text, ToolCalls
from tests.fakes.prompt_cache import PromptCache
from tests.test_fake_anthropic_models import KEY, TOOLS, continuation, rejected, tool_round

Q = [{"role": "user", "content": "q"}]
WEB_FETCH = {"type": "web_fetch_20250910", "name": "web_fetch"}


def post(server: FakeAnthropic, model: str, **body: Any) -> httpx.Response:
    body = {"model": model, "max_tokens": 1000, "messages": Q, **body}
    return httpx.post(f"{server.url}/v1/messages", json=body, headers=KEY, timeout=10)


def effort(level: str) -> dict[str, Any]:
    return {"output_config": {"effort": level}}


# -- thinking: disabled, between_tools, enabled -------------------------------------------------------------

OFF = {"thinking": {"type": "disabled"}}


@pytest.mark.parametrize("model", ["claude-haiku-5-5", "claude-opus-5"])
def test_disabled_thinking_only_at_effort_high_or_below(fake_anthropic: FakeAnthropic, model: str):
    """Haiku 5.5 (Prompting Claude Haiku 5.5: "only at low, medium and high; at xhigh and max a 400") and
    Opus 5 (its migration guide: "thinking can be disabled only at effort high or below")."""
    for level in ("low", "medium", "high"):
        assert post(fake_anthropic, model, **OFF, **effort(level)).status_code == 200
    assert post(fake_anthropic, model, **OFF).status_code == 200  # the model's default effort (medium / high)
    for level in ("xhigh", "max"):
        message = rejected(post(fake_anthropic, model, **OFF, **effort(level)))
        assert message.startswith(f'"thinking.type.disabled" is not supported with effort "{level}"')


def test_a_reply_with_thinking_disabled_has_no_thinking_block(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Text("네"))
    reply = post(fake_anthropic, "claude-haiku-5-5", **OFF, **effort("low")).json()
    assert [b["type"] for b in reply["content"]] == ["text"]


@pytest.mark.parametrize(
    ("model", "kind", "accepted"),
    [
        ("claude-haiku-5-5", "between_tools", False),  # Sonnet 5.5's setting, not documented for Haiku 5.5
        ("claude-sonnet-5-5", "between_tools", True),
        ("claude-sonnet-5-5", "disabled", False),
        ("claude-sonnet-5", "disabled", True),  # Sonnet 5 takes adaptive and disabled
        ("claude-sonnet-5", "between_tools", False),
        ("claude-fable-5", "disabled", False),  # Fable 5 migration guide: disabled and enabled are 400s
        ("claude-mythos-5", "disabled", False),
        ("claude-opus-4-8", "disabled", True),
        ("claude-opus-4-7", "disabled", True),
    ],
)
def test_which_thinking_types_each_model_takes(fake_anthropic: FakeAnthropic, model: str, kind: str, accepted: bool):
    response = post(fake_anthropic, model, thinking={"type": kind}, **effort("low"))
    if accepted:
        assert response.status_code == 200, response.text
    else:
        assert rejected(response).startswith(f'"thinking.type.{kind}" is not supported for this model')


@pytest.mark.parametrize(
    "model", ["claude-opus-5", "claude-sonnet-5", "claude-fable-5", "claude-opus-4-8", "claude-opus-4-7"]
)
def test_budget_thinking_is_refused_from_opus_4_7_on(fake_anthropic: FakeAnthropic, model: str):
    budget = {"thinking": {"type": "enabled", "budget_tokens": 2000}}
    assert rejected(post(fake_anthropic, model, **budget)).startswith('"thinking.type.enabled" is not supported')


@pytest.mark.parametrize(
    ("thinking", "field"),
    [
        ({"type": "between_tools", "display": "summarized"}, "display"),
        ({"type": "between_tools", "budget_tokens": 2000}, "budget_tokens"),
        ({"type": "between_tools", "effort": "low"}, "effort"),
        ({"type": "disabled", "display": "omitted"}, "display"),
        ({"type": "adaptive", "budget_tokens": 2000}, "budget_tokens"),
    ],
)
def test_a_thinking_config_takes_only_its_own_fields(fake_anthropic: FakeAnthropic, thinking: dict, field: str):
    """The SDK's ThinkingConfigBetweenToolsParam and ThinkingConfigDisabledParam have ``type`` only;
    adaptive takes ``display`` too, enabled ``budget_tokens`` and ``display``."""
    message = rejected(post(fake_anthropic, "claude-sonnet-5-5", thinking=thinking))
    assert message == f"thinking.{thinking['type']}.{field}: Extra inputs are not permitted"


def test_adaptive_takes_display(fake_anthropic: FakeAnthropic):
    thinking = {"type": "adaptive", "display": "summarized"}
    assert post(fake_anthropic, "claude-sonnet-5-5", thinking=thinking).status_code == 200


@pytest.mark.parametrize(
    ("model", "thinks"),
    [("claude-opus-4-8", False), ("claude-opus-4-7", False), ("claude-opus-5", True), ("claude-sonnet-5", True)],
)
def test_which_models_think_without_a_thinking_field(fake_anthropic: FakeAnthropic, model: str, thinks: bool):
    """Opus 5 migration guide: "on Claude Opus 4.8, a request without a thinking field runs without thinking;
    on Claude Opus 5 the same request runs with adaptive thinking"; Sonnet 5: adaptive on by default."""
    fake_anthropic.reply(Text("네"))
    content = post(fake_anthropic, model).json()["content"]
    assert ("thinking" in [b["type"] for b in content]) is thinks


# -- sampling parameters ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"top_k": 40}, "top_k is deprecated for this model"),
        ({"top_p": 0.9}, "top_p: only 0.99 is supported for this model"),
        ({"temperature": 1, "top_p": 0.99}, "`temperature` and `top_p` cannot both be specified"),
        ({"temperature": 0.2}, "temperature is deprecated for this model"),
    ],
)
def test_haiku_5_5_sampling(fake_anthropic: FakeAnthropic, body: dict, message: str):
    assert rejected(post(fake_anthropic, "claude-haiku-5-5", **body)).startswith(message)


@pytest.mark.parametrize("body", [{"top_p": 0.99}, {"temperature": 1}])
def test_haiku_5_5_takes_its_default_sampling_values(fake_anthropic: FakeAnthropic, body: dict):
    assert post(fake_anthropic, "claude-haiku-5-5", **body).status_code == 200


@pytest.mark.parametrize("model", ["claude-opus-5", "claude-sonnet-5", "claude-fable-5", "claude-opus-4-8"])
@pytest.mark.parametrize("body", [{"temperature": 0.5}, {"top_p": 0.9}, {"top_k": 5}])
def test_non_default_sampling_is_refused_from_opus_4_7_on(fake_anthropic: FakeAnthropic, model: str, body: dict):
    name = next(iter(body))
    assert rejected(post(fake_anthropic, model, **body)) == f"{name} is deprecated for this model"


@pytest.mark.parametrize("model", ["claude-haiku-4-5", "claude-sonnet-4-5"])
def test_temperature_or_top_p_not_both_on_the_4_5_models(fake_anthropic: FakeAnthropic, model: str):
    """Haiku 4.5 migration guide: "Use only temperature OR top_p, not both. Setting both returns a 400"."""
    assert rejected(post(fake_anthropic, model, temperature=0.5, top_p=0.9)).startswith("`temperature` and `top_p`")
    assert post(fake_anthropic, model, temperature=0.5).status_code == 200
    assert post(fake_anthropic, model, top_p=0.9).status_code == 200


# -- prefill, forced tool_choice, system messages, web fetch ----------------------------------------------------


@pytest.mark.parametrize("model", ["claude-opus-5", "claude-sonnet-5", "claude-fable-5", "claude-opus-4-8"])
def test_prefill_is_refused(fake_anthropic: FakeAnthropic, model: str):
    prefill = [*Q, {"role": "assistant", "content": "The answer is"}]
    assert rejected(post(fake_anthropic, model, messages=prefill)).startswith(
        "This model does not support assistant message prefill."
    )


@pytest.mark.parametrize(
    ("model", "accepted"),
    [("claude-haiku-5-5", True), ("claude-opus-5", True), ("claude-sonnet-5", True), ("claude-fable-5", True),
     ("claude-opus-4-8", True), ("claude-opus-5-5", False), ("claude-sonnet-5-5", False),
     ("claude-fable-5-2", False), ("claude-mythos-5-1", False)],
)  # fmt: skip
def test_forced_tool_choice(fake_anthropic: FakeAnthropic, model: str, accepted: bool):
    """Thinking in tool and multi-turn workflows: forced tool use with adaptive thinking skips the thinking,
    except on Opus 5.5, Sonnet 5.5 and Fable / Mythos 5.1+, which return a 400 (What's new in Opus 5.5)."""
    fake_anthropic.reply(ToolCalls([("remember", {})]))
    response = post(fake_anthropic, model, tools=TOOLS, tool_choice={"type": "any"})
    if accepted:
        assert [b["type"] for b in response.json()["content"]] == ["tool_use"]
    else:
        assert rejected(response).startswith('"tool_choice.type.any" is not supported for this model')


@pytest.mark.parametrize(("model", "accepted"), [("claude-opus-4-8", True), ("claude-opus-4-7", False),
                                                 ("claude-sonnet-5", False), ("claude-opus-5", True)])  # fmt: skip
def test_mid_conversation_system_messages(fake_anthropic: FakeAnthropic, model: str, accepted: bool):
    """What's new in Claude Opus 4.8: it "accepts role: "system" messages immediately after a user turn"."""
    messages = [*Q, {"role": "system", "content": "지금은 10:01"}]
    response = post(fake_anthropic, model, messages=messages)
    assert response.status_code == 200 if accepted else rejected(response).startswith("messages.1: role 'system'")


def test_opus_5_takes_no_web_fetch(fake_anthropic: FakeAnthropic):
    """Claude Opus 5 migration guide: "web fetch is not available on Claude Opus 5"."""
    message = rejected(post(fake_anthropic, "claude-opus-5", tools=[WEB_FETCH]))
    assert message == "tools: 'web_fetch' is not supported on claude-opus-5"
    assert post(fake_anthropic, "claude-opus-4-8", tools=[WEB_FETCH]).status_code == 200


# -- blocks sent back ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("block", [{"type": "thinking", "thinking": "t", "signature": "s"},
                                   {"type": "redacted_thinking", "data": "d"}])  # fmt: skip
def test_cache_control_on_a_thinking_block_is_refused(fake_anthropic: FakeAnthropic, block: dict):
    """Prompt caching: thinking blocks cannot be marked with cache_control (the SDK's block params have no
    such field)."""
    marked = {**block, "cache_control": {"type": "ephemeral"}}
    messages = [*Q, {"role": "assistant", "content": [marked, {"type": "text", "text": "a"}]},
                {"role": "user", "content": "q2"}]  # fmt: skip
    message = rejected(post(fake_anthropic, "claude-sonnet-5-5", messages=messages))
    assert message == f"messages.1.content.0.{block['type']}.cache_control: Extra inputs are not permitted"


def _unfinished(follow: list[dict[str, Any]]) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": "toolu_1", "name": "remember", "input": {}}
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
    return [*Q, {"role": "assistant", "content": [use, search]}, {"role": "user", "content": follow}]


def test_an_unfinished_server_tool_use_continued_with_tool_results_is_accepted(fake_anthropic: FakeAnthropic):
    """An assistant turn ending in an unfinished server_tool_use, then tool_result blocks: a valid continuation
    (issue 30 item 8); a result block still missing before anything else is a 400."""
    search = {"type": "web_search_20250305", "name": "web_search"}
    tools = [*TOOLS, search]
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
    fake_anthropic.reply(Text("네"))
    assert post(fake_anthropic, "claude-sonnet-4-6", tools=tools, messages=_unfinished([result])).status_code == 200
    mid = _unfinished([result])
    mid[1] = {"role": "assistant", "content": [*mid[1]["content"][::-1]]}  # the server_tool_use is not last
    assert rejected(post(fake_anthropic, "claude-sonnet-4-6", tools=tools, messages=mid)).startswith(
        "messages.1: `server_tool_use` ids were found without a result block: srvtoolu_1"
    )


# -- the Models API knows the models ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "types"),
    [("claude-haiku-5-5", {"adaptive", "disabled"}), ("claude-opus-5", {"adaptive", "disabled"}),
     ("claude-sonnet-5", {"adaptive", "disabled"}), ("claude-fable-5", {"adaptive"}),
     ("claude-opus-4-8", {"adaptive", "disabled"}), ("claude-mythos-5-2", {"adaptive"})],
)  # fmt: skip
def test_the_models_api_lists_each_models_thinking_types(fake_anthropic: FakeAnthropic, model: str, types: set):
    info = httpx.get(f"{fake_anthropic.url}/v1/models/{model}", headers=KEY, timeout=10).json()
    listed = {k for k, v in info["capabilities"]["thinking"]["types"].items() if v["supported"]}
    assert listed == types and info["max_tokens"] == 128_000


def test_thinking_another_model_produced_is_dropped_without_an_error(fake_anthropic: FakeAnthropic):
    """Prefix checks on thinking blocks: a block the current model cannot read is dropped, not refused."""
    body, reply = tool_round(fake_anthropic)
    changed = {**continuation(body, reply["content"]), "system": "s, but at 10:01"}
    assert rejected(httpx.post(f"{fake_anthropic.url}/v1/messages", json=changed, headers=KEY, timeout=10))
    other = {**changed, "model": "claude-opus-5-5"}
    fake_anthropic.reply(Text("네"))
    assert httpx.post(f"{fake_anthropic.url}/v1/messages", json=other, headers=KEY, timeout=10).status_code == 200


def test_a_changed_tool_choice_invalidates_the_cached_messages_only():
    """Prompt caching (what invalidates the cache): tool_choice changes the messages' cache, not tools and
    system."""
    persona = "stable persona text " * 400
    history = "an earlier turn " * 400
    request = {
        "model": "claude-sonnet-4-6",
        "tools": TOOLS,
        "system": [{"type": "text", "text": persona, "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": history, "cache_control": {"type": "ephemeral"}}]}
        ],
    }
    cache = PromptCache(lambda: 1000.0)
    first = cache.apply(request)
    assert cache.apply(request).cache_read == first.cache_write  # the same request: all read
    forced = cache.apply({**request, "tool_choice": {"type": "none"}})
    assert 0 < forced.cache_read < first.cache_write  # tools and system still read, the messages written again
    assert forced.cache_write > 0


AWAITING_MERGE = {"test_a_tool_call_of_the_current_turn_must_come_back_unmodified"}
"""Tests the table names that branch claude-api adds (its fake rules: ``caller`` on tool_use blocks, a changed
tool_use refused); the set can go once that branch is merged."""


def test_the_rules_table_names_tests_that_exist():
    """tests/fakes/README.md: every row names a test, and every test it names is defined in the test files (a
    renamed or deleted test leaves no rule quietly untested)."""
    import re
    from pathlib import Path

    root = Path(__file__).parent
    table = (root / "fakes" / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(test_\w+)`", table))
    defined = set()
    for path in root.glob("test_*.py"):
        defined |= set(re.findall(r"^(?:async )?def (test_\w+)", path.read_text(encoding="utf-8"), re.M))
    assert len(named) > 40 and named - defined <= AWAITING_MERGE, named - defined - AWAITING_MERGE
    rows = [line for line in table.splitlines() if line.startswith("| ") and "| Test |" not in line]
    rows = [row for row in rows if not row.startswith("| ---")]
    assert [row for row in rows if "test_" not in row and "(used by the tests above)" not in row] == []
