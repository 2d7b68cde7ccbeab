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

    python -m bench.prompt_cache [--turns 60] [--model claude-sonnet-5-5] [--web] [--people] [--quiet]

On models documented to take mid-conversation system messages (Sonnet 5.5, Opus 4.8) the time line
and the related memories follow the question in one, so the conversation before it is cached from
turn to turn; on the others they end the system prompt.

With ``--people`` (issue 30 item 4) three chats play the same script with web search on: a private
chat; a group where the owner (who may search) and a member (who may not: ``WEB_SEARCH=owner``) take
turns; one person who passes ``DAILY_SEARCH_LIMIT`` partway. The web tools are declared on every
request of all three; who may not search is told so in the per-turn context. Printed per chat: the
share of the input read from the cache, the ideal (every token a request shares with an earlier
request read from the cache: only the tokens new to each request uncached) and the share of the ideal
reached. Goal: every chat within 5 points of the private one, the private one at >= 95% of the ideal.

With ``--web`` web search is on (the ``web_search`` / ``web_fetch`` server tools are declared on
every request, after the client tools) and one question turn out of five searches twice and cites
three pages (tests/fakes/server_tools.py; what Claude reads of the pages is counted as uncached
input, as the API bills it); the answer is stored with its source list and later turns carry it
as plain text.
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
from bot.claude.modelinfo import ModelCatalog
from bot.claude.summarizer import SYSTEM_MARK, Summarizer
from bot.core.ask import Assistant
from bot.tools.reminders import reminder_tools
from bot.tools.web import WebSearch, WebSettings
from memory.recall import RecallIndex
from memory.reminders import ReminderStore
from memory.summary import HEADINGS, Budget
from memory.transcript import Transcript
from tests.fakes.anthropic_server import FakeAnthropic, Text, ToolCalls, last_user_text
from tests.fakes.server_tools import Page, Search, WebAnswer

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


WEB_QUESTIONS = [
    "오늘 부산 날씨랑 미세먼지 어때?",
    "What's the KRW to USD exchange rate today?",
    "이번 주말 부산 불꽃축제 일정 찾아 줘",
    "Which phones were released last week?",
]


def web_turn(i: int) -> tuple[str, WebAnswer]:
    """A question that searches twice and cites three pages (about 2,000 characters read per page)."""
    pages = [Page(f"https://news{i}-{k}.example.com/a", f"Page {k} of turn {i}", "본문 내용. " * 300) for k in range(3)]
    answer = WebAnswer(
        [Search(f"query {i} a", (pages[0], pages[1])), Search(f"query {i} b", (pages[2],))],
        parts=[
            ("찾아본 결과예요. ", []),
            ("첫째 사실", [pages[0].url]),
            (", 둘째 사실", [pages[1].url, pages[2].url]),
            (". 참고하세요.", []),
        ],  # fmt: skip
    )
    return WEB_QUESTIONS[i % len(WEB_QUESTIONS)], answer


def script(turns: int, seed: int, web: bool = False) -> list[tuple[str, Any]]:
    """(user text, scripted reply) per turn: facts every few turns (a tool call), questions, small talk;
    with ``web`` every fifth turn (that is no fact turn) searches."""
    rng = random.Random(seed)
    out: list[tuple[str, Any]] = []
    facts = list(FACT_LINES)
    for i in range(turns):
        if web and i % 5 == 3:
            out.append(web_turn(i))
        elif facts and i % 9 == 1:
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


async def play(turns: int, model_name: str, seed: int, web: bool = False) -> tuple[list[TurnRow], int]:
    clock = SimClock()
    server = FakeAnthropic(clock=clock.monotonic).start()
    plan = script(turns, seed, web)
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
            client = ClaudeModel(model_name, api_key="bench", base_url=server.url, max_retries=0,
                                 catalog=ModelCatalog(Path(tmp)))  # fmt: skip
            # as bot/wiring.py: the summarizer asks for the least thinking the model accepts
            summary_model = ClaudeModel(model_name, share=client, max_tokens=8192, purpose="lowest")
            # as the bot runs it: facts, recall (search_memory and the related-memories block) and reminders
            assistant = Assistant(
                transcript=Transcript(Path(tmp)),
                model=client,
                now=clock.now,
                summarizer=Summarizer(summary_model, max_tokens=8192),
                summary_budget=Budget(),
                recall=RecallIndex(Path(tmp)),
                tools=reminder_tools(ReminderStore(Path(tmp)), "Asia/Seoul"),
                web=WebSearch(WebSettings()) if web else None,
            )
            rows: list[TurnRow] = []
            for i, (text, reply) in enumerate(plan, 1):
                after_tool = Text("알겠어요, 기억해 둘게요.")
                pending[:] = [reply, after_tool] if isinstance(reply, ToolCalls) else [reply]
                before, refused = len(server.requests), len(server.rejected)
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
                assert len(chat_requests) - (len(server.rejected) - refused) == 1 + answer_.tool_rounds
                rows.append(row)
                await assistant.maintain(CHAT)  # the summarizer's calls are not counted in the rows
                clock.seconds += 60
            await client.aclose()
            # nothing refused but the one probe of mid-conversation system messages on a model without them
            probes = [r for r in server.rejected if "role 'system'" in r]
            assert probes == server.rejected and len(probes) <= 1, server.rejected
            return rows, summaries
    finally:
        server.stop()


