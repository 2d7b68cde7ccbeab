"""The webhook server, hardened: the secret compared in constant time, and checked before the body is read.

python-telegram-bot's webhook server (``telegram.ext._utils.webhookhandler``, 22.x) is tornado:
``WebhookServer`` builds an ``HTTPServer`` with tornado's default ``max_body_size`` (100 MB), and its
``TelegramHandler`` is a plain handler, so tornado reads a whole body into memory before any check
runs (three unauthenticated 95 MB POSTs took the bot from 69 MB to 477 MB), and it checks
``X-Telegram-Bot-Api-Secret-Token`` with ``!=``, whose time depends on how many leading characters
match. ``install()``:

- replaces that check with ``hmac.compare_digest`` (everything else as the library does it: only JSON
  bodies, 403 without the header or with a wrong one);
- serves the webhook path with a subclass marked ``tornado.web.stream_request_body``, whose ``prepare()``
  runs once the headers are in, before any byte of the body is read: a wrong or missing secret is
  refused there (403), and so is a ``Content-Length`` over ``MAX_BODY_BYTES`` (413); tornado then closes
  the connection instead of reading the body (``HTTP1Connection.finish``: "Closing the connection is
  the only way to avoid reading the whole input body"). The body is gathered in ``data_received`` and
  cut at the same bound (chunked bodies carry no length);
- builds the server with ``max_body_size=MAX_BODY_BYTES`` (tornado's ``HTTP1ConnectionParameters``),
  so a request to any other path is cut at the same bound, and a slow body times out.

Telegram's updates are a few kilobytes (a message has at most 4,096 characters, a caption 1,024):
1 MB is ample. The proxy in front should cap the body too (docs/operations.md).
"""

from __future__ import annotations

import functools
import hmac
import logging
from http import HTTPStatus
from typing import Any

import tornado.httpserver
import tornado.web
from telegram.ext._utils import webhookhandler

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024
"""The largest update body the webhook reads (Telegram's updates are a few KB)."""
BODY_TIMEOUT = 30.0
"""Seconds a request may take to send its body (tornado's ``body_timeout``; its default is an hour)."""


def secret_matches(sent: str | None, expected: str) -> bool:
    """Whether the header holds the secret; the time taken does not depend on where they differ."""
    return hmac.compare_digest((sent or "").encode("utf-8"), expected.encode("utf-8"))


def _validate_post(self: Any) -> None:
    """Only JSON bodies carrying the secret header (as the library checks), the secret compared in constant time."""
    if self.request.headers.get("Content-Type", None) != "application/json":
        raise tornado.web.HTTPError(HTTPStatus.FORBIDDEN)
    if self.secret_token is not None:
        sent = self.request.headers.get("X-Telegram-Bot-Api-Secret-Token")
        if not sent:
            raise tornado.web.HTTPError(HTTPStatus.FORBIDDEN, reason="Request did not include the secret token")
        if not secret_matches(sent, self.secret_token):
            raise tornado.web.HTTPError(HTTPStatus.FORBIDDEN, reason="Request had the wrong secret token")


def _too_long(headers: Any) -> bool:
    length = headers.get("Content-Length")
    try:
        return length is not None and int(length) > MAX_BODY_BYTES
    except ValueError:  # tornado answers a length that is not a number with 400 itself
        return False


_LIBRARY_HANDLER = webhookhandler.TelegramHandler
_LIBRARY_SERVER = webhookhandler.HTTPServer


@tornado.web.stream_request_body
class GatedHandler(_LIBRARY_HANDLER):  # type: ignore[misc,valid-type]
    """The library's handler, with the secret and the size checked before the body is read."""

    def prepare(self) -> None:
        self._chunks: list[bytes] = []
        self._received = 0
        self._validate_post()  # 403: not a JSON POST, or no / a wrong secret
        if _too_long(self.request.headers):
            raise tornado.web.HTTPError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE)

    def data_received(self, chunk: bytes) -> None:
        self._received += len(chunk)
        if self._received > MAX_BODY_BYTES:  # a chunked body has no Content-Length to refuse up front
            raise tornado.web.HTTPError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
        self._chunks.append(chunk)

    async def post(self) -> None:
        self.request.body = b"".join(self._chunks)
        self._chunks = []
        await super().post()


bounded_server = functools.partial(_LIBRARY_SERVER, max_body_size=MAX_BODY_BYTES, body_timeout=BODY_TIMEOUT)
"""``tornado.httpserver.HTTPServer`` with the body bounded, as ``WebhookServer`` builds it."""


def install() -> None:
    """Harden the library's webhook server: the secret compared in constant time, the secret and the
    size checked before the body is read, every body bounded (idempotent)."""
    handler = _LIBRARY_HANDLER
    # the library changed: fail loudly rather than run unchecked
    if not hasattr(handler, "_validate_post") or _LIBRARY_SERVER is not tornado.httpserver.HTTPServer:
        raise RuntimeError("python-telegram-bot's webhook server changed: check bot/tg/webhook.py")
    handler._validate_post = _validate_post  # type: ignore[method-assign]
    # WebhookAppClass routes the path to the module's TelegramHandler; WebhookServer builds its HTTPServer
    webhookhandler.TelegramHandler = GatedHandler  # type: ignore[misc]
    webhookhandler.HTTPServer = bounded_server  # type: ignore[misc]
