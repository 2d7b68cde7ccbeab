"""Finals granted a little early wait at the socket (bot/tg/sendgate.py), and the window still never lets 31
reach Telegram in one second. The limiter's tests run in virtual time (tests/test_tg_ratelimit.py's clock);
the gate's own run on the real event loop against a stand-in stream and the fake Telegram server."""

import asyncio
import itertools
import logging
import random
import ssl
import time
from pathlib import Path

import pytest
from telegram.ext import ExtBot

from bot.tg.budget import Window
from bot.tg.ratelimit import FloodLimiter, Limits
from bot.tg.sendgate import GATE, Gate, GatedRequest, GatedStream, gate_client
from tests.fakes.telegram_server import FakeTelegram, FloodControl
from tests.helpers import app_settings
from tests.test_tg_ratelimit import VirtualTime, done

LEAD = 0.05


def test_a_full_window_hands_the_place_that_frees_first_to_a_message_granted_early():
    w = Window(2)
    w.take(0.0)
    w.take(0.0)
    w.done(0.30)  # counts until 1.30
    w.done(0.10)  # counts until 1.10
    assert not w.ready(1.0, 0.0) and not w.ready(1.0, LEAD)  # nothing frees within 50 ms
    assert w.ready(1.06, LEAD) and not w.ready(1.06, 0.0)
    assert w.take(1.06, LEAD) == pytest.approx(1.10)  # its bytes may leave once the place frees, not before
    assert w.level(1.06) == 0  # the other place is still counted, and this message in flight
    assert not w.ready(1.20, LEAD)  # the next place frees at 1.30: more than 50 ms away
    assert w.take(1.50) == 1.50  # a free place: at once


def test_a_lowered_rate_grants_nothing_early_while_over_it():
    w = Window(3)
    for _ in range(3):
        w.take(0.0)
    for at in (0.1, 0.2, 0.3):
        w.done(at)
    w.limit = 2  # lowered after 429s: one place too many is counted
    assert not w.ready(1.08, LEAD)  # freeing the first place leaves none
    assert w.ready(1.18, LEAD)  # the first freed; the second frees within the lead


class GatedTelegram:
    """Telegram behind the gate, in virtual time: a request takes ``prep(i)`` seconds of the bot's own work
    before it reaches the socket, waits there until its gate opens (unless ``honour`` is off), arrives
    ``there`` later, is counted by the fake's strict flood control (never 31 in any one second), and its
    answer comes in ``back`` later and reaches the limiter ``notice(i)`` after that."""

    def __init__(self, clock: VirtualTime, limiter: FloodLimiter, prep, notice, honour: bool = True) -> None:
        self.clock, self.limiter, self.prep, self.notice, self.honour = clock, limiter, prep, notice, honour
        self.there, self.back = 0.001, 0.001
        self.flood = FloodControl(clock=clock, strict=True)
        self.received: list[float] = []
        self._count = itertools.count()

    async def _after(self, seconds: float) -> None:
        event = asyncio.Event()
        self.clock.call_later(max(0.0, seconds), event.set)
        await event.wait()

    def send(self, chat_id: int) -> asyncio.Task:
        async def callback():
            i = next(self._count)
            gate = GATE.get()
            assert gate is not None  # the limiter hands every request its gate
            await self._after(self.prep(i))
            if self.honour:
                await self._after(gate.not_before - self.clock.now)
            gate.written = self.clock.now
            await self._after(self.there)
            refused = self.flood.check("sendMessage", chat_id)
            if not refused:
                self.received.append(self.clock.now)
            await self._after(self.back)
            gate.answered = self.clock.now
            await self._after(self.notice(i))
            assert not refused, "31 in one second at Telegram's end"
            return True

        data = {"chat_id": chat_id}
        return asyncio.create_task(self.limiter.process_request(callback, (), {}, "sendMessage", data, None))


def run(lead: float, seed: int, honour: bool = True, messages: int = 300) -> tuple[GatedTelegram, list, VirtualTime]:
    clock = VirtualTime()
    limiter = FloodLimiter(clock=clock, call_later=clock.call_later, lead=lead)
    rng = random.Random(seed)
    preps = [abs(rng.gauss(0.02, 0.015)) for _ in range(messages)]  # 6-7 turns of a busy loop on the way out
    notices = [abs(rng.gauss(0.01, 0.008)) for _ in range(messages)]  # a few more on the way back
    telegram = GatedTelegram(clock, limiter, lambda i: preps[i], lambda i: notices[i], honour)
    return telegram, [telegram.send(10_000 + i) for i in range(messages)], clock


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_early_grants_never_put_31_in_a_second_and_send_more_in_the_same_time(seed):
    last = {}
    for lead in (0.0, LEAD):
        telegram, tasks, clock = run(lead, seed)
        await clock.advance(14.0)
        assert len(telegram.received) == 300 and telegram.flood.refused == {}
        last[lead] = telegram.received[-1]
        await done(asyncio.gather(*tasks))
    # without the lead each of the 9 later seconds also waits for the next message's way out (~20 ms)
    assert last[LEAD] < last[0.0] - 0.1


async def test_a_telegram_reached_before_the_gate_opens_would_count_31():
    # the gate is what makes the early grant safe: sending at once when granted puts 31 in a second
    telegram, tasks, clock = run(LEAD, 1, honour=False)
    await clock.advance(14.0)
    assert telegram.flood.refused != {}
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_without_a_gate_on_the_path_nothing_more_is_granted_early(caplog):
    clock = VirtualTime()
    limiter = FloodLimiter(clock=clock, call_later=clock.call_later, lead=LEAD)

    async def callback():  # a request that never passed a GatedStream
        return True

    with caplog.at_level(logging.WARNING):
        await done(limiter.process_request(callback, (), {}, "sendMessage", {"chat_id": 5}, None))
    assert limiter.lead == 0.0
    assert "not gated" in caplog.text


