"""Settings from the environment (and a ``.env`` file in the working directory)."""

from __future__ import annotations

import itertools
import math
import os
import re
import sys
import zlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dotenv import load_dotenv

from bot.claude.pricing import Price, parse_prices
from bot.envparse import env_choice, env_int
from bot.tools.web import WebConfigError, WebSettings, web_settings

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_EFFORT = "medium"
"""A chat assistant answers short questions on a phone: Anthropic's guidance for chat and other
latency-sensitive work is to start at medium or low; medium keeps tool use and memory upkeep sound."""
EFFORTS = ("low", "medium", "high", "xhigh", "max")
DEFAULT_MAX_TOKENS = 16384
"""Thinking counts against max_tokens: room for the thinking of a medium-effort turn and a long answer."""
DEFAULT_TELEGRAM_BASE_URL = "https://api.telegram.org/bot"
DEFAULT_DAILY_MESSAGES = 50
DEFAULT_DAILY_TOKENS = 200_000
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# Telegram's rule for setWebhook's secret_token: 1-256 characters A-Z a-z 0-9 _ -; the bot wants 32 at least
WEBHOOK_SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
WEBHOOK_SECRET_MIN = 32
WEBHOOK_SECRET_HOWTO = "generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
WEBHOOK_SECRET_BITS = 96
"""The least estimated strength of a webhook secret (16 random characters of its alphabet)."""


def secret_weakness(secret: str) -> str | None:
    """Why ``secret`` is trivially weak (repeated, patterned, a run of neighbouring characters), or None.

    Its strength is estimated as the smaller of two measures: the characters' Shannon entropy times the
    length (``'a' * 32`` has none), and what zlib cannot squeeze out of it, at 6 bits a byte (a short
    pattern repeated compresses to almost nothing); a string that mostly steps to a neighbouring character
    (``abcdef…``, ``0123…``) is weak whatever they say. A random secret from ``secrets.token_urlsafe(32)``
    measures about 200 bits; ``secrets.token_hex(16)`` about 120.
    """
    if not secret:
        return None
    n = len(secret)
    counts = Counter(secret)
    shannon = -sum(c / n * math.log2(c / n) for c in counts.values()) * n
    squeezed = (len(zlib.compress(secret.encode("utf-8"), 9)) - 10) * 6
    steps = sum(1 for a, b in itertools.pairwise(secret) if abs(ord(a) - ord(b)) <= 1) / max(1, n - 1)
    if steps >= 0.75:
        return "it is mostly a run of neighbouring characters"
    strength = max(0, round(min(shannon, squeezed)))
    if strength < WEBHOOK_SECRET_BITS:
        return f"it has too little variety (about {strength} bits; {WEBHOOK_SECRET_BITS} needed)"
    return None


DISTRIBUTION = "telegram-memory-assistant"  # the name in pyproject.toml


def version_line() -> str:
    """``telegram-memory-assistant 0.1.0 (Python 3.11.2)``: the installed package's version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a checkout without installing it
        number = "unknown (not installed)"
    return f"{DISTRIBUTION} {number} (Python {sys.version.split()[0]})"


class ConfigError(Exception):
    """A setting is missing or malformed; the message is one line for the user."""


@dataclass(frozen=True)
class Settings:
    anthropic_api_key: str
    telegram_bot_token: str = ""
    anthropic_model: str = DEFAULT_MODEL
    telegram_base_url: str = DEFAULT_TELEGRAM_BASE_URL
    anthropic_base_url: str = ""  # ANTHROPIC_BASE_URL, without /v1 ("": Anthropic's, bot/claude/api.py)
    data_dir: Path = Path("data")
    allowed_users: frozenset[int] = field(default_factory=frozenset)
    timezone: str = "Asia/Seoul"
    max_history_messages: int = 20
    max_history_chars: int = 8000
    max_tokens: int = DEFAULT_MAX_TOKENS
    effort: str = DEFAULT_EFFORT  # EFFORT: low, medium, high, xhigh, max (sent where the model accepts it)
    anthropic_max_retries: int = 2
    anthropic_timeout: float = 120.0
    stream_interval: float = 1.0  # seconds between two streamed previews of an answer in one chat
    telegram_rate_factor: float = 1.0  # each chat's message rate × this (1: Telegram's; more: a server without it)
    # summary memory (memory/summary.py): when the unsummarized tail exceeds any trigger,
    # its oldest part is summarized and the newest SUMMARY_KEEP_MESSAGES stay verbatim
    summary_trigger_messages: int = 16
    summary_trigger_chars: int = 6000
    summary_trigger_tokens: int = 3000
    summary_keep_messages: int = 6
    summary_max_chars: int = 2500
    summary_model: str = ""  # empty: the same model as ANTHROPIC_MODEL
    summary_timeout: float = 120.0  # seconds one background compaction may take in all
    recall_turns: int = 5  # old turns brought back automatically per question (0: automatic recall off)
    recall_meaning: bool = True  # recall by meaning beside words (memory.recall.meaning)
    # access and cost (bot/core/access.py, bot/core/limits.py, bot/claude/pricing.py)
    owner_id: int | None = None  # OWNER_ID, else the first id of ALLOWED_USERS, else pairing
    daily_message_limit: int = DEFAULT_DAILY_MESSAGES  # questions a day per user but the owner (0: unlimited)
    daily_token_limit: int = DEFAULT_DAILY_TOKENS  # tokens a day per user but the owner (0: unlimited)
    model_prices: tuple[tuple[str, Price], ...] = ()  # MODEL_PRICES overrides of bot/claude/pricing.py
    # operations (deploy/README.md)
    log_level: str = "INFO"
    webhook_url: str = ""  # empty: long polling
    webhook_secret: str = ""
    webhook_listen: str = "127.0.0.1"
    webhook_port: int = 8080
    heartbeat_file: str = ""  # empty: no heartbeat (the Docker image sets one for its HEALTHCHECK)
    web: WebSettings = field(default_factory=WebSettings)  # web search (bot/tools/web.py)

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 1) -> int:
    return env_int(env, name, default, minimum, ConfigError)


def _float(env: Mapping[str, str], name: str, default: float, minimum: float = 0.0) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
    if value <= 0:
        raise ConfigError(f"{name} must be positive, got {value}")
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    return value


def _on_off(env: Mapping[str, str], name: str, default: bool) -> bool:
    return env_choice(env, name, "on" if default else "off", ("on", "off"), ConfigError) == "on"


def recall_meaning(env: Mapping[str, str]) -> bool:
    """RECALL_MEANING (on/off, default on): the bot's setting, and what ``python -m bot search`` reads."""
    return _on_off(env, "RECALL_MEANING", True)


