"""Small helpers shared by the test modules."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any


def stored(data_dir: Path, chat_id: int | str) -> list[dict[str, Any]]:
    """The records of a chat's live transcript, oldest first ([] while it has no file)."""
    path = data_dir / "chats" / f"{chat_id}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def make_pdf(pages: int = 2, *, password: str | None = None) -> bytes:
    """A small valid PDF of blank pages, encrypted with ``password`` when given."""
    import pypdf

    writer = pypdf.PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(200, 200)
    if password is not None:
        writer.encrypt(password)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
