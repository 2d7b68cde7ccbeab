"""Web search through Anthropic's server tools ``web_search`` and ``web_fetch``: settings and declarations.

The tools run inside the Messages API request (Anthropic searches and fetches, the reply
carries ``server_tool_use`` and ``web_search_tool_result`` / ``web_fetch_tool_result`` blocks
and text blocks with citations). This module only says *whether* a question may search and
*how* the tools are declared:

- ``WEB_SEARCH=on|off|owner`` (default on): everyone, nobody, or only the owner may search,
  and only when the model supports it (``capabilities.server_tools.web_search.supported`` from
  the Models API; ``supports_web_search`` is the fallback by model name);
- ``WEB_SEARCH_MAX_USES`` searches (and as many page fetches) per model request at most (the API's
  ``max_uses``; a question is one request unless it also uses our tools or is paused; changing it
  within a question would change the tools and so invalidate the turn's signed thinking);
- ``user_location`` from ``TIMEZONE`` (Korea by default), so "weather today" means Seoul;
- optional ``WEB_SEARCH_ALLOWED_DOMAINS`` or ``WEB_SEARCH_BLOCKED_DOMAINS`` (not both: the API
  refuses that);
- ``WEB_FETCH=on|off`` (default on): Claude may read whole pages it found or the user linked;
- each search is priced ``WEB_SEARCH_PRICE`` USD per 1,000 (Anthropic's published $10) and
  counted against ``DAILY_SEARCH_LIMIT`` searches a day per user but the owner.

The declarations are the same on every request where search is allowed, after the client
tools, so the cached prompt prefix (tools → system → messages) never moves between turns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.envparse import env_choice, env_int

SEARCH_TYPE = "web_search_20250305"  # basic search (no dynamic filtering: no code execution needed)
FETCH_TYPE = "web_fetch_20250910"
SEARCH_NAME = "web_search"
FETCH_NAME = "web_fetch"
SERVER_TOOL_NAMES = (SEARCH_NAME, FETCH_NAME)
MODES = ("on", "off", "owner")
DEFAULT_MAX_USES = 3
DEFAULT_DAILY_SEARCHES = 30
SEARCH_PRICE_PER_1000 = 10.0  # USD, platform.claude.com "Pricing" (web search); web fetch costs tokens only
FETCH_MAX_CONTENT_TOKENS = 8000  # a fetched page is cut to this many tokens (a phone answer needs no more)

# what "could not search" looks like in a result block (the documented error codes)
SEARCH_ERRORS = ("too_many_requests", "invalid_input", "invalid_tool_input", "max_uses_exceeded", "query_too_long",
                 "unavailable", "request_too_large")  # fmt: skip

_DOMAIN = re.compile(r"^(?:\*\.)?[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?:/[^\s]*)?$")

# The models that take the web search tool (platform.claude.com "Web search tool", supportedModels),
# used only when the Models API did not say (an endpoint without /v1/models, or before it answered).
_SUPPORTED_PREFIXES = (
    "claude-fable-", "claude-mythos-", "claude-opus-5", "claude-sonnet-5", "claude-haiku-5",
    "claude-haiku-4-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-sonnet-4-6",
    "claude-opus-4-5", "claude-sonnet-4-5",
)  # fmt: skip

# a few time zones whose country and city the zone name does not say
_ZONE_PLACES: dict[str, tuple[str, str, str]] = {  # zone -> (country, region, city)
    "Asia/Seoul": ("KR", "Seoul", "Seoul"),
    "Asia/Tokyo": ("JP", "Tokyo", "Tokyo"),
    "UTC": ("", "", ""),
    "Etc/UTC": ("", "", ""),
}


class WebConfigError(ValueError):
    """A web search setting is malformed; the message is one line for the user."""


def supports_web_search(model: str, capabilities: Mapping[str, Any] | None = None) -> bool:
    """Whether ``model`` accepts the web search tool: the Models API's word when given, else by name."""
    if capabilities is not None:
        server = capabilities.get("server_tools")
        if isinstance(server, Mapping):
            search = server.get("web_search")
            if isinstance(search, Mapping) and "supported" in search:
                return bool(search.get("supported"))
            if "supported" in server and not server.get("supported"):
                return False
    return model.startswith(_SUPPORTED_PREFIXES)


def user_location(timezone: str) -> dict[str, str]:
    """An approximate ``user_location`` for the web search tool from a time zone name.

    ``Asia/Seoul`` → Seoul, KR; ``America/New_York`` → New York (no country); the time zone always.
    Every field is optional (Web search tool page, "Localization"). ``country`` is sent only for the
    few zones in ``_ZONE_PLACES``: the documentation does not list which countries the tool takes, so a
    country guessed from the system's zone table could make every search request a 400.
    """
    location: dict[str, str] = {"type": "approximate"}
    if timezone in _ZONE_PLACES:
        country, region, city = _ZONE_PLACES[timezone]
    else:
        country, region = "", ""
        city = timezone.rsplit("/", 1)[-1].replace("_", " ") if "/" in timezone else ""
    if city:
        location["city"] = city
    if region:
        location["region"] = region
    if country:
        location["country"] = country
    if "/" in timezone or timezone == "UTC":
        location["timezone"] = timezone
    return location


