"""Request size over a long chat: naive full history vs the summary memory.

Plays the same 400-turn scripted phone chat (Korean and English lines of varying length,
with facts and numbers) through ``Assistant.ask()`` + ``maintain()`` twice, with fake models
in temp DATA_DIRs:

- naive: every stored message is sent every time (huge window, no summarizer);
- memory: the defaults of the summary memory (window + rolling summary).

Prints the input characters / estimated tokens per request every 50 turns, the largest
request of the last 100 turns against the bound (system + summary cap + window + question),
and the totals with the ratio memory/naive. Exits non-zero if the memory's request size
does not plateau under the bound or its total is not under 10% of the naive one.

    python -m bench.summary_memory [--turns 400]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.claude.model import FakeModel
from bot.claude.summarizer import Summarizer
from bot.core.ask import Assistant
from bot.core.prompt import PERSONA, time_line
from memory.summary import HEADINGS, Budget, estimate_tokens
from memory.transcript import Transcript

CHAT = 1
SUMMARY_HEADER = "[이전 대화 요약 / Summary of the earlier conversation]\n"

NAMES = ["민지", "서준", "Alex", "지우", "Mina", "하준", "Chris", "수아"]
PLACES = ["강남역", "판교", "성수동", "제주", "부산", "Shibuya", "홍대", "여의도"]
SMALL_TALK = [
    "ㅋㅋ 알겠어",
    "고마워!",
    "ok thanks",
    "음 그렇구나",
    "좋아 그걸로 하자",
    "잠깐만 생각해 볼게",
    "sounds good 👍",
    "오늘 너무 피곤하다",
    "점심 뭐 먹지?",
    "what should I cook tonight?",
    "비 온대?",
    "이거 좀 더 짧게 말해 줄래?",
]
FACTS = [
    "내 사물함 비밀번호는 {code}야. 기억해 줘",
    "{name}이랑 {month}월 {day}일 {hour}시에 {place}에서 만나기로 했어",
    "이번 여행 예산은 {amount}만 원으로 잡자",
    "My flight is KE{flight} on {month}/{day}, seat {seat}",
    "아이 둘, 어른 둘이야. 숙소는 {nights}박",
    "회의가 {day}일에서 {day2}일로 바뀌었어",
    "Order number {code}{code2} — the package should arrive in {nights} days",
    "{name} 생일이 {month}월 {day}일이야. 선물 예산 {amount2}만 원",
    "와이파이 비번은 home{code}!",
    "I changed my mind: the dinner is at {hour}pm at {place}, not lunch",
]
QUESTIONS = [
    "{place} 근처에 괜찮은 카페 추천해 줄래?",
    "Can you help me write a short message to {name} saying I'll be late?",
    "주말에 {place} 가는데 일정 좀 짜 줘",
    "How many days until {month}/{day}?",
    "영어로 '{place}에서 만나요'를 자연스럽게 말하면?",
    "{name}한테 보낼 생일 축하 메시지 써 줘",
    "오늘 할 일 정리해 줘: 장보기, 세탁, {name}한테 전화",
    "Explain the difference between a Roth IRA and a 401k, briefly",
]
PASTE = (
    "이거 회사에서 받은 공지인데 요약해 줘: 다음 달부터 재택근무 정책이 바뀝니다. 주 2회 사무실 출근이 원칙이며, "
    "팀별로 출근 요일을 정해 인사팀에 알려 주세요. 예외가 필요한 경우 팀장 승인 후 신청서를 제출하면 됩니다. "
    "출근일에는 좌석 예약 시스템을 사용해야 하고, 예약 없이 출근하면 공용 좌석을 이용합니다. 주차 지원은 "
    "대중교통 이용이 어려운 경우에만 제공되며, 월 {amount}만 원 한도의 교통비가 지원됩니다. 문의는 내선 {code}번."
)


def conversation(turns: int, seed: int = 7) -> list[str]:
    """The user's side of a phone chat: small talk, questions, facts with numbers, a few pastes."""
    rnd = random.Random(seed)
    out: list[str] = []
    for _ in range(turns):
        values = {
            "code": rnd.randint(1000, 9999),
            "code2": rnd.randint(10, 99),
            "name": rnd.choice(NAMES),
            "place": rnd.choice(PLACES),
            "month": rnd.randint(1, 12),
            "day": rnd.randint(1, 28),
            "day2": rnd.randint(1, 28),
            "hour": rnd.randint(1, 12),
            "amount": rnd.randint(5, 300),
            "amount2": rnd.randint(1, 20),
            "flight": rnd.randint(100, 999),
            "seat": f"{rnd.randint(10, 60)}{rnd.choice('ABCDEF')}",
            "nights": rnd.randint(1, 7),
        }
        r = rnd.random()
        if r < 0.35:
            line = rnd.choice(SMALL_TALK)
        elif r < 0.65:
            line = rnd.choice(QUESTIONS)
        elif r < 0.95:
            line = rnd.choice(FACTS)
        else:
            line = PASTE
        out.append(line.format(**values))
    return out


