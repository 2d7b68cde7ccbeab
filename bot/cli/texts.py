"""The terminal chat's own texts (Korean and English), its language, and its wording of errors.

The texts both front ends share (errors, command answers) are in bot/texts.py; these are the ones
only the terminal shows: the banner, /help, /history, /summary, /reset, /retry, cancelling, goodbye.

Language, one rule for everything the terminal prints, start-up messages included (``env_lang``):
``--lang`` (which sets BOT_LANG for the run), else the setting ``BOT_LANG`` (``ko`` or ``en``, from
.env or the environment), else the locale: ``LC_ALL``, ``LC_MESSAGES`` or ``LANG`` (the first one
set) naming Korean gives Korean, naming another language English. A locale that names no language
(unset, ``C``, ``POSIX``, ``C.UTF-8``, the default in containers and over SSH) gives Korean, the
project's default language. Not covered: argparse's ``--help`` and usage errors (English).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from bot.texts import error_text, lang_of, lookup, t

TEXTS: dict[str, dict[str, str]] = {
    "banner": {
        "ko": "Claude 터미널 채팅 · 대화 {chat} · 데이터 {data} · 모델 {model}",
        "en": "Claude terminal chat · chat {chat} · data {data} · model {model}",
    },
    "banner.continue": {
        "ko": "이전 대화를 이어서 해요 (최근 메시지 {n}개를 기억해요).",
        "en": "Continuing the conversation ({n} recent messages in memory).",
    },
    "banner.new": {"ko": "새 대화예요.", "en": "A new conversation."},
    "banner.summary": {
        "ko": "더 오래된 대화는 요약으로 기억해요 (/summary).",
        "en": "Older conversation is remembered as a summary (/summary).",
    },
    "banner.help": {
        "ko": "/help 명령 보기 · /quit 또는 Ctrl-D 로 끝내기",
        "en": "/help for commands · /quit or Ctrl-D to leave",
    },
    "help": {
        "ko": "명령:\n"
        "  /history   다음 질문과 함께 보낼 최근 대화 보기\n"
        "  /summary   오래된 대화의 요약 보기\n"
        "  /search <말>       지난 대화 전체에서 찾기\n"
        "  /memory    기억하고 있는 사실 보기 (새 대화를 시작해도 남아요)\n"
        "  /remember <내용>   사실 하나 기억시키기\n"
        "  /forget <번호>     사실 잊게 하기 (/forget all: 모두, 파일은 보관)\n"
        "  /reminders         예정된 알림 보기 (/reminders cancel <번호>: 취소; 알림은 텔레그램 봇이 보내요)\n"
        "  /model [id]        모델과 그 기능 보기, 다른 모델로 바꾸기 (재시작해도 유지)\n"
        "  /chats [번호|이름]  대화 목록 보기, 다른 대화 이어가기 (보관한 대화도)\n"
        "  /stats     사용량과 예상 비용 (이 대화, 오늘, 이번 달)\n"
        "  /export [md] [파일]  대화 기록 전체(보관·가져온 대화 포함)를 파일로, 없으면 화면으로\n"
        "  /reset     새 대화 시작 (이전 대화는 보관, 지우지 않아요)\n"
        "  /retry     마지막 질문 다시 보내기 (실패·취소한 질문, 아니면 마지막 답을 새로 받기)\n"
        "  /quit      끝내기 (Ctrl-D 도 같아요; 프롬프트에서 Ctrl-C 는 쓰던 줄을 지워요)\n"
        "  /help      이 도움말\n"
        "빈 줄은 무시해요. '/' 로 시작하는 질문은 '//' 로 시작해 보내세요. 답을 받는 중 Ctrl-C 는 그 답만 취소해요.\n"
        "여러 줄 질문: 붙여넣은 글은 통째로 한 질문이에요 (Enter 로 보내요). 직접 칠 때는 줄 끝에 \\ 를 붙이거나, "
        '""" 만 있는 줄로 시작해 """ 로 끝나는 줄까지 쓰세요.',
        "en": "Commands:\n"
        "  /history   show the recent conversation sent with the next question\n"
        "  /summary   show the summary of older conversation\n"
        "  /search <words>    search all earlier conversations\n"
        "  /memory    show the facts remembered about you (kept across /reset)\n"
        "  /remember <text>   make the assistant remember a fact\n"
        "  /forget <number>   make it forget a fact (/forget all: every one; the file is archived)\n"
        "  /reminders         pending reminders (/reminders cancel <number>; the Telegram bot delivers them)\n"
        "  /model [id]        the model and its capabilities; switch to another (kept across restarts)\n"
        "  /chats [n|name]    list the conversations; continue another (archived ones too)\n"
        "  /stats     usage and estimated cost (this conversation, today, this month)\n"
        "  /export [md] [FILE]  the whole history (archived, imported included) to FILE, else to the screen\n"
        "  /reset     start a new conversation (the old one is archived, nothing deleted)\n"
        "  /retry     send the last question again (a failed or cancelled one, else get a new last answer)\n"
        "  /quit      leave (so does Ctrl-D; Ctrl-C at the prompt clears the line)\n"
        "  /help      this help\n"
        "Empty lines are ignored. Start a question that begins with '/' with '//'. "
        "Ctrl-C while an answer arrives cancels just that answer.\n"
        "Multi-line questions: a paste is one question (Enter sends it). When typing, end a line with \\ to go on, "
        'or start with a line of """ and end with a line ending in """.',
    },
    "history.empty": {"ko": "(아직 대화가 없어요)", "en": "(no conversation yet)"},
    "history.header": {
        "ko": "다음 질문과 함께 보낼 최근 대화 (메시지 {n}개):",
        "en": "Recent conversation sent with the next question ({n} messages):",
    },
    "role.user": {"ko": "나", "en": "you"},
    "role.assistant": {"ko": "Claude", "en": "Claude"},
    "summary.none": {
        "ko": "아직 요약이 없어요. 대화가 길어지면 오래된 부분이 요약돼요.",
        "en": "No summary yet. Older parts are summarized once the conversation grows.",
    },
    "summary.header": {"ko": "대화 요약:", "en": "Summary:"},
    "reset.done": {
        "ko": "새 대화를 시작해요. 이전 대화는 archive/{name} 으로 보관했어요 (지우지 않았어요).",
        "en": "Started a new conversation. The previous one was archived as archive/{name} (nothing deleted).",
    },
    "reset.empty": {"ko": "이미 새 대화예요.", "en": "This is already a new conversation."},
    "retry.start": {"ko": "↻ 다시 보내는 중: {text}", "en": "↻ Sending again: {text}"},
    "retry.again": {"ko": "↻ 마지막 질문을 다시 보내는 중…", "en": "↻ Sending the last question again…"},
    "retry.hint": {"ko": "(/retry 로 다시 보낼 수 있어요)", "en": "(/retry sends it again)"},
    "cancelled": {
        "ko": "⏹ 답을 취소했어요. /retry 로 다시 보낼 수 있어요.",
        "en": "⏹ Answer cancelled. /retry sends it again.",
    },
    "interrupted": {"ko": "⏹ 중단했어요.", "en": "⏹ Interrupted."},
    "export.written": {
        "ko": "메시지 {n}개를 {path} 에 썼어요.",
        "en": "Wrote {n} messages to {path}.",
    },
    "export.empty": {"ko": "내보낼 메시지가 없어요.", "en": "No messages to export."},
    "unknown": {
        "ko": "모르는 명령이에요: {cmd}. 명령: {commands} (/help)",
        "en": "Unknown command: {cmd}. Commands: {commands} (/help)",
    },
    "bye": {"ko": "안녕히 가세요.", "en": "Bye."},
    # -- conversations (/chats, chat --list, chat -c) --
    "chats.header": {
        "ko": "대화 목록 (최근 순, * 지금 대화; /chats 번호 또는 이름: 이어가기):",
        "en": "Conversations (most recent first, * this one; /chats NUMBER or /chats NAME continues one):",
    },
    "chats.header_list": {
        "ko": "대화 목록 (최근 순; --chat 이름 또는 -c 로 이어가기):",
        "en": "Conversations (most recent first; --chat NAME or -c continues one):",
    },
    "chats.none": {"ko": "아직 대화가 없어요.", "en": "No conversations yet."},
    "chats.archived": {"ko": "보관됨", "en": "archived"},
    "chats.switched": {
        "ko": "대화 {chat} 를 이어가요 (최근 메시지 {n}개를 기억해요).",
        "en": "Now in conversation {chat} ({n} recent messages in memory).",
    },
    "chats.resumed": {
        "ko": "보관했던 대화 {name} 을 대화 {chat} 의 지금 대화로 되살렸어요.",
        "en": "The archived conversation {name} is conversation {chat}'s current one again.",
    },
    "chats.put_aside": {
        "ko": "그 전 대화는 archive/{previous} 로 보관했어요 (지우지 않았어요).",
        "en": "The one before was archived as archive/{previous} (nothing deleted).",
    },
    "chats.unknown": {
        "ko": "그런 대화가 없어요: {name}. /chats 로 목록을 보세요.",
        "en": "No conversation {name}; /chats lists them.",
    },
    "upkeep.finishing": {
        "ko": "기억 정리(색인·요약)를 마저 하는 중이에요… (Ctrl-C: 건너뛰기, 다음에 해요)",
        "en": "Finishing the memory upkeep (index, summary)… (Ctrl-C skips it till next time)",
    },
    # -- start-up: a problem stops the chat, a note is said and the chat starts
    "start.error": {"ko": "오류: {message}", "en": "error: {message}"},
    "start.note": {"ko": "참고: {message}", "en": "note: {message}"},
    # -- reminders (set here, delivered by the Telegram bot) --
    "banner.reminders": {
        "ko": "⏰ 예정된 알림 {n}개 (텔레그램 봇이 보내요):",
        "en": "⏰ {n} pending reminders (the Telegram bot delivers them):",
    },
    "reminders.none_here": {
        "ko": "이 대화는 텔레그램 채팅이 아니라서 알림이 없어요. 알림은 --chat <텔레그램 채팅 ID> 로 맞춰요.",
        "en": "This conversation is not a Telegram chat, so it has no reminders; use --chat <Telegram chat id>.",
    },
}


def text(key: str, lang: str = "ko", **kwargs: Any) -> str:
    """A terminal text in ``lang`` (falls back to Korean), formatted with ``kwargs``."""
    return lookup(TEXTS, key, lang, **kwargs)


LANGS = ("ko", "en")


class LangError(ValueError):
    """BOT_LANG (or --lang) is neither ko nor en."""


def env_lang(env: Mapping[str, str] | None = None) -> str:
    """'ko' or 'en': BOT_LANG when set (LangError when it is neither), else from the locale variables;
    Korean unless another language is named."""
    env = os.environ if env is None else env
    chosen = env.get("BOT_LANG", "").strip().lower()
    if chosen:
        if chosen not in LANGS:
            raise LangError(f"BOT_LANG must be ko or en, got {env.get('BOT_LANG', '').strip()!r}")
        return chosen
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "").strip()
        if value:
            break
    else:
        return "ko"
    if value.split(".")[0].split("@")[0].upper() in ("C", "POSIX"):
        return "ko"
    return lang_of(value)


# -- errors, worded for the terminal -----------------------------------------------------------------

NO_RETRY = frozenset({"auth", "not_found", "permission", "billing", "spend_limit", "spend_cap"})
"""Failures a setting must fix: the terminal names the setting, and /retry would fail the same way."""


def error_line(kind: str, lang: str, *, model: str, env: Mapping[str, str] | None = None) -> str:
    """The one line for a failed answer of ``kind`` in the terminal: the setting to change and how,
    or what happened and that /retry sends the question again."""
    env = os.environ if env is None else env
    base = env.get("ANTHROPIC_BASE_URL", "").strip().rstrip("/")
    if kind == "not_found" and base.endswith("/v1"):
        return t("error.not_found_v1@terminal", lang, url=base)
    parts = urlsplit(base or "https://api.anthropic.com")
    host = f"{parts.scheme}://{parts.netloc}" if parts.netloc else base
    message = error_text(kind, lang, where="terminal", model=model, host=host)
    return message if kind in NO_RETRY else f"{message} {text('retry.hint', lang)}"


# -- /help laid out for the terminal's width -------------------------------------------------------

_HELP_ROW = re.compile(r"^  (/\S+(?: [<\[][^>\]]*[>\]])*)\s{2,}(\S.*)$")


def cell_width(s: str) -> int:
    """Columns ``s`` takes in a terminal: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 0 if unicodedata.combining(c) else 1 for c in s)