def _users(raw: str) -> list[int]:
    """The ids of ALLOWED_USERS in the order given (the first one is the owner unless OWNER_ID is set)."""
    ids: list[int] = []
    for part in raw.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        try:
            ids.append(int(part))
        except ValueError:
            raise ConfigError(
                f"ALLOWED_USERS must be numeric Telegram user ids separated by commas, got {part!r}"
            ) from None
    return ids


def _access_settings(env: Mapping[str, str]) -> dict[str, object]:
    users = _users(env.get("ALLOWED_USERS", ""))
    raw_owner = env.get("OWNER_ID", "").strip()
    try:
        owner = int(raw_owner) if raw_owner else (users[0] if users else None)
    except ValueError:
        raise ConfigError(f"OWNER_ID must be a numeric Telegram user id, got {raw_owner!r}") from None
    try:
        prices = parse_prices(env.get("MODEL_PRICES", ""))
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return {
        "allowed_users": frozenset(users),
        "owner_id": owner,
        "daily_message_limit": _int(env, "DAILY_MESSAGE_LIMIT", DEFAULT_DAILY_MESSAGES, minimum=0),
        "daily_token_limit": _int(env, "DAILY_TOKEN_LIMIT", DEFAULT_DAILY_TOKENS, minimum=0),
        "model_prices": tuple(prices.items()),
    }


def load_settings(env: Mapping[str, str] | None = None, *, need_telegram: bool = True, dotenv: bool = True) -> Settings:
    """Build Settings from ``env`` (default: ``os.environ`` after loading ``.env``).

    Raises ConfigError with a one-line message naming what is missing or wrong.
    """
    if env is None:
        if dotenv:
            load_dotenv(Path.cwd() / ".env", override=False)
        env = os.environ
    api_key = env.get("ANTHROPIC_API_KEY", "").strip()
    token = env.get("TELEGRAM_BOT_TOKEN", "").strip()
    missing = [
        n for n, v in (("TELEGRAM_BOT_TOKEN", token if need_telegram else "x"), ("ANTHROPIC_API_KEY", api_key)) if not v
    ]
    if missing:
        raise ConfigError(
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set: "
            f"put {'it' if len(missing) == 1 else 'them'} in .env or the environment (see .env.example)"
        )
    timezone = env.get("TIMEZONE", "").strip() or "Asia/Seoul"
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"TIMEZONE {timezone!r} is not a known time zone (e.g. Asia/Seoul)") from None
    try:
        web = web_settings(env)
    except WebConfigError as e:
        raise ConfigError(str(e)) from None
    return Settings(
        web=web,
        anthropic_api_key=api_key,
        telegram_bot_token=token,
        anthropic_model=env.get("ANTHROPIC_MODEL", "").strip() or DEFAULT_MODEL,
        telegram_base_url=env.get("TELEGRAM_BASE_URL", "").strip() or DEFAULT_TELEGRAM_BASE_URL,
        anthropic_base_url=env.get("ANTHROPIC_BASE_URL", "").strip(),
        data_dir=Path(env.get("DATA_DIR", "").strip() or "data").expanduser(),
        timezone=timezone,
        max_history_messages=_int(env, "MAX_HISTORY_MESSAGES", 20, minimum=2),
        max_history_chars=_int(env, "MAX_HISTORY_CHARS", 8000, minimum=100),
        max_tokens=_int(env, "MAX_TOKENS", DEFAULT_MAX_TOKENS, minimum=256),
        effort=_effort(env),
        anthropic_max_retries=_int(env, "ANTHROPIC_MAX_RETRIES", 2, minimum=0),
        anthropic_timeout=_float(env, "ANTHROPIC_TIMEOUT", 120.0),
        stream_interval=_float(env, "STREAM_INTERVAL", 1.0, minimum=0.05),
        telegram_rate_factor=_float(env, "TELEGRAM_RATE_FACTOR", 1.0, minimum=1.0),
        recall_turns=_int(env, "RECALL_TURNS", 5, minimum=0),
        recall_meaning=recall_meaning(env),
        **_summary_settings(env),
        **_access_settings(env),
        **_ops_settings(env),
    )