SENTENCES = [
    "네, 알겠어요.",
    "Sure — here's a quick idea.",
    "그 시간이면 길이 조금 막힐 수 있으니 여유 있게 출발하세요.",
    "필요하면 제가 다시 정리해 드릴게요.",
    "One option is to keep it short and friendly.",
    "근처에 조용한 곳이 몇 군데 있어요: 창가 자리가 있는 곳이 좋아요.",
    "I'd suggest checking the weather the day before.",
    "일정은 오전에 이동, 오후에 자유 시간으로 나누면 덜 피곤해요.",
]


def reply_for(question: str) -> str:
    """A deterministic answer of varying length (40 to ~1000 characters)."""
    rnd = random.Random(question)
    n = rnd.choice([1, 2, 3, 4, 5, 6, 8, 12, 20])
    return " ".join(rnd.choice(SENTENCES) for _ in range(n))


def chat_reply(system: Sequence[dict[str, Any]], messages: Sequence[dict[str, Any]]) -> str:
    content = messages[-1]["content"]
    return reply_for(content if isinstance(content, str) else str(content))


def summary_reply(cap: int) -> Any:
    """A fake summarizer model: keeps lines with numbers as facts, newest first within ~80% of the cap."""

    def reply(system: Sequence[dict[str, Any]], messages: Sequence[dict[str, Any]]) -> str:
        text = str(messages[-1]["content"])
        facts: list[str] = []
        for line in text.splitlines():
            line = re.sub(r"^(- |\[[^\]]*\] ?)", "", line.strip())
            if re.search(r"\d", line) and not line.startswith(("[", "#")) and line not in facts:
                facts.append(line[:160])
        header_size = sum(len(h) + 8 for h in HEADINGS) + 40
        kept: list[str] = []
        size = header_size
        for fact in reversed(facts):  # a real model would shorten; this one drops the oldest facts
            if size + len(fact) + 3 > cap * 0.8:
                break
            kept.insert(0, fact)
            size += len(fact) + 3
        body = {h: "없음" for h in HEADINGS}
        body["사용자의 목표"] = "- 일상 비서: 일정, 약속, 여행 준비"
        body["핵심 사실"] = "\n".join(f"- {f}" for f in kept) or "없음"
        return "\n".join(f"## {h}\n{body[h]}" for h in HEADINGS)

    return reply


@dataclass
class Run:
    chars: list[int]
    tokens: list[int]
    verbatim: list[int]
    summarizer_chars: int = 0
    summarizer_calls: int = 0


def request_size(system: Sequence[dict[str, Any]], messages: Sequence[dict[str, Any]]) -> tuple[int, int]:
    texts = [str(b.get("text", "")) for b in system]
    for m in messages:
        content = m["content"]
        texts.append(content if isinstance(content, str) else " ".join(str(b.get("text", "")) for b in content))
    return sum(len(t) for t in texts), sum(estimate_tokens(t) for t in texts)


