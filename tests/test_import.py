"""Importing exports of ChatGPT, Claude and Telegram Desktop (memory.imports): what is kept, bad files,
importing again, and the history found by recall and written out again."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from memory.content import MAX_REPLY_CHARS
from memory.imports import history_jsonl, history_markdown, import_file
from memory.imports.formats import FORWARDED, IMAGE, Replies
from tests.export_samples import (
    T0,
    claude_conversation,
    gpt_edited,
    gpt_with_tools,
    lines,
    tg_account,
    tg_chat,
    tg_message,
    write_json,
    write_zip,
)

CHAT = "5550001"


def archive(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "chats" / "archive").glob(f"{CHAT}.*.jsonl"))


def conversations(data_dir: Path) -> dict[str, list[dict]]:
    """The imported lines of the chat by conversation, in the order of the files."""
    out: dict[str, list[dict]] = {}
    for path in archive(data_dir):
        for m in lines(path):
            out.setdefault(m["src_conv"], []).append(m)
    return out


def contents(said: list[dict]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in said]


def test_chatgpt_keeps_the_branch_shown_and_its_dates(tmp_path, data_dir):
    export = write_json(tmp_path / "conversations.json", [gpt_edited(), gpt_with_tools()])
    report = import_file(export, data_dir, CHAT)
    assert report.error is None and report.source == "chatgpt"
    assert (report.conversations, report.messages, report.skipped) == (2, 4, 0)
    (volume,) = archive(data_dir)  # one file for the conversations of one source
    assert volume.name.startswith(f"{CHAT}.") and volume.name.endswith("-imported-chatgpt-0001.jsonl")
    jeju, weather = conversations(data_dir).values()
    assert jeju[0]["title"] == "Jeju trip" and "title" not in jeju[1]
    assert contents(jeju) == [
        ("user", f"{IMAGE}\nPlan a trip to Jeju for my parents"),  # the edited question, its image a marker
        ("assistant", "Jeju: visit Seongsan Ilchulbong at sunrise"),  # the regenerated answer the user kept
    ]
    assert [m["at"] for m in jeju] == ["2023-11-14T22:13:50+00:00", "2023-11-14T22:14:10+00:00"]
    assert contents(weather) == [
        ("user", "What is the weather in Seoul?"),
        ("assistant", "It is sunny in Seoul, 21°C."),
    ]
    assert (report.first, report.last) == ("2023-11-14T22:13:50+00:00", "2023-11-15T22:13:25+00:00")
    assert not (data_dir / "chats" / f"{CHAT}.jsonl").exists()  # the live transcript is never written


def test_claude_text_blocks_only_and_attachments_as_markers(tmp_path, data_dir):
    export = write_zip(tmp_path / "data-2024.zip", "conversations.json", [claude_conversation()],
                       **{"users.json": "[]", "projects.json": "[]"})  # fmt: skip
    report = import_file(export, data_dir, CHAT)
    assert report.error is None and report.source == "claude" and report.messages == 3
    (conv,) = conversations(data_dir).values()
    assert contents(conv) == [
        ("user", "How long should sourdough proof?\n[file: starter.jpg]"),
        ("assistant", "Let me check.\nProof it 4 to 6 hours at room temperature."),  # no tool use, no result
        ("user", "Thanks! (older export: text only)"),
    ]
    assert conv[0]["at"] == "2024-03-05T09:00:01+00:00" and conv[0]["src_id"] == "cl-1-m1"


def test_telegram_chat_senders_entities_forwards_and_no_service_messages(tmp_path, data_dir):
    export = write_json(tmp_path / "result.json", tg_chat())
    report = import_file(export, data_dir, CHAT)
    assert report.error is None and report.source == "telegram"
    (said,) = conversations(data_dir).values()
    assert [m["content"] for m in said] == [
        "Mom: Dinner on Saturday at the https://example.com/place",
        "Minsu: I'll bring the kimchi",
        f"Minsu: {FORWARDED} (Grandma) Grandma's recipe",
        "Mom: [sticker 👍]",
    ]
    assert {m["role"] for m in said} == {"user"} and [m["name"] for m in said] == ["Mom", "Minsu", "Minsu", "Mom"]
    assert said[0]["at"] == "2023-11-14T22:14:20+00:00"  # from date_unixtime, not the local "date"


def test_telegram_whole_account_a_conversation_per_chat(tmp_path, data_dir):
    export = write_json(tmp_path / "result.json", tg_account([tg_chat(1, "Family"), tg_chat(2, "Work", T0 + 999)]))
    report = import_file(export, data_dir, CHAT)
    assert (report.conversations, report.messages, report.error) == (2, 8, None)
    family, work = conversations(data_dir).values()
    assert (family[0]["title"], work[0]["title"], work[0]["src_id"]) == ("Family", "Work", "2/2")


def test_importing_again_adds_nothing_and_a_longer_export_adds_only_the_new(tmp_path, data_dir):
    first = write_json(tmp_path / "a.json", [gpt_edited()])
    assert import_file(first, data_dir, CHAT).messages == 2
    before = {p.name: p.read_bytes() for p in archive(data_dir)}
    again = import_file(first, data_dir, CHAT)
    assert (again.messages, again.present, again.conversations) == (0, 2, 0)
    assert {p.name: p.read_bytes() for p in archive(data_dir)} == before
    chat = tg_chat()
    write_json(tmp_path / "r.json", chat)
    assert import_file(tmp_path / "r.json", data_dir, CHAT).messages == 4
    chat["messages"].append(tg_message(8, T0 + 400, "Minsu", "See you Saturday"))  # the chat went on
    later = import_file(write_json(tmp_path / "r2.json", chat), data_dir, CHAT)
    assert (later.messages, later.present, later.conversations) == (1, 4, 1)
    tg = [m["content"] for m in conversations(data_dir)["4242"]]
    assert tg[-2:] == ["Mom: [sticker 👍]", "Minsu: See you Saturday"] and len(tg) == 5


def test_a_malformed_conversation_is_left_out_and_named(tmp_path, data_dir):
    broken = gpt_with_tools("c-broken")
    del broken["mapping"]["a1"]  # current_node points at a node that is not there
    no_mapping = {"title": "x", "id": "c-x", "current_node": "n"}
    export = write_json(tmp_path / "conversations.json", [gpt_edited(), broken, no_mapping])
    report = import_file(export, data_dir, CHAT)
    assert (report.conversations, report.skipped, report.error) == (1, 2, None)
    assert "conversation 2" in report.problems[0] and "'a1' is missing" in report.problems[0]
    assert "conversation 3" in report.problems[1] and "mapping" in report.problems[1]
    assert list(conversations(data_dir)) == ["c-jeju"]


def test_a_claude_message_with_bad_content_skips_that_conversation(tmp_path, data_dir):
    bad = claude_conversation("cl-bad")
    bad["chat_messages"][0]["content"] = "not a list"
    bad["chat_messages"][0]["text"] = None
    report = import_file(write_json(tmp_path / "c.json", [bad, claude_conversation("cl-ok")]), data_dir, CHAT)
    assert (report.conversations, report.skipped) == (1, 1) and "'content' is not a list" in report.problems[0]


def test_a_telegram_chat_with_a_malformed_message_is_not_imported(tmp_path, data_dir):
    good, bad = tg_chat(1, "Family"), tg_chat(2, "Work")
    del bad["messages"][3]["date"], bad["messages"][3]["date_unixtime"]
    report = import_file(write_json(tmp_path / "result.json", tg_account([bad, good])), data_dir, CHAT)
    assert (report.conversations, report.skipped) == (1, 1)
    assert report.problems == ["chat 'Work': message 4 has no date"]
    assert list(conversations(data_dir)) == ["1"]
    assert not list((data_dir / "chats" / "archive").glob(".import-*"))  # the unsound chat's temp file is gone


def test_a_truncated_file_keeps_the_whole_conversations_before_the_cut(tmp_path, data_dir):
    text = json.dumps([gpt_edited("c1"), gpt_edited("c2"), gpt_with_tools()])
    cut = text.index('"c-tools"')  # inside the third conversation
    export = tmp_path / "conversations.json"
    export.write_text(text[:cut])
    report = import_file(export, data_dir, CHAT)
    assert report.conversations == 2 and report.error is not None and "cut short" in report.error
    assert list(conversations(data_dir)) == ["c1", "c2"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "empty"),
        (b"hello, world", "not JSON"),
        (b'{"name": "notes", "items": []}', "without Telegram's 'messages'"),
        (b'[{"question": 1}]', "not of ChatGPT or Claude"),
        (b"[]", "no conversations"),
        (b'[{"mapping": {}, "current_node": null, "id": "a", "title": "t"} {"x": 1}]', "expected ','"),
        (b"\xff\xfe[", "not UTF-8"),
        (b"PK\x03\x04garbage", "damaged zip"),
    ],
)
def test_a_file_that_is_not_an_export_gets_one_line_and_nothing_is_imported(tmp_path, data_dir, content, says):
    path = tmp_path / "upload.json"
    path.write_bytes(content)
    report = import_file(path, data_dir, CHAT)
    assert report.error is not None and says in report.error and "\n" not in report.error
    assert report.messages == 0 and archive(data_dir) == []


def test_a_zip_without_an_export_in_it(tmp_path, data_dir):
    report = import_file(write_zip(tmp_path / "x.zip", "notes.json", []), data_dir, CHAT)
    assert report.error == "the zip holds no conversations.json or result.json"


def test_imported_history_is_found_by_recall_with_its_date(tmp_path, data_dir):
    from memory.recall import RecallIndex, hit_lines

    import_file(write_json(tmp_path / "c.json", [gpt_edited()]), data_dir, CHAT)
    with RecallIndex(data_dir, build_in="thread") as index:
        hits = index.search(CHAT, "Seongsan sunrise", 3)
    assert hits and hits[0].content == "Jeju: visit Seongsan Ilchulbong at sunrise"
    assert hits[0].file is not None and hits[0].file.endswith("-imported-chatgpt-0001.jsonl")
    assert hit_lines(hits[:1], "Asia/Seoul")[0].startswith("2023-11-15 07:14 assistant:")


def test_export_gives_the_whole_history_imported_parts_included(tmp_path, data_dir):
    from memory.transcript import Transcript

    import_file(write_json(tmp_path / "c.json", [claude_conversation()]), data_dir, CHAT)
    import_file(write_json(tmp_path / "r.json", tg_chat()), data_dir, CHAT)
    today = [
        {"role": "user", "content": "today's question", "at": "2026-12-01T10:00:00+09:00"},
        {"role": "assistant", "content": "today's answer"},
    ]
    Transcript(data_dir).append(CHAT, today)
    out = io.StringIO()
    assert history_jsonl(data_dir, CHAT, out) == 9
    rows = [json.loads(x) for x in out.getvalue().splitlines()]
    assert rows[0]["src"] == "claude" and rows[0]["at"].startswith("2024-03-05")  # by file: claude first
    assert rows[3]["content"] == "Mom: Dinner on Saturday at the https://example.com/place"
    assert rows[-2:] == today
    md = io.StringIO()
    history_markdown(data_dir, CHAT, md)
    text = md.getvalue()
    assert text.index("## Imported from Claude · 2024-03-05 · Sourdough") < text.index("## Imported from Telegram")
    assert text.index("## Imported from Claude") < text.index("## Current conversation")
    assert "**Mom** · 2023-11-14 22:14\n\nDinner on Saturday" in text


def test_a_full_volume_is_followed_by_a_new_one(tmp_path, data_dir, monkeypatch):
    from memory.imports import store

    monkeypatch.setattr(store, "VOLUME_BYTES", 1)  # every batch fills its volume
    monkeypatch.setattr(store, "COMMIT_BYTES", 1)  # every conversation is a batch
    import_file(write_json(tmp_path / "c.json", [gpt_edited("c1"), gpt_edited("c2")]), data_dir, CHAT)
    first, second = archive(data_dir)
    assert first.name.endswith("-imported-chatgpt-0001.jsonl") and second.name.endswith("-imported-chatgpt-0002.jsonl")
    assert {m["src_conv"] for m in lines(first)} == {"c1"} and {m["src_conv"] for m in lines(second)} == {"c2"}
    assert import_file(tmp_path / "c.json", data_dir, CHAT).present == 4  # both volumes are read for the ids


def test_conversations_in_one_volume_are_separate_sessions_for_recall(tmp_path, data_dir):
    """The second conversation of a volume starts earlier than the first ended: a new session, so recall's
    context of a hit never pairs a question with another conversation's answer."""
    import sqlite3

    from memory.recall import RecallIndex

    later, earlier = gpt_edited("later", T0 + 7200), gpt_edited("earlier", T0)
    import_file(write_json(tmp_path / "c.json", [later, earlier]), data_dir, CHAT)
    with RecallIndex(data_dir, build_in="thread") as index:
        index.sync(CHAT)
    with sqlite3.connect(data_dir / "recall.sqlite3") as conn:
        sessions = [r[0] for r in conn.execute("SELECT session FROM turns ORDER BY id")]
    assert len(sessions) == 4 and sessions[0] == sessions[1] != sessions[2] == sessions[3]


