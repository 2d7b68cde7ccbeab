"""The daily token limit under a burst: 20 questions at once, each with tool rounds.

One allowed user (not the owner) with ``DAILY_TOKEN_LIMIT`` asks 20 questions at the same moment,
in 20 different chats (so the chat locks do not serialize them). The fake Anthropic server holds
every model request until all 20 questions were either accepted or refused, then answers each
question with two tool rounds (``list_reminders``) and a final text; every call reports the same
usage (``CALL_TOKENS``). The real Telegram application (every handler, the limits, the ledger) runs
in this process against the fake Telegram and Anthropic servers.

It prints the tokens recorded in the ledger for that user against the limit, the number of
questions answered, refused on arrival and stopped mid-way, with the reservation (the bot as it
is) and without it (``Limits.reserve`` and the admission hold disabled: the bot before the fix),
in the same run. Goal: recorded <= limit + one call.

    python -m bench.token_burst [--limit 20000] [--questions 20] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

from bot import limits as bot_limits
from bot.config import load_settings
from bot.texts import t
from bot.tg.app import build_application
from bot.wiring import make_assistant
from tests.fakes.anthropic_server import FakeAnthropic, Text, ToolCalls, tool_results
from tests.fakes.telegram_server import BOT_USERNAME, FakeTelegram

USER = 7
OWNER = 1
CALL_USAGE = {"input_tokens": 2000, "output_tokens": 100, "cache_creation_input_tokens": 0,
              "cache_read_input_tokens": 0}  # fmt: skip
CALL_TOKENS = sum(CALL_USAGE.values())


@dataclass
class Outcome:
    recorded: int
    calls: int
    answered: int
    refused: int  # on arrival (the polite "limit" reply)
    stopped: int  # accepted, then stopped before a model call ("error.limit")


def responder(release: threading.Event, rounds: int) -> Any:
    """Each request waits for ``release``; then ``rounds`` tool rounds, then a text."""

    def answer(body: dict[str, Any]) -> Text | ToolCalls:
        release.wait(120)
        done = sum(1 for m in body["messages"] if m["role"] == "user" and tool_results({"messages": [m]}))
        if done < rounds:
            return ToolCalls([("list_reminders", {})], usage=dict(CALL_USAGE))
        return Text("다 됐어요", usage=dict(CALL_USAGE))

    return answer


async def run_burst(limit: int, questions: int, rounds: int, *, reserve: bool) -> Outcome:
    with FakeTelegram() as tg, FakeAnthropic() as claude, tempfile.TemporaryDirectory() as tmp:
        release = threading.Event()
        claude.default = responder(release, rounds)
        os.environ["ANTHROPIC_BASE_URL"] = claude.url
        env = {
            "TELEGRAM_BOT_TOKEN": tg.token,
            "TELEGRAM_BASE_URL": tg.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-bench",
            "ANTHROPIC_MAX_RETRIES": "0",
            "DATA_DIR": str(Path(tmp) / "data"),
            "OWNER_ID": str(OWNER),
            "ALLOWED_USERS": str(USER),
            "DAILY_MESSAGE_LIMIT": "0",
            "DAILY_TOKEN_LIMIT": str(limit),
            "RECALL_TURNS": "0",
            "STREAM_INTERVAL": "0.2",
        }
        settings = load_settings(env, dotenv=False)
        with _without_reservation(not reserve):
            app = build_application(settings, make_assistant(settings))
            await app.initialize()
            await app.start()
            assert app.updater is not None
            await app.updater.start_polling(timeout=1, allowed_updates=["message"])
            try:
                chats = [-100_000 - i for i in range(questions)]
                for chat in chats:
                    tg.push_update({"message": tg.message(chat, f"@{BOT_USERNAME} 알림 목록 정리해 줘",
                                                          chat_type="supergroup", user_id=USER)})  # fmt: skip
                ledger = app.bot_data["guard"].limits.ledger
                refusal = t("limit.tokens", "ko", limit=f"{limit:,}", when="").split("{")[0][:20]

                def arrived() -> bool:
                    refused = sum(1 for c in chats if kind(tg.chat_view(c), refusal) == "refused")
                    return ledger.user_total(str(USER)).questions + refused >= questions

                await asyncio.to_thread(tg.wait_for, arrived, 120)
                release.set()  # every question was accepted or refused: now the model answers

                def finished() -> bool:
                    return all(kind(tg.chat_view(c), refusal) for c in chats)

                await asyncio.to_thread(tg.wait_for, finished, 300)
                await asyncio.to_thread(tg.wait_for, lambda: not app.bot_data["guard"].limits.held(str(USER)), 60)
            finally:
                await app.updater.stop()
                await app.stop()
                await app.post_shutdown(app)
                await app.shutdown()
        day = datetime.now(UTC)
        tally = ledger.user_day(str(USER), app.bot_data["guard"].limits.day(day))
        kinds = [kind(tg.chat_view(c), refusal) for c in chats]
        return Outcome(
            recorded=tally.total_tokens(),
            calls=tally.tokens()["calls"],
            answered=kinds.count("answered"),
            refused=kinds.count("refused"),
            stopped=kinds.count("stopped"),
        )


def kind(view: list[str], refusal: str) -> str | None:
    """How a chat's question ended: answered, refused (on arrival), stopped (before a model call), or None yet."""
    if not view:
        return None
    last = view[-1]
    if last == "다 됐어요":
        return "answered"
    if last.startswith(refusal):
        return "refused"
    if last == t("error.limit", "ko"):
        return "stopped"
    return None


@contextmanager
def _without_reservation(off: bool) -> Iterator[None]:
    """The bot before the fix: no admission hold, and every model call let through unchecked."""
    if not off:
        yield
        return

    async def reserve(self: bot_limits.Limits, user_id: int | None, request: Any, **kw: Any) -> Any:
        return bot_limits.Hold(self, bot_limits.user_key(user_id), 0, released=True)

    with mock.patch.object(bot_limits, "ADMISSION_TOKENS", 0), mock.patch.object(bot_limits.Limits, "reserve", reserve):
        yield


def report(name: str, o: Outcome, limit: int) -> str:
    over = o.recorded - limit
    return (
        f"{name:<22} recorded {o.recorded:>7,} tokens ({o.recorded / limit:5.2f}x the limit, "
        f"{max(0, over) / CALL_TOKENS:4.1f} calls over) in {o.calls:>3} calls; "
        f"answered {o.answered}, refused on arrival {o.refused}, stopped {o.stopped}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=20_000)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"{args.questions} questions at once, {args.rounds} tool rounds each, {CALL_TOKENS:,} tokens per call, "
          f"DAILY_TOKEN_LIMIT={args.limit:,}")  # fmt: skip
    before = asyncio.run(run_burst(args.limit, args.questions, args.rounds, reserve=False))
    print(report("without reservation", before, args.limit))
    after = asyncio.run(run_burst(args.limit, args.questions, args.rounds, reserve=True))
    print(report("with reservation", after, args.limit))
    ok = after.recorded <= args.limit + CALL_TOKENS
    print(f"goal recorded <= limit + one call ({args.limit + CALL_TOKENS:,}): {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
