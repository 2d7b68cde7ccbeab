import asyncio
import stat
import threading

import pytest

from bot.claude.model import FakeModel, ModelError, tool_call
from bot.core.ask import Assistant, NothingToRetry, Question
from bot.core.prompt import time_line
from memory.transcript import Transcript
from memory.turns import is_complete, split_turns


async def test_success_writes_question_and_answer_together(
    assistant: Assistant, transcript: Transcript, fake_model: FakeModel
):
    fake_model.queue("반가워요")
    answer = await assistant.ask(1, "안녕")
    assert answer.text == "반가워요"
    stored = [e.data for e in transcript.read(1)]
    assert [(m["role"], m["content"]) for m in stored] == [("user", "안녕"), ("assistant", "반가워요")]
    assert stored[1]["usage"]["output"] == answer.usage.output_tokens
    assert "at" in stored[0] and "at" in stored[1]


class Crash(Exception):
    """The process dies here (nothing after it runs)."""


@pytest.mark.parametrize("with_tool", [False, True], ids=["plain", "tool round"])
async def test_a_turn_is_one_write_so_a_crash_can_never_leave_the_question_alone(
    assistant: Assistant, transcript: Transcript, fake_model: FakeModel, monkeypatch, with_tool: bool
):
    """The core promise: question and answer reach the file together, in one write and one fsync.
    A crash injected at the turn's second write to the transcript (if there is one) must find nothing to cut."""
    import os

    import memory.transcript as transcript_module

    fake_model.queue("첫 답")
    await assistant.ask(1, "첫 질문")
    writes: list[bytes] = []
    synced: list[tuple[int, int]] = []  # (inode, writes so far) of each fsync of a regular file
    real_write, real_fsync = transcript_module._write_all, os.fsync

    def write_then_crash(fd: int, data: bytes) -> None:
        writes.append(data)
        if len(writes) > 1:
            raise Crash("killed between two writes of one turn")
        real_write(fd, data)

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            synced.append((st.st_ino, len(writes)))
        real_fsync(fd)

    monkeypatch.setattr(transcript_module, "_write_all", write_then_crash)
    monkeypatch.setattr(os, "fsync", fsync)
    if with_tool:
        fake_model.queue(tool_call("remember", {"text": "생일은 3월 14일"}), "기억했어요.")
    else:
        fake_model.queue("두 번째 답")
    try:
        await assistant.ask(1, "두 번째 질문")
    except Crash:
        pass
    assert len(writes) == 1, [w.decode() for w in writes]
    stored = [e.data for e in transcript.read(1)]
    assert stored[2]["content"] == "두 번째 질문" and stored[-1]["role"] == "assistant"
    assert writes[0].decode().count("\n") == len(stored) - 2  # the whole turn was that one write
    inode = transcript.path(1).stat().st_ino
    assert [n for ino, n in synced if ino == inode] == [1]  # and one fsync of the transcript, after it
    assert all(is_complete(turn) for turn in split_turns(stored))


async def test_failure_writes_nothing(assistant: Assistant, transcript: Transcript, fake_model: FakeModel):
    fake_model.queue("first")
    await assistant.ask(1, "q1")
    fake_model.queue(ModelError("overloaded", "529"))
    with pytest.raises(ModelError) as e:
        await assistant.ask(1, "q2")
    assert e.value.kind == "overloaded"
    assert [m.data["content"] for m in transcript.read(1)] == ["q1", "first"]
    # the next question is sent after the last good turn: roles still alternate
    await assistant.ask(1, "q3")
    sent = fake_model.calls[-1].messages
    assert [m["content"] for m in sent] == ["q1", "first", "q3"]


async def test_history_is_sent_before_the_new_question(assistant: Assistant, fake_model: FakeModel):
    await assistant.ask(5, "내 자전거 자물쇠 번호는 4719야")
    await assistant.ask(5, "내 자물쇠 번호 뭐였지?")
    sent = fake_model.calls[-1].messages
    assert sent[0] == {"role": "user", "content": "내 자전거 자물쇠 번호는 4719야"}
    assert sent[-1] == {"role": "user", "content": "내 자물쇠 번호 뭐였지?"}
    assert len(sent) == 3