def test_progress_is_reported_as_the_file_is_read(tmp_path, data_dir):
    seen: list[tuple[int, int, int]] = []
    export = write_json(tmp_path / "c.json", [gpt_edited(f"c{i}", T0 + i * 86400) for i in range(5)])
    report = import_file(
        export, data_dir, CHAT, every=0, progress=lambda r: seen.append((r.bytes_read, r.read, r.messages))
    )
    assert [s[1] for s in seen] == [1, 2, 3, 4, 5, 5]  # after each conversation, then once at the end
    assert seen[-1] == (export.stat().st_size, 5, 10) and report.bytes_read == report.total_bytes


def test_messages_without_a_time_take_the_one_before_and_a_dead_imports_leftovers_go(tmp_path, data_dir):
    conv = gpt_edited()
    conv["mapping"]["a2b"]["message"]["create_time"] = None
    folder = data_dir / "chats" / "archive"
    folder.mkdir(parents=True)
    (folder / ".import-999999999-1.tmp").write_text("half a conversation")  # no such process
    import_file(write_json(tmp_path / "c.json", [conv]), data_dir, CHAT)
    (jeju,) = conversations(data_dir).values()
    assert [m["at"] for m in jeju] == ["2023-11-14T22:13:50+00:00", "2023-11-14T22:13:50+00:00"]
    assert sorted(p.name for p in folder.iterdir()) == [archive(data_dir)[0].name]


