"""Admission: the questions preparing at once are few and go first come first served; a question's place
is given back as its model call starts, so the model's time is never held (events, no clocks)."""

import asyncio

from bot.claude.model import FakeModel
from bot.core import admission
from bot.core.admission import Admission
from bot.core.ask import Assistant
from memory.transcript import Transcript
from tests.fakes.http import hang_guard


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_places_go_first_come_first_served_and_a_place_is_given_back_once():
    gate = Admission(limit=1)
    admitted: list[str] = []
    go = {name: asyncio.Event() for name in "abcd"}

    async def question(name: str, leaves: bool) -> None:
        async with gate.turn():
            admitted.append(name)
            if leaves:
                admission.leave()  # its model call starts
                admission.leave()  # twice gives back one place
            await go[name].wait()

    tasks = [asyncio.create_task(question(n, leaves=n == "a")) for n in "abcd"]
    await settle()
    assert admitted == ["a", "b"]  # a left at its model call: b has the place while a still runs
    assert gate.busy == 1 and gate.waiting == 2
    go["b"].set()  # b ends without a model call: its place goes to the oldest waiting, c
    await settle()
    assert admitted == ["a", "b", "c"]
    go["a"].set()  # a ending gives back nothing more
    await settle()
    assert admitted == ["a", "b", "c"] and gate.busy == 1
    go["c"].set()
    go["d"].set()
    await asyncio.wait_for(asyncio.gather(*tasks), hang_guard(5))
    assert admitted == ["a", "b", "c", "d"] and gate.busy == 0


async def test_a_question_cancelled_while_waiting_loses_no_place():
    gate = Admission(limit=1)
    never = asyncio.Event()

    async def holder() -> None:
        async with gate.turn():
            await never.wait()

    async with gate.turn():
        gone = asyncio.create_task(holder())  # cancelled while it waits
        late = asyncio.create_task(holder())  # handed the place, and cancelled before it could run
        await settle()
        assert gate.waiting == 2
        gone.cancel()
        await settle()
    late.cancel()  # the place was passed to it as the block above ended; it goes back
    await settle()
    assert gone.cancelled() and late.cancelled()
    assert gate.busy == 0 and gate.waiting == 0
    async with gate.turn():  # the place is free again
        assert gate.busy == 1


def test_leave_outside_a_turn_does_nothing():
    admission.leave()


async def test_a_question_gives_its_place_back_when_its_model_call_starts(tmp_path):
    """Two chats, one place: the second question is prepared and sent while the first one's model call
    has not answered yet (its place was not held across the model's time)."""
    release = asyncio.Event()
    started: list[str] = []

    class SlowModel(FakeModel):
        async def complete(self, **kw):  # type: ignore[no-untyped-def]
            started.append(kw["messages"][-1]["content"])
            if len(started) == 1:
                await release.wait()  # the first answer takes until the test says so
            return await super().complete(**kw)

    assistant = Assistant(transcript=Transcript(tmp_path), model=SlowModel())
    assistant.admission = Admission(limit=1)

    async def ask(chat: int, text: str) -> str:
        async with assistant.admission.turn():
            return (await assistant.ask(chat, text)).text

    first = asyncio.create_task(ask(1, "first"))
    second = asyncio.create_task(ask(2, "second"))

    async def both_started() -> None:
        while len(started) < 2:
            await asyncio.sleep(0)

    await asyncio.wait_for(both_started(), hang_guard(5))
    assert started == ["first", "second"] and not first.done()
    release.set()
    assert await asyncio.wait_for(first, hang_guard(5)) == "echo: first"
    assert await asyncio.wait_for(second, hang_guard(5)) == "echo: second"