async def test_time_line_is_computed_for_every_request(assistant: Assistant, fake_model: FakeModel, clock):
    await assistant.ask(1, "몇 시야?")
    first = fake_model.calls[-1].system
    clock.advance(hours=2, minutes=42)
    await assistant.ask(1, "지금은?")
    second = fake_model.calls[-1].system
    assert first[-1]["text"] == "지금은 2026년 11월 29일 (일) 23:05 (한국 시각)이다."
    assert second[-1]["text"] == "지금은 2026년 11월 30일 (월) 01:47 (한국 시각)이다."
    # the clock line comes after the last cache breakpoint, so no cached prefix contains it
    marked = [i for i, b in enumerate(second) if "cache_control" in b]
    clock_at = next(i for i, b in enumerate(second) if b["text"].startswith("지금은"))
    assert marked and max(marked) < clock_at
    assert first[:clock_at] == second[:clock_at]  # the cached prefix did not change with the clock


def test_time_line_other_zone(clock):
    assert time_line(clock(), "Europe/Berlin") == "지금은 2026년 11월 29일 (일) 15:05 (Europe/Berlin 시각)이다."


async def test_window_limits_apply(transcript: Transcript, fake_model: FakeModel, clock):
    a = Assistant(transcript=transcript, model=fake_model, now=clock, max_messages=4, max_chars=10_000)
    for i in range(6):
        await a.ask(1, f"q{i}")
    sent = fake_model.calls[-1].messages
    assert [m["content"] for m in sent] == ["q3", "echo: q3", "q4", "echo: q4", "q5"]


async def test_chats_are_separate(assistant: Assistant, fake_model: FakeModel):
    await assistant.ask(1, "one")
    await assistant.ask(2, "two")
    assert fake_model.calls[-1].messages == [{"role": "user", "content": "two"}]


async def test_one_chat_is_serialised_and_turns_never_interleave(
    assistant: Assistant, transcript: Transcript, fake_model: FakeModel
):
    # every question of chat 1 must be sent with all the turns answered before it: with turns
    # running at once (a new lock per call), two questions would be sent with the same history
    fake_model.delay = 0.001
    await asyncio.gather(*(assistant.ask(1, f"q{i}") for i in range(10)), *(assistant.ask(2, "x") for _ in range(3)))
    sent = [c.messages for c in fake_model.calls if c.last_user_text.startswith("q")]
    assert [len(m) for m in sent] == [1 + 2 * i for i in range(10)]
    for messages in sent:  # each history is the earlier turns, whole and in order
        questions = [m["content"] for m in messages[::2]]
        assert [m["content"] for m in messages[1::2]] == [f"echo: {q}" for q in questions[:-1]]
    stored = [e.data["content"] for e in transcript.read(1)]
    assert stored == [x for m in sent[-1][::2] for x in (m["content"], f"echo: {m['content']}")]


async def test_attachments_are_sent_but_not_stored(assistant: Assistant, transcript: Transcript, fake_model: FakeModel):
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "AAAA"}}
    await assistant.ask(1, Question("[사진] 이게 뭐야?", attachments=(image,), meta={"photo": "file-1"}))
    assert fake_model.calls[-1].messages[-1]["content"][0] == image
    stored = [e.data for e in transcript.read(1)]
    assert stored[0]["content"] == "[사진] 이게 뭐야?" and stored[0]["photo"] == "file-1"
    assert "AAAA" not in transcript.path(1).read_text()


async def test_retry_after_failure_asks_the_failed_question(
    assistant: Assistant, transcript: Transcript, fake_model: FakeModel
):
    fake_model.queue(ModelError("timeout"))
    with pytest.raises(ModelError):
        await assistant.ask(1, "잃어버린 질문")
    q, answer = await assistant.retry(1)
    assert q.text == "잃어버린 질문" and answer.text == "echo: 잃어버린 질문"
    assert [m.data["content"] for m in transcript.read(1)] == ["잃어버린 질문", "echo: 잃어버린 질문"]


async def test_retry_replaces_the_previous_answer(assistant: Assistant, transcript: Transcript, fake_model: FakeModel):
    fake_model.queue("a1", "b1", "b2")
    await assistant.ask(1, "A")
    await assistant.ask(1, "B")
    q, answer = await assistant.retry(1)
    assert q.text == "B" and answer.text == "b2"
    # the retried question was sent without its old answer
    assert [m["content"] for m in fake_model.calls[-1].messages] == ["A", "a1", "B"]
    # the transcript keeps everything; the next request carries only the new answer
    assert [m.data["content"] for m in transcript.read(1)] == ["A", "a1", "B", "b1", "B", "b2"]
    await assistant.ask(1, "C")
    assert [m["content"] for m in fake_model.calls[-1].messages] == ["A", "a1", "B", "b2", "C"]


