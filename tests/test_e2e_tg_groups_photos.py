"""End to end: group rules (mentions, replies, names) and photos, through the real bot process."""

import base64
import io

from PIL import Image

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import convo, stored

GROUP = -1008080
CHAT = 8080
FAST = {"STREAM_INTERVAL": "0.1", "TELEGRAM_RATE_FACTOR": "20"}
"""Previews every 0.1 s; the fake has no flood limit: no second between two messages in a chat."""


def image(fmt: str, size: tuple[int, int] = (64, 48), color: str = "orange") -> bytes:
    """A small real image (the fake Anthropic API, like the real one, refuses bytes it cannot decode)."""
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, fmt)
    return out.getvalue()


def in_group(tg: FakeTelegram, text: str, **kw) -> dict:
    message = tg.message(GROUP, text, chat_type="supergroup", **kw)
    tg.push_update({"message": message})
    return message


def test_group_answers_only_mentions_and_replies_and_names_the_sender(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    bot = start_bot(**FAST)
    in_group(fake_telegram, "다들 점심 뭐 먹어?", user_id=11, first_name="Minji")
    minji = in_group(fake_telegram, "이건 혼잣말", user_id=11, first_name="Minji")
    in_group(fake_telegram, "ㅋㅋ", user_id=12, first_name="Jisoo", reply_to=minji)  # a reply, but not to the bot
    in_group(fake_telegram, "/frobnicate", user_id=12)  # a bare unknown command may be for another bot
    in_group(fake_telegram, "/help@other_bot", user_id=12)
    fake_anthropic.reply("김치찌개 어때요?")
    in_group(fake_telegram, "@memory_test_bot 점심 추천해 줘", user_id=11, first_name="Minji")
    fake_telegram.wait_for(lambda: fake_telegram.chat_view(GROUP) == ["김치찌개 어때요?"])
    assert len(fake_anthropic.requests) == 1
    assert convo(fake_anthropic.requests[0]) == [{"role": "user", "content": "Minji: 점심 추천해 줘"}]

    answered = fake_telegram.newest_bot_message(GROUP)
    fake_anthropic.reply("그럼 냉면이요.")
    in_group(
        fake_telegram,
        "너무 더운데?",
        user_id=12,
        first_name="Jisoo",
        reply_to=answered,
    )
    fake_telegram.wait_for(
        lambda: len(fake_telegram.chat_view(GROUP)) == 2 and fake_telegram.chat_view(GROUP)[1] == "그럼 냉면이요."
    )
    assert [m["content"] for m in convo(fake_anthropic.requests[1])] == [
        "Minji: 점심 추천해 줘",
        "김치찌개 어때요?",
        "> 김치찌개 어때요?\n\nJisoo: 너무 더운데?",  # a reply carries the message it answers
    ]

    in_group(fake_telegram, "/help@memory_test_bot", user_id=12, language_code="en")
    fake_telegram.wait_for(lambda: len(fake_telegram.chat_view(GROUP)) == 3)
    assert "I answer only when you mention @memory_test_bot" in fake_telegram.chat_view(GROUP)[2]
    in_group(fake_telegram, "/frobnicate@memory_test_bot", user_id=12)
    fake_telegram.wait_for(lambda: len(fake_telegram.chat_view(GROUP)) == 4)
    in_group(fake_telegram, "@memory_test_bot", user_id=12)  # a mention with nothing to say
    fake_telegram.wait_for(lambda: len(fake_telegram.chat_view(GROUP)) == 5)
    assert "부르셨나요" in fake_telegram.chat_view(GROUP)[4]
    assert bot.settle(fake_telegram) == 0  # every update handled: what follows is all there is

    assert len(fake_anthropic.requests) == 2  # nothing else went to the model
    rows = stored(data_dir, GROUP)
    assert [(r["role"], r.get("name"), r.get("user_id")) for r in rows] == [
        ("user", "Minji", 11),
        ("assistant", None, None),
        ("user", "Jisoo", 12),
        ("assistant", None, None),
    ]
    assert rows[0]["content"] == "Minji: 점심 추천해 줘"

    # memory stays per chat: the same user in a private chat starts with nothing
    start_bot(**FAST)
    fake_telegram.send_text(11, "내가 뭐 물어봤지?", first_name="Minji")
    fake_telegram.wait_visible(11)
    assert convo(fake_anthropic.requests[-1]) == [{"role": "user", "content": "내가 뭐 물어봤지?"}]


def test_photo_reaches_the_model_as_an_image_block_and_only_its_file_id_is_stored(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    jpeg = image("JPEG")
    fake_anthropic.reply("고양이 사진이네요.")
    fake_telegram.send_photo(CHAT, "cat-photo", jpeg, caption="이 사진 뭐야?")
    assert fake_telegram.wait_visible(CHAT) == ["고양이 사진이네요."]
    content = convo(fake_anthropic.requests[0])[-1]["content"]
    assert content == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/jpeg", "data": base64.b64encode(jpeg).decode()},
        },
        {"type": "text", "text": "[사진] 이 사진 뭐야?"},
    ]
    assert [c.params["file_id"] for c in fake_telegram.calls_of("getFile")] == ["cat-photo"]  # the large size

    fake_telegram.send_photo(CHAT, "no-caption", image("PNG"))
    fake_telegram.wait_visible(CHAT, 2)
    second = convo(fake_anthropic.requests[1])
    assert second[-1]["content"][0]["source"]["media_type"] == "image/png"
    assert second[-1]["content"][1] == {"type": "text", "text": "[사진]"}
    assert second[0] == {"role": "user", "content": "[사진] 이 사진 뭐야?"}  # history keeps the marker, not the image

    rows = stored(data_dir, CHAT)
    assert [(r["content"], r.get("photo")) for r in rows if r["role"] == "user"] == [
        ("[사진] 이 사진 뭐야?", "cat-photo"),
        ("[사진]", "no-caption"),
    ]
    raw = (data_dir / "chats" / f"{CHAT}.jsonl").read_text()
    assert base64.b64encode(jpeg).decode()[:100] not in raw and len(raw) < 2000