def test_a_long_chat_spills_to_disk_and_arrives_whole(tmp_path, data_dir, monkeypatch):
    from memory.imports import store

    monkeypatch.setattr(store, "SPILL_CHARS", 200)  # a few messages in memory, the rest in a temporary file
    chat = tg_chat()
    chat["messages"] += [tg_message(100 + i, T0 + 1000 + i, "Minsu", f"line {i}") for i in range(50)]
    assert import_file(write_json(tmp_path / "r.json", chat), data_dir, CHAT).messages == 54
    said = [m["content"] for m in conversations(data_dir)["4242"]]
    assert said[:1] == ["Mom: Dinner on Saturday at the https://example.com/place"] and said[-1] == "Minsu: line 49"
    assert len(said) == 54 and not list((data_dir / "chats" / "archive").glob(".import-*"))


def test_a_telegram_reply_carries_what_it_answers_as_the_bot_stores_a_reply(tmp_path, data_dir):
    from bot.tg.references import Reference, with_reference

    chat, t = tg_chat(), T0 + 400
    chat["messages"] += [
        tg_message(8, t, "Mom", "How's the new flat?"),
        tg_message(9, t + 10, "Minsu", "brb"),
        tg_message(10, t + 20, "Minsu", "Quiet, with a park", reply_to_message_id=8),
        tg_message(11, t + 30, "Minsu", "Seen it", reply_to_message_id=8, reply_to_peer_id="channel77"),  # not ours
        tg_message(12, t + 40, "Mom", "Again?", reply_to_message_id=5),  # a sticker: its marker is quoted
        tg_message(13, t + 50, "Mom", "Why?", reply_to_message_id=6),  # a pin, a service message: nothing to quote
        tg_message(14, t + 60, "Minsu", "Story " * 200),
        tg_message(15, t + 70, "Mom", "Long one", reply_to_message_id=14),
        tg_message(16, t + 80, "Mom", "A park!", reply_to_message_id=10),
    ]
    import_file(write_json(tmp_path / "result.json", chat), data_dir, CHAT)
    (said,) = conversations(data_dir).values()
    by_id = {m["src_id"].split("/")[1]: m["content"] for m in said}
    assert by_id["10"] == with_reference("Minsu: Quiet, with a park", Reference(8, "Mom: How's the new flat?"))
    assert by_id["10"] == "> Mom: How's the new flat?\n\nMinsu: Quiet, with a park"
    assert by_id["16"] == "> Minsu: Quiet, with a park\n\nMom: A park!"  # what the reply said, not its quote
    assert (by_id["11"], by_id["13"]) == ("Minsu: Seen it", "Mom: Why?")
    assert by_id["12"] == "> Mom: [sticker 👍]\n\nMom: Again?"
    quote, _, own = by_id["15"].partition("\n\n")
    assert own == "Mom: Long one" and len(quote) <= MAX_REPLY_CHARS + 20 and "…[중략 / trimmed]…" in quote


