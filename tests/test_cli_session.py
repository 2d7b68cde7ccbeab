"""The terminal chat as people script it and live in it (issue 31): the real ``python -m bot chat``
on a pseudo-terminal (tests/test_cli_terminal.py's ``TerminalChat``) and on pipes, against the fake
Anthropic server. Every wait is for something on the screen or in the fake; deadlines only stop a
broken run.
"""

import json
import os
import threading
import time
from pathlib import Path

import pytest

from bot.cli import chat as cli_chat
from bot.cli import commands as cli_commands
from bot.cli import terminal as cli_terminal
from bot.cli import texts as cli_texts
from bot.texts import error_text
from tests.fakes.anthropic_server import Error, FakeAnthropic, Text, last_user_text
from tests.fakes.http import hang_guard
from tests.forkserver import run_bot
from tests.helpers import convo, stored
from tests.summary_helpers import memo
from tests.test_cli_process import is_summary_request
from tests.test_cli_terminal import TerminalChat, chat_env


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    d = tmp_path / "work"  # no developer's .env is read
    d.mkdir()
    return d


def echo_and_summaries(summary_gate: threading.Event | None = None):
    """Chat requests get ``echo: <question>``; summary requests a valid memo (held by ``summary_gate``)."""

    def script(body: dict) -> Text:
        if is_summary_request(body):
            return Text(memo(["요약됨"]), gate=summary_gate)
        return Text(f"echo: {last_user_text(body)}")

    return script


def summary_requests(fake: FakeAnthropic) -> int:
    return sum(1 for body in fake.requests if is_summary_request(body))


