"""Replies and quotes as context (pure functions over Telegram messages, no bot process)."""

import pytest
from telegram import Message

from bot.tg.references import MAX_REPLY_CHARS, reference_of, thread_meta, with_reference
from tests.fakes.telegram_server import BOT_ID, BOT_USERNAME, FakeTelegram

CHAT = 4242
GROUP = -1004242


@pytest.fixture(scope="module")
def tg():
    server = FakeTelegram()  # only its message builders are used; the server is never started
    yield server
    server._httpd.server_close()


def de(data: dict) -> Message:
    return Message.de_json(data, None)


def test_no_reply_no_reference(tg):
    assert reference_of(de(tg.message(CHAT, "안녕"))) is None
    assert with_reference("안녕", None) == "안녕"


def test_reply_to_a_photo_or_document_quotes_its_marker_not_its_content(tg):
    photo = tg.message(CHAT, None, photo=[{"file_id": "p", "file_unique_id": "pu", "width": 9, "height": 9}])
    photo["caption"] = "영수증"
    ref = reference_of(de(tg.message(CHAT, "이거 얼마였지?", reply_to=photo)))
    assert ref is not None and ref.text == "[사진] 영수증" and ref.message_id == photo["message_id"]
    doc = tg.message(CHAT, None, document={"file_id": "d", "file_unique_id": "du", "file_name": "plan.pdf"})
    ref = reference_of(de(tg.message(CHAT, "요약", reply_to=doc)))
    assert ref is not None and ref.text == "[문서] plan.pdf"
    sticker_only = tg.message(CHAT, None)  # nothing to quote
    assert reference_of(de(tg.message(CHAT, "?", reply_to=sticker_only))) is None


def test_a_quote_wins_over_the_whole_message_and_multiline_text_is_quoted_per_line(tg):
    original = tg.message(CHAT, "첫 줄\n\n셋째 줄")
    ref = reference_of(de(tg.message(CHAT, "왜?", reply_to=original)))
    assert with_reference("왜?", ref) == "> 첫 줄\n>\n> 셋째 줄\n\n왜?"
    quoted = reference_of(de(tg.message(CHAT, "왜?", reply_to=original, quote={"text": "셋째 줄", "position": 6})))
    assert (
        quoted is not None
        and quoted.quote
        and quoted.meta()
        == {
            "message_id": original["message_id"],
            "text": "셋째 줄",
            "quote": True,
        }
    )


def test_long_replies_are_shortened(tg):
    original = tg.message(CHAT, "가" * 5000)
    ref = reference_of(de(tg.message(CHAT, "요약", reply_to=original)))
    assert ref is not None and len(ref.text) <= MAX_REPLY_CHARS and "…[중략 / trimmed]…" in ref.text


def test_group_replies_name_the_author_but_not_the_bot(tg):
    jisoo = tg.message(GROUP, "7시 어때?", chat_type="supergroup", user_id=12, first_name="Jisoo")
    ref = reference_of(de(tg.message(GROUP, "좋아", chat_type="supergroup", reply_to=jisoo)))
    assert ref is not None and ref.text == "Jisoo: 7시 어때?"
    bot_said = {
        "message_id": 77,
        "date": 0,
        "chat": {"id": GROUP, "type": "supergroup", "title": "g"},
        "from": {"id": BOT_ID, "is_bot": True, "first_name": "Memory", "username": BOT_USERNAME},
        "text": "김치찌개요",
    }
    ref = reference_of(de(tg.message(GROUP, "왜?", chat_type="supergroup", reply_to=bot_said)))
    assert ref is not None and ref.text == "김치찌개요"


def test_in_a_forum_topic_the_topic_root_is_no_reply(tg):
    root = tg.message(GROUP, None, chat_type="supergroup", forum_topic_created={"name": "여행", "icon_color": 1})
    in_topic = tg.message(
        GROUP,
        "안녕",
        chat_type="supergroup",
        reply_to=root,
        message_thread_id=root["message_id"],
        is_topic_message=True,
    )
    message = de(in_topic)
    assert reference_of(message) is None
    assert thread_meta(message) == {"thread_id": root["message_id"]}
    assert thread_meta(de(tg.message(CHAT, "x"))) == {}
