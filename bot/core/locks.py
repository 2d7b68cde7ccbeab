"""One lock per chat, shared by every layer, and released when the chat is idle.

A chat's turns run strictly one after another: the Telegram layer holds the chat's lock
across asking, streaming and delivering, and the Assistant takes the same lock inside
``ask``/``retry``/``reset`` (for the terminal chat and for tests). The lock is re-entrant
for the task that holds it, so the two never deadlock and there is a single map of locks.
An entry exists only while some task holds or waits for the lock: 10,000 chats that
spoke once keep no locks.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field


@dataclass
class _Entry:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    owner: asyncio.Task[object] | None = None
    depth: int = 0
    users: int = 0  # tasks holding or waiting


class ChatLocks:
    """Per-chat re-entrant locks, created on demand and dropped when nobody holds or waits."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def busy(self, chat_id: int | str) -> bool:
        entry = self._entries.get(str(chat_id))
        return entry is not None and entry.lock.locked()

    @contextlib.asynccontextmanager
    async def hold(self, chat_id: int | str) -> AsyncIterator[None]:
        key = str(chat_id)
        task = asyncio.current_task()
        entry = self._entries.get(key)
        if entry is not None and task is not None and entry.owner is task:
            entry.depth += 1  # re-entered by the task that holds it
            try:
                yield
            finally:
                entry.depth -= 1
            return
        if entry is None:
            entry = self._entries[key] = _Entry()
        entry.users += 1
        try:
            async with entry.lock:
                entry.owner, entry.depth = task, 1
                try:
                    yield
                finally:
                    entry.owner, entry.depth = None, 0
        finally:
            entry.users -= 1
            if entry.users == 0 and self._entries.get(key) is entry:
                del self._entries[key]
