"""The fake Telegram's opt-in flood control refuses what Telegram would refuse (time is injected)."""

from tests.fakes.telegram_server import FloodControl


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_about_30_messages_a_second_in_all():
    clock = Clock()
    flood = FloodControl(clock=clock)
    assert [flood.check("sendMessage", 1000 + i) for i in range(30)] == [0] * 30
    assert flood.check("editMessageText", 2000) == 1  # the 31st at once: retry after a second
    assert flood.check("sendChatAction", 2000) == 0  # chat actions are not counted
    clock.now += 0.11
    assert [flood.check("sendMessageDraft", 3000 + i) for i in range(3)] == [0, 0, 0]  # refilled 3.3 in 0.11 s
    assert flood.check("sendDocument", 4000) == 1
    assert flood.refused == {"editMessageText": 1, "sendDocument": 1}


def test_a_private_chat_gets_a_short_burst_then_one_a_second():
    clock = Clock()
    flood = FloodControl(clock=clock)
    assert [flood.check("sendMessage", 7) for _ in range(4)] == [0, 0, 0, 1]
    clock.now += 0.5
    assert flood.check("sendMessageDraft", 7) == 1
    assert flood.check("sendMessage", 8) == 0  # another chat is not affected
    clock.now += 0.5
    assert flood.check("sendMessage", 7) == 0


def test_a_group_gets_20_messages_a_minute():
    clock = Clock()
    flood = FloodControl(clock=clock)
    for _ in range(20):
        assert flood.check("sendMessage", -100) == 0
        clock.now += 1
    assert flood.check("editMessageText", -100) == 40  # the first of the 20 leaves the window in 40 s
    clock.now += 39.5
    assert flood.check("editMessageText", -100) == 1
    clock.now += 0.5
    assert flood.check("editMessageText", -100) == 0


def test_strict_never_more_than_30_in_any_one_second():
    clock = Clock()
    flood = FloodControl(clock=clock, strict=True)
    assert [flood.check("sendMessage", 1000 + i) for i in range(30)] == [0] * 30
    clock.now += 0.5
    assert flood.check("sendMessage", 2000) == 1  # no refill within the second
    clock.now += 0.5
    assert [flood.check("sendMessage", 3000 + i) for i in range(30)] == [0] * 30  # a second later, 30 again
    assert flood.check("sendMessage", 4000) == 1