def test_a_reply_quotes_only_the_latest_messages_of_its_chat():
    replies = Replies(window=2)
    for mid in (1, 2, 3):
        replies.keep(mid, f"Mom: message {mid}")
    assert replies.quoted({"reply_to_message_id": 1}, "Minsu: ok") == "Minsu: ok"  # forgotten
    assert replies.quoted({"reply_to_message_id": 3}, "Minsu: ok") == "> Mom: message 3\n\nMinsu: ok"
    assert replies.quoted({"reply_to_message_id": True}, "Minsu: ok") == "Minsu: ok"  # not an id


def test_recall_finds_an_imported_answer_by_the_question_it_replies_to(tmp_path, data_dir):
    from memory.recall import RecallIndex

    chat, t = tg_chat(), T0 + 400
    chat["messages"] += [
        tg_message(8, t, "Mom", "How's the new flat?"),
        *[tg_message(9 + i, t + 10 + i, "Mom", f"Did you eat? Call me, it's {i} o'clock") for i in range(3)],
        tg_message(12, t + 20, "Minsu", "Quiet, with a park nearby", reply_to_message_id=8),
        tg_message(13, t + 30, "Minsu", "Parking is a nightmare at work though"),
    ]
    import_file(write_json(tmp_path / "result.json", chat), data_dir, CHAT)
    with RecallIndex(data_dir, build_in="thread") as index:
        hits = index.search(CHAT, "What is Minsu's new flat like?", 2)
    assert hits and hits[0].content.endswith("Minsu: Quiet, with a park nearby")
