"""Fitting images to Anthropic's limits: the 5 MB applies to the base64 text; large sides are scaled down."""

import io
import random

import pytest
from PIL import Image, ImageDraw

from bot.tg import photos
from tests.fakes.anthropic_server import check_images
from tests.fakes.messages_rules import MAX_IMAGE_BASE64, InvalidRequest, validate


def encode(img: Image.Image, fmt: str, **kw) -> bytes:
    out = io.BytesIO()
    img.save(out, fmt, **kw)
    return out.getvalue()


def noise(w: int, h: int, mode: str = "RGB", seed: int = 5) -> Image.Image:
    """Random pixels: incompressible, so the PNG is as large as it gets."""
    return Image.frombytes(mode, (w, h), random.Random(seed).randbytes(w * h * len(mode)))


def screenshot(w: int, h: int) -> Image.Image:
    """Flat colours and lines of 'text': what a PNG screenshot looks like."""
    img = Image.new("RGB", (w, h), "white")
    draw = ImageDraw.Draw(img)
    for y in range(0, h, 24):
        draw.line((20, y + 12, w - 20 - (y * 7) % 300, y + 12), fill=(30, 30, 30), width=3)
    return img


def decoded(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    return img


def request_error(source: dict) -> str | None:
    """What the fake Anthropic API (strict like the real one) answers to a request with this image."""
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "image", "source": source}]}],
    }
    try:
        validate(body)
        check_images(body)
    except InvalidRequest as e:
        return str(e)
    return None


def block_error(data: bytes, media: str) -> str | None:
    return request_error(photos.image_block(data, media)["source"])


def test_the_limit_is_on_the_base64_text():
    assert photos.base64_len(photos.MAX_BYTES) == photos.MAX_BASE64 == MAX_IMAGE_BASE64 == 5_242_880
    assert photos.base64_len(photos.MAX_BYTES + 1) > photos.MAX_BASE64
    assert photos.base64_len(4_500_000) > photos.MAX_BASE64  # a 4.5 MB file does not fit


def test_an_image_that_fits_is_sent_unchanged():
    jpeg = encode(noise(800, 600), "JPEG", quality=90)
    assert photos.prepare(jpeg) == (jpeg, "image/jpeg")
    png = encode(screenshot(1200, 900), "PNG")
    assert photos.prepare(png) == (png, "image/png")
    webp = encode(screenshot(300, 200), "WEBP")
    assert photos.prepare(webp) == (webp, "image/webp")


def test_a_png_just_under_5_mb_is_reencoded_so_its_base64_fits():
    png = encode(noise(1230, 1230), "PNG")
    assert 4_000_000 < len(png) < 5 * 1024 * 1024
    assert block_error(png, "image/png") is not None  # as it is, the API refuses it
    data, media = photos.prepare(png)
    assert media == "image/jpeg"  # noise does not fit as PNG; JPEG does
    assert photos.base64_len(len(data)) <= photos.MAX_BASE64
    assert decoded(data).size == (1230, 1230)  # not larger than needed: no scaling
    assert block_error(data, media) is None


def test_a_large_screenshot_is_scaled_to_1568_and_stays_png():
    png = encode(screenshot(3000, 2000), "PNG")
    data, media = photos.prepare(png)
    assert media == "image/png"
    assert decoded(data).size == (1568, 1045)  # aspect ratio kept
    assert block_error(data, media) is None


def test_transparency_is_kept_as_png():
    img = Image.new("RGBA", (2400, 1200), (0, 0, 0, 0))
    ImageDraw.Draw(img).ellipse((100, 100, 1100, 1100), fill=(200, 20, 20, 255))
    data, media = photos.prepare(encode(img, "PNG"))
    out = decoded(data)
    assert media == "image/png" and out.mode == "RGBA" and out.size == (1568, 784)
    assert out.getpixel((5, 5))[3] == 0  # still transparent


def test_transparent_noise_too_big_for_png_becomes_jpeg_on_white():
    data, media = photos.prepare(encode(noise(1100, 1100, "RGBA"), "PNG"))
    assert media == "image/jpeg"
    assert photos.base64_len(len(data)) <= photos.MAX_BASE64


def test_a_large_photo_is_scaled_down_as_jpeg():
    data, media = photos.prepare(encode(noise(4000, 3000), "JPEG", quality=95))
    assert media == "image/jpeg"
    assert decoded(data).size == (1568, 1176)


def test_exif_orientation_is_applied_before_scaling():
    img = screenshot(3200, 1600)  # stored landscape, shown portrait (EXIF orientation 6: rotate 90°)
    exif = Image.Exif()
    exif[0x0112] = 6
    data, _ = photos.prepare(encode(img, "JPEG", exif=exif.tobytes()))
    assert decoded(data).size == (784, 1568)


def test_formats_claude_does_not_take_are_converted():
    data, media = photos.prepare(encode(screenshot(200, 100), "BMP"))
    assert media == "image/jpeg" and decoded(data).format == "JPEG"


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n" + b"p" * 500,  # a PNG signature and nothing else
        b"\xff\xd8\xff\xe0" + bytes(range(256)) * 40,
        b"not an image at all",
        b"",
    ],
)
def test_unreadable_images_are_refused(data):
    with pytest.raises(photos.UnreadableImage):
        photos.prepare(data)


def test_a_truncated_image_is_refused():
    png = encode(screenshot(600, 400), "PNG")
    with pytest.raises(photos.UnreadableImage):
        photos.prepare(png[: len(png) // 2])


def test_too_many_pixels_are_refused_without_decoding():
    huge = encode(Image.new("1", (10_000, 10_000)), "PNG")  # 100 megapixels in a few kilobytes
    assert len(huge) < 100_000
    with pytest.raises(photos.TooManyPixels):
        photos.prepare(huge)


def test_the_fake_api_refuses_what_the_real_one_refuses():
    ok = encode(screenshot(100, 80), "PNG")
    assert block_error(ok, "image/png") is None
    assert "appears to be a image/png image" in (block_error(ok, "image/jpeg") or "")
    assert block_error(b"junk bytes", "image/png") == "Could not process image"
    big = {"type": "base64", "media_type": "image/png", "data": "A" * (MAX_IMAGE_BASE64 + 524_288)}
    assert request_error(big) == (
        "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: 5767168 bytes > 5242880 bytes"
    )
    at_limit = {"type": "base64", "media_type": "image/png", "data": "A" * MAX_IMAGE_BASE64}
    assert request_error(at_limit) == "Could not process image"  # not "exceeds": the limit itself is allowed


def test_the_reviews_7000_by_7000_png_is_refused_before_decoding_and_a_big_jpeg_is_decoded_small():
    png = encode(Image.new("RGB", (7000, 7000), "white"), "PNG")  # 49 megapixels: ~200 MB if decoded
    with pytest.raises(photos.TooManyPixels):
        photos.prepare(png)
    with pytest.raises(photos.TooManyPixels):  # Anthropic refuses sides over 8000 px
        photos.prepare(encode(Image.new("RGB", (8200, 100), "white"), "PNG"))
    jpeg = encode(Image.new("RGB", (7000, 7000), "white"), "JPEG")  # a JPEG is decoded at a reduced scale
    data, media = photos.prepare(jpeg)
    assert media == "image/jpeg" and max(Image.open(io.BytesIO(data)).size) == photos.MAX_SIDE
