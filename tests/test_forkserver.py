"""The fork server that starts the end-to-end tests' bots (tests/forkserver.py) makes real processes:
their own arguments, environment, directory, log and exit code, and nothing of the server's."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.fakes.http import hang_guard
from tests.fakes.telegram_server import FakeTelegram
from tests.forkserver import ForkServer


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, bot_env: dict[str, str]) -> ForkServer:
    monkeypatch.delenv("TEST_FORKSERVER", raising=False)
    found = ForkServer.for_env(bot_env)  # the one the end-to-end tests' bots come from
    assert found is not None
    return found


def test_a_child_runs_python_m_bot_with_its_own_arguments_directory_and_exit_code(
    server: ForkServer, tmp_path: Path, bot_env: dict[str, str]
) -> None:
    log = tmp_path / "bot.log"
    env = {**bot_env, "DATA_DIR": str(tmp_path / "data")}
    child = server.spawn(["--help"], env, tmp_path, log)
    assert child.wait(hang_guard(30)) == 0
    assert log.read_text().startswith("usage: ./bot.sh")

    child = server.spawn(["--no-such-flag"], env, tmp_path, log)
    assert child.wait(hang_guard(30)) == 2  # main()'s return value is the exit code, as with -m
    assert "unknown argument '--no-such-flag'" in log.read_text()


def test_a_child_has_its_own_environment_and_none_of_the_servers_pipes(
    server: ForkServer, tmp_path: Path, bot_env: dict[str, str]
) -> None:
    # a bot without a token stops at once and says so: the environment of an earlier child would have passed
    env = {k: v for k, v in bot_env.items() if k not in ("TELEGRAM_BOT_TOKEN", "ANTHROPIC_API_KEY")}
    env["DATA_DIR"] = str(tmp_path / "data")
    log = tmp_path / "bot.log"
    child = server.spawn([], env, tmp_path, log)
    assert child.wait(hang_guard(30)) == 2
    assert "TELEGRAM_BOT_TOKEN" in log.read_text()


def test_a_signal_ends_a_child_and_shows_as_popen_does(
    server: ForkServer, tmp_path: Path, bot_env: dict[str, str], fake_telegram: FakeTelegram
) -> None:
    child = server.spawn([], bot_env, tmp_path, tmp_path / "bot.log")
    fake_telegram.wait_for(lambda: fake_telegram.calls_of("getUpdates"), timeout=30)  # it runs and polls
    assert child.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        child.wait(0.01)

    fds = os.listdir(f"/proc/{child.pid}/fd")
    links = {os.readlink(f"/proc/{child.pid}/fd/{fd}") for fd in fds if os.path.exists(f"/proc/{child.pid}/fd/{fd}")}
    assert os.readlink(f"/proc/{child.pid}/fd/0") == os.devnull
    assert os.readlink(f"/proc/{child.pid}/fd/1") == str(tmp_path / "bot.log")
    server_fds = os.listdir(f"/proc/{server.pid}/fd")
    server_links = {os.readlink(f"/proc/{server.pid}/fd/{fd}") for fd in server_fds if fd not in ("0", "1", "2")}
    sockets = {link for link in server_links if link.startswith("socket:")}
    # one socket to this test process, away from fds 0-2; a server the workers share (./test.sh) has
    # its listening socket and one per worker that connected besides
    assert len(sockets) == 1 if server.proc is not None else len(sockets) >= 2, sockets
    assert not (links & sockets), "the child holds none of the server's sockets"

    child.kill()
    assert child.wait(hang_guard(30)) == -signal.SIGKILL
    assert child.returncode == child.poll() == -signal.SIGKILL
