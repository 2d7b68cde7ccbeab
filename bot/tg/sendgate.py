"""The moments a message really leaves and its answer really comes back, at the socket.

The flood limiter (bot/tg/ratelimit.py) must charge every message from the moment its bytes may reach
Telegram until a second after Telegram's answer (bot/tg/budget.py says why). Measured at the limiter,
both ends carry the bot's own event loop: a message granted at ``g`` leaves only several turns of the
loop later (python-telegram-bot, httpx and httpcore's pool each wait a turn), and its answer, once read,
reaches the limiter a turn after that. On a busy loop those turns were most of what a message cost
beyond its second (about 6-7 turns on the way out and 4 back, 35-45 ms with 100 busy tasks).

``GatedRequest`` is PTB's ``HTTPXRequest`` whose connections go through ``GatedStream``:

- the first write of a request waits until its ``Gate.not_before`` (the limiter may grant a message a
  little before its place in the window frees, so that it is ready to go at that moment, but its bytes
  never leave before it), and notes when they left (``Gate.written``);
- the first bytes read after that note the answer (``Gate.answered``): Telegram answers a request only
  after receiving it, so counting a second from there is as safe as counting from the limiter's later view.

The gate travels in a context variable (``GATE``): PTB sends a request in the task that asked for it.

**The requests run on an event loop of their own** (``IOThread``): a thread that does nothing but Telegram's
HTTP. Both moments are taken by whichever loop runs the socket, and on the bot's own loop, in a busy minute,
one turn took 100-200 ms (200 answers streaming, stored and sent at once): a gate due at ``not_before``
opened that much late, and an answer that had come in was noticed that much late, and the place was charged
for both (measured per message against the fake Telegram's own clock, bench/RESULTS.md). On a loop of its
own the gate opens and the answer is read within a switch of the GIL. The limiter, PTB and the handlers stay
on the bot's loop; only ``do_request`` (and the client's start and close) cross over, with the gate.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ssl
import threading
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from httpcore import AsyncNetworkBackend, AsyncNetworkStream
from telegram.request import HTTPXRequest

if TYPE_CHECKING:  # PTB's own client: the bot's HTTP to Telegram is PTB's (only the type is named here)
    import httpx


class Gate:
    """One request's send moment: not before ``not_before`` on ``clock``; what happened, once it did."""

    __slots__ = ("answered", "clock", "not_before", "written")

    def __init__(self, not_before: float, clock: Callable[[], float]) -> None:
        self.not_before = not_before
        self.clock = clock
        self.written: float | None = None
        self.answered: float | None = None


GATE: contextvars.ContextVar[Gate | None] = contextvars.ContextVar("telegram_send_gate", default=None)


class GatedStream(AsyncNetworkStream):
    """A connection whose writes wait for the current request's gate, and whose reads note its answer."""

    def __init__(self, inner: AsyncNetworkStream) -> None:
        self._inner = inner

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        gate = GATE.get()
        if gate is not None and gate.written is None:
            while (wait := gate.not_before - gate.clock()) > 0:
                await asyncio.sleep(wait)
            gate.written = gate.clock()
        await self._inner.write(buffer, timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = await self._inner.read(max_bytes, timeout)
        gate = GATE.get()
        if data and gate is not None and gate.written is not None and gate.answered is None:
            gate.answered = gate.clock()
        return data

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> AsyncNetworkStream:
        return GatedStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class GatedBackend(AsyncNetworkBackend):
    """httpcore's network backend with every connection a ``GatedStream``."""

    def __init__(self, inner: AsyncNetworkBackend) -> None:
        self._inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> AsyncNetworkStream:
        return GatedStream(await self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> AsyncNetworkStream:
        return GatedStream(await self._inner.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def gate_client(client: httpx.AsyncClient) -> bool:
    """Put ``GatedBackend`` under every transport of ``client`` (its own and any proxy's mounted for the
    environment); False, changing nothing, when one of them is not httpcore's pool as this code knows it."""
    transports = [client._transport, *(t for t in client._mounts.values() if t is not None)]  # noqa: SLF001
    pools = [getattr(t, "_pool", None) for t in transports]
    if not all(hasattr(p, "_network_backend") for p in pools):
        return False
    for pool in pools:
        if not isinstance(pool._network_backend, GatedBackend):  # type: ignore[union-attr]  # noqa: SLF001
            pool._network_backend = GatedBackend(pool._network_backend)  # type: ignore[union-attr]  # noqa: SLF001
    return True


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: Any) -> None:
    with contextlib.suppress(RuntimeError):  # that loop is closed: nobody is waiting any more
        loop.call_soon_threadsafe(callback, *args)


class IOThread:
    """An event loop running in a daemon thread of its own, for coroutines handed over with ``run``."""

    def __init__(self, name: str = "telegram-io") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:  # stopped: what still runs here is cancelled, and its callers hear of it
            left = asyncio.all_tasks(self.loop)
            for task in left:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_default_executor())  # its name lookups' threads
            self.loop.close()

    async def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Await ``coro`` run on this loop, in a copy of the caller's context (its gate).

        Cancelled, it cancels the coroutine there and returns only once that ended: a request still
        writing on the other side after its caller gave up would leave its place uncounted.
        """
        here = asyncio.get_running_loop()
        ended: asyncio.Future[asyncio.Task[Any]] = here.create_future()
        task: list[asyncio.Task[Any]] = []

        def settle(t: asyncio.Task[Any]) -> None:
            if not ended.done():
                ended.set_result(t)

        def start() -> None:  # on this loop, in the caller's context (call_soon_threadsafe copied it)
            t = self.loop.create_task(coro)
            task.append(t)
            t.add_done_callback(lambda t: _call_soon(here, settle, t))

        self.loop.call_soon_threadsafe(start)
        try:
            finished = await asyncio.shield(ended)
        except asyncio.CancelledError:
            self.loop.call_soon_threadsafe(lambda: task[0].cancel())  # start ran first: this loop keeps the order
            while not ended.done():
                try:
                    await asyncio.shield(ended)
                except asyncio.CancelledError:
                    continue
            raise
        return finished.result()

    def stop(self) -> None:
        """Stop the loop (what it still runs is dropped) and wait for the thread."""
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()


class GatedRequest(HTTPXRequest):
    """PTB's request with its connections gated (``gated`` says whether that worked on this httpx), its HTTP
    run on an ``IOThread`` between ``initialize`` and ``shutdown``."""

    gated = False
    _io: IOThread | None = None

    def _build_client(self) -> httpx.AsyncClient:
        client = super()._build_client()
        self.gated = gate_client(client)
        return client

    async def initialize(self) -> None:
        if self._io is None:
            self._io = IOThread()
        await self._io.run(super().initialize())

    async def shutdown(self) -> None:
        io, self._io = self._io, None
        if io is None:
            await super().shutdown()
            return
        try:
            await io.run(super().shutdown())
        finally:
            await asyncio.to_thread(io.stop)

    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        coro = super().do_request(*args, **kwargs)
        return await (self._io.run(coro) if self._io is not None else coro)
