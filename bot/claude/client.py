"""The Claude client: streams a Messages API reply and maps failures to ModelError.

The Anthropic SDK takes over a second to import, so it is imported when the client is
first needed (the first question), not at start: the terminal shows its prompt and the bot
polls Telegram at once. ``prewarm()`` imports it in a background thread meanwhile, then builds what
the SDK builds on its first use (``warm_sdk``, offline) so the first answer does not pay for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.claude.model import CONTEXT_FULL, ModelError, Reply, TextCallback, Usage
from bot.claude.modelinfo import ModelCatalog, ModelInfo

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

log = logging.getLogger(__name__)


_sdk_loaded = threading.Event()


def import_sdk() -> None:
    """Import the Anthropic SDK and its HTTP library (slow: run it in a thread)."""
    importlib.import_module("anthropic")
    importlib.import_module("httpx2")
    _sdk_loaded.set()


_WARM_EVENTS = (
    ("message_start", {"type": "message_start", "message": {"id": "msg_warm", "type": "message", "role": "assistant",
        "model": "warm", "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "."}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 1}}),
    ("message_stop", {"type": "message_stop"}),
)  # fmt: skip
"""A streamed answer of one word, as the Messages API sends it (for ``warm_sdk``)."""


def warm_sdk() -> None:
    """Build what the SDK builds on its first use and then keeps (the pydantic schemas of a Models API
    entry, the type adapters of the stream events: a few hundred ms of CPU on the first answer), offline:
    one Models API read and one streamed answer from canned responses in memory, nothing sent anywhere."""
    import json

    import httpx2
    from anthropic import AsyncAnthropic

    sse = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in _WARM_EVENTS).encode()
    entry = {"id": "warm", "type": "model", "display_name": "warm", "created_at": "2026-01-01T00:00:00Z"}

    def answer(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.startswith("/v1/models"):
            return httpx2.Response(200, json=entry)
        return httpx2.Response(200, content=sse, headers={"content-type": "text/event-stream"})

    async def read_and_stream() -> None:
        transport = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
        client = AsyncAnthropic(api_key="sk-ant-warm-up", base_url="http://warm.invalid", http_client=transport)
        async with client:
            (await client.models.retrieve("warm")).model_dump(mode="json")
            messages: Any = [{"role": "user", "content": "warm-up"}]
            async with client.messages.stream(model="warm", max_tokens=1, messages=messages) as stream:
                await stream.get_final_message()

    asyncio.run(read_and_stream())
    # what the first real connection imports (an in-memory transport needs none of it): the HTTP/1.1
    # stack under httpx2, the async backend of its sockets, the system's certificate store
    for name in _FIRST_CONNECTION:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


_FIRST_CONNECTION = ("httpcore2", "h11", "anyio._backends._asyncio", "anyio.streams.tls", "truststore")


def _import_and_warm() -> None:
    import_sdk()
    try:
        warm_sdk()
    except Exception:  # only a head start: the first answer builds what this could not
        log.debug("warming the SDK failed", exc_info=True)


def prewarm() -> threading.Thread:
    """Import the Anthropic SDK in a daemon thread, so the first question does not wait for it, and then
    build what it builds on first use (``warm_sdk``)."""
    thread = threading.Thread(target=_import_and_warm, name="import-anthropic", daemon=True)
    thread.start()
    return thread


async def load_sdk() -> None:
    """Make sure the SDK is imported without blocking the event loop.

    An ``import anthropic`` on the loop while the prewarm thread is still importing it would wait
    for the import lock and stall every chat; this waits in a worker thread instead (the import
    system lets it finish the import the prewarm thread started, or do it itself).
    """
    if not _sdk_loaded.is_set():
        await asyncio.to_thread(import_sdk)


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
SPEND_CAP = "enforced_spend_limit_reached"
"""``error.details.error_code`` of the 429 for the usage tier's monthly spend cap (the Rate limits page)."""

SYSTEM_ROLE_REFUSED = ("role 'system'", 'role "system"', "system role", "should be 'user' or 'assistant'")
"""How a 400 for a mid-conversation system message on a model without them reads."""


