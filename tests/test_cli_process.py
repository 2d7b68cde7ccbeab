"""The real ``python -m bot chat`` in a subprocess, against the fake Anthropic server.

No Telegram token anywhere: the terminal chat needs only the Anthropic key. The
concurrency tests run the CLI next to other processes on the same chat file.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bot.claude.summarizer import SYSTEM_MARK
from bot.cli import chat as cli_chat
from bot.cli import terminal as cli_terminal
from bot.cli import texts as cli_texts
from bot.texts import error_text
from tests.conftest import ROOT
from tests.fakes.anthropic_server import Error, FakeAnthropic, Text, last_user_text
from tests.fakes.http import hang_guard
from tests.forkserver import popen_bot, run_bot
from tests.helpers import asked_text, convo, stored
from tests.summary_helpers import memo


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    d = tmp_path / "work"  # an empty working directory: no developer's .env is read
    d.mkdir()
    return d


@pytest.fixture
def cli_env(data_dir: Path, fake_anthropic: FakeAnthropic) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "SYSTEMROOT")}
    return {
        **keep,
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
        "PYTHONUTF8": "1",
        "LANG": "C.UTF-8",  # no language named: Korean texts
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "ANTHROPIC_MAX_RETRIES": "0",
        "DATA_DIR": str(data_dir),
        "RECALL_MEANING": "off",  # as in bot_env: no embedding model loaded, no vectors made (~50 ms a turn)
    }


def run_cli(env: dict[str, str], cwd: Path, stdin: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return run_bot(["chat", *args], env, cwd, stdin.encode(), hang_guard(timeout))


class LiveCli:
    """A CLI process whose stdin stays open and whose output is collected as it arrives."""

    def __init__(self, env: dict[str, str], cwd: Path, *args: str) -> None:
        self.proc = popen_bot(["chat", *args], env, cwd)
        self.out = bytearray()
        self.err = bytearray()
        self._readers = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self.out), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, self.err), daemon=True),
        ]
        for r in self._readers:
            r.start()

    @staticmethod
    def _pump(pipe, buf: bytearray) -> None:
        while chunk := pipe.read1(65536):
            buf.extend(chunk)

    def text(self, which: str = "out") -> str:
        return bytes(self.out if which == "out" else self.err).decode("utf-8", errors="replace")

    def wait_for(self, needle: str, which: str = "out", timeout: float = 60) -> None:
        deadline = time.monotonic() + hang_guard(timeout)
        while needle not in self.text(which):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"{needle!r} not in {which}:\n{self.text()}\n---\n{self.text('err')}")
            time.sleep(0.01)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{line}\n".encode())
        self.proc.stdin.flush()

    def quit_with_ctrl_c(self, timeout: float = 30) -> int:
        """Ctrl-C at the prompt, and the exit code. A Ctrl-C that lands while the last command is
        still finishing interrupts that instead ("interrupted", back at the prompt): then another."""
        interrupted = cli_texts.text("interrupted")
        deadline = time.monotonic() + hang_guard(timeout)
        while self.proc.poll() is None and time.monotonic() < deadline:
            seen = self.text("err").count(interrupted)
            self.proc.send_signal(signal.SIGINT)
            while self.proc.poll() is None and self.text("err").count(interrupted) == seen:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)
        return self.wait(1)

    def wait(self, timeout: float = 30) -> int:
        try:
            rc = self.proc.wait(hang_guard(timeout))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        for r in self._readers:
            r.join(5)
        return rc


def test_python_m_bot_chat_needs_only_the_anthropic_key(
    cli_env, workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    assert "TELEGRAM_BOT_TOKEN" not in cli_env
    fake_anthropic.reply("기억해 둘게요.", "4719 였어요.")
    lines = "내 자전거 자물쇠 번호는 4719야\n\n/history\n내 자물쇠 번호 뭐였지?\n"
    p = run_cli(cli_env, workdir, lines, "--chat", "kbd")
    out, err = p.stdout.decode(), p.stderr.decode()
    assert p.returncode == 0, err
    assert err == ""  # nothing on stderr: no log noise, no errors
    assert out.startswith("기억해 둘게요.\n")  # stdout is a pipe: answers and command output only, no banner
    assert "기억해 둘게요.\n" in out and "나: 내 자전거 자물쇠 번호는 4719야\nClaude: 기억해 둘게요." in out
    assert out.rstrip().endswith("4719 였어요.")
    assert len(fake_anthropic.requests) == 2 and fake_anthropic.requests[0]["stream"] is True
    assert convo(fake_anthropic.requests[1])[0] == {"role": "user", "content": "내 자전거 자물쇠 번호는 4719야"}
    rows = stored(data_dir, "kbd")
    assert [(m["role"], m["content"]) for m in rows] == [
        ("user", "내 자전거 자물쇠 번호는 4719야"),
        ("assistant", "기억해 둘게요."),
        ("user", "내 자물쇠 번호 뭐였지?"),
        ("assistant", "4719 였어요."),
    ]
    assert rows[0]["via"] == "terminal"
    assert (data_dir / "chats" / "kbd.jsonl").stat().st_mode & 0o777 == 0o600


def test_answers_are_streamed_as_they_arrive(cli_env, workdir: Path, fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Text("first part, then the rest of it arrives slowly", chunk=10, chunk_delay=0.25))
    chat = LiveCli(cli_env, workdir)
    try:
        chat.send("stream, please")
        chat.wait_for("first part")
        assert "arrives slowly" not in chat.text()  # printed before the model finished
        chat.wait_for("the rest of it arrives slowly\n")
    finally:
        assert chat.proc.stdin is not None
        chat.proc.stdin.close()
    assert chat.wait() == 0


def test_api_error_then_retry_in_english(cli_env, workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Error(529, "overloaded_error", "Overloaded"))
    env = {**cli_env, "LANG": "en_US.UTF-8"}
    p = run_cli(env, workdir, "a question worth keeping\n/history\n/retry\n/quit\n", "--chat", "err")
    out, err = p.stdout.decode(), p.stderr.decode()
    assert p.returncode == 0, err
    assert err.splitlines() == [f"{error_text('overloaded', 'en')} {cli_texts.text('retry.hint', 'en')}"]
    assert cli_texts.text("history.empty", "en") in out  # nothing was stored by the failure
    assert [last_user_text(r) for r in fake_anthropic.requests] == ["a question worth keeping"] * 2
    assert convo(fake_anthropic.requests[1]) == [{"role": "user", "content": "a question worth keeping"}]
    assert [m["content"] for m in stored(data_dir, "err")] == [
        "a question worth keeping",
        "echo: a question worth keeping",
    ]


def test_bad_chat_id_and_missing_key(cli_env, workdir: Path):
    p = run_cli(cli_env, workdir, "", "--chat", "../etc")
    assert p.returncode == 2 and "invalid chat id '../etc'" in p.stderr.decode()
    env = {k: v for k, v in cli_env.items() if k != "ANTHROPIC_API_KEY"}
    p = run_cli(env, workdir, "hello\n")
    assert p.returncode == 2 and p.stderr.decode().startswith("오류: ANTHROPIC_API_KEY 이(가) 설정되지 않았어요")


def test_ctrl_c_cancels_the_answer_and_stops_piped_input(
    cli_env, workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    gate = threading.Event()
    fake_anthropic.reply(Text("too late", gate=gate))  # held until the answer was cancelled
    chat = LiveCli(cli_env, workdir, "--chat", "sig")
    chat.send("느린 질문")
    fake_anthropic.wait_requests(1)
    chat.proc.send_signal(signal.SIGINT)
    chat.wait_for(cli_texts.text("cancelled"), "err")
    gate.set()
    assert chat.proc.poll() is None  # still running, back at the prompt
    chat.send("두 번째")
    chat.wait_for("echo: 두 번째\n")
    # Ctrl-C at the prompt of piped input stops the script (status 130). The CLI shows no prompt on a
    # pipe, so wait for the output of a command that runs nothing afterwards (no storing, no
    # compaction): then it is back at the prompt, or about to be (a busy machine can hold it between)
    chat.send("/help")
    chat.wait_for(cli_texts.layout_help(cli_texts.text("help"), 80).splitlines()[-1])  # laid out for 80 columns
    assert chat.quit_with_ctrl_c() == cli_chat.INTERRUPTED
    assert [m["content"] for m in stored(data_dir, "sig")] == ["두 번째", "echo: 두 번째"]
    assert "Traceback" not in chat.text("err")


# -- two processes, one chat -----------------------------------------------------------------
APPENDER = """
import sys, time
from memory.transcript import Transcript

