"""The tools' newest paths, each pinned by a test that fails when the code is broken on purpose
(issue 33; the changes are in scripts/mutations.toml): a group member's rights over reminders,
the size refusal of a document before its download."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.tools import ToolContext
from bot.tools.reminders import reminder_tools
from memory.reminders import ReminderStore

GROUP = "-1001234"
NOW = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)


def member(user_id: int) -> ToolContext:
    """A group member who does not manage the chat, asking through Telegram."""
    return ToolContext(GROUP, NOW, {}, {"user_id": user_id}, user_id, may_manage=lambda: False)


def test_a_group_member_cancels_their_own_reminder_but_not_anothers(data_dir: Path):
    store = ReminderStore(data_dir)
    tools = {t.name: t.handler for t in reminder_tools(store, "Asia/Seoul")}
    mine = tools["set_reminder"](member(7), {"at": "2026-12-01T18:00:00+09:00", "text": "약 먹기"})
    theirs = tools["set_reminder"](member(8), {"at": "2026-12-01T19:00:00+09:00", "text": "운동"})
    assert not mine.is_error and not theirs.is_error
    ids = {r.user_id: r.id for r in store.pending(GROUP)}
    refused = tools["cancel_reminder"](member(7), {"id": ids[8]})
    assert refused.is_error and [r.text for r in store.pending(GROUP)] == ["약 먹기", "운동"]
    cancelled = tools["cancel_reminder"](member(7), {"id": ids[7]})
    assert not cancelled.is_error and "cancelled" in cancelled.text
    assert [r.text for r in store.pending(GROUP)] == ["운동"]


@pytest.mark.parametrize(
    ("kind", "size", "refused"),
    [("text", 300 * 1024, True), ("text", 200 * 1024, False), ("pdf", 300 * 1024, False)],
)
def test_a_text_file_over_200_kb_is_refused_by_its_announced_size(kind: str, size: int, refused: bool):
    """Unit level; tests/test_e2e_documents.py checks that such a file is never downloaded."""
    from bot.tg.documents import DocInfo, TextTooBig, check_size

    name, mime = ("notes.txt", "text/plain") if kind == "text" else ("a.pdf", "application/pdf")
    doc = DocInfo(file_id="f", name=name, mime_type=mime, size=size, kind=kind)
    if refused:
        with pytest.raises(TextTooBig):
            check_size(doc)
    else:
        check_size(doc)  # PDFs go up to 20 MB; a text file of exactly 200 KB is taken


def test_a_reminder_for_this_very_moment_or_past_the_limit_is_refused():
    from datetime import timedelta

    from bot.tools.reminders import MAX_AHEAD, parse_at

    now = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)  # 12:00 in Seoul
    assert "is in the past" in str(parse_at("2026-12-01T12:00:00+09:00", now, "Asia/Seoul"))  # it would fire at once
    assert parse_at("2026-12-01T12:01:00+09:00", now, "Asia/Seoul") == now + timedelta(minutes=1)
    last = now + MAX_AHEAD
    assert parse_at(last.isoformat(), now, "Asia/Seoul") == last
    assert "more than a year ahead" in str(parse_at((last + timedelta(minutes=1)).isoformat(), now, "Asia/Seoul"))