async def play(lines: list[str], data_dir: Path, *, memory: bool, budget: Budget) -> Run:
    clock = [datetime(2026, 11, 29, 0, 0, tzinfo=UTC)]

    def now() -> datetime:
        clock[0] += timedelta(seconds=30)
        return clock[0]

    chat_model = FakeModel([chat_reply] * len(lines), name="bench-chat")
    summary_model = FakeModel([summary_reply(budget.max_summary_chars)] * (len(lines) * 4), name="bench-summary")
    if memory:
        assistant = Assistant(
            transcript=Transcript(data_dir),
            model=chat_model,
            now=now,
            summarizer=Summarizer(summary_model, max_chars=budget.max_summary_chars),
            summary_budget=budget,
        )
    else:
        assistant = Assistant(
            transcript=Transcript(data_dir), model=chat_model, now=now, max_messages=10**6, max_chars=10**9
        )
    run = Run([], [], [])
    for line in lines:
        await assistant.ask(CHAT, line)
        await assistant.maintain(CHAT)
        call = chat_model.calls[-1]
        chars, tokens = request_size(call.system, call.messages)
        run.chars.append(chars)
        run.tokens.append(tokens)
        run.verbatim.append(len(call.messages) - 1)
    for call in summary_model.calls:
        run.summarizer_chars += request_size(call.system, call.messages)[0]
    run.summarizer_calls = len(summary_model.calls)
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=400)
    args = parser.parse_args(argv)
    lines = conversation(args.turns)
    budget = Budget()  # the defaults (the same as the settings' defaults)
    with tempfile.TemporaryDirectory() as tmp:
        naive = asyncio.run(play(lines, Path(tmp) / "naive", memory=False, budget=budget))
        mem = asyncio.run(play(lines, Path(tmp) / "memory", memory=True, budget=budget))

    print(
        f"{args.turns} turns; budget: trigger {budget.trigger_messages} messages / {budget.trigger_chars} chars / "
        f"{budget.trigger_tokens} tokens, keep {budget.keep_messages}, summary cap {budget.max_summary_chars} chars"
    )
    print(f"{'turn':>5} | {'naive chars':>11} {'tokens':>7} | {'memory chars':>12} {'tokens':>7} {'verbatim':>8}")
    for i in range(len(lines)):
        if (i + 1) % 50 == 0 or i == 0:
            print(
                f"{i + 1:>5} | {naive.chars[i]:>11,} {naive.tokens[i]:>7,} | "
                f"{mem.chars[i]:>12,} {mem.tokens[i]:>7,} {mem.verbatim[i]:>8}"
            )
    longest_question = max(len(x) for x in lines)
    system_chars = len(PERSONA) + len(time_line(datetime.now(UTC), "Asia/Seoul"))
    bound_chars = (
        system_chars + len(SUMMARY_HEADER) + budget.max_summary_chars + budget.trigger_chars + longest_question
    )
    bound_tokens = (
        estimate_tokens(PERSONA)
        + 40
        + budget.max_summary_chars
        + budget.trigger_tokens
        + max(estimate_tokens(x) for x in lines)
    )
    last = slice(max(0, len(lines) - 100), len(lines))
    peak_chars, peak_tokens = max(mem.chars[last]), max(mem.tokens[last])
    print(
        f"memory, last 100 turns: max {peak_chars:,} chars (bound {bound_chars:,}), "
        f"max {peak_tokens:,} est. tokens (bound {bound_tokens:,}); max verbatim messages {max(mem.verbatim)}"
    )
    total_naive, total_mem = sum(naive.chars), sum(mem.chars)
    tok_naive, tok_mem = sum(naive.tokens), sum(mem.tokens)
    ratio, tok_ratio = total_mem / total_naive, tok_mem / tok_naive
    with_summaries = (total_mem + mem.summarizer_chars) / total_naive
    print(f"total input chars:  naive {total_naive:,}  memory {total_mem:,}  ratio {ratio:.1%}")
    print(f"total est. tokens:  naive {tok_naive:,}  memory {tok_mem:,}  ratio {tok_ratio:.1%}")
    print(
        f"summarizer: {mem.summarizer_calls} calls, {mem.summarizer_chars:,} input chars; "
        f"memory incl. summarizer / naive = {with_summaries:.1%}"
    )
    failures = []
    if peak_chars > bound_chars or peak_tokens > bound_tokens:
        failures.append("the memory's request size does not stay under its bound")
    if ratio >= 0.10 or tok_ratio >= 0.10:
        failures.append("the memory's total is not under 10% of the naive total")
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    if not failures:
        print("OK: plateau under the bound, total under 10% of naive")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
