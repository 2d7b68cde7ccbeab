"""The pace at which answers start (bot/tg/pacing.py), in virtual time: at once while fewer than a second of
Telegram's window are under way; beyond that 1.5 times the window's current rate, with no second burst;
a question's later rounds never wait, and it counts as under way until its hold is released; a
cancelled wait gives its place back. The clock is the test's: ``sleep`` moves it instead of waiting."""

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from bot.tg.pacing import StartPace
from tests.helpers import app_settings


class VirtualTime:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class Hold:
    """A hold of the daily token budget, as bot/core/limits.py's: parked between rounds, released at the end."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.search = True
        self.parked = 0
        self.released = 0

    def park(self) -> None:
        self.parked += 1

    def release(self) -> None:
        self.released += 1


class Reserve:
    def __init__(self) -> None:
        self.calls: list[tuple[int | None, object]] = []
        self.holds: list[Hold] = []
        self.refuse = False

    async def __call__(self, user_id: int | None, request: Mapping[str, Any], previous: object) -> Hold:
        self.calls.append((user_id, previous))
        if self.refuse:
            raise RuntimeError("the daily budget is spent")
        self.holds.append(Hold(len(self.holds)))
        return self.holds[-1]


def paced(rate: list[float], t: VirtualTime) -> tuple[StartPace, Reserve, Any]:
    pace = StartPace(lambda: rate[0], clock=t.clock, sleep=t.sleep)
    inner = Reserve()
    return pace, inner, pace.paced(inner)


def ask(reserve: Any, t: VirtualTime, n: int) -> tuple[list[float], list[Any]]:
    """``n`` questions asked at the same moment make their first call, one after another; none ends.
    Returns when each started, and their holds."""

    async def run() -> tuple[list[float], list[Any]]:
        at, holds = [], []
        for i in range(n):
            holds.append(await reserve(i, {"messages": []}, None))
            at.append(t.now)
        return at, holds

    return asyncio.run(run())


def test_beyond_a_second_of_the_window_under_way_answers_start_at_one_and_a_half_its_rate():
    t = VirtualTime()
    pace, _, reserve = paced([30.0], t)
    at, _ = ask(reserve, t, 120)
    # 30 under way start at once, the 31st too (nothing is due yet), then 45 a second: no second burst
    assert at[:31] == [1000.0] * 31 and at[31] > 1000.0
    assert [b - a for a, b in zip(at[30:], at[31:], strict=False)] == pytest.approx([1 / 45] * 89)
    assert pace.waited == 89 and pace.under_way == 120


def test_below_a_second_of_the_window_under_way_nothing_waits():
    t = VirtualTime()
    pace, inner, reserve = paced([30.0], t)

    async def run() -> None:
        for _ in range(10):  # 290 questions at the same moment, each ending before the 30th begins
            holds = [await reserve(1, {}, None) for _ in range(29)]
            for hold in holds:
                hold.release()

    asyncio.run(run())
    assert t.slept == [] and pace.waited == 0 and pace.under_way == 0
    assert all(h.released == 1 for h in inner.holds) and len(inner.holds) == 290


def test_a_lowered_window_slows_the_starts_and_questions_ending_let_the_next_start_at_once():
    t = VirtualTime()
    rate = [30.0]
    pace, _, reserve = paced(rate, t)
    _, holds = ask(reserve, t, 60)
    rate[0] = 24.0  # the limiter lowered its global rate after 429s
    at, more = ask(reserve, t, 3)
    assert [b - a for a, b in zip(at, at[1:], strict=False)] == pytest.approx([1 / 36] * 2)
    for hold in holds + more:  # every question ended
        hold.release()
    assert pace.under_way == 0
    waited = pace.waited
    at, _ = ask(reserve, t, 24)
    assert at == [t.now] * 24 and pace.waited == waited


def test_a_questions_later_rounds_are_not_paced_and_it_counts_once_until_it_ends():
    t = VirtualTime()
    pace, inner, reserve = paced([1.0], t)  # one under way at once, then one start every 2/3 s

    async def run() -> None:
        first = await reserve(7, {}, None)
        assert pace.under_way == 1 and first.search is True
        hold = first
        for _ in range(5):  # tool rounds: at once, the hold of each call handed back as ``previous``
            hold.park()
            hold = await reserve(7, {}, hold)
        assert pace.under_way == 1  # still one question
        other = await reserve(8, {}, None)  # the second question's first call: nothing is due yet
        third = await reserve(9, {}, None)  # waits its turn
        hold.release()
        other.release()
        third.release()
        first.release()  # an earlier hold of the question, released again (the core releases the last)

    asyncio.run(run())
    assert t.slept == [pytest.approx(2 / 3)] and pace.under_way == 0
    # every call went through the reserve, each round with the previous call's own hold
    assert [prev for _, prev in inner.calls] == [None, *inner.holds[:5], None, None]
    assert [h.parked for h in inner.holds[:6]] == [1] * 5 + [0]
    assert [h.released for h in inner.holds] == [1, 0, 0, 0, 0, 1, 1, 1]


def test_a_refused_first_call_is_not_counted_as_under_way():
    t = VirtualTime()
    pace, inner, reserve = paced([30.0], t)
    inner.refuse = True

    async def run() -> None:
        for _ in range(40):
            with pytest.raises(RuntimeError):
                await reserve(1, {}, None)

    asyncio.run(run())
    assert pace.under_way == 0 and pace.waited == 0


def test_a_cancelled_wait_gives_its_place_back():
    t = VirtualTime()
    gate = asyncio.Event()

    async def blocking_sleep(seconds: float) -> None:
        t.slept.append(seconds)
        await gate.wait()  # never set: the waiter is cancelled here

    pace = StartPace(lambda: 1.0, clock=t.clock, sleep=blocking_sleep)
    pace.under_way = 1  # one question under way: a second's worth at this rate

    async def run() -> None:
        await pace.wait()  # nothing is due yet: at once
        waiter = asyncio.create_task(pace.wait())
        while not t.slept:
            await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        pace.sleep = t.sleep
        await pace.wait()  # takes the cancelled one's place: 2/3 s, not 4/3

    asyncio.run(run())
    assert t.slept == [pytest.approx(2 / 3), pytest.approx(2 / 3)]


async def test_the_bots_answers_are_paced_by_its_limiters_rate(fake_telegram, fake_anthropic, data_dir):
    from bot.tg.app import build_application
    from bot.wiring import make_assistant

    settings = app_settings(fake_telegram, fake_anthropic, data_dir)
    assistant = make_assistant(settings)
    app = build_application(settings, assistant)
    pace = app.bot_data["start_pace"]
    limiter = app.bot.rate_limiter
    assert assistant.reserve is not None and pace.rate() == limiter.rate == 30
    request = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 100}
    holds = await asyncio.gather(*(assistant.reserve(1, request, None) for _ in range(90)))
    waited = pace.waited
    # 31 at once (30 under way, and the first paced start), then 45 a second: the last ones waited
    assert 30 <= waited <= 59 and pace.under_way == 90
    holds = await asyncio.gather(*(assistant.reserve(1, request, hold) for hold in holds))  # their next rounds
    assert pace.waited == waited and pace.under_way == 90
    for hold in holds:
        hold.release()
    assert pace.under_way == 0
    await assistant.aclose()
