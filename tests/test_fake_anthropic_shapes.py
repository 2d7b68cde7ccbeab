"""The fake's model-blind rules that had no test of the fake itself (tests/fakes/README.md lists every rule,
its page and its test): keys, the request size, the error body, required fields, tool declarations,
block placement, image and document limits, mid-conversation system messages' content, server tools.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.scripts import Error
from tests.fakes.server_tools import Page, Search, WebAnswer
from tests.test_fake_anthropic_models import KEY, TOOLS, rejected

Q = [{"role": "user", "content": "q"}]
SEARCH = {"type": "web_search_20250305", "name": "web_search"}


def post(server: FakeAnthropic, body: dict[str, Any], headers: dict[str, str] = KEY) -> httpx.Response:
    body = {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": Q, **body}
    return httpx.post(f"{server.url}/v1/messages", json=body, headers=headers, timeout=30)


def test_a_missing_or_wrong_key_is_a_401_before_anything_else(fake_anthropic: FakeAnthropic):
    """Errors page: 401 authentication_error, checked before the request's content."""
    response = post(fake_anthropic, {"max_tokens": 0}, headers={})
    assert response.status_code == 401 and response.json()["error"]["type"] == "authentication_error"
    fake_anthropic.api_key = "sk-ant-right"
    assert post(fake_anthropic, {}, headers={"x-api-key": "sk-ant-wrong"}).status_code == 401
    assert post(fake_anthropic, {}, headers={"x-api-key": "sk-ant-right"}).status_code == 200


def test_a_body_over_32_mb_is_a_413(fake_anthropic: FakeAnthropic):
    """Errors page, Request size limits: 32 MB for the Messages API (413 request_too_large)."""
    big = [{"role": "user", "content": "x" * (32 * 1024 * 1024 + 10)}]
    response = post(fake_anthropic, {"messages": big})
    assert response.status_code == 413 and response.json()["error"]["type"] == "request_too_large"


def test_the_error_body_has_the_documented_shape(fake_anthropic: FakeAnthropic):
    """Errors page: {"type": "error", "error": {"type", "message"}, "request_id"}; the tier cap's 429 carries
    ``details.error_code`` and no retry-after (Rate limits page)."""
    fake_anthropic.reply(Error.spend_cap())
    response = post(fake_anthropic, {})
    data = response.json()
    assert response.status_code == 429 and "retry-after" not in response.headers
    assert data["type"] == "error" and data["request_id"].startswith("req_")
    assert data["error"]["type"] == "rate_limit_error"
    assert data["error"]["details"] == {"error_code": "enforced_spend_limit_reached"}
    fake_anthropic.reply(Error.documented("billing_error"))
    response = post(fake_anthropic, {})
    assert response.status_code == 402 and response.json()["error"]["type"] == "billing_error"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"model": ""}, "model: Field required"),
        ({"max_tokens": 0}, "max_tokens: Field required"),
        ({"tools": [{"name": "x" * 65, "input_schema": {"type": "object"}}]},
         "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
        ({"tools": [{"name": "a b", "input_schema": {"type": "object"}}]}, "tools.0.custom.name: String should"),
        ({"tools": [{"name": "x", "input_schema": {"type": "array"}}]},
         "tools.0.custom.input_schema.type: Input should be 'object'"),
        ({"tools": [*TOOLS, *TOOLS]}, "tools: Tool names must be unique."),
        ({"tool_choice": {"type": "auto"}}, "tool_choice may only be specified while providing tools."),
        ({"tools": TOOLS, "tool_choice": {"type": "required"}}, "tool_choice: Input tag does not match"),
        ({"messages": [{"role": "user", "content": [{"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": "A" * (5 * 1024 * 1024 + 4)}}]}]},
         "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum"),
        ({"messages": [{"role": "user", "content": [{"type": "document", "source": {
            "type": "base64", "media_type": "image/png", "data": "AAAA"}}]}]},
         "messages.0.content.0.document.source.base64.media_type: Input should be 'application/pdf'"),
        ({"messages": [{"role": "user", "content": [{"type": "document", "source": {"type": "zip"}}]}]},
         "messages.0.content.0.document.source: Input tag 'zip' found"),
        ({"tools": TOOLS, "messages": [{"role": "user", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "remember", "input": {}}]}]},
         "messages.0.content.0: `tool_use` blocks can only be in assistant messages"),
        ({"system": "s", "messages": [*Q, {"role": "assistant", "content": "a"}, {"role": "user", "content": "b"},
                                      {"role": "system", "content": [{"type": "image", "source": {}}]}],
          "model": "claude-sonnet-5-5"},
         "messages.3.content.0: Input tag 'image' found using 'type' does not match any of the expected tags: 'text'"),
    ],
)  # fmt: skip
def test_malformed_shapes_are_refused(fake_anthropic: FakeAnthropic, body: dict, message: str):
    assert rejected(post(fake_anthropic, body)).startswith(message)


def test_a_64_character_tool_name_is_fine(fake_anthropic: FakeAnthropic):
    assert post(fake_anthropic, {"tools": [{"name": "x" * 64, "input_schema": {"type": "object"}}]}).status_code == 200