class Inner:
    """A stand-in connection: records the gate's clock at each write and hands out queued reads."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self.writes: list[float] = []
        self.reads: list[bytes] = []
        self.tls = False

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.writes.append(self.clock())

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.reads.pop(0)

    async def aclose(self) -> None:
        pass

    async def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        self.tls = True
        return self

    def get_extra_info(self, info: str):
        return info


async def test_the_first_write_waits_for_the_gate_and_the_first_bytes_after_it_note_the_answer():
    clock = time.monotonic
    inner = Inner(clock)
    stream = GatedStream(inner)
    inner.reads = [b"", b"early", b"HTTP/1.1 200 OK\r\n", b"more"]
    gate = Gate(clock() + 0.05, clock)
    token = GATE.set(gate)
    try:
        assert await stream.read(10) == b""
        assert await stream.read(10) == b"early"
        assert gate.answered is None  # nothing written yet: no answer to note
        await stream.write(b"POST /")
        await stream.write(b"body")
        assert inner.writes[0] >= gate.not_before  # nothing left before the gate opened
        assert gate.written is not None and gate.written >= gate.not_before
        await stream.read(10)
        first = gate.answered
        assert first is not None and first >= gate.written
        await stream.read(10)
        assert gate.answered == first  # the first bytes of the answer
    finally:
        GATE.reset(token)
    await stream.write(b"no gate")  # a request without a gate (getUpdates, tests) goes at once
    assert len(inner.writes) == 3
    tls = await stream.start_tls(None)
    assert isinstance(tls, GatedStream) and inner.tls  # the encrypted stream is gated too
    assert stream.get_extra_info("is_readable") == "is_readable"


async def send_through_a_gate(tg: FakeTelegram, request: GatedRequest, base_url: str) -> None:
    """Send one message through ``request`` with a gate opening 50 ms on; it must reach ``tg`` only then, and
    the gate must have seen it leave and its answer come in."""
    assert request.gated
    bot = ExtBot(tg.token, base_url=base_url, request=request)
    await bot.initialize()
    try:
        gate = Gate(time.monotonic() + 0.05, time.monotonic)
        token = GATE.set(gate)
        try:
            await bot.send_message(5, "hi")
        finally:
            GATE.reset(token)
        arrived = [c.at for c in tg.calls if c.method == "sendMessage"]
        assert arrived and arrived[0] >= gate.not_before
        assert gate.written is not None and gate.answered is not None and gate.answered >= gate.written
    finally:
        await bot.shutdown()


async def test_a_gated_request_reaches_telegram_only_when_its_gate_opens():
    with FakeTelegram() as tg:
        await send_through_a_gate(tg, GatedRequest(), tg.base_url)


async def test_over_tls_too_the_request_leaves_only_when_its_gate_opens():
    # the real Telegram is reached over HTTPS: the gate must sit above the encryption (start_tls)
    tls = Path(__file__).parent / "fakes" / "tls"
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(tls / "cert.pem", tls / "key.pem")
    tg = FakeTelegram()
    tg._httpd.socket = server.wrap_socket(tg._httpd.socket, server_side=True)  # noqa: SLF001
    tg.start()
    try:
        request = GatedRequest(httpx_kwargs={"verify": ssl.create_default_context(cafile=tls / "cert.pem")})
        await send_through_a_gate(tg, request, tg.base_url.replace("http://", "https://"))
    finally:
        tg.stop()


async def test_a_client_whose_transport_is_not_httpcores_pool_is_left_alone():
    import httpx

    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    assert not gate_client(client)
    await client.aclose()


async def test_a_place_frees_a_second_after_the_answer_came_in_not_after_the_bot_noticed_it():
    clock = VirtualTime()
    limiter = FloodLimiter(Limits(per_second=1), clock=clock, call_later=clock.call_later)
    sent: list[float] = []

    async def callback():
        gate = GATE.get()
        sent.append(clock.now)
        gate.written = gate.answered = clock.now  # answered at once ...
        event = asyncio.Event()
        clock.call_later(0.5, event.set)  # ... and noticed by the bot half a second later (a stalled loop)
        await event.wait()
        return True

    first = asyncio.ensure_future(limiter.process_request(callback, (), {}, "sendMessage", {"chat_id": 5}, None))
    second = asyncio.ensure_future(limiter.process_request(callback, (), {}, "sendMessage", {"chat_id": 6}, None))
    await clock.advance(3.0)
    assert sent == [0.0, pytest.approx(1.0, abs=1e-3)]  # not 1.5
    await done(asyncio.gather(first, second))


async def test_the_bots_messages_go_through_the_gate(fake_telegram: FakeTelegram, fake_anthropic, data_dir):
    from bot.tg.app import SEND_LEAD, build_application
    from bot.wiring import make_assistant

    settings = app_settings(fake_telegram, fake_anthropic, data_dir)
    app = build_application(settings, make_assistant(settings))
    await app.initialize()
    try:
        limiter = app.bot.rate_limiter
        assert isinstance(app.bot.request, GatedRequest) and limiter.lead == SEND_LEAD
        await app.bot.send_message(1, "hi")
        assert limiter.lead == SEND_LEAD  # the message passed the gate: early grants stay on
        assert [c.params["text"] for c in fake_telegram.calls if c.method == "sendMessage"] == ["hi"]
    finally:
        await app.shutdown()
        await app.post_shutdown(app)
