"""End to end: images sent as files, through the real bot process and the strict fake Anthropic API.

The fake refuses an image whose base64 text is over 5 MB (5,242,880 characters), as the
real API does, so a large PNG only gets an answer if the bot fits it first.
"""

import base64
import io
import random

from PIL import Image, ImageDraw

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.messages_rules import MAX_IMAGE_BASE64
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import convo, stored

CHAT = 9090
FAST = {"STREAM_INTERVAL": "0.1", "TELEGRAM_RATE_FACTOR": "20"}
"""Previews every 0.1 s; the fake has no flood limit: no second between two messages in a chat."""


def noise_png(side: int) -> bytes:
    """A PNG of random pixels: it does not compress, so ``side`` 1230 makes about 4.5 MB."""
    img = Image.frombytes("RGB", (side, side), random.Random(side).randbytes(side * side * 3))
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def send_document(tg: FakeTelegram, file_id: str, data: bytes | None, *, size: int | None = None, **kw) -> None:
    """The user sends a file (an image/png document); its bytes are stored for download."""
    if data is not None:
        tg.files[file_id] = data
    doc = {
        "file_id": file_id,
        "file_unique_id": file_id + "_u",
        "file_name": f"{file_id}.png",
        "mime_type": "image/png",
        "file_size": size if size is not None else len(data or b""),
    }
    tg.push_update({"message": tg.message(CHAT, None, document=doc, **kw)})


def test_a_png_just_under_5_mb_sent_as_a_file_is_answered(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    png = noise_png(1230)
    assert 4_000_000 < len(png) < 5 * 1024 * 1024 < len(base64.b64encode(png))
    fake_anthropic.reply("스크린샷에 노이즈만 보여요.")
    send_document(fake_telegram, "big-png", png, caption="이게 뭐야?")
    assert fake_telegram.wait_visible(CHAT, timeout=30) == ["스크린샷에 노이즈만 보여요."]
    requests = fake_anthropic.requests
    assert len(requests) == 1
    image, text = convo(requests[0])[-1]["content"]
    assert text == {"type": "text", "text": "[사진] 이게 뭐야?"}
    assert image["source"]["media_type"] == "image/jpeg"
    assert len(image["source"]["data"]) <= MAX_IMAGE_BASE64
    shown = Image.open(io.BytesIO(base64.b64decode(image["source"]["data"])))
    assert shown.size == (1230, 1230)
    rows = stored(data_dir, CHAT)
    assert [(r["role"], r["content"], r.get("photo")) for r in rows] == [
        ("user", "[사진] 이게 뭐야?", "big-png"),
        ("assistant", "스크린샷에 노이즈만 보여요.", None),
    ]

    # /retry downloads the file again and fits it the same way
    fake_anthropic.reply("다시 봐도 노이즈예요.")
    fake_telegram.send_text(CHAT, "/retry")
    fake_telegram.wait_visible(CHAT, 2, timeout=30)
    again = convo(fake_anthropic.requests[1])[-1]["content"][0]["source"]
    assert again["media_type"] == "image/jpeg" and len(again["data"]) <= MAX_IMAGE_BASE64


def test_an_unreadable_image_gets_a_clear_reply_and_nothing_is_stored(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    send_document(fake_telegram, "broken-png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 300, caption="이거 봐 줘")
    assert "이미지를 읽을 수 없어요" in fake_telegram.wait_visible(CHAT)[0]
    send_document(fake_telegram, "broken-en", b"GIF89a garbage", language_code="en")
    assert "could not read this image" in fake_telegram.wait_visible(CHAT, 2)[1]
    assert fake_anthropic.requests == []
    assert stored(data_dir, CHAT) == []


def test_a_file_over_telegrams_20_mb_download_limit_is_refused_before_downloading(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    start_bot(**FAST)
    send_document(fake_telegram, "huge-png", None, size=21 * 1024 * 1024, language_code="en")
    reply = fake_telegram.wait_visible(CHAT)[0]
    assert "too big" in reply and "20 MB" in reply
    assert fake_telegram.calls_of("getFile") == []
    assert fake_anthropic.requests == [] and stored(data_dir, CHAT) == []
    # 6 MB is fine now: it is downloaded and fitted (the old limit was 5 MB of raw bytes)
    img = Image.new("RGB", (3000, 2000), "white")
    ImageDraw.Draw(img).rectangle((100, 100, 2900, 1900), outline="black", width=9)
    out = io.BytesIO()
    img.save(out, "PNG")
    fake_anthropic.reply("사각형이에요.")
    send_document(fake_telegram, "drawing", out.getvalue(), size=6 * 1024 * 1024)
    assert fake_telegram.wait_visible(CHAT, 2)[1] == "사각형이에요."
    source = convo(fake_anthropic.requests[0])[-1]["content"][0]["source"]
    assert source["media_type"] == "image/png"
    assert Image.open(io.BytesIO(base64.b64decode(source["data"]))).size == (1568, 1045)
