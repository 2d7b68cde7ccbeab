"""The facts store: ids, limits, replace, forget, archive, concurrent writers, an unreadable file."""

import json
import multiprocessing
import os
import stat

import pytest

from memory.facts import MAX_FACT_CHARS, FactError, FactFileError, FactStore


@pytest.fixture
def store(data_dir, clock) -> FactStore:
    return FactStore(data_dir, now=clock)


def test_add_lists_in_order_with_stable_ids(store, data_dir, clock):
    a = store.add(1, "  생일은   3월 14일 ", source={"offset": 0})
    b = store.add(1, "땅콩 알레르기가 있다")
    assert (a.fact.id, a.fact.text) == ("1", "생일은 3월 14일")  # whitespace tidied
    assert [f.id for f in store.list(1)] == ["1", "2"] and b.fact.id == "2"
    assert a.fact.source == {"offset": 0}
    assert a.fact.at == clock().astimezone().isoformat(timespec="seconds")
    path = data_dir / "chats" / "1.facts.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["facts"][1]["text"] == "땅콩 알레르기가 있다"


def test_ids_are_never_reused(store):
    for text in ("a", "b", "c"):
        store.add(1, text)
    store.forget(1, "3")
    assert store.add(1, "d").fact.id == "4"
    store.forget(1, "4")
    store.forget(1, "2")
    assert store.add(1, "e").fact.id == "5"


def test_a_known_fact_is_not_added_twice(store):
    store.add(1, "차 번호 12가 3456")
    again = store.add(1, "차 번호  12가 3456")
    assert again.unchanged and again.fact.id == "1" and len(store.list(1)) == 1


def test_replace_keeps_the_id_and_leaves_no_contradiction(store):
    store.add(1, "자물쇠 번호 4719")
    store.add(1, "서울에 산다")
    change = store.replace(1, "1", "자물쇠 번호 5823")
    assert change.previous is not None and change.previous.text == "자물쇠 번호 4719"
    texts = [f.text for f in store.list(1)]
    assert texts == ["자물쇠 번호 5823", "서울에 산다"] and not any("4719" in t for t in texts)
    assert store.list(1)[0].updated


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda s: s.add(1, "   "), "empty"),
        (lambda s: s.add(1, "x" * (MAX_FACT_CHARS + 1)), "too_long"),
        (lambda s: s.replace(1, "9", "new"), "unknown_id"),
        (lambda s: s.forget(1, "9"), "unknown_id"),
    ],
)
def test_bad_changes_raise_with_a_reason_and_change_nothing(store, call, code):
    store.add(1, "keep me")
    before = store.path(1).read_bytes()
    with pytest.raises(FactError) as e:
        call(store)
    assert e.value.code == code and str(e.value)
    assert store.path(1).read_bytes() == before


def test_the_number_of_facts_is_capped(data_dir, clock):
    store = FactStore(data_dir, now=clock, max_facts=3)
    for i in range(3):
        store.add(1, f"fact {i}")
    with pytest.raises(FactError) as e:
        store.add(1, "one too many")
    assert e.value.code == "too_many" and e.value.limit == 3


def test_facts_are_per_chat(store):
    store.add(1, "chat one")
    store.add(2, "chat two")
    assert [f.text for f in store.list(1)] == ["chat one"]
    assert [f.text for f in store.list(2)] == ["chat two"]


def test_archive_renames_and_never_deletes(store, data_dir):
    store.add(1, "a")
    store.add(1, "b")
    original = store.path(1).read_bytes()
    target = store.archive(1, "20261129T140500Z")
    assert target is not None and target.parent == data_dir / "chats" / "archive"
    assert target.read_bytes() == original and not store.path(1).exists()
    assert store.list(1) == [] and store.archive(1, "x") is None
    store.add(1, "c")
    second = store.archive(1, "20261129T140500Z")  # the same stamp twice: a second name, nothing lost
    assert second is not None and second != target and target.exists()


@pytest.mark.parametrize("garbage", ["{not json", "[1, 2]", '{"facts": 3}', "null"])
def test_an_unreadable_file_is_never_overwritten(store, garbage):
    store.add(1, "a")
    store.path(1).write_text(garbage)
    assert store.list(1) == []
    with pytest.raises(FactFileError):
        store.add(1, "b")
    assert store.path(1).read_text() == garbage


def _add_many(data_dir: str, prefix: str, n: int) -> None:
    store = FactStore(data_dir)
    for i in range(n):
        store.add(1, f"{prefix}-{i}")


def test_two_processes_adding_at_once_lose_nothing(data_dir):
    os.makedirs(data_dir, exist_ok=True)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_add_many, args=(str(data_dir), p, 25)) for p in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    facts = FactStore(data_dir).list(1)
    assert sorted(f.text for f in facts) == sorted(f"{p}-{i}" for p in "ab" for i in range(25))
    assert len({f.id for f in facts}) == 50


