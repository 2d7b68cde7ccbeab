"""The real ``python -m bot chat`` in a pseudo-terminal, against the fake Anthropic server.

The chat's terminal is a pty it has as its controlling terminal (so Ctrl-C typed as \\x03 is a real
SIGINT from the line discipline); everything it writes goes through a terminal emulator
(tests/terminal.py) and the tests look at the screen a user would see. Every wait is for something
on the screen; the deadlines only stop a broken run.
"""

import fcntl
import os
import struct
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.cli import chat as cli_chat
from bot.cli import texts as cli_texts
from tests.conftest import ROOT
from tests.fakes.anthropic_server import FakeAnthropic, Text
from tests.forkserver import popen_bot, run_bot
from tests.helpers import stored
from tests.terminal import Term

COLUMNS, LINES = 80, 24
ANSWER = "안녕하세요 **민수**님!\n\n```python\nprint('안녕')\n```\n\n- 하나\n- `둘`"


def chat_env(data_dir: Path, fake: FakeAnthropic, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME")}
    return {
        **keep,
        "PYTHONPATH": str(ROOT),
        "PYTHONUTF8": "1",
        "LANG": "C.UTF-8",  # Korean texts
        "TERM": "xterm-256color",
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_MAX_RETRIES": "0",
        "DATA_DIR": str(data_dir),
        "RECALL_MEANING": "off",  # as in bot_env: no embedding model loaded, no vectors made (~50 ms a turn)
        **extra,
    }


class TerminalChat:
    """``python -m bot chat`` on a pty of COLUMNS x LINES, its output collected as it arrives."""

    def __init__(self, env: dict[str, str], cwd: Path, *args: str, stdout: int | None = None) -> None:
        """``stdout``: a descriptor to write stdout to instead of the terminal (``> file``)."""
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
        out = slave if stdout is None else stdout
        self.proc = popen_bot(["chat", *args], env, cwd, stdin=slave, stdout=out, stderr=slave, tty=True)
        os.close(slave)
        self.raw = bytearray()
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._pump, daemon=True)
        self.reader.start()

    def _pump(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # the process closed the terminal
                data = b""
            with self.changed:
                self.raw.extend(data)
                self.changed.notify_all()
            if not data:
                return

    def wait_for(self, condition: Callable[[bytes], bool], what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not condition(bytes(self.raw)):
                left = deadline - time.monotonic()
                assert left > 0 and self.reader.is_alive(), f"never saw {what}:\n{self.screen_text()}\n{self.raw!r}"
                self.changed.wait(left)

    def wait_prompt(self, count: int) -> None:
        self.wait_for(lambda raw: raw.count(cli_chat.PROMPT.encode()) >= count, f"prompt #{count}")

    def wait_text(self, text: str) -> None:
        self.wait_for(lambda raw: text in self._screen(raw), repr(text))

    def type(self, keys: str | bytes) -> None:
        os.write(self.master, keys.encode() if isinstance(keys, str) else keys)

    @staticmethod
    def _screen(raw: bytes) -> str:
        term = Term(COLUMNS, LINES)
        term.feed(raw)
        return "\n".join(term.rows())

    def term(self) -> Term:
        term = Term(COLUMNS, LINES)
        term.feed(bytes(self.raw))
        return term

    def screen_text(self) -> str:
        return self._screen(bytes(self.raw))

    def quit(self) -> int:
        self.type(b"\x04")  # Ctrl-D at the prompt
        try:
            return self.proc.wait(30)
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self.reader.join(10)
        if self.master >= 0:
            os.close(self.master)
            self.master = -1


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    d = tmp_path / "work"  # no developer's .env is read
    d.mkdir()
    return d


def test_answers_are_rendered_in_a_terminal(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Text(ANSWER, chunk=4))
    chat = TerminalChat(chat_env(data_dir, fake_anthropic), workdir, "--chat", "tty")
    try:
        chat.wait_prompt(1)
        chat.type("내 이름은 민수야\r")
        chat.wait_prompt(2)  # the answer is complete
        term = chat.term()
        rows = term.rows()
        assert "안녕하세요 민수님!" in rows
        assert [cell.bold for cell in term.styled("민수님")] == [True, True, False]  # by SGR, not asterisks
        assert "**" not in chat.screen_text() and "```" not in chat.screen_text()
        assert "print('안녕')" in rows  # the code line as it is
        assert rows[rows.index("print('안녕')") - 1] == "python"
        assert " • 하나" in rows and " • 둘" in rows
        assert term.cursor_visible
        assert chat.quit() == 0
    finally:
        chat.close()
    # the transcript keeps the Markdown as the model wrote it
    assert [m["content"] for m in stored(data_dir, "tty")] == ["내 이름은 민수야", ANSWER]


@pytest.mark.parametrize("how", ["NO_COLOR", "--plain"])
def test_no_color_and_plain_print_the_raw_markdown(
    how: str, workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    fake_anthropic.reply(Text(ANSWER, chunk=4))
    extra, args = ({"NO_COLOR": "1"}, ()) if how == "NO_COLOR" else ({}, ("--plain",))
    chat = TerminalChat(chat_env(data_dir, fake_anthropic, **extra), workdir, *args)
    try:
        chat.wait_prompt(1)
        chat.type("질문\r")
        chat.wait_prompt(2)
        screen = chat.screen_text()
        assert "안녕하세요 **민수**님!\n\n```python\nprint('안녕')\n```\n\n- 하나\n- `둘`" in screen
        assert b"\x1b[1m" not in chat.raw  # no bold
        assert chat.quit() == 0
    finally:
        chat.close()


def test_a_pipe_gets_the_raw_markdown(workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic):
    fake_anthropic.reply(Text(ANSWER, chunk=4))
    p = run_bot(["chat"], chat_env(data_dir, fake_anthropic), workdir, "질문\n".encode(), 60)
    assert p.returncode == 0, p.stderr.decode()
    out = p.stdout.decode()
    assert f"{ANSWER}\n" in out and "\x1b" not in out


def test_ctrl_c_cancels_the_answer_and_leaves_the_terminal_usable(
    workdir: Path, data_dir: Path, fake_anthropic: FakeAnthropic
):
    gate = threading.Event()
    slow = "첫 문단은 **굵게** 와요.\n\n그리고 이 문단은 끝까지 오지 않아요 " + "아주 긴 나머지 " * 20
    fake_anthropic.reply(Text(slow, chunk=8, gate=gate, gate_after=4))  # holds after 32 characters
    chat = TerminalChat(chat_env(data_dir, fake_anthropic), workdir, "--chat", "sig")
    try:
        chat.wait_prompt(1)
        chat.type("느린 질문\r")
        chat.wait_text("그리고 이 문단은")  # the unfinished paragraph, in the live region
        assert not chat.term().cursor_visible  # (hidden while the answer streams)
        chat.type(b"\x03")  # Ctrl-C, through the terminal
        chat.wait_text(cli_texts.text("cancelled"))
        gate.set()
        chat.wait_prompt(2)
        term = chat.term()
        assert term.cursor_visible
        rows = term.rows()
        assert "첫 문단은 굵게 와요." in rows and all(cell.bold for cell in term.styled("굵게"))
        assert sum("그리고 이 문단은" in row for row in rows) == 1  # what arrived, once
        assert "끝까지 오지 않아요 아주" not in chat.screen_text()  # nothing after the cancel
        # the prompt works: line editing (a typo erased with backspace) and a new answer
        chat.type("두 번재\x7f\x7f번째\r")
        chat.wait_text("echo: 두 번째")
        chat.wait_prompt(3)
        assert chat.term().cursor_visible
        assert chat.quit() == 1  # the cancelled question got no answer: the exit status says so
    finally:
        gate.set()
        chat.close()
    assert [m["content"] for m in stored(data_dir, "sig")] == ["두 번째", "echo: 두 번째"]
