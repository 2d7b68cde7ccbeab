"""The process that builds one chat's recall index in the background (memory.recall.build).

    python -m memory.recall.worker DATA_DIR INDEX_PATH CHAT [--nice N]

Started by the bot's RecallIndex, never by hand (though that is harmless: it is what the chat's next
question would do). It lowers its priority, indexes the chat batch by batch through the same code as
the bot (RecallIndex), and:

- reads its stdin between batches: "p" (the bot is preparing or storing a question: wait, at most
  MAX_YIELD seconds) and "r" (go on); at the end of its stdin (the bot stopped or died) it stops;
- writes one JSON line per batch on stdout, ``{"turns", "ready", "done", "total"}``, and its log
  lines as ``{"log": level, "message"}``.

Exit status 0 when the chat is indexed to the end, 3 when it stopped before.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import select
import sys
import time
from pathlib import Path

from memory.recall.build import BUILD_NICE, MAX_YIELD, PAUSE, IndexStatus, run_build
from memory.recall.index import RecallIndex


class Foreground:
    """What the bot says on our stdin: whether its questions are in progress, and whether it is there."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.paused = False
        self.gone = False

    def _read(self, timeout: float) -> bool:
        """Read what the bot said within ``timeout`` seconds; whether anything came."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return False
        data = os.read(self.fd, 4096)
        if not data:
            self.gone = True
        else:
            self.paused = data[-1:] == PAUSE  # the last word counts
        return True

    def may_go_on(self) -> bool:
        """Wait while the bot's questions are in progress (at most MAX_YIELD); False once the bot is gone."""
        while not self.gone and self._read(0):  # everything said since the last batch
            pass
        deadline = time.monotonic() + MAX_YIELD
        while self.paused and not self.gone and (left := deadline - time.monotonic()) > 0:
            self._read(left)
        return not self.gone


class _JsonLog(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            _say({"log": record.levelno, "message": record.getMessage()})


def _say(msg: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memory.recall.worker", description=__doc__)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("index", type=Path)
    parser.add_argument("chat")
    parser.add_argument("--nice", type=int, default=BUILD_NICE)
    args = parser.parse_args(argv)
    if args.nice:
        with contextlib.suppress(OSError):
            os.nice(args.nice)
    root = logging.getLogger()
    root.handlers[:] = [_JsonLog()]
    root.setLevel(logging.INFO)
    foreground = Foreground(sys.stdin.fileno())

    def progress(turns: int, status: IndexStatus) -> None:
        _say({"turns": turns, "ready": status.ready, "done": status.done, "total": status.total})

    with RecallIndex(args.data_dir, path=args.index, connections=1, build_in="thread") as index:
        _, status = run_build(index.build_step, args.chat, may_go_on=foreground.may_go_on, progress=progress)
    return 0 if status is not None and status.ready else 3


if __name__ == "__main__":
    sys.exit(main())
