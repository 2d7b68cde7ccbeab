"""Hostile traffic: the owner's answer time under floods, and a mixed stream of 10,000 hostile updates.

The real ``python -m bot`` runs against the fake Telegram with its strict flood limits on (never
more than 30 counted calls in any one second, about one a second per private chat, 20 a minute
per group) and a fake Anthropic whose answers take ``--latency`` seconds.

1. **Owner's answer time.** The owner asks ``--asks`` questions one after another (each sent when
   the previous one was answered); the median seconds from question to final answer, quiet, and
   while: a stranger sends 1,000 messages in a private chat; a stranger sends 1,000 messages
   (``/help``, mentions) in a group they made and added the bot to; an allowed user sends 100
   questions at once. Goal: each ≤ 1.2× the quiet figure. The bot's peak resident memory (VmHWM)
   is read from /proc at the end of each run.
2. **Mixed stream.** 10,000 updates, shuffled: strangers (2,000 ids, texts, commands, photos,
   documents), malformed and unusual updates (no sender, channel posts, edits, service messages,
   unknown kinds, stickers), huge photos and documents from allowed users (a 7000×7000 PNG, 40 MB
   files, a PNG bomb), anonymous group admins (``GroupAnonymousBot``) and channel senders, a
   flood of commands from one allowed user, and 400 questions from 100 allowed users. Checked: no
   traceback in the log, no model call and no file for any stranger, peak memory under 200 MB,
   every allowed question answered.

3. **Webhook flood** and 4. **command flood in a group** (bench/hostile_floods.py): 20 unauthenticated
   95 MB POSTs to the webhook (peak memory under the unit's 512 MB, the owner's answer time within
   1.2× of quiet), and a member's 100 commands in a group (the admin's answer time within 1.2× of quiet).

    python -m bench.hostile                      # every part
    python -m bench.hostile --part answer-time   # or --part mixed, webhook, commands
    python -m bench.hostile --baseline /work/main  # part 1 also on another checkout
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from bench.hostile_floods import UNIT_LIMIT_MB, commands_part, webhook_part
from bench.hostile_run import OWNER, Bot, Row, fakes, measured, timed
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import BOT_USERNAME, FakeTelegram

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = 200
STRANGER = 666_000
STRANGERS_GROUP = -100_666
OPEN_GROUP = -100_777
ANONYMOUS_ADMIN = 1087968824  # GroupAnonymousBot


def ask_owner(tg: FakeTelegram, asks: int, tag: str) -> list[float]:
    """The owner's questions one after another: seconds from each to its final answer."""
    return timed(tg, OWNER, [f"owner {tag} {i}" for i in range(asks)], lambda q: tg.send_text(OWNER, q), "echo: {q}")


def stranger_private(tg: FakeTelegram, n: int) -> None:
    for i in range(n):
        tg.send_text(STRANGER, f"spam {i}", first_name="Eve")


def stranger_group(tg: FakeTelegram, n: int) -> None:
    for i in range(n):
        text = f"/help@{BOT_USERNAME}" if i % 2 else f"@{BOT_USERNAME} hi {i}"
        tg.push_update({"message": tg.message(STRANGERS_GROUP, text, chat_type="supergroup", user_id=STRANGER)})


def allowed_burst(tg: FakeTelegram, n: int) -> None:
    for i in range(n):
        tg.send_text(ALLOWED, f"burst {i}")


def answer_time_part(
    code: Path, label: str, asks: int, latency: float, flood: int = 1000, burst: int = 100
) -> list[Row]:
    """Rows (scenario, median seconds, max seconds, peak MB) for one checkout."""
    scenarios: list[tuple[str, Callable[[FakeTelegram], None] | None]] = [
        ("quiet", None),
        (f"stranger: {flood:,} in private", lambda tg: stranger_private(tg, flood)),
        (f"stranger: {flood:,} in own group", lambda tg: stranger_group(tg, flood)),
        (f"allowed user: {burst:,} at once", lambda tg: allowed_burst(tg, burst)),
    ]

    def run(
        work: Path, tg: FakeTelegram, model: FakeAnthropic, make_flood: Callable[[FakeTelegram], None] | None
    ) -> tuple[list[float], float]:
        with Bot(code, tg, model, work, [OWNER, ALLOWED]) as bot:
            ask_owner(tg, 1, "warm-up")
            if make_flood is not None:
                make_flood(tg)
            times = ask_owner(tg, asks, "timed")
            return times, bot.memory()[1]

    return measured(label, latency, scenarios, run)


# -- the mixed stream -------------------------------------------------------------------------------------


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(out, "PNG")
    return out.getvalue()


