"""Webhook mode end to end: the real ``python -m bot`` with WEBHOOK_URL, updates POSTed to its port.

Telegram would POST each update to WEBHOOK_URL with the header X-Telegram-Bot-Api-Secret-Token;
here the test plays Telegram's part against the local webhook server (WEBHOOK_LISTEN:WEBHOOK_PORT,
the path of WEBHOOK_URL), while the fake Bot API records setWebhook and receives the replies.
"""

import json
import os
import random
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import BotProcess
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.http import hang_guard
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import convo, stored

CHAT = 5151
SECRET = "s3cret_Webhook-token_0123456789_abcdefghij"
URL = "https://bot.example.com/tg/hook"


def free_port() -> int:
    """A free port below the kernel's ephemeral range: the port the bot is told to listen on stays free
    until it binds it, although other test workers keep opening kernel-chosen (ephemeral) ports meanwhile."""
    ports = Path("/proc/sys/net/ipv4/ip_local_port_range")
    low = int(ports.read_text().split()[0]) if ports.exists() else 32768
    for port in random.sample(range(max(1024, low - 12000), low), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port below the ephemeral range")


def post(port: int, path: str, update: dict, secret: str | None) -> int:
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["X-Telegram-Bot-Api-Secret-Token"] = secret
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=json.dumps(update).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def announce(port: int, length: int, secret: str | None) -> str:
    """POST headers announcing a body of ``length`` bytes that is never sent; the answer's status line."""
    lines = ["POST /tg/hook HTTP/1.1", "Host: bot.example.com", "Content-Type: application/json"]
    lines += [f"X-Telegram-Bot-Api-Secret-Token: {secret}"] if secret is not None else []
    lines += [f"Content-Length: {length}", "", ""]
    with socket.create_connection(("127.0.0.1", port), timeout=hang_guard(20)) as s:
        s.sendall("\r\n".join(lines).encode())
        return s.makefile("rb").readline().decode().strip()  # a timeout here: the server waited for the body


def wait_listening(port: int, bot: BotProcess, timeout: float = 30.0) -> None:
    """setWebhook is called before the server listens: wait until it accepts connections."""
    deadline = time.monotonic() + hang_guard(timeout)
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert bot.proc is not None and bot.proc.poll() is None, f"bot exited:\n{bot.log}"
            time.sleep(0.05)
    raise AssertionError(f"webhook server did not listen:\n{bot.log}")


def test_webhook_answers_only_requests_with_the_secret(
    tmp_path, bot_env, data_dir, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    port = free_port()
    heartbeat = tmp_path / "heartbeat"
    env = {
        **bot_env,
        "WEBHOOK_URL": URL,
        "WEBHOOK_SECRET": SECRET,
        "WEBHOOK_LISTEN": "127.0.0.1",
        "WEBHOOK_PORT": str(port),
        "HEARTBEAT_FILE": str(heartbeat),
    }
    bot = BotProcess(env, tmp_path, tmp_path / "bot.log").start()
    try:
        hook = fake_telegram.wait_for(lambda: fake_telegram.webhook, timeout=30)
        assert hook["url"] == URL and hook["secret_token"] == SECRET
        wait_listening(port, bot)

        wrong = {"update_id": 101, "message": fake_telegram.message(CHAT, "틀린 비밀로 보낸 말")}
        missing = {"update_id": 102, "message": fake_telegram.message(CHAT, "비밀 없이 보낸 말")}
        right = {"update_id": 103, "message": fake_telegram.message(CHAT, "맞는 비밀로 보낸 말")}
        assert post(port, "/tg/hook", wrong, "not-the-secret") == 403
        assert post(port, "/tg/hook", missing, None) == 403
        # refused from the headers alone, the 95 MB body never read (nor sent)
        assert announce(port, 95 * 1024 * 1024, None).startswith("HTTP/1.1 403")
        assert announce(port, 95 * 1024 * 1024, SECRET).startswith("HTTP/1.1 413")
        assert post(port, "/tg/hook", right, SECRET) == 200
        assert fake_telegram.wait_sent(CHAT) == ["echo: 맞는 비밀로 보낸 말"]
        # the webhook server runs: the heartbeat file appears (the Docker HEALTHCHECK reads it)
        fake_telegram.wait_for(heartbeat.exists, timeout=30)
    finally:
        assert bot.stop() == 0
    # only the answered question reached Claude and memory; long polling was never used
    assert [convo(last)[-1]["content"] for last in fake_anthropic.requests] == ["맞는 비밀로 보낸 말"]
    assert [m["content"] for m in stored(data_dir, CHAT)] == ["맞는 비밀로 보낸 말", "echo: 맞는 비밀로 보낸 말"]
    assert fake_telegram.calls_of("getUpdates") == []
    assert oct(os.stat(heartbeat).st_mode & 0o777) == "0o600"
    # the per-turn line is logged, without the message text; the secrets are not
    assert f"turn chat={CHAT} outcome=ok" in bot.log
    assert "맞는 비밀로" not in bot.log
    for secret in (SECRET, fake_telegram.token, fake_telegram.token.split(":")[1]):
        assert secret not in bot.log


def test_fake_telegram_refuses_what_telegram_refuses(fake_telegram: FakeTelegram):
    import httpx

    base = f"{fake_telegram.base_url}{fake_telegram.token}"
    bad = httpx.post(f"{base}/setWebhook", json={"url": URL, "secret_token": "has spaces!"})
    assert bad.status_code == 400 and "secret token" in bad.json()["description"]
    plain = httpx.post(f"{base}/setWebhook", json={"url": "http://bot.example.com/hook", "secret_token": "ok"})
    assert plain.status_code == 400 and "HTTPS" in plain.json()["description"]
    assert fake_telegram.webhook is None
    assert httpx.post(f"{base}/setWebhook", json={"url": URL, "secret_token": "ok_1-2"}).json()["result"] is True
    conflict = httpx.post(f"{base}/getUpdates", json={"timeout": 0})
    assert conflict.status_code == 409  # like Telegram: no long polling while a webhook is set
    assert httpx.post(f"{base}/deleteWebhook", json={}).json()["result"] is True
    assert httpx.post(f"{base}/getUpdates", json={"timeout": 0}).json()["result"] == []
