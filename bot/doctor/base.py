"""The doctor's framework: a finding (``Result``), what checks see (``Context``), and ``@check``.

Checks modules (checks.py, net.py, owner.py) import this module only; bot/doctor/__init__.py
imports the checks modules to run them. Nothing here imports a check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.config import Settings

OK, NOTE, SKIP, PROBLEM = "ok", "note", "skip", "problem"


@dataclass(frozen=True)
class Result:
    status: str  # ok, note, skip, problem
    name: str
    message: str

    def line(self) -> str:
        return f"{self.status:<8} {self.name}: {self.message}"


def ok(name: str, message: str) -> Result:
    return Result(OK, name, message)


def note(name: str, message: str) -> Result:
    return Result(NOTE, name, message)


def skip(name: str, message: str) -> Result:
    return Result(SKIP, name, message)


def problem(name: str, message: str) -> Result:
    return Result(PROBLEM, name, message)


@dataclass
class Context:
    """What the checks see: the environment (after .env), the settings if they load, options."""

    env: Mapping[str, str]
    settings: Settings | None
    config_error: str | None
    data_dir: Path
    offline: bool = False
    timeout: float = 15.0
    heartbeat_max_age: float = 90.0
    terminal: bool = False  # --terminal: only what the terminal chat needs (no Telegram token)
    cache: dict[str, object] = field(default_factory=dict)


CheckFunction = Callable[[Context], Iterable[Result]]


@dataclass(frozen=True)
class Check:
    name: str
    run: CheckFunction
    network: bool = False  # skipped with --offline
    default: bool = True  # False: only with --only NAME (e.g. the heartbeat of a running bot)


CHECKS: list[Check] = []


def check(name: str, *, network: bool = False, default: bool = True) -> Callable[[CheckFunction], CheckFunction]:
    """Register a check; they run in the order they were registered."""

    def register(fn: CheckFunction) -> CheckFunction:
        CHECKS[:] = [c for c in CHECKS if c.name != name]
        CHECKS.append(Check(name, fn, network, default))
        return fn

    return register
