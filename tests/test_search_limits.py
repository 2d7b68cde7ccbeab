"""Issue 29 item 5: DAILY_SEARCH_LIMIT holds searches like tokens, checked before every model call.

A call that may search holds the web tool's ``max_uses`` until its usage is recorded; a call may search
only while the searches spent and held are under the limit; a call that may not is cut when it starts a
search (the tools stay declared: issue 30 item 4). So a user never passes the limit by more than one
call's ``max_uses``: not with a ``pause_turn`` continuation, not with questions in parallel.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.claude.client import ClaudeModel
from bot.claude.modelinfo import ModelCatalog
from bot.core.ask import Assistant, Question
from bot.core.limits import Limits
from bot.tools.web import WebSearch, WebSettings
from memory.transcript import Transcript
from memory.usage import UsageLedger
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.server_tools import Page, Search, WebAnswer

NOW = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
PAGE = Page("https://a.example/", "A")
USER = 7


async def test_a_call_holds_its_max_uses_until_its_usage_is_recorded(data_dir: Path):
    from bot.claude.model import Usage
    from bot.core.ask import Spend

    limits = Limits(UsageLedger(data_dir, flush_after=None), searches=2, now=lambda: NOW)
    first = await limits.reserve(USER, {"searches": 3})
    second = await limits.reserve(USER, {"searches": 3})  # a question in parallel: the first one's 3 are held
    assert first.search and not second.search and not limits.may_search(USER)
    limits.record(Spend("1", USER, "answer", "m", Usage(web_searches=1)))
    first.park()  # its usage is recorded: 1 search spent, none held
    assert limits.may_search(USER) and (await limits.reserve(USER, {"searches": 3})).search
    assert (await limits.reserve(8, {"searches": 3})).search  # another user has their own budget
    assert (await limits.reserve(USER, {"searches": 3}, exempt=True)).search  # the owner is never limited


def assistant_for(server: FakeAnthropic, data_dir: Path, limits: Limits, chat_dir: str = "") -> Assistant:
    model = ClaudeModel(
        "claude-sonnet-5-5", api_key="sk-test", base_url=server.url, max_retries=0, timeout=30.0,
        catalog=ModelCatalog(data_dir),
    )  # fmt: skip
    web = WebSearch(WebSettings(max_uses=3, daily_limit=limits.searches), may_search=limits.may_search)
    assistant = Assistant(transcript=Transcript(data_dir), model=model, web=web, on_spend=limits.record)

    async def reserve(user_id, request, previous):
        return await limits.reserve(user_id, request, previous=previous)

    assistant.reserve = reserve
    return assistant


def searching(n: int, pause_after: int | None = None) -> WebAnswer:
    return WebAnswer([Search(f"q{i}", (PAGE,)) for i in range(n)], parts=[("답", [PAGE.url])], pause_after=pause_after)


async def test_a_paused_turn_is_checked_again_before_it_goes_on(fake_anthropic: FakeAnthropic, data_dir: Path):
    """The issue's case: limit 1, one question ran 6 searches over a pause_turn continuation."""
    ledger = UsageLedger(data_dir, flush_after=None)
    limits = Limits(ledger, searches=1, now=lambda: NOW)
    fake_anthropic.reply(searching(6, pause_after=3))
    answer = await assistant_for(fake_anthropic, data_dir, limits).ask(1, Question("뉴스", user_id=USER))
    assert answer.text and fake_anthropic.rejected == []
    spent = ledger.user_day(str(USER), limits.day()).searches
    assert spent == 3  # the first call's max_uses; the continuation was cut when it started a fourth


@pytest.mark.parametrize("limit", [1, 4])
async def test_questions_in_parallel_never_pass_the_limit_by_more_than_one_call(
    fake_anthropic: FakeAnthropic, data_dir: Path, limit: int
):
    """The issue's case: limit 1, 4 questions in parallel ran 12 searches."""
    ledger = UsageLedger(data_dir, flush_after=None)
    limits = Limits(ledger, searches=limit, now=lambda: NOW)
    fake_anthropic.default = lambda body: searching(3)
    assistant = assistant_for(fake_anthropic, data_dir, limits)
    answers = await asyncio.gather(*(assistant.ask(c, Question("뉴스", user_id=USER)) for c in range(1, 5)))
    assert all(a.text for a in answers) and fake_anthropic.rejected == []
    spent = ledger.user_day(str(USER), limits.day()).searches
    assert limit <= spent <= limit - 1 + 3  # never more than one call's max_uses over


async def test_in_a_group_the_owner_and_a_member_send_the_same_tools(fake_anthropic: FakeAnthropic, data_dir: Path):
    """Issue 30 item 4: WEB_SEARCH=owner in a group: the member's requests carry the same tools as the
    owner's (a changed tool definition invalidates the whole cache), so each reads the other's cache."""
    from bot.core.ask import Spend

    spent: list[Spend] = []
    limits = Limits(UsageLedger(data_dir, flush_after=None), now=lambda: NOW)
    assistant = assistant_for(fake_anthropic, data_dir, limits)
    assistant.web.may_search = lambda user_id: user_id == 1  # the owner only
    assistant.on_spend = spent.append
    for n in range(6):  # a prompt well over the 512-token cache minimum
        assistant.remember(-5, f"사실 {n}: " + "가나다라마바사아자차카타파하 " * 20)
    for i, who in enumerate([1, 2, 1, 2]):
        fake_anthropic.reply(searching(1) if who == 1 else f"답 {i}")
        await assistant.ask(-5, Question(f"질문 {i}", user_id=who))
    tools = [r["tools"] for r in fake_anthropic.requests]
    assert all(t == tools[0] for t in tools) and fake_anthropic.rejected == []
    member = [r for r in fake_anthropic.requests if "Web search is not available" in str(r)]
    assert len(member) == 2  # told in the per-turn context, after every cache breakpoint
    # every request after the first reads the tools, the system prompt and the earlier turns from the cache
    assert all(s.usage.cache_read_tokens > 0 for s in spent[1:])
    assert sum(s.usage.web_searches for s in spent if s.user_id == 2) == 0


async def test_a_question_that_may_not_search_still_holds_its_tokens(fake_anthropic: FakeAnthropic, data_dir: Path):
    """Every call goes through the token reservation, also when its asker may not search (a regression
    bench.token_burst's mixed burst found: the token hold was skipped with the search)."""
    from bot.claude.model import Usage
    from bot.core.ask import Spend

    limits = Limits(UsageLedger(data_dir, flush_after=None), tokens=100_000, searches=1, now=lambda: NOW)
    limits.record(Spend("1", USER, "answer", "m", Usage(web_searches=1)))  # today's search budget is spent
    assistant = assistant_for(fake_anthropic, data_dir, limits)
    reserved: list[dict] = []
    reserve = assistant.reserve

    async def counting(user_id, request, previous):
        reserved.append(dict(request))
        return await reserve(user_id, request, previous)

    assistant.reserve = counting
    limits.admit(USER, 1)
    fake_anthropic.reply("답")
    await assistant.ask(1, Question("뉴스", user_id=USER))
    assert len(reserved) == 1 and "searches" not in reserved[0]
    assert limits.held(str(USER)) == 0  # the admission hold went at the first call