def test_retry_of_a_photo_question_sends_the_photo_again(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    jpeg = image("JPEG", color="brown")
    fake_anthropic.reply("첫 답", "두 번째 답")
    fake_telegram.send_photo(CHAT, "dog-photo", jpeg, caption="무슨 개야?")
    fake_telegram.wait_visible(CHAT)
    fake_telegram.send_text(CHAT, "/retry")
    fake_telegram.wait_visible(CHAT, 2)
    content = convo(fake_anthropic.requests[1])[-1]["content"]
    assert content[0]["source"]["data"] == base64.b64encode(jpeg).decode()
    assert content[1] == {"type": "text", "text": "[사진] 무슨 개야?"}
    assert len(convo(fake_anthropic.requests[1])) == 1  # the old answer is not sent again
    rows = stored(data_dir, CHAT)
    assert [(r["content"], r.get("photo"), r.get("retry")) for r in rows if r["role"] == "user"] == [
        ("[사진] 무슨 개야?", "dog-photo", None),
        ("[사진] 무슨 개야?", "dog-photo", True),
    ]


def test_documents_are_declined_or_read_as_images(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    other = {"file_id": "doc-zip", "file_unique_id": "u1", "file_name": "a.zip", "mime_type": "application/zip"}
    fake_telegram.push_update({"message": fake_telegram.message(CHAT, None, document=other)})
    assert "파일은 읽을 수 없어요" in fake_telegram.wait_visible(CHAT)[0]
    big = {
        "file_id": "doc-big",
        "file_unique_id": "u2",
        "file_name": "big.png",
        "mime_type": "image/png",
        "file_size": 21 * 1024 * 1024,  # over Telegram's 20 MB download limit
    }
    fake_telegram.push_update({"message": fake_telegram.message(CHAT, None, document=big, language_code="en")})
    assert "too big" in fake_telegram.wait_visible(CHAT, 2)[1]
    png = image("PNG", color="blue")
    fake_telegram.files["doc-png"] = png
    doc = {"file_id": "doc-png", "file_unique_id": "u3", "file_name": "s.png", "mime_type": "image/png"}
    fake_telegram.push_update({"message": fake_telegram.message(CHAT, None, document=doc, caption="스크린샷")})
    fake_telegram.wait_visible(CHAT, 3)
    assert len(fake_anthropic.requests) == 1
    block = convo(fake_anthropic.requests[0])[-1]["content"][0]
    assert block["source"] == {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png).decode()}
    assert [r["content"] for r in stored(data_dir, CHAT)][0] == "[사진] 스크린샷"
    assert [c.params["file_id"] for c in fake_telegram.calls_of("getFile")] == ["doc-png"]  # the big one: never fetched
