"""Building a chat's recall index in the background, never on a question's path.

A chat whose transcripts hold much more than the index has (an upgrade that changed the index's
format, a restored backup, a deleted index, a chat imported from elsewhere) would make the question
that finds it wait for the whole build: 30 s for a million messages. Instead the question path
indexes at most ``sync_budget`` bytes (memory.recall.index) and hands anything larger to the
``Builder``: ONE thread per RecallIndex (not the event loop, not under any chat's lock) that has
the chats asked for built one after the other, in small transactions (``BUILD_BATCH`` turns each),
and starts no batch while a question's own work runs (``foreground``: preparing the request with its
indexing and search, storing the turn), so a question that writes to the index waits for at most
the inserts of one batch: a batch's lines are read, parsed and split into terms before SQLite's write
lock is taken (memory.recall.store, memory.recall.lines), so a worker at a low priority that loses the
CPU while it parses keeps no writer of another chat waiting. Measured at 100,000 messages: with the
parsing under the lock the worker held it 70% of its time (60% of that parsing) and another
connection's BEGIN IMMEDIATE waited 9 ms at the median; with it before, 18% and 0.1 ms.

The batches run in a separate process (``python -m memory.recall.worker``, at ``BUILD_NICE``), not in
the bot's: indexing is mostly Python (parsing and splitting text into terms), and a thread doing it
holds the interpreter's lock for 5 ms at a time, which every other thread that gives it up (each
SQLite call of a search does) waits for again. Measured (bench.recall_first_answer): the other
chats' answers were 2-4x slower with the build in a thread, as fast as idle with it in a process.
The worker reads "p"/"r" (questions in progress / none) on its stdin, writes its progress as JSON
lines on stdout, and stops at its next batch when its stdin closes (the bot stopped or died).
``build_in="thread"`` keeps the build in the caller's process (the previous way; benchmarks compare
the two).

Searches meanwhile read what is indexed so far. Progress goes to the log (at the start, every
``LOG_EVERY`` seconds, at the end) and into the index (``meta`` key ``building:<chat>``, JSON
``{"done", "total", "started", "updated"}``) where ``python -m bot doctor`` reads it
(memory.recall.verify). A build that is stopped (the bot stops, the worker is killed) leaves every
batch it committed; the chat's next question goes on from there.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Literal

log = logging.getLogger(__name__)

BUILD_BATCH = 250  # turns per transaction in the background (a few ms of indexing)
MAX_YIELD = 0.25  # seconds the builder waits for the questions in progress before its next batch anyway
LOG_EVERY = 10.0  # seconds between progress lines in the log
BUILDING_KEY = "building:"  # meta key prefix of a build in progress
BUILD_NICE = 10  # the worker process's niceness: the bot's own threads get the CPU first
STOP_GRACE = 5.0  # seconds a stopped worker has to finish its batch before it is terminated
PAUSE, RESUME = b"p", b"r"  # what the worker reads on its stdin: questions in progress / none

BuildIn = Literal["process", "thread"]


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


def run_build(
    step: Step, chat: str, *, may_go_on: Callable[[], bool], progress: Callable[[int, IndexStatus], None]
) -> tuple[int, IndexStatus | None]:
    """Index ``chat`` batch by batch until it is ready; return (turns added, last status).

    ``may_go_on`` is asked before every batch (it waits while questions are in progress) and stops
    the build when it returns False; ``progress`` gets the turns added so far and the status after
    each batch.
    """
    turns = 0
    status: IndexStatus | None = None
    while may_go_on():
        added, status = step(chat)
        turns += added
        progress(turns, status)
        if status.ready or added == 0:
            # added == 0 and not ready: the rest is a torn last line or a file that changed meanwhile;
            # the next question asks again
            break
    return turns, status


class Builder:
    """One thread that has the chats asked for built, oldest request first.

    ``step`` builds one batch in this process (``build_in="thread"``); ``command`` is the worker's
    command line for a chat (``build_in="process"``, the default of RecallIndex).
    """

    def __init__(
        self,
        step: Step,
        *,
        command: Callable[[str], list[str]] | None = None,
        name: str = "recall-build",
        quiet: bool = False,
    ) -> None:
        self._step = step
        self._command = command
        self._name = name
        self._quiet = quiet  # no progress lines in the log (small, frequent work: the vectors of new turns)
        self._cond = threading.Condition()
        self._queue: list[str] = []
        self._current: str | None = None
        self._thread: threading.Thread | None = None
        self._worker: subprocess.Popen[bytes] | None = None
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
            if self._foreground == 1:
                self._tell_worker(PAUSE)
        try:
            yield
        finally:
            with self._cond:
                self._foreground -= 1
                if self._foreground == 0:
                    self._tell_worker(RESUME)
                self._cond.notify_all()

    def _tell_worker(self, what: bytes) -> None:
        """Pass the foreground state to the worker process, never blocking (under ``_cond``)."""
        worker = self._worker
        if worker is None or worker.stdin is None:
            return
        with contextlib.suppress(OSError, ValueError):  # gone, or a full pipe: it asks again in MAX_YIELD
            os.write(worker.stdin.fileno(), what)

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
        """Stop the build (a worker process at once, a thread after its batch); the rest is built at the
        chat's next question."""
        with self._cond:
            self._stopped = True
            self._queue.clear()
            self._cond.notify_all()
            thread = self._thread
            worker = self._worker
        if worker is not None:  # killing it mid-batch loses that batch only (a transaction not committed)
            with contextlib.suppress(OSError):
                worker.terminate()
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
                ready = self._build_in_process(chat) if self._command is not None else self._build_here(chat)
                if ready:
                    with self._cond:
                        self.built += 1
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

    def _build_here(self, chat: str) -> bool:
        """The build in this process's builder thread (``build_in="thread"``)."""
        report = _Progress(chat, quiet=self._quiet)

        def may_go_on() -> bool:
            with self._cond:  # questions first, but one batch at least every MAX_YIELD seconds
                self._cond.wait_for(lambda: not self._foreground or self._stopped, MAX_YIELD)
                return not self._stopped

        _, status = run_build(self._step, chat, may_go_on=may_go_on, progress=report)
        return report.end(status)

    def _build_in_process(self, chat: str) -> bool:
        """The build in a worker process (memory.recall.worker); this thread relays its progress."""
        assert self._command is not None
        report = _Progress(chat)
        status: IndexStatus | None = None
        with self._cond:
            if self._stopped:
                return False
            worker = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                self._command(chat),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=_worker_env(),
                start_new_session=True,  # a Ctrl-C in the terminal is the bot's to handle: it stops the worker
            )
            assert worker.stdin is not None and worker.stdout is not None
            os.set_blocking(worker.stdin.fileno(), False)
            self._worker = worker
            if self._foreground:
                self._tell_worker(PAUSE)
        try:
            for line in _lines(worker.stdout):
                try:
                    msg = json.loads(line)
                except ValueError:
                    log.warning("recall index: building chat %s: %s", chat, line)
                    continue
                if not isinstance(msg, dict):
                    continue
                if "log" in msg:  # the worker's own log line
                    log.log(int(msg["log"]), "recall index (worker): %s", msg.get("message", ""))
                elif "turns" in msg:
                    status = IndexStatus(bool(msg["ready"]), int(msg["done"]), int(msg["total"]), True)
                    report(int(msg["turns"]), status)
        finally:
            with self._cond:
                self._worker = None
            with contextlib.suppress(OSError, ValueError):
                worker.stdin.close()
            try:
                code = worker.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                worker.kill()
                code = worker.wait()
            worker.stdout.close()
        if code != 0 and not self._stopped:
            log.warning("recall index: the worker building chat %s exited with %s; retried at its next question",
                        chat, code)  # fmt: skip
        return report.end(status)


