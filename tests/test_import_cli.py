"""``python -m bot import`` / ``export`` and the terminal chat's /export, in this process (bot.cli.transfer)."""

from __future__ import annotations

import io
import json

from bot.cli.transfer import export_here, export_main, import_main
from memory.access import AccessStore
from memory.imports import import_file
from tests.export_samples import claude_conversation, gpt_edited, write_json


def test_the_owners_chat_is_the_default_and_without_one_the_command_says_so(tmp_path, data_dir, monkeypatch, capsys):
    monkeypatch.delenv("OWNER_ID", raising=False)
    monkeypatch.setenv("ALLOWED_USERS", "")
    monkeypatch.chdir(tmp_path)  # no .env here
    export = write_json(tmp_path / "conversations.json", [gpt_edited()])
    assert import_main([str(export)]) == 2
    assert "no owner yet" in capsys.readouterr().err
    access = AccessStore(data_dir).load()
    access.set_owner(31337, "2026-01-01T00:00:00+00:00")
    access.save()
    assert import_main([str(export)]) == 0
    assert len(list((data_dir / "chats" / "archive").glob("31337.*-imported-chatgpt-0001.jsonl"))) == 1
    monkeypatch.setenv("OWNER_ID", "555")
    assert import_main([str(export), "--chat", "group-1"]) == 0  # --chat wins
    assert len(list((data_dir / "chats" / "archive").glob("group-1.*.jsonl"))) == 1
    assert import_main([str(tmp_path / "missing.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_export_to_a_file_and_to_the_terminal(tmp_path, data_dir, monkeypatch, capsys):
    monkeypatch.setenv("OWNER_ID", "555")
    write_json(tmp_path / "c.json", [claude_conversation()])
    assert import_main([str(tmp_path / "c.json")]) == 0
    out = tmp_path / "history.md"
    assert export_main(["--format", "md", "--output", str(out)]) == 0
    assert "## Imported from Claude · 2024-03-05" in out.read_text() and "3 messages written" in capsys.readouterr().err
    assert export_main([]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["src_id"] for r in rows] == ["cl-1-m1", "cl-1-m2", "cl-1-m3"]
    said = export_here(data_dir, "555", f"/export md {tmp_path / 'mine.md'}", "en", io.StringIO())
    assert said == f"Wrote 3 messages to {tmp_path / 'mine.md'}." and (tmp_path / "mine.md").read_text().startswith(
        "# Chat 555"
    )
    assert export_here(data_dir, "nobody", "/export", "en", io.StringIO()) == "No messages to export."


def test_the_terminal_chats_export_command(assistant, tmp_path, data_dir):
    from tests.test_cli import run_chat

    import_file(write_json(tmp_path / "c.json", [claude_conversation()]), data_dir, "local")
    target = tmp_path / "out.md"
    rc, out, err = run_chat(assistant, f"/export md {target}", "/export", "/quit", lang="en")
    assert rc == 0 and err == ""
    assert f"Wrote 3 messages to {target}." in out and "## Imported from Claude" in target.read_text()
    assert '"src_id":"cl-1-m2"' in out and "Wrote 3 messages to stdout." in out  # the JSON lines on the screen
