"""The bot's own Claude API client (bot/claude/api.py, accumulate.py) against the fake Messages API.

The fake is the judge: it records every message it answered whole (``answered``), and what the client
put together from the stream must be that message, block for block and field for field. Retries follow
the SDK's rules (its README's "Retries", its ``_base_client.py``), timed by an injected ``sleep`` that
records the waits instead of waiting.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from bot.claude.accumulate import Accumulator
from bot.claude.api import Client, sse
from bot.claude.api import lines as split
from bot.claude.client import ClaudeModel
from bot.claude.model import ModelError, Usage
from bot.claude.modelinfo import ModelCatalog
from bot.tools.web import WebSearch, WebSettings
from tests.fakes.anthropic_server import Error, FakeAnthropic, StreamError, Text, ToolCalls
from tests.fakes.scripts import NOVEL_BLOCK
from tests.fakes.server_tools import Page, Search, WebAnswer

SYSTEM = [{"type": "text", "text": "sys"}]
ASK = [{"role": "user", "content": "안녕"}]
TOOLS = [{"name": "remember", "description": "d", "input_schema": {"type": "object", "properties": {}}}]


class Waits:
    """The retry waits asked for, recorded; nothing waits."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


def model(server: FakeAnthropic, data_dir: Path, name: str = "claude-sonnet-5-5", retries: int = 0,
          waits: Waits | None = None, **client: object) -> ClaudeModel:  # fmt: skip
    api = Client("sk-test", base_url=server.url, max_retries=retries, timeout=30.0, sleep=waits or Waits(),
                 random=lambda: 0.0, **client)  # type: ignore[arg-type]  # fmt: skip
    return ClaudeModel(name, client=api, catalog=ModelCatalog(data_dir))


# -- what the stream adds up to -----------------------------------------------------------------------


async def test_thinking_text_and_tool_calls_are_kept_exactly_as_the_fake_sent_them(fake_anthropic, data_dir):
    """A 5.5 model thinks first (a signed thinking block, then a redacted one), writes a note and asks for a
    tool whose input JSON comes in 3-character pieces, split inside strings and numbers."""
    value = {"text": "생일은 3월 14일", "n": [1, 22, 333], "deep": {"ok": True, "none": None}}
    fake_anthropic.reply(ToolCalls([("remember", value)], text="기억할게요.", chunk=3, redacted=True))
    seen: list[str] = []

    async def on_tool(name: str) -> None:
        seen.append(name)

    reply = await model(fake_anthropic, data_dir).complete(system=SYSTEM, messages=ASK, tools=TOOLS, on_tool=on_tool)
    sent = fake_anthropic.answered[-1]
    assert [b["type"] for b in sent["content"]] == ["thinking", "redacted_thinking", "thinking", "tool_use"]
    assert list(reply.content) == sent["content"]  # every field: the signature, the tool call's caller
    assert reply.tool_calls[0]["input"] == value and seen == ["remember"]
    assert reply.stop_reason == sent["stop_reason"] == "tool_use" and reply.model == sent["model"]
    usage = sent["usage"]
    assert reply.usage == Usage(usage["input_tokens"], usage["output_tokens"], usage["cache_read_input_tokens"],
                                usage["cache_creation_input_tokens"])  # fmt: skip


