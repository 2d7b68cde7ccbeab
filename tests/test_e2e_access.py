"""End to end: closed by default, pairing, the owner's /allow, /deny, /users, groups, and no secret leaks.

The real ``python -m bot`` against the fake Telegram and Anthropic servers. ``bot_env`` lets the
other tests' users in; these tests start the bot with ``ALLOWED_USERS=""`` to see it closed.
"""

import json
import os
import re
import stat

from bot.texts import t
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import BOT_USERNAME, FakeTelegram
from tests.helpers import convo, stored

CLOSED = {"ALLOWED_USERS": "", "OWNER_ID": ""}
FAST = {"TELEGRAM_RATE_FACTOR": "20"}
"""The fake has no flood limit: no second between two messages in a chat (nor three in a group)."""
OWNER = 100
STRANGER = 55555
GROUP = -1005050


def files(data_dir) -> list[str]:
    return sorted(str(p.relative_to(data_dir)) for p in data_dir.rglob("*")) if data_dir.exists() else []


def pairing_code(bot, tg: FakeTelegram) -> str:
    match = tg.wait_for(lambda: re.search(r"pairing code: ([A-Z0-9]+)", bot.log))
    return match.group(1)


def in_group(tg: FakeTelegram, text: str, user_id: int, **kw) -> int:
    return tg.push_update({"message": tg.message(GROUP, text, chat_type="supergroup", user_id=user_id, **kw)})


def everything_sent(tg: FakeTelegram) -> str:
    """Every text, caption and document the bot sent (or tried to send), as one string."""
    parts = []
    for c in tg.calls:
        parts += [str(c.params.get(k, "")) for k in ("text", "caption")]
        parts += [data.decode("utf-8", "replace") for data in c.files.values()]
    return "\n".join(parts)


