"""The terminal chat's event loop in a thread of its own, and Ctrl-C kept for the main thread.

The main thread reads the keyboard with ``input()`` (readline's line editing and Ctrl-C need the
main thread) while the loop goes on with the work of the background (the summary after an answer,
bot/core/upkeep.py), so the next prompt never waits for it (bot/cli/chat.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """The session's asyncio loop, running in a thread of its own for the whole session.

    The main thread reads the keyboard with ``input()`` (readline's line editing and Ctrl-C need
    the main thread) while the loop goes on with the work of the background (the summary after an
    answer, bot/core/upkeep.py), so the next prompt never waits for it.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="chat-loop", daemon=True)

    def _run(self) -> None:
        self.loop.run_forever()

    def __enter__(self) -> LoopThread:
        with sigint_to_main_thread():
            self.thread.start()
        return self

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, fn: Callable[[], None]) -> None:
        self.loop.call_soon_threadsafe(fn)

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(BaseException):
            self.submit(_cancel_all()).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        with contextlib.suppress(Exception):
            self.loop.run_until_complete(self.loop.shutdown_default_executor())
        self.loop.close()


@contextlib.contextmanager
def sigint_to_main_thread() -> Iterator[None]:
    """Threads started inside this block never take SIGINT (they inherit the blocked signal).

    Ctrl-C must reach the main thread, waiting in ``input()`` (readline's select) or for an answer:
    the kernel hands a process signal to any thread that does not block it, and a signal taken by
    another thread would not wake the main one. So every thread of the chat is started in here.
    """
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask here
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


async def _cancel_all() -> None:
    """Cancel whatever is left on the session's loop, and let it finish."""
    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not current and not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending)
