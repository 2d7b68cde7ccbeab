"""The summarizer: asks Claude to fold newly evicted messages into the chat's summary memo.

memory/ calls it as a plain async callable ``(previous summary, evicted messages) -> text``
(see ``memory.summary.Summarize``); with no messages it condenses a memo that grew too long.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.claude.model import Model, ModelError, Usage
from memory.content import display_text, shorten
from memory.memo import HEADINGS, NOTHING

SYSTEM_MARK = "[SUMMARIZER / 대화 요약기]"
"""First line of the summarizer's system prompt (also how test servers recognise it)."""

MESSAGE_CHARS = 6000
"""Longest single message passed to the summarizer (the middle of longer ones is cut)."""

ROLE_LABEL = {"user": "사용자", "assistant": "비서"}


def memo_template() -> str:
    return "\n".join(f"## {h}\n…" for h in HEADINGS)


def system_prompt(max_chars: int) -> str:
    return f"""\
{SYSTEM_MARK}
너는 대화 기록을 인수인계 메모로 압축하는 요약기다. 이 메모는 앞으로 비서가 사용자와의 예전 대화를
대신하는 유일한 기억이 된다. 메모에 없는 것은 비서가 영영 모른다.
You compress a chat record into a handover memo; it is the assistant's only memory of the older conversation.

규칙 / Rules:
1. 입력은 [이전 요약]과 [새로 밀려난 대화]뿐이다. 이전 요약의 내용을 모두 보존하면서 새 대화의 내용을 합쳐
   새 메모 하나를 쓴다. 이전 요약에 있던 사실을 잃지 마라.
2. 반드시 아래 양식 그대로, 이 순서의 제목(## …)을 모두 쓴다. 해당 없는 칸은 "{NOTHING}"이라고 쓴다.
3. 숫자는 반드시 그대로 남긴다: 날짜·시간, 금액, 개수·인원, 번호·코드·비밀번호·주소, 버전, 수치.
   한 글자도 바꾸지 말고 원문 그대로 옮겨라.
4. 사람: 이름, 관계, 인원(어른 둘, 아이 둘 같은)을 남긴다.
5. 정한 것(결정)과 사용자의 선호·제약을 남긴다. 이미 정한 것을 다시 묻지 않도록.
6. 바뀐 것: 예전 계획이 새 계획으로 바뀌었으면 "이전 → 현재"로 적고, 현재 것을 분명히 한다.
7. 추측·창작 금지. 기록에 있는 사실만 쓴다. 모르면 쓰지 않는다.
8. 인사말·잡담·반복은 버린다. 사용자가 쓴 언어로 쓴다. 전체 {max_chars}자 이내.
   Keep every number, name, code and decision exactly; never guess; at most {max_chars} characters.

양식 / Format:
{memo_template()}
"""


def _when(at: Any) -> str:
    if not isinstance(at, str) or not at:
        return ""
    try:
        return datetime.fromisoformat(at).strftime("%Y-%m-%d %H:%M") + " "
    except ValueError:
        return ""


def format_messages(messages: Sequence[Mapping[str, Any]]) -> str:
    """The evicted messages as plain lines: ``[date time] 사용자: text``."""
    lines: list[str] = []
    for m in messages:
        role = ROLE_LABEL.get(str(m.get("role")), str(m.get("role")))
        text = shorten(display_text(m.get("content")), MESSAGE_CHARS)
        lines.append(f"[{_when(m.get('at'))}{role}] {text}")
    return "\n".join(lines)


def summarizer_input(previous: str | None, messages: Sequence[Mapping[str, Any]], max_chars: int) -> str:
    """The user message the summarizer receives: the previous memo and the evicted messages only."""
    prev = previous.strip() if previous and previous.strip() else f"({NOTHING} — 첫 요약 / first summary)"
    if not messages:
        return (
            f"[이전 요약 / previous summary]\n{prev}\n\n"
            f"이 메모가 너무 깁니다. 같은 양식과 제목으로 {max_chars}자 이내로 줄이세요. 숫자·이름·코드·결정·바뀐 것은 "
            "그대로 남기고, 덜 중요한 설명과 끝난 일을 줄이세요.\n"
            f"The memo is too long: condense it to at most {max_chars} characters, same headings, keeping every "
            "number, name, code and decision."
        )
    return (
        f"[이전 요약 / previous summary]\n{prev}\n\n"
        f"[새로 밀려난 대화 / newly evicted messages]\n{format_messages(messages)}\n\n"
        "위 두 가지를 합쳐 양식대로 새 메모를 쓰세요. 메모만 쓰세요. / Write the merged memo only."
    )


class Summarizer:
    """A ``memory.summary.Summarize`` callable backed by a ``Model``."""

    def __init__(
        self,
        model: Model,
        *,
        max_chars: int = 2500,
        max_tokens: int = 2048,
        on_usage: Callable[[Usage, str], None] | None = None,
    ) -> None:
        self.model = model
        self.max_chars = max_chars
        self.max_tokens = max_tokens
        self.on_usage = on_usage  # (usage, model) of every summarizer call, for cost accounting
        # before every call: holds the payer's token budget (returns the release) or raises ModelError("limit")
        self.before_call: Callable[[Mapping[str, Any]], Awaitable[Callable[[], None]]] | None = None

    @property
    def name(self) -> str:
        return self.model.name

    async def __call__(self, previous: str | None, messages: list[dict[str, Any]]) -> str:
        request: dict[str, Any] = {
            "system": [{"type": "text", "text": system_prompt(self.max_chars)}],
            "messages": [{"role": "user", "content": summarizer_input(previous, messages, self.max_chars)}],
            "max_tokens": self.max_tokens,
        }
        release = await self.before_call(request) if self.before_call is not None else None
        try:
            try:
                reply = await self.model.complete(**request)
            except ModelError as e:
                if e.reply is not None and self.on_usage is not None:  # billed although unusable (a refusal)
                    self.on_usage(e.reply.usage, e.reply.model or self.model.name)
                raise
            if self.on_usage is not None:
                self.on_usage(reply.usage, reply.model or self.model.name)
        finally:
            if release is not None:
                release()
        return reply.text
