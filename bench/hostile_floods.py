"""Two floods of bench.hostile: unauthenticated 95 MB webhook POSTs, and one member's commands in a group.

1. **Webhook flood.** The bot in webhook mode (its own tornado server, as deployed behind a proxy);
   the bench plays Telegram, POSTing the owner's questions with the secret. While ``--posts`` hostile
   connections each announce a 95 MB body without the secret and send it as fast as the bot takes it
   (generated as it is sent, never held in memory here), the owner asks ``--asks`` questions. Goals:
   the bot's peak memory (VmHWM) stays under the unit's 512 MB, and the owner's median answer time
   within 1.2x of the quiet run. Bytes the bot took from each hostile connection are reported
   (refused from the headers: a few kilobytes of socket buffers, never the body).
2. **Command flood in a group.** An open group with an admin and a member; the member sends
   ``--commands`` ``/memory`` at once, then the admin asks ``--asks`` questions one after another.
   Goal: the admin's median answer time within 1.2x of the quiet run (strict flood limits: a group
   gets 20 messages a minute, so unthrottled replies would push the answers back).
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from pathlib import Path

from bench.hostile_run import OWNER, Bot, Row, measured, timed
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import BOT_USERNAME, FakeTelegram

ADMIN, MEMBER = 301, 302
GROUP = -100_888
SECRET = "Bench_whk-7QmZ2xK9pL4vN8rT1yW6cF3hJ5sD0gA"
URL = "https://bot.example.com/tg"
BODY = 95 * 1024 * 1024
CHUNK = b"{" * 65536
UNIT_LIMIT_MB = 512


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the webhook server did not listen")


def post(port: int, update: dict) -> int:
    headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": SECRET}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/tg", data=json.dumps(update).encode(), headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=60) as r:
        return r.status


def hostile_post(port: int, taken: list[int]) -> None:
    """One POST without the secret announcing 95 MB; the body generated as it is sent, until the bot
    closes the connection. Appends the bytes of body the bot's socket took."""
    head = (
        "POST /tg HTTP/1.1\r\nHost: bot.example.com\r\nContent-Type: application/json\r\n"
        f"Content-Length: {BODY}\r\n\r\n"
    ).encode()
    sent = 0
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
            s.sendall(head)
            while sent < BODY:
                piece = CHUNK[: BODY - sent]
                s.sendall(piece)
                sent += len(piece)
    except OSError:  # refused: the connection is closed under the sender
        pass
    taken.append(sent)


def ask_webhook(tg: FakeTelegram, port: int, asks: int, tag: str, ids: list[int]) -> list[float]:
    def send(question: str) -> None:
        ids[0] += 1
        post(port, {"update_id": ids[0], "message": tg.message(OWNER, question)})

    return timed(tg, OWNER, [f"owner {tag} {i}" for i in range(asks)], send, "echo: {q}")


def webhook_part(code: Path, asks: int, latency: float, posts: int) -> tuple[list[Row], list[int]]:
    """Rows (scenario, median s, max s, peak MB) quiet and under the flood; bytes taken per hostile POST."""
    taken: list[int] = []

    def run(work: Path, tg: FakeTelegram, model: FakeAnthropic, flood: bool) -> tuple[list[float], float]:
        port = free_port()
        extra = {"WEBHOOK_URL": URL, "WEBHOOK_SECRET": SECRET, "WEBHOOK_LISTEN": "127.0.0.1",
                 "WEBHOOK_PORT": str(port)}  # fmt: skip
        with Bot(code, tg, model, work, [OWNER], extra) as bot:
            threads: list[threading.Thread] = []
            wait_listening(port)
            ids = [1000]
            ask_webhook(tg, port, 1, "warm-up", ids)
            if flood:
                threads = [threading.Thread(target=hostile_post, args=(port, taken)) for _ in range(posts)]
                for th in threads:
                    th.start()
            times = ask_webhook(tg, port, asks, "timed", ids)
            for th in threads:
                th.join(120)
            return times, bot.memory()[1]

    rows = measured("this", latency, [("webhook: quiet", False), (f"webhook: {posts} x 95 MB POSTs", True)], run)
    return rows, taken


def ask_group(tg: FakeTelegram, asks: int, tag: str) -> list[float]:
    def send(question: str) -> None:
        tg.push_update({"message": tg.message(GROUP, f"@{BOT_USERNAME} {question}", chat_type="supergroup",
                                              user_id=ADMIN, first_name="Admin")})  # fmt: skip

    return timed(tg, GROUP, [f"admin {tag} {i}" for i in range(asks)], send, "echo: Admin: {q}")


def commands_part(code: Path, asks: int, latency: float, commands: int) -> list[Row]:
    """Rows for the admin's answer time in a group, quiet and while a member sends ``commands`` commands."""

    def run(work: Path, tg: FakeTelegram, model: FakeAnthropic, flood: bool) -> tuple[list[float], float]:
        with Bot(code, tg, model, work, [OWNER]) as bot:
            tg.set_member(GROUP, ADMIN, "administrator")
            tg.push_update({"message": tg.message(GROUP, "/allow", chat_type="supergroup", user_id=OWNER)})
            tg.wait_for(lambda: len(tg.sent(GROUP)) >= 1, timeout=60)
            ask_group(tg, 1, "warm-up")
            if flood:
                for _ in range(commands):
                    tg.push_update({"message": tg.message(GROUP, "/memory", chat_type="supergroup",
                                                          user_id=MEMBER, first_name="Member")})  # fmt: skip
            times = ask_group(tg, asks, "timed")
            return times, bot.memory()[1]

    scenarios = [("group: quiet", False), (f"group: member sends {commands} cmds", True)]
    return measured("this", latency, scenarios, run)
