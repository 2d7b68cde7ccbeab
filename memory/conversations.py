"""The conversations kept under ``chats/``: listing them, and bringing an archived one back.

A conversation is a transcript: ``chats/<chat_id>.jsonl`` (the current conversation of a chat) or
``chats/archive/<chat_id>.<stamp>.jsonl`` (one put aside by /reset, with its summary next to it as
``<same name>.summary.json``). Listing reads each file's first line only (the first words) and its
modification time (the last turn appended, as transcripts are append-only).

``unarchive`` moves an archived transcript (and its summary) back to be the chat's current one; the
caller first archives the chat's current conversation (so nothing is overwritten or deleted).
Each move is a hard link then an unlink: it never replaces a file that appeared meanwhile.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from memory.content import display_text
from memory.files import fsync_dir
from memory.transcript import InvalidChatId, Transcript, check_chat_id, is_message

FIRST_LINE_LIMIT = 64 * 1024  # bytes read for the first words; a longer first line shows none
ARCHIVE = "archive"


@dataclass(frozen=True)
class Conversation:
    name: str  # the chat id, or "<chat_id>.<stamp>" for an archived conversation
    chat_id: str
    path: Path
    archived: bool
    last_used: float  # the file's modification time (seconds since the epoch)
    first_words: str


def list_conversations(transcript: Transcript, *, archived: bool = True) -> list[Conversation]:
    """Every conversation, the most recently used first (ties: by name)."""
    found: list[Conversation] = []
    folders = [(transcript.dir, False)] + ([(transcript.dir / ARCHIVE, True)] if archived else [])
    for folder, is_archive in folders:
        try:
            paths = sorted(folder.glob("*.jsonl"))
        except OSError:
            continue
        for path in paths:
            conversation = _conversation(path, is_archive)
            if conversation is not None:
                found.append(conversation)
    found.sort(key=lambda c: (-c.last_used, c.name))
    return found


def find_conversation(transcript: Transcript, name: str) -> Conversation | None:
    """The conversation called ``name`` (a chat id, or an archived conversation's name)."""
    for conversation in list_conversations(transcript):
        if conversation.name == name:
            return conversation
    return None


def _conversation(path: Path, archived: bool) -> Conversation | None:
    name = path.name.removesuffix(".jsonl")
    try:
        chat_id = check_chat_id(name.split(".", 1)[0] if archived else name)
        stat = path.stat()
    except (InvalidChatId, OSError):
        return None
    return Conversation(name, chat_id, path, archived, stat.st_mtime, first_words(path))


def first_words(path: Path, limit: int = 60) -> str:
    """The start of the conversation's first message, on one line ("" if unreadable)."""
    try:
        with open(path, "rb") as f:
            line = f.readline(FIRST_LINE_LIMIT)
        data = json.loads(line)
    except (OSError, ValueError):
        return ""
    if not is_message(data):
        return ""
    words = " ".join(display_text(data["content"]).split())
    return words if len(words) <= limit else words[: limit - 1] + "…"


def unarchive(transcript: Transcript, conversation: Conversation) -> None:
    """Make the archived ``conversation`` the current one of its chat (which must have none now).

    Raises FileExistsError if the chat has a current conversation (archive it first).
    """
    if not conversation.archived:
        raise ValueError(f"{conversation.name} is not archived")
    summary = conversation.path.with_name(conversation.name + ".summary.json")
    _move(conversation.path, transcript.path(conversation.chat_id))
    if summary.exists():
        target = transcript.dir / f"{conversation.chat_id}.summary.json"
        try:
            _move(summary, target)
        except FileExistsError:  # a stray summary of no transcript: the conversation is summarized anew
            pass
    fsync_dir(transcript.dir)
    fsync_dir(conversation.path.parent)


def _move(source: Path, target: Path) -> None:
    """Rename without ever replacing ``target`` (FileExistsError if it exists)."""
    os.link(source, target)
    os.unlink(source)
