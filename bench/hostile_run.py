"""What bench.hostile and bench.hostile_floods share: the real bot against fresh fakes, per scenario.

``measured`` runs each scenario of a part the same way: a new work directory, the fake Telegram with
its strict flood limits and a fake model that echoes after ``latency`` seconds (``fakes``), then the
scenario's own steps (which start a ``Bot`` and return the answer times); a row per scenario:
(name, median seconds, max seconds, the bot's peak resident memory in MB).
"""

from __future__ import annotations

import contextlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bench.memory_rss import rss
from bench.throughput import bot_env
from tests.fakes.anthropic_server import FakeAnthropic, Text
from tests.fakes.telegram_server import FakeTelegram, FloodControl
from tests.helpers import asked_text

OWNER = 100

Row = tuple[str, float, float, float]
"""(scenario, median seconds, max seconds, peak MB)"""
Flood = TypeVar("Flood")


def echo(latency: float) -> Callable[[dict], Text]:
    return lambda body: Text(f"echo: {asked_text(body)}", delay=latency)


class Bot:
    """The real bot as a subprocess against the fakes; as a context manager, stopped at the end."""

    def __init__(
        self,
        code: Path,
        tg: FakeTelegram,
        model: FakeAnthropic,
        work: Path,
        users: list[int],
        extra: dict[str, str] | None = None,
    ) -> None:
        self.log_path = work / "bot.log"
        env = bot_env(code, tg, model, work / "data", users)
        env.update(OWNER_ID=str(OWNER), LOG_LEVEL="INFO", **(extra or {}))
        self.log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot"], cwd=work, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 60
        while not (tg.webhook if "WEBHOOK_URL" in env else tg.calls_of("getUpdates")):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the bot did not start:\n{self.log_path.read_text()}")
            time.sleep(0.05)

    def __enter__(self) -> Bot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def memory(self) -> tuple[float, float]:
        return rss(self.proc.pid)

    def stop(self) -> str:
        """SIGTERM (the bot finishes what is in flight), then its log."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        return self.log_path.read_text(errors="replace")


def timed(tg: FakeTelegram, chat: int, questions: list[str], send: Callable[[str], object], answer: str) -> list[float]:
    """Seconds from sending each question (one after another) until ``answer`` (``{q}`` filled in) is in the chat."""
    times = []
    for question in questions:
        n = len(tg.sent(chat))
        t0 = time.monotonic()
        send(question)
        tg.wait_for(lambda q=question, n=n: answer.format(q=q) in tg.sent(chat)[n:], timeout=300)
        times.append(time.monotonic() - t0)
    return times


@contextlib.contextmanager
def fakes(latency: float) -> Iterator[tuple[Path, FakeTelegram, FakeAnthropic]]:
    """A work directory, the fake Telegram with its strict flood limits, and a fake model that echoes."""
    with tempfile.TemporaryDirectory() as tmp, FakeTelegram() as tg, FakeAnthropic() as model:
        assert isinstance(tg, FakeTelegram) and isinstance(model, FakeAnthropic)
        tg.flood = FloodControl(strict=True)
        model.default = echo(latency)
        yield Path(tmp), tg, model


Scenario = Callable[[Path, FakeTelegram, FakeAnthropic, Any], tuple[list[float], float]]
"""(work, tg, model, the scenario's flood) -> (answer times, the bot's peak MB)."""


def measured(label: str, latency: float, scenarios: Sequence[tuple[str, Flood]], run: Scenario) -> list[Row]:
    """One row per (name, flood) of ``scenarios``, each run by ``run`` on fresh fakes (said on stderr)."""
    rows: list[Row] = []
    for name, flood in scenarios:
        print(f"  {label}: {name} …", file=sys.stderr, flush=True)
        with fakes(latency) as (work, tg, model):
            times, peak = run(work, tg, model, flood)
        rows.append((name, statistics.median(times), max(times), peak))
    return rows
