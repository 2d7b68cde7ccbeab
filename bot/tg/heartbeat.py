"""A heartbeat file for health checks: its modification time says the bot is alive.

- Long polling: touched after every ``getUpdates`` that Telegram answered (at least every
  poll timeout, ~10 s, also when nobody writes), so a stale file means the bot no longer
  reaches Telegram or hangs.
- Webhook: touched every ``interval`` seconds while the webhook server runs.

``python -m bot doctor --only heartbeat`` (the Docker HEALTHCHECK) reads its age.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import Any

from telegram.ext import Application
from telegram.request import HTTPXRequest

log = logging.getLogger(__name__)

WEBHOOK_INTERVAL = 15.0


def beat(path: Path) -> None:
    """Create (0600) or touch the heartbeat file; failures are logged once per kind, never raised."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.utime(fd)
        finally:
            os.close(fd)
    except OSError as e:
        if getattr(beat, "_warned", None) != e.errno:
            beat._warned = e.errno  # type: ignore[attr-defined]
            log.warning("cannot touch the heartbeat file %s: %s", path, e.strerror)


class PollingHeartbeatRequest(HTTPXRequest):
    """The request object for ``getUpdates`` (one connection, as PTB's default) that beats on each answer."""

    def __init__(self, path: Path, **kwargs: Any) -> None:
        super().__init__(connection_pool_size=1, **kwargs)
        self.heartbeat_path = path

    async def do_request(self, url: str, method: str, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        code, payload = await super().do_request(url, method, *args, **kwargs)
        if code == 200 and url.endswith("/getUpdates"):
            await asyncio.to_thread(beat, self.heartbeat_path)
        return code, payload


def install_webhook_heartbeat(app: Application, path: Path, interval: float = WEBHOOK_INTERVAL) -> None:
    """Beat every ``interval`` seconds while the application's webhook server runs."""
    previous_init, previous_stop = app.post_init, app.post_stop
    tasks: list[asyncio.Task[None]] = []

    async def loop() -> None:
        while True:
            running = app.updater is not None and app.updater.running
            if running:
                await asyncio.to_thread(beat, path)
            await asyncio.sleep(interval if running else 0.2)  # the first beat as soon as the server runs

    async def post_init(application: Application) -> None:
        if previous_init is not None:
            await previous_init(application)
        tasks.append(asyncio.get_running_loop().create_task(loop()))

    async def post_stop(application: Application) -> None:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if previous_stop is not None:
            await previous_stop(application)

    app.post_init = post_init
    app.post_stop = post_stop
