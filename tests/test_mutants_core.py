"""The tool loop's newest paths, each pinned by a test that fails when the code is broken on purpose
(issue 33; the changes are in scripts/mutations.toml): a tool call cut by the context window is
never run, and a round that searched the web and called a tool stores no server blocks."""

from __future__ import annotations

import json

import pytest

from bot.claude.model import CONTEXT_FULL, FakeModel, ModelError, Reply
from bot.core.ask import Assistant
from memory.transcript import Transcript
from tests.helpers import stored

SEARCH_ID = "srvtoolu_01"


def remember_call(text: str, call_id: str = "toolu_01") -> dict:
    return {"type": "tool_use", "id": call_id, "name": "remember", "input": {"text": text}}


async def test_a_tool_call_cut_by_the_context_window_is_never_run(
    assistant: Assistant, fake_model: FakeModel, data_dir
):
    cut = Reply("", stop_reason=CONTEXT_FULL, content=(remember_call("차 번호는 12가 3456"),))
    fake_model.queue(cut, "기억했어요.")
    with pytest.raises(ModelError) as e:
        await assistant.ask(1, "내 차 번호 기억해")
    assert e.value.kind == "context_full"  # the user is told the conversation no longer fits
    assert assistant.list_facts(1) == []  # the cut call never ran
    assert stored(data_dir, 1) == [] and len(fake_model.calls) == 1  # nothing stored, nothing asked again


def searched_then_called() -> Reply:
    """One reply that searched the web (server blocks, a cited text) and then called a client tool."""
    url = "https://example.kr/dentist"
    blocks = (
        {"type": "server_tool_use", "id": SEARCH_ID, "name": "web_search", "input": {"query": "치과 휴무"}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": SEARCH_ID,
            "content": [{"type": "web_search_result", "url": url, "title": "치과", "encrypted_content": "ENC1"}],
        },
        {
            "type": "text",
            "text": "일요일은 쉬어요.",
            "citations": [
                {
                    "type": "web_search_result_location",
                    "url": url,
                    "title": "치과",
                    "cited_text": "일요일 휴무",
                    "encrypted_index": "IDX1",
                }
            ],
        },
        remember_call("치과는 일요일 휴무"),
    )
    return Reply("일요일은 쉬어요.", stop_reason="tool_use", content=blocks)


async def test_a_round_with_a_search_and_a_tool_stores_no_server_blocks(
    assistant: Assistant, fake_model: FakeModel, transcript: Transcript, data_dir
):
    fake_model.queue(searched_then_called(), "기억해 둘게요.")
    await assistant.ask(1, "우리 치과 언제 쉬는지 찾아서 기억해 줘")
    rows = stored(data_dir, 1)
    assert [r["role"] for r in rows] == ["user", "assistant", "user", "assistant"]
    kinds = [b["type"] for b in rows[1]["content"]]
    assert kinds == ["text", "tool_use"]  # the tool round as the user saw it, without the search's blocks
    text = json.dumps(rows, ensure_ascii=False)
    assert SEARCH_ID not in text and "ENC1" not in text and "IDX1" not in text and "citations" not in text
    assert assistant.list_facts(1)  # the tool did run
    # the next question replays the stored turn: nothing the API issued for one conversation only
    fake_model.queue("네.")
    await assistant.ask(1, "고마워")
    replayed = json.dumps(fake_model.calls[-1].messages, ensure_ascii=False)
    assert "server_tool_use" not in replayed and "ENC1" not in replayed


async def test_a_turn_paused_again_and_again_is_given_up_after_max_pauses(
    assistant: Assistant, fake_model: FakeModel, data_dir
):
    """pause_turn is continued (the paused content sent back) at most MAX_PAUSES times; then the
    question fails and nothing is stored, instead of paying for continuation after continuation."""
    from bot.core.toolloop import MAX_PAUSES

    def paused(n: int) -> Reply:
        use = {"type": "server_tool_use", "id": f"srvtoolu_{n:02d}", "name": "web_search", "input": {"query": "뉴스"}}
        return Reply("", stop_reason="pause_turn", content=(use,))

    fake_model.queue(*[paused(n) for n in range(3 * MAX_PAUSES)])
    with pytest.raises(ModelError) as e:
        await assistant.ask(1, "최신 뉴스 찾아 줘")
    assert e.value.kind == "server"
    assert len(fake_model.calls) == MAX_PAUSES + 1 and stored(data_dir, 1) == []


def test_at_most_six_sources_are_listed_and_stored_and_the_rest_counted():
    from bot.core.sources import HEADER, MAX_SOURCES, WebTrail, with_sources

    trail = WebTrail()
    for n in range(MAX_SOURCES + 2):
        trail.add_source(f"https://site{n}.example.kr/", f"Site {n}")
    shown = with_sources("답이에요.", trail)
    listing = shown.split(HEADER, 1)[1].strip().splitlines()
    assert listing[0].startswith("1. [Site 0]") and listing[MAX_SOURCES - 1].startswith(f"{MAX_SOURCES}. [Site 5]")
    assert listing[MAX_SOURCES:] == ["… +2"]
    assert [s["title"] for s in trail.stored()] == [f"Site {n}" for n in range(MAX_SOURCES)]
