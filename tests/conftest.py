"""Shared fixtures: a temp DATA_DIR for every test, fakes, and a real bot process."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.claude.model import FakeModel
from bot.core.ask import Assistant
from memory.transcript import Transcript
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.http import hang_guard
from tests.fakes.messages_rules import validate
from tests.fakes.telegram_server import FakeTelegram
from tests.forkserver import ForkedProcess, ForkServer, share_between_workers

ROOT = Path(__file__).resolve().parent.parent

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # A suite started in the background by a non-interactive shell (`./test.sh &`, a CI runner's script) inherits
    # SIGINT ignored (POSIX: an asynchronous list ignores SIGINT and SIGQUIT); Python then installs no
    # KeyboardInterrupt handler, in this process or in any it starts, and the terminal chat's Ctrl-C tests would
    # wait for a signal that never comes. A terminal gives Ctrl-C its default meaning: so do the tests.
    signal.signal(signal.SIGINT, signal.default_int_handler)

TEST_OWNER = 4242
TEST_USERS = (TEST_OWNER, *range(1, 10_000), 9_876_543_210_123)  # and a 13-digit one (tests/test_e2e_bad_input.py)
"""The users the bot process of the end-to-end tests lets in (``bot_env``): every id the tests write as
(1-9999; the owner first). The access tests start the bot with ``ALLOWED_USERS=""`` to see it closed
by default, and use ids of 10000 and more for strangers."""


PROCESS_FIXTURES = frozenset({"start_bot", "bot_env", "cli_env"})
"""Fixtures of the tests that start real processes (the bot, the terminal chat): the long ones."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest first: the crash suite (``slow``), then the tests that start processes, then the rest,
    each group in its usual order. With parallel workers (./test.sh) the long tests then spread over
    all workers from the start, and the short ones fill the gaps at the end instead of one long test
    running alone at the end. The order of the tests changes nothing else: each is independent."""

    def weight(item: pytest.Item) -> int:
        if item.get_closest_marker("slow"):
            return 0
        fixtures = set(getattr(item, "fixturenames", ()))
        return 1 if fixtures & PROCESS_FIXTURES or "e2e" in item.nodeid else 2

    items.sort(key=weight)  # stable: the same order in every worker


@pytest.fixture(scope="session")
def no_ca_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty directory of trusted certificates, for SSL_CERT_DIR.

    No test talks TLS: every server is a fake on http://127.0.0.1. Yet every HTTP client (httpx's: the bot's
    Claude client and python-telegram-bot's) makes an SSL context when it is created, reading a whole CA bundle
    (~40 ms of CPU; the suite makes hundreds of clients, in the tests and in every bot process). With
    SSL_CERT_DIR (and no SSL_CERT_FILE) they look certificates up in this directory instead, only
    when a TLS connection asks for one, which none does."""
    return tmp_path_factory.mktemp("no-ca-store")


