"""End to end: hostile traffic slows nobody else (issue 19, item 1).

The real ``python -m bot`` against the fake Telegram (with its flood limits on) and the fake
Anthropic. Each test first makes the hostile chat's own wait endless — the answer to the stranger's
refusal never comes back, or the flooding user's model call never ends — and then asks as the
owner: the owner is answered only if no update holds a shared slot while it waits for its own chat.
"""

import threading

from bot.texts import t
from bot.tg.lanes import BACKLOG, PER_CHAT
from tests.fakes.anthropic_server import FakeAnthropic, Text, last_user_text
from tests.fakes.telegram_server import BOT_USERNAME, FakeTelegram, FloodControl

OWNER = 100
USER = 200
STRANGER = 55555
STRANGERS_GROUP = -1007777
FLOOD = 150  # more than python-telegram-bot's 64 shared slots
RATE_FACTOR = 20  # the flood limits of the fake and of the bot, times Telegram's (where a test says so)
FAST = {"TELEGRAM_RATE_FACTOR": str(RATE_FACTOR)}


def test_a_strangers_flood_in_private_and_in_their_own_group_does_not_stall_the_owner(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    fake_telegram.flood = FloodControl(strict=True)
    stuck = fake_telegram.hold("sendMessage", lambda p: int(p.get("chat_id", 0)) == STRANGER)  # never answered
    bot = start_bot(ALLOWED_USERS=str(OWNER), OWNER_ID=str(OWNER))
    for i in range(FLOOD):
        fake_telegram.send_text(STRANGER, f"spam {i}", first_name="Eve")
        fake_telegram.push_update(
            {
                "message": fake_telegram.message(
                    STRANGERS_GROUP, f"/help@{BOT_USERNAME}" if i % 2 else f"@{BOT_USERNAME} hi {i}",
                    chat_type="supergroup", user_id=STRANGER,
                )
            }
        )  # fmt: skip
    fake_telegram.send_text(OWNER, "나 왔어")
    assert fake_telegram.wait_sent(OWNER) == ["echo: 나 왔어"]
    stuck.set()
    assert bot.stop() == 0
    assert fake_telegram.sent(STRANGER) == [t("not_allowed", user_id=STRANGER)]  # one refusal, not 150
    assert fake_telegram.sent(STRANGERS_GROUP) == []  # nobody opened the group: silence
    assert [last_user_text(r) for r in fake_anthropic.requests] == ["나 왔어"]
    assert not (data_dir / "chats" / str(STRANGER)).exists()


def test_an_allowed_users_burst_waits_in_its_own_chat_and_its_backlog_is_bounded(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    """100 questions at once from an allowed user: the owner is answered meanwhile, and of USER's only the
    lane's PER_CHAT + BACKLOG are, in order; the rest are dropped with one notice.

    The fake's flood limit for a private chat and the bot's own are both 20 messages a second
    (``FAST``) instead of Telegram's one: the same 33 answers, without half a minute of
    waiting between them."""
    fake_telegram.flood = FloodControl(strict=True, private_rate=RATE_FACTOR)
    release = threading.Event()

    def answer(body):
        text = last_user_text(body)
        return Text(f"echo: {text}", gate=None if text.startswith("owner") else release)

    fake_anthropic.default = answer
    bot = start_bot(ALLOWED_USERS=f"{OWNER},{USER}", OWNER_ID=str(OWNER), **FAST)
    burst = 100
    for i in range(burst):
        fake_telegram.send_text(USER, f"q{i}")
    assert fake_telegram.wait_sent(USER) == [t("busy.dropped")]  # told once that messages were skipped
    fake_telegram.send_text(OWNER, "owner: 나 왔어")
    assert fake_telegram.wait_sent(OWNER) == ["echo: owner: 나 왔어"]  # while USER's first answer is stuck
    release.set()
    kept = PER_CHAT + BACKLOG
    answers = fake_telegram.wait_sent(USER, 1 + kept, timeout=120)[1:]
    assert answers == [f"echo: q{i}" for i in range(kept)]  # the first ones, in order
    assert bot.stop() == 0
    assert len(fake_telegram.sent(USER)) == 1 + kept  # the rest were dropped, not queued without end


def test_files_from_a_user_over_the_daily_limit_are_not_even_downloaded(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    """Over the daily limit, five documents and a photo get the refusal each, and nothing is downloaded.
    The bot answers at 20 messages a second (``FAST``; this fake has no flood limit)."""
    bot = start_bot(ALLOWED_USERS=f"{OWNER},{USER}", OWNER_ID=str(OWNER), DAILY_MESSAGE_LIMIT="1", **FAST)
    fake_telegram.send_text(USER, "하나")
    assert fake_telegram.wait_sent(USER) == ["echo: 하나"]  # today's one message
    for i in range(5):
        fake_telegram.send_document(USER, f"doc{i}", b"%PDF-1.4 not read", f"r{i}.pdf", "application/pdf")
    fake_telegram.send_photo(USER, "ph1", b"\xff\xd8\xff not decoded", caption="이거 봐")
    refusals = fake_telegram.wait_sent(USER, 7)[1:]
    assert len(refusals) == 6 and all(r == refusals[0] for r in refusals) and "1" in refusals[0]
    assert bot.stop() == 0
    assert fake_telegram.calls_of("getFile") == []  # nothing downloaded, nothing decoded
    assert len(fake_anthropic.requests) == 1