def mixed_updates(tg: FakeTelegram, total: int, rng: random.Random) -> tuple[list[Callable[[], int]], list[str]]:
    """The stream (callables that push one update each) and the allowed questions in it."""
    strangers = [5_000_000 + i for i in range(2000)]
    allowed = [ALLOWED + 1 + i for i in range(100)]
    big_png = png(7000, 7000)  # 49 megapixels in a few hundred kilobytes
    tg.files["bigpng"] = big_png
    out = io.BytesIO()
    Image.new("1", (15000, 15000)).save(out, "PNG")  # 225 megapixels in a few kilobytes
    bomb = out.getvalue()
    tg.files["bomb"] = bomb
    questions: list[str] = []
    items: list[Callable[[], int]] = []

    def group_msg(chat: int, text: str, **kw: Any) -> Callable[[], int]:
        return lambda: tg.push_update({"message": tg.message(chat, text, chat_type="supergroup", **kw)})

    for u in allowed:  # 400 questions, 4 per allowed user
        for j in range(4):
            q = f"question {u} {j}"
            questions.append(q)
            items.append(lambda u=u, q=q: tg.send_text(u, q))
    kinds = ["stranger_text", "stranger_cmd", "stranger_photo", "stranger_doc", "stranger_group", "malformed",
             "huge_file", "anonymous_admin", "command_flood"]  # fmt: skip
    while len(items) < total:
        kind = kinds[len(items) % len(kinds)]
        s = rng.choice(strangers)
        i = len(items)
        if kind == "stranger_text":
            items.append(lambda s=s, i=i: tg.send_text(s, f"STRANGER {i} 내 비밀은 {i}"))
        elif kind == "stranger_cmd":
            cmd = rng.choice(["/start", "/help", "/stats", "/export", "/search x", "/remember STRANGER", "/allow 1"])
            items.append(lambda s=s, cmd=cmd: tg.send_text(s, cmd))
        elif kind == "stranger_photo":
            items.append(lambda s=s, i=i: tg.send_photo(s, f"sp{i}", b"\xff\xd8\xff STRANGER", caption="STRANGER"))
        elif kind == "stranger_doc":
            items.append(
                lambda s=s, i=i: tg.send_document(s, f"sd{i}", b"%PDF-1.4 STRANGER", "x.pdf", "application/pdf")
            )
        elif kind == "stranger_group":
            text = rng.choice([f"@{BOT_USERNAME} STRANGER {i}", f"/help@{BOT_USERNAME}", "/allow", "/export"])
            items.append(group_msg(-200_000 - rng.randrange(50), text, user_id=s))
        elif kind == "malformed":
            items.append(
                rng.choice(
                    [
                        lambda: tg.push_update({"message": {"message_id": 1, "date": 0,
                                                             "chat": {"id": 42, "type": "private"}}}),
                        lambda: tg.push_update({"weird_new_kind": {"x": 1}}),
                        lambda: tg.send_channel_post(-100_999, "STRANGER channel post"),
                        lambda s=s: tg.send_edit(s, 5, "STRANGER edited"),
                        lambda s=s: tg.send_kind(s, "sticker"),
                        lambda: tg.send_service(OPEN_GROUP, "new_chat_members"),
                        lambda: tg.push_update({"message": tg.message(43, "\u202e" * 50 + "x" * 5000)}),
                        lambda s=s: tg.push_update({"callback_query": {"id": "1", "chat_instance": "c", "data": "x",
                                                    "from": {"id": s, "is_bot": False, "first_name": "E"}}}),
                    ]
                )
            )  # fmt: skip
        elif kind == "huge_file":
            u = rng.choice(allowed)
            items.append(
                rng.choice(
                    [
                        lambda u=u: tg.send_document(u, "bigpng", None, "big.png", "image/png", size=len(big_png)),
                        lambda u=u: tg.send_document(u, "bomb", None, "bomb.png", "image/png", size=len(bomb)),
                        lambda u=u: tg.send_document_meta(u, "huge", mime_type="application/pdf",
                                                          file_size=40 * 1024 * 1024),
                    ]
                )
            )  # fmt: skip
        elif kind == "anonymous_admin":
            sender = {"id": OPEN_GROUP, "type": "supergroup", "title": "Open group"}
            text = rng.choice(["/export", "/forget all", "/reset", "/stats", f"@{BOT_USERNAME} 익명 질문"])
            items.append(
                group_msg(OPEN_GROUP, text, user_id=ANONYMOUS_ADMIN, first_name="Group", is_bot=True,
                          sender_chat=sender)
            )  # fmt: skip
        else:  # command_flood: one allowed user
            cmd = rng.choice(["/help", "/stats", "/history", "/memory", "/summary", "/search 질문"])
            items.append(lambda cmd=cmd: tg.send_text(ALLOWED, cmd))
    return items, questions


