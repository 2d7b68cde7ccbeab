"""The bot's own cost per turn at any history length: everything ask() does except the model call.

For chats of 100, 10,000, 100,000 and 1,000,000 stored messages (Korean and English words from
a Zipf distribution, dated over two years; bench/recall_speed.py writes them), each with a
summary covering all but the last messages, 10 facts and a built recall index, it plays turns
through the real ``Assistant.ask()`` with a model that answers at once, then the upkeep the bot
runs after a reply (the recall index update; compaction is off here, it runs in the background):

- reading the summary and the facts, the recall search for related memories, reading the tail
  and building the request (``_prepare``);
- the append of the turn (one write, fsynced) and clearing the pending question;
- the index update (``RecallIndex.sync``) after the reply.

It prints the median and 90th percentile per turn with fsync and without it (fsync replaced by
a no-op, the machine's disk taken out), and the ratio to the 100-message chat. Target: at 1M
messages the median is within 1.5x of the 100-message figure and under 5 ms without fsync.

    python -m bench.turn_cost [--sizes 100,10000,100000,1000000] [--turns 40] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from bench.recall_speed import write_chat
from bot.claude.model import FakeModel
from bot.core.ask import Assistant
from memory import files as memory_files
from memory import transcript as memory_transcript
from memory.facts import FactStore
from memory.memo import HEADINGS
from memory.recall import RecallIndex
from memory.summary_store import Summary, SummaryStore
from memory.transcript import Transcript

CHAT = "bench"
QUESTIONS = [
    "자물쇠 번호가 뭐였지?",
    "what was the gate code again",
    "내일 회의 몇 시야?",
    "can you remind me what we decided about the trip budget",
    "오늘 날씨 어때",
    "병원 예약 언제였더라",
    "summarize the project deadline discussion",
    "커피 약속 장소 알려줘",
]
UNSUMMARIZED = 8  # messages after the summary's end (sent verbatim)


def prepare_chat(data: Path, messages: int) -> tuple[float, float]:
    """Write the chat, its summary and facts, and build its recall index; (write s, index s)."""
    transcript = Transcript(data)
    t0 = time.perf_counter()
    write_chat(transcript.path(CHAT), messages, seed=messages)
    written = time.perf_counter() - t0
    entries = list(transcript.tail(CHAT, UNSUMMARIZED + 1))
    last = entries[0]  # the summary covers everything up to and including this message
    store = SummaryStore(transcript)
    memo = "\n".join(f"## {h}\n- 요약 내용 {h}: 예약 3월 14일 15시, 예산 150만 원" for h in HEADINGS)
    store.write(
        CHAT,
        Summary(
            text=memo,
            end=last.end,
            covers=messages - UNSUMMARIZED,
            last_offset=last.offset,
            last_sha256=store.fingerprint(CHAT, last),
            at="2026-11-29T09:00:00+09:00",
        ),
    )
    facts = FactStore(data)
    for i in range(10):
        facts.add(CHAT, f"사실 {i}: 좋아하는 것 {i}번, 알레르기 없음, 차 번호 12가 34{i:02d}")
    t0 = time.perf_counter()
    index = RecallIndex(data)
    index.sync(CHAT)
    index.close()
    return written, time.perf_counter() - t0


@contextmanager
def no_fsync() -> Iterator[None]:
    """fsync as a no-op (the disk's latency taken out; everything else unchanged)."""
    real = os.fsync
    for module in (memory_files, memory_transcript):
        module.os.fsync = lambda fd: None  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for module in (memory_files, memory_transcript):
            module.os.fsync = real  # type: ignore[attr-defined]


async def play(data: Path, turns: int) -> list[float]:
    index = RecallIndex(data)
    model = FakeModel(["네, 알겠어요. 정리해 드릴게요."] * (turns + 5))
    assistant = Assistant(
        transcript=Transcript(data),
        model=model,
        now=lambda: datetime(2026, 11, 29, 14, 5, tzinfo=UTC),
        recall=index,
    )
    times: list[float] = []
    for i in range(turns + 3):
        question = QUESTIONS[i % len(QUESTIONS)]
        t0 = time.perf_counter()
        await assistant.ask(CHAT, question)
        await assistant.maintain(CHAT)  # the index update after the reply
        elapsed = time.perf_counter() - t0
        if i >= 3:  # the first turns warm caches
            times.append(elapsed)
    index.close()
    return times


def measure(data: Path, turns: int) -> tuple[list[float], list[float]]:
    with_fsync = asyncio.run(play(data, turns))
    with no_fsync():
        without = asyncio.run(play(data, turns))
    return with_fsync, without


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,10000,100000,1000000")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="sizes 100, 10,000 and 100,000")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.quick:
        sizes = [s for s in sizes if s <= 100_000]
    rows: list[tuple[int, float, float, float, float]] = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp)
            written, indexed = prepare_chat(data, size)
            print(f"{size:>9,} messages: written in {written:.1f}s, indexed in {indexed:.1f}s", flush=True)
            with_fsync, without = measure(data, args.turns)
            row = (size, statistics.median(with_fsync), pct(with_fsync, 0.9))
            rows.append((*row, statistics.median(without), pct(without, 0.9)))
    base = rows[0]
    print(f"\nper turn, {args.turns} turns each (ms); ratio = median without fsync / the {base[0]:,}-message chat's")
    print(f"{'messages':>10} {'median':>8} {'p90':>8} {'no-fsync':>9} {'p90':>8} {'ratio':>6}")
    for size, med, p90, med_nf, p90_nf in rows:
        ms = f"{med * 1e3:>8.2f} {p90 * 1e3:>8.2f} {med_nf * 1e3:>9.2f} {p90_nf * 1e3:>8.2f}"
        print(f"{size:>10,} {ms} {med_nf / base[3]:>6.2f}")
    largest = rows[-1]
    ratio = largest[3] / base[3]
    ok = ratio <= 1.5 and largest[3] < 0.005
    verdict = "PASS" if ok else "FAIL"
    print(
        f"{verdict}: {largest[0]:,} messages: {largest[3] * 1e3:.2f} ms per turn without fsync "
        f"({ratio:.2f}x the {base[0]:,}-message chat; targets 1.5x and 5 ms)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
