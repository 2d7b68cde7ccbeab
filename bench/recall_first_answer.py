"""The first answer in a chat whose long history has no recall index yet, and the other chats meanwhile.

A chat of 1,000,000 stored messages (bench/recall_speed.py writes them) whose index is missing (an
upgrade that changed the index's format, a restored backup, a deleted index), and a small chat of
1,000 messages whose index is there. Both play through the real ``Assistant.ask()`` (with the
upkeep after each reply) and a model that answers at once, so every millisecond is the bot's own.
In the same run, three ways:

- ``before``: ``RecallIndex(sync_budget=None)``, every search first indexes all that is new on the
  question's path (what the bot did before background builds);
- ``thread``: ``sync_budget`` 256 KiB, a larger backlog built by a background thread of the bot's own
  process (``build_in="thread"``: the first way of building in the background);
- ``after``: the default, the backlog built by a worker process (memory.recall.worker) at a lower
  priority, and the question answered at once with what is indexed.

It prints the first answer's latency in the long chat, the small chat's per-question latency while
the long chat is being indexed against the same chat idle (before the long chat's first question and
after its index is complete; median and 90th percentile), and,
how long the background build took and the long chat's next answer once it is built.
Target (issue 20): the first answer within 1 s of the model's latency; the other chat not slowed.

``--meaning``: with recall by meaning, as the bot runs it (the model on one thread; the small chat's
vectors made before it is timed, so its questions are embedded idle too). After the long chat's
words are indexed, its newest turns get their vectors from the index's background thread (about
15 minutes of one core at 20,000 turns): the small chat is also timed meanwhile.

    python -m bench.recall_first_answer [--messages 1000000] [--quick] [--only after ...] [--meaning]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.recall_speed import write_chat
from bot.claude.model import FakeModel
from bot.core.ask import Assistant
from memory.recall import RecallIndex
from memory.recall import meaning as meanings
from memory.recall.build import BuildIn
from memory.recall.index import SYNC_BUDGET
from memory.recall.store import remove_database
from memory.transcript import Transcript

LONG, OTHER = "long", "other"
QUESTIONS = [
    "자물쇠 번호가 뭐였지?",
    "what was the gate code again",
    "내일 회의 몇 시야?",
    "can you remind me what we decided about the trip budget",
    "병원 예약 언제였더라",
    "커피 약속 장소 알려줘",
]
IDLE_QUESTIONS = 20
BUSY_QUESTIONS = 40  # at most, asked in the small chat while the long one is indexed
PAUSE = 0.05  # seconds between the small chat's questions while the long one is indexed


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def turn(assistant: Assistant, chat: str, i: int) -> float:
    """Seconds to the answer (the upkeep after it, the index update, runs in the background as in the bot)."""
    t0 = time.perf_counter()
    await assistant.ask(chat, QUESTIONS[i % len(QUESTIONS)])
    elapsed = time.perf_counter() - t0
    await assistant.maintain(chat)
    return elapsed


async def run(data: Path, budget: int | None, build_in: BuildIn, meaning: bool = False) -> dict[str, float]:
    index = RecallIndex(data, sync_budget=budget, build_in=build_in, meaning=meanings.load(meaning))
    model = FakeModel(["네, 알겠어요."] * 10_000)
    assistant = Assistant(
        transcript=Transcript(data),
        model=model,
        now=lambda: datetime(2026, 11, 29, 14, 5, tzinfo=UTC),
        recall=index,
    )
    index.sync(OTHER)
    index.embed(OTHER)  # its vectors, if by meaning: made before it is timed
    for i in range(3):  # warm-up
        await turn(assistant, OTHER, i)
    idle = [await turn(assistant, OTHER, i) for i in range(IDLE_QUESTIONS)]

    t0 = time.perf_counter()
    first = asyncio.create_task(turn(assistant, LONG, 0))
    busy: list[float] = []

    def indexing() -> bool:
        return not first.done() or not index.builder.idle()

    await asyncio.sleep(0)
    while indexing() and len(busy) < BUSY_QUESTIONS:
        busy.append(await turn(assistant, OTHER, len(busy)))
        await asyncio.sleep(PAUSE)
    first_answer = await first
    await asyncio.to_thread(index.wait_built)
    built = time.perf_counter() - t0
    idle += [await turn(assistant, OTHER, i) for i in range(IDLE_QUESTIONS)]  # idle again, built
    after_build = await turn(assistant, LONG, 1)  # also hands the long chat to the meaning builder
    vectors: list[float] = []
    while meaning and not index.meaning_builder.idle() and len(vectors) < BUSY_QUESTIONS:
        vectors.append(await turn(assistant, OTHER, len(vectors)))
        await asyncio.sleep(PAUSE)
    vectors_busy = not index.meaning_builder.idle()
    index.close()  # the long chat's vectors are not waited for: a quarter of an hour
    return {
        "vec_med": statistics.median(vectors) if vectors else float("nan"),
        "vec_p90": pct(vectors, 0.9),
        "vec_n": len(vectors),
        "vec_busy": float(vectors_busy),
        "first": first_answer,
        "idle_med": statistics.median(idle),
        "idle_p90": pct(idle, 0.9),
        "busy_med": statistics.median(busy) if busy else float("nan"),
        "busy_p90": pct(busy, 0.9),
        "busy_n": len(busy),
        "built": built,
        "next": after_build,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100,000 messages")
    parser.add_argument("--only", choices=("before", "thread", "after"), nargs="+", help="run only these ways")
    parser.add_argument("--meaning", action="store_true", help="with recall by meaning (see above)")
    args = parser.parse_args(argv)
    messages = 100_000 if args.quick else args.messages
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    modes: list[tuple[str, int | None, BuildIn]] = [
        ("before", None, "process"),
        ("thread", SYNC_BUDGET, "thread"),
        ("after", SYNC_BUDGET, "process"),
    ]
    if args.only:
        modes = [m for m in modes if m[0] in args.only]
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        t0 = time.perf_counter()
        transcript = Transcript(data)
        write_chat(transcript.path(LONG), messages, seed=1)
        write_chat(transcript.path(OTHER), 1_000, seed=2)
        print(f"{messages:,} messages written in {time.perf_counter() - t0:.1f} s (no index)", flush=True)
        for name, budget, build_in in modes:
            remove_database(data / "recall.sqlite3")
            results[name] = asyncio.run(run(data, budget, build_in, args.meaning))
            r = results[name]
            print(
                f"{name:>6}: first answer {r['first'] * 1e3:,.0f} ms; small chat idle {r['idle_med'] * 1e3:.1f} ms "
                f"(p90 {r['idle_p90'] * 1e3:.1f}), while indexing {r['busy_med'] * 1e3:.1f} ms "
                f"(p90 {r['busy_p90'] * 1e3:.1f}, {int(r['busy_n'])} questions); index complete after "
                f"{r['built']:.1f} s; next answer in the long chat {r['next'] * 1e3:.1f} ms",
                flush=True,
            )
    print(f"\n{messages:,}-message chat without an index (ms; 'x idle' = small chat while indexing / idle, median)")
    print(
        f"{'':>7} {'first answer':>13} {'small idle':>11} {'small busy':>11} {'x idle':>7} "
        f"{'idle p90':>9} {'busy p90':>9} {'built (s)':>10}"
    )
    for name, r in results.items():
        print(
            f"{name:>7} {r['first'] * 1e3:>13,.0f} {r['idle_med'] * 1e3:>11.1f} {r['busy_med'] * 1e3:>11.1f} "
            f"{r['busy_med'] / r['idle_med']:>7.2f} {r['idle_p90'] * 1e3:>9.1f} {r['busy_p90'] * 1e3:>9.1f} "
            f"{r['built']:>10.1f}"
        )
    if args.meaning:
        print("\nsmall chat while the long chat's vectors are made (ms, median / p90, 'x idle' as above)")
        for name, r in results.items():
            print(
                f"{name:>7} {r['vec_med'] * 1e3:.1f} / {r['vec_p90'] * 1e3:.1f} ({int(r['vec_n'])} questions, "
                f"{r['vec_med'] / r['idle_med']:.2f} x idle)" + ("" if r["vec_busy"] else ", the builder done before")
            )
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    after = results.get("after")
    if after is None:
        return 0
    ok = after["first"] < 1.0
    print(
        f"{'PASS' if ok else 'FAIL'}: first answer {after['first'] * 1e3:,.0f} ms after the change (target: under "
        "1 s of the bot's own time)"
        + (f", {results['before']['first'] * 1e3:,.0f} ms before" if "before" in results else "")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