async def test_retry_with_nothing_to_retry(assistant: Assistant):
    with pytest.raises(NothingToRetry):
        await assistant.retry(1)


async def test_reset_archives_and_starts_fresh(assistant: Assistant, transcript: Transcript, fake_model: FakeModel):
    await assistant.ask(1, "old")
    name = await assistant.reset(1)
    assert name and (transcript.dir / "archive" / name).exists()
    await assistant.ask(1, "new")
    assert fake_model.calls[-1].messages == [{"role": "user", "content": "new"}]


async def test_stats_counts_messages_and_tokens(assistant: Assistant, transcript: Transcript):
    first = await assistant.ask(1, "q1")
    second = await assistant.ask(1, "q2 is a longer question")
    s = assistant.stats(1)
    usages = [first.usage, second.usage]
    assert usages[0] != usages[1]  # the totals below are sums, not one answer's count
    assert s["messages"] == 4
    assert s["input"] == sum(u.input_tokens for u in usages)
    assert s["output"] == sum(u.output_tokens for u in usages)
    # cache reads and writes recorded with an answer (e.g. by the real API) are added up too
    transcript.append(1, [{"role": "user", "content": "q3"}, {"role": "assistant", "content": "a3",
                          "usage": {"input": 5, "output": 2, "cache_read": 30, "cache_write": 7}}])  # fmt: skip
    s2 = assistant.stats(1)
    assert (s2["messages"], s2["input"], s2["output"]) == (6, s["input"] + 5, s["output"] + 2)
    assert (s2["cache_read"], s2["cache_write"]) == (30, 7)


async def test_a_failed_retry_still_replaces_the_old_answer(
    assistant: Assistant, transcript: Transcript, fake_model: FakeModel
):
    fake_model.queue("a1", ModelError("overloaded"), "a2")
    await assistant.ask(1, "A")
    with pytest.raises(ModelError):
        await assistant.retry(1)
    q, answer = await assistant.retry(1)
    assert q.text == "A" and answer.text == "a2"
    assert [m["content"] for m in fake_model.calls[-1].messages] == ["A"]  # sent without the old answer
    rows = [e.data for e in transcript.read(1)]
    assert rows[-2]["retry"] is True
    await assistant.ask(1, "B")
    assert [m["content"] for m in fake_model.calls[-1].messages] == ["A", "a2", "B"]


async def test_retry_restore_adds_back_what_was_not_stored(assistant: Assistant, fake_model: FakeModel):
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}}
    await assistant.ask(1, Question("[사진] 뭐야?", attachments=(image,), meta={"photo": "f1"}))
    seen = []

    async def restore(q: Question) -> Question:
        seen.append(q)
        return Question(q.text, attachments=(image,), meta=q.meta)

    await assistant.retry(1, restore=restore)
    assert seen[0].text == "[사진] 뭐야?" and seen[0].meta == {"photo": "f1"}
    assert fake_model.calls[-1].messages[-1]["content"][0] == image


async def test_cancelling_while_the_turn_is_stored_returns_the_stored_answer(
    assistant: Assistant, transcript: Transcript, fake_model: FakeModel, monkeypatch
):
    entered, release = threading.Event(), threading.Event()
    real_append = transcript.append

    def held_append(chat_id, messages):
        entered.set()
        release.wait(60)  # until the ask() below was cancelled
        return real_append(chat_id, messages)

    monkeypatch.setattr(transcript, "append", held_append)
    task = asyncio.create_task(assistant.ask(1, "질문"))
    await asyncio.to_thread(entered.wait, 60)
    task.cancel()
    await asyncio.sleep(0)  # the cancellation reaches the task while the append is still held
    release.set()
    answer = await task  # not cancelled: the answer was complete and is stored
    assert answer.text == "echo: 질문" and not task.cancelled()
    assert [e.data["content"] for e in transcript.read(1)] == ["질문", "echo: 질문"]
