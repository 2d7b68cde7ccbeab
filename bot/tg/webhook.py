"""The webhook's secret header, compared in constant time.

python-telegram-bot's webhook server (``telegram.ext._utils.webhookhandler.TelegramHandler``, 22.x)
checks ``X-Telegram-Bot-Api-Secret-Token`` with ``!=``, whose time depends on how many leading
characters match. ``install()`` replaces that one check with ``hmac.compare_digest``; everything
else (only JSON bodies, 403 without the header or with a wrong one) stays as the library does it.
"""

from __future__ import annotations

import hmac
import logging
from http import HTTPStatus
from typing import Any

import tornado.web
from telegram.ext._utils import webhookhandler

log = logging.getLogger(__name__)


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


def install() -> None:
    """Make the library's webhook handler compare the secret in constant time (idempotent)."""
    handler = webhookhandler.TelegramHandler
    if not hasattr(handler, "_validate_post"):  # the library changed: fail loudly rather than run unchecked
        raise RuntimeError("python-telegram-bot's webhook handler has no _validate_post: check bot/tg/webhook.py")
    handler._validate_post = _validate_post  # type: ignore[method-assign]