@pytest.fixture(scope="session", autouse=True)
def _no_ca_bundle(no_ca_store: Path) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("SSL_CERT_FILE", raising=False)
        mp.setenv("SSL_CERT_DIR", str(no_ca_store))
        yield


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own DATA_DIR; nothing touches ./data."""
    d = tmp_path / "data"
    monkeypatch.setenv("DATA_DIR", str(d))
    # recall by meaning costs ~50 ms of CPU a stored turn: the tests of it (test_recall_meaning) turn it on
    monkeypatch.setenv("RECALL_MEANING", "off")
    return d


class Clock:
    """An injectable clock that tests move by hand."""

    def __init__(self, start: datetime) -> None:
        self.current = start
        self.reads = 0

    def __call__(self) -> datetime:
        self.reads += 1
        return self.current

    def advance(self, **kw: float) -> None:
        from datetime import timedelta

        self.current += timedelta(**kw)


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 11, 29, 14, 5, tzinfo=UTC))  # 23:05 in Seoul


@pytest.fixture
def transcript(data_dir: Path) -> Transcript:
    return Transcript(data_dir)


@pytest.fixture
def fake_model() -> FakeModel:
    """A scripted model that checks every request as the real API does (a bad one fails the call)."""
    return FakeModel(validate=validate)


@pytest.fixture
def assistant(transcript: Transcript, fake_model: FakeModel, clock: Clock) -> Assistant:
    return Assistant(transcript=transcript, model=fake_model, now=clock)


@pytest.fixture
def fake_telegram() -> Iterator[FakeTelegram]:
    with FakeTelegram() as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server  # type: ignore[misc]


class BotProcess:
    """The real ``python -m bot`` in a subprocess, pointed at the fake servers."""

    def __init__(
        self,
        env: dict[str, str],
        cwd: Path,
        log_path: Path,
        args: tuple[str, ...] = (),
        preexec: Callable[[], None] | None = None,
        rlimits: dict[int, tuple[int, int]] | None = None,
    ) -> None:
        self.preexec = preexec  # run in the child before the bot starts
        self.rlimits = rlimits or {}  # resource.setrlimit in the child before the bot starts (forked or not)
        self.env = env
        self.cwd = cwd
        self.log_path = log_path
        self.args = args
        self.proc: subprocess.Popen[bytes] | ForkedProcess | None = None

    def start(self) -> BotProcess:
        self._log = open(self.log_path, "ab")  # noqa: SIM115
        server = ForkServer.for_env(self.env) if self.preexec is None else None
        if server is not None:
            self.proc = server.spawn(list(self.args), self.env, self.cwd, self.log_path, rlimits=self.rlimits)
            return self
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", *self.args],
            cwd=self.cwd,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=self._preexec,
        )
        return self

    def _preexec(self) -> None:
        for which, limits in self.rlimits.items():
            resource.setrlimit(which, limits)
        if self.preexec is not None:
            self.preexec()

    def stop(self, timeout: float = 20.0, sig: int = signal.SIGTERM) -> int:
        """Send ``sig`` (SIGTERM by default), then wait; returns the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(hang_guard(timeout))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"bot did not stop within {timeout}s:\n{self.log}") from None
        finally:
            self._log.close()
        return rc

    def settle(self, telegram: FakeTelegram, timeout: float = 30.0) -> int:
        """Stop the bot once it fetched every update pushed so far; returns the exit code.

        A stopped bot has finished handling all of them (PTB processes every fetched update
        before it exits), so what it did not do by then, it never does: tests assert
        "nothing else happened" after this, without sleeping.
        """
        telegram.wait_fetched(timeout=timeout)
        return self.stop(timeout)

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_ready(self, telegram: FakeTelegram, timeout: float = 30.0) -> None:
        """Wait until the bot polls for updates (it has called getMe and getUpdates)."""
        deadline = time.monotonic() + hang_guard(timeout)
        while time.monotonic() < deadline:
            if telegram.calls_of("getUpdates"):
                return
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"bot exited early ({self.proc.returncode}):\n{self.log}")
            time.sleep(0.05)
        raise AssertionError(f"bot did not start polling:\n{self.log}")


@pytest.fixture
def bot_env(
    tmp_path: Path, data_dir: Path, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, no_ca_store: Path
) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT")}
    return {
        **keep,
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
        "TELEGRAM_BOT_TOKEN": fake_telegram.token,
        "TELEGRAM_BASE_URL": fake_telegram.base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "ANTHROPIC_MAX_RETRIES": "0",
        "DATA_DIR": str(data_dir),
        # the bot is closed by default: let the tests' users in (the first is the owner), unlimited
        "ALLOWED_USERS": ",".join(map(str, TEST_USERS)),
        "DAILY_MESSAGE_LIMIT": "0",
        "DAILY_TOKEN_LIMIT": "0",
        "RECALL_MEANING": "off",  # ~50 ms of CPU a stored turn: test_recall_meaning turns it on
        "SSL_CERT_DIR": str(no_ca_store),  # no CA bundle read for each HTTP client: no test talks TLS
    }


@pytest.fixture
def start_bot(tmp_path: Path, bot_env: dict[str, str], fake_telegram: FakeTelegram) -> Iterator:
    """start_bot(*args, preexec=None, rlimits=None, **env_overrides) -> a started, polling BotProcess.
    All are stopped at the end."""
    procs: list[BotProcess] = []
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)

    def start(
        *args: str,
        preexec: Callable[[], None] | None = None,
        rlimits: dict[int, tuple[int, int]] | None = None,
        **overrides: str,
    ) -> BotProcess:
        env = {**bot_env, **overrides}
        before = len(fake_telegram.calls_of("getUpdates"))
        p = BotProcess(env, workdir, tmp_path / f"bot{len(procs)}.log", args, preexec, rlimits).start()
        procs.append(p)
        fake_telegram.wait_for(lambda: len(fake_telegram.calls_of("getUpdates")) > before, timeout=30)
        return p

    yield start
    for p in procs:
        if p.proc is not None and p.proc.poll() is None:
            p.stop()


_SHARED_SERVERS_DONE = pytest.StashKey[Callable[[], None]]()


def pytest_configure(config: pytest.Config) -> None:
    """In the process that runs parallel workers (./test.sh), before it starts them: the workers share
    their fork servers (one per start-up environment for the run, not one in each worker)."""
    if getattr(config.option, "numprocesses", None) and "PYTEST_XDIST_WORKER" not in os.environ:
        config.stash[_SHARED_SERVERS_DONE] = share_between_workers()


def pytest_unconfigure(config: pytest.Config) -> None:
    done = config.stash.get(_SHARED_SERVERS_DONE, None)
    if done is not None:
        done()


def pytest_sessionfinish(session: pytest.Session) -> None:
    ForkServer.close_all()  # their children were stopped by their tests
