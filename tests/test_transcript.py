import json
import logging
import os
import stat

import pytest

from memory.transcript import InvalidChatId, Transcript


def msg(role: str, content: str, **extra):
    return {"role": role, "content": content, **extra}


def test_append_writes_one_line_per_message_and_reads_back(transcript: Transcript):
    transcript.append(42, [msg("user", "안녕"), msg("assistant", "안녕하세요")])
    lines = transcript.path(42).read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["content"] for x in lines] == ["안녕", "안녕하세요"]
    assert "안녕" in lines[0]  # human-readable, not \\u-escaped
    assert [e.data["content"] for e in transcript.read(42)] == ["안녕", "안녕하세요"]


def test_files_are_private(transcript: Transcript, data_dir):
    transcript.append(7, [msg("user", "q"), msg("assistant", "a")])
    assert stat.S_IMODE(os.stat(data_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(data_dir / "chats").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(transcript.path(7)).st_mode) == 0o600


def test_entries_carry_byte_offsets(transcript: Transcript):
    written = transcript.append(1, [msg("user", "하나"), msg("assistant", "둘")])
    raw = transcript.path(1).read_bytes()
    for e in written:
        assert json.loads(raw[e.offset : e.end]) == e.data
    assert [(e.offset, e.end) for e in transcript.read(1)] == [(e.offset, e.end) for e in written]


def test_tail_returns_last_messages_in_order(transcript: Transcript):
    for i in range(50):
        transcript.append(5, [msg("user", f"q{i}"), msg("assistant", f"a{i}")])
    tail = transcript.tail(5, 4)
    assert [e.data["content"] for e in tail] == ["q48", "a48", "q49", "a49"]
    assert transcript.tail(5, 1000)[0].data["content"] == "q0"
    assert transcript.tail("missing", 10) == []
    assert transcript.tail(5, 0) == []


def test_tail_handles_lines_longer_than_a_block(transcript: Transcript):
    big = "가" * 100_000  # 300 KB of UTF-8 on one line
    transcript.append(5, [msg("user", "q"), msg("assistant", big)])
    transcript.append(5, [msg("user", "q2"), msg("assistant", "short")])
    contents = [e.data["content"] for e in transcript.tail(5, 4)]
    assert contents == ["q", big, "q2", "short"]


def test_tail_stops_at_a_byte_offset(transcript: Transcript):
    first = transcript.append(3, [msg("user", "old"), msg("assistant", "old-a")])
    transcript.append(3, [msg("user", "new"), msg("assistant", "new-a")])
    assert [e.data["content"] for e in transcript.tail(3, 10, stop=first[-1].end)] == ["new", "new-a"]
    assert [e.data["content"] for e in transcript.read(3, start=first[-1].end)] == ["new", "new-a"]


def test_torn_last_line_is_skipped_with_a_warning(transcript: Transcript, caplog):
    transcript.append(9, [msg("user", "q"), msg("assistant", "a")])
    with open(transcript.path(9), "ab") as f:
        f.write(b'{"role":"user","content":"half wri')  # crash mid-write
    with caplog.at_level(logging.WARNING):
        assert [e.data["content"] for e in transcript.tail(9, 10)] == ["q", "a"]
        assert [e.data["content"] for e in transcript.read(9)] == ["q", "a"]
    assert "torn" in caplog.text
    # the next append starts on a fresh line, so nothing after the tear is lost
    transcript.append(9, [msg("user", "q2"), msg("assistant", "a2")])
    assert [e.data["content"] for e in transcript.read(9)] == ["q", "a", "q2", "a2"]
    assert [e.data["content"] for e in transcript.tail(9, 2)] == ["q2", "a2"]


def test_unparsable_and_foreign_lines_are_skipped(transcript: Transcript, caplog):
    path = transcript.path(11)
    transcript.append(11, [msg("user", "q1"), msg("assistant", "a1")])
    with open(path, "ab") as f:
        f.write(b"not json at all\n")
        f.write(b'{"role":"system","content":"x"}\n')
        f.write(b"\xff\xfe\n")
        f.write(b"\n")
    transcript.append(11, [msg("user", "q2"), msg("assistant", "a2")])
    with caplog.at_level(logging.WARNING):
        assert [e.data["content"] for e in transcript.read(11)] == ["q1", "a1", "q2", "a2"]
        assert [e.data["content"] for e in transcript.tail(11, 4)] == ["q1", "a1", "q2", "a2"]
    assert "unreadable" in caplog.text


def test_tail_reads_only_the_end_of_a_large_file(transcript: Transcript, monkeypatch):
    path = transcript.path(77)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(msg("user", "x" * 200)) + "\n" + json.dumps(msg("assistant", "y" * 200)) + "\n"
    with open(path, "w") as f:
        f.write(line * 25_000)  # 50,000 messages, ~10 MB
    transcript.append(77, [msg("user", "last-q"), msg("assistant", "last-a")])
    read_bytes = 0
    real_open = open

    class Counting:
        def __init__(self, f):
            self.f = f

        def read(self, n=-1):
            nonlocal read_bytes
            data = self.f.read(n)
            read_bytes += len(data)
            return data

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    monkeypatch.setattr("builtins.open", lambda *a, **k: Counting(real_open(*a, **k)))
    tail = transcript.tail(77, 20)
    assert tail[-1].data["content"] == "last-a" and len(tail) == 20
    assert read_bytes < 200_000, read_bytes  # the file is ~10 MB


def test_invalid_chat_ids_are_refused(transcript: Transcript):
    for bad in ("../etc", "a/b", "", ".hidden", "x" * 65, "a b"):
        with pytest.raises(InvalidChatId):
            transcript.path(bad)
    assert transcript.path(-1001234).name == "-1001234.jsonl"


def test_append_refuses_non_messages(transcript: Transcript):
    with pytest.raises(ValueError):
        transcript.append(1, [{"role": "system", "content": "x"}])
    assert not transcript.exists(1)


def test_archive_renames_and_keeps_everything(transcript: Transcript):
    transcript.append(4, [msg("user", "q"), msg("assistant", "a")])
    original = transcript.path(4).read_bytes()
    target = transcript.archive(4, "20261129T000000Z")
    assert target is not None and target.read_bytes() == original
    assert not transcript.exists(4)
    assert transcript.tail(4, 10) == []
    second = transcript.archive(4, "20261129T000000Z")
    assert second is None
    transcript.append(4, [msg("user", "q"), msg("assistant", "a")])
    third = transcript.archive(4, "20261129T000000Z")
    assert third is not None and third != target and target.exists()
