"""Work after a reply, in the background: index the new turn for recall, then compact the summary.

Never under the chat's lock: questions that arrive meanwhile are answered at once with the
previous summary and the tail. One upkeep task per chat at a time; compaction has a total time
limit and holds the chat's cross-process summary lock (skipped if another process holds it).
A cancelled compaction (shutdown, /reset) writes nothing.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging

from memory.recall import RecallIndex
from memory.summary import SummaryMemory

log = logging.getLogger(__name__)

payer: contextvars.ContextVar[tuple[str, int | None] | None] = contextvars.ContextVar("payer", default=None)
"""(chat, user) whose work the current upkeep task does: read by the summarizer's usage report
(bot/wiring.py), so a summary is charged to the user who caused it."""


class Upkeep:
    def __init__(self, memory: SummaryMemory, recall: RecallIndex | None, timeout: float) -> None:
        self.memory = memory
        self.recall = recall
        self.timeout = timeout
        self._tasks: dict[str, asyncio.Task[None]] = {}

    async def schedule(self, chat_id: int | str, *, user_id: int | None = None, wait: bool = True) -> None:
        """Start the chat's upkeep unless it is running; with ``wait``, return when it is done. Never raises."""
        if not self.memory.enabled and self.recall is None:
            return
        key = str(chat_id)
        task = self._tasks.get(key)
        if task is None or task.done():
            context = contextvars.copy_context()
            context.run(payer.set, (key, user_id))
            task = asyncio.create_task(self._run(chat_id), name=f"upkeep-{key}", context=context)
            self._tasks[key] = task
            task.add_done_callback(lambda t: self._tasks.pop(key, None) if self._tasks.get(key) is t else None)
        if wait:
            await asyncio.wait({task})  # not cancelled with the waiter; its outcome is logged there

    async def _run(self, chat_id: int | str) -> None:
        if self.recall is not None:
            try:
                # a long backlog (no index yet) goes to the index's background build (memory/recall/worker.py)
                await asyncio.to_thread(self.recall.catch_up, chat_id)
            except Exception:  # the index is derived: it catches up at the next search
                log.warning("chat %s: indexing for recall failed", chat_id, exc_info=True)
        if self.memory.enabled:
            await self._compact(chat_id)

    async def _compact(self, chat_id: int | str) -> None:
        try:
            await asyncio.wait_for(self.memory.compact(chat_id), self.timeout)
        except TimeoutError:
            log.warning(
                "chat %s: compaction took over %.0f s; stopped, the previous summary is kept", chat_id, self.timeout
            )
        except asyncio.CancelledError:
            log.info("chat %s: compaction cancelled; nothing was written", chat_id)
            raise
        except Exception:
            log.warning("chat %s: compaction failed; the previous summary is kept", chat_id, exc_info=True)

    @property
    def busy(self) -> bool:
        """Whether some chat's upkeep is still running."""
        return any(not t.done() for t in self._tasks.values())

    async def drain(self) -> None:
        """Wait until every running upkeep task is done (a front end leaving lets them finish)."""
        while tasks := [t for t in self._tasks.values() if not t.done()]:
            await asyncio.wait(tasks)

    async def cancel(self, chat_id: int | str) -> None:
        task = self._tasks.get(str(chat_id))
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def aclose(self) -> None:
        """Cancel every upkeep task (at shutdown)."""
        tasks = [t for t in self._tasks.values() if not t.done()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # the recall index is not closed here: a worker thread may still be inside it (a cancelled
        # to_thread keeps running); its connections close with the process