def test_a_stranger_costs_nothing_and_leaves_no_file(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    bot = start_bot(**CLOSED, LOG_LEVEL="ERROR", **FAST)
    pairing_code(bot, fake_telegram)  # the bot is up and waits for its owner (the code shows at any level)
    before = files(data_dir)
    assert before == ["format.json"]  # written at start, by no one's message
    fake_telegram.send_text(STRANGER, "안녕, 내 비밀번호는 1234야", first_name="Eve")
    refusal = fake_telegram.wait_sent(STRANGER)[0]
    assert refusal == t("not_allowed", user_id=STRANGER)
    for command in ("/search 비밀번호", "/stats", "/export", "/retry", "/remember 나는 Eve", "/reset", "/users"):
        fake_telegram.send_text(STRANGER, command, first_name="Eve")
    fake_telegram.send_photo(STRANGER, "ph1", b"\xff\xd8\xff not even decoded", caption="이거 봐")
    in_group(fake_telegram, f"@{BOT_USERNAME} 안녕", STRANGER, first_name="Eve")  # a group nobody opened
    last = in_group(fake_telegram, "그냥 잡담", STRANGER)  # not for the bot either
    fake_telegram.wait_fetched(last)
    assert bot.stop() == 0  # every fetched update was handled, and every notice sent, before it exits
    assert fake_telegram.sent(STRANGER) == [t("not_allowed", user_id=STRANGER)]  # once in a few minutes
    assert fake_telegram.sent(GROUP) == []  # silence in a group nobody opened
    assert fake_anthropic.requests == []  # no model call
    assert not fake_telegram.calls_of("getFile")  # the photo was not even downloaded
    assert files(data_dir) == before  # no transcript, no index, no ledger row, no access entry
    assert "1234" not in bot.log


def test_pairing_with_the_code_from_the_log_and_no_secret_leaks(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir, bot_env
):
    bot = start_bot(**CLOSED, **FAST)
    code = pairing_code(bot, fake_telegram)
    assert len(code) >= 8 and code.isalnum()

    fake_telegram.send_text(STRANGER, "/start WRONG2345", first_name="Eve")
    assert fake_telegram.wait_sent(STRANGER) == [t("pair.wrong")]  # no hint
    fake_telegram.send_text(STRANGER, "그럼 이건?")
    assert fake_telegram.wait_sent(STRANGER, 2)[-1] == t("not_allowed", user_id=STRANGER)  # still a stranger

    fake_telegram.send_text(OWNER, f"/start {code.lower()}", first_name="Minji")  # typed on a phone
    assert fake_telegram.wait_sent(OWNER) == [t("pair.done", user_id=OWNER)]
    fake_telegram.send_text(OWNER, "내 자전거 자물쇠 번호는 4719야")
    assert fake_telegram.wait_sent(OWNER, 2)[-1] == "echo: 내 자전거 자물쇠 번호는 4719야"
    # the owner's menu came with the pairing
    fake_telegram.wait_for(lambda: any("scope" in c.params for c in fake_telegram.calls_of("setMyCommands")))

    fake_telegram.send_text(STRANGER, f"/start {code}")  # used up: nothing can pair any more
    fake_telegram.send_text(OWNER, "/export")
    fake_telegram.wait_for(lambda: fake_telegram.documents(OWNER))
    assert bot.stop() == 0

    owner = json.loads((data_dir / "access.json").read_text())["owner"]
    assert owner["id"] == OWNER and owner["via"] == "pairing"
    assert fake_telegram.sent(STRANGER)[1:] == [t("not_allowed", user_id=STRANGER)]  # told once, not paired
    assert stat.S_IMODE(os.stat(data_dir / "access.json").st_mode) == 0o600

    bot2 = start_bot(**CLOSED, **FAST)  # a restart: the owner is known, no new code
    fake_telegram.send_text(OWNER, "/users")
    assert "Minji" in fake_telegram.wait_sent(OWNER, 3)[-1]
    assert "pairing code" not in bot2.log
    assert bot2.stop() == 0

    # no secret anywhere: the pairing code is in the log once, where it was announced, and nowhere else
    logs = bot.log + bot2.log
    assert logs.count(code) == 1 and f"pairing code: {code}" in bot.log
    sent = everything_sent(fake_telegram)
    export = b"".join(data for _, data in fake_telegram.documents(OWNER)).decode()
    assert "4719" in export  # the export is really there
    token, api_key = fake_telegram.token, bot_env["ANTHROPIC_API_KEY"]
    for secret in (code, code.lower(), token, token.split(":")[1], api_key):
        assert secret not in sent and secret not in export
        assert secret == code or secret not in logs
    for path in data_dir.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert code.encode() not in content and bot_env["ANTHROPIC_API_KEY"].encode() not in content


def test_wrong_codes_lock_a_user_out(start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic):
    bot = start_bot(**CLOSED, **FAST)
    code = pairing_code(bot, fake_telegram)
    for i in range(5):
        fake_telegram.send_text(STRANGER, f"/start GUESS{i}ABCD")
        assert fake_telegram.wait_sent(STRANGER, i + 1)[-1] == t("pair.wrong")
    fake_telegram.wait_for(lambda: f"user {STRANGER} sent too many wrong pairing codes" in bot.log)
    # the right code no longer helps the locked-out user: they are ignored (no reply at all)
    fake_telegram.send_text(STRANGER, f"/start {code}")
    fake_telegram.send_text(STRANGER, "안녕?")
    fake_telegram.send_text(OWNER, f"/start {code}")  # sent after: the code was still unused
    assert fake_telegram.wait_sent(OWNER) == [t("pair.done", user_id=OWNER)]
    assert bot.stop() == 0
    assert fake_telegram.sent(STRANGER) == [t("pair.wrong")] * 5
    assert fake_anthropic.requests == []


def test_the_owner_allows_and_denies_and_a_restart_keeps_the_list(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    bot = start_bot(ALLOWED_USERS="", OWNER_ID=str(OWNER), **FAST)
    fake_telegram.send_text(STRANGER, "안녕", first_name="Jisoo")
    assert fake_telegram.wait_sent(STRANGER) == [t("not_allowed", user_id=STRANGER)]
    fake_telegram.send_text(OWNER, f"/allow {STRANGER}")
    assert fake_telegram.wait_sent(OWNER) == [t("allow.done", who=f"Jisoo ({STRANGER})")]  # the name is known
    # a bare /allow in a private chat or an id that is not a number: the usage; an id allowed already
    fake_telegram.send_text(OWNER, "/allow")
    assert fake_telegram.wait_sent(OWNER, 2)[-1] == t("allow.usage")
    fake_telegram.send_text(OWNER, "/deny Jisoo")
    assert fake_telegram.wait_sent(OWNER, 3)[-1] == t("deny.usage")
    fake_telegram.send_text(OWNER, f"/allow {STRANGER}")
    assert fake_telegram.wait_sent(OWNER, 4)[-1] == t("allow.already", who=f"Jisoo ({STRANGER})")
    fake_telegram.send_text(STRANGER, "이제 돼?", first_name="Jisoo")
    assert fake_telegram.wait_sent(STRANGER, 2)[-1] == "echo: 이제 돼?"
    fake_telegram.send_text(STRANGER, "/allow 666")  # only the owner manages access
    assert fake_telegram.wait_sent(STRANGER, 3)[-1] == t("owner_only")
    assert bot.stop() == 0
    assert stat.S_IMODE(os.stat(data_dir / "access.json").st_mode) == 0o600

    bot = start_bot(ALLOWED_USERS="", OWNER_ID=str(OWNER), **FAST)
    fake_telegram.send_text(STRANGER, "재시작 후에도?", first_name="Jisoo")
    assert fake_telegram.wait_sent(STRANGER, 4)[-1] == "echo: 재시작 후에도?"
    fake_telegram.send_text(OWNER, "/users")
    listing = fake_telegram.wait_sent(OWNER, 5)[-1]
    assert f"Jisoo — {STRANGER}" in listing and str(OWNER) in listing
    fake_telegram.send_text(OWNER, f"/deny {OWNER}")
    assert fake_telegram.wait_sent(OWNER, 6)[-1] == t("deny.owner")
    fake_telegram.send_text(OWNER, f"/deny {STRANGER}")
    assert fake_telegram.wait_sent(OWNER, 7)[-1] == t("deny.done", who=f"Jisoo ({STRANGER})")
    fake_telegram.send_text(STRANGER, "아직 돼?")
    assert fake_telegram.wait_sent(STRANGER, 5)[-1] == t("not_allowed", user_id=STRANGER)
    assert bot.stop() == 0
    assert [convo(r)[-1]["content"] for r in fake_anthropic.requests] == ["이제 돼?", "재시작 후에도?"]
    assert str(STRANGER) not in json.loads((data_dir / "access.json").read_text())["users"]


def test_group_rules(start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir):
    bot = start_bot(ALLOWED_USERS="", OWNER_ID=str(OWNER), STREAM_INTERVAL="0.1", **FAST)
    mention = f"@{BOT_USERNAME} "

    def said(n: int, expected: str) -> None:
        """Wait until the bot's n-th message in the group reads ``expected`` (answers are edited in)."""
        fake_telegram.wait_for(lambda: fake_telegram.chat_view(GROUP)[n - 1 : n] == [expected])

    # a group nobody opened: silence for strangers (they could have made it to flood the bot)
    in_group(fake_telegram, mention + "안녕", STRANGER, first_name="Eve")
    in_group(fake_telegram, "/allow", STRANGER)  # only the owner opens a group
    in_group(fake_telegram, mention + "나는 돼?", OWNER, first_name="Minji")  # an allowed sender: answered
    said(1, "echo: Minji: 나는 돼?")

    in_group(fake_telegram, "/allow", OWNER)
    said(2, t("allow.group"))
    in_group(fake_telegram, "/allow", OWNER)
    said(3, t("allow.group_already"))
    in_group(fake_telegram, mention + "이제 나도?", STRANGER, first_name="Eve")
    said(4, "echo: Eve: 이제 나도?")

    # /reset and /forget need the owner or a group administrator
    in_group(fake_telegram, "/reset", STRANGER)
    said(5, t("group.admin_only"))
    in_group(fake_telegram, "/forget all", STRANGER)
    said(6, t("group.admin_only"))
    assert len(stored(data_dir, GROUP)) == 4  # nothing was archived
    fake_telegram.set_member(GROUP, 77, "administrator", first_name="Admin")
    in_group(fake_telegram, "/reset", 77, first_name="Admin")
    fake_telegram.wait_for(lambda: len(fake_telegram.chat_view(GROUP)) >= 7)
    assert fake_telegram.chat_view(GROUP)[6].startswith("🆕")
    assert stored(data_dir, GROUP) == []
    admin_checks = fake_telegram.calls_of("getChatMember", GROUP)
    # (the first: Eve's question — what of the group's past it may carry depends on whether she is an admin)
    assert [c.params["user_id"] for c in admin_checks] == [STRANGER, STRANGER, STRANGER, 77]
    in_group(fake_telegram, "/forget all", OWNER)  # the owner needs no check
    said(8, t("forget.all_empty"))
    assert len(fake_telegram.calls_of("getChatMember", GROUP)) == 4

    in_group(fake_telegram, "/deny", OWNER)
    said(9, t("deny.group"))
    in_group(fake_telegram, "/deny", OWNER)
    said(10, t("deny.group_already"))
    fake_telegram.wait_fetched(in_group(fake_telegram, mention + "또 안녕", STRANGER, first_name="Eve"))
    assert bot.stop() == 0
    assert len(fake_telegram.chat_view(GROUP)) == 10  # closed again: silence
    assert len(fake_anthropic.requests) == 2
    assert json.loads((data_dir / "access.json").read_text())["groups"] == {}
