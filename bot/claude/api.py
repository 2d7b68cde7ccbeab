"""The Claude API over plain HTTP (httpx): requests, retries and errors, with no SDK.

The Anthropic SDK took over a second to import (its typed models), which a fresh process answering a
question on a pipe cannot hide; everything the bot sends and reads is plain JSON, so this module talks
to the API itself. What it follows, page by page (platform.claude.com/docs, read December 2026):

- Headers (Versions; Migrating to API version 2026-10-21; Authentication): ``x-api-key`` with the key
  ("pass it in the x-api-key header in direct HTTP requests"), ``anthropic-version`` — "if you call the
  API without an SDK, set the anthropic-version header to 2026-10-21", the version the SDK 2.x the bot
  used before sends —, and ``content-type: application/json``.
- The endpoint: ``ANTHROPIC_BASE_URL`` (no ``/v1``: the paths carry it), else ``https://api.anthropic.com``,
  as the SDK read it.
- Retries, as the SDK's README documents them ("Retries"): connection errors and timeouts, 408, 409, 429
  and >= 500 are retried, ``max_retries`` times (2 by default) with a short exponential backoff; and as its
  source does it (``_base_client.py``: ``_should_retry``, ``_calculate_retry_timeout``): a response header
  ``x-should-retry: true``/``false`` decides first; the wait is ``retry-after-ms`` or ``retry-after``
  (seconds, or an HTTP date) when it is given and at most 60 s, else 0.5 s doubled per retry up to 8 s,
  less up to a quarter of jitter. One rule beyond the SDK's: the usage tier's monthly spend cap (a 429
  with ``error.details.error_code`` ``enforced_spend_limit_reached``) is not retried — the Rate limits
  page: "retrying, including the SDK's automatic retries, fails until access resumes".
  Only a request is retried, never a stream once its 200 arrived (part of the answer may be shown).
- Connections: at most 1000 at once, as the SDK (``DEFAULT_CONNECTION_LIMITS`` in its ``_constants.py``),
  not httpx's 100: with 100, the 101st answer being written at once waited for one of the first hundred
  to end, and while requests queue httpx's pool re-examines every queued request against every connection
  on each request and answer, on the event loop. 20 of them kept open between calls (httpx's default), not
  the SDK's 100: the SDK now runs on httpx2, whose pool is linear; httpcore 1.0's checks every idle
  connection against all the others on each request and answer, and 100 idle connections made the
  throughput bench 1.6 s slower (23.5 against 21.8 s, against a fake that keeps connections open;
  bench/RESULTS.md, issue 34).
- Errors (Claude API errors page): a non-2xx answer carries ``{"type": "error", "error": {"type",
  "message"[, "details"]}, "request_id"}``; ``APIError`` keeps the status and that body as sent.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random as _random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

import httpx

API_VERSION = "2026-10-21"
DEFAULT_BASE_URL = "https://api.anthropic.com"
MAX_RETRY_AFTER = 60.0  # a longer retry-after is not waited for: the exponential backoff applies (SDK 1.x)
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
CONNECTION_LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=20)
"""As many connections at once as the SDK, as many kept open as httpx by default (the module doc says why)."""
SPEND_CAP = "enforced_spend_limit_reached"
"""``error.details.error_code`` of the 429 for the usage tier's monthly spend cap (the Rate limits page)."""


class APIError(Exception):
    """A call that failed. ``status_code``: the HTTP status (0: no answer, a connection error or a
    timeout; 200: an ``error`` event inside a stream that began well); ``body``: the error body as sent
    (a dict, else None); ``timeout``: the call timed out."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int = 0,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout: bool = False,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.headers = dict(headers or {})
        self.timeout = timeout

    @property
    def error(self) -> dict[str, Any]:
        """The body's ``error`` object ({} when there is none)."""
        body = self.body
        if isinstance(body, dict):
            inner = body.get("error")
            return inner if isinstance(inner, dict) else body
        return {}

    @property
    def message(self) -> str:
        return str(self.error.get("message") or self)

    @property
    def spend_capped(self) -> bool:
        """The usage tier's monthly spend cap: ``error.details.error_code`` is SPEND_CAP (the Rate limits page)."""
        details = self.error.get("details")
        return isinstance(details, dict) and details.get("error_code") == SPEND_CAP


def root_url(value: str | None = None) -> str:
    """The API's root URL: ``value``, else ANTHROPIC_BASE_URL, else Anthropic's; without a trailing slash."""
    raw = (value if value is not None else os.environ.get("ANTHROPIC_BASE_URL", "")).strip()
    return (raw or DEFAULT_BASE_URL).rstrip("/")