# -- 5: the summary is written in the background -------------------------------------------------
def test_the_next_prompt_never_waits_for_the_summary(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    held = threading.Event()  # the summarizer answers only once this is set
    fake_anthropic.default = echo_and_summaries(held)
    env = chat_env(data_dir, fake_anthropic, SUMMARY_TRIGGER_MESSAGES="4", SUMMARY_KEEP_MESSAGES="2")
    chat = TerminalChat(env, workdir, "--chat", "bg")
    questions = ["하나", "둘", "셋"]  # 6 messages: over the trigger of 4
    try:
        for n, question in enumerate(questions, 1):
            chat.wait_prompt(n)
            chat.type(f"{question}\r")
            chat.wait_text(f"echo: {question}")
        fake_anthropic.wait_requests(4)  # the three answers, then the summary request (held)
        assert summary_requests(fake_anthropic) == 1
        chat.wait_prompt(4)  # back at the prompt while the summary is being written
        chat.type("넷\r")
        chat.wait_text("echo: 넷")  # and answered meanwhile
        chat.wait_prompt(5)
        assert not held.is_set() and not (data_dir / "chats" / "bg.summary.json").exists()
        chat.type(b"\x04")  # Ctrl-D: leaving finishes the summary first, and says so
        chat.wait_text(cli_texts.text("upkeep.finishing"))
        held.set()
        assert chat.proc.wait(30) == 0
    finally:
        held.set()
        chat.close()
    assert (data_dir / "chats" / "bg.summary.json").exists()
    assert [m["content"] for m in stored(data_dir, "bg")] == [x for q in [*questions, "넷"] for x in (q, f"echo: {q}")]


def pending_text(data_dir: Path, chat: str) -> str | None:
    path = data_dir / "chats" / f"{chat}.pending.json"
    return json.loads(path.read_text())["text"] if path.exists() else None


# -- 1: pipes: stdout carries answers only; the exit status says whether all were answered -------
def test_a_pipe_gets_answers_only(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    p = run_bot(["chat"], chat_env(data_dir, fake_anthropic), workdir, b"2+2?\n/history\n", 60)
    assert p.returncode == 0 and p.stderr == b""
    history = cli_texts.text("history.header", n=2) + "\n나: 2+2?\nClaude: echo: 2+2?"
    assert p.stdout.decode() == f"echo: 2+2?\n{history}\n"  # no banner, no prompt, no goodbye


def test_the_exit_status_says_whether_every_question_was_answered(
    workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    env = chat_env(data_dir, fake_anthropic)
    fake_anthropic.reply(Error(529, "overloaded_error", "Overloaded"))
    p = run_bot(["chat"], env, workdir, b"first\nsecond\n", 60)
    assert p.returncode == 1  # "first" failed; "second" was answered
    assert p.stdout.decode() == "echo: second\n"
    assert p.stderr.decode().splitlines() == [f"{error_text('overloaded')} {cli_texts.text('retry.hint')}"]
    fake_anthropic.reply(Error(529, "overloaded_error", "Overloaded"))
    p = run_bot(["chat"], env, workdir, b"third\n/retry\n", 60)
    assert p.returncode == 0  # "third" failed, then /retry answered it
    assert p.stdout.decode() == "echo: third\n"
    # nothing listens on port 9: every question fails
    p = run_bot(["chat"], {**env, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, workdir, b"hello\n", 60)
    assert p.returncode == 1 and p.stdout == b"" and "http://127.0.0.1:9" in p.stderr.decode()  # names the setting


def test_typed_at_a_terminal_with_the_answers_going_to_a_file(
    workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
):
    out_path = tmp_path / "out.md"
    with out_path.open("wb") as out:
        chat = TerminalChat(chat_env(data_dir, fake_anthropic), workdir, "--chat", "file", stdout=out.fileno())
    try:
        chat.wait_prompt(1)  # the prompt and the banner are on the terminal (stderr)
        assert "대화 file" in chat.screen_text()
        chat.type("파일로 보내 줘\r")
        chat.wait_prompt(2)
        assert chat.quit() == 0
    finally:
        chat.close()
    assert out_path.read_text(encoding="utf-8") == "echo: 파일로 보내 줘\n"
    assert "echo:" not in chat.screen_text()


# -- 11: Ctrl-C at the prompt clears the line; Ctrl-D leaves -----------------------------------
def test_ctrl_c_at_the_prompt_clears_the_line(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    chat = TerminalChat(chat_env(data_dir, fake_anthropic), workdir, "--chat", "keys")
    try:
        chat.wait_prompt(1)
        chat.type("반쯤 쓴 질문")
        chat.wait_text("반쯤 쓴 질문")
        chat.type(b"\x03")  # once: the line is dropped, a new prompt (bot/cli/sigint.py: never at the next key)
        chat.wait_prompt(2)
        assert chat.proc.poll() is None
        chat.type("진짜 질문\r")
        chat.wait_text("echo: 진짜 질문")
        chat.wait_prompt(3)
        assert chat.quit() == 0  # Ctrl-D leaves
    finally:
        chat.close()
    assert [last_user_text(b) for b in fake_anthropic.requests] == ["진짜 질문"]
    assert cli_texts.text("bye") in chat.screen_text()


def test_ctrl_c_while_readline_is_busy_with_keys_takes_effect_at_once(
    workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    """CPython's readline runs signal handlers only when its wait for a key is interrupted: a Ctrl-C that
    lands while it still draws the keys typed just before used to wait for the next key. Here a long
    line is still being drawn when Ctrl-C comes, and no other key follows: the new prompt shows anyway."""
    chat = TerminalChat(chat_env(data_dir, fake_anthropic), workdir, "--chat", "busy")
    try:
        chat.wait_prompt(1)
        chat.type("x" * 4000)  # handled key by key, each drawn: busy for a while
        chat.wait_for(lambda raw: raw.count(b"x") >= 100, "the first keys drawn")  # (the raw output: no emulator)
        chat.type(b"\x03")
        chat.wait_for(lambda raw: raw.count(cli_chat.PROMPT.encode()) >= 2, "a new prompt with no other key")
        assert chat.proc.poll() is None
        chat.type("진짜 질문\r")
        chat.wait_text("echo: 진짜 질문")
        chat.wait_prompt(3)
        assert chat.quit() == 0
    finally:
        chat.close()
    assert [last_user_text(b) for b in fake_anthropic.requests] == ["진짜 질문"]  # nothing of the dropped line


# -- 4: /retry asks again the last question that got no answer ---------------------------------
def test_retry_asks_again_the_last_unanswered_question(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    gate = threading.Event()
    fake_anthropic.reply(Text("streaming words " * 50, chunk=8, gate=gate, gate_after=2))
    chat = TerminalChat(chat_env(data_dir, fake_anthropic), workdir, "--chat", "again")
    try:
        chat.wait_prompt(1)
        chat.type("give me a long answer\r")
        chat.wait_text("streaming words")
        chat.type(b"\x03")  # cancelled
        chat.wait_text(cli_texts.text("cancelled"))
        gate.set()
        chat.wait_prompt(2)
        assert pending_text(data_dir, "again") == "give me a long answer"
        fake_anthropic.reply(Error(529, "overloaded_error", "Overloaded"))
        chat.type("please fail now\r")
        chat.wait_prompt(3)
        assert error_text("overloaded").encode() in chat.raw
        assert pending_text(data_dir, "again") == "please fail now"  # the newer one replaced it
        chat.type("/retry\r")
        chat.wait_text("echo: please fail now")
        chat.wait_prompt(4)
        assert chat.quit() == 1  # "give me a long answer" never got one
    finally:
        gate.set()
        chat.close()
    assert [last_user_text(b) for b in fake_anthropic.requests] == [
        "give me a long answer",
        "please fail now",
        "please fail now",
    ]
    assert pending_text(data_dir, "again") is None  # answered: nothing stale left for /retry
    assert [m["content"] for m in stored(data_dir, "again")] == ["please fail now", "echo: please fail now"]


def test_a_cancelled_question_replaces_a_failed_one_for_retry(
    workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    gate = threading.Event()
    fake_anthropic.reply(
        Error(529, "overloaded_error", "Overloaded"), Text("streaming words " * 50, chunk=8, gate=gate, gate_after=2)
    )
    chat = TerminalChat(chat_env(data_dir, fake_anthropic), workdir, "--chat", "again")
    try:
        chat.wait_prompt(1)
        chat.type("please fail now\r")
        chat.wait_prompt(2)
        chat.type("give me a long answer\r")
        chat.wait_text("streaming words")
        chat.type(b"\x03")
        chat.wait_text(cli_texts.text("cancelled"))
        gate.set()
        chat.wait_prompt(3)
        assert chat.quit() == 1
    finally:
        gate.set()
        chat.close()
    assert pending_text(data_dir, "again") == "give me a long answer"
    # /retry in a later session (a pipe) asks the cancelled question, not the older failed one
    p = run_bot(["chat", "--chat", "again"], chat_env(data_dir, fake_anthropic), workdir, b"/retry\n", 60)
    assert p.returncode == 0 and p.stdout.decode() == "echo: give me a long answer\n"
    assert pending_text(data_dir, "again") is None


# -- 2: one-shot: chat "question", and '-' for the whole of stdin ---------------------------------
def test_one_shot_question_answered_on_stdout_and_remembered(
    workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    env = chat_env(data_dir, fake_anthropic)
    p = run_bot(["chat", "--chat", "once", "what is 2+2"], env, workdir, b"", 60)
    assert (p.returncode, p.stdout.decode(), p.stderr) == (0, "echo: what is 2+2\n", b"")
    p = run_bot(["chat", "--chat", "once", "and", "then?"], env, workdir, b"", 60)  # words are joined
    assert p.returncode == 0 and p.stdout.decode() == "echo: and then?\n"
    # remembered like any other turn: the second question carried the first turn
    assert convo(fake_anthropic.requests[1])[:2] == [
        {"role": "user", "content": "what is 2+2"},
        {"role": "assistant", "content": "echo: what is 2+2"},
    ]
    rows = stored(data_dir, "once")
    assert [m["content"] for m in rows] == ["what is 2+2", "echo: what is 2+2", "and then?", "echo: and then?"]
    assert rows[0]["via"] == "terminal"


def test_one_shot_reads_the_whole_of_stdin_for_a_dash(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    log = b'Traceback (most recent call last):\n  File "x.py", line 1\nZeroDivisionError: division by zero\n'
    p = run_bot(["chat", "-", "why does this fail?"], chat_env(data_dir, fake_anthropic), workdir, log, 60)
    assert p.returncode == 0, p.stderr.decode()
    assert len(fake_anthropic.requests) == 1  # one question, not one per line
    assert last_user_text(fake_anthropic.requests[0]) == log.decode().strip("\n") + "\n\nwhy does this fail?"
    p = run_bot(["chat", "-"], chat_env(data_dir, fake_anthropic), workdir, b"\n", 60)
    assert p.returncode == 2 and "nothing to ask" in p.stderr.decode() and len(fake_anthropic.requests) == 1


def test_one_shot_failure_exits_non_zero(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Error(529, "overloaded_error", "Overloaded"))
    p = run_bot(["chat", "--chat", "once", "please fail"], chat_env(data_dir, fake_anthropic), workdir, b"", 60)
    assert p.returncode == 1 and p.stdout == b""
    assert p.stderr.decode().splitlines() == [f"{error_text('overloaded')} {cli_texts.text('retry.hint')}"]
    assert pending_text(data_dir, "once") == "please fail"  # /retry in the chat asks it again
    assert not (data_dir / "chats" / "once.jsonl").exists()


def test_one_shot_in_a_terminal_prints_the_rendered_answer_only(
    workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    fake_anthropic.reply(Text("**네**, 4예요."))
    chat = TerminalChat(chat_env(data_dir, fake_anthropic), workdir, "2+2?")
    try:
        assert chat.proc.wait(60) == 0
        chat.reader.join(10)
        term = chat.term()
        assert term.rows() == ["네, 4예요."]  # rendered; no banner, no prompt
        assert all(cell.bold for cell in term.styled("네"))
    finally:
        chat.close()


# -- 3: a paste is one question; typing one over several lines ----------------------------------
def paste(chat: TerminalChat, text: str) -> None:
    """Paste as a terminal does: between the bracketed paste markers only if the program turned that
    mode on (ESC [ ? 2004 h; ESC [ ? 2004 l turns it off), else as if typed."""
    on, off = chat.raw.rfind(b"\x1b[?2004h"), chat.raw.rfind(b"\x1b[?2004l")
    chat.type(f"\x1b[200~{text}\x1b[201~" if on > off else text)


def test_a_bracketed_paste_is_one_question(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    chat = TerminalChat(chat_env(data_dir, fake_anthropic), workdir, "--chat", "paste")
    try:
        chat.wait_prompt(1)
        paste(chat, "첫째 줄\r둘째 줄\r셋째 줄")  # a terminal's paste: line breaks as carriage returns
        chat.wait_text("셋째 줄")
        chat.type("\r")  # Enter sends it
        chat.wait_text("echo: 첫째 줄")
        chat.wait_prompt(2)
        assert chat.quit() == 0
    finally:
        chat.close()
    assert [last_user_text(b) for b in fake_anthropic.requests] == ["첫째 줄\n둘째 줄\n셋째 줄"]


def test_a_question_typed_over_several_lines(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    chat = TerminalChat(chat_env(data_dir, fake_anthropic), workdir, "--chat", "typed")
    try:
        chat.wait_prompt(1)
        chat.type('"""\r')  # a block, up to the line ending with """
        chat.wait_text(cli_chat.MORE_PROMPT.strip())
        chat.type("def f():\r")
        chat.type('    return 1"""\r')
        chat.wait_text("echo: def f():")
        chat.wait_prompt(2)
        chat.type("first line \\\r")  # a trailing backslash continues the question on the next line
        chat.type("second line\r")
        chat.wait_text("echo: first line")
        chat.wait_prompt(3)
        assert chat.quit() == 0
    finally:
        chat.close()
    assert [last_user_text(b) for b in fake_anthropic.requests] == [
        "def f():\n    return 1",
        "first line \nsecond line",
    ]


def test_a_block_in_piped_input_is_one_question(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    lines = 'one line\n"""\nsummarize:\n- a\n- b\n"""\nC:\\path\\\n'
    p = run_bot(["chat"], chat_env(data_dir, fake_anthropic), workdir, lines.encode(), 60)
    assert p.returncode == 0, p.stderr.decode()
    assert [last_user_text(b) for b in fake_anthropic.requests] == [
        "one line",
        "summarize:\n- a\n- b",
        "C:\\path\\",  # on a pipe a trailing backslash is just a character
    ]


# -- 13: conversations: list, continue the last, resume one by name or number (archived too) ----
def make_conversations(data_dir: Path, fake: FakeAnthropic, workdir: Path) -> str:
    """alpha (asked, then /reset: archived), beta, gamma; used in that order. Returns alpha's archive name."""
    env = chat_env(data_dir, fake)
    for chat, question in [("alpha", "alpha question"), ("beta", "beta question"), ("gamma", "gamma question")]:
        assert run_bot(["chat", "--chat", chat, question], env, workdir, b"", 60).returncode == 0
    p = run_bot(["chat", "--chat", "alpha"], env, workdir, b"/reset\n", 60)
    assert p.returncode == 0, p.stderr.decode()
    (archived,) = (data_dir / "chats" / "archive").glob("alpha.*.jsonl")
    # last used: the files' modification times (set here, so the order does not depend on the clock)
    for n, path in enumerate([archived, data_dir / "chats" / "beta.jsonl", data_dir / "chats" / "gamma.jsonl"]):
        os.utime(path, (1_800_000_000 + n * 60, 1_800_000_000 + n * 60))
    return archived.name.removesuffix(".jsonl")


def test_list_continue_and_resume_conversations_from_the_command_line(
    workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    archived = make_conversations(data_dir, fake_anthropic, workdir)
    env = chat_env(data_dir, fake_anthropic, LANG="en_US.UTF-8")
    p = run_bot(["chat", "--list"], env, workdir, b"", 60)
    assert p.returncode == 0 and p.stderr == b""
    rows = p.stdout.decode().splitlines()
    assert rows[0] == cli_texts.text("chats.header_list", "en")
    assert [row.split()[:2] for row in rows[1:]] == [["1", "gamma"], ["2", "beta"], ["3", archived]]
    # in the time zone of TIMEZONE (Asia/Seoul by default)
    assert rows[1].endswith("gamma question") and rows[3].endswith("(archived)  2027-01-15 17:00  alpha question")
    # -c continues the most recently used conversation
    p = run_bot(["chat", "-c", "and now?"], env, workdir, b"", 60)
    assert p.returncode == 0 and [m["content"] for m in stored(data_dir, "gamma")][-2:] == [
        "and now?",
        "echo: and now?",
    ]
    # an archived conversation by name: brought back as alpha's current one, then asked
    p = run_bot(["chat", "--chat", archived, "what did I ask?"], env, workdir, b"", 60)
    assert p.returncode == 0, p.stderr.decode()
    assert convo(fake_anthropic.requests[-1])[0] == {"role": "user", "content": "alpha question"}
    assert [m["content"] for m in stored(data_dir, "alpha")] == [
        "alpha question", "echo: alpha question", "what did I ask?", "echo: what did I ask?"
    ]  # fmt: skip
    assert not (data_dir / "chats" / "archive" / f"{archived}.jsonl").exists()
    p = run_bot(["chat", "--chat", "alpha.20000101T000000Z", "x"], env, workdir, b"", 60)
    assert p.returncode == 2 and "no conversation 'alpha.20000101T000000Z'" in p.stderr.decode()


def test_chats_lists_and_switches_conversations_in_the_terminal(
    workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    archived = make_conversations(data_dir, fake_anthropic, workdir)
    chat = TerminalChat(chat_env(data_dir, fake_anthropic), workdir, "--chat", "beta")
    try:
        chat.wait_prompt(1)
        chat.type("/chats\r")
        chat.wait_prompt(2)
        rows = chat.term().rows()
        listed = rows.index(cli_texts.text("chats.header"))
        assert [row.split()[:2] for row in rows[listed + 1 : listed + 4]] == [
            ["1", "gamma"], ["*", "2"], ["3", archived]
        ]  # fmt: skip
        chat.type("/chats 3\r")  # the archived one, by its number: alpha's current conversation again
        chat.wait_text(cli_texts.text("chats.switched", chat="alpha", n=2))
        chat.wait_prompt(3)
        chat.type("계속해 볼까\r")
        chat.wait_text("echo: 계속해 볼까")
        chat.wait_prompt(4)
        chat.type("/chats nowhere\r")
        chat.wait_text(cli_texts.text("chats.unknown", name="nowhere"))
        chat.wait_prompt(5)
        assert chat.quit() == 0
    finally:
        chat.close()
    assert [m["content"] for m in stored(data_dir, "alpha")][-2:] == ["계속해 볼까", "echo: 계속해 볼까"]
    assert [m["content"] for m in stored(data_dir, "beta")] == ["beta question", "echo: beta question"]


# -- 14: /stats: this conversation, today and this month, with the estimated cost -----------------
def test_stats_in_the_terminal(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    usage = {"input_tokens": 100_000, "output_tokens": 50_000, "cache_creation_input_tokens": 0}
    usage["cache_read_input_tokens"] = 0
    fake_anthropic.default = lambda body: Text(f"echo: {last_user_text(body)}", usage=usage)
    # $1 per million input tokens, $2 per million output tokens: each answer costs $0.10 + $0.10
    env = chat_env(data_dir, fake_anthropic, MODEL_PRICES="claude-sonnet-5-5=1/2", LANG="en_US.UTF-8")
    assert run_bot(["chat", "--chat", "a"], env, workdir, b"q1\nq2\n", 60).returncode == 0
    p = run_bot(["chat", "--chat", "b"], env, workdir, b"q3\n/stats\n", 60)
    assert p.returncode == 0, p.stderr.decode()
    tokens = "input 100,000 · output 50,000 · cache write 0 · cache read 0"
    tripled = "input 300,000 · output 150,000 · cache write 0 · cache read 0"
    assert p.stdout.decode().splitlines()[1:] == [
        "💰 Usage (summaries and tools included, estimated cost)",
        f"This conversation (b, in total): 1 questions, {tokens} → $0.2000",
        f"Today (terminal): 3 questions, {tripled} → $0.6000",
        f"This month (terminal): 3 questions, {tripled} → $0.6000",
    ]


def test_chat_help_names_every_command_and_option(capsys: pytest.CaptureFixture[str]):
    assert cli_terminal.main(["--help"]) == 0
    usage = " ".join(capsys.readouterr().out.split())  # the words, whatever the wrapping
    for command in cli_commands.COMMANDS:
        assert command in usage
    for option in (
        "--chat ID, --cid ID",
        "-c, --continue",
        "-l, --list",
        "QUESTION",
        'chat - "why does this fail?"',
        'between lines of """',
    ):
        assert option in usage


def test_one_shot_leaves_the_summary_to_a_process_of_its_own(
    workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    held = threading.Event()
    fake_anthropic.default = echo_and_summaries(held)
    env = chat_env(data_dir, fake_anthropic, SUMMARY_TRIGGER_MESSAGES="4", SUMMARY_KEEP_MESSAGES="2")
    summary = data_dir / "chats" / "once.summary.json"
    try:
        for question in ("하나", "둘"):
            assert run_bot(["chat", "--chat", "once", question], env, workdir, b"", 60).returncode == 0
        assert summary_requests(fake_anthropic) == 0  # not due yet: no process started
        p = run_bot(["chat", "--chat", "once", "셋"], env, workdir, b"", 60)  # 6 messages: over 4
        assert (p.returncode, p.stdout.decode()) == (0, "echo: 셋\n")  # exited with the summary held
        fake_anthropic.wait_requests(4)  # the summary's request, from the process left behind
        assert summary_requests(fake_anthropic) == 1 and not summary.exists()
    finally:
        held.set()
    deadline = time.monotonic() + hang_guard(60)
    while not summary.exists():  # written once the fake answers
        assert time.monotonic() < deadline, "the summary was never written"
        time.sleep(0.02)
    assert "요약됨" in summary.read_text(encoding="utf-8")


def test_export_on_a_pipe_writes_the_export_alone(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    env = chat_env(data_dir, fake_anthropic)
    assert run_bot(["chat", "one question"], env, workdir, b"", 60).returncode == 0
    p = run_bot(["chat"], env, workdir, b"/export\n", 60)
    assert p.returncode == 0 and p.stderr == b""
    rows = [json.loads(line) for line in p.stdout.decode().splitlines()]  # JSON lines only, no notice
    assert [r["content"] for r in rows] == ["one question", "echo: one question"]
