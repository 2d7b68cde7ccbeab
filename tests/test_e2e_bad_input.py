"""End to end: bad and unusual input through the real bot process. No crash, a clear reply where
one is due, nothing stored that should not be, no file outside DATA_DIR, no corrupt line."""

import json
import resource
from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropic, Text, last_user_text
from tests.fakes.telegram_server import ATTACHMENTS, FakeTelegram
from tests.helpers import convo

FAST = {"STREAM_INTERVAL": "0.1", "TELEGRAM_RATE_FACTOR": "20"}
"""Previews every 0.1 s; the fake has no flood limit: no second between two messages in a chat."""
TEXT_ONLY = "지금은 글(텍스트), 사진, PDF와 텍스트 파일만 이해할 수 있어요"


def lines(data_dir: Path, chat_id: int) -> list[dict]:
    """The chat's transcript, split on b"\\n" only (as the readers do); every line must parse."""
    path = data_dir / "chats" / f"{chat_id}.jsonl"
    if not path.exists():
        return []
    raw = path.read_bytes()  # (while the bot writes, only the complete lines)
    return [json.loads(line) for line in raw.split(b"\n")[:-1]]


def files_outside(tmp_path: Path, data_dir: Path) -> list[Path]:
    """Files the bot made anywhere but DATA_DIR (its logs, written by the test, excepted)."""
    return [
        p for p in tmp_path.rglob("*")
        if p.is_file() and data_dir not in p.parents and not p.name.startswith("bot")
    ]  # fmt: skip


def test_updates_not_for_the_bot_are_ignored_and_unreadable_kinds_get_a_polite_reply(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir, tmp_path
):
    bot = start_bot(**FAST)
    # ignored: nothing sent, nothing stored, nothing asked
    first = fake_telegram.message(101, "처음 질문")
    fake_telegram.send_edit(101, first["message_id"], "고친 질문")  # an edit of a message: not a new question
    fake_telegram.send_channel_post(-1002000000001, "채널 공지")
    fake_telegram.send_service(-1002000000002, "new_chat_members")
    fake_telegram.send_service(-1002000000002, "pinned_message")
    fake_telegram.send_text(-1002000000003, "@memory_test_bot 봇끼리 대화", chat_type="supergroup", is_bot=True)
    fake_telegram.send_text(102, "   \n\t  ")  # whitespace only: a short hint, nothing stored
    # kinds it cannot read: one chat each, a polite reply, nothing stored or asked
    kinds = list(ATTACHMENTS)
    for i, kind in enumerate(kinds):
        fake_telegram.send_kind(200 + i, kind, language_code="ko")
    # documents over Telegram's 20 MB download limit: declined without downloading them
    fake_telegram.send_document_meta(301, "pdf20", mime_type="application/pdf", file_size=20 * 1024 * 1024 + 1)
    fake_telegram.send_document_meta(302, "jpg20", mime_type="image/jpeg", file_size=20 * 1024 * 1024 + 1)
    assert bot.settle(fake_telegram) == 0  # every update handled, the process still exited cleanly

    assert "Traceback" not in bot.log and "error while handling" not in bot.log
    for chat in (101, -1002000000001, -1002000000002, -1002000000003):
        assert fake_telegram.calls_of("sendMessage", chat) == []
    assert "ignored a message from another bot" in bot.log
    assert fake_telegram.sent(102) == ["네, 부르셨나요? 저를 부르면서 질문도 함께 적어 주세요."]
    for i, kind in enumerate(kinds):
        replies = fake_telegram.sent(200 + i)
        assert len(replies) == 1 and TEXT_ONLY in replies[0], kind
    assert fake_telegram.sent(301) == ["파일이 너무 커요 (20 MB 까지 받을 수 있어요). 더 작은 파일로 보내 주세요."]
    assert fake_telegram.sent(302) == ["사진이 너무 커요 (20 MB 까지). 더 작은 사진으로 보내 주세요."]
    assert fake_telegram.calls_of("getFile") == []  # nothing was downloaded
    assert fake_anthropic.requests == []
    assert not (data_dir / "chats").exists() or list((data_dir / "chats").glob("*.jsonl")) == []
    assert files_outside(tmp_path, data_dir) == []


