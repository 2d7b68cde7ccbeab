"""Compaction runs in the background: a slow summarizer never holds up the chat.

No clocks: the summarizer is blocked on an event the test controls, so "meanwhile" is exact.
"""

import asyncio

from bot.claude.model import FakeModel, Usage
from bot.core.ask import Assistant, Question, Spend
from memory.summary import HEADINGS, Budget
from memory.transcript import Transcript
from tests.fakes.messages_rules import validate

CHAT = 7


def memo(tag: str) -> str:
    return "\n".join(f"## {h}\n- {tag}" for h in HEADINGS)


class BlockedSummarizer:
    """Waits until ``release`` is set; counts calls; ``entered`` is set when a call starts."""

    name = "slow-summary"

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.entered = asyncio.Event()
        self.calls = 0
        self.finished = 0

    async def __call__(self, previous, messages) -> str:
        self.calls += 1
        self.entered.set()
        await self.release.wait()
        self.finished += 1
        return memo(f"summary {self.calls}")


def make(transcript, clock, summarizer, **kw) -> tuple[Assistant, FakeModel]:
    model = FakeModel(validate=validate)
    budget = Budget(trigger_messages=4, keep_messages=2)
    a = Assistant(transcript=transcript, model=model, now=clock, summarizer=summarizer, summary_budget=budget, **kw)
    return a, model


async def fill(a: Assistant, n: int) -> None:
    for i in range(n):
        await a.ask(CHAT, f"question {i}")


async def test_a_question_during_a_slow_compaction_is_answered_at_once(transcript: Transcript, clock):
    summarizer = BlockedSummarizer()
    a, model = make(transcript, clock, summarizer)
    await fill(a, 3)  # 6 messages: over the trigger of 4
    await a.maintain(CHAT, wait=False)
    await summarizer.entered.wait()  # the compaction is running and stuck in the summarizer
    # would wait for the stuck summarizer if compaction held the chat's lock (the bound only stops a hang)
    answer = await asyncio.wait_for(a.ask(CHAT, "meanwhile?"), 60)
    assert answer.text == "echo: meanwhile?"
    assert summarizer.finished == 0 and a.summary(CHAT) is None  # answered with the tail, no summary yet
    assert model.calls[-1].messages[0]["content"] == "question 0"  # the whole tail was sent
    summarizer.release.set()
    await a.maintain(CHAT)  # waits for the running compaction
    assert a.summary(CHAT) == memo("summary 1")


async def test_compaction_stops_after_its_time_limit_and_keeps_the_previous_summary(transcript: Transcript, clock):
    summarizer = BlockedSummarizer()  # never released
    a, _ = make(transcript, clock, summarizer, summary_timeout=0.05)
    await fill(a, 3)
    await a.maintain(CHAT)  # returns once the limit stopped it
    assert summarizer.calls == 1 and summarizer.finished == 0  # stopped in the first attempt
    assert a.summary(CHAT) is None and not a.memory.store.path(CHAT).exists()
    assert await a.ask(CHAT, "still fine?")


async def test_shutdown_cancels_a_compaction_and_nothing_is_written(transcript: Transcript, clock):
    summarizer = BlockedSummarizer()
    a, _ = make(transcript, clock, summarizer)
    await fill(a, 3)
    await a.maintain(CHAT, wait=False)
    await summarizer.entered.wait()
    await a.aclose()
    summarizer.release.set()
    await asyncio.sleep(0)
    assert not a.memory.store.path(CHAT).exists()
    assert list(a.memory.store.dir.glob(".*.tmp")) == []


async def test_reset_cancels_the_chats_compaction_first(transcript: Transcript, clock):
    summarizer = BlockedSummarizer()
    a, _ = make(transcript, clock, summarizer)
    await fill(a, 3)
    await a.maintain(CHAT, wait=False)
    await summarizer.entered.wait()
    name = await asyncio.wait_for(a.reset(CHAT), 60)  # would wait for the stuck summarizer if not cancelled
    assert name is not None and a.summary(CHAT) is None and not a.memory.store.path(CHAT).exists()


async def test_one_compaction_per_chat_at_a_time(transcript: Transcript, clock):
    summarizer = BlockedSummarizer()
    a, _ = make(transcript, clock, summarizer)
    await fill(a, 3)
    for _ in range(5):
        await a.maintain(CHAT, wait=False)
    await summarizer.entered.wait()
    summarizer.release.set()
    await a.maintain(CHAT)
    assert summarizer.calls == 1


async def test_summary_usage_is_charged_to_the_user_who_caused_it(transcript: Transcript, clock):
    spent: list[Spend] = []
    model = FakeModel(validate=validate)

    class Reporting:
        name = "sum"

        async def __call__(self, previous, messages) -> str:
            from bot.core.upkeep import payer

            owner = payer.get()
            a.spend(owner[0], owner[1], "summary", "sum", Usage(100, 10))
            return memo("s")

    a = Assistant(
        transcript=transcript, model=model, now=clock, summarizer=Reporting(),
        summary_budget=Budget(trigger_messages=4, keep_messages=2), on_spend=spent.append,
    )  # fmt: skip
    for i in range(3):
        await a.ask(CHAT, f"q{i}")
    await a.maintain(CHAT, user_id=555)
    kinds = [(s.kind, s.user_id) for s in spent]
    assert kinds[-1] == ("summary", 555) and kinds.count(("answer", None)) == 3


async def test_the_wired_summarizer_charges_the_user_of_the_compacted_chat(fake_anthropic, monkeypatch, data_dir):
    from bot.claude.summarizer import SYSTEM_MARK
    from bot.config import load_settings
    from bot.wiring import make_assistant
    from tests.fakes.anthropic_server import Text, last_user_text

    def claude(body):
        if SYSTEM_MARK in body["system"][0]["text"]:
            return Text(memo("wired"), usage={"input_tokens": 611, "output_tokens": 73})
        return Text(f"echo: {last_user_text(body)}")

    fake_anthropic.default = claude
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "DATA_DIR": str(data_dir), "SUMMARY_TRIGGER_MESSAGES": "4",
           "SUMMARY_KEEP_MESSAGES": "2", "ANTHROPIC_MAX_RETRIES": "0", "RECALL_MEANING": "off"}  # fmt: skip
    spent: list[Spend] = []
    a = make_assistant(load_settings(env, need_telegram=False), on_spend=spent.append)
    for i in range(3):
        await a.ask(CHAT, Question(f"q{i}", user_id=42))
    await a.maintain(CHAT, user_id=42)
    await a.model.aclose()
    assert a.summary(CHAT) == memo("wired")
    summary = [s for s in spent if s.kind == "summary"]
    assert len(summary) == 1 and summary[0].user_id == 42 and summary[0].chat_id == str(CHAT)
    assert (summary[0].usage.input_tokens, summary[0].usage.output_tokens) == (611, 73)
    assert [s.user_id for s in spent if s.kind == "answer"] == [42, 42, 42]
