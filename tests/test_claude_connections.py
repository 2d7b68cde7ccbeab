"""The Claude client's connections: a busy minute's answers are all written at once, none waits for a
connection (bot/claude/api.py, CONNECTION_LIMITS; the fake server is real HTTP on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import threading

from bot.claude.api import Client
from tests.fakes.anthropic_server import FakeAnthropic, Text
from tests.fakes.http import hang_guard

AT_ONCE = 120  # more than httpx's default pool of 100


async def test_more_than_a_hundred_answers_stream_at_once_none_waits_for_a_connection(fake_anthropic: FakeAnthropic):
    held = threading.Event()  # every stream holds before its text until all of them reached the server
    fake_anthropic.default = lambda body: Text("hi", gate=held)
    api = Client("sk-test", base_url=fake_anthropic.url, max_retries=0)
    body = {"model": "claude-sonnet-5-5", "max_tokens": 100, "messages": [{"role": "user", "content": "q"}]}
    events: list[list[str]] = []

    async def one() -> None:
        async with api.stream(body) as stream:
            events.append([name async for name, _ in stream])

    calls = [asyncio.create_task(one()) for _ in range(AT_ONCE)]
    try:
        # with a pool of 100 the 101st request is never sent while the first hundred are held: this fails
        await asyncio.to_thread(fake_anthropic.wait_requests, AT_ONCE, hang_guard(5))
    finally:
        held.set()
        await asyncio.gather(*calls, return_exceptions=True)
        await api.aclose()
    assert len(events) == AT_ONCE and all(e[-1] == "message_stop" for e in events)
