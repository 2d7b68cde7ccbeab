"""FloodLimiter.begin_answer: previews leave a global window slot for the final of every answer being
written (virtual time, as in tests/test_tg_ratelimit.py)."""

import pytest

from bot.tg.ratelimit import BestEffort, Dropped
from tests.test_tg_ratelimit import PRIVATE, done, make, settle

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


async def test_a_preview_waits_while_the_window_has_no_room_for_it_and_every_answer_being_written():
    clock, limiter, wire = make(per_second=10)  # spare: 8 of 10 free
    ends = [limiter.begin_answer() for _ in range(10)]
    preview = wire.call("sendMessageDraft", PRIVATE, "p", BestEffort(max_wait=5))
    late = wire.call("sendMessageDraft", PRIVATE + 1, "late", BestEffort(max_wait=0.5))
    await clock.advance(0.2)
    assert wire.tags() == []  # 10 free: the ten finals to come need them all
    final = wire.call("sendMessage", PRIVATE + 2, "f")
    await settle()
    assert wire.tags() == ["f"]  # finals are not held back by it
    await clock.advance(0.4)
    with pytest.raises(Dropped):  # its max_wait passed with no room
        await done(late)
    ends[0]()
    ends[0]()  # ending twice counts once
    assert limiter.answers == 9
    await clock.advance(1.0)  # the final's second is over: 10 free ≥ 9 answers + the preview
    assert wire.tags() == ["f", "p"]
    assert await done(preview) is True and await done(final) is True


async def test_chat_actions_go_while_answers_being_written_fit_in_a_second_and_are_dropped_beyond():
    """'typing…' takes no window slot, so up to a second's worth of answers to come leave it alone; with
    more, the answers wait for Telegram anyway and a chat action would only cost the bot work."""
    clock, limiter, wire = make(per_second=10)
    ends = [limiter.begin_answer() for _ in range(10)]
    action = wire.call("sendChatAction", PRIVATE, "typing")
    await settle()
    assert wire.tags() == ["typing"] and await done(action) is True
    ends.append(limiter.begin_answer())  # 11 answers being written: more than 10 messages a second
    busy = wire.call("sendChatAction", PRIVATE + 1, "busy")
    await settle()
    with pytest.raises(Dropped):  # at once, not after its max_wait
        await done(busy)
    final = wire.call("sendMessage", PRIVATE + 2, "f")  # messages are not affected
    await settle()
    ends.pop()()  # back to 10
    again = wire.call("sendChatAction", PRIVATE + 1, "again")
    await settle()
    assert wire.tags() == ["typing", "f", "again"]
    assert await done(again) is True and await done(final) is True
