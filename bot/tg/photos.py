"""Photos for Claude: pick a size, download it, and make an Anthropic image block.

Only the Telegram ``file_id`` is stored with the turn, never the image bytes, so the
transcript stays small and readable.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from telegram import Bot, PhotoSize

MAX_BYTES = 5 * 1024 * 1024  # Anthropic's limit for one base64 image
MAX_SIDE = 1600  # Claude scales larger images down to about this size anyway
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
PHOTO_MARK = "[사진]"


class PhotoTooBig(Exception):
    """The image is larger than MAX_BYTES."""


def _side(p: PhotoSize) -> int:
    return max(p.width, p.height)


def pick_size(sizes: Sequence[PhotoSize]) -> PhotoSize:
    """The size to send to Claude: under MAX_BYTES, and as close to MAX_SIDE as Telegram offers.

    The largest size up to MAX_SIDE wins unless it is much smaller than MAX_SIDE and a
    larger one exists; then the smallest of the larger ones. If every size is over
    MAX_BYTES, the smallest (its download then reports PhotoTooBig).
    """
    usable = [p for p in sizes if p.file_size is None or p.file_size <= MAX_BYTES]
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


def image_block(data: bytes, media: str) -> dict[str, Any]:
    """An Anthropic ``image`` content block with the bytes inline (base64)."""
    return {"type": "image", "source": {"type": "base64", "media_type": media, "data": base64.b64encode(data).decode()}}


async def download(bot: Bot, file_id: str, size_hint: int | None = None) -> bytes:
    """The file's bytes; PhotoTooBig when it is over MAX_BYTES (checked before and after downloading)."""
    if size_hint is not None and size_hint > MAX_BYTES:
        raise PhotoTooBig
    file = await bot.get_file(file_id)
    if file.file_size is not None and file.file_size > MAX_BYTES:
        raise PhotoTooBig
    data = bytes(await file.download_as_bytearray())
    if len(data) > MAX_BYTES:
        raise PhotoTooBig
    return data


def stored_text(caption: str) -> str:
    """The user turn as stored: the photo marker and the caption."""
    return f"{PHOTO_MARK} {caption}".strip()
