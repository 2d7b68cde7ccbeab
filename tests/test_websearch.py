"""Web search through the server tools: the real client and tool loop against the fake Messages API."""

from datetime import UTC, datetime

import pytest

from bot.claude.client import ClaudeModel
from bot.claude.model import ModelError
from bot.core.sources import WebTrail, storable
from bot.core.toolloop import ToolLoop, joined_text
from bot.texts import progress_text
from bot.tools import Toolbox, ToolContext
from bot.tools.web import (
    WebConfigError,
    WebSearch,
    WebSettings,
    supports_web_search,
    user_location,
    web_settings,
)
from tests.fakes.anthropic_server import FakeAnthropic, Text
from tests.fakes.messages_rules import validate
from tests.fakes.server_tools import Fetch, Page, Search, WebAnswer

SYSTEM = [{"type": "text", "text": "sys"}]
NOW = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
P1 = Page("https://news.example.kr/a?id=1", "서울 날씨 [속보]")
P2 = Page("https://weather.example.com/seoul", "Seoul weather")
P3 = Page("https://www.kma.go.kr/", "기상청")


def model_for(server: FakeAnthropic) -> ClaudeModel:
    return ClaudeModel("claude-sonnet-5-5", api_key="sk-test", base_url=server.url, max_retries=0, timeout=10.0)


def two_searches(pause_after: int | None = None) -> WebAnswer:
    return WebAnswer(
        [Search("서울 날씨", (P1, P2)), Search("서울 미세먼지", (P3, P1))],
        parts=[
            ("오늘 서울은 맑고 ", []),
            ("최고 5도예요", [P1.url, P2.url]),
            (". 미세먼지는 좋음", [P3.url]),
            ("입니다.", []),
        ],
        intro="찾아볼게요.",
        pause_after=pause_after,
    )


def loop_for(server: FakeAnthropic, web: WebSearch | None, spent: list | None = None) -> ToolLoop:
    return ToolLoop(
        model_for(server),
        Toolbox([]),
        max_rounds=4,
        max_tokens=1000,
        now=lambda: NOW,
        spend=lambda kind, reply: (spent if spent is not None else []).append((kind, reply.usage)),
        web=web,
    )


def ctx() -> ToolContext:
    return ToolContext("1", NOW, {"offset": 0, "at": NOW.isoformat()}, {}, 1)


@pytest.mark.parametrize("pause", [None, 1])
async def test_two_searches_three_sources_then_a_valid_next_question(fake_anthropic: FakeAnthropic, pause):
    web = WebSearch(WebSettings(max_uses=3))
    fake_anthropic.reply(two_searches(pause))
    spent: list = []
    out = await loop_for(fake_anthropic, web, spent).run(
        SYSTEM, [{"role": "user", "content": "서울 날씨?"}], ctx(), None
    )
    assert not fake_anthropic.rejected
    assert len(fake_anthropic.requests) == (2 if pause else 1)
    if pause:  # the continuation sent the paused content back as is, as the last message
        last = fake_anthropic.requests[1]["messages"][-1]
        assert last["role"] == "assistant" and any(b["type"] == "web_search_tool_result" for b in last["content"])
    assert out.text.startswith("찾아볼게요.\n\n오늘 서울은 맑고 최고 5도예요. 미세먼지는 좋음입니다.")
    assert out.text.endswith(
        "**출처 · Sources**\n"
        "1. [서울 날씨 \\[속보\\]](https://news.example.kr/a?id=1)\n"
        "2. [Seoul weather](https://weather.example.com/seoul)\n"
        "3. [기상청](https://www.kma.go.kr/)"
    )
    assert out.web.searches == 2 and sum(u.web_searches for _, u in spent) == 2
    stored = out.stored[-1]
    assert stored["content"] == out.text  # what the user saw
    assert stored["sources"][0] == {"title": "서울 날씨 [속보]", "url": P1.url} and len(stored["sources"]) == 3
    assert "encrypted" not in str(out.stored)
    # the next question carries the stored turn: accepted by the fake (no encrypted blocks, no citations)
    fake_anthropic.reply(Text("네"))
    history = [{"role": "user", "content": "서울 날씨?"}, {"role": "assistant", "content": stored["content"]}]
    await loop_for(fake_anthropic, web).run(SYSTEM, [*history, {"role": "user", "content": "고마워"}], ctx(), None)
    assert not fake_anthropic.rejected


