"""Claude Opus 5 takes no web_fetch tool (its migration guide); the client leaves that declaration out for it,
and only for it, so a question there is answered instead of refused (the fake refuses web_fetch on Opus 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.tools.web import WebSearch, WebSettings
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.scripts import Text
from tests.test_claude_current import claude

OURS = {"name": "note", "description": "d", "input_schema": {"type": "object", "properties": {}}}


@pytest.mark.parametrize(
    ("model", "fetch"),
    [("claude-opus-5", False), ("claude-opus-5-5", True), ("claude-opus-4-8", True), ("claude-sonnet-5-5", True)],
)
async def test_web_fetch_is_declared_only_to_models_that_take_it(
    fake_anthropic: FakeAnthropic, data_dir: Path, model: str, fetch: bool
):
    tools = [OURS, *WebSearch(WebSettings(), "Asia/Seoul").tools()]
    assert [t["name"] for t in tools] == ["note", "web_search", "web_fetch"]
    fake_anthropic.reply(Text("네"))
    reply = await claude(fake_anthropic, data_dir, model).complete(
        system=[{"type": "text", "text": "s"}], messages=[{"role": "user", "content": "q"}], tools=tools
    )
    assert reply.text == "네" and fake_anthropic.rejected == []
    sent = [t["name"] for t in fake_anthropic.requests[-1]["tools"]]
    assert sent == (["note", "web_search", "web_fetch"] if fetch else ["note", "web_search"])
