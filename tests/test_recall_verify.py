"""memory.recall.inspect_index / verify_index: the index against the transcripts, read-only; and the
doctor's "index vs transcripts" check that uses it."""

from __future__ import annotations

import io
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from bot import doctor
from memory.format import ensure_format
from memory.recall import RecallIndex, inspect_index, verify_index
from memory.transcript import Transcript

TOKEN = "123456:TEST-TOKEN-abcdefghijklmnop"
KEY = "sk-ant-test-key-0123456789"


def turn(q: str, a: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": q, "at": "2026-11-01T10:00:00+09:00"}, {"role": "assistant", "content": a}]


@pytest.fixture
def indexed(data_dir: Path, transcript: Transcript) -> Transcript:
    """Two chats with two turns each, both indexed, the index closed."""
    for chat in ("42", "7"):
        transcript.append(chat, turn(f"자물쇠 번호는 {chat}19", "기억할게요"))
        transcript.append(chat, turn("내일 9시 회의", "알겠어요"))
    with RecallIndex(data_dir) as idx:
        idx.sync("42")
        idx.sync("7")
    return transcript


def snapshot(data_dir: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(data_dir)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(data_dir.rglob("*"))
        if p.is_file()
    }


def doctor_lines(data_dir: Path) -> tuple[int, list[str]]:
    out = io.StringIO()
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "ANTHROPIC_API_KEY": KEY, "DATA_DIR": str(data_dir)}
    rc = doctor.main(["--offline", "--only", "index vs transcripts"], out=out, env=env)
    return rc, [line for line in out.getvalue().splitlines() if "index vs transcripts:" in line]


def test_a_matching_index_has_nothing_to_say_and_nothing_is_written(data_dir, indexed):
    before = snapshot(data_dir)
    report = inspect_index(data_dir)
    assert report.problems == [] and report.notes == []
    assert (report.indexed, report.files, report.chats) == (2, 2, 2)
    assert verify_index(data_dir) == []
    assert snapshot(data_dir) == before  # not even the WAL and its index next to the database
    rc, lines = doctor_lines(data_dir)
    assert rc == 0 and lines == [
        "ok       index vs transcripts: the index matches the transcripts (2 transcript files of 2 chats compared)"
    ]


def test_an_index_in_use_is_read_through_its_wal(data_dir, indexed):
    """While the bot has the index open, what it committed is in the WAL: that is what counts."""
    with RecallIndex(data_dir) as idx:
        indexed.append("42", turn("새 질문", "새 답"))
        idx.sync("42")
        assert (data_dir / "recall.sqlite3-wal").exists()
        before = snapshot(data_dir)
        assert inspect_index(data_dir).notes == []  # the new turn is indexed (in the WAL only)
        assert snapshot(data_dir) == before


def test_what_is_not_indexed_yet_is_a_harmless_note(data_dir, indexed):
    indexed.append("42", turn("더 할 말", "네"))  # grown since
    indexed.append("99", turn("new chat", "hello"))  # never indexed
    report = inspect_index(data_dir)
    assert report.problems == []
    assert len(report.notes) == 1
    assert "1 transcript file not indexed yet (1 new chats)" in report.notes[0]
    assert "1 grown by" in report.notes[0] and "harmless" in report.notes[0]
    rc, lines = doctor_lines(data_dir)
    assert rc == 0 and [line.split()[0] for line in lines] == ["note"]
    with RecallIndex(data_dir) as idx:  # the next sync catches up: nothing left to say
        idx.sync("42")
        idx.sync("99")
    assert inspect_index(data_dir).notes == []


