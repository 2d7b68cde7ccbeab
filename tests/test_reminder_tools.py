"""The reminder tools through ask(): Claude sets, lists and cancels reminders; bad input is an is_error result."""

from datetime import UTC, datetime

from bot.claude.model import FakeModel, tool_call
from bot.core.ask import Assistant, Question
from bot.tools import ToolContext
from bot.tools.reminders import reminder_tools
from memory.reminders import ReminderStore
from memory.transcript import Transcript
from memory.turns import is_complete

CHAT = 123456789  # a Telegram chat id


def make(transcript: Transcript, model: FakeModel, clock, store: ReminderStore, **kw) -> Assistant:
    return Assistant(transcript=transcript, model=model, now=clock, tools=reminder_tools(store, "Asia/Seoul", **kw))


def results(model: FakeModel, call: int = 1) -> list[dict]:
    """The tool_result blocks the model got in request ``call``."""
    return [b for b in model.calls[call].messages[-1]["content"] if b.get("type") == "tool_result"]


async def test_set_reminder_resolves_against_the_injected_clock_and_is_stored(transcript, fake_model, clock, data_dir):
    store = ReminderStore(data_dir)
    assistant = make(transcript, fake_model, clock, store)
    fake_model.queue(
        tool_call("set_reminder", {"at": "2026-11-30T09:00:00+09:00", "text": "약 먹기"}),
        "내일 아침 9시에 알려 드릴게요.",
    )
    question = Question("내일 아침 9시에 약 먹으라고 알려 줘", meta={"thread_id": 42}, user_id=CHAT)
    answer = await assistant.ask(CHAT, question)
    assert answer.tool_calls == ("set_reminder",)
    # the request carried the current Korean time the model resolves "내일 아침 9시" against
    assert "지금은 2026년 11월 29일 (일) 23:05 (한국 시각)이다." in fake_model.calls[0].system_text
    assert {t["name"] for t in fake_model.calls[0].tools} >= {"set_reminder", "list_reminders", "cancel_reminder"}
    (result,) = results(fake_model)
    assert not result.get("is_error")
    assert result["content"] == 'reminder 1 set for 2026년 11월 30일 (월) 09:00 (한국 시각), in 9 h 55 min: "약 먹기"'
    (r,) = store.pending(CHAT)
    assert r.at == datetime(2026, 11, 30, 0, 0, tzinfo=UTC) and r.text == "약 먹기"
    assert r.thread_id == 42 and r.chat_id == str(CHAT) and r.via == "telegram" and r.user_id == CHAT
    assert is_complete([e.data for e in transcript.read(CHAT)])


async def test_bad_reminder_input_is_an_error_result_and_stores_nothing(transcript, fake_model, clock, data_dir):
    store = ReminderStore(data_dir)
    refusals: list[str] = []

    def may_create(ctx: ToolContext) -> str | None:
        refusals.append(ctx.chat_id)
        return "the daily limit is reached" if ctx.meta.get("user_id") == 99 else None

    assistant = make(transcript, fake_model, clock, store, may_create=may_create)
    cases = [
        ({"at": "2026-11-30T09:00:00", "text": "x"}, "has no UTC offset"),
        ({"at": "2026-11-29T22:00:00+09:00", "text": "x"}, "is in the past: it is now 2026-11-29T23:05+09:00"),
        ({"at": "2027-12-01T09:00:00+09:00", "text": "x"}, "more than a year ahead"),
        ({"at": "내일 아침", "text": "x"}, "not an ISO-8601 date-time"),
        ({"at": 20261130, "text": "x"}, "must be an ISO-8601 date-time"),
        ({"at": "2026-11-30T09:00:00+09:00"}, "'text' must be a string"),
        ({"at": "2026-11-30T09:00:00+09:00", "text": "   "}, "the reminder text is empty"),
        ({"at": "2026-11-30T09:00:00+09:00", "text": "y" * 1001}, "the limit is 1000"),
    ]
    for value, why in cases:
        fake_model.queue(tool_call("set_reminder", value), "다시 해 볼게요.")
        await assistant.ask(CHAT, "알림 맞춰 줘")
        (result,) = results(fake_model, len(fake_model.calls) - 1)
        assert result.get("is_error") is True and why in result["content"], (value, result)
    # over the user's limits: refused by the hook (pending ones are still delivered elsewhere)
    fake_model.queue(tool_call("set_reminder", {"at": "2026-11-30T09:00:00+09:00", "text": "x"}), "안 돼요.")
    await assistant.ask(CHAT, Question("알림", meta={"user_id": 99}))
    (result,) = results(fake_model, len(fake_model.calls) - 1)
    assert result.get("is_error") and "no new reminder can be set now: the daily limit is reached" in result["content"]
    assert refusals == [str(CHAT)]  # the hook is asked only once the input is valid
    # a conversation that is no Telegram chat (the terminal's "local") cannot be reminded
    fake_model.queue(tool_call("set_reminder", {"at": "2026-11-30T09:00:00+09:00", "text": "x"}), "안 돼요.")
    await assistant.ask("local", "알림")
    (result,) = results(fake_model, len(fake_model.calls) - 1)
    assert result.get("is_error") and "not a Telegram chat" in result["content"]
    assert store.all() == []


async def test_list_and_cancel_reminders(transcript, fake_model, clock, data_dir):
    store = ReminderStore(data_dir)
    assistant = make(transcript, fake_model, clock, store)
    store.add(CHAT, datetime(2026, 12, 1, 1, 0, tzinfo=UTC), "치과")
    store.add(CHAT, datetime(2026, 11, 30, 0, 0, tzinfo=UTC), "약 먹기")
    store.add(555, datetime(2026, 11, 30, 0, 0, tzinfo=UTC), "another chat's")
    fake_model.queue(
        tool_call("list_reminders", {}), tool_call("cancel_reminder", {"id": "1"}), "치과 알림을 취소했어요."
    )
    await assistant.ask(CHAT, "알림 뭐 있어? 치과는 취소해 줘")
    (listed,) = results(fake_model, 1)
    assert listed["content"] == (
        "2 pending reminders in this chat ([id] time (한국 시각) — text), soonest first:\n"
        "[2] 2026년 11월 30일 (월) 09:00 — 약 먹기\n"
        "[1] 2026년 12월 1일 (화) 10:00 — 치과"
    )
    (cancelled,) = results(fake_model, 2)
    assert cancelled["content"] == 'reminder 1 (2026년 12월 1일 (화) 10:00) cancelled: "치과"'
    assert [r.text for r in store.pending(CHAT)] == ["약 먹기"]
    fake_model.queue(tool_call("cancel_reminder", {"id": "3"}), "그건 없어요.")  # another chat's id
    await assistant.ask(CHAT, "3번 취소")
    (wrong,) = results(fake_model, 4)
    assert wrong.get("is_error") and "no pending reminder with id '3'" in wrong["content"]
    assert [r.text for r in store.pending(555)] == ["another chat's"]
