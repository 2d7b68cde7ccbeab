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


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def convo(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Messages request's conversation as stored turns look: without the per-turn system message
    after the question (``turn_context``), cache breakpoints removed, and a content of one text block
    (the question, marked for caching) as its plain string."""
    messages = list(body["messages"])
    while messages and messages[-1].get("role") == "system":
        messages.pop()
    out = []
    for m in _plain(messages):
        content = m.get("content")
        if isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text":
            m = {**m, "content": content[0]["text"]}
        out.append(m)
    return out


def turn_context(body: dict[str, Any]) -> str:
    """The text of the system message(s) after the question (the time line, related memories), or ""."""
    texts: list[str] = []
    for m in body["messages"]:
        if m.get("role") == "system":
            content = m["content"]
            texts += [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    return "\n".join(texts)
