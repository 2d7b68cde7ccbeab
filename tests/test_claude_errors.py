"""Issue 30 item 6: every error type the Claude API errors page documents gets its own ModelError kind and
its own text, worded for where it is shown: a member in Telegram (short, nothing to configure), the bot's
owner (what to fix: a private message in Telegram), the terminal (the settings, no admin, no /retry).

The fake answers with the documented status and ``error.type`` (tests/fakes/scripts.py ``Error``); the
real client (anthropic SDK, no retries) classifies it; the real bot and terminal show the text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import texts as cli_texts
from bot.texts import TEXTS, error_text
from bot.tg.failures import OWNER_FIXES
from tests.conftest import TEST_OWNER
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.scripts import Error, StreamError
from tests.fakes.telegram_server import FakeTelegram
from tests.test_claude_current import test_errors_are_classified_by_type as classified_as
from tests.test_cli_startup import chat, chat_env  # noqa: F401 (a fixture)

DOCUMENTED = [
    (Error.invalid_request(), "bad_request"),
    (Error.spend_limit(), "spend_limit"),  # 400 too, told apart by its message (the errors page)
    (Error.spend_limit(workspace=True), "spend_limit"),
    (Error.documented("authentication_error"), "auth"),
    (Error.documented("billing_error"), "billing"),
    (Error.documented("permission_error"), "permission"),
    (Error.unknown_model("claude-x"), "not_found"),
    (Error.too_large(), "too_large"),
    (Error.rate_limit(), "rate_limit"),
    (Error.spend_cap(), "spend_cap"),  # 429 too, told apart by details.error_code (the Rate limits page)
    (Error.documented("api_error"), "server"),
    (Error.documented("timeout_error"), "timeout"),
    (Error.overloaded(), "overloaded"),
    (StreamError(type="billing_error", message="billing"), "billing"),  # an error event after HTTP 200
]


@pytest.mark.parametrize(("error", "kind"), DOCUMENTED)
async def test_each_documented_error_type_has_its_kind(fake_anthropic: FakeAnthropic, data_dir: Path, error, kind):
    await classified_as(fake_anthropic, data_dir, error, kind)  # the real client, no retries


KINDS = sorted({kind for _, kind in DOCUMENTED})


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_each_kind_has_its_own_text_for_each_place(kind: str, lang: str):
    member = error_text(kind, lang, model="claude-x")
    assert f"error.{kind}" in TEXTS and member != error_text("internal", lang)
    others = {error_text(k, lang, model="claude-x") for k in KINDS if k != kind}
    assert member not in others  # its own message, not a shared "bad request"
    terminal = cli_texts.error_line(kind, lang, model="claude-x", env={})
    assert "admin" not in terminal and "관리자" not in terminal
    if kind in OWNER_FIXES:
        owner = error_text(kind, lang, where="owner", model="claude-x")
        assert f"error.{kind}@owner" in TEXTS and owner != member
        assert "/retry" not in terminal  # a setting must change first: asking again fails the same way
        assert f"error.{kind}@terminal" in TEXTS or kind == "auth"


def test_the_owners_words_say_what_to_fix():
    assert "Billing" in error_text("billing", "en", where="owner") and "402" in error_text(
        "billing", "en", where="owner"
    )
    assert "ANTHROPIC_API_KEY" in error_text("auth", "en", where="owner")
    assert "Limits" in error_text("spend_limit", "en", where="owner")
    assert "1st of next month" in error_text("spend_cap", "en", where="owner")
    assert "claude-x" in error_text("permission", "en", where="owner", model="claude-x")
    assert "spend limit" in error_text("spend_limit", "en").lower() and "ANTHROPIC" not in error_text("billing", "en")


# -- the real bot ---------------------------------------------------------------------------------------------

MEMBER = 7


def test_telegram_a_member_sees_a_short_message_and_the_owner_is_told_once(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    bot = start_bot()
    fake_anthropic.reply(Error.documented("billing_error"))
    fake_telegram.send_text(MEMBER, "안녕")
    assert fake_telegram.wait_sent(MEMBER) == [error_text("billing", "ko")]
    told = fake_telegram.wait_sent(TEST_OWNER)
    assert told == [error_text("billing", "ko", where="owner")]
    # the same failure again: the member is answered, the owner is not told twice within the hour
    fake_anthropic.reply(Error.documented("billing_error"), Error.spend_cap())
    fake_telegram.send_text(MEMBER, "다시")
    assert fake_telegram.wait_sent(MEMBER, 2)[-1] == error_text("billing", "ko")
    fake_telegram.send_text(MEMBER, "또")
    assert fake_telegram.wait_sent(MEMBER, 3)[-1] == error_text("spend_cap", "ko")
    assert fake_telegram.wait_sent(TEST_OWNER, 2) == [*told, error_text("spend_cap", "ko", where="owner")]
    # a failure anyone may retry is worded the same for everyone and tells nobody else
    fake_anthropic.reply(Error.overloaded())
    fake_telegram.send_text(MEMBER, "하나 더")
    assert fake_telegram.wait_sent(MEMBER, 4)[-1] == error_text("overloaded", "ko")
    # the owner asking in a private chat is told what to fix right there
    fake_anthropic.reply(Error.documented("permission_error"))
    fake_telegram.send_text(TEST_OWNER, "안녕", language_code="en")
    shown = fake_telegram.wait_sent(TEST_OWNER, 3)[-1]
    assert shown == error_text("permission", "en", where="owner", model="claude-sonnet-5-5")
    assert len(fake_telegram.sent(TEST_OWNER)) == 3 and len(fake_telegram.sent(MEMBER)) == 4
    assert bot.stop() == 0


@pytest.mark.parametrize(
    ("error", "kind", "model"),
    [(Error.documented("billing_error"), "billing", "claude-sonnet-5-5"),  # the default model
     (Error.spend_limit(), "spend_limit", "claude-haiku-5-5")],  # and another family
)  # fmt: skip
def test_the_terminal_names_what_to_do_without_admin_or_retry(
    chat_env,  # noqa: F811 (the fixture imported above)
    tmp_path,
    fake_anthropic: FakeAnthropic,
    error,
    kind,
    model,
):
    fake_anthropic.reply(error)
    rc, out, err = chat({**chat_env, "ANTHROPIC_MODEL": model}, tmp_path / "w", "hello\n")
    assert fake_anthropic.requests[-1]["model"] == model
    lines = [x for x in err.splitlines() if x.strip()]
    assert lines[-1].endswith(error_text(kind, "en", where="terminal")), err
    assert "/retry" not in lines[-1] and "admin" not in lines[-1] and "bad request" not in err.lower()
