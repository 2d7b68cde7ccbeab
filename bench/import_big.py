"""Importing a big ChatGPT export: time, peak memory, and how soon a question about it is answered.

Generates a ChatGPT-style ``conversations.json`` of ``--size-mb`` (default 1024: 1 GB) in a temporary
folder (deleted at the end): conversations of 20-odd messages of a few hundred words, each with the
hidden system node ChatGPT writes, every fifth with an edited question and a regenerated answer on
abandoned branches. One conversation, 400 days old, holds the needle ("bike lock code 4719").

Then, in the same run:

1. ``python -m bot import`` of a small export (``--baseline-mb``, default 8) and of the big one, as child
   processes: wall time, throughput, and peak RSS (``ru_maxrss`` of the child). Bounded memory means the
   big import's peak is about the small one's (the ratio is what counts; the machine is shared). Then the
   big one again: every message is recognized, nothing is added;
2. the first question about the needle through the real ``Assistant.ask()`` (a model that answers at once,
   recall by words, the index built by the background worker process as in the bot): how long that first
   answer takes (answered at once from what is indexed so far), then the same question every
   ``--every`` seconds until the needle is in the recalled memories, and when the whole index is built.

    python -m bench.import_big [--size-mb 1024] [--baseline-mb 8] [--every 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bot.claude.model import FakeModel
from bot.core.ask import Assistant
from memory.recall import RecallIndex
from memory.transcript import Transcript

CHAT = "bench"
NEEDLE_Q = "What was my Brompton bike lock code?"
NEEDLE = "My bike lock code is 4719, for the blue Brompton"
NOW = datetime.now(UTC)


def _words(rng: random.Random, n: int) -> list[str]:
    letters = "abcdefghijklmnoprstuvwy"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(n)]


def _node(nid: str, parent: str | None, role: str, text: str, t: float, hidden: bool = False) -> dict[str, object]:
    message = {
        "id": nid, "author": {"role": role, "name": None, "metadata": {}}, "create_time": t, "update_time": None,
        "content": {"content_type": "text", "parts": [text]}, "status": "finished_successfully",
        "end_turn": role == "assistant" or None, "weight": 1.0,
        "metadata": {"is_visually_hidden_from_conversation": True} if hidden else {"model_slug": "gpt-4o"},
        "recipient": "all",
    }  # fmt: skip
    return {"id": nid, "message": message, "parent": parent, "children": []}


def conversation(rng: random.Random, vocab: list[str], n: int, t: float, needle: bool = False) -> dict[str, object]:
    cid = f"conv-{n}"
    mapping: dict[str, dict[str, object]] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}

    def add(nid: str, parent: str, role: str, text: str, when: float, hidden: bool = False) -> str:
        mapping[nid] = _node(nid, parent, role, text, when, hidden)
        mapping[parent]["children"].append(nid)  # type: ignore[union-attr]
        return nid

    last = add(f"{cid}-sys", "root", "system", "", t, hidden=True)
    turns = rng.randint(8, 14)
    for i in range(turns):
        when = t + 60 * i
        if needle and i == 3:
            q, a = NEEDLE, "Noted: the blue Brompton's lock code is 4719."
        else:
            q = " ".join(rng.choices(vocab, k=rng.randint(15, 60))) + "?"
            a = " ".join(rng.choices(vocab, k=rng.randint(80, 250))) + "."
        if n % 5 == 0 and i == 1:  # an edited question: the first version stays on an abandoned branch
            old = add(f"{cid}-u{i}-old", last, "user", q + " (first version)", when)
            add(f"{cid}-a{i}-old", old, "assistant", a[::-1], when + 5)
        u = add(f"{cid}-u{i}", last, "user", q, when + 10)
        if n % 5 == 0 and i == 2:  # a regenerated answer: the first one abandoned
            add(f"{cid}-a{i}-regen", u, "assistant", a[:200], when + 15)
        last = add(f"{cid}-a{i}", u, "assistant", a, when + 20)
    return {"title": f"Conversation {n}", "create_time": t, "update_time": t + 60 * turns, "mapping": mapping,
            "current_node": last, "conversation_id": cid, "id": cid, "is_archived": False}  # fmt: skip


def generate(path: Path, size: int, seed: int = 1) -> tuple[int, int]:
    """Write an export of about ``size`` bytes; (conversations, bytes)."""
    rng = random.Random(seed)
    vocab = _words(rng, 5000)
    start = NOW.timestamp() - 800 * 86400
    written, n = 0, 0
    needle_at = size // 2
    with open(path, "w", encoding="utf-8") as f:
        f.write("[")
        while written < size:
            needle = written >= needle_at and needle_at >= 0
            t = NOW.timestamp() - 400 * 86400 if needle else start + n * 1800
            text = json.dumps(conversation(rng, vocab, n, t, needle), ensure_ascii=False)
            if needle:
                needle_at = -1
            f.write(("," if n else "") + text)
            written += len(text) + 1
            n += 1
        f.write("]")
    return n, path.stat().st_size


def run_import(export: Path, data: Path) -> tuple[float, int, str]:
    """(seconds, peak RSS in KiB, what it printed) of ``python -m bot import`` in a child process."""
    env = {**os.environ, "RECALL_MEANING": "off"}
    command = [sys.executable, "-m", "bot", "import", str(export), "--chat", CHAT, "--data-dir", str(data)]
    with tempfile.TemporaryFile("w+") as out:
        t0 = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)  # noqa: S603
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak, not the largest child's so far
        seconds = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        said = out.read().strip()
    if child.returncode != 0:
        raise SystemExit(f"import failed ({child.returncode}): {said}")
    return seconds, usage.ru_maxrss, said


async def first_question(data: Path, every: float) -> dict[str, float]:
    index = RecallIndex(data)  # the bot's defaults: a backlog over 256 KiB goes to the worker process
    model = FakeModel(["Noted."] * 100_000)  # never the needle's words: only recall can bring them
    assistant = Assistant(transcript=Transcript(data), model=model, now=lambda: NOW, recall=index)

    def recalled() -> bool:
        system, messages = model.calls[-1].system, model.calls[-1].messages
        return NEEDLE in json.dumps([system, messages], ensure_ascii=False)

    t0 = time.perf_counter()
    await assistant.ask(CHAT, NEEDLE_Q)
    first = time.perf_counter() - t0
    found_first = recalled()
    asked = [first]
    found = first if found_first else float("nan")
    while not found_first:
        await asyncio.sleep(every)
        a0 = time.perf_counter()
        await assistant.ask(CHAT, NEEDLE_Q)
        asked.append(time.perf_counter() - a0)
        if recalled():
            found = time.perf_counter() - t0
            break
        if index.builder.idle() and not recalled():
            status = index.status(CHAT)
            if status.ready:
                break
    await asyncio.to_thread(index.wait_built)
    built = time.perf_counter() - t0
    ready = index.status(CHAT).ready
    index.close()
    with sqlite3.connect(data / "recall.sqlite3") as conn:
        turns = conn.execute("SELECT count(*) FROM turns").fetchone()[0]
    return {"first": first, "found": found, "built": built, "asked": len(asked), "worst": max(asked),
            "ready": float(ready), "turns": turns}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.import_big", description=__doc__.split("\n")[0])
    p.add_argument("--size-mb", type=float, default=1024.0)
    p.add_argument("--baseline-mb", type=float, default=8.0)
    p.add_argument("--every", type=float, default=5.0, help="seconds between the questions until it is found")
    p.add_argument("--keep", help="generate into (and keep) this folder instead of a temporary one")
    args = p.parse_args(argv)
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="import-big-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        rows = []
        for label, mb in (("baseline", args.baseline_mb), ("big", args.size_mb)):
            export, data = root / f"{label}.json", root / f"data-{label}"
            t0 = time.perf_counter()
            convs, size = generate(export, int(mb * 1024 * 1024))
            print(f"{label}: generated {size / 2**20:,.0f} MiB, {convs:,} conversations in "
                  f"{time.perf_counter() - t0:.0f} s", flush=True)  # fmt: skip
            seconds, peak, out = run_import(export, data)
            files = len(os.listdir(data / "chats" / "archive"))
            rows.append((label, size, convs, seconds, peak))
            print(f"{label}: imported in {seconds:.1f} s ({size / 2**20 / seconds:.1f} MiB/s), peak RSS "
                  f"{peak / 1024:.0f} MiB, {files:,} archived transcripts", flush=True)  # fmt: skip
        (_, bsize, _, bsec, bpeak), (_, size, _, sec, peak) = rows
        print(f"ratio big/baseline: size {size / bsize:.0f}x, time {sec / bsec:.1f}x, peak RSS {peak / bpeak:.2f}x")
        again, again_peak, said = run_import(root / "big.json", root / "data-big")  # every message recognized
        print(f"big again: {again:.1f} s, peak RSS {again_peak / 1024:.0f} MiB: {said.splitlines()[-1]}", flush=True)
        for label in ("baseline", "big"):
            (root / f"{label}.json").unlink()  # the exports are not needed any more: disk space
        result = asyncio.run(first_question(root / "data-big", args.every))
        print(f"first question: answered in {result['first']:.2f} s (from what was indexed so far); the needle "
              f"recalled after {result['found']:.0f} s ({result['asked']:.0f} questions, the slowest "
              f"{result['worst']:.2f} s); index built after {result['built']:.0f} s "
              f"({result['turns']:,} turns, ready: {bool(result['ready'])})", flush=True)  # fmt: skip
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