def test_thinking_and_text_in_many_pieces_add_up_once_each_block_stops():
    """The Streaming messages page's thinking example (a thinking block begun empty, thinking_delta pieces, a
    signature_delta), then a text block: the shown thinking reaches the message whole, and so does the text,
    also when the stream ends without the text's content_block_stop."""
    events = [("message_start", {"message": {"id": "m", "role": "assistant", "content": [], "usage": {}}}),
              ("content_block_start", {"index": 0, "content_block": {"type": "thinking", "thinking": "",
                                                                     "signature": ""}})]  # fmt: skip
    thought = "생각해 보면 " * 300
    events += [("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": thought[i:i + 7]}})
               for i in range(0, len(thought), 7)]  # fmt: skip
    events += [("content_block_delta", {"index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
               ("content_block_stop", {"index": 0}),
               ("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}})]  # fmt: skip
    stream = Accumulator()
    shown = [stream.add(*e) for e in events]
    shown += [stream.add("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": w}})
              for w in ("안녕", "하세요", "!")]  # fmt: skip
    stream.add("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}})
    stream.add("message_stop", {})
    content = stream.message()["content"]
    assert content == [{"type": "thinking", "thinking": thought, "signature": "sig"},
                       {"type": "text", "text": "안녕하세요!"}]  # fmt: skip
    assert "".join(shown) == "안녕하세요!"  # the text, piece by piece, for the preview; never the thinking


async def test_web_search_blocks_and_citations_are_kept_exactly_as_sent(fake_anthropic, data_dir):
    pages = (Page("https://news.example.kr/a?id=1", "서울 날씨"), Page("https://kma.go.kr/", "기상청"))
    answer = WebAnswer([Search("서울 날씨", pages)], parts=[("맑아요", [p.url for p in pages]), (".", [])],
                       intro="찾아볼게요.")  # fmt: skip
    fake_anthropic.reply(answer)
    tools = WebSearch(WebSettings()).tools()
    reply = await model(fake_anthropic, data_dir).complete(system=SYSTEM, messages=ASK, tools=tools)
    sent = fake_anthropic.answered[-1]
    kinds = [b["type"] for b in sent["content"]]
    assert {"server_tool_use", "web_search_tool_result"} <= set(kinds)
    assert any(b.get("citations") for b in sent["content"] if b["type"] == "text")
    assert list(reply.content) == sent["content"]  # citations added one delta at a time, results whole
    assert reply.usage.web_searches == sent["usage"]["server_tool_use"]["web_search_requests"] == 1


async def test_a_block_an_event_and_a_delta_of_unknown_types_do_not_stop_the_answer(fake_anthropic, data_dir):
    fake_anthropic.reply(Text("답이에요", novel=True, chunk=2))
    pieces: list[str] = []

    async def on_text(piece: str) -> None:
        pieces.append(piece)

    reply = await model(fake_anthropic, data_dir).complete(system=SYSTEM, messages=ASK, on_text=on_text)
    assert reply.text == "답이에요" and "".join(pieces) == "답이에요"
    assert reply.content[-1] == NOVEL_BLOCK == fake_anthropic.answered[-1]["content"][-1]  # kept as it came
    assert list(reply.content) == fake_anthropic.answered[-1]["content"]


async def test_an_error_event_mid_stream_is_its_error_after_the_text_before_it(fake_anthropic, data_dir):
    fake_anthropic.reply(StreamError("부분 답", type="overloaded_error", message="Overloaded"))
    pieces: list[str] = []

    async def on_text(piece: str) -> None:
        pieces.append(piece)

    with pytest.raises(ModelError) as e:
        await model(fake_anthropic, data_dir, retries=2).complete(system=SYSTEM, messages=ASK, on_text=on_text)
    assert e.value.kind == "overloaded" and "".join(pieces) == "부분 답"
    assert len(fake_anthropic.requests) == 1  # a stream that began is never asked again


async def test_a_connection_dropped_mid_stream_is_a_connection_error_not_a_short_answer(fake_anthropic, data_dir):
    fake_anthropic.reply(Text("끝까지 가지 못한 답", drop=True, chunk=4))
    with pytest.raises(ModelError) as e:
        await model(fake_anthropic, data_dir, retries=2).complete(system=SYSTEM, messages=ASK)
    assert e.value.kind == "connection" and len(fake_anthropic.requests) == 1


async def test_a_stream_ending_in_good_order_before_message_stop_is_not_an_answer(fake_anthropic, data_dir):
    # the HTTP body ends properly (its last chunk), the answer does not: no message_stop, no stop_reason
    fake_anthropic.reply(Text("중간에 끝난 답", cut=True, chunk=4))
    with pytest.raises(ModelError) as e:
        await model(fake_anthropic, data_dir, retries=2).complete(system=SYSTEM, messages=ASK)
    assert e.value.kind == "connection" and len(fake_anthropic.requests) == 1


async def test_line_separators_json_leaves_raw_stay_inside_the_answer(fake_anthropic, data_dir):
    """U+2028, U+2029 and U+0085 end lines for ``str.splitlines`` but not in an event stream (only CR and
    LF do), and JSON does not escape them: the fake sends them raw inside its data lines."""
    text = "LS\u2028 PS\u2029 NEL\x85 VT\x0b FF\x0c FS\x1c 끝"
    fake_anthropic.reply(Text(text, chunk=3))
    reply = await model(fake_anthropic, data_dir).complete(system=SYSTEM, messages=ASK)
    assert reply.text == text


async def test_server_sent_events_follow_the_event_stream_format():
    """The HTML standard's event stream interpretation: comments, several data lines, one space dropped,
    an event without data or left unfinished at the end is not dispatched."""

    async def lines():
        for line in [": keep-alive", "event: a", "data: {", "data:  x", "", "event: nothing", "", "data: 2", "",
                     "event: cut", "data: 3"]:  # fmt: skip
            yield line

    assert [e async for e in sse(lines())] == [("a", "{\n x"), ("", "2")]

    async def chunks():  # CRLF, CR and LF line ends, a CRLF cut between two chunks, UTF-8 cut in two
        for chunk in [b"data: 1\r", b"\ndata: 2\rdata: \xea\xb0", b"\x80\n\n"]:
            yield chunk

    assert [line async for line in split(chunks())] == ["data: 1", "data: 2", "data: 가", ""]


# -- retries, as the SDK documents them ----------------------------------------------------------------


async def test_an_overloaded_answer_then_success_is_one_answer_after_a_backoff(fake_anthropic, data_dir):
    waits = Waits()
    fake_anthropic.reply(Error.overloaded(), Error(500, "api_error"), Text("됐어요"))
    reply = await model(fake_anthropic, data_dir, retries=2, waits=waits).complete(system=SYSTEM, messages=ASK)
    assert reply.text == "됐어요" and len(fake_anthropic.requests) == 3
    assert waits.asked == [0.5, 1.0]  # 0.5 s doubled per retry (no jitter: random() is 0 here)


async def test_retries_stop_at_max_retries(fake_anthropic, data_dir):
    waits = Waits()
    fake_anthropic.reply(*[Error.overloaded()] * 4)
    with pytest.raises(ModelError) as e:
        await model(fake_anthropic, data_dir, retries=2, waits=waits).complete(system=SYSTEM, messages=ASK)
    assert e.value.kind == "overloaded" and len(fake_anthropic.requests) == 3 and len(waits.asked) == 2


@pytest.mark.parametrize(
    ("error", "asked"),
    [
        (Error(529, "overloaded_error", headers={"x-should-retry": "false"}), 1),  # the server says no
        (Error(400, "invalid_request_error", headers={"x-should-retry": "true"}), 2),  # the server says yes
        (Error.invalid_request(), 1),  # not a status the SDK retries
        (Error.spend_cap(), 1),  # Rate limits page: retrying fails until access resumes
    ],
)
async def test_what_is_asked_again(fake_anthropic, data_dir, error, asked):
    fake_anthropic.reply(error, Text("두 번째"))
    try:
        await model(fake_anthropic, data_dir, retries=1).complete(system=SYSTEM, messages=ASK)
    except ModelError:
        pass
    assert len(fake_anthropic.requests) == asked


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "120"}, 0.5),
    ],  # over 60 s: the backoff instead  # fmt: skip
)
async def test_retry_after_is_honoured(fake_anthropic, data_dir, headers, wait):
    waits = Waits()
    fake_anthropic.reply(Error(429, "rate_limit_error", headers=headers), Text("기다렸어요"))
    reply = await model(fake_anthropic, data_dir, retries=2, waits=waits).complete(system=SYSTEM, messages=ASK)
    assert reply.text == "기다렸어요" and waits.asked == [wait]


