"""The webhook secret: compared in constant time in python-telegram-bot's handler, redacted whatever its length."""

import io
import logging
from types import SimpleNamespace

import pytest
import tornado.web
from telegram.ext._utils.webhookhandler import TelegramHandler

from bot.__main__ import Redact
from bot.tg import webhook

SECRET = "x" * 40


def request(headers: dict[str, str]) -> SimpleNamespace:
    return SimpleNamespace(request=SimpleNamespace(headers=headers), secret_token=SECRET)


def test_the_library_handler_compares_the_secret_with_compare_digest(monkeypatch):
    webhook.install()
    compared: list[tuple[bytes, bytes]] = []
    real = webhook.hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(webhook.hmac, "compare_digest", spy)
    json = {"Content-Type": "application/json"}
    TelegramHandler._validate_post(request({**json, "X-Telegram-Bot-Api-Secret-Token": SECRET}))  # passes
    assert compared == [(SECRET.encode(), SECRET.encode())]
    for headers in (
        {**json, "X-Telegram-Bot-Api-Secret-Token": "x" * 39 + "y"},
        {**json, "X-Telegram-Bot-Api-Secret-Token": SECRET[:5]},
        json,
        {"Content-Type": "text/plain", "X-Telegram-Bot-Api-Secret-Token": SECRET},
    ):
        with pytest.raises(tornado.web.HTTPError) as e:
            TelegramHandler._validate_post(request(headers))
        assert e.value.status_code == 403
    assert len(compared) == 3  # the wrong secrets were compared by compare_digest, never with !=


def test_a_short_secret_is_redacted_too():
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(Redact(["abc", "123456:TOKEN"]))
    log = logging.getLogger("test.redact.short")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("header was abc, token 123456:TOKEN")
    finally:
        log.removeHandler(handler)
    assert "abc" not in out.getvalue() and "TOKEN" not in out.getvalue()
