"""Photos for Claude: pick a size, download it, fit it to Anthropic's limits, make an image block.

Only the Telegram ``file_id`` is stored with the turn, never the image bytes, so the
transcript stays small and readable.

Anthropic takes an image whose *base64 text* is at most 5 MB (5,242,880 characters, so
about 3.75 MB of bytes), refuses images over 8000×8000 px, and scales anything larger
than about 1568 px on its long side down anyway (to about 1.15 megapixels: all Claude
uses). ``prepare`` decodes every image (an unreadable one is refused before the call)
and re-encodes only what does not fit: scaled to ``MAX_SIDE``, JPEG for photos, PNG for
images with transparency or drawn ones (screenshots, GIFs) as long as that fits, else
JPEG, smaller still until the base64 fits.

Decoding is bounded: the size is read from the header and an image over ``MAX_PIXELS``
(or a side over ``MAX_INPUT_SIDE``) is refused before any pixel is decoded; a JPEG is
decoded at a reduced scale (``draft``, at most 8× smaller) so it costs a few megabytes
whatever its size; other formats are reduced by whole factors first, and at most
``FILE_SLOTS`` files are downloaded and decoded at once (``file_slot``).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import warnings
import weakref
from collections.abc import AsyncIterator, Sequence
from typing import Any

from PIL import Image, ImageOps
from telegram import Bot, PhotoSize

MAX_DOWNLOAD = 20 * 1024 * 1024  # Telegram's Bot API serves files up to 20 MB
MAX_BASE64 = 5 * 1024 * 1024  # Anthropic's limit, on the base64 text of one image
MAX_BYTES = MAX_BASE64 // 4 * 3  # the largest image whose base64 fits (3,932,160 bytes)
MAX_SIDE = 1568  # Claude scales larger images down to about this size anyway
MAX_INPUT_SIDE = 8000  # Anthropic refuses images with a longer side
MAX_PIXELS = 16_000_000  # decoded in full (PNG, WebP, GIF …): 64 MB at most; more is refused before decoding
MAX_JPEG_PIXELS = MAX_INPUT_SIDE * MAX_INPUT_SIDE  # a JPEG is decoded at ≤ 1/4 scale beyond 4 × MAX_SIDE
FILE_SLOTS = 2  # files downloaded and decoded at once, in all chats
JPEG_QUALITY = 85
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_FORMATS = {"JPEG": "image/jpeg", "PNG": "image/png", "GIF": "image/gif", "WEBP": "image/webp"}
PHOTO_MARK = "[사진]"


class ImageError(Exception):
    """An image that cannot go to Claude."""


class PhotoTooBig(ImageError):
    """The file is over Telegram's download limit (MAX_DOWNLOAD)."""


class TooManyPixels(ImageError):
    """The image has more than MAX_PIXELS pixels."""


class UnreadableImage(ImageError):
    """The bytes are not an image Pillow can decode."""


def _side(p: PhotoSize) -> int:
    return max(p.width, p.height)


def pick_size(sizes: Sequence[PhotoSize]) -> PhotoSize:
    """The size to send to Claude: downloadable, and as close to MAX_SIDE as Telegram offers.

    The largest size up to MAX_SIDE wins unless it is much smaller than MAX_SIDE and a
    larger one exists; then the smallest of the larger ones. If every size is over
    MAX_DOWNLOAD, the smallest (its download then reports PhotoTooBig).
    """
    usable = [p for p in sizes if p.file_size is None or p.file_size <= MAX_DOWNLOAD]
    if not usable:
        return min(sizes, key=lambda p: (p.file_size or 0, _side(p)))
    small = [p for p in usable if _side(p) <= MAX_SIDE]
    large = [p for p in usable if _side(p) > MAX_SIDE]
    best = max(small, key=_side, default=None)
    if best is not None and (_side(best) >= MAX_SIDE // 2 or not large):
        return best
    return min(large, key=_side)


def media_type(data: bytes, default: str = "image/jpeg") -> str:
    """The image's type from its first bytes (Telegram photos are JPEG)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    return default


def base64_len(size: int) -> int:
    """Characters of the base64 text of ``size`` bytes."""
    return (size + 2) // 3 * 4


def image_block(data: bytes, media: str) -> dict[str, Any]:
    """An Anthropic ``image`` content block with the bytes inline (base64)."""
    return {"type": "image", "source": {"type": "base64", "media_type": media, "data": base64.b64encode(data).decode()}}


def _open(data: bytes) -> Image.Image:
    """The image with its header read (not yet decoded); UnreadableImage or TooManyPixels."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # checked below, against MAX_PIXELS
            img = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as e:
        raise TooManyPixels from e
    except Exception as e:  # Pillow raises many kinds (OSError, SyntaxError, ValueError, …) for bad input
        raise UnreadableImage(str(e)) from e
    limit = MAX_JPEG_PIXELS if img.format == "JPEG" else MAX_PIXELS
    if img.width * img.height > limit or max(img.size) > MAX_INPUT_SIDE:
        raise TooManyPixels
    return img


def _load(img: Image.Image) -> None:
    """Decode the pixels: a truncated or corrupt file fails here."""
    try:
        img.load()
    except Exception as e:
        raise UnreadableImage(str(e)) from e


def _has_alpha(img: Image.Image) -> bool:
    return img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info)


