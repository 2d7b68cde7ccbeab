"""ReplyStream with the FloodLimiter: previews are best effort and never hold up the answer.

The bot is the in-process FakeBot of test_tg_stream, its calls going through a real FloodLimiter
whose time is virtual (tests/test_tg_ratelimit.py), so "no spare capacity" lasts until a test moves it.
"""

import asyncio

from bot.tg.ratelimit import FloodLimiter, Limits
from bot.tg.render import render
from bot.tg.send import Target
from bot.tg.stream import ReplyStream
from tests.fakes.telegram_server import parse_html
from tests.test_tg_ratelimit import VirtualTime, settle
from tests.test_tg_stream import FakeBot

CHAT = 42
GROUP = -100


class LimitedBot(FakeBot):
    """FakeBot behind a FloodLimiter. ``transit`` (an Event) holds plain-text edits on the wire:
    they reach the fake server only once it is set, even if the caller gave up on them meanwhile."""

    def __init__(self, limiter: FloodLimiter) -> None:
        super().__init__()
        self.rate_limiter = limiter
        self.on_wire: list[str] = []  # endpoints whose request left the limiter
        self.transit: asyncio.Event | None = None

    async def _through(self, endpoint, chat_id, args, make):
        async def callback():
            self.on_wire.append(endpoint)
            return await make()

        return await self.rate_limiter.process_request(callback, (), {}, endpoint, {"chat_id": chat_id}, args)

    async def send_message_draft(self, chat_id, draft_id, text, message_thread_id=None, rate_limit_args=None):
        async def make():
            return await FakeBot.send_message_draft(self, chat_id, draft_id, text, message_thread_id)

        return await self._through("sendMessageDraft", chat_id, rate_limit_args, make)

    async def send_message(
        self, chat_id, text, parse_mode=None, message_thread_id=None, reply_parameters=None, rate_limit_args=None
    ):
        async def make():
            return await FakeBot.send_message(self, chat_id, text, parse_mode, message_thread_id, reply_parameters)

        return await self._through("sendMessage", chat_id, rate_limit_args, make)

    async def edit_message_text(self, text, chat_id, message_id, parse_mode=None, rate_limit_args=None):
        transit = self.transit if parse_mode is None else None

        async def on_the_wire():
            if transit is not None:
                await transit.wait()
            return await FakeBot.edit_message_text(self, text, chat_id, message_id, parse_mode)

        async def make():
            return await asyncio.shield(asyncio.ensure_future(on_the_wire()))  # sent is sent

        return await self._through("editMessageText", chat_id, rate_limit_args, make)


def limited(**limits) -> tuple[VirtualTime, FloodLimiter, LimitedBot]:
    clock = VirtualTime()
    limiter = FloodLimiter(Limits(**limits), clock=clock, call_later=clock.call_later)
    return clock, limiter, LimitedBot(limiter)


async def use_up_spare_capacity(bot: LimitedBot, n: int) -> None:
    """Send ``n`` finals to other chats: the global budget stays below the level previews need."""
    for i in range(n):
        await bot.send_message(5000 + i, f"other {i}")


async def until(condition, seconds: float = 5.0) -> None:
    """Wait (really) until ``condition()``; fails the test rather than hanging it."""

    async def poll():
        while not condition():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), seconds)


async def test_the_answer_does_not_wait_for_a_preview_without_capacity():
    clock, limiter, bot = limited(per_second=10)  # previews need 8 of 10 free in the last second
    await use_up_spare_capacity(bot, 3)
    stream = ReplyStream(bot, Target(CHAT), drafts=True, interval=1.0)
    await stream.feed("Hello")
    await settle()
    assert bot.of("draft") == [] and limiter._spare  # the preview waits for spare capacity
    await asyncio.wait_for(stream.finish("Hello **world**"), 5)  # no virtual time passes: it must not wait
    assert [s["text"] for s in bot.of("send")][-1] == render("Hello **world**")
    await clock.advance(5.0)
    assert bot.of("draft") == [] and "sendMessageDraft" not in bot.on_wire  # the stale preview never went


async def test_a_skipped_preview_is_followed_by_one_with_the_newest_text():
    clock, limiter, bot = limited(per_second=10)
    await use_up_spare_capacity(bot, 3)
    stream = ReplyStream(bot, Target(CHAT), drafts=True, interval=0.05)
    await stream.feed("Hel")
    await settle()
    await stream.feed("lo world")
    await clock.advance(0.06)  # the preview's max_wait passes: dropped, not an error
    assert bot.of("draft") == []
    await clock.advance(1.0)  # spare capacity again
    await until(lambda: bot.of("draft"))
    assert [d["text"] for d in bot.of("draft")] == ["Hello world"]
    await stream.finish("Hello world")
    assert [s["text"] for s in bot.of("send")][-1] == "Hello world"


async def test_a_preview_edit_on_the_wire_lands_before_the_final_edit():
    clock, limiter, bot = limited()
    stream = ReplyStream(bot, Target(GROUP), drafts=False, interval=0.01)
    await stream.feed("partial")
    await until(lambda: stream.message_id is not None)  # the preview message
    bot.transit = asyncio.Event()
    await clock.advance(10.0)  # the group's budget is full again
    await stream.feed(" answer so far")
    await until(lambda: bot.on_wire.count("editMessageText") == 1)  # a preview edit is on its way
    answer = "partial answer so far, and **the end**"
    finishing = asyncio.create_task(stream.finish(answer))
    await settle()
    assert bot.of("edit") == []  # the final edit waits for the preview edit on the wire
    bot.transit.set()
    await asyncio.wait_for(finishing, 5)
    edits = bot.of("edit")
    assert [e["parse_mode"] for e in edits] == [None, "HTML"]
    assert bot.messages[stream.message_id] == parse_html(render(answer))[0]  # the final text stays


async def test_an_answer_being_written_keeps_a_window_slot_free_of_previews_until_its_final_is_queued():
    clock, limiter, bot = limited(per_second=10)
    streams = [ReplyStream(bot, Target(6000 + i), drafts=True, interval=1.0) for i in range(10)]
    assert limiter.answers == 10  # ten answers under way: their finals need all ten slots
    await streams[0].feed("Hello")
    await settle()
    assert bot.of("draft") == []  # no room for a preview and ten finals
    await streams[9].finish("done")  # one answer's final is queued (and sent): it no longer needs a slot kept
    await streams[8].fail("failed")  # a failed answer needs none either
    await streams[7].cancel()
    assert limiter.answers == 7
    await until(lambda: bot.of("draft"))  # 10 − 2 sent = 8 free ≥ 7 answers + this preview
    assert [d["text"] for d in bot.of("draft")] == ["Hello"]
    for stream in streams[:7]:
        await stream.finish("bye")
    assert limiter.answers == 0
