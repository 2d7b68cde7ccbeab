"""Ctrl-C at the terminal's prompt taken at once, also while readline is busy with the keys typed before.

CPython's readline (Modules/readline.c, ``readline_until_enter_or_signal``) waits for a key in
``select()`` and runs Python's signal handlers only when that wait is interrupted (EINTR). A Ctrl-C
that lands while it handles a key (``rl_callback_read_char``: a long line being drawn, a paste)
only marks the SIGINT as pending; readline then waits in ``select()`` again, and the
KeyboardInterrupt comes with the next key.

``PromptInterrupts`` makes it come at once. Python's C signal handler writes the number of every
signal it takes to a wakeup fd (``signal.set_wakeup_fd``); a thread of ours reads it, and while the
main thread is still in the same ``input()`` call after a SIGINT, it sends the main thread ``NUDGE``
(``pthread_kill``), a signal whose Python handler does nothing: the ``select()`` is interrupted,
readline runs the pending handlers, and the SIGINT's raises KeyboardInterrupt there. A nudge when
nothing is pending (the SIGINT was taken already) costs readline one wake-up: the handler does
nothing and it waits on.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
import time
from typing import Any

from bot.cli.chat import ReadLine
from bot.cli.loop import sigint_to_main_thread

NUDGE = signal.SIGUSR2
NUDGE_AFTER = (0.005, 0.01, 0.02, 0.05)
"""Seconds between the first nudges after a SIGINT; then one every NUDGE_EVERY, for as long as the same
``input()`` call goes on. A nudge that lands while readline handles keys interrupts nothing; readline
waits for a key again only once the keys typed before are drawn, which takes seconds for a long paste on
a loaded machine (a cap of 2 s left the Ctrl-C for the next key there: a flake of
tests/test_cli_session.py beside two busy loops). The read ends as soon as the SIGINT is taken."""
NUDGE_EVERY = 0.1


def _nothing(signum: int, frame: Any) -> None:
    """NUDGE's handler: it only has to interrupt readline's wait."""


class PromptInterrupts:
    """Around the session (main thread only): ``reading(read)`` is ``read`` whose Ctrl-C is never left pending."""

    def __init__(self) -> None:
        self._main = threading.main_thread().ident or 0
        self._calls = 0  # odd while the main thread is in a read: each read has numbers of its own
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)  # set_wakeup_fd wants it so (the signal handler never blocks)
        self._thread = threading.Thread(target=self._watch, name="chat-sigint", daemon=True)
        self._old_fd = -1
        self._old_nudge: Any = None

    def __enter__(self) -> PromptInterrupts:
        self._old_nudge = signal.signal(NUDGE, _nothing)
        self._old_fd = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        with sigint_to_main_thread():  # the watcher itself never takes the Ctrl-C
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        signal.set_wakeup_fd(self._old_fd)
        signal.signal(NUDGE, self._old_nudge)
        os.close(self._write_fd)  # the watcher reads the end of the pipe and stops
        self._thread.join(5)
        with contextlib.suppress(OSError):
            os.close(self._read_fd)

    def reading(self, read: ReadLine) -> ReadLine:
        def wrapped(prompt: str) -> str | None:
            self._calls += 1
            try:
                return read(prompt)
            finally:
                self._calls += 1

        return wrapped

    def _watch(self) -> None:
        while True:
            try:
                taken = os.read(self._read_fd, 64)
            except OSError:
                return
            if not taken:
                return
            call = self._calls
            if signal.SIGINT not in taken or call % 2 == 0:
                continue  # another signal, or not at the prompt: Python takes the SIGINT by itself there
            for pause in itertools.chain(NUDGE_AFTER, itertools.repeat(NUDGE_EVERY)):
                time.sleep(pause)
                if self._calls != call:
                    break  # that read ended: the Ctrl-C was taken
                signal.pthread_kill(self._main, NUDGE)
