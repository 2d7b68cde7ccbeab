"""A small threaded HTTP server base for the fakes (kernel-chosen port on 127.0.0.1)."""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HANG_GUARD_SCALE = float(os.environ.get("TEST_HANG_GUARD_SCALE", "3"))
"""How much longer than written every wait of the tests may last before it counts as a hang."""


def hang_guard(seconds: float) -> float:
    """The time a test waits for something before calling it a hang: ``seconds`` times HANG_GUARD_SCALE.

    The timeouts written in the tests are hang guards, never assertions about speed: the suite runs
    in parallel workers on a 2-core machine that may be busy with other work, where a bot process
    takes many times longer than alone to import its libraries.
    """
    return seconds * HANG_GUARD_SCALE


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # the listen backlog: hundreds of clients may connect at once (bench/)

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client went away (e.g. a bot process stopped mid long-poll)
        super().handle_error(request, client_address)


class FakeHTTPServer:
    """Start with ``start()`` (or as a context manager); ``url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # TCP_NODELAY: an answer is written as its head and then its body (``respond``), two small sends.
            # With Nagle's algorithm the body waited for the client's delayed ACK of the head, up to 40 ms
            # on loopback, a delay no real server adds (and the flood limiter charges the round trip).
            disable_nagle_algorithm = True

            def do_GET(self) -> None:  # noqa: N802
                owner.handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                owner.handle(self, "POST")

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        # stop() waits until serve_forever sees the request to end, which it checks every poll_interval
        # (0.5 s by default: half a second, or a second for two fakes, at the end of every test)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeHTTPServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeHTTPServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        raise NotImplementedError

    @staticmethod
    def read_body(request: BaseHTTPRequestHandler) -> bytes:
        length = int(request.headers.get("Content-Length") or 0)
        return request.rfile.read(length) if length else b""

    @staticmethod
    def respond(
        request: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        request.send_response(status)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            request.send_header(k, v)
        request.end_headers()
        request.wfile.write(body)