# -- server tools (web search / fetch pages) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ({"type": "web_search_20990101", "name": "web_search"}, "tools.0: Input tag 'web_search_20990101' found"),
        ({**SEARCH, "name": "search"}, "tools.0.web_search.name: Input should be 'web_search'"),
        ({**SEARCH, "max_uses": 0}, "tools.0.web_search.max_uses: Input should be greater than 0"),
        ({**SEARCH, "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]},
         "tools.0.web_search: Cannot specify both allowed_domains and blocked_domains"),
        ({**SEARCH, "blocked_domains": ["https://b.com"]}, "tools.0.web_search.blocked_domains: domains must not"),
        ({**SEARCH, "user_location": {"type": "approximate", "country": "KOR"}},
         "tools.0.web_search.user_location.country: String should have exactly 2 characters"),
        ({**SEARCH, "user_location": {"type": "exact"}}, "tools.0.web_search.user_location.type: Input should be"),
        ({**SEARCH, "citations": {"enabled": True}}, "tools.0.web_search: Extra inputs are not permitted"),
    ],
)  # fmt: skip
def test_a_malformed_server_tool_declaration_is_refused(fake_anthropic: FakeAnthropic, tool: dict, message: str):
    assert rejected(post(fake_anthropic, {"tools": [tool]})).startswith(message)


def test_web_search_off_for_the_organization_or_the_model(fake_anthropic: FakeAnthropic):
    fake_anthropic.web.enabled = False
    assert rejected(post(fake_anthropic, {"tools": [SEARCH]})).startswith("Web search is not enabled")
    fake_anthropic.web.enabled = True
    fake_anthropic.add_model("claude-plain-1", "claude-sonnet-4-6", web_search=False)
    message = rejected(post(fake_anthropic, {"model": "claude-plain-1", "tools": [SEARCH]}))
    assert message == "tools: 'web_search' is not supported on claude-plain-1"


def test_server_results_must_follow_their_use_and_be_the_apis_own(fake_anthropic: FakeAnthropic):
    use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
    page = {"type": "web_search_result", "url": "https://a.example", "title": "a", "encrypted_content": "forged"}
    made_up = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [page]}
    alone = [*Q, {"role": "assistant", "content": [made_up]}, {"role": "user", "content": "q2"}]
    assert rejected(post(fake_anthropic, {"tools": [SEARCH], "messages": alone})).startswith(
        "messages.1.content.0: `web_search_tool_result` block with tool_use_id srvtoolu_1 must follow"
    )
    forged = [*Q, {"role": "assistant", "content": [use, made_up]}, {"role": "user", "content": "q2"}]
    assert rejected(post(fake_anthropic, {"tools": [SEARCH], "messages": forged})) == (
        "messages.1.content.1.content.0.encrypted_content: Invalid encrypted content"
    )
    unanswered = [*Q, {"role": "assistant", "content": [use, {"type": "text", "text": "…"}]},
                  {"role": "user", "content": "q2"}]  # fmt: skip
    assert rejected(post(fake_anthropic, {"tools": [SEARCH], "messages": unanswered})).startswith(
        "messages.1: `server_tool_use` ids were found without a result block: srvtoolu_1"
    )
    assert json.dumps(fake_anthropic.rejected)  # every refusal is recorded for the tests that look


def _results(content: list[dict[str, Any]]) -> list[Any]:
    return [b["content"] for b in content if b["type"] == "web_search_tool_result"]


def test_searches_past_max_uses_get_the_documented_error(fake_anthropic: FakeAnthropic):
    """Web search tool: ``max_uses`` per request; the search past it is a ``web_search_tool_result_error``
    with ``error_code`` ``max_uses_exceeded``; a scripted error code comes back the same way."""
    steps = [Search("q0", (Page("https://e.com/0", "T0"),)), Search("q1", error="unavailable"), Search("q2")]
    fake_anthropic.reply(WebAnswer(steps, parts=[("답", [])]))
    content = post(fake_anthropic, {"tools": [{**SEARCH, "max_uses": 2}]}).json()["content"]
    results = _results(content)
    assert results[0][0]["type"] == "web_search_result"
    assert results[1] == {"type": "web_search_tool_result_error", "error_code": "unavailable"}
    assert results[2] == {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}


def test_a_paused_turn_must_come_back_unchanged(fake_anthropic: FakeAnthropic):
    """Handle stop reasons (``pause_turn``): send the paused content back as it is to let the turn go on."""
    answer = WebAnswer([Search("q0", (Page("https://e.com/0", "T0"),)), Search("q1")], parts=[("답", [])],
                       pause_after=1)  # fmt: skip
    fake_anthropic.reply(answer)
    paused = post(fake_anthropic, {"tools": [SEARCH]}).json()
    assert paused["stop_reason"] == "pause_turn"
    content = paused["content"]
    changed = [*content[:-1], {**content[-1], "input": {"query": "other"}}]
    resumed = [*Q, {"role": "assistant", "content": changed}]
    assert rejected(post(fake_anthropic, {"tools": [SEARCH], "messages": resumed})).endswith(
        "the content of a paused turn must be sent back unchanged"
    )
    same = [*Q, {"role": "assistant", "content": content}]
    assert post(fake_anthropic, {"tools": [SEARCH], "messages": same}).json()["stop_reason"] == "end_turn"
