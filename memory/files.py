"""Small file helpers shared by the memory stores: private dirs, locks, atomic writes."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DIR_MODE = 0o700
FILE_MODE = 0o600


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 and return it."""
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    with contextlib.suppress(PermissionError):
        os.chmod(path, DIR_MODE)
    return path


@contextlib.contextmanager
def locked(fd: int, exclusive: bool) -> Iterator[None]:
    """Hold an OS-level advisory lock (flock) on ``fd`` for the duration of the block.

    The lock is shared between processes, so the Telegram bot and the terminal chat
    can use the same data directory safely.
    """
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def flocked(path: Path, *, create: bool = True) -> Iterator[None]:
    """Hold an exclusive flock on ``path`` (a lock file, created 0600 if missing, or a directory)."""
    flags = os.O_RDWR | os.O_CREAT if create else os.O_RDONLY
    fd = os.open(path, flags, FILE_MODE)
    try:
        with locked(fd, exclusive=True):
            yield
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """fsync a directory so that a rename or a new file inside it is durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temp file, fsync, rename, fsync dir."""
    ensure_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def atomic_write_json(path: Path, value: Any) -> None:
    """Serialize ``value`` as pretty UTF-8 JSON and write it atomically."""
    text = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))


def read_json(path: Path) -> Any | None:
    """Read a JSON file, or return None if it does not exist."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None
