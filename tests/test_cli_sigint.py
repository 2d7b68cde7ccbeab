"""Ctrl-C at the terminal's prompt (bot/cli/sigint.py): the main thread is nudged until its read takes the SIGINT."""

from __future__ import annotations

import os
import signal
from types import SimpleNamespace

import pytest

from bot.cli import sigint


def test_the_nudges_go_on_until_the_read_takes_the_ctrl_c(monkeypatch: pytest.MonkeyPatch):
    """readline notices the SIGINT only once it waits for a key again, after drawing every key typed before: on a
    loaded machine, a long paste takes seconds. Here it is the 100th nudge (the first ones took 2 s, a cap of 24
    left the Ctrl-C for the next key); no clock: the pauses are recorded, not slept."""
    watcher = sigint.PromptInterrupts()
    watcher._calls = 1  # the main thread is in a read
    nudges: list[int] = []
    pauses: list[float] = []

    def kill(thread: int, signum: int) -> None:
        nudges.append(signum)
        if len(nudges) == 100:  # readline waits for a key again: the SIGINT raises there, the read ends
            watcher._calls += 1

    monkeypatch.setattr(sigint, "signal", SimpleNamespace(SIGINT=signal.SIGINT, pthread_kill=kill))

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) > 1000:  # never nudged: the next key ends the read, as without the watcher
            watcher._calls += 1

    monkeypatch.setattr(sigint, "time", SimpleNamespace(sleep=sleep))
    os.write(watcher._write_fd, bytes([signal.SIGINT]))
    os.close(watcher._write_fd)  # the watcher reads the end of the pipe and returns
    try:
        watcher._watch()
    finally:
        os.close(watcher._read_fd)
    assert nudges == [sigint.NUDGE] * 100
    assert pauses[: len(sigint.NUDGE_AFTER)] == list(sigint.NUDGE_AFTER)
    assert set(pauses[len(sigint.NUDGE_AFTER) :]) == {sigint.NUDGE_EVERY} and len(pauses) == 101