# -- who may search: the same tools for everyone (issue 30 item 4) ------------------------------------------
OWNER, MEMBER, GROUP = 1, 2, -100
SEARCH_LIMIT = 9  # DAILY_SEARCH_LIMIT of the "limit" scenario: passed at turn 24 (two searches every fifth turn)


@dataclass
class Scenario:
    name: str
    read: int = 0  # input tokens read from the cache, turns 11-N
    total: int = 0  # all input tokens (uncached, cache writes and reads), turns 11-N
    ideal: int = 0  # what could be read at best: every token a request shares with an earlier one
    prompt: int = 0  # the requests' own tokens (input without the pages Claude read while searching)
    searches: int = 0
    told: int = 0  # requests that told Claude search is not available

    @property
    def share(self) -> float:
        return self.read / self.total if self.total else 0.0

    @property
    def ideal_share(self) -> float:
        return self.ideal / self.total if self.total else 0.0

    @property
    def prompt_share(self) -> float:
        """Read from the cache, of the requests' own tokens: comparable between chats that read different
        amounts of web pages (a page Claude read is new input of its request, never cacheable)."""
        return self.read / self.prompt if self.prompt else 0.0


def shared_prefixes(bodies: list[dict[str, Any]]) -> list[int]:
    """Per request: the tokens of its longest prefix (in the fake's cache segments) that an earlier request
    had too: the most the best caching could read; everything after it is new to the request."""
    import hashlib

    from tests.fakes.prompt_cache import segments

    seen: set[str] = set()
    out: list[int] = []
    for body in bodies:
        digest = hashlib.sha256(str(body.get("model")).encode())
        running = best = 0
        mine: list[str] = []
        for seg in segments(body):
            digest.update(b"\x00" + seg.key.encode())
            running += seg.tokens
            key = digest.hexdigest()
            if key in seen:
                best = running
            mine.append(key)
        seen.update(mine)
        out.append(best)
    return out


async def play_people(kind: str, turns: int, model_name: str, seed: int) -> Scenario:
    """``private``: one person who may search; ``group``: the owner (may search) and a member (may not,
    WEB_SEARCH=owner) take turns in one chat; ``limit``: one person who passes DAILY_SEARCH_LIMIT partway.
    One turn in five asks something that needs the web; who may not search is answered from memory (Claude
    is told so in the per-turn context; the web tools stay declared)."""
    from bot.core.ask import Question, Spend
    from bot.core.limits import Limits
    from memory.usage import UsageLedger
    from tests.fakes.model_rules import prompt_tokens

    clock = SimClock()
    server = FakeAnthropic(clock=clock.monotonic).start()
    plan = script(turns, seed, web=True)
    pending: list[Any] = []
    spends: list[tuple[int, Spend]] = []

    def answer(body: dict[str, Any]) -> Any:
        if body["system"] and str(body["system"][0].get("text", "")).startswith(SYSTEM_MARK):
            return Text(memo(1))
        return pending.pop(0) if pending else Text(f"echo: {last_user_text(body)}")

    server.default = answer
    result = Scenario(kind)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            client = ClaudeModel(model_name, api_key="bench", base_url=server.url, max_retries=0,
                                 catalog=ModelCatalog(Path(tmp)))  # fmt: skip
            limits = Limits(UsageLedger(Path(tmp), flush_after=None), searches=SEARCH_LIMIT if kind == "limit" else 0,
                            now=clock.now)  # fmt: skip
            web = WebSearch(WebSettings(daily_limit=limits.searches))
            web.may_search = (lambda u: u == OWNER) if kind == "group" else limits.may_search
            turn = 0

            def spent(s: Spend) -> None:
                limits.record(s)
                spends.append((turn, s))

            assistant = Assistant(transcript=Transcript(Path(tmp)), model=client, now=clock.now, web=web,
                                  on_spend=spent, summarizer=Summarizer(ClaudeModel(model_name, share=client)),
                                  recall=RecallIndex(Path(tmp)))  # fmt: skip

            async def reserve(user_id: int | None, request: Any, previous: Any) -> Any:
                return await limits.reserve(user_id, request, previous=previous)

            assistant.reserve = reserve
            chat = GROUP if kind == "group" else CHAT
            firsts: list[int] = []  # per turn: the index of its first request
            for i, (text, reply) in enumerate(plan, 1):
                turn = i
                who = (OWNER if i % 2 else MEMBER) if kind == "group" else OWNER
                if isinstance(reply, WebAnswer) and not web.allowed(who):
                    reply = Text("지금은 웹 검색을 할 수 없어서 아는 범위에서 답해요. " * 8)  # Claude was told
                after_tool = Text("알겠어요, 기억해 둘게요.")
                pending[:] = [reply, after_tool] if isinstance(reply, ToolCalls) else [reply]
                firsts.append(len(server.requests))
                await assistant.ask(
                    chat,
                    Question(
                        f"{text}" if kind != "group" else f"{'민지' if who == OWNER else '준호'}: {text}", user_id=who
                    ),
                )
                await assistant.maintain(chat, user_id=who)
                clock.seconds += 60
            await client.aclose()
            assert server.rejected == [], server.rejected
            chat_bodies = [
                b for b in server.requests if not str(b["system"][0].get("text", "")).startswith(SYSTEM_MARK)
            ]
            ideal = shared_prefixes(chat_bodies)
            late = [k for k, b in enumerate(chat_bodies) if server.requests.index(b) >= firsts[10]]
            result.ideal = sum(ideal[k] for k in late)
            result.prompt = sum(prompt_tokens(chat_bodies[k]) for k in late)
            result.told = sum("Web search is not available" in str(chat_bodies[k]) for k in late)
            for t, s in spends:
                if s.kind == "summary" or t <= 10:
                    continue
                u = s.usage
                result.read += u.cache_read_tokens
                result.total += u.input_tokens + u.cache_write_tokens + u.cache_read_tokens
                result.searches += u.web_searches
            return result
    finally:
        server.stop()


