"""End to end under Telegram's flood control: a 429 on a preview holds up no answer, and with the fake
enforcing Telegram's limits every reply still arrives, each chat's in order."""

from tests.fakes.anthropic_server import FakeAnthropic, Text, last_user_text
from tests.fakes.telegram_server import FakeTelegram, FloodControl

A, B = 8181, 8282
LONG = " ".join(f"sentence {i} of a long answer." for i in range(60))


def test_a_429_on_a_preview_delays_no_final_answer(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    def script(body):
        text = last_user_text(body)
        return Text(LONG, chunk=20, chunk_delay=0.03) if text == "long" else Text(f"re: {text}")

    fake_anthropic.default = script
    # Telegram asks chat A to wait a whole minute after its first draft
    fake_telegram.fail_next(
        "sendMessageDraft", 429, "Too Many Requests: retry after 60", retry_after=60,
        when=lambda p: int(p["chat_id"]) == A,
    )  # fmt: skip
    start_bot(STREAM_INTERVAL="0.2")
    fake_telegram.send_text(A, "long")
    fake_telegram.wait_for(lambda: fake_telegram.calls_of("sendMessageDraft", A))
    fake_telegram.send_text(B, "quick")
    # neither another chat's answer nor A's own waits for the minute (the waits give up long before it)
    assert fake_telegram.wait_visible(B, timeout=20) == ["re: quick"]
    assert fake_telegram.wait_visible(A, timeout=20) == [LONG]
    drafts = fake_telegram.calls_of("sendMessageDraft", A)
    assert len(drafts) == 1 and drafts[0].params.get("_failed")  # no more previews in A after the 429


def test_under_flood_control_every_reply_arrives_in_order(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    fake_telegram.flood = FloodControl(strict=True)  # never 31 in any one second, ~1 a second per private chat
    fake_anthropic.default = lambda body: Text(f"re: {last_user_text(body)}", chunk=4, chunk_delay=0.01)
    start_bot()
    chats = [9000 + i for i in range(40)]
    for i in range(3):
        for chat in chats:
            fake_telegram.send_text(chat, f"{chat} m{i}")
    for chat in chats:
        assert fake_telegram.wait_sent(chat, 3, timeout=60) == [f"re: {chat} m{i}" for i in range(3)]
    finals = [c for c in fake_telegram.calls_of("sendMessage") if not c.params.get("_failed")]
    assert len(finals) == 120
    assert fake_telegram.flood.refused_by.get("all", 0) == 0  # the bot's own budget is never exceeded
