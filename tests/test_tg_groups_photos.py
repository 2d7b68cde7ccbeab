"""Group addressing rules, photo size choice and image blocks (pure functions, no bot process)."""

import base64

import pytest
from telegram import Message, PhotoSize

from bot.texts import TEXTS, lang_of, t
from bot.tg import photos
from bot.tg.groups import is_for_bot, strip_mention
from bot.tg.menu import MENU, menu
from tests.fakes.telegram_server import BOT_ID, BOT_USERNAME, FakeTelegram

GROUP = -100123


@pytest.fixture(scope="module")
def tg():
    server = FakeTelegram()  # only its message builders are used; the server is never started
    yield server
    server._httpd.server_close()


def msg(tg, text=None, **kw) -> Message:
    return Message.de_json(tg.message(GROUP, text, chat_type="supergroup", **kw), None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"@{BOT_USERNAME} 오늘 날씨 어때?", "오늘 날씨 어때?"),
        (f"@{BOT_USERNAME.upper()}, what is 2+2", "what is 2+2"),
        (f"그런데 @{BOT_USERNAME} 너는 어떻게 생각해?", "그런데 너는 어떻게 생각해?"),
        (f"😀😀 @{BOT_USERNAME} 이모지 뒤", "😀😀 이모지 뒤"),  # entity offsets are UTF-16 units
        (f"@{BOT_USERNAME}", ""),
    ],
)
def test_mention_is_for_the_bot_and_is_stripped(tg, text, expected):
    m = msg(tg, text)
    assert is_for_bot(m, BOT_USERNAME, BOT_ID)
    assert strip_mention(m, BOT_USERNAME, BOT_ID) == expected


def test_other_group_messages_are_not_for_the_bot(tg):
    assert not is_for_bot(msg(tg, "다들 안녕"), BOT_USERNAME, BOT_ID)
    assert not is_for_bot(msg(tg, "@someone_else 안녕"), BOT_USERNAME, BOT_ID)
    assert not is_for_bot(msg(tg, f"@{BOT_USERNAME}x 비슷한 이름"), BOT_USERNAME, BOT_ID)
    other = tg.message(GROUP, "원래 메시지", chat_type="supergroup", user_id=5)
    assert not is_for_bot(msg(tg, "ㅋㅋ", reply_to=other), BOT_USERNAME, BOT_ID)


def test_reply_to_the_bot_and_text_mention_are_for_the_bot(tg):
    bot_msg = tg._bot_message({"chat_id": GROUP}, text="이전 답")
    reply = msg(tg, "그럼 점심은?", reply_to=bot_msg)
    assert is_for_bot(reply, BOT_USERNAME, BOT_ID)
    assert strip_mention(reply, BOT_USERNAME, BOT_ID) == "그럼 점심은?"
    entity = {
        "type": "text_mention",
        "offset": 0,
        "length": 6,
        "user": {"id": BOT_ID, "is_bot": True, "first_name": "M"},
    }
    named = msg(tg, "Memory 안녕", entities=[entity])
    assert is_for_bot(named, BOT_USERNAME, BOT_ID)
    assert strip_mention(named, BOT_USERNAME, BOT_ID) == "안녕"


def test_caption_mention_counts(tg):
    m = msg(
        tg, None, caption=f"@{BOT_USERNAME} 이건 뭐야", caption_entities=FakeTelegram.mentions(f"@{BOT_USERNAME} x")
    )
    assert is_for_bot(m, BOT_USERNAME, BOT_ID)
    assert strip_mention(m, BOT_USERNAME, BOT_ID) == "이건 뭐야"


def size(w: int, h: int, n: int | None) -> PhotoSize:
    return PhotoSize(f"f{w}", f"u{w}", w, h, n)


def test_pick_size_prefers_the_largest_up_to_max_side():
    sizes = [size(90, 60, 1_000), size(320, 240, 20_000), size(1280, 960, 200_000), size(2560, 1920, 900_000)]
    assert photos.pick_size(sizes).width == 1280


def test_pick_size_takes_a_larger_size_over_a_thumbnail():
    assert photos.pick_size([size(90, 60, 1_000), size(2560, 1920, 900_000)]).width == 2560


def test_pick_size_skips_sizes_over_the_byte_limit():
    sizes = [size(320, 240, 20_000), size(1280, 960, photos.MAX_DOWNLOAD + 1)]
    assert photos.pick_size(sizes).width == 320
    assert photos.pick_size([size(1280, 960, photos.MAX_DOWNLOAD + 5)]).width == 1280  # download reports it


@pytest.mark.parametrize(
    ("data", "media"),
    [
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"\x89PNG\r\n\x1a\nrest", "image/png"),
        (b"GIF89a...", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"unknown", "image/jpeg"),
    ],
)
def test_media_type_from_magic_bytes(data, media):
    assert photos.media_type(data) == media
    block = photos.image_block(data, media)
    assert block == {
        "type": "image",
        "source": {"type": "base64", "media_type": media, "data": base64.b64encode(data).decode()},
    }


def test_stored_text_has_the_photo_marker():
    assert photos.stored_text("이게 뭐야?") == "[사진] 이게 뭐야?"
    assert photos.stored_text("") == "[사진]"


def test_every_text_exists_in_korean_and_english():
    for key, entry in TEXTS.items():
        assert entry.get("ko") and entry.get("en"), key
    assert lang_of("ko-KR") == "ko" and lang_of(None) == "ko" and lang_of("en-US") == "en" and lang_of("de") == "en"


def test_command_menu_in_both_languages():
    ko, en = menu("ko"), menu("en")
    assert [c.command for c in ko] == [c.command for c in en] == list(MENU)
    assert all(c.description for c in ko + en)
    assert ko[0].description != en[0].description
    assert all(f"/{name}" in t("help", lang, bot="@b") for name in MENU for lang in ("ko", "en"))
