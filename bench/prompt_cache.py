"""Prompt caching over a 60-turn chat: the share of input tokens read from cache, and the input cost.

Plays a scripted 60-turn phone chat (Korean and English, with facts learned through the
``remember`` tool and a rolling summary compacted after replies) through the real
``Assistant.ask()`` + ``maintain()`` with every tool the bot has (facts, search_memory, reminders)
and automatic recall, and the real Claude client, against the fake Messages
API on 127.0.0.1, which applies Anthropic's caching rules (tests/fakes/prompt_cache.py:
prefix hash at each breakpoint with a 20-block look-back, the model's minimum prefix, at most
4 breakpoints, a 5-minute lifetime on a simulated clock advancing one minute per turn).

Per turn it prints the chat request's input tokens (uncached + cache write + cache read, all
rounds of the tool loop), the share read from cache, and the input cost relative to sending
the same tokens without caching (cache write 1.25x, cache read 0.1x). The summarizer's own
calls are not included (their count is printed). Exits non-zero when the cache share over turns 11-60 is under 40%.

    python -m bench.prompt_cache [--turns 60] [--model claude-sonnet-4-6] [--quiet]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.claude.client import ClaudeModel
from bot.claude.summarizer import SYSTEM_MARK, Summarizer
from bot.core.ask import Assistant
from bot.tools.reminders import reminder_tools
from memory.recall import RecallIndex
from memory.reminders import ReminderStore
from memory.summary import HEADINGS, Budget
from memory.transcript import Transcript
from tests.fakes.anthropic_server import FakeAnthropic, Text, ToolCalls, last_user_text

CHAT = 1
WRITE, READ = 1.25, 0.1
TARGET = 0.40

FACT_LINES = [
    ("내 이름은 김민지야. 민지라고 불러 줘", "이름은 김민지, 민지라고 부르기"),
    ("나 땅콩 알레르기 있어. 음식 추천할 때 꼭 빼 줘", "땅콩 알레르기"),
    ("My car plate is 12가 3456, remember it please", "Car plate 12가 3456"),
    ("우리 집 와이파이 비번은 home4719!", "집 와이파이 비밀번호 home4719!"),
    ("I moved to Busan last week, so use Busan for weather", "Lives in Busan"),
    ("아이가 둘이야, 7살 지우랑 4살 하준", "자녀: 지우(7), 하준(4)"),
]
QUESTIONS = [
    "이번 주말에 아이들이랑 갈 만한 곳 추천해 줘. 너무 멀지 않은 곳으로, 실내도 괜찮아.",
    "Can you draft a polite message to my landlord about the broken boiler? Keep it short.",
    "저녁 메뉴 고민이야. 냉장고에 닭가슴살, 양파, 감자, 계란이 있어. 30분 안에 할 수 있는 걸로.",
    "What's a good way to explain compound interest to a 7-year-old?",
    "다음 주 회의 준비: 안건은 예산 검토, 채용 계획, 2분기 목표. 순서랑 시간 배분 좀 짜 줘.",
    "번역해 줘: '배송이 늦어져서 죄송합니다. 내일 오전 중으로 도착할 예정입니다.'",
    "I have 40 minutes for a workout with no equipment. Plan it for me.",
    "지난번에 말한 여행 계획 다시 정리해 줄래? 예산이랑 날짜 위주로.",
    "회사 동료 송별회 메시지 한 줄 써 줘. 너무 딱딱하지 않게.",
    "Summarize the pros and cons of an electric car for city driving in five bullet points.",
]
SMALL_TALK = ["고마워!", "ok thanks", "ㅋㅋ 좋다", "그걸로 하자", "잠깐만", "sounds good"]


@dataclass
class TurnRow:
    turn: int
    uncached: int
    write: int
    read: int
    rounds: int

    @property
    def total(self) -> int:
        return self.uncached + self.write + self.read

    @property
    def share(self) -> float:
        return self.read / self.total if self.total else 0.0

    @property
    def cost(self) -> float:
        return (self.uncached + WRITE * self.write + READ * self.read) / self.total if self.total else 1.0


def script(turns: int, seed: int) -> list[tuple[str, Any]]:
    """(user text, scripted reply) per turn: facts every few turns (a tool call), questions, small talk."""
    rng = random.Random(seed)
    out: list[tuple[str, Any]] = []
    facts = list(FACT_LINES)
    for i in range(turns):
        if facts and i % 9 == 1:
            line, fact = facts.pop(0)
            out.append((line, ToolCalls([("remember", {"text": fact})], text="알겠어요, 기억해 둘게요.")))
        elif rng.random() < 0.25:
            out.append((rng.choice(SMALL_TALK), Text("네, 언제든지요! 😊")))
        else:
            question = rng.choice(QUESTIONS)
            length = rng.randint(300, 1200)
            answer = ("좋은 질문이에요. " + "여기 정리해 봤어요: 첫째, 상황을 나눠 보면 도움이 돼요. " * 40)[:length]
            out.append((question, Text(answer)))
    return out


def memo(n: int) -> str:
    body = {h: f"- (요약 {n}) " + "사용자는 김민지, 부산 거주, 아이 둘, 땅콩 알레르기. " * 3 for h in HEADINGS}
    return "\n".join(f"## {h}\n{text}" for h, text in body.items())


class SimClock:
    def __init__(self) -> None:
        self.start = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
        self.seconds = 0.0

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.seconds)

    def monotonic(self) -> float:
        return self.seconds


async def play(turns: int, model_name: str, seed: int) -> tuple[list[TurnRow], int]:
    clock = SimClock()
    server = FakeAnthropic(clock=clock.monotonic).start()
    plan = script(turns, seed)
    summaries = 0
    pending: list[Any] = []

    def answer(body: dict[str, Any]) -> Any:
        nonlocal summaries
        if body["system"] and str(body["system"][0].get("text", "")).startswith(SYSTEM_MARK):
            summaries += 1
            return Text(memo(summaries))
        return pending.pop(0) if pending else Text(f"echo: {last_user_text(body)}")

    server.default = answer
    try:
        with tempfile.TemporaryDirectory() as tmp:
            client = ClaudeModel(model_name, api_key="bench", max_retries=0)
            client.client = client.client.with_options(base_url=server.url)
            # as the bot runs it: facts, recall (search_memory and the related-memories block) and reminders
            assistant = Assistant(
                transcript=Transcript(Path(tmp)),
                model=client,
                now=clock.now,
                summarizer=Summarizer(client),
                summary_budget=Budget(),
                recall=RecallIndex(Path(tmp)),
                tools=reminder_tools(ReminderStore(Path(tmp)), "Asia/Seoul"),
            )
            rows: list[TurnRow] = []
            for i, (text, reply) in enumerate(plan, 1):
                after_tool = Text("알겠어요, 기억해 둘게요.")
                pending[:] = [reply, after_tool] if isinstance(reply, ToolCalls) else [reply]
                before = len(server.requests)
                answer_ = await assistant.ask(CHAT, text)
                chat_requests = server.requests[before:]
                row = TurnRow(i, 0, 0, 0, answer_.tool_rounds)
                # usage per request is what the fake computed; read it back from the stored turn
                stored = [e.data for e in assistant.transcript.read(CHAT)][-(2 + 2 * answer_.tool_rounds) :]
                for m in stored:
                    usage = m.get("usage") or {}
                    row.uncached += usage.get("input", 0)
                    row.write += usage.get("cache_write", 0)
                    row.read += usage.get("cache_read", 0)
                assert len(chat_requests) == 1 + answer_.tool_rounds
                rows.append(row)
                await assistant.maintain(CHAT)  # the summarizer's calls are not counted in the rows
                clock.seconds += 60
            await client.client.close()
            assert server.rejected == [], server.rejected
            return rows, summaries
    finally:
        server.stop()


def total(rows: list[TurnRow]) -> TurnRow:
    out = TurnRow(0, 0, 0, 0, 0)
    for r in rows:
        out.uncached += r.uncached
        out.write += r.write
        out.read += r.read
        out.rounds += r.rounds
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--model", default="claude-sonnet-4-6")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quiet", action="store_true", help="only the totals")
    args = parser.parse_args(argv)
    rows, summaries = asyncio.run(play(args.turns, args.model, args.seed))
    if not args.quiet:
        print(f"{'turn':>4} {'rounds':>6} {'input':>7} {'write':>7} {'read':>7} {'cached':>7} {'cost':>6}")
        for r in rows:
            print(
                f"{r.turn:>4} {r.rounds:>6} {r.total:>7,} {r.write:>7,} {r.read:>7,} {r.share:>7.1%} {r.cost:>6.2f}"
            )
    whole, late = total(rows), total(rows[10:])
    print(f"\nmodel {args.model}; cost relative to no caching (write {WRITE}x, read {READ}x)")
    print(f"the summarizer was called {summaries} times (its requests are not in these figures)")
    print(f"{'turns':>8} {'input':>9} {'read':>9} {'cached':>7} {'cost':>6}")
    for name, t in ((f"1-{len(rows)}", whole), (f"11-{len(rows)}", late)):
        print(f"{name:>8} {t.total:>9,} {t.read:>9,} {t.share:>7.1%} {t.cost:>6.2f}")
    ok = late.share >= TARGET
    verdict = "PASS" if ok else "FAIL"
    print(f"{verdict}: {late.share:.1%} of the input tokens of turns 11-{len(rows)} read from cache", end="")
    print(f" (target {TARGET:.0%})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
