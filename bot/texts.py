"""The bot's own user-facing texts, in Korean (default) and English."""

from __future__ import annotations

from typing import Any

TEXTS: dict[str, dict[str, str]] = {
    "error.rate_limit": {
        "ko": "⚠️ 요청이 많아 지금은 답할 수 없어요. 잠시 후 다시 보내 주세요. (저장된 내용은 그대로예요)",
        "en": "⚠️ Too many requests right now. Please try again in a moment. (Nothing was lost.)",
    },
    "error.overloaded": {
        "ko": "⚠️ Claude 서버가 혼잡해요. 잠시 후 다시 보내 주세요.",
        "en": "⚠️ Claude is overloaded. Please try again in a moment.",
    },
    "error.auth": {
        "ko": "⚠️ Anthropic API 키가 거부됐어요. 봇 관리자에게 알려 주세요.",
        "en": "⚠️ The Anthropic API key was rejected. Please tell the bot's admin.",
    },
    "error.timeout": {
        "ko": "⚠️ 답이 너무 오래 걸려 중단했어요. 다시 보내 주세요.",
        "en": "⚠️ The answer took too long and was stopped. Please send it again.",
    },
    "error.connection": {
        "ko": "⚠️ Claude 에 연결하지 못했어요. 잠시 후 다시 보내 주세요.",
        "en": "⚠️ Could not reach Claude. Please try again in a moment.",
    },
    "error.bad_request": {
        "ko": "⚠️ 요청이 거부됐어요 (너무 길거나 형식 문제). 다르게 물어봐 주세요.",
        "en": "⚠️ The request was rejected (too long or malformed). Please rephrase.",
    },
    "error.server": {
        "ko": "⚠️ Claude 쪽에서 오류가 났어요. 다시 보내 주세요.",
        "en": "⚠️ Claude returned an error. Please send it again.",
    },
    "error.empty": {
        "ko": "⚠️ 빈 답이 왔어요. 다시 보내 주세요.",
        "en": "⚠️ The answer was empty. Please send it again.",
    },
    "error.internal": {
        "ko": "⚠️ 처리 중 오류가 났어요. 다시 보내 주세요.",
        "en": "⚠️ Something went wrong. Please send it again.",
    },
    "not_allowed": {
        "ko": "🔒 이 봇은 허용된 사용자만 쓸 수 있어요.\n당신의 텔레그램 사용자 ID: {user_id}\n"
        "봇 관리자에게 이 번호를 .env 의 ALLOWED_USERS 에 추가해 달라고 하세요.",
        "en": "🔒 This bot is for allowed users only.\nYour Telegram user id: {user_id}\n"
        "Ask the bot's admin to add it to ALLOWED_USERS in .env.",
    },
    "text_only": {
        "ko": "지금은 글(텍스트) 메시지만 이해할 수 있어요. 내용을 글로 보내 주세요.",
        "en": "I can only read text messages for now. Please send it as text.",
    },
    "retry.nothing": {
        "ko": "다시 물을 질문이 없어요.",
        "en": "There is no question to retry.",
    },
}


def lang_of(language_code: str | None) -> str:
    """Korean by default and for Korean users; English for any other known language."""
    if not language_code or language_code.lower().startswith("ko"):
        return "ko"
    return "en"


def t(key: str, lang: str = "ko", **kwargs: Any) -> str:
    """The text ``key`` in ``lang`` (falls back to Korean), formatted with ``kwargs``."""
    entry = TEXTS[key]
    text = entry.get(lang) or entry["ko"]
    return text.format(**kwargs) if kwargs else text


def error_text(kind: str, lang: str = "ko") -> str:
    key = f"error.{kind}"
    return t(key if key in TEXTS else "error.internal", lang)
