"""Faults found in review: serialisation that can fail, double cancel while storing, /retry after a restart."""

import asyncio
import threading

import pytest

from bot.claude.model import FakeModel, ModelError
from bot.core.ask import Assistant, NothingToRetry
from bot.core.locks import ChatLocks
from memory.transcript import Transcript
from tests.fakes.messages_rules import validate


class GateModel(FakeModel):
    """A model whose calls wait at a gate: counts how many run at once, per chat."""

    def __init__(self) -> None:
        super().__init__(validate=validate)
        self.active: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self.gate = asyncio.Event()

    async def complete(self, *, system, messages, max_tokens=None, on_text=None, tools=None, tool_choice=None,
                       on_tool=None, **kw):  # fmt: skip
        content = messages[-1]["content"]  # a string, or blocks (the question first)
        chat = (content if isinstance(content, str) else content[0]["text"]).split(":")[0]
        self.active[chat] = self.active.get(chat, 0) + 1
        self.peak[chat] = max(self.peak.get(chat, 0), self.active[chat])
        try:
            await self.gate.wait()
            return await super().complete(system=system, messages=messages, max_tokens=max_tokens, tools=tools)
        finally:
            self.active[chat] -= 1


async def test_one_chat_runs_one_turn_at_a_time_while_chats_run_in_parallel(transcript: Transcript, clock):
    model = GateModel()
    a = Assistant(transcript=transcript, model=model, now=clock)
    tasks = [asyncio.create_task(a.ask(1, f"one:{i}")) for i in range(5)]
    tasks += [asyncio.create_task(a.ask(2, f"two:{i}")) for i in range(5)]
    while sum(model.active.values()) < 2:  # both chats reached the model …
        failed = [t for t in tasks if t.done()]
        assert not failed, failed[0].exception()  # a turn that died before the model would spin here forever
        await asyncio.sleep(0)
    for _ in range(20):  # … and give every other task the chance to get there too
        await asyncio.sleep(0)
    assert model.active == {"one": 1, "two": 1}  # a new lock per call would let 5 + 5 in
    model.gate.set()
    await asyncio.gather(*tasks)
    assert model.peak == {"one": 1, "two": 1}
    assert [e.data["content"] for e in transcript.read(1)][::2] == [f"one:{i}" for i in range(5)]


async def test_the_lock_is_reentrant_for_its_holder_and_dropped_when_idle():
    locks = ChatLocks()
    async with locks.hold(1):
        async with locks.hold(1):  # the Telegram layer holds it and ask() takes it again
            assert locks.busy(1) and len(locks) == 1
    assert len(locks) == 0  # nothing kept for an idle chat
    order: list[str] = []

    async def turn(name: str) -> None:
        async with locks.hold(1):
            order.append(f"{name}+")
            await asyncio.sleep(0)
            order.append(f"{name}-")

    await asyncio.gather(turn("a"), turn("b"))
    assert order in (["a+", "a-", "b+", "b-"], ["b+", "b-", "a+", "a-"])
    assert len(locks) == 0


async def test_locks_of_ten_thousand_chats_are_released(transcript: Transcript, clock):
    a = Assistant(transcript=transcript, model=FakeModel(), now=clock)
    for chat in range(300):
        await a.ask(chat, "hi")
    assert len(a.locks) == 0


async def test_cancelled_twice_while_the_turn_is_stored_returns_the_answer_once(
    assistant: Assistant, transcript: Transcript, monkeypatch
):
    entered, release = threading.Event(), threading.Event()
    real_append = transcript.append

    def slow_append(chat_id, messages):
        entered.set()
        release.wait(30)
        return real_append(chat_id, messages)

    monkeypatch.setattr(transcript, "append", slow_append)
    task = asyncio.create_task(assistant.ask(1, "질문"))
    await asyncio.to_thread(entered.wait, 60)
    task.cancel()  # Ctrl-C …
    await asyncio.sleep(0)
    task.cancel()  # … and Ctrl-C again, while the turn is still being written
    await asyncio.sleep(0)
    release.set()
    answer = await task
    assert answer.text == "echo: 질문" and not task.cancelled()
    assert [e.data["content"] for e in transcript.read(1)] == ["질문", "echo: 질문"]
    # /retry now re-asks the stored question as a replacement, it does not store the pair twice as new
    q, _ = await assistant.retry(1)
    rows = [e.data for e in transcript.read(1)]
    assert q.text == "질문" and rows[2].get("retry") is True


async def test_retry_after_a_restart_asks_the_failed_question(transcript: Transcript, fake_model, clock, data_dir):
    a = Assistant(transcript=transcript, model=fake_model, now=clock)
    fake_model.queue("first answer", ModelError("overloaded"))
    await a.ask(1, "answered question")
    with pytest.raises(ModelError):
        await a.ask(1, "failed question")
    restarted = Assistant(transcript=Transcript(data_dir), model=fake_model, now=clock)
    q, answer = await restarted.retry(1)
    assert q.text == "failed question" and answer.text == "echo: failed question"
    rows = [e.data for e in transcript.read(1)]
    assert [r["content"] for r in rows] == ["answered question", "first answer", "failed question", answer.text]
    assert not any(r.get("retry") for r in rows)  # the answered turn was not replaced
    assert not restarted.pending.path(1).exists()
    # and now a plain /retry re-asks the last answered question
    q2, _ = await restarted.retry(1)
    assert q2.text == "failed question"


async def test_a_new_question_after_a_failure_drops_the_pending_one(transcript, fake_model, clock, data_dir):
    a = Assistant(transcript=transcript, model=fake_model, now=clock)
    fake_model.queue(ModelError("timeout"))
    with pytest.raises(ModelError):
        await a.ask(1, "lost")
    await a.ask(1, "moved on")
    restarted = Assistant(transcript=Transcript(data_dir), model=fake_model, now=clock)
    q, _ = await restarted.retry(1)
    assert q.text == "moved on"


async def test_retry_with_nothing_at_all(transcript: Transcript, fake_model, clock):
    a = Assistant(transcript=transcript, model=fake_model, now=clock)
    with pytest.raises(NothingToRetry):
        await a.retry(1)
    assert fake_model.calls == []  # nothing was asked