data_dir, chat, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = Transcript(data_dir)
deadline = time.monotonic() + 60
while not t.exists(chat):  # start once the CLI has written its first turn
    if time.monotonic() > deadline:
        sys.exit("the CLI never wrote")
    time.sleep(0.002)
for i in range(n):
    q = f"other-{i}"
    t.append(chat, [{"role": "user", "content": q}, {"role": "assistant", "content": f"answer to {q}"}])
    time.sleep(0.01)
"""


def is_summary_request(body: dict) -> bool:
    return any(SYSTEM_MARK in str(b.get("text", "")) for b in body.get("system") or [])


def answering(prefix: str = "answer to ", padding: str = "", **kw):
    """Chat requests get ``<prefix><question><padding>``; the CLI's compaction gets a valid memo."""

    def script(body: dict) -> Text:
        if is_summary_request(body):
            return Text(memo([]))
        return Text(f"{prefix}{asked_text(body)}{padding}", **kw)

    return script


def check_turns(rows: list[dict]) -> list[str]:
    """Every turn is whole: a user line immediately followed by the answer to it. Returns the questions."""
    assert len(rows) % 2 == 0
    questions = []
    for user, answer in zip(rows[::2], rows[1::2], strict=True):
        assert user["role"] == "user" and answer["role"] == "assistant", (user, answer)
        assert answer["content"].startswith(f"answer to {user['content']}"), (user, answer)
        questions.append(user["content"])
    return questions


