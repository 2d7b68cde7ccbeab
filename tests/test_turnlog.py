"""The per-turn log line, LOG_CONTENT, --log-level / LOG_LEVEL, and secrets kept out of the log."""

import io
import logging
import subprocess
import sys

import pytest

from bot.__main__ import Redact
from bot.claude.model import FakeModel, ModelError, Usage
from bot.core.ask import Assistant
from bot.core.turnlog import format_turn
from tests.fakes.telegram_server import FakeTelegram

QUESTION = "내 비밀번호 힌트는 고양이 이름이야"


def turn_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "bot.turn"]


async def test_one_line_per_turn_without_content(assistant: Assistant, caplog, monkeypatch):
    monkeypatch.delenv("LOG_CONTENT", raising=False)
    caplog.set_level(logging.INFO, logger="bot.turn")
    answer = await assistant.ask(42, QUESTION)
    [line] = turn_lines(caplog)
    assert line.startswith("turn chat=42 outcome=ok latency=")
    assert f"tokens_in={answer.usage.input_tokens} tokens_out={answer.usage.output_tokens}" in line
    assert answer.usage.input_tokens > 0
    assert "tool_rounds=0" in line
    assert QUESTION not in line and "고양이" not in line and answer.text not in line


async def test_log_content_shows_question_and_answer(assistant: Assistant, caplog, monkeypatch):
    monkeypatch.setenv("LOG_CONTENT", "1")
    caplog.set_level(logging.INFO, logger="bot.turn")
    await assistant.ask(42, "첫 줄\n둘째 줄")
    [line] = turn_lines(caplog)
    assert 'question="첫 줄\\n둘째 줄"' in line  # one log line: newlines escaped
    assert 'answer="echo: 첫 줄\\n둘째 줄"' in line


async def test_failed_turn_is_logged_with_its_kind(assistant: Assistant, fake_model: FakeModel, caplog, monkeypatch):
    monkeypatch.delenv("LOG_CONTENT", raising=False)
    caplog.set_level(logging.INFO, logger="bot.turn")
    fake_model.queue(ModelError("rate_limit", "slow down"))
    with pytest.raises(ModelError):
        await assistant.ask(42, QUESTION)
    [line] = turn_lines(caplog)
    assert line.startswith("turn chat=42 outcome=rate_limit ") and "tokens_in=0" in line
    assert QUESTION not in line


def test_format_turn_fields():
    line = format_turn(
        7,
        latency=1.234,
        usage=Usage(input_tokens=10, output_tokens=3, cache_read_tokens=8, cache_write_tokens=2),
        tool_rounds=2,
        outcome="ok",
        question="q",
        answer="a",
    )
    assert line == "turn chat=7 outcome=ok latency=1.23s tokens_in=10 tokens_out=3 cached=8 cache_write=2 tool_rounds=2"


def test_redact_filter_hides_secrets_whoever_logs_them():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(Redact(["123456:SECRET-token-part", "SECRET-token-part", "hook_secret_1"]))
    logger = logging.getLogger("test.redact")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("url https://api/bot%s/getMe and %s", "123456:SECRET-token-part", "hook_secret_1")
        logger.warning("just SECRET-token-part")
        try:
            raise RuntimeError("GET https://api/bot123456:SECRET-token-part/getMe failed")
        except RuntimeError:
            logger.exception("request failed")
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert lines[:3] == ["url https://api/bot[redacted]/getMe and [redacted]", "just [redacted]", "request failed"]
    assert lines[-1] == "RuntimeError: GET https://api/bot[redacted]/getMe failed"
    assert "SECRET" not in stream.getvalue()


def test_bad_log_level_stops_the_start(bot_env, tmp_path):
    for args, env in ((["--log-level", "LOUD"], {}), ([], {"LOG_LEVEL": "chatty"})):
        run = subprocess.run(
            [sys.executable, "-m", "bot", *args],
            env={**bot_env, **env},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 2
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and "must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL" in lines[0]


def test_debug_log_keeps_token_and_text_out(start_bot, fake_telegram: FakeTelegram):
    bot = start_bot("--log-level", "DEBUG", LOG_LEVEL="ERROR")  # the option wins over the setting
    fake_telegram.send_text(31, QUESTION)
    fake_telegram.wait_sent(31)
    assert bot.stop() == 0
    assert " DEBUG asyncio: " in bot.log  # DEBUG is on
    assert "turn chat=31 outcome=ok" in bot.log
    assert fake_telegram.token.split(":")[1] not in bot.log
    assert QUESTION not in bot.log  # the libraries' debug output (updates, requests) needs LOG_CONTENT=1


def test_debug_log_with_content_shows_library_traffic_but_never_the_token(start_bot, fake_telegram: FakeTelegram):
    bot = start_bot("--log-level=DEBUG", LOG_CONTENT="1")
    fake_telegram.send_text(33, QUESTION)
    fake_telegram.wait_sent(33)
    assert bot.stop() == 0
    assert " DEBUG telegram." in bot.log and QUESTION in bot.log
    assert fake_telegram.token.split(":")[1] not in bot.log


def test_log_level_warning_hides_the_turn_lines(start_bot, fake_telegram: FakeTelegram):
    bot = start_bot(LOG_LEVEL="WARNING")
    fake_telegram.send_text(32, QUESTION)
    fake_telegram.wait_sent(32)
    assert bot.stop() == 0
    assert "turn chat=" not in bot.log and "starting long polling" not in bot.log
