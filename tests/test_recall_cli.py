"""``python -m bot search``: JSON lines over a chat's whole history, without keys, never writing transcripts."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import search as search_cli
from bot.config import ConfigError, load_settings
from memory.transcript import Transcript
from tests.conftest import ROOT


def msg(role: str, content: str, at: str = "2023-05-08T13:56:00", **extra):
    return {"role": role, "content": content, "at": at, **extra}


@pytest.fixture
def chat(data_dir: Path) -> Transcript:
    t = Transcript(data_dir)
    t.append("conv1", [msg("user", "Caroline: I went to a LGBTQ support group yesterday", name="Caroline"),
                       msg("assistant", "Melanie: That's wonderful, Caroline!", name="Melanie")])  # fmt: skip
    t.archive("conv1", "20230601T000000Z")
    t.append("conv1", [msg("user", "Caroline: I'm researching adoption agencies now", at="2023-06-09T10:00:00"),
                       msg("assistant", "Melanie: Researching adoption?", at="2023-06-09T10:01:00")])  # fmt: skip
    return t


def digest(data_dir: Path) -> dict[str, str]:
    chats = data_dir / "chats"
    return {str(p.relative_to(chats)): hashlib.sha256(p.read_bytes()).hexdigest() for p in chats.rglob("*.jsonl")}


def run(capsys, *args: str) -> tuple[int, list[dict], str]:
    rc = search_cli.main(list(args))
    out, err = capsys.readouterr()
    return rc, [json.loads(line) for line in out.splitlines()], err


def test_prints_best_matches_as_json_lines(chat, data_dir, capsys):
    rc, rows, _ = run(capsys, "--chat", "conv1", "support", "group")
    assert rc == 0
    assert rows[0] == {"line": 1, "at": "2023-05-08T13:56:00", "role": "user",
                       "content": "Caroline: I went to a LGBTQ support group yesterday", "name": "Caroline",
                       "file": "conv1.20230601T000000Z.jsonl", "score": rows[0]["score"]}  # fmt: skip
    rc, rows, _ = run(capsys, "--chat", "conv1", "--limit", "1", "what", "did", "Caroline", "research?")
    assert rc == 0 and len(rows) == 1
    assert rows[0]["line"] == 1 and "file" not in rows[0] and "adoption" in rows[0]["content"]


def test_stdin_answers_one_line_per_query(chat, data_dir, capsys, monkeypatch):
    import io

    queries = ["When did Caroline go to the support group?", "", "hi", '"*NEAR( OR', "adoption agencies"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(queries) + "\n"))
    rc, rows, _ = run(capsys, "--chat", "conv1", "--stdin", "--limit", "10")
    assert rc == 0
    assert [r["query"] for r in rows] == queries
    assert rows[0]["results"][0]["file"] == "conv1.20230601T000000Z.jsonl" and rows[0]["results"][0]["line"] == 1
    assert rows[1]["results"] == [] and rows[2]["results"] == [] and rows[3]["results"] == []
    assert {r["line"] for r in rows[4]["results"]} == {1, 2}
    assert all(len(r["results"]) <= 10 for r in rows)


def test_builds_the_index_and_never_changes_a_transcript(chat, data_dir, capsys):
    before = digest(data_dir)
    assert not (data_dir / "recall.sqlite3").exists()
    assert run(capsys, "--chat", "conv1", "adoption")[0] == 0
    assert (data_dir / "recall.sqlite3").exists()
    assert digest(data_dir) == before


@pytest.mark.parametrize(
    "args, message",
    [
        (["--chat", "nobody", "x"], "no chat 'nobody'"),
        (["--chat", "../etc", "x"], "invalid chat id"),
        (["--chat", "conv1"], "nothing to search for"),
        (["--chat", "conv1", "--stdin", "x"], "not both"),
        (["--chat", "conv1", "--limit", "0", "x"], "at least 1"),
        (["--chat", "conv1", "--limit", "many", "x"], "not a whole number"),
        (["x"], "--chat"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(chat, capsys, args, message):
    rc, rows, err = run(capsys, *args)
    assert rc == 2 and rows == []
    assert message in err and len(err.strip().splitlines()) == 1


def test_data_dir_option_and_env(chat, data_dir, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "elsewhere"))
    assert run(capsys, "--chat", "conv1", "adoption")[0] == 2
    assert run(capsys, "--chat", "conv1", "--data-dir", str(data_dir), "adoption")[0] == 0
    monkeypatch.delenv("DATA_DIR")
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(f"DATA_DIR={data_dir}\n")
    assert run(capsys, "--chat", "conv1", "adoption")[0] == 0


def test_runs_as_a_module_without_keys_and_without_anthropic_or_telegram(chat, data_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "TELEGRAM_BOT_TOKEN")}
    code = (
        "import sys, runpy; sys.argv = ['bot', 'search', '--chat', 'conv1', '--limit', '1', 'agencies'];"
        "from bot.__main__ import main; rc = main(sys.argv[1:]);"
        "assert 'anthropic' not in sys.modules and 'telegram' not in sys.modules, 'heavy import';"
        "sys.exit(rc)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**env, "DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["line"] == 1


def test_a_bad_recall_meaning_is_refused_like_the_bot_does(chat, data_dir, tmp_path):
    """RECALL_MEANING is read by the bot's own strict parser: a value other than on/off is an error (exit 2,
    the bot's message), never recall by meaning turned on by surprise; nothing is built."""
    with pytest.raises(ConfigError) as by_the_bot:
        load_settings({"ANTHROPIC_API_KEY": "k", "TELEGRAM_BOT_TOKEN": "1:x", "RECALL_MEANING": "maybe"})
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "TELEGRAM_BOT_TOKEN")}
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "search", "--chat", "conv1", "agencies"], cwd=tmp_path,
        env={**env, "DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT), "RECALL_MEANING": "maybe"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"error: {by_the_bot.value}\n" == "error: RECALL_MEANING must be on or off, got 'maybe'\n"
    assert not (data_dir / "recall.sqlite3").exists()


@pytest.mark.parametrize(
    "value, in_dotenv, on",
    [("off", False, False), ("OFF", False, False), ("no", False, False), ("0", False, False),
     ("off", True, False), ("on", False, True), ("yes", True, True), (None, False, True)],
)  # fmt: skip
def test_recall_meaning_off_is_honoured(chat, capsys, monkeypatch, tmp_path, value, in_dotenv, on):
    asked: list[object] = []
    monkeypatch.setattr(search_cli.meaning, "load", lambda on, **_: asked.append(on))  # no model: by words
    monkeypatch.delenv("RECALL_MEANING")
    monkeypatch.chdir(tmp_path)  # ./.env: the CLI reads it when the environment does not say
    if value is not None:
        if in_dotenv:
            (tmp_path / ".env").write_text(f"RECALL_MEANING={value}\n")
        else:
            monkeypatch.setenv("RECALL_MEANING", value)
    rc, rows, _ = run(capsys, "--chat", "conv1", "adoption")
    assert rc == 0 and rows
    assert asked == [on]