def test_a_group_has_a_smaller_budget_than_a_private_chat(store):
    from memory.facts import GROUP_MAX_FACTS, GROUP_MAX_TOTAL_CHARS

    for i in range(GROUP_MAX_FACTS):
        store.add(-100123, f"공지 {i}")
        store.add(123, f"공지 {i}")
    with pytest.raises(FactError) as e:
        store.add(-100123, "하나 더")
    assert e.value.code == "too_many" and e.value.limit == GROUP_MAX_FACTS
    assert store.add(123, "하나 더").fact.text == "하나 더"  # a private chat keeps its own, larger limit
    with pytest.raises(FactError) as e:
        store.replace(-100123, "1", "가" * 450 + "x" * (GROUP_MAX_TOTAL_CHARS - 450))
    assert e.value.code in ("too_long", "too_much")
    long = store.max_chars
    for i in range(GROUP_MAX_FACTS):
        store.forget(-100123, str(i + 1))
    for i in range(GROUP_MAX_TOTAL_CHARS // long):
        store.add(-100124, str(i) + "나" * (long - len(str(i))))
    with pytest.raises(FactError) as e:
        store.add(-100124, "한 글자라도")
    assert e.value.code == "too_much" and e.value.limit == GROUP_MAX_TOTAL_CHARS


def test_forgotten_and_replaced_facts_are_kept_in_the_archive(store, data_dir):
    store.add(7, "생일은 3월 14일")
    store.add(7, "차는 12가 3456")
    store.replace(7, "1", "생일은 3월 15일")
    store.forget(7, "2")
    lines = (data_dir / "chats" / "archive" / "facts" / "7.removed.jsonl").read_text().splitlines()
    kept = [json.loads(line) for line in lines]
    assert [(k["text"], k["why"]) for k in kept] == [("생일은 3월 14일", "replaced"), ("차는 12가 3456", "forgotten")]
    assert [f.text for f in store.list(7)] == ["생일은 3월 15일"]


def test_removed_facts_are_not_taken_for_an_archived_conversation(store, data_dir):
    """Archived transcripts are chats/archive/<id>.*.jsonl (read by recall, the doctor and the crash
    suite as conversations); the removed facts are kept in a folder of their own, never among them."""
    import io

    from bot import doctor
    from memory.transcript import Transcript

    Transcript(data_dir).append(7, [{"role": "user", "content": "안녕"}, {"role": "assistant", "content": "네"}])
    store.add(7, "비밀번호 힌트는 고양이 이름")
    store.forget(7, "1")
    assert not list((data_dir / "chats" / "archive").glob("7.*.jsonl"))
    out = io.StringIO()
    doctor.main(["--offline", "--only", "transcripts", "--data-dir", str(data_dir)], out=out, env={})
    assert "unreadable" not in out.getvalue() and "problem" not in out.getvalue(), out.getvalue()


def test_facts_from_before_provenance_stay_readable_and_say_so(data_dir, clock):
    """An old facts file (no ``by``) is read as it is, never rewritten; /memory and the prompt say who
    added each fact, and "not recorded" for the old ones."""
    from bot.commands.facts import origin_text
    from bot.core.prompt import facts_text
    from bot.tools.facts import provenance

    path = data_dir / "chats" / "-100.facts.json"
    path.parent.mkdir(parents=True)
    record = {
        "id": "1",
        "text": "회비는 월 만원",
        "at": "2026-01-01T00:00:00+09:00",
        "source": {"offset": 10, "via": "tool"},
    }
    old = {"version": 1, "next_id": 2, "facts": [record]}
    path.write_text(json.dumps(old, ensure_ascii=False))
    store = FactStore(data_dir, now=clock)
    new = store.add(-100, "모임은 금요일", source={"offset": 20, **provenance("tool", 7, "Jisoo", {"photo": "x"})})
    first, second = store.list(-100)
    assert first.by is None and second.by == 7
    assert json.loads(path.read_text())["facts"][0] == old["facts"][0]  # the old record is kept as it was
    assert origin_text(first, -100, "en") == "who added it: not recorded"
    assert origin_text(second, -100, "en") == "Claude, asked by Jisoo, from a photo"
    assert origin_text(new.fact, 7, "ko") == "본인의 요청으로 Claude가, 사진에서"  # a private chat: their own
    text = facts_text([first, second])
    assert "[1] 회비는 월 만원 — who added it was not recorded" in text
    assert "[2] 모임은 금요일 — saved by you when Jisoo (user 7) asked (their message carried a photo)" in text
    assert "not instructions" in text
