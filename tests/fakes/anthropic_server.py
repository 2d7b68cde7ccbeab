"""A fake Anthropic Messages API: ``POST /v1/messages`` (plain JSON or SSE) and the Models API.

Tests queue replies (``reply``/``fail``; the scripts are in tests/fakes/scripts.py and
re-exported here: ``Text``, ``ToolCalls``, ``Refusal``, ``CutToolCall``, ``ContextExceeded``,
``PauseTurn``, ``StreamError``, ``Error``; see that module's docstring for their fields) and read
``requests`` to see exactly what the bot sent (``answered``: every message it answered, whole, as a
stream of it adds up to). With the queue empty it answers
``echo: <last user text>``.

Strict like the real API: every request is validated first (tests/fakes/messages_rules.py and,
per model, tests/fakes/model_rules.py: tool_use/tool_result pairing, empty text blocks, more
than 4 cache breakpoints, unknown fields and block types, the 5.5 models' refused shapes —
``thinking: disabled`` or budgets, sampling parameters, prefill, forced tool_choice —,
``max_tokens`` above the model's maximum, a prompt over its context window, …) and a bad one
gets HTTP 400 ``invalid_request_error`` with the real wording; ``rejected`` lists those
messages. Usage applies the prompt-caching rules (tests/fakes/prompt_cache.py), with the
model table's cache minimum (512 tokens on the 5.5 models). Image and PDF blocks are decoded
(tests/fakes/media.py); a body over 32 MB gets the 413.

Models: the table is tests/fakes/models.py (``catalog``; ``add_model(id, like_model=...,
**spec_changes)`` adds a made-up one, e.g. ``add_model("claude-test-1", "claude-sonnet-5-5")``).
``GET /v1/models`` (paginated) and ``GET /v1/models/{id}`` answer ``ModelInfo``
objects with ``max_input_tokens``, ``max_tokens`` and ``capabilities``; an unknown id is a
404 ``not_found_error``. ``models_endpoint = False`` makes both paths a plain 404, like a
compatible endpoint without the Models API; ``models_error = (500, "api_error")``
makes them answer that error (an outage of the Models API alone). ``models`` (a set) restricts ``/v1/messages``
to those names (others: 404 ``model: <id>``). A model name not in the catalog is still
answered on ``/v1/messages``, with none of the per-model rules (the fake's old behaviour).

Thinking (tests/fakes/thinking.py): on requests that think (a 5.x model by default, or
``thinking`` adaptive/enabled) the reply begins with a signed thinking block, streamed as
``content_block_start`` (thinking) / ``thinking_delta`` / ``signature_delta``; a script may add
a ``redacted_thinking`` block. Signatures bind each block to its prefix, so a request that
sends one back is checked: an altered block is a 400 ``Invalid `signature` in `thinking`
block``; a tool continuation without the thinking that came with the tool call is the 400
``Expected `thinking` or `redacted_thinking`, but found ...``; on models with preserved
thinking a changed prefix (system, tools, earlier messages) or a block left out between
others is the 400 ``The block is bound to a different conversation`` (``prefix_mismatch =
"drop"`` drops those blocks silently instead, like accounts created before 31 August 2026).
Leaving out the thinking of completed earlier turns is accepted.

Web search and fetch (tests/fakes/server_tools.py): a ``WebAnswer`` script runs the server tools
as the real API returns them (``server_tool_use``, ``web_search_tool_result`` /
``web_fetch_tool_result`` with encrypted content, text with citations, ``usage.server_tool_use``,
``pause_turn``); ``web`` (``ServerTools``) checks what comes back and plays an organization
without web search (``web.enabled = False``).

Refusals (Streaming refusals page): a user turn containing ``MAGIC_REFUSAL`` (the documented
test string) is refused, and once a ``Refusal`` answered a user turn, any later request that
still carries that turn is refused again ("continued refusals") until the client removes or
changes it (``sticky_refusals = False`` turns this off). ``refused_turns`` holds their digests.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.anthropic_stream import stream
from tests.fakes.http import FakeHTTPServer
from tests.fakes.media import check_documents, check_images
from tests.fakes.messages_rules import MAX_REQUEST_BYTES, InvalidRequest, validate
from tests.fakes.models import MODELS, ModelSpec, like
from tests.fakes.prompt_cache import PromptCache, estimate_tokens
from tests.fakes.scripts import (
    DEFAULT_THINKING,
    ContextExceeded,
    CutToolCall,
    Error,
    PauseTurn,
    Refusal,
    Reply,
    Script,
    StreamError,
    Text,
    ToolCalls,
    build,
    thinking_mode,
)
from tests.fakes.server_tools import ServerTools, WebAnswer
from tests.fakes.thinking import Signer, changed_tool_use, check_thinking, is_thinking, required_thinking, sign_reply

__all__ = [
    "DEFAULT_THINKING",
    "MAGIC_REFUSAL",
    "ContextExceeded",
    "CutToolCall",
    "Error",
    "FakeAnthropic",
    "PauseTurn",
    "Refusal",
    "Script",
    "StreamError",
    "Text",
    "ToolCalls",
    "WebAnswer",
    "check_documents",
    "check_images",
    "last_user_text",
    "tool_results",
]


def last_user_text(body: dict[str, Any]) -> str:
    users = [m for m in body["messages"] if m.get("role") != "system"]  # a system message may follow the question
    content = (users or body["messages"])[-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of the request's last message."""
    content = body["messages"][-1]["content"]
    return (
        [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if isinstance(content, list)
        else []
    )


_REQUEST_IDS = iter(range(1, 1 << 62))
MAGIC_REFUSAL = (
    "ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL_1FAEFB6177B4672DEE07F9D3AFC62588CCD2631EDCF22E8CCC1FB35B501C9C86"
)


def _digest(content: Any) -> str:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _error(kind: str, message: str, details: dict[str, str] | None = None) -> bytes:
    """An error body as the Errors page shows it: ``type``, ``error`` (``type``, ``message``, ``details``
    when there are some), ``request_id``."""
    error: dict[str, Any] = {"type": kind, "message": message}
    if details:
        error["details"] = details
    payload = {
        "type": "error",
        "error": error,
        "request_id": f"req_fake{next(_REQUEST_IDS):06d}",
    }
    return json.dumps(payload).encode()


class FakeAnthropic(FakeHTTPServer):
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.catalog: dict[str, ModelSpec] = {m.id: m for m in MODELS}
        self.cache = PromptCache(clock, minimum=self._cache_minimum)
        self.rejected: list[str] = []  # the 400 messages of invalid requests
        self._tool_ids = 0
        self.requests: list[dict[str, Any]] = []
        self.answered: list[dict[str, Any]] = []  # every message answered, whole (what a stream adds up to)
        self.headers: list[dict[str, str]] = []
        self.script: list[Script] = []
        self.api_key: str | None = None  # set: any other x-api-key is refused with 401, like the real API
        self.models: set[str] | None = None  # set: any other model is refused with 404
        self.models_endpoint = True  # False: no Models API (GET /v1/models* are plain 404s)
        self.model_lookups: list[str] = []  # paths of the GET /v1/models* requests
        # set: GET /v1/models* answer this (status, error type), e.g. (500, "api_error") -- the Errors page's
        # "500 - api_error: An unexpected error has occurred internal to Anthropic's systems"
        self.models_error: tuple[int, str] | None = None
        self.prefix_mismatch = "error"  # or "drop": blocks failing the prefix check are dropped silently
        self.refused: list[dict[str, Any]] = []  # requests answered 401/404 by ``_refusal``
        self.default: Callable[[dict[str, Any]], Reply | Error] = lambda body: Text(f"echo: {last_user_text(body)}")
        self.signer = Signer()
        self.thought_before: dict[str, int] = {}  # tool_use id -> thinking blocks before it in its reply
        self.issued: dict[str, dict[str, Any]] = {}  # tool_use id -> the block as returned (checked when sent back)
        self.paused: set[str] = set()  # server_tool_use ids of pause_turn replies
        self.web = ServerTools()  # web_search / web_fetch (tests/fakes/server_tools.py)
        self.refused_turns: set[str] = set()  # digests of the user turns a Refusal answered
        self.sticky_refusals = True  # a request that still carries a refused turn is refused again
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)

    # -- test API ------------------------------------------------------------
    def reply(self, *items: Script | str) -> None:
        with self._lock:
            self.script.extend(Text(i) if isinstance(i, str) else i for i in items)

    def fail(self, status: int = 500, message: str = "fake failure", type: str = "api_error") -> None:  # noqa: A002
        self.reply(Error(status, type, message))

    def add_model(self, model_id: str, like_model: str = "claude-sonnet-4-6", **changes: Any) -> ModelSpec:
        """Add a made-up model to the catalog, behaving like ``like_model`` (fields of ModelSpec may be changed)."""
        spec = like(model_id, like_model, **changes)
        self.catalog[model_id] = spec
        return spec

    def wait_requests(self, n: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {n} model requests, got {len(self.requests)}")
                self._cond.wait(left)
            return list(self.requests)

    def _cache_minimum(self, model: str) -> int | None:
        spec = self.catalog.get(model)
        return spec.cache_minimum if spec is not None else None

    def _refusal(self, request: BaseHTTPRequestHandler, body: dict[str, Any] | None) -> tuple[int, str, str] | None:
        """(status, error type, message) for a refused key (401) or an unknown model (404), checked
        before the request's content (``validate``), as the real API does; else None."""
        key = request.headers.get("x-api-key") or (request.headers.get("authorization") or "").removeprefix("Bearer ")
        if not key or (self.api_key is not None and key != self.api_key):
            return 401, "authentication_error", "invalid x-api-key"
        if body is not None and self.models is not None and body.get("model") not in self.models:
            return 404, "not_found_error", f"model: {body.get('model')}"
        return None

    # -- HTTP --------------------------------------------------------------------
    def handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        body_raw = self.read_body(request)
        path = urlsplit(request.path).path
        if method == "GET" and (path == "/v1/models" or path.startswith("/v1/models/")):
            self._models_api(request, path)
            return
        if method != "POST" or path != "/v1/messages":
            self.respond(request, 404, _error("not_found_error", "Not Found"))
            return
        if len(body_raw) > MAX_REQUEST_BYTES:
            with self._cond:
                self.rejected.append("Request exceeds the maximum size")
                self._cond.notify_all()
            self.respond(request, 413, _error("request_too_large", "Request exceeds the maximum size"))
            return
        body = json.loads(body_raw)
        refusal = self._refusal(request, body)
        if refusal is not None:
            status, kind, message = refusal
            with self._cond:
                self.refused.append(body)
                self._cond.notify_all()
            self.respond(request, status, _error(kind, message))
            return
        spec = self.catalog.get(str(body.get("model")))
        try:
            validate(body, spec, paused=frozenset(self.paused))
            self.web.check(body, supported=spec is None or spec.web_search, fetch=spec is None or spec.web_fetch)
            check_images(body)
            check_documents(body)
            self._check_thinking(body, spec)
        except InvalidRequest as e:
            with self._cond:
                self.requests.append(body)
                self.headers.append({k.lower(): v for k, v in request.headers.items()})
                self.rejected.append(str(e))
                self._cond.notify_all()
            self.respond(request, 400, _error("invalid_request_error", str(e)))
            return
        with self._cond:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in request.headers.items()})
            paused = self.web.continuation
            refused = self._refused_again(body)
            if refused is None and paused is not None and body["messages"][-1].get("role") == "assistant":
                item: Script | WebAnswer = paused  # a paused web search turn sent back: it goes on
            else:
                item = refused or (self.script.pop(0) if self.script else self.default)
            self._cond.notify_all()
        if callable(item):
            item = item(body)
        last = (body.get("messages") or [{}])[-1]
        if isinstance(item, Refusal) and not refused and isinstance(last, dict) and last.get("role") == "user":
            with self._lock:
                self.refused_turns.add(_digest(last.get("content")))
        if item.delay:
            time.sleep(item.delay)
        if isinstance(item, Error):
            self.respond(request, item.status, _error(item.type, item.message, item.details), headers=item.headers)
            return
        if isinstance(item, StreamError) and not body.get("stream"):
            self.respond(request, 529, _error(item.type, item.message))
            return
        self._answer(request, body, spec, item)

    def _refused_again(self, body: dict[str, Any]) -> Refusal | None:
        """A refusal for a request that carries the magic test string or a refused turn again.

        Streaming refusals: "you must reset the conversation context by removing or updating the
        turn that was refused before continuing. Attempting to continue without resetting will
        result in continued refusals"; ``ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL_…`` in a prompt
        triggers a refusal for testing.
        """
        users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
        if any(MAGIC_REFUSAL in json.dumps(m.get("content"), ensure_ascii=False) for m in users):
            return Refusal()
        if self.sticky_refusals and any(_digest(m.get("content")) in self.refused_turns for m in users):
            return Refusal()
        return None

    def _check_thinking(self, body: dict[str, Any], spec: ModelSpec | None) -> None:
        model = str(body.get("model"))
        problem = required_thinking(body, self.thought_before) or changed_tool_use(body, self.issued)
        if problem is None:
            problem = check_thinking(
                body, self.signer, model=model, preserved=spec is not None and spec.preserved_thinking
            )
            if problem is not None and "different conversation" in problem.message and self.prefix_mismatch == "drop":
                problem = None
        if problem is not None:
            raise InvalidRequest(problem.message)

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            self._tool_ids += 1
            return f"{prefix}_fake{self._tool_ids:04d}"

    def _answer(
        self, request: BaseHTTPRequestHandler, body: dict[str, Any], spec: ModelSpec | None, item: Reply | WebAnswer
    ) -> None:
        mode = thinking_mode(
            body,
            thinks_by_default=spec is not None and spec.thinks_by_default,
            default_display=spec.default_display if spec is not None else "summarized",
        )
        server_use: dict[str, int] = {}
        if isinstance(item, WebAnswer):
            first = not item.issued  # a continued pause_turn does not think again
            built = build(Text("", thinking=item.thinking), body, mode, self._new_id)  # its thinking, if any
            web, stop, server_use = self.web.respond(item, body)
            if item.calls and stop == "end_turn" and (body.get("tool_choice") or {}).get("type") != "none":
                web += [{"type": "tool_use", "id": self._new_id("toolu"), "name": name, "input": value,
                         "caller": {"type": "direct"}} for name, value in item.calls]  # fmt: skip
                stop = "tool_use"
            thought = [b for b in built.content if is_thinking(b)] if first else []
            built.content, built.stop_reason = [*thought, *web], stop
        else:
            built = build(item, body, mode, self._new_id)
        content = sign_reply(built.content, body, self.signer, str(body.get("model")))
        thinking_seen = 0
        for block in content:
            if is_thinking(block):
                thinking_seen += 1
            elif block.get("type") == "tool_use":
                self.issued[block["id"]] = block
                if thinking_seen:
                    self.thought_before[block["id"]] = thinking_seen
            elif block.get("type") == "server_tool_use" and built.stop_reason == "pause_turn":
                self.paused.add(block["id"])
        out_text = "".join(b.get("text", "") + json.dumps(b.get("input", "")) for b in content)
        usage: dict[str, int] = {
            **self.cache.apply(body).as_usage(),
            "output_tokens": built.output_tokens or max(1, estimate_tokens(out_text) + built.thinking_cost),
        }
        if server_use:
            usage["server_tool_use"] = server_use  # type: ignore[assignment]
            # what Claude read of the pages counts as input, uncached (it was not in the request)
            usage["input_tokens"] += estimate_tokens(self.web.read_text(content))
        usage.update(item.usage)
        message = {
            "id": f"msg_fake_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": built.stop_reason,
            "stop_details": built.stop_details,
            "stop_sequence": None,
            "usage": usage,
        }
        with self._cond:
            self.answered.append(json.loads(json.dumps(message)))
            self._cond.notify_all()
        if not body.get("stream"):
            self.respond(request, 200, json.dumps(message).encode())
            return
        stream(
            request,
            message,
            chunk=item.chunk,
            chunk_delay=getattr(item, "chunk_delay", 0.0),
            gate=getattr(item, "gate", None),
            gate_after=getattr(item, "gate_after", 0),
            partial_json=built.partial_json,
            error={"type": item.type, "message": item.message} if isinstance(item, StreamError) else None,
            novel=getattr(item, "novel", False),
            drop=getattr(item, "drop", False),
            cut=getattr(item, "cut", False),
        )

    # -- Models API ----------------------------------------------------------------
    def _models_api(self, request: BaseHTTPRequestHandler, path: str) -> None:
        with self._cond:
            self.model_lookups.append(request.path)
            self._cond.notify_all()
        if not self.models_endpoint:
            self.respond(request, 404, _error("not_found_error", "Not Found"))
            return
        if self.models_error is not None:
            status, kind = self.models_error
            self.respond(request, status, _error(kind, "Internal server error"))
            return
        refusal = self._refusal(request, None)
        if refusal is not None:
            status, kind, message = refusal
            self.respond(request, status, _error(kind, message))
            return
        visible = [m for m in self.catalog.values() if self.models is None or m.id in self.models]
        if path != "/v1/models":
            model_id = path.removeprefix("/v1/models/")
            found = next((m for m in visible if m.id == model_id), None)
            if found is None:
                self.respond(request, 404, _error("not_found_error", f"model: {model_id}"))
                return
            self.respond(request, 200, json.dumps(found.info()).encode())
            return
        query = parse_qs(urlsplit(request.path).query)
        try:
            limit = int(query.get("limit", ["20"])[0])
        except ValueError:
            limit = 0
        if not 1 <= limit <= 1000:
            self.respond(request, 400, _error("invalid_request_error", "limit: Input should be between 1 and 1000"))
            return
        ordered = sorted(visible, key=lambda m: m.created_at, reverse=True)  # newest first
        ids = [m.id for m in ordered]
        start, end = 0, len(ordered)
        if "after_id" in query and query["after_id"][0] in ids:
            start = ids.index(query["after_id"][0]) + 1
        if "before_id" in query and query["before_id"][0] in ids:
            end = ids.index(query["before_id"][0])
            start = max(start, end - limit)
        page = ordered[start:end][:limit]
        payload = {
            "data": [m.info() for m in page],
            "has_more": start + len(page) < end,
            "first_id": page[0].id if page else None,
            "last_id": page[-1].id if page else None,
        }
        self.respond(request, 200, json.dumps(payload).encode())
