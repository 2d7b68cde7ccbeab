"""The real Claude client against the fake Messages API server (real HTTP on 127.0.0.1)."""

import socket

import pytest

from bot.claude.client import ClaudeModel
from bot.claude.model import ModelError, Usage
from tests.fakes.anthropic_server import Error, FakeAnthropic, Text

SYSTEM = [{"type": "text", "text": "sys"}]
MESSAGES = [{"role": "user", "content": "안녕"}]


def model_for(server: FakeAnthropic, **kw) -> ClaudeModel:
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 10.0)
    return ClaudeModel("claude-test", api_key="sk-test", base_url=server.url, **kw)


async def test_streams_text_and_reports_usage(fake_anthropic: FakeAnthropic):
    usage = {"input_tokens": 321, "output_tokens": 47, "cache_read_input_tokens": 5, "cache_creation_input_tokens": 9}
    fake_anthropic.reply(Text("가나다라마바사" * 10, chunk=7, usage=usage))
    pieces: list[str] = []

    async def on_text(piece: str) -> None:
        pieces.append(piece)

    reply = await model_for(fake_anthropic).complete(system=SYSTEM, messages=MESSAGES, on_text=on_text)
    assert reply.text == "가나다라마바사" * 10
    assert len(pieces) == 10 and "".join(pieces) == reply.text
    assert reply.usage == Usage(321, 47, 5, 9)
    body = fake_anthropic.requests[-1]
    assert body["stream"] is True and body["system"] == SYSTEM and body["messages"] == MESSAGES
    assert body["model"] == "claude-test"
    headers = fake_anthropic.headers[-1]
    assert headers.get("x-api-key") == "sk-test" and headers.get("anthropic-version") == "2026-10-21"


@pytest.mark.parametrize(
    ("status", "kind"),
    [(429, "rate_limit"), (401, "auth"), (400, "bad_request"), (529, "overloaded"), (500, "server")],
)
async def test_http_errors_map_to_kinds(fake_anthropic: FakeAnthropic, status: int, kind: str):
    fake_anthropic.reply(Error(status, message="nope"))
    with pytest.raises(ModelError) as e:
        await model_for(fake_anthropic).complete(system=SYSTEM, messages=MESSAGES)
    assert e.value.kind == kind


async def test_rate_limit_is_retried(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Error(429, "rate_limit_error", headers={"retry-after": "0"}), Text("됐다"))
    reply = await model_for(fake_anthropic, max_retries=2).complete(system=SYSTEM, messages=MESSAGES)
    assert reply.text == "됐다" and len(fake_anthropic.requests) == 2


async def test_timeout(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Text("late", delay=2.0))
    with pytest.raises(ModelError) as e:
        await model_for(fake_anthropic, timeout=0.5).complete(system=SYSTEM, messages=MESSAGES)
    assert e.value.kind == "timeout"


async def test_read_timeout_mid_stream(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Text("a" * 100, chunk=10, chunk_delay=1.0))
    with pytest.raises(ModelError) as e:
        await model_for(fake_anthropic, timeout=0.4).complete(system=SYSTEM, messages=MESSAGES)
    assert e.value.kind == "timeout"


async def test_connection_refused():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = ClaudeModel("m", api_key="k", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    with pytest.raises(ModelError) as e:
        await model.complete(system=SYSTEM, messages=MESSAGES)
    assert e.value.kind == "connection"


async def test_empty_answer_is_an_error(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Text(""))
    with pytest.raises(ModelError) as e:
        await model_for(fake_anthropic).complete(system=SYSTEM, messages=MESSAGES)
    assert e.value.kind == "empty"
