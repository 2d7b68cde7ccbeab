"""Small helpers shared by the test modules."""

from __future__ import annotations

import io
import json
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # memory.recall is imported where it is used: most test modules never need it
    from bot.config import Settings
    from memory.recall import RecallIndex
    from memory.transcript import Transcript


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
        if isinstance(content, list) and m.get("role") == "user":  # the quoted related memories: not stored
            content = [b for b in content if not _is_quoted_recall(b)]
            m = {**m, "content": content}
        if isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text":
            m = {**m, "content": content[0]["text"]}
        out.append(m)
    return out


def _is_quoted_recall(block: Any) -> bool:
    return isinstance(block, dict) and str(block.get("text", "")).startswith("<quoted_earlier_conversation>")


def recalled(body: Any) -> str:
    """The related memories a request carries (a request body, or a FakeModel call): the quoted block
    after the question in the last user message, or "" (they are never anywhere else)."""
    messages = body["messages"] if isinstance(body, dict) else body.messages
    users = [m for m in messages if m.get("role") == "user"]
    content = users[-1]["content"] if users else ""
    if isinstance(content, str):
        return ""
    return "\n".join(str(b["text"]) for b in content if _is_quoted_recall(b))


def asked_text(body: dict[str, Any]) -> str:
    """The last user message's text without the quoted related memories after it (what a scripted
    fake answers to; ``last_user_text`` of the fake server has them too)."""
    users = [m for m in body["messages"] if m.get("role") != "system"]
    content = users[-1]["content"] if users else ""
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text" and not _is_quoted_recall(b))


def turn_context(body: dict[str, Any]) -> str:
    """The text of the system message(s) after the question (the time line, related memories), or ""."""
    texts: list[str] = []
    for m in body["messages"]:
        if m.get("role") == "system":
            content = m["content"]
            texts += [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    return "\n".join(texts)


# -- the recall index's background build, its worker held at a gate (test_recall_build, test_recall_deleted)
BUDGET = 4_096  # bytes a question may index (the real default is 256 KiB)
WAIT = 120.0  # generous: only reached if the code is broken
GATE_SCRIPT = Path(__file__).with_name("recall_worker_gate.py")


class Gate:
    """Holds the worker process inside ``index_file`` (after ``free_calls`` batches) until opened;
    counts the turns indexed in this process (on a question's path) meanwhile."""

    def __init__(
        self,
        monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path,
        *,
        free_calls: int = 0,
        batch: int = 0,
        hold: bool = False,
    ) -> None:
        from memory.recall import RecallIndex
        from memory.recall import index as index_module

        self.dir = tmp_path / "gate"
        self.dir.mkdir()
        self.caller_turns = 0
        real = index_module.index_file

        def counted(*args: Any, **kwargs: Any) -> tuple[int, bool]:
            n, more = real(*args, **kwargs)
            self.caller_turns += n
            return n, more

        def command(index: RecallIndex, chat: str) -> list[str]:
            flags = [str(self.dir), str(free_calls), str(batch), "1" if hold else "0"]
            return [sys.executable, str(GATE_SCRIPT), *flags, "--", str(index.data_dir), str(index.path), chat]

        monkeypatch.setattr(index_module, "index_file", counted)
        monkeypatch.setattr(RecallIndex, "_worker_command", command)

    def wait(self, name: str, timeout: float = WAIT) -> bool:
        """Wait for the worker to write GATE_DIR/``name`` (polling; False only if it never comes)."""
        deadline = time.monotonic() + timeout
        while not (self.dir / name).exists():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def reached(self) -> bool:
        return self.wait("reached")

    def open(self) -> None:
        (self.dir / "open").touch()

    def worker(self) -> tuple[int, int]:
        """The worker's pid and niceness."""
        pid, nice = (self.dir / "worker").read_text().split()
        return int(pid), int(nice)


def plant(transcript: Transcript, chat: int | str, n: int, secret: str = "사물함 비밀번호는 8264야") -> None:
    transcript.append(
        chat,
        [
            {"role": "user", "content": secret, "at": "2026-08-01T10:00:00+09:00"},
            {"role": "assistant", "content": "네, 기억할게요.", "at": "2026-08-01T10:00:00+09:00"},
        ],
    )
    for i in range(n):
        transcript.append(
            chat,
            [
                {"role": "user", "content": f"오늘 {i}번째 잡담: 날씨가 좋네", "at": "2026-09-01T10:00:00+09:00"},
                {"role": "assistant", "content": f"그렇네요 {i}", "at": "2026-09-01T10:00:00+09:00"},
            ],
        )


def indexed(data_dir: Path, chat: str) -> int:
    """The chat's document count in DATA_DIR/recall.sqlite3, read by a connection of its own (read-only:
    it creates nothing)."""
    con = sqlite3.connect(f"file:{data_dir / 'recall.sqlite3'}?mode=ro", uri=True)
    try:
        row = con.execute("SELECT docs FROM chats WHERE chat=?", (chat,)).fetchone()
        return int(row[0]) if row else 0
    finally:
        con.close()


@pytest.fixture(name="index")
def budget_index(data_dir: Path) -> Iterator[RecallIndex]:
    """The fixture ``index``: a RecallIndex that indexes at most BUDGET bytes on a question's path
    (import ``budget_index`` into a test module to use it)."""
    from memory.recall import RecallIndex

    idx = RecallIndex(data_dir, sync_budget=BUDGET)
    yield idx
    idx.close()


def app_settings(tg: Any, model: Any, data_dir: Path) -> Settings:
    """Settings for the Telegram application built in the test's own process against the fakes (owner: 1)."""
    from bot.config import load_settings

    env = {
        "TELEGRAM_BOT_TOKEN": tg.token,
        "TELEGRAM_BASE_URL": tg.base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "ANTHROPIC_BASE_URL": model.url,
        "DATA_DIR": str(data_dir),
        "OWNER_ID": "1",
        "RECALL_MEANING": "off",
    }
    return load_settings(env, dotenv=False)