def _lines(stream: IO[bytes]) -> Iterator[str]:
    for raw in stream:
        text = raw.decode("utf-8", "replace").strip()
        if text:
            yield text


SECRET_NAMES = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|PRIVATE_?KEY|AUTH", re.IGNORECASE)
"""Environment variables a worker never gets: it reads the data directory and needs no key
(TELEGRAM_BOT_TOKEN, ANTHROPIC_API_KEY, WEBHOOK_SECRET, and anything else named like a secret)."""


def _worker_env() -> dict[str, str]:
    """The environment of a worker: this one without the secrets (``SECRET_NAMES``), with the directory
    this package was imported from first on the import path (the worker runs the same code as the bot,
    wherever it was started)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {k: v for k, v in os.environ.items() if not SECRET_NAMES.search(k)}
    env["PYTHONPATH"] = os.pathsep.join([root, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    return env


class _Progress:
    """The log lines of one build: at its first batch, every LOG_EVERY seconds, and at the end."""

    def __init__(self, chat: str, *, quiet: bool = False) -> None:
        self.chat = chat
        self.quiet = quiet
        self.started = time.monotonic()
        self.last_log: float | None = None
        self.turns = 0

    def __call__(self, turns: int, status: IndexStatus) -> None:
        self.turns = turns
        now = time.monotonic()
        if self.quiet or status.ready or (self.last_log is not None and now - self.last_log < LOG_EVERY):
            return
        self.last_log = now
        log.info(
            "recall index: chat %s: building in the background, %d%% (%.1f of %.1f MB, %s turns so far)",
            self.chat, status.percent, status.done / 1e6, status.total / 1e6, f"{turns:,}",
        )  # fmt: skip

    def end(self, status: IndexStatus | None) -> bool:
        ready = status is not None and status.ready
        if ready and not self.quiet:
            log.info(
                "recall index: chat %s: built, %s turns in %.1f s",
                self.chat, f"{self.turns:,}", time.monotonic() - self.started,
            )  # fmt: skip
        return ready
