"""Telegram's HTTP runs on an event loop of its own (bot/tg/sendgate.py, ``IOThread``): a gate opens, and an
answer is noted, while the bot's own loop is busy; a caller that gives up waits until the request on the other
side ended; stopping the thread never leaves a caller waiting."""

import asyncio
import threading
import time

import pytest

from bot.tg.sendgate import GATE, Gate, GatedRequest, IOThread
from tests.fakes.telegram_server import FakeTelegram
from tests.test_tg_stream_limits import until

PATIENCE = 10.0  # seconds a condition may take on a loaded machine before the test gives up on it


def block_until(condition) -> bool:
    """Hold the calling thread (the bot's event loop) until ``condition()``; False if it never came."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


async def test_a_message_leaves_at_its_gate_and_its_answer_is_noted_while_the_bots_loop_is_busy():
    with FakeTelegram() as tg:
        request = GatedRequest()
        await request.initialize()
        try:
            gate = Gate(time.monotonic() + 0.05, time.monotonic)
            token = GATE.set(gate)
            try:
                sending = asyncio.create_task(request.do_request(f"{tg.base_url}{tg.token}/getMe", "POST"))
                await asyncio.sleep(0)  # its first step hands the request to the I/O thread ...
            finally:
                GATE.reset(token)
            # ... and the bot's loop stops turning, as in a busy minute, until the answer was noted
            assert block_until(lambda: gate.answered is not None), "the answer was never noted"
            blocked_until = time.monotonic()
            status, _ = await sending
        finally:
            await request.shutdown()
        assert status == 200
        arrived = [c.at for c in tg.calls if c.method == "getMe"]
        assert arrived and gate.not_before <= arrived[0] <= blocked_until
        assert gate.written is not None and gate.not_before <= gate.written <= blocked_until
        assert request._io is None  # noqa: SLF001  # its thread stopped with it


async def test_a_caller_that_gives_up_returns_only_once_the_request_ended_on_the_other_side():
    io = IOThread("test-io")
    started, cleaned = threading.Event(), threading.Event()

    async def request():
        try:
            started.set()
            await asyncio.Event().wait()  # an answer that never comes
        finally:
            await asyncio.sleep(0.05)  # the other side takes its time to wind up (closing a connection)
            cleaned.set()

    try:
        caller = asyncio.create_task(io.run(request()))
        await until(started.is_set, PATIENCE)
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        assert cleaned.is_set()  # not before: the place it held is counted until the request ended
    finally:
        await asyncio.to_thread(io.stop)


async def test_what_runs_on_the_thread_carries_the_callers_gate_and_its_result_or_error():
    io = IOThread("test-io")
    try:
        gate = Gate(0.0, time.monotonic)
        token = GATE.set(gate)
        try:

            async def where() -> tuple[str, Gate | None]:
                return threading.current_thread().name, GATE.get()

            assert await io.run(where()) == ("test-io", gate)
        finally:
            GATE.reset(token)

        async def fails() -> None:
            raise ValueError("refused")

        with pytest.raises(ValueError, match="refused"):
            await io.run(fails())
    finally:
        await asyncio.to_thread(io.stop)


async def test_stopping_the_thread_cancels_what_still_waits_there_and_its_caller_hears_of_it():
    io = IOThread("test-io")
    started = threading.Event()

    async def forever() -> None:
        started.set()
        await asyncio.Event().wait()

    caller = asyncio.create_task(io.run(forever()))
    await until(started.is_set, PATIENCE)
    await asyncio.to_thread(io.stop)
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(caller, PATIENCE)
    assert io.loop.is_closed()
