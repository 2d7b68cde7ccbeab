"""Resident memory of the bot with many chats that each spoke once.

Runs the real ``python -m bot`` against the fake Telegram and Anthropic servers on 127.0.0.1,
lets ``--chats`` different private chats (10,000 by default) each send one message, waits until
every one was answered, then reads the process's resident memory (VmRSS) and its peak (VmHWM)
from /proc. The baseline is the same process idle after start, before the first message: the
ratio shows what the chats cost. Per-chat state (locks, streams, rate-limiter entries) must be
released when a chat is idle. Target: under 150 MB with 10,000 chats.

Answers go out at Telegram's pace (about 30 a second in all), so 10,000 chats take about six
minutes.

    python -m bench.memory_rss [--chats 10000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import FakeTelegram

ROOT = Path(__file__).resolve().parent.parent
FIRST_CHAT = 10_000_000


def rss(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chats", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=500, help="messages queued at once")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, FakeTelegram() as telegram, FakeAnthropic() as anthropic:
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
        env = {
            **keep,
            "PYTHONPATH": str(ROOT),
            "TELEGRAM_BOT_TOKEN": telegram.token,
            "TELEGRAM_BASE_URL": telegram.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-bench",
            "ANTHROPIC_BASE_URL": anthropic.url,
            "DATA_DIR": str(Path(tmp) / "data"),
            "LOG_LEVEL": "WARNING",
        }
        env["ALLOWED_USERS"] = ",".join(str(FIRST_CHAT + i) for i in range(args.chats))  # the chats may talk
        proc = subprocess.Popen([sys.executable, "-m", "bot"], env=env, cwd=tmp, stderr=subprocess.DEVNULL)
        try:
            telegram.wait_for(lambda: telegram.calls_of("getUpdates"), timeout=60)
            idle, _ = rss(proc.pid)
            t0 = time.monotonic()
            answered = 0
            for start in range(0, args.chats, args.batch):
                for i in range(start, min(args.chats, start + args.batch)):
                    telegram.send_text(FIRST_CHAT + i, f"안녕 {i}, 오늘 날씨 어때?")
                target = min(args.chats, start + args.batch)
                answered = telegram.wait_for(
                    lambda target=target: (n := len(telegram.calls_of("sendMessage"))) >= target and n, timeout=600
                )
                now_rss, _ = rss(proc.pid)
                took = time.monotonic() - t0
                print(f"{target:>6,} chats answered after {took:6.0f} s: RSS {now_rss:6.1f} MB", flush=True)
            time.sleep(2)  # let the upkeep of the last chats finish
            final, peak = rss(proc.pid)
        finally:
            proc.terminate()
            proc.wait(60)
    print(f"\nchats answered {answered:,}; the machine has {os.cpu_count()} cores")
    print(f"{'':<28} {'MB':>8} {'ratio':>7}")
    print(f"{'idle after start':<28} {idle:>8.1f} {1.0:>7.2f}")
    print(f"{f'after {args.chats:,} chats':<28} {final:>8.1f} {final / idle:>7.2f}")
    print(f"{'peak':<28} {peak:>8.1f} {peak / idle:>7.2f}")
    ok = peak < 150
    print(("PASS" if ok else "FAIL") + f": peak resident memory {peak:.0f} MB (target under 150 MB)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
