"""Recall index speed: a chat of a million stored messages against a small one.

Writes a long chat (1,000,000 messages by default) and two short ones (1,000 each) into a temp
DATA_DIR, with Korean and English words drawn from a Zipf distribution (so some words are in a
large share of the messages, like real chat) and everyday English sentences (a fifth of the
messages), then measures:

- rebuild: indexing the whole long chat from its transcript into an empty index;
- query: search latency (median and worst of several runs per query) over a mix of rare, common,
  Korean, English and dated queries, long chat vs short chat. All chats share one FTS5 table:
  the short chat indexed before the long one ("short", its rowids below the long chat's) and the
  one indexed after it ("late", above) show that a small chat's search does not read the long
  chat's postings; then the automatic recall (``related``, 5 turns) of the same queries;
- append: Transcript.append of one question+answer and then RecallIndex.sync (what the bot will do
  after every turn), long vs short chat, and the sync alone;
- the index size on disk against the transcript's, and the doctor's read-only comparison of the
  index with the transcripts (``inspect_index``).

Fails (exit 1) if a long-chat query's median is over 50 ms, a sync after an append over 5 ms,
or the rebuild over 2 minutes (of the configured size).

    python -m bench.recall_speed [--messages 1000000] [--quick]
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.recall_persona import ECHO, SMALL, TOPICS
from memory.recall import RecallIndex, inspect_index
from memory.transcript import Transcript

QUERIES = [
    "자물쇠 번호가 뭐였지?",
    "회의 예약 시간",
    "병원",
    "what was the gate code",
    "coffee meeting budget report",
    "오늘 날씨",  # very common words
    "the project deadline next week",
    "2025년 3월 여행",
    "Kyoto trip in March 2025",
    "w17 w2301",
    "What hobbies does Caroline have?",  # a general word: its kinds are searched too (memory.recall.lexicon)
    "What pets does Melanie have?",
    "When did Caroline go to the support group?",
]


def _vocab(rnd: random.Random) -> tuple[list[str], list[float], list[str], list[float]]:
    syll = [chr(0xAC00 + i) for i in range(0, 11172, 7)]
    ko = ["오늘", "날씨", "회의", "예약", "병원", "자물쇠", "번호", "여행", "점심", "커피"]
    ko += ["".join(rnd.choice(syll) for _ in range(rnd.choice((2, 2, 3)))) for _ in range(30_000)]
    en = ["today", "meeting", "coffee", "budget", "report", "project", "deadline", "gate", "code", "trip"]
    en += [f"w{i}" for i in range(50_000)]

    def cum(n: int) -> list[float]:
        return list(itertools.accumulate(1 / (r + 1) ** 1.05 for r in range(n)))

    return ko, cum(len(ko)), en, cum(len(en))


def _english(rnd: random.Random) -> list[str]:
    """Everyday English sentences (those of bench.recall_persona, details filled at random)."""
    out = [*SMALL, *(x for v in ECHO.values() for x in v)]
    for topic in TOPICS:
        for _, text in [*topic.say, *(topic.again or [])]:
            for _ in range(5):
                values = {k: rnd.choice(v) for k, v in topic.slots.items()}
                values.update({k + "2": rnd.choice(v) for k, v in topic.slots.items()})
                values.update(o="Caroline", s="Mel", p="her", weekday="Friday", S="Melanie", O="Caroline")
                out.append(text.format(**values))
    return out


def write_chat(path: Path, messages: int, seed: int, year: int = 2024) -> None:
    """``messages`` lines of generated chat (dated over two years from ``year``) into ``path``."""
    rnd = random.Random(seed)
    ko, ko_cum, en, en_cum = _vocab(rnd)
    sentences = _english(rnd)
    particles = ["", "", "는", "를", "에서", "이", "가", "로"]

    def pick(words: list[str], cumw: list[float], k: int) -> list[str]:
        total = cumw[-1]
        return [words[bisect.bisect(cumw, rnd.random() * total)] for _ in range(k)]

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(messages):
            day = 1 + (i * 700) // messages
            at = f"{year + day // 336}-{1 + (day // 28) % 12:02d}-{1 + day % 28:02d}T{10 + i % 10:02d}:00:00+09:00"
            x = rnd.random()
            if x < 0.2:
                text = rnd.choice(sentences)  # real English: common words, and words the lexicon relates
            elif x < 0.6:
                text = " ".join(w + rnd.choice(particles) for w in pick(ko, ko_cum, rnd.randint(3, 12)))
            else:
                text = " ".join(pick(en, en_cum, rnd.randint(4, 16)))
            role = "user" if i % 2 == 0 else "assistant"
            f.write(json.dumps({"role": role, "content": text, "at": at}, ensure_ascii=False) + "\n")


Timings = dict[str, tuple[float, float]]  # query -> (median, max) seconds


def time_queries(index: RecallIndex, chat: str, repeat: int, related: bool = False) -> Timings:
    def call(q: str) -> object:
        return index.related(chat, q, 5) if related else index.search(chat, q, 10, sync=False)

    out = {}
    for q in QUERIES:
        call(q)  # warm the cache
        runs = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            call(q)
            runs.append(time.perf_counter() - t0)
        out[q] = (statistics.median(runs), max(runs))
    return out


def print_table(long: Timings, short: Timings, late: Timings) -> None:
    print(f"{'query':<34} {'long median':>12} {'long max':>10} {'short median':>13} {'late median':>12} {'ratio':>7}")
    for q in QUERIES:
        (lm, lx), sm, am = long[q], short[q][0], late[q][0]
        cells = f"{lm * 1000:>10.2f}ms {lx * 1000:>8.2f}ms {sm * 1000:>11.2f}ms {am * 1000:>10.2f}ms"
        print(f"{q:<34} {cells} {lm / sm:>6.1f}x")


def time_appends(transcript: Transcript, index: RecallIndex, chat: str, n: int) -> tuple[float, float]:
    """Median (append + sync, sync alone) in seconds for ``n`` turns."""
    both, sync_only = [], []
    for i in range(n):
        pair = [
            {"role": "user", "content": f"새 질문 {i}: 자전거 수리 얼마였지?", "at": "2026-11-29T10:00:00+09:00"},
            {"role": "assistant", "content": f"answer {i}: the bike repair was 35000 won", "at": "2026-11-29"},
        ]
        t0 = time.perf_counter()
        transcript.append(chat, pair)
        t1 = time.perf_counter()
        index.sync(chat)
        t2 = time.perf_counter()
        both.append(t2 - t0)
        sync_only.append(t2 - t1)
    return statistics.median(both), statistics.median(sync_only)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--appends", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="100,000 messages")
    args = parser.parse_args(argv)
    if args.quick:
        args.messages = 100_000
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        transcript = Transcript(data)
        t0 = time.perf_counter()
        write_chat(transcript.path("long"), args.messages, 1)
        write_chat(transcript.path("short"), args.small, 2)
        write_chat(transcript.path("late"), args.small, 3)
        mb = transcript.path("long").stat().st_size / 1e6
        print(f"wrote {args.messages:,} messages ({mb:.0f} MB) and {args.small:,} in {time.perf_counter() - t0:.0f}s")
        index = RecallIndex(data)
        t0 = time.perf_counter()
        index.sync("short")
        small_build = time.perf_counter() - t0
        t0 = time.perf_counter()
        n = index.sync("long")
        build = time.perf_counter() - t0
        index.sync("late")
        db_mb = sum(p.stat().st_size for p in data.glob("recall.sqlite3*")) / 1e6
        print(
            f"\nrebuild: {n:,} messages indexed in {build:.1f}s ({build / n * 1e6:.0f} µs per message; "
            f"short chat {small_build * 1000:.0f} ms); index {db_mb:.0f} MB on disk = {db_mb / mb:.1f}x the transcript"
        )
        long_q = time_queries(index, "long", args.repeat)
        short_q = time_queries(index, "short", args.repeat)
        late_q = time_queries(index, "late", args.repeat)
        print("\nsearch (thorough, 10 results); ratio = long / short")
        print_table(long_q, short_q, late_q)
        worst_median = max(m for m, _ in long_q.values())
        long_r = time_queries(index, "long", args.repeat, related=True)
        short_r = time_queries(index, "short", args.repeat, related=True)
        late_r = time_queries(index, "late", args.repeat, related=True)
        print("\nautomatic recall (related, 5 results)")
        print_table(long_r, short_r, late_r)
        medians = {name: statistics.median(m for m, _ in r.values()) for name, r in
                   (("long", long_r), ("short", short_r), ("late", late_r))}  # fmt: skip
        print("median over the queries: " + ", ".join(f"{k} {v * 1000:.2f} ms" for k, v in medians.items()))
        long_a, long_s = time_appends(transcript, index, "long", args.appends)
        short_a, short_s = time_appends(transcript, index, "short", args.appends)
        print(f"\nappend one turn (question + answer), median of {args.appends}:")
        for label, lv, sv in (("append + sync", long_a, short_a), ("sync alone", long_s, short_s)):
            print(f"  {label:<15} long {lv * 1000:.2f} ms   short {sv * 1000:.2f} ms   ({lv / sv:.2f}x)")
        index.close()
        t0 = time.perf_counter()
        report = inspect_index(data)
        inspected = time.perf_counter() - t0
        found = f"{len(report.problems)} problems, {len(report.notes)} notes"
        print(f"\ninspect_index (the doctor's comparison with the transcripts): {inspected * 1000:.0f} ms, {found}")
        failures = []
        if worst_median > 0.050:
            failures.append(f"a query's median took {worst_median * 1000:.0f} ms (> 50 ms)")
        if long_s > 0.005:
            failures.append(f"sync after an append took {long_s * 1000:.1f} ms (> 5 ms)")
        if build > 120:
            failures.append(f"the rebuild took {build:.0f}s (> 120 s)")
        print(f"\nslowest query median {worst_median * 1000:.1f} ms (limit 50); sync {long_s * 1000:.2f} ms (limit 5); "
              f"rebuild {build:.0f}s (limit 120)")  # fmt: skip
        for f in failures:
            print("FAIL:", f)
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
