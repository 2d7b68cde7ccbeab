"""Issue 30 item 1: the web search fallback never sends signed thinking under a changed prefix.

When a request with the web tools times out, or the organization turns out to have search disabled,
after a tool round or a ``pause_turn``, the question is asked again from its own prefix (the history,
the question, the per-turn context) without the web tools: nothing of the failed turn goes back, so no
thinking block's prefix check can fail. Run on every model family the fake knows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.claude.client import ClaudeModel
from bot.core.toolloop import ToolLoop
from bot.texts import progress_text
from bot.tools import Tool, Toolbox, ToolContext, ToolResult
from bot.tools.web import WebSearch, WebSettings
from tests.fakes.anthropic_server import FakeAnthropic, Text
from tests.fakes.models import MODELS
from tests.fakes.scripts import Error, PauseTurn, ToolCalls

NOW = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
SYSTEM = [{"type": "text", "text": "sys"}]
FAMILIES = [m.id for m in MODELS]
TIMEOUT = Error(504, "timeout_error", "Request timeout")  # Errors page: 504 timeout_error


def note_tool(ran: list[str]) -> Tool:
    def run(ctx: ToolContext, value: Mapping[str, Any]) -> ToolResult:
        ran.append(str(value.get("text")))
        return ToolResult("noted")

    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    return Tool("note", "Note something.", schema, run)


def loop_for(server: FakeAnthropic, model: str, ran: list[str]) -> ToolLoop:
    return ToolLoop(
        ClaudeModel(model, api_key="sk-test", base_url=server.url, max_retries=0, timeout=30.0),
        Toolbox([note_tool(ran)]),
        max_rounds=4,
        max_tokens=2000,
        now=lambda: NOW,
        spend=lambda kind, reply: None,
        web=WebSearch(WebSettings()),
    )


def ctx() -> ToolContext:
    return ToolContext("1", NOW, {"offset": 0, "at": NOW.isoformat()}, {}, 1)


def server_blocks(body: dict) -> bool:
    text = json.dumps(body["messages"])
    return any(k in text for k in ("server_tool_use", "web_search_tool_result", "encrypted_content"))


@pytest.mark.parametrize("model", FAMILIES)
@pytest.mark.parametrize("after", ["tool_round", "pause_turn"])
async def test_a_timed_out_search_after_a_round_is_answered_without_search(
    fake_anthropic: FakeAnthropic, model: str, after: str
):
    ran: list[str] = []
    first = ToolCalls([("note", {"text": "a"})]) if after == "tool_round" else PauseTurn(query="뉴스")
    fake_anthropic.reply(first, TIMEOUT, Text("검색 없이 답해요"))
    question = [{"role": "user", "content": "뉴스 알려 줘"}]
    out = await loop_for(fake_anthropic, model, ran).run(SYSTEM, question, ctx(), None)
    assert fake_anthropic.rejected == []  # every request passed the prefix checks
    assert out.text == "검색 없이 답해요\n\n" + progress_text("no_search")
    retried = fake_anthropic.requests[-1]
    # the question again from its own prefix: nothing of the failed turn, no server blocks, no web tools
    assert retried["messages"] == question and not server_blocks(retried)
    assert [t["name"] for t in retried["tools"]] == ["note"]
    assert [m["role"] for m in out.stored] == ["assistant"]  # only the answer is stored after the question


async def test_search_disabled_after_a_tool_round_restarts_without_the_web_tools(fake_anthropic: FakeAnthropic):
    ran: list[str] = []

    def disable(body: dict) -> Text:
        fake_anthropic.web.enabled = False  # the organization's setting changed between the two rounds
        return ToolCalls([("note", {"text": "b"})])  # type: ignore[return-value]

    fake_anthropic.reply(disable, Text("검색 없이"))
    out = await loop_for(fake_anthropic, "claude-sonnet-5-5", ran).run(
        SYSTEM, [{"role": "user", "content": "q"}], ctx(), None
    )
    assert out.text.startswith("검색 없이") and ran == ["b"]
    assert len(fake_anthropic.rejected) == 1 and "not enabled" in fake_anthropic.rejected[0]
    assert fake_anthropic.requests[-1]["messages"] == [{"role": "user", "content": "q"}]
