"""The recall build worker (memory.recall.worker) held at a gate: the worker side of tests.helpers.Gate
(tests/test_recall_build.py, tests/test_recall_deleted.py).

    python tests/recall_worker_gate.py GATE_DIR FREE BATCH HOLD -- DATA_DIR INDEX CHAT

Runs the real worker with ``index_file`` wrapped: after FREE calls it creates GATE_DIR/reached and
waits until GATE_DIR/open exists. Writes GATE_DIR/worker ("<pid> <niceness>") at each batch and
GATE_DIR/paused when it reads that the bot's questions are in progress. BATCH (if not 0) replaces
BUILD_BATCH; HOLD=1 makes the worker wait for the end of the questions however long they take.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from memory.recall import index as index_module
from memory.recall import worker

WAIT = 120.0  # generous: only reached if the test is broken


def main() -> int:
    gate, free, batch, hold = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
    args = sys.argv[sys.argv.index("--") + 1 :]
    real = index_module.index_file
    calls = 0

    def gated(*a: Any, **k: Any) -> tuple[int, bool]:
        nonlocal calls
        (gate / "worker").write_text(f"{os.getpid()} {os.nice(0)}")
        calls += 1
        if calls > free:
            (gate / "reached").touch()
            deadline = time.monotonic() + WAIT
            while not (gate / "open").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return real(*a, **k)

    index_module.index_file = gated  # type: ignore[assignment]
    if batch:
        index_module.BUILD_BATCH = batch
    if hold:
        worker.MAX_YIELD = WAIT  # type: ignore[misc]
    read = worker.Foreground._read

    def noted(self: worker.Foreground, timeout: float) -> bool:
        got = read(self, timeout)
        if self.paused:
            (gate / "paused").touch()
        return got

    worker.Foreground._read = noted  # type: ignore[method-assign]
    return worker.main(args)


if __name__ == "__main__":
    sys.exit(main())
