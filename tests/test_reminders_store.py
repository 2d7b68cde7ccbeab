"""The reminder store: durable, locked read-modify-write, and the claim steps of at-most-once delivery."""

import json
import os
import stat
import threading
from datetime import UTC, datetime, timedelta

import pytest

import memory.reminders as reminders_module
from memory.reminders import (
    CANCELLED,
    FAILED,
    PENDING,
    SENDING,
    SENT,
    ReminderError,
    ReminderFileError,
    ReminderStore,
)

T0 = datetime(2026, 11, 29, 14, 5, tzinfo=UTC)


def test_add_list_cancel_and_the_file(data_dir):
    store = ReminderStore(data_dir)
    later = store.add(123, T0 + timedelta(days=1), "  회의 준비  ", thread_id=7, user_id=5, via="telegram")
    sooner = store.add(123, T0 + timedelta(hours=1), "약 먹기")
    other = store.add(456, T0 + timedelta(minutes=5), "other chat")
    assert (later.id, sooner.id, other.id) == ("1", "2", "3")
    assert [r.text for r in store.pending(123)] == ["약 먹기", "회의 준비"]  # soonest first, text trimmed
    assert [r.id for r in store.pending()] == ["3", "2", "1"]
    data = json.loads((data_dir / "reminders.json").read_text())
    first = data["reminders"][0]
    assert first["at"] == "2026-11-30T14:05:00+00:00" and first["thread_id"] == 7 and first["user_id"] == 5
    assert first["status"] == PENDING and data["next_id"] == 4
    assert stat.S_IMODE(os.stat(data_dir / "reminders.json").st_mode) == 0o600

    with pytest.raises(ReminderError) as e:
        store.cancel(456, "2")  # another chat's reminder
    assert e.value.code == "unknown_id"
    assert store.cancel(123, "#2").status == CANCELLED
    with pytest.raises(ReminderError):
        store.cancel(123, "2")  # already cancelled
    assert [r.id for r in store.pending(123)] == ["1"]
    # ids are never reused, even by a new store on the same file (a restart)
    assert ReminderStore(data_dir).add(123, T0 + timedelta(days=2), "next").id == "4"


def test_bad_text_and_too_many(data_dir, monkeypatch):
    store = ReminderStore(data_dir)
    for text, code in (("   ", "empty"), ("x" * 1001, "too_long")):
        with pytest.raises(ReminderError) as e:
            store.add(1, T0, text)
        assert e.value.code == code
    monkeypatch.setattr(reminders_module, "MAX_PENDING_PER_CHAT", 2)
    store.add(1, T0, "a")
    store.add(1, T0, "b")
    with pytest.raises(ReminderError) as e:
        store.add(1, T0, "c")
    assert e.value.code == "too_many"
    store.add(2, T0, "another chat is not limited by chat 1")
    with pytest.raises(ValueError):
        store.add(1, T0.replace(tzinfo=None), "naive")


def test_claim_is_taken_once_and_finish_records_the_outcome(data_dir):
    store = ReminderStore(data_dir)
    r = store.add(1, T0, "약")
    claimed = store.claim(r.id)
    assert claimed is not None and claimed.status == SENDING
    assert store.claim(r.id) is None  # a second claim (another timer, another process) gets nothing
    assert store.cancel is not None and store.pending(1) == []
    # an interrupted send: the notice is claimed once
    assert store.claim_notice(r.id).notice is True
    assert store.claim_notice(r.id) is None
    done = store.finish(r.id, SENT, message_id=42)
    assert done.status == SENT and done.extra["message_id"] == 42
    assert store.finish(r.id, FAILED) is None  # finished already
    # flood control: a claimed reminder goes back to pending
    r2 = store.add(1, T0, "again")
    store.claim(r2.id)
    assert store.release(r2.id).status == PENDING
    assert store.get(r2.id).pending


def test_an_unreadable_file_is_never_overwritten(data_dir):
    data_dir.mkdir(parents=True)
    path = data_dir / "reminders.json"
    path.write_text("{not json")
    store = ReminderStore(data_dir)
    with pytest.raises(ReminderFileError):
        store.add(1, T0, "x")
    with pytest.raises(ReminderFileError):
        store.pending(1)
    assert path.read_text() == "{not json"


def test_finished_reminders_beyond_the_limit_move_to_the_archive(data_dir, monkeypatch):
    monkeypatch.setattr(reminders_module, "KEEP_FINISHED", 2)
    store = ReminderStore(data_dir)
    ids = [store.add(1, T0, f"r{i}").id for i in range(4)]
    for rid in ids:
        store.claim(rid)
        store.finish(rid, SENT)
    live = json.loads((data_dir / "reminders.json").read_text())["reminders"]
    archived = [json.loads(line) for line in (data_dir / "reminders.archive.jsonl").read_text().splitlines()]
    assert [r["id"] for r in live] == ["3", "4"]
    assert sorted({r["id"] for r in archived}) == ["1", "2"]  # moved, not deleted
    assert store.add(1, T0, "new").id == "5"


def test_two_writers_at_once_lose_nothing(data_dir):
    """The bot and the terminal (two stores on one file) add at the same time: every reminder is kept."""
    stores = [ReminderStore(data_dir), ReminderStore(data_dir)]
    errors: list[BaseException] = []

    def add(store: ReminderStore, n: int) -> None:
        try:
            for i in range(15):
                store.add(1000 + n, T0, f"{n}-{i}")
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=add, args=(stores[n % 2], n)) for n in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    everything = ReminderStore(data_dir).all()
    assert len(everything) == 60
    assert sorted(int(r.id) for r in everything) == list(range(1, 61))
