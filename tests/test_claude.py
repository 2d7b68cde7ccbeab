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
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(
        api_key="sk-test", base_url=server.url, max_retries=kw.pop("max_retries"), timeout=kw.pop("timeout", 10.0)
    )
    return ClaudeModel("claude-test", client=client, **kw)


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
    assert headers.get("x-api-key") == "sk-test" or headers.get("authorization") == "Bearer sk-test"


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
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(api_key="k", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    with pytest.raises(ModelError) as e:
        await ClaudeModel("m", client=client).complete(system=SYSTEM, messages=MESSAGES)
    assert e.value.kind == "connection"


async def test_empty_answer_is_an_error(fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Text(""))
    with pytest.raises(ModelError) as e:
        await model_for(fake_anthropic).complete(system=SYSTEM, messages=MESSAGES)
    assert e.value.kind == "empty"


async def test_the_sdk_is_loaded_off_the_event_loop(monkeypatch: pytest.MonkeyPatch):
    """While the SDK import is under way the loop keeps serving other chats (import lock: not on the loop)."""
    import asyncio
    import threading

    import bot.claude.client as claude

    importing, release = threading.Event(), threading.Event()

    def slow_import() -> None:
        importing.set()
        release.wait(10)  # a hang guard: released below as soon as the loop shows it is free
        claude._sdk_loaded.set()

    monkeypatch.setattr(claude, "_sdk_loaded", threading.Event())
    monkeypatch.setattr(claude, "import_sdk", slow_import)
    loading = asyncio.create_task(claude.load_sdk())
    # this await completes only if the loop runs while slow_import is blocked
    assert await asyncio.to_thread(importing.wait, 10)
    assert not loading.done() and not release.is_set()
    release.set()
    await loading
    assert claude._sdk_loaded.is_set()
    await claude.load_sdk()  # loaded: returns at once without importing again


async def test_a_question_waits_for_the_sdk_before_calling(fake_anthropic: FakeAnthropic, monkeypatch):
    """complete() loads the SDK before its request leaves: the fake server had no request when the load ran."""
    import bot.claude.client as claude

    requests_when_loaded: list[int] = []

    async def load() -> None:
        requests_when_loaded.append(len(fake_anthropic.requests))

    monkeypatch.setattr(claude, "load_sdk", load)
    fake_anthropic.reply(Text("네"))
    reply = await model_for(fake_anthropic).complete(system=SYSTEM, messages=MESSAGES)
    assert reply.text == "네" and len(fake_anthropic.requests) == 1
    assert requests_when_loaded and set(requests_when_loaded) == {0}  # (the Models API lookup loads it too)