def test_cli_and_another_process_append_to_the_same_chat(
    cli_env, workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    n = 30
    fake_anthropic.default = answering(delay=0.02)
    helper = subprocess.Popen([sys.executable, "-c", APPENDER, str(data_dir), "both", str(n)], cwd=workdir, env=cli_env)
    p = run_cli(cli_env, workdir, "".join(f"cli-{i}\n" for i in range(n)), "--chat", "both")
    assert helper.wait(60) == 0
    assert p.returncode == 0, p.stderr.decode()
    assert p.stderr.decode() == ""
    path = data_dir / "chats" / "both.jsonl"
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    rows = [json.loads(line) for line in raw.decode("utf-8").splitlines()]  # every line parses
    questions = check_turns(rows)
    cli_turns = [q for q in questions if q.startswith("cli-")]
    other_turns = [q for q in questions if q.startswith("other-")]
    assert cli_turns == [f"cli-{i}" for i in range(n)]  # all there, each process in its own order
    assert other_turns == [f"other-{i}" for i in range(n)]
    assert len(questions) == 2 * n
    # the two processes really wrote at the same time: their turns interleave
    assert questions.index("other-0") < questions.index(f"cli-{n - 1}")
    assert questions.index("cli-0") < questions.index(f"other-{n - 1}")
    # and every chat request of the CLI carried whole turns only, whoever wrote them
    chat_requests = [b for b in fake_anthropic.requests if not is_summary_request(b)]
    assert [asked_text(b) for b in chat_requests] == [f"cli-{i}" for i in range(n)]
    assert len(chat_requests) < len(fake_anthropic.requests)  # the CLI compacted along the way too
    for body in chat_requests:
        history = convo(body)[:-1]
        check_turns([{"role": m["role"], "content": m["content"]} for m in history])


READER = """
import json, os, sys
from memory.transcript import Transcript

data_dir, chat, stop = sys.argv[1], sys.argv[2], sys.argv[3]
t = Transcript(data_dir)
reads = bad = 0
ends = set()
examples = []


def check(entries, whole):
    global bad
    if not entries:
        return
    rows = [e.data for e in entries]
    if not whole and rows[0]["role"] == "assistant":
        rows = rows[1:]  # tail() may start in the middle of a turn
    ok = len(rows) % 2 == 0 and all(
        u["role"] == "user" and a["role"] == "assistant" and a["content"].startswith("answer to " + u["content"])
        for u, a in zip(rows[::2], rows[1::2])
    )
    if not ok:
        bad += 1
        if len(examples) < 3:
            examples.append([(r["role"], r["content"][:40]) for r in rows])


while not os.path.exists(stop):
    entries = t.tail(chat, 2)
    if entries:
        reads += 1
        ends.add(entries[-1].end)
        check(entries, whole=False)
        if reads % 20 == 0:
            check(list(t.read(chat)), whole=True)
print(json.dumps({"reads": reads, "ends": len(ends), "bad": bad, "examples": examples}))
"""


def test_a_reader_never_sees_a_half_written_turn(
    cli_env, workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
):
    # big answers: each turn is one long write, so a reader without the lock would catch it half done
    n = 12
    fake_anthropic.default = answering(padding=" " + "x" * 1_000_000, chunk=500_000, delay=0.02)
    stop = tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(data_dir), "big", str(stop)],
        cwd=workdir,
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    env = {**cli_env, "MAX_HISTORY_MESSAGES": "2", "MAX_HISTORY_CHARS": "1000"}
    try:
        p = run_cli(env, workdir, "".join(f"big-{i}\n" for i in range(n)), "--chat", "big")
    finally:
        stop.touch()
        reader_out, reader_err = reader.communicate(timeout=hang_guard(60))
    assert p.returncode == 0, p.stderr.decode()
    assert reader.returncode == 0, reader_err.decode()
    result = json.loads(reader_out)
    assert result["bad"] == 0, result["examples"]
    assert result["ends"] >= 3, result  # the reader really read while the file grew
    assert "torn" not in reader_err.decode()
    assert check_turns(stored(data_dir, "big")) == [f"big-{i}" for i in range(n)]