def test_a_reset_renaming_the_transcript_is_a_note(data_dir, indexed):
    archived = indexed.archive("42", "20261101T000000Z")
    assert archived is not None
    report = inspect_index(data_dir)
    assert report.problems == []
    assert report.notes == ["1 renamed by /reset (followed at the chat's next sync)"]
    with RecallIndex(data_dir) as idx:
        idx.sync("42")
    assert inspect_index(data_dir).notes == []


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda b: b.replace("자물쇠".encode(), "비밀번".encode(), 1), "its first line is not the one indexed"),
        (lambda b: b.replace("회의".encode(), "파티".encode(), 1), "the bytes before byte"),
        (lambda b: b[: len(b) // 2], "it is shorter"),
    ],
    ids=["first line", "before the indexed end", "shorter"],
)
def test_an_edited_transcript_is_a_problem(data_dir, indexed, damage, says):
    path = indexed.path("7")
    path.write_bytes(damage(path.read_bytes()))  # in place: the same inode
    problems = verify_index(data_dir)
    assert len(problems) == 1
    assert problems[0].startswith("chats/7.jsonl changed after it was indexed") and says in problems[0]
    rc, lines = doctor_lines(data_dir)
    assert rc == 1 and lines == [f"problem  index vs transcripts: {problems[0]}"]
    with RecallIndex(data_dir) as idx:  # the index drops and indexes it again
        idx.sync("7")
    assert verify_index(data_dir) == []


def test_a_replaced_transcript_is_a_problem_a_restored_copy_a_note(data_dir, indexed, tmp_path):
    path = indexed.path("7")
    os.link(path, tmp_path / "held")  # the indexed inode stays taken (a freed one may be given to the copy)
    copy = path.with_suffix(".tmp")
    shutil.copy2(path, copy)
    os.replace(copy, path)  # the same bytes under a new inode: restored from a backup
    report = inspect_index(data_dir)
    assert report.problems == []
    assert report.notes == ["1 copied or restored with the same content (indexed again at the next sync)"]
    os.link(path, tmp_path / "held2")
    replaced = path.with_suffix(".tmp")
    replaced.write_bytes(path.read_bytes().replace(b"19", b"20", 1))
    os.replace(replaced, path)  # other bytes, another inode
    problems = verify_index(data_dir)
    assert len(problems) == 1 and problems[0].startswith("chats/7.jsonl is not the file that was indexed")


def test_a_deleted_transcript_is_a_problem(data_dir, indexed):
    indexed.path("7").unlink()
    problems = verify_index(data_dir)
    assert len(problems) == 1
    assert "chats/7.jsonl was indexed (4 lines) but is gone" in problems[0]


def test_an_index_disagreeing_with_itself_is_a_problem_and_deep_counts_lines(data_dir, indexed):
    db = sqlite3.connect(data_dir / "recall.sqlite3")
    db.execute("UPDATE files SET lines = lines - 1 WHERE name = '' AND chat = (SELECT id FROM chats WHERE chat='7')")
    db.commit()
    problems = verify_index(data_dir)
    assert len(problems) == 1 and "the index holds line 4" in problems[0] and "records only 3" in problems[0]
    db.execute("UPDATE files SET lines = lines + 2 WHERE name = '' AND chat = (SELECT id FROM chats WHERE chat='7')")
    db.commit()
    db.close()
    assert verify_index(data_dir) == []  # more lines than it holds: only reading the file tells
    deep = inspect_index(data_dir, deep=True).problems
    assert len(deep) == 1 and "4 lines in the indexed part, the index recorded 5" in deep[0]


def test_another_version_or_a_damaged_file_compares_nothing(data_dir, indexed):
    db = sqlite3.connect(data_dir / "recall.sqlite3")
    db.execute("UPDATE meta SET value='0' WHERE key='version'")
    db.commit()
    db.close()
    report = inspect_index(data_dir)
    assert report.problems == [] and len(report.notes) == 1 and "version 0" in report.notes[0]
    (data_dir / "recall.sqlite3").write_bytes(b"this is not a database" * 100)
    report = inspect_index(data_dir)
    assert report.problems == [] and "nothing compared" in report.notes[0]  # the "recall index" check says why


def test_the_doctor_check_with_a_data_dir_as_the_bot_leaves_it(data_dir, indexed):
    ensure_format(data_dir)
    rc, lines = doctor_lines(data_dir)
    assert rc == 0 and lines[0].startswith("ok ")