def mixed_part(code: Path, total: int, latency: float, timeout: float) -> dict[str, Any]:
    with fakes(latency) as (work, tg, model):
        rng = random.Random(19)
        items, questions = mixed_updates(tg, total, rng)
        rng.shuffle(items)
        users = [OWNER, ALLOWED, *range(ALLOWED + 1, ALLOWED + 101)]
        bot = Bot(code, tg, model, work, users)
        peak = 0.0
        try:
            ask_owner(tg, 1, "warm-up")
            tg.push_update({"message": tg.message(OPEN_GROUP, "/allow", chat_type="supergroup", user_id=OWNER)})
            t0 = time.monotonic()
            for push in items:
                push()
            answered: set[str] = set()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                peak = max(peak, bot.memory()[1])
                texts = set(tg.sent())
                answered = {q for q in questions if f"echo: {q}" in texts}
                if len(answered) == len(questions):
                    break
                time.sleep(0.5)
            seconds = time.monotonic() - t0
            rss, hwm = bot.memory()
            peak = max(peak, hwm)
        finally:
            log = bot.stop()
        data = work / "data"
        stranger_files = [p for p in data.rglob("*") if "STRANGER" in p.name or p.name.startswith("5")]
        stranger_calls = [r for r in model.requests if "STRANGER" in str(r.get("messages", ""))]
        return {
            "updates": len(items),
            "seconds": seconds,
            "questions": len(questions),
            "answered": len(answered),
            "tracebacks": log.count("Traceback"),
            "stranger_model_calls": len(stranger_calls),
            "stranger_files": len(stranger_files),
            "model_calls": len(model.requests),
            "rss_mb": rss,
            "peak_mb": peak,
            "getFile": len(tg.calls_of("getFile")),
            "dropped_notices": log.count("updates waiting already"),
            "429_all": tg.flood.refused_by.get("all", 0) if tg.flood else 0,
        }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=("both", "answer-time", "mixed", "webhook", "commands"), default="both")
    ap.add_argument("--posts", type=int, default=20, help="unauthenticated 95 MB webhook POSTs at once")
    ap.add_argument("--commands", type=int, default=100, help="a member's commands in a group")
    ap.add_argument("--asks", type=int, default=10)
    ap.add_argument("--latency", type=float, default=0.5, help="seconds the model takes per answer")
    ap.add_argument("--flood", type=int, default=1000, help="a stranger's messages in part 1")
    ap.add_argument("--burst", type=int, default=100, help="an allowed user's messages at once in part 1")
    ap.add_argument("--updates", type=int, default=10_000)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--baseline", type=Path, help="another checkout (e.g. /work/main): part 1 there too")
    args = ap.parse_args(argv)
    print(f"cores: {os.cpu_count()}, load: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ok = True
    if args.part in ("both", "answer-time"):
        codes = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
        print(f"\nthe owner's answer time, {args.asks} questions one after another, model {args.latency:g} s")
        print(f"{'checkout':<10}{'scenario':<32}{'median s':>9}{'max s':>8}{'× quiet':>9}{'peak MB':>9}")
        for name, code in codes:
            rows = answer_time_part(code, name, args.asks, args.latency, args.flood, args.burst)
            quiet = rows[0][1]
            for scenario, med, mx, hwm in rows:
                print(f"{name:<10}{scenario:<32}{med:>9.2f}{mx:>8.2f}{med / quiet:>9.2f}{hwm:>9.0f}")
                if name == "this" and med > 1.2 * quiet:
                    ok = False
    if args.part in ("both", "webhook", "commands"):
        rows: list[tuple[str, float, float, float]] = []
        if args.part in ("both", "webhook"):
            hook_rows, taken = webhook_part(ROOT, args.asks, args.latency, args.posts)
            rows += hook_rows
            ok = ok and hook_rows[-1][3] < UNIT_LIMIT_MB
        if args.part in ("both", "commands"):
            rows += commands_part(ROOT, args.asks, args.latency, args.commands)
        print(f"\nfloods, {args.asks} questions one after another, model {args.latency:g} s (strict flood limits)")
        print(f"{'scenario':<36}{'median s':>9}{'max s':>8}{'× quiet':>9}{'peak MB':>9}")
        for i, (scenario, med, mx, hwm) in enumerate(rows):
            quiet = rows[i - i % 2][1]  # each flood after its quiet run
            print(f"{scenario:<36}{med:>9.2f}{mx:>8.2f}{med / quiet:>9.2f}{hwm:>9.0f}")
            ok = ok and med <= 1.2 * quiet
        if args.part in ("both", "webhook"):
            print(f"bytes of body the bot took per hostile POST: max {max(taken, default=0):,} of {95 * 1024 * 1024:,}")
    if args.part in ("both", "mixed"):
        print(f"\nmixed stream of {args.updates:,} updates (strict flood limits, model {args.latency:g} s)")
        r = mixed_part(ROOT, args.updates, args.latency, args.timeout)
        for key, value in r.items():
            print(f"  {key:<22}{value:.1f}" if isinstance(value, float) else f"  {key:<22}{value}")
        good = (
            r["tracebacks"] == 0 and r["stranger_model_calls"] == 0 and r["stranger_files"] == 0
            and r["peak_mb"] < 200 and r["answered"] == r["questions"]
        )  # fmt: skip
        ok = ok and good
    print(f"\nthis checkout {'meets' if ok else 'MISSES'} the goals (≤ 1.2× quiet; 0 tracebacks, 0 model calls or "
          "files for strangers, < 200 MB, every allowed question answered)")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
