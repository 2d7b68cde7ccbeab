"""The Claude client: streams a Messages API reply and maps failures to ModelError.

It talks to the API over plain HTTP (bot/claude/api.py: headers, retries, errors; bot/claude/accumulate.py:
the stream's events into the response), with no SDK to import: a fresh process's first question costs
what its HTTP request costs.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from bot.claude.accumulate import Accumulator
from bot.claude.api import APIError, Client
from bot.claude.model import CONTEXT_FULL, ModelError, Reply, TextCallback, Usage
from bot.claude.modelinfo import ModelCatalog, ModelInfo, documented_system_messages

log = logging.getLogger(__name__)


ERROR_KINDS = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate_limit",
    "authentication_error": "auth",
    "billing_error": "billing",
    "permission_error": "permission",
    "invalid_request_error": "bad_request",
    "not_found_error": "not_found",
    "request_too_large": "too_large",
    "api_error": "server",
    "timeout_error": "timeout",
}
"""The API's error types (the Claude API errors page; in an HTTP error body or an error event inside a
stream) -> ModelError kinds. A type the page adds later reads as "server" (try again)."""

NO_WEB_FETCH = re.compile(r"^claude-opus-5(-\d{8})?$")
"""Models whose documentation says they take no ``web_fetch`` tool: the Claude Opus 5 migration guide ("web
fetch is not available on Claude Opus 5"). The Models API's ``server_tools`` lists no web fetch capability."""


def takes_server_tool(model: str, tool: Mapping[str, Any]) -> bool:
    """Whether ``model`` takes the tool declaration ``tool`` (all do but web_fetch on NO_WEB_FETCH models, which
    then answer without fetching pages; the declarations stay the same for every request to that model)."""
    return not (tool.get("name") == "web_fetch" and tool.get("type") and NO_WEB_FETCH.match(model))


BY_STATUS = {400: "bad_request", 401: "auth", 402: "billing", 403: "permission", 404: "not_found", 413: "too_large",
             429: "rate_limit", 504: "timeout", 529: "overloaded"}  # fmt: skip

SPEND_LIMIT = "you have reached your specified"
"""A 400 whose message starts so is the organization's or workspace's own spend limit (the errors page: "the API
also returns a 400 when usage reaches an organization or workspace spend limit you set"; the wording, "You have
reached your specified (workspace) API usage limits", is the one public reports quote: the page gives none)."""


def error_kind(e: APIError) -> str:
    """The ModelError kind of a failed call: a timeout or a connection error; an HTTP error by its status; an
    error event inside a stream (which arrives with HTTP 200) by the error type in its body."""
    if e.timeout:
        return "timeout"
    if e.status_code == 0:
        return "connection"
    if e.spend_capped:
        return "spend_cap"
    err = e.error
    kind = BY_STATUS.get(e.status_code) or ERROR_KINDS.get(str(err.get("type", "")))
    if kind == "bad_request" and str(err.get("message", "")).lower().startswith(SPEND_LIMIT):
        return "spend_limit"
    if kind is not None:
        return kind
    return "overloaded" if "overload" in str(e).lower() else "server"


class ClaudeModel:
    """Talks to the Anthropic Messages API (or any compatible endpoint).

    The request shape (effort, thinking) comes from what the Models API says about the model
    (bot/claude/modelinfo.py), read once and kept in ``catalog``. ``purpose`` "answer" sends the
    configured effort and leaves thinking at the model's default; "lowest" (the summarizer)
    asks for the least thinking the model accepts.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: Client | None = None,
        share: ClaudeModel | None = None,
        max_tokens: int = 16384,
        max_retries: int = 2,
        timeout: float = 120.0,
        effort: str = "",
        purpose: str = "answer",
        catalog: ModelCatalog | None = None,
        now: Callable[[], datetime] | None = None,
        follow: ClaudeModel | None = None,
        configured: str | None = None,
    ) -> None:
        self._name = model
        self.configured = configured or model  # ANTHROPIC_MODEL, which a /model choice replaces
        self._follow = follow  # use that model's name (the summarizer follows the chat model's /model switch)
        self.max_tokens = max_tokens
        self.effort = effort
        self.purpose = purpose
        self._client = client
        self._share = share  # use that model's HTTP client (one connection pool, closed once)
        self._options: dict[str, Any] = {
            "api_key": api_key or "", "base_url": base_url, "max_retries": max_retries, "timeout": timeout,
        }  # fmt: skip
        self.catalog = catalog if catalog is not None else (share.catalog if share is not None else ModelCatalog(None))
        self._now = now or (lambda: datetime.now(UTC))
        self._fetching: dict[str, asyncio.Task[ModelInfo]] = {}

    @property
    def name(self) -> str:
        return self._follow.name if self._follow is not None else self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name, self._follow = value, None

    @property
    def client(self) -> Client:
        """The HTTP client of the API, made on first use (or the shared model's)."""
        if self._share is not None:
            return self._share.client
        if self._client is None:
            self._client = Client(**self._options)
        return self._client

    @client.setter
    def client(self, value: Client) -> None:
        self._client, self._share = value, None

    async def aclose(self) -> None:
        """Close the HTTP client if one was made (a shared one is closed by its owner)."""
        if self._share is None and self._client is not None:
            await self._client.aclose()

    # -- the Models API ----------------------------------------------------------------
    async def fetch_info(self, model: str | None = None) -> ModelInfo:
        """``GET /v1/models/{id}`` now, kept in the catalog. Raises ModelError("not_found") for a model
        the endpoint does not know when its Models API lists others; an endpoint without a Models API
        gives ``ModelInfo.unknown`` (kept, so it is not asked again before MAX_AGE)."""
        name = model or self.name
        try:
            data = await self.client.model(name)
        except APIError as e:
            if e.status_code != 404:
                log.warning("Models API: could not read %s (%s); using what is known", name, e)
                return self.catalog.get(name) or ModelInfo.unknown(name)
            if await self._models_api_exists():
                raise ModelError("not_found", f"model {name}: {e}") from e
            info = ModelInfo.unknown(name, self._now())
        else:
            info = ModelInfo.from_api(data, self._now())
            if info.id != name:  # an alias: keep it under the name asked for too
                self.catalog.put(replace(info, id=info.id), key=info.id)
        self.catalog.put(info, key=name)
        return self.catalog.get(name) or info

    async def _models_api_exists(self) -> bool:
        try:
            await self.client.models(limit=1)
            return True
        except APIError:
            return False

    async def info(self, model: str | None = None) -> ModelInfo:
        """What is known about the model: from the catalog, fetched when missing or stale.
        A failure to fetch never costs an answer (the request then uses the API's defaults)."""
        name = model or self.name
        if not self.catalog.stale(name, self._now()):
            return self.catalog.get(name) or ModelInfo.unknown(name)
        task = self._fetching.get(name)
        if task is None:
            task = asyncio.ensure_future(self.fetch_info(name))
            self._fetching[name] = task
            task.add_done_callback(lambda _t: self._fetching.pop(name, None))
        try:
            return await asyncio.shield(task)
        except ModelError:
            return self.catalog.get(name) or ModelInfo.unknown(name)

    async def available(self) -> list[ModelInfo]:
        """Every model the endpoint lists (for /model); [] without a Models API."""
        try:
            entries = await self.client.models(limit=100)
        except APIError as e:
            log.info("Models API: no model list (%s)", e)
            return []
        now = self._now()
        return [ModelInfo.from_api(m, now) for m in entries]

    async def wants_system_messages(self) -> bool:
        """Whether per-turn context goes in a mid-conversation ``role: "system"`` message: only on the
        models whose documentation says they take one, and only where the Models API answers (a
        compatible proxy keeps the layout every model takes)."""
        if not documented_system_messages(self.name):
            return False
        return (await self.info()).known

    # -- the Messages API --------------------------------------------------------------
    async def complete(
        self,
        *,
        system: Sequence[dict[str, Any]],
        messages: Sequence[dict[str, Any]],
        max_tokens: int | None = None,
        on_text: TextCallback | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
        on_tool: TextCallback | None = None,
        allow_search: bool = True,
    ) -> Reply:
        """One streamed response. ``allow_search`` False: the person asking may not search now (the web
        tools stay declared so the cached prefix does not move); a response that starts a web search or
        fetch is cut there and ModelError("search_refused") raised, with the input usage it was billed."""
        info = await self.info()
        extra: dict[str, Any] = info.lowest_shape() if self.purpose == "lowest" else info.answer_shape(self.effort)
        if tools:
            extra["tools"] = [t for t in tools if takes_server_tool(self.name, t)]
        if tool_choice:
            extra["tool_choice"] = dict(tool_choice)
        limit = max_tokens or self.max_tokens
        if info.max_tokens:
            limit = min(limit, info.max_tokens)
        body = {"model": self.name, "max_tokens": limit, "system": list(system), "messages": list(messages), **extra}
        stream = Accumulator()
        try:
            async with self.client.stream(body) as events:
                async for name, data in events:
                    piece = stream.add(name, data)
                    if piece and on_text is not None:
                        await on_text(piece)
                    elif name == "content_block_start":
                        block = data.get("content_block") or {}
                        if block.get("type") == "server_tool_use" and not allow_search:
                            raise _SearchRefused(stream.snapshot)
                        if on_tool is not None and block.get("type") in ("tool_use", "server_tool_use"):
                            await on_tool(str(block.get("name", "")))
            final = stream.message()
        except _SearchRefused as e:
            raise ModelError("search_refused", "a web search was started", reply=e.reply(self.name)) from None
        except APIError as e:
            kind = error_kind(e)
            detail = f"HTTP {e.status_code}: {e.error.get('type', '')}: {e.message}" if e.status_code else str(e)
            if kind == "bad_request" and any(m.get("role") == "system" for m in messages):
                # documented: a system message on a model without them is a 400 invalid_request_error. Which
                # part of a 400 was refused is not told by its type, so the question is asked once more in the
                # layout every model takes (nothing is remembered from the wording)
                raise ModelError("system_messages", detail) from e
            raise ModelError(kind, detail) from e
        blocks = [dict(b) for b in final["content"] if isinstance(b, dict)]
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text").strip()
        usage = _usage(final.get("usage"))  # read first: a refused or empty answer is billed like any other
        stop = final.get("stop_reason")
        reply = Reply(text, usage, str(final.get("model") or self.name), stop, tuple(blocks))
        if stop == "refusal":
            details = final.get("stop_details")
            category = details.get("category") if isinstance(details, dict) else ""
            raise ModelError("refusal", str(category or ""), reply=reply)
        calls = [b for b in blocks if b.get("type") == "tool_use"]
        if not text and not calls and stop not in ("pause_turn", "max_tokens", CONTEXT_FULL):
            raise ModelError("empty", f"stop_reason={stop}", reply=reply)
        return reply


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _usage(u: Any, server: bool = True) -> Usage:
    """The billed usage of a response's ``usage`` object (``server_tool_use``: the web searches and fetches
    Anthropic ran)."""
    u = u if isinstance(u, dict) else {}
    tools = u.get("server_tool_use") if server and isinstance(u.get("server_tool_use"), dict) else {}
    return Usage(
        input_tokens=_count(u.get("input_tokens")),
        output_tokens=_count(u.get("output_tokens")),
        cache_read_tokens=_count(u.get("cache_read_input_tokens")),
        cache_write_tokens=_count(u.get("cache_creation_input_tokens")),
        web_searches=_count(tools.get("web_search_requests")),
        web_fetches=_count(tools.get("web_fetch_requests")),
    )


class _SearchRefused(Exception):
    """A response started a web search its asker may not run: the stream is closed there."""

    def __init__(self, snapshot: dict[str, Any] | None) -> None:
        super().__init__("search refused")
        self.snapshot = snapshot or {}

    def reply(self, name: str) -> Reply:
        """What the cut response was billed so far (``message_start`` carries the input usage)."""
        usage = _usage(self.snapshot.get("usage"), server=False)
        return Reply("", usage, str(self.snapshot.get("model") or name), "search_refused")
