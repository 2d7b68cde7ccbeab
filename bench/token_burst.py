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

Then the same burst with refusals and searches (issue 29 items 4 and 5): one question in three is
refused by the model (billed like any call: charged to the asker), one in three searches the web
(three searches a call, ``WEB_SEARCH_MAX_USES=3``) under ``DAILY_SEARCH_LIMIT``; goal: recorded tokens
<= limit + one call, searches <= the search limit + one call's ``max_uses``.

    python -m bench.token_burst [--limit 20000] [--questions 20] [--rounds 2] [--searches 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
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

from bot.config import load_settings
from bot.core import limits as bot_limits
from bot.texts import t
from bot.tg.app import build_application
from bot.wiring import make_assistant
from tests.fakes.anthropic_server import FakeAnthropic, Refusal, Text, ToolCalls, tool_results
from tests.fakes.server_tools import Page, Search, WebAnswer
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
    declined: int = 0  # refused by the model (stop_reason "refusal"): billed all the same
    searches: int = 0


SEARCHES_PER_CALL = 3  # WEB_SEARCH_MAX_USES in the mixed burst
PAGE = Page("https://news.example.com/a", "News")


def responder(release: threading.Event, rounds: int) -> Any:
    """Each request waits for ``release``; then ``rounds`` tool rounds, then a text. A question that says
    거절 is refused by the model; one that says 검색 searches the web three times (when it may)."""

    def answer(body: dict[str, Any]) -> Text | ToolCalls | Refusal | WebAnswer:
        release.wait(120)
        question = json.dumps(body["messages"][0], ensure_ascii=False)
        if "거절" in question:
            return Refusal(usage=dict(CALL_USAGE))
        if "검색" in question:
            steps = [Search(f"뉴스 {i}", (PAGE,)) for i in range(SEARCHES_PER_CALL)]
            return WebAnswer(steps, parts=[("다 됐어요", [PAGE.url])], usage=dict(CALL_USAGE))  # type: ignore[list-item]
        done = sum(1 for m in body["messages"] if m["role"] == "user" and tool_results({"messages": [m]}))
        if done < rounds:
            return ToolCalls([("list_reminders", {})], usage=dict(CALL_USAGE))
        return Text("다 됐어요", usage=dict(CALL_USAGE))

    return answer


async def run_burst(limit: int, questions: int, rounds: int, *, reserve: bool, searches: int = 0) -> Outcome:
    """``searches`` > 0: the mixed burst (refusals, searches under DAILY_SEARCH_LIMIT=searches)."""
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
            "DAILY_SEARCH_LIMIT": str(searches),
            "WEB_SEARCH_MAX_USES": str(SEARCHES_PER_CALL),
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
                for i, chat in enumerate(chats):
                    what = (
                        ("거절될 질문", "오늘 뉴스 검색해 줘", "알림 목록 정리해 줘")[i % 3]
                        if searches
                        else "알림 목록 정리해 줘"
                    )
                    tg.push_update({"message": tg.message(chat, f"@{BOT_USERNAME} {what}",
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
            declined=kinds.count("declined"),
            searches=tally.searches,
        )


def kind(view: list[str], refusal: str) -> str | None:
    """How a chat's question ended: answered, refused (on arrival), stopped (before a model call), or None yet."""
    if not view:
        return None
    last = view[-1]
    if last.startswith("다 됐어요"):
        return "answered"
    if last == t("error.refusal", "ko"):
        return "declined"
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
        + (f", declined by the model {o.declined}; {o.searches} searches" if o.declined or o.searches else "")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=20_000)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--searches", type=int, default=5, help="DAILY_SEARCH_LIMIT of the mixed burst")
    args = parser.parse_args(argv)
    print(f"{args.questions} questions at once, {args.rounds} tool rounds each, {CALL_TOKENS:,} tokens per call, "
          f"DAILY_TOKEN_LIMIT={args.limit:,}")  # fmt: skip
    before = asyncio.run(run_burst(args.limit, args.questions, args.rounds, reserve=False))
    print(report("without reservation", before, args.limit))
    after = asyncio.run(run_burst(args.limit, args.questions, args.rounds, reserve=True))
    print(report("with reservation", after, args.limit))
    ok = after.recorded <= args.limit + CALL_TOKENS
    print(f"goal recorded <= limit + one call ({args.limit + CALL_TOKENS:,}): {'met' if ok else 'MISSED'}")
    print(f"\nwith refusals (1 in 3) and searches (1 in 3, {SEARCHES_PER_CALL} a call), "
          f"DAILY_SEARCH_LIMIT={args.searches}")  # fmt: skip
    before = asyncio.run(run_burst(args.limit, args.questions, args.rounds, reserve=False, searches=args.searches))
    print(report("without reservation", before, args.limit))
    mixed = asyncio.run(run_burst(args.limit, args.questions, args.rounds, reserve=True, searches=args.searches))
    print(report("with reservation", mixed, args.limit))
    tokens_ok = mixed.recorded <= args.limit + CALL_TOKENS and mixed.declined > 0
    searches_ok = mixed.searches <= args.searches + SEARCHES_PER_CALL
    print(f"goal recorded <= limit + one call: {'met' if tokens_ok else 'MISSED'}; searches <= limit + one call's "
          f"max_uses ({args.searches + SEARCHES_PER_CALL}): {'met' if searches_ok else 'MISSED'}")  # fmt: skip
    return 0 if ok and tokens_ok and searches_ok else 1


if __name__ == "__main__":
    sys.exit(main())
