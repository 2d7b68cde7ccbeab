"""The data-format version in $DATA_DIR/format.json, checked by every process at start."""

import json
import os
import subprocess
import sys

import pytest

from memory.format import FORMAT, FormatError, ensure_format, read_format
from memory.transcript import Transcript
from tests.conftest import ROOT


def stored_format(data_dir) -> dict:
    return json.loads((data_dir / "format.json").read_text())


def test_first_start_writes_format_json_private(data_dir):
    assert ensure_format(data_dir) == FORMAT
    assert stored_format(data_dir)["format"] == FORMAT
    assert oct(os.stat(data_dir / "format.json").st_mode & 0o777) == "0o600"
    assert oct(os.stat(data_dir).st_mode & 0o777) == "0o700"
    assert ensure_format(data_dir) == FORMAT  # a second start changes nothing
    assert [p.name for p in data_dir.iterdir()] == ["format.json"]  # no temp files left


def test_existing_chats_without_format_json_are_format_1(data_dir):
    t = Transcript(data_dir)
    t.append(42, [{"role": "user", "content": "안녕"}, {"role": "assistant", "content": "안녕하세요"}])
    before = t.path(42).read_bytes()
    assert read_format(data_dir).version is None and read_format(data_dir).has_data
    assert ensure_format(data_dir) == 1
    assert stored_format(data_dir)["format"] == 1
    assert t.path(42).read_bytes() == before


def test_newer_format_stops_with_a_clear_message_and_changes_nothing(data_dir):
    data_dir.mkdir(mode=0o700)
    (data_dir / "format.json").write_text('{"format": 2}')
    with pytest.raises(FormatError, match=r"format 2, newer than this version of the program knows \(format 1\)"):
        ensure_format(data_dir)
    assert stored_format(data_dir) == {"format": 2}


@pytest.mark.parametrize("text", ["{", '{"format": "1"}', '{"format": 0}', "[1]", '{"format": true}'])
def test_unreadable_format_json_stops(data_dir, text):
    data_dir.mkdir(mode=0o700)
    (data_dir / "format.json").write_text(text)
    with pytest.raises(FormatError, match="restore it from a backup"):
        ensure_format(data_dir)
    assert (data_dir / "format.json").read_text() == text


def test_older_format_is_upgraded_by_its_step_once(data_dir, caplog):
    ensure_format(data_dir)
    calls = []

    def one_to_two(d):
        calls.append(d)
        (d / "upgraded-marker").write_text("x")

    assert ensure_format(data_dir, current=2, upgrades={1: one_to_two}) == 1
    assert calls == [data_dir]
    assert stored_format(data_dir)["format"] == 2 and stored_format(data_dir)["upgraded_from"] == 1
    assert "upgrading the data" in caplog.text  # never silent
    assert ensure_format(data_dir, current=2, upgrades={1: one_to_two}) == 2
    assert calls == [data_dir]


def test_older_format_without_a_step_is_not_touched(data_dir):
    ensure_format(data_dir)
    before = (data_dir / "format.json").read_bytes()
    with pytest.raises(FormatError, match="no automatic upgrade from format 1 to 2"):
        ensure_format(data_dir, current=3, upgrades={2: lambda d: None})
    assert (data_dir / "format.json").read_bytes() == before


def test_failed_upgrade_step_keeps_the_old_version(data_dir):
    ensure_format(data_dir)

    def broken(d):
        raise OSError("disk full")

    with pytest.raises(OSError):
        ensure_format(data_dir, current=2, upgrades={1: broken})
    assert stored_format(data_dir)["format"] == 1  # the next start tries the step again


@pytest.mark.parametrize("args", [(), ("chat",)])
def test_bot_and_terminal_chat_refuse_a_newer_format(data_dir, tmp_path, args):
    data_dir.mkdir(mode=0o700)
    (data_dir / "format.json").write_text('{"format": 99}')
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "TELEGRAM_BOT_TOKEN": "123456:TEST-TOKEN-abcdefghijklmnop",
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # never reached
        "TELEGRAM_BASE_URL": "http://127.0.0.1:9/bot",
        "DATA_DIR": str(data_dir),
    }
    run = subprocess.run(
        [sys.executable, "-m", "bot", *args],
        env=env,
        cwd=tmp_path,
        input="안녕\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "format 99, newer than this version" in lines[0], run.stderr
    assert not (data_dir / "chats").exists()
    assert stored_format_raw(data_dir) == '{"format": 99}'


def stored_format_raw(data_dir) -> str:
    return (data_dir / "format.json").read_text()


def test_bot_start_records_the_format(start_bot, data_dir):
    bot = start_bot()
    assert stored_format(data_dir)["format"] == FORMAT
    assert bot.stop() == 0


def test_bot_process_creates_files_private_whatever_the_umask(start_bot, fake_telegram):
    old = os.umask(0o022)  # the bot inherits Docker's usual umask
    try:
        bot = start_bot()
    finally:
        os.umask(old)
    status = open(f"/proc/{bot.proc.pid}/status").read() if os.path.exists("/proc/self/status") else ""
    if not status:
        bot.stop()
        pytest.skip("no /proc here: the umask of the bot process cannot be read")
    umask = next(line.split()[1] for line in status.splitlines() if line.startswith("Umask:"))
    assert bot.stop() == 0
    assert umask == "0077"
