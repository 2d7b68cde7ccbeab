"""Building a chat's recall index in the background, never on a question's path.

A chat whose transcripts hold much more than the index has (an upgrade that changed the index's
format, a restored backup, a deleted index, a chat imported from elsewhere) would make the question
that finds it wait for the whole build: 30 s for a million messages. Instead the question path
indexes at most ``sync_budget`` bytes (memory.recall.index) and hands anything larger to the
``Builder``: ONE daemon thread per RecallIndex (not the event loop, not under any chat's lock)
that indexes the chats asked for one after the other, in small transactions (``BUILD_BATCH``
turns, a few milliseconds each), and starts none while a question's own work runs (``foreground``:
preparing the request with its indexing and search, storing the turn), so the other chats' answers
wait for at most one batch. (They are still somewhat slower during a build: every batch written
makes the other connections' page caches start over, and the write-ahead log grows.) Searches
meanwhile read what is indexed so far.

Progress goes to the log (at the start, every ``LOG_EVERY`` seconds, at the end) and into the
index (``meta`` key ``building:<chat>``, JSON ``{"done", "total", "started", "updated"}``)
where ``python -m bot doctor`` reads it (memory.recall.verify).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

log = logging.getLogger(__name__)

BUILD_BATCH = 250  # turns per transaction in the background (a few ms of indexing)
MAX_YIELD = 0.25  # seconds the builder waits for the questions in progress before its next batch anyway
LOG_EVERY = 10.0  # seconds between progress lines in the log
BUILDING_KEY = "building:"  # meta key prefix of a build in progress


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """How much of a chat's transcripts the index holds.

    ``ready``: everything stored is indexed (searches see the whole history); ``done``/``total``:
    bytes of transcript indexed / on disk; ``building``: the background builder has the chat.
    """

    ready: bool
    done: int = 0
    total: int = 0
    building: bool = False

    @property
    def percent(self) -> int:
        """How much is indexed, 0..100 (100 only when ready)."""
        if self.ready or self.total <= 0:
            return 100 if self.ready else 0
        return min(99, self.done * 100 // self.total)


READY = IndexStatus(True)

Step = Callable[[str], tuple[int, IndexStatus]]
"""Index at most BUILD_BATCH more turns of a chat; return (turns added, status after)."""


class Builder:
    """One thread that builds the chats asked for, oldest request first."""

    def __init__(self, step: Step, *, name: str = "recall-build") -> None:
        self._step = step
        self._name = name
        self._cond = threading.Condition()
        self._queue: list[str] = []
        self._current: str | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._foreground = 0  # callers indexing on a question's path right now: they go first
        self.built = 0  # chats built to the end (tests and benchmarks wait on it through wait_idle)

    def request(self, chat: str) -> None:
        """Build ``chat`` in the background (a no-op if it is queued or being built)."""
        with self._cond:
            if self._stopped or chat == self._current or chat in self._queue:
                return
            self._queue.append(chat)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify_all()

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        """Mark a question's own indexing: the builder starts no new batch until it is done.

        SQLite lets one writer at a time and a waiting writer polls with growing sleeps, so a builder
        committing batch after batch would starve it (seconds per question); with this it waits for
        at most the batch in progress.
        """
        with self._cond:
            self._foreground += 1
        try:
            yield
        finally:
            with self._cond:
                self._foreground -= 1
                self._cond.notify_all()

    def building(self, chat: str) -> bool:
        with self._cond:
            return chat == self._current or chat in self._queue

    def idle(self) -> bool:
        with self._cond:
            return self._current is None and not self._queue

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until nothing is queued or being built; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._current is None and not self._queue, timeout)

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the batch in progress (the rest is built at the chat's next question)."""
        with self._cond:
            self._stopped = True
            self._queue.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._stopped or not self._queue:
                    self._current = None
                    self._thread = None
                    self._cond.notify_all()
                    return
                chat = self._current = self._queue.pop(0)
            try:
                self._build(chat)
            except Exception:  # the index is derived: the chat's next question asks again
                if self._stopped:  # closed meanwhile: the connection in use was interrupted
                    log.info("recall index: building chat %s stopped; it goes on at its next question", chat)
                else:
                    log.warning(
                        "recall index: building chat %s failed; it is retried at its next question", chat, exc_info=True
                    )
            with self._cond:
                self._current = None
                self._cond.notify_all()

    def _build(self, chat: str) -> None:
        started = time.monotonic()
        last_log = started
        turns = 0
        status: IndexStatus | None = None
        while not self._stopped:
            with self._cond:  # questions first, but one batch at least every MAX_YIELD seconds
                self._cond.wait_for(lambda: not self._foreground or self._stopped, MAX_YIELD)
            added, status = self._step(chat)
            turns += added
            if status.ready:
                break
            now = time.monotonic()
            if status is not None and (turns == added or now - last_log >= LOG_EVERY):
                last_log = now
                log.info(
                    "recall index: chat %s: building in the background, %d%% (%.1f of %.1f MB, %s turns so far)",
                    chat, status.percent, status.done / 1e6, status.total / 1e6, f"{turns:,}",
                )  # fmt: skip
            if added == 0:
                # nothing indexed and not ready: the rest is a torn last line or a file that changed
                # meanwhile; the next question asks again
                break
        if status is not None and status.ready:
            with self._cond:
                self.built += 1
            log.info("recall index: chat %s: built, %s turns in %.1f s", chat, f"{turns:,}", time.monotonic() - started)
