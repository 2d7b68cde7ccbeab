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
"""

from __future__ import annotations

import asyncio
import contextvars
import ssl
from collections.abc import Callable, Iterable
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


class GatedRequest(HTTPXRequest):
    """PTB's request with its connections gated (``gated`` says whether that worked on this httpx)."""

    gated = False

    def _build_client(self) -> httpx.AsyncClient:
        client = super()._build_client()
        self.gated = gate_client(client)
        return client
