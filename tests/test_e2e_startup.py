"""End to end: the real ``python -m bot`` failing to start, against the fake Telegram.

Every start-up failure is one line naming the setting and what to do; the exit status is 2 for
what a restart cannot fix (a setting, a token or a webhook Telegram refuses) and 75 (EX_TEMPFAIL)
when Telegram cannot be reached; no secret appears anywhere in the output, at any log level.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fakes.http import hang_guard
from tests.fakes.telegram_server import FakeTelegram
from tests.forkserver import run_bot
from tests.test_e2e_webhook import free_port

OTHER_TOKEN = "987654321:AAHrejectedTokenOfAnotherBot_xyz12"


def start(env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run the bot to its end (forked from the preloaded Python: tests/forkserver.py); (exit status,
    everything it wrote)."""
    proc = run_bot([], env, cwd, b"", hang_guard(60))
    return proc.returncode, (proc.stdout + proc.stderr).decode(errors="replace")


def lines(output: str) -> list[str]:
    """The lines that report a problem: all but the time-stamped INFO and DEBUG lines of a normal start."""
    return [line for line in output.splitlines() if line.strip() and line.split()[2:3] not in (["INFO"], ["DEBUG"])]


@pytest.mark.parametrize(("level", "content"), [("INFO", ""), ("DEBUG", ""), ("DEBUG", "1")])
def test_a_token_telegram_rejects_is_one_line_without_the_token(
    bot_env, fake_telegram: FakeTelegram, tmp_path, level, content
):
    """Also at DEBUG with LOG_CONTENT=1, where the libraries' own debug output is on."""
    env = {**bot_env, "TELEGRAM_BOT_TOKEN": OTHER_TOKEN, "LOG_LEVEL": level, "LOG_CONTENT": content}
    rc, output = start(env, tmp_path)
    assert rc == 2, output
    assert OTHER_TOKEN not in output and OTHER_TOKEN.partition(":")[2] not in output
    assert "Traceback" not in output, output
    shown = lines(output)
    assert len(shown) == 1, output
    assert "refused TELEGRAM_BOT_TOKEN" in shown[0] and "@BotFather" in shown[0]
    assert fake_telegram.calls_of("getUpdates") == []  # it never polled


def test_telegram_unreachable_is_one_line_and_a_status_the_service_manager_restarts(bot_env, tmp_path):
    port = free_port()  # nothing listens there
    env = {**bot_env, "TELEGRAM_BASE_URL": f"http://127.0.0.1:{port}/bot"}
    rc, output = start(env, tmp_path)
    assert rc == 75, output
    token = bot_env["TELEGRAM_BOT_TOKEN"]
    assert token not in output and token.partition(":")[2] not in output
    assert "Traceback" not in output, output
    shown = lines(output)
    assert len(shown) == 1, output
    assert f"cannot reach Telegram at http://127.0.0.1:{port}" in shown[0] and "TELEGRAM_BASE_URL" in shown[0]


def test_a_webhook_url_telegram_refuses_is_one_line(bot_env, fake_telegram: FakeTelegram, tmp_path):
    url = "https://bot.example.com:8444/tg/hook"  # Telegram takes webhooks on 443, 80, 88 and 8443 only
    env = {
        **bot_env,
        "WEBHOOK_URL": url,
        "WEBHOOK_SECRET": "s3cret_Webhook-token_0123456789_abcdefghij",
        "WEBHOOK_PORT": str(free_port()),
    }
    rc, output = start(env, tmp_path)
    assert rc == 2, output
    assert bot_env["TELEGRAM_BOT_TOKEN"] not in output and env["WEBHOOK_SECRET"] not in output
    assert "Traceback" not in output, output
    shown = lines(output)
    assert len(shown) == 1, output
    assert f"Telegram refused WEBHOOK_URL {url}" in shown[0] and "8443" in shown[0]
    assert fake_telegram.webhook is None


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"TELEGRAM_BOT_TOKEN": "123456789:AAE_your_bot_token_here"}, "TELEGRAM_BOT_TOKEN is still the example value"),
        ({"ANTHROPIC_API_KEY": "sk-ant-your-key-here"}, "ANTHROPIC_API_KEY is still the example value"),
        ({"TELEGRAM_BOT_TOKEN": "123456:short"}, "TELEGRAM_BOT_TOKEN is not well-formed"),
        ({"ANTHROPIC_API_KEY": "sk-ant-api03 with spaces"}, "ANTHROPIC_API_KEY is not well-formed"),
    ],
)
def test_the_doctors_checks_run_before_the_start(bot_env, fake_telegram: FakeTelegram, tmp_path, overrides, words):
    env = {**bot_env, **overrides, "ANTHROPIC_BASE_URL": ""}  # Anthropic's own API: its key form applies
    rc, output = start(env, tmp_path)
    assert rc == 2, output
    assert lines(output) == [line for line in output.splitlines() if line.strip()]  # nothing was started
    assert len(lines(output)) == 1 and words in output, output
    for value in overrides.values():
        assert value not in output
    assert fake_telegram.calls == []  # refused before any request


