"""The model side's newest paths, each pinned by a test that fails when the code is broken on purpose
(issue 33; the changes are in scripts/mutations.toml): progress lines for server tools, the cached
Models API entry kept through an outage, the nearest effort level below the one configured."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.claude.client import ClaudeModel
from bot.claude.modelinfo import MAX_AGE, ModelCatalog, ModelInfo
from bot.core.toolloop import ToolLoop
from bot.texts import progress_text
from bot.tools import Toolbox, ToolContext
from bot.tools.web import WebSearch, WebSettings
from tests.fakes.anthropic_server import FakeAnthropic, Text
from tests.fakes.models import find
from tests.fakes.server_tools import Page, Search, WebAnswer

SYSTEM = [{"type": "text", "text": "sys"}]
NOW = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)


def claude(server: FakeAnthropic, data_dir: Path, model: str, **kw) -> ClaudeModel:
    return ClaudeModel(
        model, api_key="sk-test", base_url=server.url, max_retries=0, timeout=30.0, catalog=ModelCatalog(data_dir), **kw
    )


async def test_a_web_search_round_streams_the_search_progress_line(fake_anthropic: FakeAnthropic, data_dir: Path):
    """The API runs the search itself (a ``server_tool_use`` block, never a ``tool_use``): the user
    still sees what is going on while it runs."""
    page = Page("https://news.example.kr/a", "서울 날씨")
    fake_anthropic.reply(WebAnswer([Search("서울 날씨", (page,))], parts=[("맑아요.", [page.url])]))
    loop = ToolLoop(
        claude(fake_anthropic, data_dir, "claude-sonnet-5-5"),
        Toolbox([]),
        max_rounds=4,
        max_tokens=1000,
        now=lambda: NOW,
        spend=lambda kind, reply: None,
        web=WebSearch(WebSettings(max_uses=3)),
    )
    shown: list[str] = []

    async def on_text(delta: str) -> None:
        shown.append(delta)

    out = await loop.run(SYSTEM, [{"role": "user", "content": "서울 날씨?"}], ToolContext("1", NOW), on_text)
    assert not fake_anthropic.rejected and out.web.searches == 1
    streamed = "".join(shown)
    line = progress_text("web_search", "ko")
    assert line in streamed and streamed.index(line) < streamed.index("맑아요.")


async def test_a_models_api_outage_keeps_the_stale_cached_entry(fake_anthropic: FakeAnthropic, data_dir: Path):
    """A cached entry past MAX_AGE is fetched again; when the Models API answers 500 the request is
    still shaped by what was known (the effort and the model's max_tokens cap), not the API's defaults."""
    spec = find("claude-sonnet-4-6")
    assert spec is not None
    old = NOW - MAX_AGE - timedelta(days=1)
    ModelCatalog(data_dir).put(ModelInfo.from_api(spec.info(), old), key=spec.id)
    fake_anthropic.models_error = (500, "api_error")
    model = claude(fake_anthropic, data_dir, spec.id, effort="medium", max_tokens=10_000_000, now=lambda: NOW)
    fake_anthropic.reply(Text("ok"))
    reply = await model.complete(system=SYSTEM, messages=[{"role": "user", "content": "hi"}])
    assert reply.text == "ok" and not fake_anthropic.rejected
    assert fake_anthropic.model_lookups  # it did try to refresh the stale entry
    sent = fake_anthropic.requests[-1]
    assert sent["output_config"] == {"effort": "medium"}
    assert sent["max_tokens"] == spec.max_tokens  # capped at the cached model's limit


async def test_an_effort_the_model_lacks_sends_the_nearest_level_below(fake_anthropic: FakeAnthropic, data_dir: Path):
    """EFFORT=xhigh on a model offering low, medium and high sends high (not the lowest level)."""
    fake_anthropic.add_model("claude-test-lmh", "claude-sonnet-4-6", efforts=("low", "medium", "high"))
    model = claude(fake_anthropic, data_dir, "claude-test-lmh", effort="xhigh")
    fake_anthropic.reply(Text("ok"))
    await model.complete(system=SYSTEM, messages=[{"role": "user", "content": "hi"}])
    assert not fake_anthropic.rejected
    assert fake_anthropic.requests[-1]["output_config"] == {"effort": "high"}


def test_effort_for_picks_the_nearest_accepted_level_below_else_above():
    def offering(*levels: str) -> ModelInfo:
        effort = {"supported": True, **{lv: {"supported": True} for lv in levels}}
        return ModelInfo.from_api({"id": "m", "capabilities": {"effort": effort}}, NOW)

    assert offering("low", "medium", "high").effort_for("max") == "high"
    assert offering("low", "high").effort_for("xhigh") == "high"
    assert offering("low", "high").effort_for("medium") == "low"
    assert offering("high", "max").effort_for("low") == "high"  # nothing below: the lowest above
    assert offering("low", "medium").effort_for("medium") == "medium"
    assert offering().effort_for("high") is None
