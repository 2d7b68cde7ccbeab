"""A group member's question carries no more of the group's past than the member may read with a command.

/summary, /search and /export are for the group's owner and admins; so the model is handed neither the
summary, nor related memories, nor the search_memory tool's results on a member's behalf. The recent
messages (what /history shows everyone) and the facts (/memory) are what a member's question carries.
"""

from __future__ import annotations

import json

import pytest

from bot.claude.model import FakeModel, tool_call
from bot.core.ask import Assistant
from bot.core.question import Question
from memory.recall import RecallIndex
from memory.transcript import Transcript
from tests.fakes.messages_rules import validate
from tests.helpers import recalled
from tests.summary_helpers import FakeSummarizer, small_budget

GROUP = -100_555
SECRET = "창고 암호는 4711"


@pytest.fixture
async def group(transcript: Transcript, clock, data_dir):
    """A group whose early turn (the admin's code) is in the summary and in the recall index, not the window."""
    model = FakeModel(validate=validate)
    index = RecallIndex(data_dir)
    budget = small_budget(trigger_messages=8, keep_messages=4)
    a = Assistant(transcript=transcript, model=model, now=clock, recall=index, max_messages=8, max_chars=8000,
                  summarizer=FakeSummarizer(), summary_budget=budget)  # fmt: skip
    await a.ask(GROUP, Question(f"Admin: {SECRET}"))
    for i in range(12):
        await a.ask(GROUP, Question(f"Admin: 잡담 {chr(0xAC00 + i)}"))
        await a.maintain(GROUP)
    assert "4711" in (a.summary(GROUP) or "")
    yield a, model
    index.close()


def request_text(model: FakeModel) -> str:
    call = model.calls[-1]
    return json.dumps([call.system, call.messages], ensure_ascii=False)


async def test_a_members_question_carries_no_summary_and_no_recall(group):
    a, model = group
    await a.ask(GROUP, Question("Member: 창고 암호 뭐였지?", may_manage=lambda: False))
    assert "4711" not in request_text(model) and recalled(model.calls[-1]) == ""
    assert "잡담" in request_text(model)  # the recent messages, as /history shows them to everyone
    # an admin asking the same gets both
    await a.ask(GROUP, Question("Admin: 창고 암호 뭐였지?", may_manage=lambda: True))
    assert "4711" in json.dumps(model.calls[-1].system, ensure_ascii=False)
    assert "4711" in recalled(model.calls[-1])


async def test_the_search_tool_refuses_a_member_as_search_does(group):
    a, model = group
    model.queue(tool_call("search_memory", {"query": "창고 암호"}), "못 찾아요")
    await a.ask(GROUP, Question("Member: 예전 대화에서 창고 암호 찾아 줘", may_manage=lambda: False))
    result = model.calls[-1].messages[-1]["content"][0]
    assert result["is_error"] and result["content"].startswith("refused: in this group only")
    assert "4711" not in request_text(model)
    model.queue(tool_call("search_memory", {"query": "창고 암호"}), "4711이에요")
    await a.ask(GROUP, Question("Admin: 예전 대화에서 창고 암호 찾아 줘", may_manage=lambda: True))
    assert "4711" in json.dumps(model.calls[-1].messages[-1]["content"], ensure_ascii=False)
