"""The media checks of the fake Messages API: image and PDF blocks decoded as the real API does.

Image blocks (``check_images``): a media type that is not what the bytes are, or bytes that are
no image, get the API's 400 (the 5 MB base64 limit is in messages_rules). PDF ``document``
blocks (``check_documents``, with pypdf): bytes that are no PDF, an encrypted PDF, or more than
100 pages get the API's 400.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Mapping
from typing import Any

from PIL import Image

from tests.fakes.messages_rules import InvalidRequest

# -- image blocks, decoded like the real API does ----------------------------------------------

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\xff\xd8\xff", "image/jpeg"),
)


def _sniff(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((media for magic, media in _MAGIC if data.startswith(magic)), None)


def _image_error(where: str, source: Mapping[str, Any]) -> str | None:
    """Why the API refuses one base64 image source, in its words; None if it is accepted."""
    media = source.get("media_type")
    if media not in ("image/jpeg", "image/png", "image/gif", "image/webp"):
        return f"{where}.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
    try:
        raw = base64.b64decode(str(source.get("data", "")), validate=True)
    except (binascii.Error, ValueError):
        return f"{where}.base64.data: invalid base64 data"
    actual = _sniff(raw)
    if actual is not None and actual != media:
        return (
            f"{where}.base64.data: the image was specified using the {media} media type, "
            f"but the image appears to be a {actual} image"
        )
    try:
        with Image.open(io.BytesIO(raw)) as img:
            img.load()
    except Exception:
        return "Could not process image"
    return None


def check_images(body: Mapping[str, Any]) -> None:
    """Raise InvalidRequest for the first image block the real API could not read (after ``validate``)."""
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for c, block in enumerate(content):
            source = block.get("source") if isinstance(block, Mapping) and block.get("type") == "image" else None
            if isinstance(source, Mapping) and source.get("type") == "base64":
                error = _image_error(f"messages.{m}.content.{c}.image.source", source)
                if error is not None:
                    raise InvalidRequest(error)


MAX_PDF_PAGES = 100


def _pdf_error(where: str, data: str) -> str | None:
    """Why the API refuses one base64 PDF, in its words; None if it is accepted."""
    import pypdf

    prefix = f"{where}.pdf.source.base64.data"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"{prefix}: invalid base64 data"
    try:
        reader = pypdf.PdfReader(io.BytesIO(raw))
        if reader.is_encrypted:
            return f"{prefix}: The PDF specified is password protected."
        pages = len(reader.pages)
    except Exception:
        return f"{prefix}: The PDF specified was not valid."
    if not raw.lstrip().startswith(b"%PDF-") or pages < 1:
        return f"{prefix}: The PDF specified was not valid."
    if pages > MAX_PDF_PAGES:
        return f"{prefix}: A maximum of {MAX_PDF_PAGES} PDF pages may be provided."
    return None


def check_documents(body: Mapping[str, Any]) -> None:
    """Raise InvalidRequest for the first PDF document block the real API could not read (after ``validate``)."""
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for c, block in enumerate(content):
            source = block.get("source") if isinstance(block, Mapping) and block.get("type") == "document" else None
            if isinstance(source, Mapping) and source.get("type") == "base64":
                error = _pdf_error(f"messages.{m}.content.{c}", str(source.get("data", "")))
                if error is not None:
                    raise InvalidRequest(error)
