"""The data-format version of a data directory: ``$DATA_DIR/format.json``.

Every process that opens a data directory (the bot, the terminal chat) calls
``ensure_format`` first:

- a directory without ``format.json`` gets one (atomic, mode 0600). If it already holds
  chats, they are in format 1 — the format before ``format.json`` existed — so writing
  ``{"format": 1}`` describes them and changes nothing else;
- a format newer than this code knows stops the start (``FormatError``): old code must
  never write into files whose rules it does not know;
- an older format is upgraded in place by the registered steps (``UPGRADES``), one
  version at a time, each logged, under an exclusive lock on the directory so two
  processes never upgrade at once. An older format without a step stops the start:
  nothing is ever rewritten silently.

``read_format`` only reads (used by ``python -m bot doctor``).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.files import atomic_write_json, ensure_private_dir, flocked

log = logging.getLogger(__name__)

FORMAT = 1
"""The data format this code reads and writes."""
FILE_NAME = "format.json"

Upgrade = Callable[[Path], None]
"""Upgrades a data directory from format N to N+1 in place. Must be safe to run again
after a crash half-way (the version is written only after the step finished)."""

UPGRADES: dict[int, Upgrade] = {}
"""from-version -> the step that upgrades it to from-version + 1 (none yet: format 1 is the first)."""


class FormatError(Exception):
    """The data directory cannot be used by this code; the message is one line for the user."""


@dataclass(frozen=True)
class FormatState:
    """What ``read_format`` found. ``version`` None: no format.json (``has_data`` says whether chats exist)."""

    version: int | None
    has_data: bool
    path: Path


def format_path(data_dir: Path) -> Path:
    return Path(data_dir) / FILE_NAME


def _has_data(data_dir: Path) -> bool:
    chats = Path(data_dir) / "chats"
    try:
        return any(chats.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return False


def read_format(data_dir: Path) -> FormatState:
    """The stored format version (read only). Raises FormatError if format.json is unreadable."""
    path = format_path(data_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return FormatState(None, _has_data(data_dir), path)
    except OSError as e:
        raise FormatError(f"cannot read {path}: {e.strerror}") from None
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise FormatError(
            f'{path} is not valid JSON: restore it from a backup (it should hold {{"format": N}})'
        ) from None
    version = data.get("format") if isinstance(data, dict) else None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise FormatError(f'{path} has no valid "format" number: restore it from a backup')
    return FormatState(version, True, path)


def _record(version: int, now: datetime, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "format": version,
        "written": now.astimezone(UTC).isoformat(timespec="seconds"),
        "note": "data format of this directory; written by the program, do not edit",
        **(extra or {}),
    }


def _dir_lock(data_dir: Path) -> contextlib.AbstractContextManager[None]:
    """An exclusive flock on the directory itself (no extra file needed)."""
    return flocked(data_dir, create=False)


def ensure_format(
    data_dir: Path,
    *,
    current: int = FORMAT,
    upgrades: Mapping[int, Upgrade] | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> int:
    """Make sure ``data_dir`` is in format ``current``; returns the format it was in before.

    Creates the directory (0700) and writes format.json when missing. Raises FormatError
    for a newer format, an unreadable format.json or an older format without an upgrade
    path; OSError if the directory cannot be created or written.
    """
    steps = UPGRADES if upgrades is None else upgrades
    data_dir = Path(data_dir)
    ensure_private_dir(data_dir)
    with _dir_lock(data_dir):
        state = read_format(data_dir)
        if state.version is None:
            # no format.json: an empty directory, or chats written before format.json existed (format 1)
            found = 1 if state.has_data else current
            if found != current:
                _upgrade(data_dir, found, current, steps, now)
            else:
                atomic_write_json(state.path, _record(current, now()))
                if state.has_data:
                    log.info("data in %s is format %d: recorded it in %s", data_dir, found, FILE_NAME)
            return found
        found = state.version
        if found > current:
            raise FormatError(
                f"the data in {data_dir} is format {found}, newer than this version of the program knows "
                f"(format {current}): upgrade the program, or use a backup made with this version"
            )
        if found < current:
            _upgrade(data_dir, found, current, steps, now)
        return found


def _upgrade(
    data_dir: Path, found: int, current: int, steps: Mapping[int, Upgrade], now: Callable[[], datetime]
) -> None:
    missing = [v for v in range(found, current) if v not in steps]
    if missing:
        raise FormatError(
            f"the data in {data_dir} is format {found} and there is no automatic upgrade from format "
            f"{missing[0]} to {missing[0] + 1}: see deploy/README.md (Upgrade); nothing was changed"
        )
    for version in range(found, current):
        log.warning("upgrading the data in %s from format %d to %d", data_dir, version, version + 1)
        steps[version](data_dir)
        atomic_write_json(format_path(data_dir), _record(version + 1, now(), {"upgraded_from": version}))
        log.warning("the data in %s is now format %d", data_dir, version + 1)