def parse_domains(raw: str, name: str) -> tuple[str, ...]:
    """Domains separated by commas or spaces, without a scheme (``example.com``, ``docs.python.org/3``)."""
    out: list[str] = []
    for part in re.split(r"[,;\s]+", raw.strip()):
        part = part.strip().lower()
        if not part:
            continue
        if "://" in part:
            raise WebConfigError(f"{name}: give domains without http(s)://, e.g. example.com (got {part!r})")
        if not _DOMAIN.match(part):
            raise WebConfigError(f"{name}: {part!r} is not a domain (e.g. example.com)")
        if part not in out:
            out.append(part)
    return tuple(out)


@dataclass(frozen=True)
class WebSettings:
    """The web search settings (from the environment, bot/config.py)."""

    mode: str = "on"  # on | off | owner
    max_uses: int = DEFAULT_MAX_USES
    fetch: bool = True
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    daily_limit: int = DEFAULT_DAILY_SEARCHES  # searches a day per user but the owner (0: unlimited)
    price_per_1000: float = SEARCH_PRICE_PER_1000

    def search_cost(self, searches: int) -> float:
        """USD for ``searches`` searches."""
        return searches * self.price_per_1000 / 1000


def _flag(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    return env_choice(env, name, default, choices, WebConfigError)


def web_settings(env: Mapping[str, str]) -> WebSettings:
    """The web search settings from the environment; WebConfigError with a one-line reason."""

    def whole(name: str, default: int, minimum: int) -> int:
        return env_int(env, name, default, minimum, WebConfigError)

    allowed = parse_domains(env.get("WEB_SEARCH_ALLOWED_DOMAINS", ""), "WEB_SEARCH_ALLOWED_DOMAINS")
    blocked = parse_domains(env.get("WEB_SEARCH_BLOCKED_DOMAINS", ""), "WEB_SEARCH_BLOCKED_DOMAINS")
    if allowed and blocked:
        raise WebConfigError(
            "WEB_SEARCH_ALLOWED_DOMAINS and WEB_SEARCH_BLOCKED_DOMAINS cannot both be set "
            "(the API takes one or the other)"
        )
    raw_price = env.get("WEB_SEARCH_PRICE", "").strip()
    price = SEARCH_PRICE_PER_1000
    if raw_price:
        try:
            price = float(raw_price)
        except ValueError:
            raise WebConfigError(f"WEB_SEARCH_PRICE must be USD per 1,000 searches, got {raw_price!r}") from None
        if not price >= 0 or price == float("inf"):
            raise WebConfigError(f"WEB_SEARCH_PRICE must be a finite number of USD, got {raw_price!r}")
    return WebSettings(
        mode=_flag(env, "WEB_SEARCH", "on", MODES),
        max_uses=whole("WEB_SEARCH_MAX_USES", DEFAULT_MAX_USES, 1),
        fetch=_flag(env, "WEB_FETCH", "on", ("on", "off")) == "on",
        allowed_domains=allowed,
        blocked_domains=blocked,
        daily_limit=whole("DAILY_SEARCH_LIMIT", DEFAULT_DAILY_SEARCHES, 0),
        price_per_1000=price,
    )


@dataclass
class WebSearch:
    """Whether a question may search, and the server tool declarations it is sent with.

    ``model_supports`` is replaced by the Models API's answer once known. ``disabled`` is set
    for the rest of the process when the API says web search is not enabled for the
    organization (then no request carries the tools any more; ``doctor`` reports it).
    """

    settings: WebSettings
    timezone: str = "Asia/Seoul"
    model_supports: bool = True
    disabled: str = ""  # why search was turned off at run time ("" while it works)
    may_search: Callable[[int | None], bool] | None = None  # the front end's per-user check (limits, owner)
    _tools: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._tools = self._declare()

    @property
    def active(self) -> bool:
        """Searching is on for someone: the setting, the model and the organization allow it."""
        return self.settings.mode != "off" and self.model_supports and not self.disabled

    def allowed(self, user_id: int | None) -> bool:
        """May this user's question search now (the setting, the model, the front end's limits)?"""
        if not self.active:
            return False
        return self.may_search(user_id) if self.may_search is not None else True

    def tools(self) -> list[dict[str, Any]]:
        """The server tool declarations (fresh copies; the same content on every call)."""
        return [{k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
                 for k, v in tool.items()} for tool in self._tools]  # fmt: skip

    def _declare(self) -> list[dict[str, Any]]:
        s = self.settings
        domains: dict[str, Any] = {}
        if s.allowed_domains:
            domains["allowed_domains"] = list(s.allowed_domains)
        elif s.blocked_domains:
            domains["blocked_domains"] = list(s.blocked_domains)
        search: dict[str, Any] = {
            "type": SEARCH_TYPE,
            "name": SEARCH_NAME,
            "max_uses": s.max_uses,
            **domains,
            "user_location": user_location(self.timezone),
        }
        tools = [search]
        if s.fetch:
            tools.append(
                {
                    "type": FETCH_TYPE,
                    "name": FETCH_NAME,
                    "max_uses": s.max_uses,
                    **domains,
                    "citations": {"enabled": True},
                    "max_content_tokens": FETCH_MAX_CONTENT_TOKENS,
                }
            )
        return tools


def is_server_tool(tool: Mapping[str, Any]) -> bool:
    """A tool declaration Anthropic runs (it has a versioned ``type``), not one of ours."""
    kind = tool.get("type")
    return isinstance(kind, str) and kind not in ("custom", "")


def search_disabled_error(detail: str) -> bool:
    """Whether a 400's message says the organization may not use web search / web fetch."""
    text = detail.lower()
    return ("web search" in text or "web_search" in text or "web fetch" in text or "web_fetch" in text) and (
        "not enabled" in text or "not available" in text or "disabled" in text or "not allowed" in text
    )
