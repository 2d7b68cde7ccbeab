"""The recall index with many chats: what each chat costs, against an index of few chats.

Writes ``--chats`` private chats (10,000 by default) that each spoke once (a question and its
answer, like bench.memory_rss) into a temp DATA_DIR, indexes every one of them, and measures,
against the same for ``--few`` chats (10) in the same run:

- the database on disk (bytes per chat) and the number of schema entries (SQLite keeps the whole
  schema in memory once per connection: it must not grow with the chats);
- the resident memory a process adds by opening the index and searching 200 chats with the
  automatic recall and the thorough search, through every connection of the pool at once (its
  own subprocess, measured from /proc: VmRSS after minus before);
- the median time of the automatic recall (``related``) and of ``search`` in one chat;
- ``sync`` of a chat with nothing new (what every turn does first) and after one appended turn;
- the doctor's read-only comparison of the index with the transcripts (``inspect_index``).

Version 2 of the index (one FTS5 table per chat) measured +40 MB resident per connection and a
17 MB file for 1,000 such chats. Fails if the index of ``--chats`` costs a connection more than
10 MB over the few-chat one, or more than 2 KB of file per chat.

    python -m bench.recall_chats [--chats 10000] [--few 10]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memory.recall import RecallIndex, inspect_index
from memory.recall.index import CONNECTIONS
from memory.transcript import Transcript

ROOT = Path(__file__).resolve().parent.parent
FIRST_CHAT = 10_000_000
TOPICS = ["날씨", "회의", "자물쇠 번호", "병원 예약", "coffee", "gate code", "trip budget", "deadline", "커피", "점심"]

PROBE = """
import json, sys, threading
from pathlib import Path
from memory.recall import RecallIndex

def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

data, chats = Path(sys.argv[1]), json.loads(sys.argv[2])
before = rss()
index = RecallIndex(data)
barrier = threading.Barrier(4)

def work(part):
    barrier.wait()  # four threads at once: every connection of the pool is opened and used
    for chat in part:
        index.related(chat, "자물쇠 번호 뭐였지?")
        index.search(chat, "trip budget coffee", 10, sync=False)

threads = [threading.Thread(target=work, args=(chats[i::4],)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
after = rss()
index.close()
print(json.dumps({"before": before, "after": after}))
"""


def write_chats(data: Path, n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    transcript = Transcript(data)
    chats = []
    for i in range(n):
        chat = str(FIRST_CHAT + i)
        topic = rnd.choice(TOPICS)
        transcript.append(
            chat,
            [
                {"role": "user", "content": f"안녕 {i}, 오늘 {topic} 어때?", "at": "2026-11-29T10:00:00+09:00"},
                {"role": "assistant", "content": f"{topic} 이야기 {i}: 좋아요, 메모해 둘게요.", "at": "2026-11-29"},
            ],
        )
        chats.append(chat)
    return chats


def measure(n: int, seed: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        chats = write_chats(data, n, seed)
        index = RecallIndex(data)
        t0 = time.perf_counter()
        for chat in chats:
            index.sync(chat)
        built = time.perf_counter() - t0
        index.close()  # everything checkpointed into the file
        db = data / "recall.sqlite3"
        size = db.stat().st_size
        raw = sqlite3.connect(db)
        schema = raw.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        raw.close()
        rnd = random.Random(seed)
        sample = [rnd.choice(chats) for _ in range(200)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        probe = subprocess.run(
            [sys.executable, "-c", PROBE, str(data), json.dumps(sample)],
            capture_output=True, text=True, env=env, check=True,
        )  # fmt: skip
        mem = json.loads(probe.stdout)
        index = RecallIndex(data)
        one = sample[0]
        related, searched, quiet, appended = [], [], [], []
        for _ in range(3):
            index.related(one, "자물쇠 번호 뭐였지?")
        for chat in sample[:100]:
            t0 = time.perf_counter()
            index.related(chat, "자물쇠 번호 뭐였지?")
            t1 = time.perf_counter()
            index.search(chat, "trip budget coffee", 10, sync=False)
            t2 = time.perf_counter()
            index.sync(chat)
            t3 = time.perf_counter()
            related.append(t1 - t0)
            searched.append(t2 - t1)
            quiet.append(t3 - t2)
        transcript = Transcript(data)
        for i, chat in enumerate(sample[:50]):
            transcript.append(
                chat,
                [
                    {"role": "user", "content": f"새 질문 {i}: 병원 예약 언제야?", "at": "2026-11-30T10:00:00+09:00"},
                    {"role": "assistant", "content": f"답 {i}: 3월 14일 15시", "at": "2026-11-30"},
                ],
            )
            t0 = time.perf_counter()
            index.sync(chat)
            appended.append(time.perf_counter() - t0)
        index.close()
        t0 = time.perf_counter()
        report = inspect_index(data)
        inspected = time.perf_counter() - t0
        assert not report.problems, report.problems
        return {
            "chats": n,
            "build_s": built,
            "db_bytes": size,
            "schema": schema,
            "rss_mb": mem["after"] - mem["before"],
            "related_ms": statistics.median(related) * 1e3,
            "search_ms": statistics.median(searched) * 1e3,
            "sync_ms": statistics.median(quiet) * 1e3,
            "append_sync_ms": statistics.median(appended) * 1e3,
            "inspect_s": inspected,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chats", type=int, default=10_000)
    parser.add_argument("--few", type=int, default=10)
    args = parser.parse_args(argv)
    print(f"cores {os.cpu_count()}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; pool of {CONNECTIONS}")
    few = measure(args.few, 1)
    many = measure(args.chats, 1)
    rows = [
        ("indexing every chat (s)", "build_s", "{:.1f}"),
        ("database file (KB)", "db_bytes", "{:.0f}"),
        ("  per chat (bytes)", None, "{:.0f}"),
        ("schema entries", "schema", "{:.0f}"),
        (f"resident memory added by the index, {CONNECTIONS} connections (MB)", "rss_mb", "{:.1f}"),
        ("related(), median (ms)", "related_ms", "{:.2f}"),
        ("search(), median (ms)", "search_ms", "{:.2f}"),
        ("sync, nothing new (ms)", "sync_ms", "{:.3f}"),
        ("sync after one appended turn (ms)", "append_sync_ms", "{:.2f}"),
        ("inspect_index, the doctor's comparison (s)", "inspect_s", "{:.2f}"),
    ]
    print(f"\n{'':<58} {f'{args.few:,} chats':>12} {f'{args.chats:,} chats':>14} {'ratio':>7}")
    for label, key, fmt in rows:
        if key is None:
            a, b = few["db_bytes"] / few["chats"], many["db_bytes"] / many["chats"]
        elif key == "db_bytes":
            a, b = few[key] / 1024, many[key] / 1024
        else:
            a, b = few[key], many[key]
        ratio = f"{b / a:.2f}" if a else "-"
        print(f"{label:<58} {fmt.format(a):>12} {fmt.format(b):>14} {ratio:>7}")
    failures = []
    if many["rss_mb"] - few["rss_mb"] > 10:
        failures.append(f"the index of {args.chats:,} chats costs {many['rss_mb'] - few['rss_mb']:.1f} MB more")
    if many["db_bytes"] / many["chats"] > 2048:
        failures.append(f"{many['db_bytes'] / many['chats']:.0f} bytes of index per chat (> 2 KB)")
    if many["schema"] != few["schema"]:
        failures.append("the schema grows with the chats")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("PASS: the cost of a chat is a few rows; memory and the schema do not grow with the chats")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