async def test_the_fake_rejects_replayed_or_edited_search_results(fake_anthropic: FakeAnthropic):
    web = WebSearch(WebSettings())
    fake_anthropic.reply(two_searches())
    reply = await model_for(fake_anthropic).complete(
        system=SYSTEM, messages=[{"role": "user", "content": "q"}], tools=web.tools()
    )
    blocks = [b for b in reply.blocks if b["type"] != "thinking"]  # an earlier turn's thinking may be left out
    assert [b["type"] for b in blocks][:3] == ["text", "server_tool_use", "web_search_tool_result"]
    edited = [dict(b) for b in blocks]
    result = next(b for b in edited if b["type"] == "web_search_tool_result")
    result["content"] = [{**result["content"][0], "encrypted_content": "EqMadeUp"}]
    for content, wording in ((edited, "Invalid encrypted content"), (blocks[2:], "must follow its `server_tool_use`")):
        msgs = [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": content},
            {"role": "user", "content": "more"},
        ]
        with pytest.raises(ModelError) as e:
            await model_for(fake_anthropic).complete(system=SYSTEM, messages=msgs, tools=web.tools())
        assert e.value.kind == "bad_request" and wording in fake_anthropic.rejected[-1]
    # sent back whole, they are accepted (as within one turn)
    fake_anthropic.reply(Text("ok"))
    msgs = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": blocks},
        {"role": "user", "content": "more"},
    ]
    await model_for(fake_anthropic).complete(system=SYSTEM, messages=msgs, tools=web.tools())
    assert len(fake_anthropic.rejected) == 2


async def test_a_search_error_still_answers_and_says_so(fake_anthropic: FakeAnthropic, caplog):
    fake_anthropic.reply(
        WebAnswer([Search("환율", error="unavailable")], parts=[("지금은 환율을 확인하지 못했어요.", [])])
    )
    out = await loop_for(fake_anthropic, WebSearch(WebSettings())).run(
        SYSTEM, [{"role": "user", "content": "환율?"}], ctx(), None
    )
    assert out.text == "지금은 환율을 확인하지 못했어요.\n\n" + progress_text("no_search")
    assert out.web.errors == ["unavailable"] and out.web.searches == 0
    assert [r.message for r in caplog.records if "web search failed" in r.message] == [
        "chat 1: web search failed (unavailable)"
    ]


async def test_max_uses_is_enforced_by_the_fake(fake_anthropic: FakeAnthropic):
    steps = [Search(f"q{i}", (Page(f"https://e.com/{i}", f"T{i}"),)) for i in range(3)]
    fake_anthropic.reply(WebAnswer(steps, parts=[("답", ["https://e.com/0", "https://e.com/1"])]))
    out = await loop_for(fake_anthropic, WebSearch(WebSettings(max_uses=2))).run(
        SYSTEM, [{"role": "user", "content": "q"}], ctx(), None
    )
    assert out.web.searches == 2 and out.web.errors == ["max_uses_exceeded"]
    assert progress_text("no_search") not in out.text and "[T1](https://e.com/1)" in out.text


async def test_an_organization_without_web_search_gets_answers_without_it(fake_anthropic: FakeAnthropic, caplog):
    fake_anthropic.web.enabled = False
    web = WebSearch(WebSettings())
    fake_anthropic.reply(Text("검색 없이 답해요"))
    out = await loop_for(fake_anthropic, web).run(SYSTEM, [{"role": "user", "content": "뉴스?"}], ctx(), None)
    assert out.text == "검색 없이 답해요\n\n" + progress_text("no_search")
    assert "not enabled" in fake_anthropic.rejected[0] and len(fake_anthropic.requests) == 2
    assert "tools" not in fake_anthropic.requests[1] and web.disabled and not web.allowed(1)
    assert sum("not enabled for the organization" in r.message for r in caplog.records) == 1


