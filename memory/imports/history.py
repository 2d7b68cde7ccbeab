"""A chat's whole history out again: every transcript (archived ones first, by name, which starts with
their date; then the live one), message by message, as JSON lines or as Markdown.

Read in bounded memory (one line at a time) and written to a text stream. The live transcript is read up
to its size under the lock (memory.transcript): whole turns only; archived ones are complete files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from memory.content import display_text
from memory.recall.lines import parse_line
from memory.recall.plan import chat_files
from memory.transcript import Transcript, check_chat_id, encode_line

SOURCES = {"chatgpt": "ChatGPT", "claude": "Claude", "telegram": "Telegram"}


def history(data_dir: Path | str, chat: int | str) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """(archive file name, or None for the live transcript; message) for every stored message, in order."""
    chat = check_chat_id(chat)
    transcript = Transcript(data_dir)
    files = chat_files(transcript.dir, chat)
    for name, path in files.items():
        if name == "":
            continue
        try:
            f = open(path, "rb")  # noqa: SIM115
        except FileNotFoundError:
            continue  # archived meanwhile under another name: it is read where it is now at the next export
        with f:
            for raw in f:
                if raw.endswith(b"\n") and (data := parse_line(raw)) is not None:
                    yield name, data
    if "" in files:
        for entry in transcript.read(chat):
            yield None, entry.data


def history_jsonl(data_dir: Path | str, chat: int | str, out: TextIO) -> int:
    """Write the history as JSON lines, each message as its transcript stores it (imported ones with their
    ``src``); returns the number of messages."""
    n = 0
    for _, data in history(data_dir, chat):
        out.write(encode_line(data))
        n += 1
    return n


def _heading(name: str | None, data: dict[str, Any]) -> str:
    if name is None:
        return "## Current conversation"
    source = SOURCES.get(str(data.get("src") or ""))
    parts = [f"Imported from {source}" if source else "Archived conversation"]
    if data.get("at"):
        parts.append(str(data["at"])[:10])
    if source and data.get("title"):
        parts.append(" ".join(str(data["title"]).split()))
    return "## " + " · ".join(parts)


def history_markdown(data_dir: Path | str, chat: int | str, out: TextIO) -> int:
    """Write the history as Markdown: a section per conversation (archived, imported, the current one), a
    paragraph per message with who said it and when; returns the number of messages."""
    out.write(f"# Chat {check_chat_id(chat)}\n")
    current: tuple[str | None, Any] | None = None
    n = 0
    for name, data in history(data_dir, chat):
        section = (name, data.get("src_conv"))
        if section != current:
            current = section
            out.write(f"\n{_heading(name, data)}\n")
        role = str(data.get("role"))
        who = "assistant" if role == "assistant" else (str(data.get("name") or "") or "user")
        at = str(data.get("at") or "").replace("T", " ")[:16]
        text = display_text(data.get("content")).strip()
        if who != "user" and text.startswith(who + ": "):  # a group's line names its sender in the text too
            text = text[len(who) + 2 :]
        out.write(f"\n**{who}**" + (f" · {at}" if at else "") + f"\n\n{text}\n")
        n += 1
    return n