def test_unusual_text_is_answered_and_stored_exactly_one_message_per_line(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir, tmp_path
):
    bot = start_bot(**FAST)
    cases = {
        111: "가" * 4095 + "!",  # a message of Telegram's full 4096 characters
        112: "NUL\x00 BEL\x07 ESC\x1b[31m CR\r LS\u2028 PS\u2029 NEL\x85 DEL\x7f 끝",  # control, line breaks
        113: "가족 👨‍👩‍👧‍👦 and 🏳️‍🌈, שלום עולם, مرحبا بالعالم",  # ZWJ emoji, right-to-left text
        9_876_543_210_123: "13자리 채팅 번호",  # a 13-digit private chat id
    }
    for chat, text in cases.items():
        fake_telegram.send_text(chat, text)
    group = -1_001_234_567_890  # a supergroup: negative, 13 digits
    fake_telegram.send_text(group, "@memory_test_bot 그룹 질문", chat_type="supergroup", user_id=77)
    fake_telegram.send_text(114, "깨진 글자 \ud800 여기")  # a lone surrogate (invalid UTF-16)
    fake_telegram.send_forwarded(115, "내일 3시에 회의 있어요")
    caption = "설명" * 512  # a caption of Telegram's full 1024 characters
    fake_telegram.send_photo(116, "ph1", _jpeg(), caption=caption)
    for chat in [*cases, group, 114, 115, 116]:
        fake_telegram.wait_for(lambda chat=chat: lines(data_dir, chat))
    assert bot.settle(fake_telegram) == 0
    assert "Traceback" not in bot.log

    for chat, text in cases.items():
        rows = lines(data_dir, chat)
        assert [r["content"] for r in rows] == [text, f"echo: {text}"], chat
    raw = (data_dir / "chats" / "112.jsonl").read_bytes()
    # U+2028 escaped: no line-splitting tool cuts the message in two
    assert raw.endswith(b"\n") and raw.count(b"\n") == 2 and b"\xe2\x80\xa8" not in raw
    assert [r["content"] for r in lines(data_dir, group)][0] == "Minji: 그룹 질문"
    assert lines(data_dir, 114)[0]["content"] == "깨진 글자 \ufffd 여기"  # replaced, not lost, not a crash
    forwarded = lines(data_dir, 115)[0]
    assert forwarded["content"] == "[전달된 메시지 / Forwarded message] 내일 3시에 회의 있어요"
    assert forwarded["forwarded"] is True
    assert lines(data_dir, 116)[0]["content"] == f"[사진] {caption}"
    sent_text = {json.dumps(convo(r)[-1]["content"], ensure_ascii=False) for r in fake_anthropic.requests}
    assert any("깨진 글자 \ufffd 여기" in s for s in sent_text)
    assert files_outside(tmp_path, data_dir) == []
    assert {p.name for p in (data_dir / "chats").glob("*.jsonl")} == {
        f"{c}.jsonl" for c in [*cases, group, 114, 115, 116]
    }


def _jpeg() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 120, 40)).save(out, "JPEG")
    return out.getvalue()


def test_a_full_disk_the_user_gets_the_answer_and_is_told_it_was_not_saved(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    # A full disk, made real for the bot process alone: its files may not grow past LIMIT bytes
    # (RLIMIT_FSIZE: writes past it fail with EFBIG, an OSError like ENOSPC; chmod would not stop
    # root, and mounting a tiny tmpfs needs privileges CI may not have). The transcript is filled
    # to just under the limit, so the next turn cannot be appended.
    limit = 1 << 20
    chats = data_dir / "chats"
    chats.mkdir(parents=True)
    path = chats / "121.jsonl"
    big = {"role": "user", "content": "기록 " * 100}
    with path.open("w", encoding="utf-8") as f:
        while f.tell() < limit - 4000:
            f.write(json.dumps(big, ensure_ascii=False) + "\n")
            f.write(json.dumps({"role": "assistant", "content": "네"}, ensure_ascii=False) + "\n")
    before = path.read_bytes()
    full_disk = {resource.RLIMIT_FSIZE: (limit, limit)}  # set in the bot's process before it starts
    bot = start_bot(rlimits=full_disk, RECALL_TURNS="0", **FAST)
    answers = {"질문 하나": "꽤 긴 답이에요. " * 300, "또 질문": "Another long answer. " * 300}  # neither fits any more

    def by_question(body):  # the background summary of the long chat may call the model between the questions
        return Text(answers.get(last_user_text(body), f"echo: {last_user_text(body)}"))

    fake_anthropic.default = by_question
    fake_telegram.send_text(121, "질문 하나")
    seen = fake_telegram.wait_visible(121, 2)
    assert seen[0].startswith("꽤 긴 답이에요.")  # the answer itself
    assert seen[1].startswith("⚠️ 답은 드렸지만 저장하지 못했어요")  # and why it will not be remembered
    assert path.read_bytes() == before  # nothing half-written: the partial append was taken back
    fake_telegram.send_text(121, "또 질문", language_code="en")  # the bot keeps running
    notice = "⚠️ This answer could not be saved"
    fake_telegram.wait_for(lambda: fake_telegram.visible(121)[-1].startswith(notice))
    assert "".join(fake_telegram.visible(121)[2:-1]).startswith("Another long answer.")
    assert bot.settle(fake_telegram) == 0
    assert path.read_bytes() == before
    assert "the answer could not be saved" in bot.log