def headers(api_key: str) -> dict[str, str]:
    """The headers of every request (Authentication; Versions)."""
    return {"x-api-key": api_key, "anthropic-version": API_VERSION, "content-type": "application/json"}


def should_retry(status: int, response_headers: Mapping[str, str], body: Any = None) -> bool:
    """Whether an HTTP error answer is asked again (the SDK's ``_should_retry``, and the spend cap)."""
    header = str(response_headers.get("x-should-retry", "")).lower()
    if header == "true":
        return True
    if header == "false":
        return False
    if APIError("", body=body).spend_capped:
        return False
    return status in (408, 409, 429) or status >= 500


def retry_after(response_headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, else ``retry-after`` in seconds or as an HTTP
    date), or None when it does not say."""
    try:
        return float(response_headers["retry-after-ms"]) / 1000
    except (KeyError, TypeError, ValueError):
        pass
    value = response_headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    return None if parsed is None else float(email.utils.mktime_tz(parsed) - now())


def retry_delay(
    retry: int, response_headers: Mapping[str, str] | None = None, random: Callable[[], float] = _random.random
) -> float:
    """The wait before retry number ``retry`` (0 for the first)."""
    asked = retry_after(response_headers or {})
    if asked is not None and 0 < asked <= MAX_RETRY_AFTER:
        return asked
    delay = min(INITIAL_RETRY_DELAY * 2.0 ** min(retry, 1000), MAX_RETRY_DELAY)
    return delay * (1 - 0.25 * random())


Sleep = Callable[[float], Awaitable[None]]


class Client:
    """An HTTP client of the Claude API (one connection pool; ``aclose`` ends it).

    ``sleep`` and ``random`` are the retry waits' (tests pass their own: no clock is read).
    ``transport`` replaces the network (an ``httpx.AsyncBaseTransport``).
    """

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = _random.random,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = root_url(base_url)
        self.max_retries = max_retries
        self.timeout = timeout
        self._headers = headers(api_key)
        self._sleep = sleep
        self._random = random
        self._transport = transport
        self._http: httpx.AsyncClient | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(
                base_url=self.base_url, headers=self._headers, timeout=httpx.Timeout(self.timeout),
                transport=self._transport, limits=CONNECTION_LIMITS,
            )  # fmt: skip
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def _send(self, method: str, path: str, *, params: Any = None, body: Any = None) -> httpx.Response:
        """The response of the first attempt that is not retried (a 2xx one is open: the caller reads and
        closes it); an error answer, a connection error or a timeout past the retries raises APIError."""
        content = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        retry = 0
        while True:
            try:
                request = self.http.build_request(method, path, params=params, content=content)
                response = await self.http.send(request, stream=True)
            except httpx.TransportError as e:  # a connection error or a timeout (a TimeoutException)
                if retry >= self.max_retries:
                    timeout = isinstance(e, httpx.TimeoutException)
                    what = "request timed out" if timeout else "connection error"
                    raise APIError(f"{what} ({type(e).__name__}: {e})", timeout=timeout) from e
                wait = retry_delay(retry, None, self._random)
            else:
                if response.is_success:
                    return response
                try:
                    raw = await response.aread()
                except httpx.HTTPError:
                    raw = b""
                finally:
                    await response.aclose()
                error = _error_answer(response, raw)
                if retry >= self.max_retries or not should_retry(error.status_code, error.headers, error.body):
                    raise error
                wait = retry_delay(retry, error.headers, self._random)
            retry += 1
            await self._sleep(wait)

    async def get(self, path: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``GET path`` as JSON (retried as above)."""
        response = await self._send("GET", path, params=dict(params or {}))
        try:
            raw = await response.aread()
        except httpx.TimeoutException as e:
            raise APIError("timed out reading the answer", timeout=True) from e
        except httpx.HTTPError as e:
            raise APIError(f"connection error reading the answer ({type(e).__name__})") from e
        finally:
            await response.aclose()
        return _object(raw, response.status_code)

    async def model(self, model_id: str) -> dict[str, Any]:
        """``GET /v1/models/{model_id}`` (the Models API): the model's entry as sent."""
        return await self.get(f"/v1/models/{quote(model_id, safe='')}")

    async def models(self, limit: int = 20) -> list[dict[str, Any]]:
        """The first page of ``GET /v1/models?limit=`` (newest first): its ``data`` entries as sent."""
        page = await self.get("/v1/models", {"limit": limit})
        data = page.get("data")
        return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []

    @asynccontextmanager
    async def stream(self, body: Mapping[str, Any]) -> AsyncIterator[AsyncIterator[tuple[str, dict[str, Any]]]]:
        """``POST /v1/messages`` with ``stream: true``: the server-sent events as (name, data) pairs.
        A read that fails or times out mid-stream raises APIError (not retried)."""
        response = await self._send("POST", "/v1/messages", body={**body, "stream": True})
        try:
            kind = response.headers.get("content-type", "")
            if not kind.startswith("text/event-stream"):
                raise APIError(f"the answer is not an event stream ({kind or 'no content-type'})", status_code=200)
            yield _events(response)
        finally:
            await response.aclose()


