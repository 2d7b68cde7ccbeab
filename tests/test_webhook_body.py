"""The webhook server refuses before reading the body: a wrong secret or an oversized body costs no memory.

The real python-telegram-bot webhook server (tornado) in this process, hardened by ``bot.tg.webhook.install``;
a raw socket plays the sender, announcing a 95 MB body it never sends: a refusal that arrives anyway was
made before the body was read (without the fix tornado waits for the 95 MB first).
"""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from telegram import Bot
from telegram.ext._utils import webhookhandler

from bot.tg import webhook

SECRET = "Webhook_s3cret-0123456789-abcdefghij"
HUGE = 95 * 1024 * 1024
WAIT = 20.0  # generous: only reached if the server waits for a body that never comes


@pytest.fixture
async def server():
    webhook.install()
    queue: asyncio.Queue = asyncio.Queue()
    app = webhookhandler.WebhookAppClass("/hook", Bot("123456:TEST"), queue, SECRET)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.setblocking(False)
    httpd = webhookhandler.WebhookServer("127.0.0.1", 0, app, None, listener)
    await httpd.serve_forever()
    yield listener.getsockname()[1], queue
    await httpd.shutdown()


async def exchange(port: int, head: str, body: bytes = b"") -> str:
    """Send a request head (and maybe part of a body); the status line of the answer, or "" if closed."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head.encode() + b"\r\n" + body)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), WAIT)
        return line.decode().strip()
    finally:
        writer.close()


def head(path: str, length: int | str, secret: str | None) -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: bot.example.com", "Content-Type: application/json"]
    if secret is not None:
        lines.append(f"X-Telegram-Bot-Api-Secret-Token: {secret}")
    lines.append(f"Content-Length: {length}" if isinstance(length, int) else length)
    return "\r\n".join(lines) + "\r\n"


async def test_a_wrong_or_missing_secret_is_refused_before_the_body(server):
    port, queue = server
    assert (await exchange(port, head("/hook", HUGE, None))).startswith("HTTP/1.1 403")
    assert (await exchange(port, head("/hook", HUGE, "not-the-secret"))).startswith("HTTP/1.1 403")
    assert queue.empty()


async def test_an_oversized_body_is_refused_before_it_is_read_even_with_the_secret(server):
    port, queue = server
    assert (await exchange(port, head("/hook", HUGE, SECRET))).startswith("HTTP/1.1 413")
    assert (await exchange(port, head("/hook", webhook.MAX_BODY_BYTES + 1, SECRET))).startswith("HTTP/1.1 413")
    # a chunked body has no length to refuse up front: it is cut at the bound
    chunk = b"x" * (256 * 1024)
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(6))
    answer = await exchange(port, head("/hook", "Transfer-Encoding: chunked", SECRET), chunked)
    assert answer == "" or answer.startswith(("HTTP/1.1 413", "HTTP/1.1 400"))
    # any other path is bounded too (tornado's max_body_size: 400 and the connection closed)
    assert (await exchange(port, head("/elsewhere", HUGE, SECRET))).startswith("HTTP/1.1 400")
    assert queue.empty()


async def test_a_real_update_within_the_bound_is_taken(server):
    port, queue = server
    update = {
        "update_id": 7,
        "message": {
            "message_id": 1,
            "date": 0,
            "chat": {"id": 5, "type": "private"},
            "from": {"id": 5, "is_bot": False, "first_name": "Minji"},
            "text": "안녕" + " " * 2000,
        },
    }
    body = json.dumps(update).encode()
    assert (await exchange(port, head("/hook", len(body), SECRET), body)).startswith("HTTP/1.1 200")
    got = await asyncio.wait_for(queue.get(), WAIT)
    assert got.update_id == 7 and got.message.text.startswith("안녕")
