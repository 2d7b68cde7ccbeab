"""Building the system prompt: a stable persona, the summary, and a fresh time line."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

PERSONA = """\
You are a helpful personal assistant that people talk to through Telegram and a terminal.
당신은 텔레그램과 터미널에서 대화하는 친절하고 정확한 개인 비서입니다.

- Answer in the language the user writes in (한국어로 물으면 한국어로 답합니다).
- Be concise; this is a chat on a phone. Use light Markdown (bold, lists, code blocks) only where it helps.
- You remember the conversation: earlier messages of this chat are included below, and older parts
  may be given as a summary. Use the summary as background about the user and the conversation,
  but never invent facts that are in neither the summary nor the messages; if you do not know, say so.
- The current date and time is given in the last system line; use it for anything about "today" or "now".
"""

WEEKDAYS_KO = "월화수목금토일"


def time_line(now: datetime, tz_name: str) -> str:
    """The current time as one Korean sentence, e.g. 지금은 2026년 11월 29일 (일) 23:05 (한국 시각)이다."""
    local = now.astimezone(ZoneInfo(tz_name))
    where = "한국 시각" if tz_name == "Asia/Seoul" else f"{tz_name} 시각"
    return (
        f"지금은 {local.year}년 {local.month}월 {local.day}일 ({WEEKDAYS_KO[local.weekday()]}) "
        f"{local:%H:%M} ({where})이다."
    )


def build_system(
    now: datetime, tz_name: str, *, summary: str | None = None, persona: str = PERSONA
) -> list[dict[str, Any]]:
    """System blocks: persona (cached), the summary if any, then the time line.

    The time line is volatile, so it comes last, after the cache breakpoint:
    caching never freezes the clock.
    """
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": persona, "cache_control": {"type": "ephemeral"}},
    ]
    if summary:
        blocks.append({"type": "text", "text": f"[이전 대화 요약 / Summary of the earlier conversation]\n{summary}"})
    blocks.append({"type": "text", "text": time_line(now, tz_name)})
    return blocks