def _wrap(words: str, width: int) -> list[str]:
    """``words`` cut at spaces into lines of at most ``width`` columns (a longer word gets a line of its own)."""
    lines: list[str] = []
    line = ""
    for word in words.split():
        candidate = f"{line} {word}" if line else word
        if line and cell_width(candidate) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    if line:
        lines.append(line)
    return lines


def layout_help(help_text: str, width: int) -> str:
    """/help as a table: the commands in one column, their descriptions aligned beside them (by
    display width, so Korean lines up) and wrapped at spaces to ``width``; other lines wrapped too."""
    rows = [_HELP_ROW.match(line) for line in help_text.splitlines()]
    column = max((cell_width(m.group(1)) for m in rows if m), default=0) + 4
    narrow = width - column < 24  # too narrow for two columns: each description under its command
    out: list[str] = []
    for line, m in zip(help_text.splitlines(), rows, strict=True):
        if m is None:
            out.extend(_wrap(line, width) or [""])
            continue
        command, description = m.group(1), m.group(2)
        if narrow:
            out.append(f"  {command}")
            out.extend(f"      {piece}" for piece in _wrap(description, max(width - 6, 20)))
            continue
        pieces = _wrap(description, width - column)
        pad = " " * (column - 2 - cell_width(command))
        out.append(f"  {command}{pad}{pieces[0]}")
        out.extend(" " * column + piece for piece in pieces[1:])
    return "\n".join(out)
