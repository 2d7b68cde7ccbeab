"""The usage ledger (memory/usage.py): per user and chat, per day and in total; batched, merged, small."""

import json
import os
import stat
import threading
from datetime import date, timedelta

from memory.usage import KEEP_DAYS, UsageLedger

DAY = "2026-11-29"


def ledger(data_dir, **kw) -> UsageLedger:
    return UsageLedger(data_dir, flush_after=None, **kw)


def test_nothing_is_written_before_something_is_recorded(data_dir):
    book = ledger(data_dir)
    assert book.user_day("1", DAY).questions == 0 and book.users() == []
    book.flush()
    book.close()
    assert not data_dir.exists()


def test_questions_and_tokens_per_user_and_chat(data_dir):
    book = ledger(data_dir)
    book.add_question("7", "-100", DAY)
    book.add_usage("7", "-100", "claude-sonnet-4-6", (1000, 500, 2000, 10000), DAY)
    book.add_usage("7", "7", "claude-haiku-4-5", (10, 5, 0, 0), DAY)
    book.add_usage("8", "-100", "claude-sonnet-4-6", (1, 1, 0, 0), "2026-11-30")
    today = book.user_day("7", DAY)
    assert today.questions == 1
    assert today.models == {"claude-sonnet-4-6": [1000, 500, 2000, 10000, 1], "claude-haiku-4-5": [10, 5, 0, 0, 1]}
    assert today.total_tokens() == 13515 and today.tokens()["calls"] == 2
    assert book.chat_day("-100", DAY).total_tokens() == 13500
    assert book.chat_total("-100").total_tokens() == 13502 and book.chat_day("-100", "2026-11-30").questions == 0
    assert book.user_day("7", "2026-11-30").total_tokens() == 0
    assert sorted(book.users()) == ["7", "8"]


def test_counts_survive_a_restart_in_a_small_private_file(data_dir):
    book = ledger(data_dir)
    for _ in range(3):
        book.add_question("7", "7", DAY)
    book.add_usage("7", "7", "m", (1, 2, 3, 4), DAY)
    book.close()
    path = data_dir / "usage.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = ledger(data_dir)
    assert again.user_day("7", DAY).questions == 3 and again.user_total("7").models == {"m": [1, 2, 3, 4, 1]}
    assert sorted(p.name for p in data_dir.iterdir()) == ["usage.json", "usage.lock"]  # no temp file left


def test_two_processes_recording_into_one_file_lose_nothing(data_dir):
    bot, terminal = ledger(data_dir), ledger(data_dir)
    bot.add_question("7", "7", DAY)
    terminal.add_usage("terminal", "local", "m", (5, 5, 0, 0), DAY)
    bot.flush()
    terminal.flush()  # merges into what the bot wrote, not over it
    bot.add_question("7", "7", DAY)
    bot.flush()
    final = ledger(data_dir)
    assert final.user_day("7", DAY).questions == 2
    assert final.user_day("terminal", DAY).total_tokens() == 10
    bot.refresh()  # the bot sees the terminal's usage after a refresh
    assert bot.user_total("terminal").total_tokens() == 10 and bot.user_total("7").questions == 2


def test_old_days_are_pruned_but_totals_stay(data_dir):
    book = ledger(data_dir)
    book.add_usage("7", "7", "m", (1, 0, 0, 0), "2026-01-01")
    book.flush()
    book.add_usage("7", "7", "m", (1, 0, 0, 0), "2026-11-29")
    book.flush()
    data = json.loads((data_dir / "usage.json").read_text())
    assert list(data["days"]) == ["2026-11-29"]
    assert data["total"]["users"]["7"]["m"]["m"][0] == 2
    assert book.user_day("7", "2026-01-01").total_tokens() == 0 and book.user_total("7").total_tokens() == 2
    # the file stays small: a row per user and chat per day, KEEP_DAYS days at most
    for i in range(200):
        day = (date(2027, 1, 1) + timedelta(days=i)).isoformat()
        for user in range(5):
            book.add_question(str(user), str(user), day)
            book.add_usage(str(user), str(user), "claude-sonnet-4-6", (3000, 400, 100, 2000), day)
    book.flush()
    data = json.loads((data_dir / "usage.json").read_text())
    assert len(data["days"]) == KEEP_DAYS
    assert (data_dir / "usage.json").stat().st_size < 80_000


def test_a_corrupt_file_is_put_aside_not_deleted(data_dir):
    data_dir.mkdir()
    (data_dir / "usage.json").write_text("{torn")
    book = ledger(data_dir)
    assert book.users() == []
    aside = [p for p in data_dir.iterdir() if p.name.startswith("usage.json.corrupt-")]
    assert len(aside) == 1 and aside[0].read_text() == "{torn"


def test_malformed_rows_are_dropped_and_the_rest_kept(data_dir):
    data_dir.mkdir()
    good = {"q": 2, "m": {"m": [1, 2, 3, 4, 1]}}
    raw = {
        "days": {DAY: {"users": {"7": good, "8": "x", "9": {"q": -1, "m": {"m": [1, 2]}}}}, "not a day": {}},
        "total": {"users": {"7": good}},
    }
    (data_dir / "usage.json").write_text(json.dumps(raw))
    book = ledger(data_dir)
    assert book.user_day("7", DAY).questions == 2 and book.user_total("7").total_tokens() == 10
    assert book.user_day("9", DAY).questions == 0 and book.user_day("9", DAY).models == {}
    assert sorted(book.users()) == ["7"]


def test_a_failed_write_keeps_the_counts_for_the_next_one(data_dir):
    book = ledger(data_dir)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    data_dir.write_text("not a directory yet")  # writing fails
    book.add_question("7", "7", DAY)
    try:
        book.flush()
    except OSError:
        pass
    else:
        raise AssertionError("the flush should have failed")
    book.add_question("7", "7", DAY)
    data_dir.unlink()
    book.flush()
    assert ledger(data_dir).user_day("7", DAY).questions == 2


def test_recording_is_flushed_by_a_timer_soon_after(data_dir):
    book = UsageLedger(data_dir, flush_after=0.01)
    written = threading.Event()
    real_flush = book.flush

    def flush() -> None:
        real_flush()
        written.set()

    book.flush = flush  # type: ignore[method-assign]
    book.add_question("7", "7", DAY)  # returns at once; the file follows
    assert written.wait(10)
    assert ledger(data_dir).user_day("7", DAY).questions == 1
    book.close()


def test_a_refresh_never_hides_counts_that_a_flush_is_writing(data_dir, monkeypatch):
    import memory.usage as usage

    book = ledger(data_dir)
    book.add_question("7", "7", DAY)
    book.flush()
    book.add_question("7", "7", DAY)  # being written when the refresh comes
    writing, release = threading.Event(), threading.Event()
    real_write = usage.atomic_write_bytes

    def slow_write(path, data):
        writing.set()
        assert release.wait(10)
        real_write(path, data)

    monkeypatch.setattr(usage, "atomic_write_bytes", slow_write)
    flusher = threading.Thread(target=book.flush)
    flusher.start()
    assert writing.wait(10)
    refresher = threading.Thread(target=book.refresh)  # e.g. /stats while the timer flushes
    refresher.start()
    try:
        refresher.join(0.5)  # it waits for the flush (had it not, it would have shown the old file by now)
        assert book.user_day("7", DAY).questions == 2
    finally:
        release.set()
    flusher.join(10)
    refresher.join(10)
    assert book.user_day("7", DAY).questions == 2 and ledger(data_dir).user_day("7", DAY).questions == 2