def _effort(env: Mapping[str, str]) -> str:
    value = env.get("EFFORT", "").strip().lower() or DEFAULT_EFFORT
    if value not in EFFORTS:
        raise ConfigError(f"EFFORT {value!r} must be one of {', '.join(EFFORTS)}")
    return value


def _summary_settings(env: Mapping[str, str]) -> dict[str, int | float | str]:
    trigger = _int(env, "SUMMARY_TRIGGER_MESSAGES", 16, minimum=4)
    keep = _int(env, "SUMMARY_KEEP_MESSAGES", 6, minimum=2)
    if keep > trigger - 2:
        raise ConfigError(
            f"SUMMARY_KEEP_MESSAGES ({keep}) must be at most SUMMARY_TRIGGER_MESSAGES - 2 ({trigger - 2})"
        )
    return {
        "summary_trigger_messages": trigger,
        "summary_trigger_chars": _int(env, "SUMMARY_TRIGGER_CHARS", 6000, minimum=200),
        "summary_trigger_tokens": _int(env, "SUMMARY_TRIGGER_TOKENS", 3000, minimum=50),
        "summary_keep_messages": keep,
        "summary_max_chars": _int(env, "SUMMARY_MAX_CHARS", 2500, minimum=200),
        "summary_model": env.get("SUMMARY_MODEL", "").strip(),
        "summary_timeout": _float(env, "SUMMARY_TIMEOUT", 120.0, minimum=1.0),
    }


def log_level(raw: str, name: str = "LOG_LEVEL") -> str:
    """A logging level name (DEBUG, INFO, WARNING, ERROR, CRITICAL); empty means INFO."""
    level = raw.strip().upper() or "INFO"
    if level not in LOG_LEVELS:
        raise ConfigError(f"{name} must be one of {', '.join(LOG_LEVELS)}, got {raw.strip()!r}")
    return level


def _ops_settings(env: Mapping[str, str]) -> dict[str, int | str]:
    url = env.get("WEBHOOK_URL", "").strip()
    secret = env.get("WEBHOOK_SECRET", "").strip()
    if url:
        if not url.startswith("https://") or len(url) <= len("https://"):
            raise ConfigError(
                f"WEBHOOK_URL must be an https:// URL (Telegram sends webhooks only over HTTPS), got {url!r}"
            )
        if not secret:
            raise ConfigError(
                f"WEBHOOK_SECRET is not set: it is required with WEBHOOK_URL ({WEBHOOK_SECRET_MIN}-256 characters "
                f"A-Z a-z 0-9 _ -; {WEBHOOK_SECRET_HOWTO})"
            )
    if secret and not WEBHOOK_SECRET_RE.match(secret):
        # never echo the secret itself
        raise ConfigError(
            f"WEBHOOK_SECRET must be {WEBHOOK_SECRET_MIN}-256 characters of A-Z a-z 0-9 _ - (got {len(secret)} "
            f"characters, some not allowed; {WEBHOOK_SECRET_HOWTO})"
        )
    if secret and len(secret) < WEBHOOK_SECRET_MIN:
        raise ConfigError(
            f"WEBHOOK_SECRET is too short: {len(secret)} characters, at least {WEBHOOK_SECRET_MIN} are needed "
            f"(anyone who guesses it can send the bot updates; {WEBHOOK_SECRET_HOWTO})"
        )
    if secret and (weak := secret_weakness(secret)) is not None:
        raise ConfigError(
            f"WEBHOOK_SECRET is too weak: {weak} (anyone who guesses it can send the bot updates; "
            f"{WEBHOOK_SECRET_HOWTO})"
        )
    port = _int(env, "WEBHOOK_PORT", 8080)
    if port > 65535:
        raise ConfigError(f"WEBHOOK_PORT must be at most 65535, got {port}")
    return {
        "log_level": log_level(env.get("LOG_LEVEL", "")),
        "webhook_url": url,
        "webhook_secret": secret,
        "webhook_listen": env.get("WEBHOOK_LISTEN", "").strip() or "127.0.0.1",
        "webhook_port": port,
        "heartbeat_file": env.get("HEARTBEAT_FILE", "").strip(),
    }
