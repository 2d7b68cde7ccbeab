"""An asyncio event loop on virtual time, for tests of code that sleeps and throttles.

Whenever no callback is ready and no I/O is pending, the loop's clock jumps straight to
the next timer instead of waiting for it. ``asyncio.sleep``, ``wait_for`` timeouts and
``loop.time()`` all follow this clock, so a test can sleep "3 seconds" in no real time and
assert exact times and counts: no load on the machine can stretch or squeeze them.

Only for code that does no real I/O or threads while timers are pending (the clock would
run ahead of them); a wait with no timer at all blocks for real, as usual.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self._now = 0.0
        select = self._selector.select  # type: ignore[attr-defined]

        def fast_forward(timeout: float | None = None) -> Any:
            if timeout is None:  # nothing scheduled: wait for I/O for real
                return select(None)
            events = select(0)
            if not events and timeout > 0:
                self._now += timeout  # nothing to do until the next timer: go there
            return events

        self._selector.select = fast_forward  # type: ignore[attr-defined]

    def time(self) -> float:
        return self._now


def run_virtual(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to the end on a fresh virtual-time loop."""
    loop = VirtualTimeLoop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()