def test_an_anthropic_base_url_ending_in_v1_is_refused_at_start(bot_env, fake_telegram: FakeTelegram, tmp_path):
    env = {**bot_env, "ANTHROPIC_BASE_URL": bot_env["ANTHROPIC_BASE_URL"] + "/v1"}
    rc, output = start(env, tmp_path)
    assert rc == 2, output
    assert "ANTHROPIC_BASE_URL" in output and "ends in /v1" in output, output
    assert fake_telegram.calls == []


def test_the_bot_log_has_no_scheduler_chatter_and_no_token(start_bot, fake_telegram: FakeTelegram):
    """apscheduler's two INFO lines per run of the reminders' rescan job are not in the bot's log."""
    bot = start_bot()
    fake_telegram.send_text(4242, "안녕")
    fake_telegram.wait_sent(4242)
    assert bot.stop() == 0
    assert "apscheduler" not in bot.log, bot.log
    assert fake_telegram.token.partition(":")[2] not in bot.log


def test_version(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "--version"], cwd=ROOT, capture_output=True, text=True, timeout=hang_guard(30)
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("telegram-memory-assistant ") and "Python" in proc.stdout


def test_a_data_dir_that_is_a_file_stops_the_bot_with_one_line(bot_env, fake_telegram: FakeTelegram, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    rc, output = start({**bot_env, "DATA_DIR": str(afile)}, tmp_path)
    assert rc == 2, output
    assert lines(output) == [f"error: DATA_DIR {afile} is not a directory (a file is in the way): set DATA_DIR to a "
                             "directory, or move that file away"], output  # fmt: skip
    assert "Errno" not in output and fake_telegram.calls == []


def test_a_file_where_the_chats_are_kept_stops_the_bot_with_one_line(
    bot_env, fake_telegram: FakeTelegram, tmp_path, data_dir
):
    """Not at the first question: the start names DATA_DIR, the path in the way and what to do, before
    Telegram is asked anything; the file is left where it is."""
    data_dir.mkdir(mode=0o700, exist_ok=True)
    (data_dir / "chats").write_text("not a directory")
    rc, output = start({**bot_env, "DATA_DIR": str(data_dir)}, tmp_path)
    assert rc == 2, output
    expected = (
        f"error: DATA_DIR {data_dir}: {data_dir / 'chats'} is not a directory (a file is in the way where the chats "
        "are kept): move that file elsewhere and start again"
    )
    assert lines(output) == [expected], output
    assert fake_telegram.calls == [] and (data_dir / "chats").read_text() == "not a directory"


def test_a_newer_data_format_stops_the_bot_and_the_terminal_with_the_same_line(
    bot_env, fake_telegram: FakeTelegram, tmp_path, data_dir
):
    """Both front ends open DATA_DIR through one function: the same words, the doctor named, nothing written."""
    from tests.test_cli_startup import chat

    data_dir.mkdir(mode=0o700, exist_ok=True)
    (data_dir / "format.json").write_text('{"format": 99}')
    rc, output = start({**bot_env, "DATA_DIR": str(data_dir)}, tmp_path)
    assert rc == 2, output
    (line,) = lines(output)
    assert line.startswith("error: ") and "format 99" in line and line.endswith("(./bot.sh doctor explains more)")
    rc, out, err = chat({**bot_env, "DATA_DIR": str(data_dir), "BOT_LANG": "en"}, tmp_path / "w", "hello\n")
    assert (rc, out, err) == (2, "", line + "\n")
    assert sorted(p.name for p in data_dir.iterdir()) == ["format.json"] and fake_telegram.calls == []