def people(turns: int, model_name: str, seed: int) -> int:
    """The group and the daily-limit scenarios beside a private chat and beside the ideal."""
    runs = [asyncio.run(play_people(k, turns, model_name, seed)) for k in ("private", "group", "limit")]
    private = runs[0]
    print(f"model {model_name}; web tools declared on every request; turns 11-{turns}")
    print("cached: share of all input read from the cache; of prompt: of the requests' own tokens (without the")
    print("pages read while searching, new input by nature); of ideal: cached / what the best caching could read")
    head = f"{'scenario':>8} {'input':>9} {'read':>9} {'cached':>7} {'ideal':>7} {'of ideal':>8} {'of prompt':>9}"
    print(f"{head} {'searches':>8} {'told':>5}")
    ok = private.share >= 0.95 * private.ideal_share
    for r in runs:
        of_ideal = r.share / r.ideal_share if r.ideal_share else 0.0
        print(f"{r.name:>8} {r.total:>9,} {r.read:>9,} {r.share:>7.1%} {r.ideal_share:>7.1%} {of_ideal:>8.1%}"
              f" {r.prompt_share:>9.1%} {r.searches:>8} {r.told:>5}")  # fmt: skip
        ok = ok and abs(of_ideal - private.share / private.ideal_share) <= 0.05
    verdict = "PASS" if ok else "FAIL"
    print(f"{verdict}: every scenario within 5 points of the private chat (of its ideal: the raw shares differ with")
    print("what each chat reads and writes, not with caching), and the private chat at >= 95% of the ideal")
    return 0 if ok else 1


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
    parser.add_argument("--model", default="claude-sonnet-5-5")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quiet", action="store_true", help="only the totals")
    parser.add_argument("--web", action="store_true", help="web search on; one turn in five searches")
    parser.add_argument(
        "--people", action="store_true", help="a private chat, a group (only the owner searches), a search limit"
    )
    args = parser.parse_args(argv)
    if args.people:
        return people(args.turns, args.model, args.seed)
    rows, summaries = asyncio.run(play(args.turns, args.model, args.seed, args.web))
    if not args.quiet:
        print(f"{'turn':>4} {'rounds':>6} {'input':>7} {'write':>7} {'read':>7} {'cached':>7} {'cost':>6}")
        for r in rows:
            print(f"{r.turn:>4} {r.rounds:>6} {r.total:>7,} {r.write:>7,} {r.read:>7,} {r.share:>7.1%} {r.cost:>6.2f}")
    whole, late = total(rows), total(rows[10:])
    web = "; web search on, one turn in five searches" if args.web else ""
    print(f"\nmodel {args.model}{web}; cost relative to no caching (write {WRITE}x, read {READ}x)")
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