def _encode(img: Image.Image, fmt: str) -> bytes:
    out = io.BytesIO()
    if fmt == "PNG":
        img.save(out, "PNG", optimize=True)
    else:
        if img.mode != "RGB":
            flat = Image.new("RGB", img.size, "white")  # transparency becomes white, not black
            rgba = img.convert("RGBA")
            flat.paste(rgba, mask=rgba.getchannel("A"))
            img = flat
        img.save(out, "JPEG", quality=JPEG_QUALITY, optimize=True)
    return out.getvalue()


def _scaled(img: Image.Image, side: int) -> Image.Image:
    if max(img.size) <= side:
        return img
    scale = side / max(img.size)
    return img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))), Image.Resampling.LANCZOS)


def prepare(data: bytes) -> tuple[bytes, str]:
    """The image as it goes to Claude, and its media type.

    Unchanged when it is a JPEG, PNG, GIF or WebP whose base64 fits MAX_BASE64 and
    whose long side is at most MAX_SIDE; otherwise re-encoded (see the module doc).
    Raises UnreadableImage or TooManyPixels.
    """
    img = _open(data)
    media = _FORMATS.get(img.format or "")
    fits = media is not None and len(data) <= MAX_BYTES and max(img.size) <= MAX_SIDE
    if not fits and img.format == "JPEG":
        img.draft("RGB", (MAX_SIDE, MAX_SIDE))  # decode a large JPEG at a reduced scale (much faster)
    _load(img)
    if fits:
        return data, media  # type: ignore[return-value]
    lossless = _has_alpha(img) or media in ("image/png", "image/gif")  # keep transparency and sharp drawings
    if img.mode not in ("RGB", "RGBA", "L", "LA"):
        img = img.convert("RGBA" if _has_alpha(img) else "RGB")
    factor = max(img.size) // MAX_SIDE
    if factor >= 2:  # a whole factor first: fast, and the full-size pixels are let go at once
        img = img.reduce(factor)
    img = ImageOps.exif_transpose(img)  # the pixels as they are shown; the EXIF is not kept
    side = min(MAX_SIDE, max(img.size))
    while True:
        small = _scaled(img, side)
        if lossless:
            png = _encode(small, "PNG")
            if len(png) <= MAX_BYTES:
                return png, "image/png"
        jpeg = _encode(small, "JPEG")
        if len(jpeg) <= MAX_BYTES or side <= 64:
            return jpeg, "image/jpeg"
        side = side * 3 // 4


_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def file_slot() -> AsyncIterator[None]:
    """One of the FILE_SLOTS for downloading and decoding a file: bounds the memory and CPU files take."""
    loop = asyncio.get_running_loop()
    slots = _slots.get(loop)
    if slots is None:
        slots = _slots[loop] = asyncio.Semaphore(FILE_SLOTS)
    async with slots:
        yield


async def download(bot: Bot, file_id: str, size_hint: int | None = None) -> bytes:
    """The file's bytes; PhotoTooBig when it is over MAX_DOWNLOAD (checked before and after downloading)."""
    if size_hint is not None and size_hint > MAX_DOWNLOAD:
        raise PhotoTooBig
    file = await bot.get_file(file_id)
    if file.file_size is not None and file.file_size > MAX_DOWNLOAD:
        raise PhotoTooBig
    data = bytes(await file.download_as_bytearray())
    if len(data) > MAX_DOWNLOAD:
        raise PhotoTooBig
    return data


async def fetch_block(bot: Bot, file_id: str, size_hint: int | None = None) -> dict[str, Any]:
    """Download an image and make the block Claude gets (decoding and re-encoding off the event loop).

    Raises an ImageError (too big to download, too many pixels, unreadable) or a TelegramError.
    """
    async with file_slot():
        data = await download(bot, file_id, size_hint)
        prepared, media = await asyncio.to_thread(prepare, data)
        del data
        return await asyncio.to_thread(image_block, prepared, media)


def stored_text(caption: str) -> str:
    """The user turn as stored: the photo marker and the caption."""
    return f"{PHOTO_MARK} {caption}".strip()
