"""Access policy (bot/core/access.py) and its file (memory/access.py): closed by default, pairing, the owner's list."""

import json
import os
import stat
from datetime import UTC, datetime

import pytest

from bot.core.access import CODE_ALPHABET, Access, Change, PairResult, Person, new_code
from memory.access import AccessFileError, AccessStore
from tests.conftest import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 11, 29, 14, 0, tzinfo=UTC))


def make(data_dir, clock, **kw) -> Access:
    return Access(AccessStore(data_dir).load(), now=clock, **kw)


def test_closed_by_default_and_a_code_waits_for_the_owner(data_dir, clock):
    access = make(data_dir, clock)
    assert access.owner is None
    for uid in (1, 42, None):
        assert not access.user_allowed(uid)
        assert not access.chat_allowed(-100, uid, group=True)
    code = access.pairing_code
    assert code is not None and len(code) >= 8 and set(code) <= set(CODE_ALPHABET)
    assert not data_dir.exists()  # nothing is written by deciding


def test_codes_are_fresh():
    codes = {new_code() for _ in range(200)}
    assert len(codes) == 200


def test_pairing_makes_the_owner_once_and_the_code_is_used_up(data_dir, clock):
    access = make(data_dir, clock)
    code = access.pairing_code
    assert access.pair(Person(5, "Eve"), "WRONG2345") is PairResult.WRONG
    assert access.owner is None
    assert access.pair(Person(7, "Minji", "minji"), f" {code.lower()} ") is PairResult.PAIRED  # typed on a phone
    assert access.owner == 7 and access.is_owner(7) and access.user_allowed(7)
    assert access.pairing_code is None
    assert access.pair(Person(5), code) is PairResult.CLOSED  # nobody else, not with the same code
    assert access.owner == 7
    access.store.save()
    again = make(data_dir, clock)  # a restart: the owner is known, no code
    assert again.owner == 7 and again.pairing_code is None
    assert again.person(7).label() == "Minji (@minji)"
    assert code not in (data_dir / "access.json").read_text()


def test_five_wrong_codes_in_ten_minutes_lock_a_user_out_for_an_hour(data_dir, clock):
    access = make(data_dir, clock)
    code = access.pairing_code
    for _ in range(4):
        assert access.pair(Person(5), "NOPE23456") is PairResult.WRONG
        clock.advance(minutes=2)  # 4 tries within 8 minutes
    assert access.pair(Person(5), "NOPE23456") is PairResult.LOCKED_OUT  # the fifth within 10 minutes
    assert access.ignored(5) and not access.ignored(6)
    assert access.pair(Person(5), code) is PairResult.LOCKED  # even the right code
    assert access.owner is None
    clock.advance(minutes=59)
    assert access.ignored(5)
    clock.advance(minutes=1)  # an hour after the lockout
    assert not access.ignored(5)
    assert access.pair(Person(5), code) is PairResult.PAIRED


def test_wrong_codes_spread_over_more_than_ten_minutes_do_not_lock(data_dir, clock):
    access = make(data_dir, clock)
    for _ in range(12):
        assert access.pair(Person(5), "NOPE23456") is PairResult.WRONG
        clock.advance(minutes=2, seconds=31)  # never 5 within 10 minutes
    assert not access.ignored(5)


def test_the_configured_owner_and_users(data_dir, clock):
    access = make(data_dir, clock, owner_id=1, allowed=frozenset({1, 2}))
    assert access.pairing_code is None
    assert access.pair(Person(3), "ANYTHING") is PairResult.CLOSED
    assert access.user_allowed(1) and access.user_allowed(2) and not access.user_allowed(3)
    assert access.deny_user(1) is Change.OWNER and access.deny_user(2) is Change.CONFIG
    assert access.allow_user(2, by=1) is Change.CONFIG and access.allow_user(1, by=1) is Change.ALREADY


def test_the_owner_allows_and_denies_people_and_groups(data_dir, clock):
    access = make(data_dir, clock, owner_id=1)
    access.saw_stranger(Person(9, "Jisoo", "jisoo"))  # a refused person: in memory only
    assert not data_dir.exists()
    assert access.allow_user(9, by=1) is Change.DONE
    assert access.allow_user(9, by=1) is Change.ALREADY
    assert access.user_allowed(9) and access.person(9).label() == "Jisoo (@jisoo)"
    assert not access.chat_allowed(-100, 5, group=True)
    assert access.allow_group(-100, "Family", by=1) is Change.DONE
    assert access.chat_allowed(-100, 5, group=True)  # anyone in an open group
    assert not access.chat_allowed(5, 5, group=False) and not access.user_allowed(5)
    access.store.save()

    again = make(data_dir, clock, owner_id=1)
    assert again.user_allowed(9) and again.group_allowed(-100)
    assert [(m.person.id, m.role) for m in again.members()] == [(1, "owner"), (9, "added")]
    assert again.members()[1].added_at.startswith("2026-11-29")
    assert again.groups() == {-100: "Family"}
    assert again.deny_user(9) is Change.DONE and again.deny_user(9) is Change.ALREADY
    assert again.deny_group(-100) is Change.DONE and again.deny_group(-100) is Change.ALREADY
    again.store.save()
    data = json.loads((data_dir / "access.json").read_text())
    assert data["users"] == {} and data["groups"] == {} and "9" not in data["names"]


def test_the_file_is_private_and_a_bad_one_is_refused_untouched(data_dir, clock):
    access = make(data_dir, clock, owner_id=1)
    access.allow_user(9, by=1)
    access.store.save()
    path = data_dir / "access.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [p.name for p in data_dir.iterdir()] == ["access.json"]  # no temp file left
    for bad in ("{not json", "[1, 2]", '{"owner": "me"}', '{"users": {"alice": {}}}'):
        path.write_text(bad)
        with pytest.raises(AccessFileError) as e:
            AccessStore(data_dir).load()
        assert "access.json" in str(e.value) and "\n" not in str(e.value)
        assert path.read_text() == bad  # never overwritten