def error_kind(e: Exception) -> str:
    """The ModelError kind of an SDK error: by its HTTP status, or for an error event inside a
    stream (which arrives with HTTP 200) by the error type in its body."""
    status = getattr(e, "status_code", 0)
    body = getattr(e, "body", None)
    err: dict[str, Any] = {}
    if isinstance(body, dict):
        err = body["error"] if isinstance(body.get("error"), dict) else body
    details = err.get("details") if isinstance(err.get("details"), dict) else {}
    if details.get("error_code") == SPEND_CAP:
        return "spend_cap"
    kind = BY_STATUS.get(status) or ERROR_KINDS.get(str(err.get("type", "")))
    if kind == "bad_request" and str(err.get("message", "")).lower().startswith(SPEND_LIMIT):
        return "spend_limit"
    if kind is not None:
        return kind
    text = str(e).lower()
    return "overloaded" if "overload" in text else "server"


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
        client: AsyncAnthropic | None = None,
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
        self._options: dict[str, Any] = {"api_key": api_key, "max_retries": max_retries, "timeout": timeout}
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
    def client(self) -> AsyncAnthropic:
        """The SDK client, made (and the SDK imported) on first use."""
        if self._share is not None:
            return self._share.client
        if self._client is None:
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic(**self._options)
        return self._client

    @client.setter
    def client(self, value: AsyncAnthropic) -> None:
        self._client, self._share = value, None

    async def aclose(self) -> None:
        """Close the HTTP client if one was made (a shared one is closed by its owner)."""
        if self._share is None and self._client is not None:
            await self._client.close()

    # -- the Models API ----------------------------------------------------------------
    async def fetch_info(self, model: str | None = None) -> ModelInfo:
        """``GET /v1/models/{id}`` now, kept in the catalog. Raises ModelError("not_found") for a model
        the endpoint does not know when its Models API lists others; an endpoint without a Models API
        gives ``ModelInfo.unknown`` (kept, so it is not asked again before MAX_AGE)."""
        await load_sdk()
        import anthropic

        name = model or self.name
        try:
            data = await self.client.models.retrieve(name)
        except anthropic.NotFoundError as e:
            if await self._models_api_exists():
                raise ModelError("not_found", f"model {name}: {e}") from e
            info = ModelInfo.unknown(name, self._now())
        except (anthropic.APIStatusError, anthropic.APIConnectionError) as e:
            log.warning("Models API: could not read %s (%s); using what is known", name, e)
            return self.catalog.get(name) or ModelInfo.unknown(name)
        else:
            info = ModelInfo.from_api(data.model_dump(mode="json"), self._now())
            if info.id != name:  # an alias: keep it under the name asked for too
                self.catalog.put(replace(info, id=info.id), key=info.id)
        self.catalog.put(info, key=name)
        return self.catalog.get(name) or info

    async def _models_api_exists(self) -> bool:
        import anthropic

        try:
            await self.client.models.list(limit=1)
            return True
        except (anthropic.APIStatusError, anthropic.APIConnectionError):
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
        await load_sdk()
        import anthropic

        try:
            page = await self.client.models.list(limit=100)
        except (anthropic.APIStatusError, anthropic.APIConnectionError) as e:
            log.info("Models API: no model list (%s)", e)
            return []
        now = self._now()
        return [ModelInfo.from_api(m.model_dump(mode="json"), now) for m in page.data]

    async def wants_system_messages(self) -> bool:
        """Whether per-turn context goes in a mid-conversation ``role: "system"`` message (not known:
        try it where the Models API answers; a model that refuses it is remembered)."""
        info = await self.info()
        if info.system_messages is not None:
            return info.system_messages
        return info.known  # an endpoint without the Models API (a proxy) keeps the layout every model takes

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
    ) -> Reply:
        await load_sdk()
        import anthropic
        import httpx2

        info = await self.info()
        extra: dict[str, Any] = info.lowest_shape() if self.purpose == "lowest" else info.answer_shape(self.effort)
        if tools:
            extra["tools"] = [t for t in tools if takes_server_tool(self.name, t)]
        if tool_choice:
            extra["tool_choice"] = dict(tool_choice)
        limit = max_tokens or self.max_tokens
        if info.max_tokens:
            limit = min(limit, info.max_tokens)
        try:
            async with self.client.messages.stream(
                model=self.name,
                max_tokens=limit,
                system=list(system),  # type: ignore[arg-type]
                messages=list(messages),  # type: ignore[arg-type]
                **extra,
            ) as stream:
                async for event in stream:
                    kind = getattr(event, "type", "")
                    if kind == "text" and on_text is not None and event.text:
                        await on_text(event.text)
                    elif kind == "content_block_start" and on_tool is not None:
                        block = event.content_block
                        if getattr(block, "type", "") in ("tool_use", "server_tool_use"):
                            await on_tool(str(getattr(block, "name", "")))
                final = await stream.get_final_message()
        except anthropic.APIStatusError as e:
            kind = error_kind(e)
            sent_system = any(m.get("role") == "system" for m in messages)
            if kind == "bad_request" and sent_system and any(p in str(e) for p in SYSTEM_ROLE_REFUSED):
                self.catalog.learn(self.name, system_messages=False)
                raise ModelError("system_messages", str(e)) from e
            raise ModelError(kind, f"HTTP {e.status_code}: {e}") from e
        except anthropic.APITimeoutError as e:
            raise ModelError("timeout", str(e)) from e
        except anthropic.APIConnectionError as e:
            raise ModelError("connection", str(e)) from e
        except anthropic.APIError as e:  # e.g. an error event the SDK could not attach a status to
            raise ModelError(error_kind(e), str(e)) from e
        except anthropic.AnthropicError as e:
            raise ModelError("server", str(e)) from e
        except httpx2.TimeoutException as e:
            raise ModelError("timeout", str(e) or type(e).__name__) from e
        except httpx2.HTTPError as e:
            raise ModelError("connection", str(e) or type(e).__name__) from e
        if final.stop_reason == "refusal":
            details = getattr(final, "stop_details", None)
            raise ModelError("refusal", str(getattr(details, "category", "") or ""))
        blocks = [b for b in (_block(b) for b in final.content) if b is not None]
        text = "".join(b["text"] for b in blocks if b["type"] == "text").strip()
        calls = [b for b in blocks if b["type"] == "tool_use"]
        if not text and not calls and final.stop_reason not in ("pause_turn", "max_tokens", CONTEXT_FULL):
            raise ModelError("empty", f"stop_reason={final.stop_reason}")
        u = final.usage
        server = getattr(u, "server_tool_use", None)  # web searches and fetches Anthropic ran
        usage = Usage(
            input_tokens=u.input_tokens or 0,
            output_tokens=u.output_tokens or 0,
            cache_read_tokens=getattr(u, "cache_read_input_tokens", None) or 0,
            cache_write_tokens=getattr(u, "cache_creation_input_tokens", None) or 0,
            web_searches=getattr(server, "web_search_requests", None) or 0,
            web_fetches=getattr(server, "web_fetch_requests", None) or 0,
        )
        return Reply(text, usage, final.model, final.stop_reason, tuple(blocks))


def _block(block: Any) -> dict[str, Any] | None:
    """A response content block as a plain dict, exactly as the API sent it (thinking and
    redacted_thinking with their signatures included: they go back verbatim within a tool loop)."""
    kind = getattr(block, "type", "")
    if kind == "text":
        out: dict[str, Any] = {"type": "text", "text": str(block.text)}
        citations = getattr(block, "citations", None)
        if citations:
            out["citations"] = [c.model_dump(mode="json", exclude_none=True) for c in citations]
        return out
    if kind == "tool_use":
        value = block.input if isinstance(block.input, dict) else {}
        return {"type": "tool_use", "id": str(block.id), "name": str(block.name), "input": value}
    if kind == "thinking":
        return {"type": "thinking", "thinking": str(block.thinking or ""), "signature": str(block.signature or "")}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": str(block.data)}
    dump = getattr(block, "model_dump", None)
    return dump(mode="json", exclude_none=True) if callable(dump) else None  # server tool blocks and the like
