"""Operations settings: webhook (URL, secret, listen address, port), LOG_LEVEL, HEARTBEAT_FILE."""

import hashlib

import pytest

from bot.config import ConfigError, load_settings
from bot.tg.app import webhook_path

BASE = {"TELEGRAM_BOT_TOKEN": "1:abc", "ANTHROPIC_API_KEY": "sk-x"}
STRONG_256 = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(4))  # 256 characters


def test_defaults_are_long_polling():
    s = load_settings(dict(BASE))
    assert s.webhook_url == "" and s.webhook_secret == ""
    assert (s.webhook_listen, s.webhook_port) == ("127.0.0.1", 8080)
    assert s.log_level == "INFO" and s.heartbeat_file == ""


def test_webhook_settings_are_read():
    s = load_settings(
        {
            **BASE,
            "WEBHOOK_URL": "https://bot.example.com/tg/hook",
            "WEBHOOK_SECRET": STRONG_256,  # 256 characters, the most Telegram allows
            "WEBHOOK_LISTEN": "0.0.0.0",
            "WEBHOOK_PORT": "8443",
            "LOG_LEVEL": "warning",
            "HEARTBEAT_FILE": "/tmp/hb",
        }
    )
    assert s.webhook_url == "https://bot.example.com/tg/hook" and len(s.webhook_secret) == 256
    assert (s.webhook_listen, s.webhook_port, s.log_level, s.heartbeat_file) == ("0.0.0.0", 8443, "WARNING", "/tmp/hb")
    assert webhook_path(s.webhook_url) == "tg/hook"
    assert webhook_path("https://bot.example.com") == ""


def test_webhook_url_needs_the_secret():
    with pytest.raises(ConfigError, match="WEBHOOK_SECRET is not set: it is required with WEBHOOK_URL"):
        load_settings({**BASE, "WEBHOOK_URL": "https://bot.example.com/hook"})


@pytest.mark.parametrize("secret", ["has space", "semi;colon", "ü-umlaut", "x" * 257])
def test_webhook_secret_must_be_what_telegram_allows(secret):
    with pytest.raises(ConfigError, match="WEBHOOK_SECRET must be 32-256 characters of A-Z a-z 0-9 _ -") as e:
        load_settings({**BASE, "WEBHOOK_URL": "https://bot.example.com/hook", "WEBHOOK_SECRET": secret})
    assert secret not in str(e.value)  # the message never repeats the secret


@pytest.mark.parametrize("secret", ["a", "short_secret", "x" * 31])
def test_webhook_secret_must_be_long_enough_to_resist_guessing(secret):
    with pytest.raises(ConfigError, match="WEBHOOK_SECRET is too short") as e:
        load_settings({**BASE, "WEBHOOK_URL": "https://bot.example.com/hook", "WEBHOOK_SECRET": secret})
    assert "secrets.token_urlsafe(32)" in str(e.value)  # says how to make one


@pytest.mark.parametrize(
    "secret",
    [
        "a" * 32,
        "ab" * 20,
        "A-z_0-9" * 36 + "abcd",
        "abcdefghijklmnopqrstuvwxyz012345",
        "password_password_password_12345",
    ],
)
def test_a_long_but_trivially_weak_secret_is_refused(secret):
    with pytest.raises(ConfigError, match="WEBHOOK_SECRET is too weak") as e:
        load_settings({**BASE, "WEBHOOK_URL": "https://bot.example.com/hook", "WEBHOOK_SECRET": secret})
    assert secret not in str(e.value) and "secrets.token_urlsafe(32)" in str(e.value)


@pytest.mark.parametrize(
    "secret", ["I2lwFSU1R0hrZ3QmXIr7bWJjOs9ViHqvN0xHDn4Ptbw", "1ce4ae5101f23e0472d7c9b8a66e0f13", STRONG_256]
)
def test_random_secrets_pass(secret):
    """What secrets.token_urlsafe(32) and token_hex(16) make (fixed samples) is accepted."""
    assert load_settings({**BASE, "WEBHOOK_URL": "https://bot.example.com/hook", "WEBHOOK_SECRET": secret})


@pytest.mark.parametrize("url", ["http://bot.example.com/hook", "bot.example.com", "https://"])
def test_webhook_url_must_be_https(url):
    with pytest.raises(ConfigError, match="WEBHOOK_URL must be an https:// URL"):
        load_settings({**BASE, "WEBHOOK_URL": url, "WEBHOOK_SECRET": "s"})


@pytest.mark.parametrize(("raw", "message"), [("0", "at least 1"), ("70000", "at most 65535"), ("x", "whole number")])
def test_webhook_port(raw, message):
    with pytest.raises(ConfigError, match=message):
        load_settings({**BASE, "WEBHOOK_PORT": raw})


def test_log_level_must_be_known():
    with pytest.raises(ConfigError, match="LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"):
        load_settings({**BASE, "LOG_LEVEL": "verbose"})