def test_interactive_terminal_has_a_prompt_and_keeps_input_history(
    cli_env, workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    import pty

    master, slave = pty.openpty()
    proc = popen_bot(
        ["chat", "--chat", "tty"], {**cli_env, "TERM": "dumb"}, workdir, stdin=slave, stdout=slave, stderr=slave
    )
    os.close(slave)
    seen = bytearray()

    def read_until(needle: bytes, timeout: float = 30, count: int = 1) -> None:
        deadline = time.monotonic() + hang_guard(timeout)
        while seen.count(needle) < count:
            assert time.monotonic() < deadline, f"{needle!r} not in {bytes(seen)!r}"
            try:
                seen.extend(os.read(master, 4096))
            except OSError:  # the process closed the terminal
                break
        assert needle in seen, bytes(seen)

    try:
        read_until(cli_chat.PROMPT.encode())
        os.write(master, "안녕 터미널\r".encode())
        read_until("echo: 안녕 터미널".encode())
        read_until(cli_chat.PROMPT.encode(), count=2)  # back at the prompt
        os.write(master, b"\x04")  # Ctrl-D at the prompt
        assert proc.wait(20) == 0
        read_until(cli_texts.text("bye").encode())
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    history = data_dir / cli_terminal.HISTORY_FILE
    assert history.stat().st_mode & 0o777 == 0o600
    assert "안녕 터미널" in history.read_text(encoding="utf-8")
    assert [m["content"] for m in stored(data_dir, "tty")] == ["안녕 터미널", "echo: 안녕 터미널"]


def test_the_terminal_chat_records_its_usage_as_the_owner_at_the_keyboard(
    cli_env, workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    fake_anthropic.reply(Text("하나", usage=usage), Text("둘", usage=usage))
    p = run_cli({**cli_env, "DAILY_MESSAGE_LIMIT": "1"}, workdir, "질문 하나\n질문 둘\n", "--chat", "kbd")
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode().rstrip().endswith("둘")  # never limited
    ledger = json.loads((data_dir / "usage.json").read_text())
    assert ledger["total"]["users"]["terminal"]["m"]["claude-sonnet-5-5"] == [20, 10, 0, 0, 2]
    assert ledger["total"]["chats"]["kbd"]["m"]["claude-sonnet-5-5"] == [20, 10, 0, 0, 2]
