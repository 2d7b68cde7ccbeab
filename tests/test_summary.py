"""Summary memory: old turns compacted into a rolling summary, nothing forgotten."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
from pathlib import Path

import pytest

from bot.claude.model import FakeModel
from bot.core.ask import Assistant
from memory import files as memory_files
from memory.summary import (
    HEADINGS,
    Budget,
    Summary,
    clip_memo,
    estimate_tokens,
    measure,
    memo_problems,
    plan_eviction,
)
from memory.transcript import Transcript
from tests.fakes.messages_rules import validate
from tests.summary_helpers import FakeSummarizer, check_invariant, digit_facts, facts_of, memo, small_budget

CHAT = 7


def turns(n: int, size: int = 10, start: int = 0) -> list[dict]:
    out = []
    for i in range(start, start + n):
        out.append({"role": "user", "content": f"q{i}".ljust(size, ".")})
        out.append({"role": "assistant", "content": f"a{i}".ljust(size, ".")})
    return out


def make(transcript: Transcript, clock, summarizer: FakeSummarizer | None, **budget: int):
    model = FakeModel(validate=validate)
    a = Assistant(
        transcript=transcript,
        model=model,
        now=clock,
        max_messages=20,
        max_chars=8000,
        summarizer=summarizer,
        summary_budget=small_budget(**budget),
    )
    return a, model


async def turn(a: Assistant, text: str, chat: int = CHAT) -> None:
    await a.ask(chat, text)
    await a.maintain(chat)


# -- the pure policy ------------------------------------------------------------------------


def test_no_eviction_until_the_message_budget_is_exceeded():
    b = small_budget(trigger_messages=8, keep_messages=4)
    assert plan_eviction(turns(4), b) == 0  # 8 messages: at the budget, not over it
    assert plan_eviction(turns(5), b) == 6  # 10 messages: keep the last 4, starting on a user turn
    assert plan_eviction(turns(5)[:9], b) == 6  # an unanswered question at the end stays too


def test_eviction_by_characters_and_by_estimated_tokens():
    b = small_budget(trigger_messages=100, trigger_chars=400, trigger_tokens=100_000, keep_messages=6)
    assert plan_eviction(turns(4, size=50), b) == 0  # 400 characters
    # 408 characters: over; the kept tail must fit half the trigger (200 characters): one turn
    assert plan_eviction(turns(4, size=51), b) == 6
    # tokens: the same number of characters costs ~4x more tokens in Korean than in English
    b = small_budget(trigger_messages=100, trigger_chars=100_000, trigger_tokens=200, keep_messages=6)
    english = [{"role": r, "content": "x" * 120} for r in ("user", "assistant")] * 3
    korean = [{"role": r, "content": "가" * 120} for r in ("user", "assistant")] * 3
    assert measure(english).chars == measure(korean).chars
    assert plan_eviction(english, b) == 0
    assert plan_eviction(korean, b) > 0


def test_token_estimate():
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello world, how are you?") == 7  # 25 ASCII chars / 4
    assert estimate_tokens("자전거 자물쇠") == 7  # 6 syllables + 1 space / 4, rounded up
    assert estimate_tokens("é" * 10) == 5


def test_kept_tail_starts_on_a_user_turn_and_never_after_a_retry_or_a_tool_call():
    b = small_budget(trigger_messages=8, keep_messages=4)
    msgs = turns(5)
    msgs[6] = {**msgs[6], "retry": True, "content": msgs[4]["content"]}  # q3 re-asks q2
    # the kept part would start at index 6, but that would split the retry from the pair it
    # supersedes: the cut moves to the next user turn instead
    assert plan_eviction(msgs, b) == 8
    tool = turns(5)
    tool[6] = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42"}]}
    assert plan_eviction(tool, b) == 8
    assert plan_eviction(turns(5), b) == 6
    # whatever the budget, the kept part starts on a user turn and the last turn is kept
    for keep in (2, 3, 4, 5, 6):
        n = plan_eviction(turns(9), small_budget(keep_messages=keep))
        assert turns(9)[n]["role"] == "user" and 2 <= 18 - n <= max(keep, 2)


def test_a_huge_last_turn_is_kept_and_nothing_thrashes():
    b = small_budget(trigger_messages=100, trigger_chars=1000)
    msgs = [{"role": "user", "content": "긴 글 요약해줘"}, {"role": "assistant", "content": "가" * 5000}]
    assert plan_eviction(msgs, b) == 0  # over budget, but nothing older to evict
    assert plan_eviction(turns(2) + msgs, b) == 4


def test_memo_validation_and_clipping():
    good = memo(["자물쇠 번호 4719"])
    assert memo_problems(good) == []
    assert memo_problems("") == ["empty"]
    assert any("다음에 할 일" in p for p in memo_problems(good.replace("## 다음에 할 일", "다음에 할 일")))
    assert memo_problems("\n".join(f"## {h}\n없음" for h in HEADINGS)) == ["all sections empty"]
    long = memo([f"사실 {i}: " + "가" * 50 for i in range(100)])
    clipped = clip_memo(long, 800)
    assert len(clipped) <= 800 and memo_problems(clipped) == []
    assert "사실 0:" in clipped  # the oldest facts of a section are kept, the last lines go


# -- compaction through the Assistant ----------------------------------------------------------


async def test_compaction_triggers_exactly_when_the_budget_is_exceeded(transcript, clock):
    s = FakeSummarizer()
    a, model = make(transcript, clock, s, trigger_messages=8, keep_messages=4)
    for i in range(4):
        await turn(a, f"q{i}")
    assert s.calls == [] and a.summary(CHAT) is None  # 8 messages: at the budget
    await turn(a, "q4")  # 10 messages: over it
    assert len(s.calls) == 1
    previous, evicted = s.calls[0]
    assert previous is None
    assert [m["content"] for m in evicted] == ["q0", "echo: q0", "q1", "echo: q1", "q2", "echo: q2"]
    # the next request: the summary in its own system block, the last 4 messages verbatim
    await a.ask(CHAT, "q5")
    call = model.calls[-1]
    assert [m["content"] for m in call.messages] == ["q3", "echo: q3", "q4", "echo: q4", "q5"]
    assert call.messages[0]["role"] == "user"
    assert call.system[2]["text"].startswith("[이전 대화 요약")
    # the summary is its own cached block (breakpoint 2), before the uncached time line
    assert call.system[2].get("cache_control") == {"type": "ephemeral"}
    assert "cache_control" not in call.system[-1] and call.system[-1]["text"].startswith("지금은")
    assert a.stats(CHAT)["summary_covers"] == 6
    check_invariant(a, transcript, CHAT)


async def test_summary_input_is_only_the_previous_summary_and_the_evicted_messages(transcript, clock):
    s = FakeSummarizer()
    a, _ = make(transcript, clock, s, trigger_messages=8, keep_messages=4)
    texts = []
    for i in range(30):
        text = f"메시지 {i}번" if i % 3 == 0 else f"잡담 {chr(0xAC00 + i)}"
        texts.append(text)
        await turn(a, text)
    assert len(s.calls) >= 5
    summaries = []
    ends = [0]
    for previous, evicted in s.calls:
        # each call gets the summary the previous call produced, nothing older
        assert previous == (summaries[-1] if summaries else None)
        summaries.append(digit_facts(previous, evicted))
        ends.append(ends[-1] + len(evicted))
        assert len(evicted) <= 8  # never the whole transcript
    # the batches are consecutive, disjoint, and together every evicted message once, in order
    everything = [e.data["content"] for e in transcript.read(CHAT)]
    batches = [m["content"] for _, evicted in s.calls for m in evicted]
    assert batches == everything[: len(batches)]
    assert a.summary(CHAT) == summaries[-1]
    # facts from the first turn survive every re-summarization
    assert "메시지 0번" in facts_of(a.summary(CHAT))


async def test_invariant_holds_for_500_turns(transcript, clock):
    s = FakeSummarizer()
    a, model = make(transcript, clock, s, trigger_messages=10, keep_messages=4, trigger_chars=3000)
    for i in range(500):
        size = 10 + (i * 37) % 400  # varying lengths, so the character trigger fires too
        text = f"기억할 번호 {i} " if i % 50 == 0 else "잡담 "
        await a.ask(CHAT, text + "말" * size)
        sent = model.calls[-1].messages[:-1]
        summary = a.memory.load(CHAT)
        after = [e.data for e in transcript.tail(CHAT, 1000, stop=summary.end if summary else 0)]
        # the request carried exactly what the summary did not cover (minus the new turn just stored)
        assert [m["content"] for m in sent] == [m["content"] for m in after[:-2]]
        assert len(sent) <= 10 and sum(len(m["content"]) for m in sent) <= 3000
        await a.maintain(CHAT)
        if i % 50 == 49:
            check_invariant(a, transcript, CHAT)
    check_invariant(a, transcript, CHAT)
    assert a.stats(CHAT)["summary_covers"] + len(a.history(CHAT)) == 1000
    # every message went to the summarizer exactly once, in order
    batches = [m["content"] for _, evicted in s.calls for m in evicted]
    everything = [e.data["content"] for e in transcript.read(CHAT)]
    assert batches == everything[: len(batches)]
    facts = " ".join(facts_of(a.summary(CHAT)))
    assert all(f"기억할 번호 {i} " in facts for i in range(0, 450, 50))


async def test_retried_pair_is_removed_before_summarizing(transcript, clock):
    s = FakeSummarizer()
    a, model = make(transcript, clock, s, trigger_messages=8, keep_messages=4)
    model.queue("a0", "first answer", "second answer")
    await a.ask(CHAT, "q0")
    await a.ask(CHAT, "환율 알려줘")
    await a.retry(CHAT)
    for i in range(3):
        await turn(a, f"later {i}")
    previous, evicted = s.calls[0]
    contents = [m["content"] for m in evicted]
    assert "first answer" not in contents and "second answer" in contents
    assert contents.count("환율 알려줘") == 1
    assert a.stats(CHAT)["summary_covers"] == 6  # all stored lines are covered, superseded ones too
    check_invariant(a, transcript, CHAT)


# -- failures ---------------------------------------------------------------------------------------


async def test_summarizer_failure_falls_back_to_trimming_and_turns_still_succeed(transcript, clock, caplog):
    s = FakeSummarizer()
    a, model = make(transcript, clock, s, trigger_messages=8, keep_messages=4)
    for i in range(5):
        await turn(a, f"q{i}")
    first = a.summary(CHAT)
    assert first is not None and len(s.calls) == 1
    s.queue(*[RuntimeError("summarizer down")] * 100)
    with caplog.at_level(logging.WARNING):
        for i in range(5, 25):
            answer = await a.ask(CHAT, f"q{i}")
            assert answer.text == f"echo: q{i}"
            await a.maintain(CHAT)  # never raises
    assert "summarizer failed" in caplog.text
    assert len(s.calls) == 1 + 2 * 18  # over budget from q7 on; one retry per compaction attempt
    assert a.summary(CHAT) == first  # the previous summary is kept
    # the tail grew past the budget: the window trims it (safety net), the request stays bounded
    await a.ask(CHAT, "q25")
    sent = model.calls[-1].messages
    assert len(sent) == 21 and sent[0]["content"] == "q15" and sent[0]["role"] == "user"
    # the summarizer recovers: the backlog is caught up, nothing in between was lost
    s.script.clear()
    await a.maintain(CHAT)
    check_invariant(a, transcript, CHAT)
    batches = [m["content"] for _, evicted in s.calls if evicted for m in evicted]
    everything = [e.data["content"] for e in transcript.read(CHAT)]
    assert batches[:6] == everything[:6]
    assert "q5" in [m["content"] for m in s.calls[-1][1]]


async def test_invalid_memo_is_retried_once_then_the_previous_summary_is_kept(transcript, clock, caplog):
    s = FakeSummarizer()
    a, _ = make(transcript, clock, s, trigger_messages=8, keep_messages=4)
    s.queue("그냥 아무 말", memo(["번호 1234"]))  # invalid, then valid
    for i in range(5):
        await turn(a, f"q{i}")
    assert len(s.calls) == 2 and facts_of(a.summary(CHAT)) == ["번호 1234"]
    s.queue("## 사용자의 목표\n반쪽 메모", "")  # invalid twice
    with caplog.at_level(logging.WARNING):
        for i in range(5, 8):
            await turn(a, f"r{i}")
    assert "invalid summary" in caplog.text
    assert facts_of(a.summary(CHAT)) == ["번호 1234"] and len(s.calls) == 4
    check_invariant(a, transcript, CHAT)


async def test_summary_over_the_cap_is_condensed(transcript, clock):
    s = FakeSummarizer()
    a, model = make(transcript, clock, s, trigger_messages=8, keep_messages=4, max_summary_chars=600)
    long = memo([f"사실 {i} " + "나" * 40 for i in range(40)])
    short = memo(["압축된 사실 9876"])
    s.queue(long, short)
    for i in range(5):
        await turn(a, f"q{i}")
    assert len(s.calls) == 2
    assert s.calls[1] == (long, [])  # condense: the long memo alone, no messages
    assert a.summary(CHAT) == short
    # if condensing fails too, the memo is clipped mechanically, headings kept
    s.queue(long, RuntimeError("down"))
    for i in range(5, 8):
        await turn(a, f"q{i}")
    text = a.summary(CHAT)
    assert text is not None and len(text) <= 600 and memo_problems(text) == []
    await a.ask(CHAT, "next")
    system = model.calls[-1].system
    summary_blocks = [b for b in system if b["text"].startswith("[이전 대화 요약")]
    assert len(summary_blocks) == 1 and len(summary_blocks[0]["text"]) <= 600 + 60


# -- crash safety ---------------------------------------------------------------------------------------


async def test_crash_while_writing_the_summary_leaves_the_old_one(transcript, clock, monkeypatch):
    s = FakeSummarizer()
    a, _ = make(transcript, clock, s, trigger_messages=8, keep_messages=4)
    for i in range(5):
        await turn(a, f"q{i}")
    before = a.memory.store.path(CHAT).read_bytes()

    def crash(src, dst):
        raise OSError("power cut before the rename")

    monkeypatch.setattr(memory_files.os, "replace", crash)
    for i in range(5, 8):
        await turn(a, f"q{i}")  # compaction fails inside the write; maintain does not raise
    monkeypatch.undo()
    stray = list(transcript.dir.glob(".*.summary.json.*.tmp"))
    assert stray, "the interrupted write left its temp file"
    assert a.memory.store.path(CHAT).read_bytes() == before
    check_invariant(a, transcript, CHAT)  # old summary + the whole tail after it
    await turn(a, "q8")
    check_invariant(a, transcript, CHAT)
    assert not list(transcript.dir.glob(".*.summary.json.*.tmp"))  # cleaned by the next write
    assert a.stats(CHAT)["summary_covers"] > 6


async def test_torn_or_stray_files_are_ignored(transcript, clock, caplog):
    s = FakeSummarizer()
    a, model = make(transcript, clock, s, trigger_messages=8, keep_messages=4)
    for i in range(5):
        await turn(a, f"q{i}")
    path = a.memory.store.path(CHAT)
    (path.parent / f".{path.name}.99999.tmp").write_text('{"text": "half')
    path.write_text('{"text": "torn', encoding="utf-8")  # e.g. edited by hand and cut off
    with caplog.at_level(logging.WARNING):
        assert a.summary(CHAT) is None
        await a.ask(CHAT, "q5")
    assert "unreadable" in caplog.text
    assert [m["content"] for m in model.calls[-1].messages][:2] == ["q0", "echo: q0"]  # plain window
    await a.maintain(CHAT)  # rebuilt from the transcript
    assert a.summary(CHAT) is not None
    check_invariant(a, transcript, CHAT)


CHILD = r"""
import asyncio, os, sys
sys.path.insert(0, {root!r})
from memory.summary import SummaryMemory
from memory.transcript import Transcript
from tests.summary_helpers import digit_facts, small_budget