def call(
    method: str,
    path: str,
    *,
    api_key: str,
    base_url: str | None = None,
    timeout: float = 30.0,
    body: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One request, answered synchronously and never retried (the doctor's checks): the JSON answer.
    An error answer, a connection error or a timeout raises APIError."""
    content = None if body is None else json.dumps(body, ensure_ascii=False).encode()
    try:
        response = httpx.request(
            method, root_url(base_url) + path, headers=headers(api_key), content=content, timeout=timeout
        )
    except httpx.TimeoutException as e:
        raise APIError(f"request timed out ({type(e).__name__})", timeout=True) from e
    except httpx.HTTPError as e:
        raise APIError(f"connection error ({type(e).__name__})") from e
    if not response.is_success:
        raise _error_answer(response, response.content)
    return _object(response.content, response.status_code)


def _object(raw: bytes, status: int) -> dict[str, Any]:
    """A 2xx answer's JSON object (else APIError: the endpoint is not the API it should be)."""
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise APIError("the answer is not JSON", status_code=status) from e
    if not isinstance(data, dict):
        raise APIError("the answer is not a JSON object", status_code=status)
    return data


def _error_answer(response: httpx.Response, raw: bytes) -> APIError:
    try:
        body: Any = json.loads(raw) if raw else None
    except ValueError:
        body = None
    error = APIError("", body=body).error
    message = str(error.get("message") or raw[:200].decode("utf-8", "replace") or response.reason_phrase)
    return APIError(message, status_code=response.status_code, body=body, headers=response.headers)


async def _events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    try:
        async for name, data in sse(lines(response.aiter_bytes())):
            try:
                parsed = json.loads(data)
            except ValueError as e:
                raise APIError(f"a {name or 'message'} event that is not JSON: {data[:200]!r}", status_code=200) from e
            if isinstance(parsed, dict):
                yield name or str(parsed.get("type", "")), parsed
    except httpx.TimeoutException as e:
        raise APIError("timed out in the middle of the answer", timeout=True) from e
    except httpx.HTTPError as e:
        raise APIError(f"the connection broke in the middle of the answer ({type(e).__name__})") from e


_EOL = re.compile(rb"\r\n|\r|\n")


async def lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The lines of an event stream, which end at CRLF, LF or CR and nowhere else (HTML Living Standard,
    "Server-sent events": ``end-of-line = ( cr lf / cr / lf )``). Not ``str.splitlines`` (nor httpx's
    ``aiter_lines``, which splits as it does): that also cuts at U+2028, U+0085 and other characters that
    JSON leaves unescaped inside a string, so an answer holding one would break its event in two."""
    buffer = b""
    async for chunk in chunks:
        buffer += chunk
        start = 0  # the lines of a chunk are cut from it in place, the rest kept once
        while (end := _EOL.search(buffer, start)) is not None:
            if end.group() == b"\r" and end.end() == len(buffer):
                break  # a CR that may be the first half of a CRLF: wait for the next chunk
            yield buffer[start : end.start()].decode("utf-8", "replace")
            start = end.end()
        buffer = buffer[start:]
    if buffer:
        yield buffer.removesuffix(b"\r").decode("utf-8", "replace")


async def sse(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """Server-sent events from the lines of a ``text/event-stream`` (HTML Living Standard, "Server-sent
    events", event stream interpretation): ``event:`` names the event, ``data:`` lines are joined with
    newlines, a blank line dispatches it, ``:`` starts a comment, one space after the colon is dropped;
    an event without data is not dispatched, nor one left unfinished when the stream ends."""
    name, data = "", []
    async for line in lines:
        if not line:
            if data:
                yield name, "\n".join(data)
            name, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
