"""Crash suite: SIGKILL processes at random moments while they write memory, then check every file.

Worker processes run the real code paths on a temp ``DATA_DIR``, in a loop: ``Assistant.ask``
with a fake model (plain answers, ``remember`` tool rounds, failures that leave the pending file
and are then re-asked with ``retry``), ``maintain`` (recall index sync and summary compaction with
a fake summarizer), fact changes (``/remember``, ``/forget``) and now and then a ``/reset``
(archive renames). Two workers share one chat (cross-process locks) and each has its own. A
worker acknowledges a turn (appends ``chat<TAB>question`` to its ack file) only after ``ask``
returned it.

Each cycle starts the workers, waits until they work, sleeps a random time (short, medium or
long, so the kills land in every phase), SIGKILLs them one after the other, and checks:

- every transcript line parses, except torn lines a crash left (readers skip them); no turn
  among the complete lines is half written; every acknowledged turn is stored, whole;
- every summary file is valid JSON of a valid summary that either matches its transcript
  (ends on a turn boundary, counts the messages it covers) or is detectably stale (ignored);
- every facts and pending file parses as its store reads it;
- the recall index opens, ``RecallIndex.sync`` brings it up to date without error, and it gives
  the same search results as an index built fresh from a copy of the transcripts;
- stray temp files (an atomic write cut short) are counted; no reader ever lists them.

    python -m bench.kill_suite [--kills 200] [--seed 1] [--max-delay 0.4] [--keep DIR]

Prints the counts and exits non-zero if any check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.facts import FactError, FactFileError, FactStore
from memory.memo import HEADINGS
from memory.pending import PendingStore
from memory.recall import RecallIndex
from memory.summary_store import Summary, SummaryStore
from memory.transcript import Transcript
from memory.turns import is_complete, split_turns

WORDS = ["자전거", "자물쇠", "번호", "여행", "부산", "생일", "알레르기", "coffee", "train", "budget", "garden", "piano"]
SHARED = "shared"
QUERIES = ["자물쇠 번호", "부산 여행", "coffee budget", "생일", "piano garden", "train"]

# -- the worker ------------------------------------------------------------------------------


def _memo(previous: str | None, messages: list[dict[str, Any]]) -> str:
    facts = [line for line in (previous or "").splitlines() if line.startswith("- q")][-12:]
    for m in messages:
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            facts.append(f"- {m['content'][:60]}")
    body = {h: "없음" for h in HEADINGS}
    body["사용자의 목표"] = "- 대화를 이어가기"
    body["핵심 사실"] = "\n".join(facts[-12:]) or "없음"
    return "\n".join(f"## {h}\n{body[h]}" for h in HEADINGS)


async def _work(data_dir: Path, name: str, run: int, seed: int) -> None:
    from bot.claude.model import FakeModel, ModelError, tool_call
    from bot.core.ask import Assistant, NothingToRetry
    from memory.summary import Budget

    rng = random.Random(seed)

    async def summarize(previous: str | None, messages: list[dict[str, Any]]) -> str:
        await asyncio.sleep(rng.uniform(0, 0.004))  # the summarizer's "network" time
        return _memo(previous, messages)

    def script(system: Any, messages: Sequence[dict[str, Any]]) -> Any:
        last = messages[-1]["content"]
        if isinstance(last, list):  # a tool result came back: answer
            return "기억했어요. remembered."
        question = str(last)
        roll = rng.random()
        if roll < 0.08:
            raise ModelError("overloaded", "the fake model failed on purpose")
        if roll < 0.3:
            return tool_call("remember", {"text": f"fact of {question.split()[0]}"}, text="잠깐만요.")
        return f"answer to {question.split()[0]}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30)))

    model = FakeModel()
    recall = RecallIndex(data_dir)
    assistant = Assistant(
        transcript=Transcript(data_dir),
        model=model,
        max_messages=8,
        max_chars=4000,
        summarizer=summarize,
        summary_budget=Budget(trigger_messages=6, keep_messages=2, max_summary_chars=1500, chunk_messages=8),
        recall=recall,
        recall_turns=2,
    )
    acks = os.open(data_dir.parent / "acks" / f"{name}.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    own = f"w{name}"
    failed: set[str] = set()
    print("ready", flush=True)
    for i in range(1_000_000):
        chat = SHARED if i % 2 else own
        model.responses[:] = [script] * 6  # one script item per model call of this turn
        try:
            if chat in failed:
                q, _ = await assistant.retry(chat)
                question = q.text
            else:
                question = f"q{name}.{run}.{i} " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
                await assistant.ask(chat, question)
        except ModelError:
            failed.add(chat)
            continue
        except NothingToRetry:
            failed.discard(chat)
            continue
        failed.discard(chat)
        os.write(acks, f"{chat}\t{question}\n".encode())  # acknowledged: ask() returned
        await assistant.maintain(chat)  # recall sync and compaction, waited for
        try:  # the other worker may change the shared chat's facts in between: FactError then
            facts = assistant.list_facts(chat)
            if len(facts) > 6:
                assistant.forget(chat, facts[0].id)
            if i % 11 == 5:
                assistant.remember(chat, f"/remember {name}.{run}.{i}")
        except FactError:
            pass
        if i % 37 == 36 and chat == own:
            await assistant.reset(chat)


def worker(argv: Sequence[str]) -> None:
    data_dir, name, run, seed = Path(argv[0]), argv[1], int(argv[2]), int(argv[3])
    asyncio.run(_work(data_dir, name, run, seed))


# -- the checks -------------------------------------------------------------------------------


@dataclass
class Report:
    kills: int = 0
    cycles: int = 0
    checks: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    acked: set[tuple[str, str]] = field(default_factory=set)

    def check(self, name: str, ok: bool, detail: str = "") -> None:
        self.checks[name] += 1
        if not ok:
            self.failures.append(f"cycle {self.cycles}: {name}: {detail}")


def _transcript_files(chats: Path) -> dict[str, list[Path]]:
    """chat -> its transcript files (archived ones first, the live one last)."""
    out: dict[str, list[Path]] = {}
    for p in sorted((chats / "archive").glob("*.jsonl")) if (chats / "archive").exists() else []:
        out.setdefault(p.name.split(".")[0], []).append(p)
    for p in sorted(chats.glob("*.jsonl")):
        out.setdefault(p.stem, []).append(p)
    return out


def _lines(path: Path) -> tuple[list[tuple[int, int, dict[str, Any] | None]], bool]:
    """(offset, end, parsed message or None) of every complete line, and whether a torn tail follows."""
    data = path.read_bytes()
    out: list[tuple[int, int, dict[str, Any] | None]] = []
    pos = 0
    while True:
        cut = data.find(b"\n", pos)
        if cut < 0:
            return out, pos < len(data)
        raw = data[pos:cut]
        try:
            msg = json.loads(raw)
            parsed = msg if isinstance(msg, dict) and msg.get("role") in ("user", "assistant") else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            parsed = None
        out.append((pos, cut + 1, parsed))
        pos = cut + 1


def check_all(data_dir: Path, report: Report) -> None:
    chats = data_dir / "chats"
    transcript = Transcript(data_dir)
    store = SummaryStore(transcript)
    questions: dict[str, set[str]] = {}
    stored = torn = 0
    for chat, files in _transcript_files(chats).items():
        seen = questions.setdefault(chat, set())
        for path in files:
            lines, torn_tail = _lines(path)
            bad = [(o, e) for o, e, m in lines if m is None]
            torn += len(bad) + int(torn_tail)
            # a torn fragment is only ever followed by the next append's fresh line
            report.check("only torn writes are unreadable", len(bad) <= report.kills, f"{path.name}: {bad[:3]}")
            messages = [m for _, _, m in lines if m is not None]
            turns = split_turns(messages)
            half = [t[0].get("content") for t in turns if not is_complete(t)]
            report.check("no half turn", not half, f"{path.name}: {half[:3]}")
            report.check("file starts with a question", not messages or messages[0]["role"] == "user", path.name)
            for t in turns:
                seen.add(str(t[0].get("content")))
            stored += len(turns)
            if path.parent == chats:
                _check_summary(store, chat, path, lines, report)
    # every acknowledged turn is stored, whole
    acked: set[tuple[str, str]] = set()
    for ack in sorted((data_dir.parent / "acks").glob("*.log")):
        for line in ack.read_text(encoding="utf-8").splitlines():
            chat, question = line.split("\t", 1)
            acked.add((chat, question))
    for chat, question in sorted(acked - report.acked):  # each acknowledgement checked after every later cycle
        report.check("acknowledged turn stored", question in questions.get(chat, set()), f"{chat}: {question}")
    report.acked |= acked
    for chat, question in sorted(report.acked):
        if question not in questions.get(chat, set()):
            report.check("acknowledged turn still stored", False, f"{chat}: {question}")
    report.counts["turns acknowledged"] = len(report.acked)
    report.counts["turns stored"] = stored
    report.counts["torn lines (skipped by readers)"] = torn
    report.counts["stored, killed before the ack"] = sum(len(q) for q in questions.values()) - len(report.acked)
    _check_small_files(data_dir, report)
    _check_recall(data_dir, report)


def _check_summary(store: SummaryStore, chat: str, path: Path, lines: list[Any], report: Report) -> None:
    summary_path = store.path(chat)
    if not summary_path.exists():
        return
    try:
        summary = Summary.from_json(json.loads(summary_path.read_bytes()))
    except (UnicodeDecodeError, json.JSONDecodeError):
        summary = None
    report.check("summary file valid", summary is not None, summary_path.name)
    if summary is None:
        return
    if not store.matches(chat, summary):
        report.counts["summaries stale (ignored)"] += 1
        report.check("stale summary is ignored", store.load(chat) is None, summary_path.name)
        return
    report.counts["summaries valid"] += 1
    ends = {e for _, e, _ in lines}
    report.check("summary ends on a line", summary.end in ends, f"{chat}: {summary.end}")
    after = next((m for o, _, m in lines if o >= summary.end and m is not None), None)
    starts_turn = after is None or (after["role"] == "user" and isinstance(after["content"], str))
    report.check("summary ends before a question", starts_turn, f"{chat}: {summary.end}")
    covered = sum(1 for _, e, m in lines if m is not None and e <= summary.end)
    report.check("summary counts what it covers", covered == summary.covers, f"{chat}: {covered} != {summary.covers}")


def _check_small_files(data_dir: Path, report: Report) -> None:
    chats = data_dir / "chats"
    facts, pending = FactStore(data_dir), PendingStore(data_dir)
    for path in chats.glob("*.facts.json"):
        chat = path.name.removesuffix(".facts.json")
        try:
            facts._read(chat)  # what every change reads first (an unreadable file stops every change)
            ok, detail = True, ""
        except (FactFileError, AttributeError, TypeError, ValueError) as e:
            ok, detail = False, f"{path.name}: {e}"
        report.check("facts file valid", ok, detail)
    for path in chats.glob("*.pending.json"):
        chat = path.name.removesuffix(".pending.json")
        report.check("pending file valid", pending.load(chat) is not None, path.name)
    strays = list(chats.rglob(".*.tmp"))
    report.counts["stray temp files (max)"] = max(report.counts["stray temp files (max)"], len(strays))
    listed = set(_transcript_files(chats)) | {p.name for p in chats.glob("*.json")}
    report.check("temp files never read", not any(s.name in listed for s in strays))


def _search_all(index: RecallIndex, chats: Sequence[str]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for chat in chats:
        for q in QUERIES:
            for h in index.search(chat, q, 5, sync=False):
                out.append((chat, q, h.file, h.line, h.offset, h.role, h.content, round(h.score, 6)))
    return out


def _check_recall(data_dir: Path, report: Report) -> None:
    chats = sorted(_transcript_files(data_dir / "chats"))
    try:
        with RecallIndex(data_dir) as index:
            for chat in chats:
                report.counts["recall turns indexed after a kill"] += index.sync(chat)
            found = _search_all(index, chats)
        ok, detail = True, ""
    except Exception as e:  # any failure is what this check is for
        ok, found, detail = False, [], f"{type(e).__name__}: {e}"
    report.check("recall index syncs after a kill", ok, detail)
    with tempfile.TemporaryDirectory() as tmp:
        fresh_dir = Path(tmp) / "data"
        shutil.copytree(data_dir / "chats", fresh_dir / "chats", ignore=shutil.ignore_patterns("*.lock"))
        with RecallIndex(fresh_dir) as fresh:
            for chat in chats:
                fresh.sync(chat)
            expected = _search_all(fresh, chats)
    report.check("recall equals a fresh rebuild", found == expected, f"{len(found)} vs {len(expected)} hits")
    report.counts["recall searches compared"] += len(chats) * len(QUERIES)


# -- the killer -------------------------------------------------------------------------------


def _start(data_dir: Path, name: str, run: int, seed: int) -> subprocess.Popen[bytes]:
    with open(data_dir.parent / "workers.log", "ab") as log:  # the workers' stderr (warnings, a traceback)
        return subprocess.Popen(
            [sys.executable, "-m", "bench.kill_suite", "--worker", str(data_dir), name, str(run), str(seed)],
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=Path(__file__).resolve().parent.parent,
        )


def run(kills: int, *, seed: int = 1, max_delay: float = 0.4, root: Path | None = None, quiet: bool = False) -> Report:
    """Kill workers ``kills`` times (two per cycle) and check everything after every cycle."""
    rng = random.Random(seed)
    report = Report()
    with tempfile.TemporaryDirectory(prefix="kill-suite-") as tmp:
        base = root or Path(tmp)
        data_dir = base / "data"
        (base / "acks").mkdir(parents=True, exist_ok=True)
        while report.kills < kills:
            report.cycles += 1
            workers = [_start(data_dir, n, report.cycles, rng.randrange(1 << 30)) for n in ("1", "2")]
            for w in workers:
                assert w.stdout is not None
                if w.stdout.readline().strip() != b"ready":
                    raise RuntimeError(f"worker exited before it was ready ({w.wait()})")
            # short, medium or long: kills land while a turn, a summary, facts or the index are written
            window = rng.choice((0.02, 0.15, max_delay))
            for w in workers:
                time.sleep(rng.uniform(0, window))
                alive = w.poll() is None
                report.check("worker alive until killed", alive, f"exit code {w.returncode}: see workers.log")
                if alive:
                    os.kill(w.pid, signal.SIGKILL)
                    report.kills += 1
                w.wait()
                if w.stdout is not None:
                    w.stdout.close()
            check_all(data_dir, report)
            if not quiet and report.cycles % 10 == 0:
                print(
                    f"  {report.kills} kills, {report.counts['turns acknowledged']} turns acknowledged, "
                    f"{sum(report.checks.values())} checks, {len(report.failures)} failed",
                    flush=True,
                )
    return report


def print_report(report: Report) -> None:
    print(f"\n{'kills (SIGKILL)':<40} {report.kills:>8}")
    print(f"{'cycles (2 workers each, checked after)':<40} {report.cycles:>8}")
    for name, n in sorted(report.counts.items()):
        print(f"{name:<40} {n:>8}")
    print(f"\n{'check':<40} {'passed':>8} {'failed':>8}")
    failed = Counter(f.split(": ")[1] for f in report.failures)
    for name, n in sorted(report.checks.items()):
        print(f"{name:<40} {n - failed[name]:>8} {failed[name]:>8}")
    total = sum(report.checks.values())
    print(f"{'all checks':<40} {total - len(report.failures):>8} {len(report.failures):>8}")
    for f in report.failures[:20]:
        print("FAILED", f)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--worker":
        worker(args[1:])
        return 0
    parser = argparse.ArgumentParser(prog="python -m bench.kill_suite", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-delay", type=float, default=0.4, help="longest wait before a kill (seconds)")
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it (default: a temp dir)")
    opts = parser.parse_args(args)
    started = time.monotonic()
    report = run(opts.kills, seed=opts.seed, max_delay=opts.max_delay, root=opts.keep)
    print_report(report)
    print(f"\n{time.monotonic() - started:.0f} s")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