async def test_a_fetched_page_is_a_source(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(
        WebAnswer([Fetch("https://docs.example.com/x(1)", "Docs X")], parts=[("문서에 따르면 그렇다.", [])])
    )
    out = await loop_for(fake_anthropic, WebSearch(WebSettings())).run(
        SYSTEM, [{"role": "user", "content": "https://docs.example.com/x(1) 요약해줘"}], ctx(), None
    )
    assert out.text.endswith("1. [Docs X](https://docs.example.com/x%281%29)")
    assert out.web.fetches == 1 and out.web.searches == 0


def test_declarations_are_what_the_api_takes():
    web = WebSearch(WebSettings(max_uses=2, blocked_domains=("pinterest.com",)))
    tools = web.tools()
    assert tools[0] == {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": 2,
        "blocked_domains": ["pinterest.com"],
        "user_location": {"type": "approximate", "city": "Seoul", "region": "Seoul", "country": "KR",
                          "timezone": "Asia/Seoul"},
    }  # fmt: skip
    assert tools[1]["type"] == "web_fetch_20250910" and tools[1]["citations"] == {"enabled": True}
    validate({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tools": tools})
    assert web.tools() == tools  # the same every time: the cached prefix does not move
    bad = [{**tools[0], "allowed_domains": ["a.com"]}]
    with pytest.raises(ValueError, match="both allowed_domains and blocked_domains"):
        validate({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tools": bad})


def test_settings_and_location():
    s = web_settings({"WEB_SEARCH": "owner", "WEB_SEARCH_MAX_USES": "5", "WEB_SEARCH_ALLOWED_DOMAINS": "a.com, b.org"})
    assert (s.mode, s.max_uses, s.allowed_domains, s.daily_limit) == ("owner", 5, ("a.com", "b.org"), 30)
    assert web_settings({}).mode == "on" and web_settings({"WEB_SEARCH": "false"}).mode == "off"
    for env in ({"WEB_SEARCH": "maybe"}, {"WEB_SEARCH_ALLOWED_DOMAINS": "https://a.com"},
                {"WEB_SEARCH_ALLOWED_DOMAINS": "a.com", "WEB_SEARCH_BLOCKED_DOMAINS": "b.com"},
                {"WEB_SEARCH_MAX_USES": "0"}, {"WEB_SEARCH_PRICE": "x"}):  # fmt: skip
        with pytest.raises(WebConfigError):
            web_settings(env)
    assert user_location("America/New_York")["city"] == "New York"
    assert "country" not in user_location("America/New_York")  # not guessed from the zone table (issue 30.3)
    assert "country" not in user_location("Europe/Kyiv") and user_location("Asia/Seoul")["country"] == "KR"
    assert supports_web_search("claude-sonnet-5-5") and not supports_web_search("claude-3-haiku-20240307")
    assert not supports_web_search("claude-sonnet-5-5", {"server_tools": {"web_search": {"supported": False}}})
    assert supports_web_search("my-proxy", {"server_tools": {"web_search": {"supported": True}}})


def test_owner_mode_and_per_user_check():
    web = WebSearch(WebSettings(mode="owner"), may_search=lambda user: user == 1)
    assert web.allowed(1) and not web.allowed(2)
    assert not WebSearch(WebSettings(mode="off")).allowed(1)
    assert not WebSearch(WebSettings(), model_supports=False).allowed(1)


def test_sources_are_deduplicated_and_stored_without_encrypted_parts():
    trail = WebTrail()
    cite = {"type": "web_search_result_location", "url": "https://a.com/x", "title": "A", "encrypted_index": "E"}
    blocks = [
        {"type": "text", "text": "one", "citations": [cite]},
        {"type": "text", "text": "two", "citations": [{**cite, "url": "https://a.com/x/"}]},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        {"type": "text", "text": "three", "citations": [{**cite, "url": "javascript:alert(1)"}]},
    ]
    trail.add_reply(blocks)
    assert [s.url for s in trail.sources] == ["https://a.com/x"]
    assert storable(blocks) == [{"type": "text", "text": t} for t in ("one", "two", "three")]
    assert joined_text(blocks) == "onetwo\n\nthree"


def test_doctor_says_whether_search_works(data_dir, fake_anthropic: FakeAnthropic):
    from tests.test_doctor import env_for, lines_of, run_doctor

    env = env_for(data_dir, ANTHROPIC_BASE_URL=fake_anthropic.url, ANTHROPIC_MODEL="claude-sonnet-4-6",
                  TELEGRAM_BASE_URL="http://127.0.0.1:9")  # fmt: skip
    _, lines = run_doctor(env)
    assert lines_of(lines, "websearch")[0].startswith("ok       websearch: web search works for everyone")
    searched = fake_anthropic.requests[-1]
    assert searched["max_tokens"] == 1 and searched["tools"][0]["type"] == "web_search_20250305"
    fake_anthropic.web.enabled = False
    _, lines = run_doctor(env)
    assert lines_of(lines, "websearch")[0].startswith("problem  websearch: web search is not enabled")
    _, lines = run_doctor({**env, "WEB_SEARCH": "off"})
    assert lines_of(lines, "websearch")[0].startswith("note     websearch: off")


def test_doctor_words_a_failed_search_check_as_the_other_online_checks_do(data_dir, fake_anthropic: FakeAnthropic):
    from tests.test_doctor import env_for, lines_of, run_doctor

    env = env_for(data_dir, ANTHROPIC_BASE_URL=fake_anthropic.url, ANTHROPIC_MODEL="claude-sonnet-4-6")
    fake_anthropic.fail(503, "overloaded", "overloaded_error")
    _, lines = run_doctor(env, "--only", "websearch")
    host = fake_anthropic.url.rstrip("/")
    assert lines_of(lines, "websearch") == [
        f"note     websearch: not checked: {host}: HTTP 503 (see the anthropic line)"
    ]


def web_tools() -> list[dict]:
    return WebSearch(WebSettings()).tools()


def assistant_for(server: FakeAnthropic, data_dir, **kw):
    from bot.core.ask import Assistant
    from memory.recall import RecallIndex
    from memory.transcript import Transcript

    return Assistant(
        transcript=Transcript(data_dir),
        model=model_for(server),
        now=lambda: NOW,
        recall=RecallIndex(data_dir),
        web=WebSearch(WebSettings()),
        **kw,
    )


def test_the_terminal_shows_the_sources_under_a_streamed_answer(fake_anthropic: FakeAnthropic, data_dir):
    import io

    from bot.cli.chat import ChatSession
    from bot.cli.terminal import stream_reader

    fake_anthropic.reply(two_searches())
    out = io.StringIO()
    session = ChatSession(assistant_for(fake_anthropic, data_dir), "local", out=out, err=io.StringIO(), lang="ko")
    session.run(stream_reader(io.StringIO("서울 날씨?\n")))
    shown = out.getvalue()
    assert "미세먼지는 좋음입니다.\n\n출처 · Sources\n1. 서울 날씨 [속보]\n   https://news.example.kr/a?id=1\n" in shown
    assert "3. 기상청\n   https://www.kma.go.kr/\n" in shown


async def test_recalled_turns_keep_their_sources_as_the_assistants(fake_anthropic: FakeAnthropic, data_dir):
    from memory.recall.block import hit_lines

    assistant = assistant_for(fake_anthropic, data_dir)
    fake_anthropic.reply(two_searches())
    await assistant.ask(1, "서울 날씨?")
    await assistant.maintain(1)
    records = [e.data for e in assistant.transcript.read(1)]
    users = [r for r in records if r["role"] == "user"]
    assert users == [{"role": "user", "content": "서울 날씨?", "at": NOW.isoformat()}]  # no page is the user's
    hits = assistant.search(1, "기상청")
    assert [h.role for h in hits if "kma.go.kr" in h.content] == ["assistant"]
    assert all("kma.go.kr" not in h.content for h in hits if h.role == "user")
    line = hit_lines([h for h in hits if h.role == "assistant"], "Asia/Seoul", width=1000)[0]
    assert " assistant: 찾아볼게요." in line and "출처 · Sources" in line and "https://www.kma.go.kr/" in line


async def test_a_model_without_web_search_gets_no_web_tools(fake_anthropic: FakeAnthropic, data_dir):
    fake_anthropic.add_model("claude-plain-1", "claude-sonnet-5-5", web_search=False)
    assistant = assistant_for(fake_anthropic, data_dir)
    assistant.model.name = "claude-plain-1"  # e.g. after /model; its capabilities say no web search
    fake_anthropic.reply(Text("검색 없이"))
    answer = await assistant.ask(1, "뉴스?")
    assert answer.text == "검색 없이" and fake_anthropic.rejected == []
    assert all(t.get("type", "custom") == "custom" for t in fake_anthropic.requests[-1].get("tools", []))
    # the fake refuses what the real API refuses: the tool on that model
    plain = ClaudeModel("claude-plain-1", client=model_for(fake_anthropic).client)
    with pytest.raises(ModelError):
        await plain.complete(system=SYSTEM, messages=[{"role": "user", "content": "x"}], tools=web_tools())
    assert "not supported on claude-plain-1" in fake_anthropic.rejected[-1]
    # and back on a model that takes it, the tools are there again
    assistant.model.name = "claude-sonnet-5-5"
    fake_anthropic.reply(Text("다시"))
    await assistant.ask(1, "또?")
    assert fake_anthropic.requests[-1]["tools"][-2]["type"] == "web_search_20250305"


def test_searches_are_counted_priced_and_limited(data_dir):
    from bot.claude.model import Usage
    from bot.claude.pricing import PriceTable
    from bot.commands.usage import chat_usage_text, cost_of
    from bot.core.ask import Spend
    from bot.core.limits import Limits
    from memory.usage import UsageLedger

    ledger = UsageLedger(data_dir, flush_after=None)
    limits = Limits(ledger, searches=3, now=lambda: NOW)
    limits.record(Spend("5", 7, "answer", "no-price-model", Usage(web_searches=2, web_fetches=1)))
    assert limits.may_search(7) and ledger.user_day("7", limits.day()).searches == 2
    limits.record(Spend("5", 7, "answer", "no-price-model", Usage(web_searches=1)))
    assert not limits.may_search(7) and limits.may_search(7, exempt=True) and limits.may_search(8)
    tally = ledger.chat_day("5", limits.day())
    assert cost_of(tally, PriceTable()) == (pytest.approx(0.03), [])
    assert cost_of(tally, PriceTable(search_price=25.0))[0] == pytest.approx(0.075)  # WEB_SEARCH_PRICE
    text = chat_usage_text(limits, PriceTable(), "5", "en")
    assert "3 web searches → $0.0300" in text
    ledger.close()
    again = UsageLedger(data_dir, flush_after=None)  # kept in usage.json
    assert again.chat_total("5").searches == 3 and again.user_total("7").searches == 3


async def test_a_request_that_times_out_while_searching_is_answered_without_search(
    fake_anthropic: FakeAnthropic, caplog
):
    import threading

    hold = threading.Event()  # the searching request never finishes (until the end of the test)
    fake_anthropic.reply(Text("검색하는 중", gate=hold, gate_after=0, chunk=2), Text("검색 없이 답해요"))
    loop = loop_for(fake_anthropic, WebSearch(WebSettings()))
    loop.model = ClaudeModel("claude-sonnet-5-5", api_key="sk-test", base_url=fake_anthropic.url, max_retries=0,
                             timeout=3.0)  # fmt: skip
    try:
        out = await loop.run(SYSTEM, [{"role": "user", "content": "뉴스?"}], ctx(), None)
    finally:
        hold.set()
    assert out.text == "검색 없이 답해요\n\n" + progress_text("no_search")
    first, second = fake_anthropic.requests[-2:]
    assert first["tools"][-2]["type"] == "web_search_20250305" and "tools" not in second
    assert sum("timed out; answering without it" in r.message for r in caplog.records) == 1


async def test_the_fake_does_not_search_under_tool_choice_none(fake_anthropic: FakeAnthropic):
    """Fake rule (Tool use, tool_choice: with "none" Claude uses no tool, server tools included)."""
    model = model_for(fake_anthropic)
    fake_anthropic.reply(two_searches())
    reply = await model.complete(
        system=SYSTEM, messages=[{"role": "user", "content": "날씨?"}], tools=web_tools(), tool_choice={"type": "none"}
    )
    assert reply.usage.web_searches == 0 and not any(b["type"] == "server_tool_use" for b in reply.blocks)


async def test_a_search_its_asker_may_not_run_is_cut_before_it_runs(fake_anthropic: FakeAnthropic):
    """The client closes the stream at the server_tool_use block (issue 30 item 4): ModelError
    search_refused, with the input usage message_start reported (billed) and no search counted."""
    model = model_for(fake_anthropic)
    fake_anthropic.reply(two_searches())
    with pytest.raises(ModelError) as e:
        await model.complete(
            system=SYSTEM, messages=[{"role": "user", "content": "날씨?"}], tools=web_tools(), allow_search=False
        )
    assert e.value.kind == "search_refused" and e.value.reply is not None
    assert e.value.reply.usage.input_tokens > 0 and e.value.reply.usage.web_searches == 0
