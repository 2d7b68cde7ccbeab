"""The daily token limit held before every model call (bot/core/limits.py ``reserve``); its e2e proof under a burst."""

import asyncio
from datetime import UTC, datetime

import pytest

from bot.claude.model import Usage
from bot.core.ask import Spend
from bot.core.limits import ADMISSION_TOKENS, Limits, OverBudget, request_tokens
from memory.usage import UsageLedger
from tests.conftest import Clock

REQUEST = {"system": [{"type": "text", "text": "x" * 3000}], "messages": [], "tools": [], "max_tokens": 1000}
CALL = request_tokens(REQUEST)  # 2,000 tokens, give or take the block overhead


@pytest.fixture
def lim(data_dir) -> Limits:
    clock = Clock(datetime(2026, 11, 29, 5, 0, tzinfo=UTC))
    return Limits(UsageLedger(data_dir, flush_after=None), tokens=10_000, now=clock)


def spend(lim: Limits, user: int, tokens: int) -> None:
    lim.record(Spend(str(user), user, "answer", "m", Usage(input_tokens=tokens)))


def test_the_estimate_counts_the_prompt_images_and_max_tokens():
    assert 1000 + 1000 <= CALL <= 1000 + 1100
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 3_000_000}}
    with_image = {**REQUEST, "messages": [{"role": "user", "content": [image]}]}
    assert request_tokens(with_image) - CALL < 2000  # an image is ~1,600 tokens, not its base64 length


async def test_admission_holds_tokens_so_a_burst_is_refused_on_arrival(lim):
    admitted = [lim.admit(7, 7) for _ in range(10)]
    assert admitted.count(None) == 10_000 // ADMISSION_TOKENS + (1 if 10_000 % ADMISSION_TOKENS else 0)
    assert all(r is not None and r.kind == "tokens" for r in admitted if r is not None)
    assert lim.ledger.user_day("7", lim.day()).questions == admitted.count(None)  # refused ones not counted


async def test_calls_in_flight_are_counted_and_the_last_call_may_cross_by_one(lim):
    lim.calls_per_question = 1  # questions of one call: a new one may start beside others
    spend(lim, 7, 6_500)
    first = await lim.reserve(7, REQUEST)  # 6,500 spent: budget left
    second = await lim.reserve(7, REQUEST)  # 6,500 + ~2,000 held < 10,000: goes too
    third = asyncio.create_task(lim.reserve(7, REQUEST))  # 6,500 + ~4,000 held >= 10,000: it waits
    await asyncio.sleep(0)
    assert not third.done()
    spend(lim, 7, 1_000)  # the first call's usage is recorded (7,500 spent) ...
    first.release()  # ... and its question ends: 7,500 + ~2,000 < 10,000, the third call goes
    hold = await asyncio.wait_for(third, 10)
    assert hold.running
    spend(lim, 7, 2_500)
    spend(lim, 7, 2_500)  # 12,500 spent: over the limit, by no more than the calls let through
    second.release()
    hold.release()
    with pytest.raises(OverBudget) as refused:
        await lim.reserve(7, REQUEST)
    assert refused.value.refusal.kind == "tokens"


async def test_a_new_question_waits_until_the_ones_under_way_could_finish(lim):
    a = await lim.reserve(7, REQUEST)  # alone: goes
    new = asyncio.create_task(lim.reserve(7, REQUEST))  # 0 + 5 calls of ~2,000 >= 10,000: waits
    await asyncio.sleep(0)
    assert not new.done()
    spend(lim, 7, 2_000)
    a.park()
    a2 = await asyncio.wait_for(lim.reserve(7, REQUEST, previous=a), 10)  # the started one goes on
    assert a.released and not new.done()
    spend(lim, 7, 2_000)
    a2.release()  # it is done: the new question starts
    assert (await asyncio.wait_for(new, 10)).running


async def test_a_question_under_way_goes_on_alone_when_nothing_runs(lim):
    lim.calls_per_question = 1
    spend(lim, 7, 10_000 - CALL - 1)
    a = await lim.reserve(7, REQUEST)
    b = await lim.reserve(7, REQUEST)  # spent + ~2,000 < 10,000: both started
    spend(lim, 7, 500)
    a.park()
    b.park()  # now spent + b's ~2,000 >= 10,000, but nothing is running: a goes on, alone
    a2 = await asyncio.wait_for(lim.reserve(7, REQUEST, previous=a), 10)
    b2 = asyncio.create_task(lim.reserve(7, REQUEST, previous=b))  # a2 is running: b waits for it
    await asyncio.sleep(0)
    assert not b2.done()
    a2.park()
    assert (await asyncio.wait_for(b2, 10)).running


async def test_the_owner_and_unlimited_users_hold_nothing(data_dir):
    lim = Limits(UsageLedger(data_dir, flush_after=None), tokens=0)
    assert (await lim.reserve(7, REQUEST)).released
    lim.tokens = 10
    spend(lim, 1, 1_000_000)
    assert (await lim.reserve(1, REQUEST, exempt=True)).released


async def test_a_first_call_gives_back_its_admission_hold(lim):
    assert lim.admit(7, 7) is None
    assert lim.held("7") == ADMISSION_TOKENS
    hold = await lim.reserve(7, REQUEST)
    assert lim.held("7") == hold.tokens
    hold.release()
    assert lim.held("7") == 0


async def test_a_summary_call_is_checked_before_it_is_made():
    from bot.claude.model import ModelError, Reply
    from bot.claude.summarizer import Summarizer

    class Model:
        name = "m"
        calls = 0

        async def complete(self, **kw):
            Model.calls += 1
            return Reply(text="memo", model="m")

    seen = []

    async def refuse(request):
        seen.append(request)
        raise ModelError("limit", "spent")

    summarizer = Summarizer(Model())  # type: ignore[arg-type]
    summarizer.before_call = refuse
    with pytest.raises(ModelError):
        await summarizer(None, [{"role": "user", "content": "안녕"}])
    assert Model.calls == 0 and seen and seen[0]["max_tokens"] == summarizer.max_tokens
