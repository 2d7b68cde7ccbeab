"""memory/conversations.py: listing the conversations and bringing an archived one back."""

import os
from pathlib import Path

import pytest

from memory.conversations import find_conversation, first_words, list_conversations, unarchive
from memory.transcript import Transcript


def turn(question: str) -> list[dict]:
    return [{"role": "user", "content": question}, {"role": "assistant", "content": f"echo: {question}"}]


def test_listing_reads_first_words_and_orders_by_last_use(tmp_path: Path):
    t = Transcript(tmp_path)
    t.append("a", turn("first   words\nof a"))
    t.append("b", turn("x" * 100))
    os.utime(t.path("a"), (2_000, 2_000))
    os.utime(t.path("b"), (1_000, 1_000))
    (t.dir / "not a chat id.jsonl").write_text("{}\n")  # skipped: no valid chat id
    conversations = list_conversations(t)
    assert [(c.name, c.archived, c.last_used) for c in conversations] == [("a", False, 2_000), ("b", False, 1_000)]
    assert conversations[0].first_words == "first words of a"
    assert conversations[1].first_words == "x" * 59 + "…"
    (t.dir / "torn.jsonl").write_bytes(b'{"role": "us')
    assert first_words(t.dir / "torn.jsonl") == ""


def test_unarchive_brings_back_the_transcript_and_summary_and_never_overwrites(tmp_path: Path):
    t = Transcript(tmp_path)
    t.append("a", turn("old"))
    (t.dir / "a.summary.json").write_text('{"old": true}')
    archived = t.archive("a", "20260101T000000Z")
    assert archived is not None
    os.rename(t.dir / "a.summary.json", archived.with_name(archived.stem + ".summary.json"))
    t.append("a", turn("new"))  # a current conversation: it must be archived first
    conversation = find_conversation(t, "a.20260101T000000Z")
    assert conversation is not None and conversation.archived and conversation.chat_id == "a"
    with pytest.raises(FileExistsError):
        unarchive(t, conversation)
    assert [e.data["content"] for e in t.read("a")][0] == "new" and archived.exists()  # nothing replaced
    t.archive("a", "20260102T000000Z")
    unarchive(t, conversation)
    assert [e.data["content"] for e in t.read("a")] == ["old", "echo: old"]
    assert (t.dir / "a.summary.json").read_text() == '{"old": true}'
    assert not archived.exists()


def test_a_users_month_adds_up_its_days(tmp_path: Path):
    from memory.usage import UsageLedger

    ledger = UsageLedger(tmp_path, flush_after=None)
    for day, tokens in [("2026-11-30", 1), ("2026-12-01", 10), ("2026-12-02", 100)]:
        ledger.add_question("terminal", "local", day)
        ledger.add_usage("terminal", "local", "m", [tokens, 0, 0, 0, 1], day)
    ledger.add_usage("someone", "local", "m", [1000, 0, 0, 0, 1], "2026-12-02")
    month = ledger.user_month("terminal", "2026-12")
    assert (month.questions, month.models) == (2, {"m": [110, 0, 0, 0, 2]})
    assert ledger.user_month("terminal", "2026-10").questions == 0
