from memory.turns import complete_turns
from memory.window import CUT_MARK, drop_superseded, recent_window


def turns(n: int, size: int = 10):
    out = []
    for i in range(n):
        out.append({"role": "user", "content": f"q{i}".ljust(size, ".")})
        out.append({"role": "assistant", "content": f"a{i}".ljust(size, ".")})
    return out


def test_trims_by_message_count():
    w = recent_window(turns(30), max_messages=20, max_chars=100_000)
    assert len(w) == 20
    assert w[0]["content"].startswith("q20") and w[-1]["content"].startswith("a29")


def test_trims_by_characters():
    w = recent_window(turns(30, size=100), max_messages=100, max_chars=1000)
    assert sum(len(m["content"]) for m in w) <= 1000
    assert len(w) == 10  # five turns of 200 characters
    assert w[-1]["content"].startswith("a29")


def test_odd_count_limit_still_starts_on_user():
    w = recent_window(turns(30), max_messages=5, max_chars=100_000)
    assert len(w) == 4 and w[0]["role"] == "user"


def test_always_starts_on_user_and_alternates():
    msgs = turns(5)
    msgs.insert(0, {"role": "assistant", "content": "orphan answer"})
    msgs.append({"role": "user", "content": "unanswered"})  # a question without an answer at the end
    msgs.insert(4, {"role": "user", "content": "lost turn"})  # two user lines in a row (torn answer)
    for limit in (2, 3, 4, 7, 20):
        w = recent_window(msgs, max_messages=limit, max_chars=100_000)
        assert w and w[0]["role"] == "user" and w[-1]["role"] == "assistant"
        assert all(a["role"] != b["role"] for a, b in zip(w, w[1:], strict=False))
    assert complete_turns([{"role": "user", "content": "x"}]) == []


def test_budget_boundary_is_inclusive():
    msgs = turns(3, size=50)  # each turn 100 characters
    assert len(recent_window(msgs, 20, 300)) == 6
    assert len(recent_window(msgs, 20, 299)) == 4


def test_the_newest_long_turn_is_kept_whole_up_to_the_hard_cap():
    # "fix line 250 of the script you just wrote": the newest answer must arrive whole
    script = "\n".join(f"line {i}: x = {i}" for i in range(1, 1200))  # ~18,000 characters
    msgs = turns(3) + [{"role": "user", "content": "스크립트 써 줘"}, {"role": "assistant", "content": script}]
    w = recent_window(msgs, max_messages=20, max_chars=8000)
    assert w[-1]["content"] == script and "line 250: x = 250" in w[-1]["content"]
    assert len(w) == 2  # older turns make room for it


def test_a_huge_last_turn_is_cut_only_beyond_the_hard_cap():
    msgs = turns(3) + [{"role": "user", "content": "요약해줘"}, {"role": "assistant", "content": "가" * 50_000}]
    w = recent_window(msgs, max_messages=20, max_chars=8000)
    assert len(w) == 2 and w[0]["content"] == "요약해줘"
    assert sum(len(m["content"]) for m in w) <= 4 * 8000
    assert len(w[1]["content"]) > 8000  # the cap, not the budget
    assert CUT_MARK in w[1]["content"] and w[1]["content"].startswith("가")


def test_an_older_oversized_turn_is_cut_before_anything_newer():
    big = {"role": "assistant", "content": "나" * 30_000}
    msgs = [{"role": "user", "content": "old"}, big, *turns(2, size=100)]
    w = recent_window(msgs, max_messages=20, max_chars=2000)
    assert [m["content"][:2] for m in w[-4:]] == ["q0", "a0", "q1", "a1"]
    assert all(CUT_MARK not in m["content"] for m in w[-4:])  # the newer turns stay whole
    assert w[0]["content"] == "old" and CUT_MARK in w[1]["content"]
    assert sum(len(m["content"]) for m in w) <= 2000


def test_empty_inputs():
    assert recent_window([], 20, 8000) == []
    assert recent_window(turns(3), 1, 8000) == []


def test_retry_drops_the_superseded_turn_once():
    msgs = [
        {"role": "user", "content": "A"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "B"},
        {"role": "assistant", "content": "b1"},
        {"role": "user", "content": "B", "retry": True},
        {"role": "assistant", "content": "b2"},
    ]
    once = drop_superseded(msgs)
    assert [m["content"] for m in once] == ["A", "a", "B", "b2"]
    assert drop_superseded(once) == once  # applying again changes nothing