mode = sys.argv[1]
mem = None

async def summarize(previous, messages):
    if mode == "during":
        os._exit(9)  # killed while the summarizer runs, holding the lock
    return digit_facts(previous, messages)

t = Transcript({data!r})
mem = SummaryMemory(t, summarize, small_budget())
real_write = mem.store.write

def write_then_die(chat_id, summary):
    real_write(chat_id, summary)
    os._exit(9)  # killed right after the summary was written, before anything else

mem.store.write = write_then_die
asyncio.run(mem.compact({chat}))
"""


@pytest.mark.parametrize("mode", ["during", "after"])
async def test_killed_compaction_leaves_a_consistent_state(transcript, clock, data_dir: Path, mode):
    import subprocess
    import sys

    s = FakeSummarizer()
    a, _ = make(transcript, clock, s, trigger_messages=8, keep_messages=4)
    for i in range(5):
        await turn(a, f"q{i} 번호 {i}")
    first = a.memory.load(CHAT)
    for i in range(5, 8):
        await a.ask(CHAT, f"q{i} 번호 {i}")  # no maintain: over budget, compaction pending
    root = str(Path(__file__).resolve().parent.parent)
    script = CHILD.format(root=root, data=str(data_dir), chat=CHAT)
    r = subprocess.run([sys.executable, "-c", script, mode], timeout=60, capture_output=True, text=True)
    assert r.returncode == 9, r.stderr
    after = a.memory.load(CHAT)
    if mode == "during":
        assert after == first
    else:
        assert after is not None and after.end > first.end and after.covers > first.covers
    check_invariant(a, transcript, CHAT)
    # the lock died with the process: this process can compact at once
    await a.maintain(CHAT)
    check_invariant(a, transcript, CHAT)
    assert "q0 번호 0" in facts_of(a.summary(CHAT))


async def test_another_process_compacting_is_not_waited_for(transcript, clock):
    s = FakeSummarizer()
    a, _ = make(transcript, clock, s, trigger_messages=8, keep_messages=4)
    for i in range(5):
        await a.ask(CHAT, f"q{i}")
    lock_path = a.memory.store.lock_path(CHAT)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as another process would
        await a.maintain(CHAT)
        assert s.calls == []
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    await a.maintain(CHAT)
    assert len(s.calls) == 1


# -- reset and stale summaries ---------------------------------------------------------------------------


async def test_reset_archives_the_summary_and_a_stale_one_is_detected(transcript, clock, caplog):
    s = FakeSummarizer()
    a, model = make(transcript, clock, s, trigger_messages=8, keep_messages=4)
    for i in range(5):
        await turn(a, f"비밀번호 {i}")
    assert a.summary(CHAT) is not None
    name = await a.reset(CHAT)
    archive = transcript.dir / "archive"
    archived_summary = archive / name.replace(".jsonl", ".summary.json")
    assert (archive / name).exists() and archived_summary.exists()
    assert not a.memory.store.path(CHAT).exists()
    assert a.summary(CHAT) is None and a.stats(CHAT)["summary_covers"] == 0
    # a /reset that crashed between the two renames leaves the old summary beside a new transcript
    for i in range(6):
        await a.ask(CHAT, f"새 대화 {i}")  # long enough for the old offset to fall inside the new file
    shutil.copy(archived_summary, a.memory.store.path(CHAT))
    with caplog.at_level(logging.WARNING):
        assert a.summary(CHAT) is None
        await a.ask(CHAT, "새 질문")
    assert "does not match the transcript" in caplog.text
    assert all("비밀번호" not in b["text"] for b in model.calls[-1].system)
    assert model.calls[-1].messages[0]["content"] == "새 대화 0"
    # the next compaction puts the stale summary aside and starts a fresh one
    await a.maintain(CHAT)
    assert list(archive.glob(f"{CHAT}.stale-*.summary.json"))
    assert "비밀번호" not in (a.summary(CHAT) or "")
    check_invariant(a, transcript, CHAT)


def test_summary_file_format(transcript, clock):
    import asyncio

    s = FakeSummarizer()
    a, _ = make(transcript, clock, s, trigger_messages=8, keep_messages=4)

    async def run():
        for i in range(5):
            await turn(a, f"q{i}")

    asyncio.run(run())
    path = transcript.dir / f"{CHAT}.summary.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data) >= {"text", "end", "covers", "last_offset", "last_sha256", "at", "model", "version"}
    assert data["covers"] == 6 and data["model"] == "fake-summarizer" and data["version"] == 1
    entries = list(transcript.read(CHAT))
    assert data["end"] == entries[5].end and data["last_offset"] == entries[5].offset
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert Summary.from_json(data) == a.memory.load(CHAT)


# -- huge backlogs ------------------------------------------------------------------------------------------


async def test_a_huge_unsummarized_chat_is_read_cheaply_and_caught_up_in_chunks(transcript, clock, monkeypatch):
    for i in range(0, 300, 50):  # an old chat from before the summary memory
        transcript.append(CHAT, turns(50, start=i))
    s = FakeSummarizer()
    a, model = make(transcript, clock, s, trigger_messages=8, keep_messages=4, chunk_messages=40)
    read_count = 0
    real_read = transcript.read

    def counting_read(chat_id, start=0):
        nonlocal read_count
        for e in real_read(chat_id, start):
            read_count += 1
            yield e

    monkeypatch.setattr(transcript, "read", counting_read)
    await a.ask(CHAT, "안녕")
    sent = model.calls[-1].messages
    assert len(sent) == 21 and sent[0]["content"] == "q290......"  # the window only
    assert read_count == 0  # the hot path reads backwards from the end only
    await a.maintain(CHAT)
    assert read_count <= 40 + 4 + 2
    assert [m["content"] for m in s.calls[0][1]][:2] == ["q0........", "a0........"]
    assert len(s.calls[0][1]) <= 40
    rounds = 1
    while len(a.history(CHAT)) > 8:
        read_count = 0
        await a.maintain(CHAT)
        assert read_count <= 46
        rounds += 1
        assert rounds < 20
    monkeypatch.undo()
    check_invariant(a, transcript, CHAT)
    assert a.stats(CHAT)["summary_covers"] + len(a.history(CHAT)) == 602


async def test_without_a_summarizer_nothing_changes(transcript, clock):
    a, model = make(transcript, clock, None)
    for i in range(12):
        await turn(a, f"q{i}")
    assert not a.memory.store.path(CHAT).exists()
    assert len(model.calls[-1].messages) == 21 and a.summary(CHAT) is None
    assert a.stats(CHAT)["summary_covers"] == 0


def test_budget_fits_the_window():
    b = Budget(trigger_messages=30, trigger_chars=20_000, keep_messages=40).fitted(20, 8000)
    assert (b.trigger_messages, b.trigger_chars, b.keep_messages) == (20, 8000, 18)
    assert Budget().fitted(20, 8000) == Budget()
