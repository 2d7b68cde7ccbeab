"""How the cost of reading a chat's recent window grows with the chat's length.

Builds a short chat (50 messages: enough to fill the window) and a long one (1,000,000 stored messages by
default) in a temp DATA_DIR, then times building the request history for each,
with the real tail read and with a naive read of the whole file for contrast.
Prints the ratios long/new; the tail read should stay near 1x.

    python -m bench.history_read [--messages 1000000] [--repeat 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bot.claude.model import FakeModel
from bot.core.ask import Assistant
from memory.transcript import Transcript
from memory.window import recent_window


def write_chat(transcript: Transcript, chat_id: str, messages: int) -> None:
    """Write ``messages`` messages straight into the chat's file (fast, same format as append)."""
    path = transcript.path(chat_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(messages // 2):
            f.write(
                json.dumps(
                    {"role": "user", "content": f"질문 {i}: 오늘 일정 알려줘", "at": "2026-11-29T00:00:00+09:00"},
                    ensure_ascii=False,
                )
                + "\n"
            )
            f.write(
                json.dumps(
                    {
                        "role": "assistant",
                        "content": f"답 {i}: 오후 3시에 회의가 있어요.",
                        "at": "2026-11-29T00:00:01+09:00",
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )


def best_of(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def naive_history(transcript: Transcript, chat_id: str) -> list[dict]:
    messages = [e.data for e in transcript.read(chat_id)]
    return recent_window(messages, 20, 8000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        transcript = Transcript(Path(tmp))
        assistant = Assistant(transcript=transcript, model=FakeModel())
        t0 = time.perf_counter()
        write_chat(transcript, "new", 50)
        write_chat(transcript, "long", args.messages)
        size_mb = transcript.path("long").stat().st_size / 1e6
        print(f"wrote a chat of {args.messages:,} messages ({size_mb:.0f} MB) in {time.perf_counter() - t0:.1f}s")
        assert assistant.history("long") == naive_history(transcript, "long")  # same window either way

        new = best_of(lambda: assistant.history("new"), args.repeat)
        long = best_of(lambda: assistant.history("long"), args.repeat)
        naive_new = best_of(lambda: naive_history(transcript, "new"), args.repeat)
        naive_long = best_of(lambda: naive_history(transcript, "long"), 3)
    print(f"tail read   short chat {new * 1e6:9.1f} µs   long chat {long * 1e6:9.1f} µs   ratio {long / new:6.2f}x")
    print(
        f"naive read  short chat {naive_new * 1e6:9.1f} µs   long chat {naive_long * 1e6:9.1f} µs   "
        f"ratio {naive_long / naive_new:6.0f}x"
    )
    ok = long / new < 3.0
    print(
        "PASS: the long chat reads its window as fast as a new one" if ok else "FAIL: the tail read grows with the chat"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
