"""The question of a chat whose answer failed, kept so that /retry works after a restart.

``chats/<chat_id>.pending.json`` (atomic write, mode 0600) holds the failed question's text
and stored fields; it is written when the model call fails and removed once the chat has a
successful answer again (the question is then in the transcript, or the user moved on). An
unreadable file counts as no pending question.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memory.files import atomic_write_json, fsync_dir
from memory.transcript import check_chat_id


class PendingStore:
    def __init__(self, data_dir: Path | str) -> None:
        self.dir = Path(data_dir) / "chats"

    def path(self, chat_id: int | str) -> Path:
        return self.dir / f"{check_chat_id(chat_id)}.pending.json"

    def save(self, chat_id: int | str, question: Mapping[str, Any]) -> None:
        atomic_write_json(self.path(chat_id), dict(question))

    def load(self, chat_id: int | str) -> dict[str, Any] | None:
        try:
            data = json.loads(self.path(chat_id).read_bytes())
        except (FileNotFoundError, UnicodeDecodeError, json.JSONDecodeError):
            return None
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            return None
        return data

    def clear(self, chat_id: int | str) -> None:
        path = self.path(chat_id)
        if path.exists():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
                fsync_dir(self.dir)