async def test_a_refused_connection_is_retried_then_named(data_dir):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    waits = Waits()
    api = Client("sk-test", base_url=f"http://127.0.0.1:{port}", max_retries=2, sleep=waits, random=lambda: 0.0)
    claude = ClaudeModel("claude-sonnet-5-5", client=api, catalog=ModelCatalog(data_dir))
    with pytest.raises(ModelError) as e:
        await claude.complete(system=SYSTEM, messages=ASK)
    assert e.value.kind == "connection"
    assert waits.asked.count(0.5) == 2 and waits.asked.count(1.0) == 2  # the Models API read, then the answer


async def test_a_request_that_timed_out_is_asked_again(fake_anthropic, data_dir):
    """The SDK's README: "requests that time out are retried twice by default"."""
    waits = Waits()
    fake_anthropic.reply(Text("늦은 답", delay=3.0), Text("두 번째 답"))
    claude = model(fake_anthropic, data_dir, retries=1, waits=waits)
    claude.client.timeout = 1.5  # the first answer starts after 3 s; the second at once
    reply = await claude.complete(system=SYSTEM, messages=ASK)
    assert reply.text == "두 번째 답" and len(fake_anthropic.requests) == 2 and waits.asked == [0.5]


async def test_the_models_api_entry_and_list_are_read(fake_anthropic, data_dir):
    claude = model(fake_anthropic, data_dir)
    info = await claude.fetch_info()
    assert info.known and info.max_tokens == 128_000
    listed = await claude.available()
    assert "claude-sonnet-5-5" in [m.id for m in listed]
    assert fake_anthropic.model_lookups[:2] == ["/v1/models/claude-sonnet-5-5", "/v1/models?limit=100"]
    await claude.aclose()
