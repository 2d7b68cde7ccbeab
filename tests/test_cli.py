"""The terminal chat loop, driven in-process with piped input and a fake model."""

import asyncio
import io
import os
import signal
import sys
import threading
import tomllib
from importlib import import_module
from pathlib import Path

import pytest

from bot.claude.model import FakeModel, ModelError, Reply
from bot.cli import chat as cli_chat
from bot.cli import commands as cli_commands
from bot.cli import terminal as cli_terminal
from bot.cli import texts as cli_texts
from bot.cli.chat import ChatSession
from bot.cli.loop import LoopThread
from bot.cli.terminal import stream_reader
from bot.cli.texts import env_lang
from bot.core.ask import Assistant
from bot.texts import error_text
from bot.texts import t as bot_text
from memory.transcript import Transcript
from tests.conftest import ROOT
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.http import hang_guard
from tests.helpers import convo


def run_chat(assistant: Assistant, *lines: str, lang: str = "ko", chat: str = "local"):
    """Run a whole session over ``lines`` (as piped stdin); returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    session = ChatSession(assistant, chat, out=out, err=err, lang=lang)
    stdin = io.StringIO("".join(f"{line}\n" for line in lines))
    rc = session.run(stream_reader(stdin))
    return rc, out.getvalue(), err.getvalue()


def contents(transcript: Transcript, chat: str = "local") -> list[str]:
    return [e.data["content"] for e in transcript.read(chat)]


def test_a_conversation_and_every_command(assistant: Assistant, transcript: Transcript, fake_model: FakeModel):
    fake_model.queue("기억해 둘게요.", "4719 였어요.")
    rc, out, err = run_chat(
        assistant,
        "",
        "   ",
        "내 자전거 자물쇠 번호는 4719야",
        "/history",
        "/summary",
        "/bogus",
        "/help",
        "내 자물쇠 번호 뭐였지?",
        "/quit",
        "after quit: never sent",
    )
    assert rc == 0
    # empty lines, commands and the line after /quit never reached the model
    assert [c.last_user_text for c in fake_model.calls] == ["내 자전거 자물쇠 번호는 4719야", "내 자물쇠 번호 뭐였지?"]
    assert fake_model.calls[1].messages[:2] == [
        {"role": "user", "content": "내 자전거 자물쇠 번호는 4719야"},
        {"role": "assistant", "content": "기억해 둘게요."},
    ]
    assert contents(transcript) == [
        "내 자전거 자물쇠 번호는 4719야",
        "기억해 둘게요.",
        "내 자물쇠 번호 뭐였지?",
        "4719 였어요.",
    ]
    assert [e.data.get("via") for e in transcript.read("local")] == ["terminal", None, "terminal", None]
    # banner, answers and command output in order
    assert "대화 local" in out and str(transcript.root.resolve()) in out and "새 대화예요." in out
    history = "나: 내 자전거 자물쇠 번호는 4719야\nClaude: 기억해 둘게요."
    order = [
        "/help 명령 보기",
        "기억해 둘게요.\n",
        history,
        cli_texts.text("summary.none"),
        "명령:\n  /history",
        "4719 였어요.\n",
    ]
    positions = [out.index(piece) for piece in order]
    assert positions == sorted(positions)
    for command in cli_commands.COMMANDS:
        assert command in cli_texts.text("help")
    # an unknown command gets a hint listing the commands, on stderr
    assert err.strip() == cli_texts.text("unknown", cmd="/bogus", commands=" ".join(cli_commands.COMMANDS))


def test_end_of_input_ends_the_session(assistant: Assistant, transcript: Transcript, fake_model: FakeModel):
    rc, out, _ = run_chat(assistant, "하나", "둘")
    assert rc == 0
    assert contents(transcript) == ["하나", "echo: 하나", "둘", "echo: 둘"]
    assert out.rstrip().endswith("echo: 둘")


def test_banner_says_the_conversation_continues(assistant: Assistant, transcript: Transcript):
    transcript.append("4242", [{"role": "user", "content": "텔레그램에서"}, {"role": "assistant", "content": "네"}])
    _, out, _ = run_chat(assistant, "/history", chat="4242")
    assert "대화 4242" in out and cli_texts.text("banner.continue", n=2) in out
    assert "나: 텔레그램에서\nClaude: 네" in out


def test_empty_history_and_slash_escape(assistant: Assistant, fake_model: FakeModel):
    _, out, _ = run_chat(assistant, "/history", "//usr 는 무슨 폴더야?")
    assert cli_texts.text("history.empty") in out
    assert fake_model.calls[0].last_user_text == "/usr 는 무슨 폴더야?"


class RecordingStream(io.StringIO):
    """Records every write and whether it was flushed before the next one."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def write(self, s: str) -> int:
        self.events.append(s)
        return super().write(s)

    def flush(self) -> None:
        self.events.append("<flush>")
        super().flush()


def test_answer_is_printed_as_it_streams(assistant: Assistant, fake_model: FakeModel):
    fake_model.chunk = 4
    fake_model.queue("one two three four")
    out = RecordingStream()
    session = ChatSession(assistant, "local", out=out, err=io.StringIO())
    session.run(stream_reader(io.StringIO("stream please\n")))
    start = out.events.index("one ")
    streamed = out.events[start : start + 10]
    # each delta is written on its own and flushed at once, then the line is ended
    assert streamed == ["one ", "<flush>", "two ", "<flush>", "thre", "<flush>", "e fo", "<flush>", "ur", "<flush>"]
    assert out.events[start + 10] == "\n"


def test_reset_archives_and_the_next_question_starts_fresh(
    assistant: Assistant, transcript: Transcript, fake_model: FakeModel
):
    rc, out, _ = run_chat(assistant, "/reset", "오래된 질문", "/reset", "새 질문", "/history")
    assert rc == 0
    archived = list((transcript.dir / "archive").glob("local.*.jsonl"))
    assert len(archived) == 1
    assert cli_texts.text("reset.empty") in out  # the first /reset had nothing to archive
    assert cli_texts.text("reset.done", name=archived[0].name) in out
    assert "오래된 질문" in archived[0].read_text(encoding="utf-8")
    assert fake_model.calls[-1].messages == [{"role": "user", "content": "새 질문"}]
    assert contents(transcript) == ["새 질문", "echo: 새 질문"]
    assert out.rstrip().endswith("나: 새 질문\nClaude: echo: 새 질문")


def test_retry_replaces_the_previous_answer(assistant: Assistant, transcript: Transcript, fake_model: FakeModel):
    fake_model.queue("a1", "b1", "b2")
    rc, out, _ = run_chat(assistant, "A", "B", "/retry", "C")
    assert rc == 0
    assert [m["content"] for m in fake_model.calls[2].messages] == ["A", "a1", "B"]  # re-sent without b1
    assert [m["content"] for m in fake_model.calls[3].messages] == ["A", "a1", "B", "b2", "C"]
    assert out.index(cli_texts.text("retry.again")) < out.index("b2\n")
    assert contents(transcript) == ["A", "a1", "B", "b1", "B", "b2", "C", "echo: C"]


def test_retry_with_nothing_to_retry(assistant: Assistant, fake_model: FakeModel):
    _, _, err = run_chat(assistant, "/retry")
    assert bot_text("retry.nothing") in err
    assert fake_model.calls == []


def test_api_error_then_retry(assistant: Assistant, transcript: Transcript, fake_model: FakeModel):
    seen_at_retry: list[bool] = []

    def answer(system, messages):
        seen_at_retry.append(transcript.exists("local"))
        return "이번엔 됐어요."

    fake_model.queue(ModelError("overloaded", "HTTP 529"), answer)
    rc, out, err = run_chat(assistant, "잃어버리면 안 되는 질문", "/history", "/retry")
    assert rc == 0
    # one clear line, with the retry hint
    assert err.splitlines() == [f"{error_text('overloaded')} {cli_texts.text('retry.hint')}"]
    # nothing was stored by the failure (checked by the model while the retry was sent)
    assert seen_at_retry == [False]
    assert cli_texts.text("history.empty") in out
    # /retry sent the same question, with no history, and stored exactly one pair
    assert [c.messages for c in fake_model.calls] == [[{"role": "user", "content": "잃어버리면 안 되는 질문"}]] * 2
    assert cli_texts.text("retry.start", text="잃어버리면 안 되는 질문") in out
    assert contents(transcript) == ["잃어버리면 안 되는 질문", "이번엔 됐어요."]


def test_english_texts(assistant: Assistant, fake_model: FakeModel):
    fake_model.queue(ModelError("auth"))
    _, out, err = run_chat(assistant, "hello", "/summary", lang="en")
    # worded for the terminal: the setting to fix, no admin, no /retry (it would fail the same way)
    assert err.strip() == error_text("auth", "en", where="terminal")
    assert "ANTHROPIC_API_KEY" in err and "admin" not in err and "/retry" not in err
    assert "No summary yet" in out and "Claude terminal chat" in out


@pytest.mark.parametrize(
    ("env", "lang"),
    [
        ({}, "ko"),
        ({"LANG": "ko_KR.UTF-8"}, "ko"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "de_DE.UTF-8"}, "en"),
        ({"LANG": "C.UTF-8"}, "ko"),
        ({"LANG": "POSIX"}, "ko"),
        ({"LC_ALL": "ko_KR.UTF-8", "LANG": "en_US.UTF-8"}, "ko"),
        ({"LC_MESSAGES": "en_GB.UTF-8", "LANG": "ko_KR.UTF-8"}, "en"),
    ],
)
def test_language_from_the_locale(env, lang):
    assert env_lang(env) == lang


def test_summary_is_shown_when_there_is_one(transcript: Transcript, fake_model: FakeModel):
    class WithSummary(Assistant):
        def summary(self, chat_id):
            return "사용자의 자물쇠 번호는 4719."

    _, out, _ = run_chat(WithSummary(transcript=transcript, model=fake_model), "/summary")
    assert f"{cli_texts.text('summary.header')}\n사용자의 자물쇠 번호는 4719." in out
    assert cli_texts.text("banner.summary") in out and cli_texts.text("banner.new") not in out


def test_a_failing_command_does_not_end_the_loop(transcript: Transcript, fake_model: FakeModel):
    class Unreadable(Assistant):
        def history(self, chat_id, **kw):
            raise PermissionError("chats/local.jsonl")

    rc, out, err = run_chat(Unreadable(transcript=transcript, model=fake_model), "/history", "/summary")
    assert rc == 0
    assert err.strip() == f"{error_text('internal')} (PermissionError)"
    assert cli_texts.text("summary.none") in out  # the next command still ran


def test_an_unexpected_error_does_not_end_the_loop(assistant: Assistant, transcript: Transcript, fake_model: FakeModel):
    fake_model.queue(RuntimeError("boom"))
    rc, out, err = run_chat(assistant, "첫 질문", "두 번째")
    assert rc == 1  # a question went unanswered
    assert err.strip() == f"{error_text('internal')} (RuntimeError)"
    assert contents(transcript) == ["두 번째", "echo: 두 번째"]


def test_maintain_runs_after_each_answer_was_printed(transcript: Transcript, fake_model: FakeModel):
    out = io.StringIO()
    seen: list[tuple[str, bool]] = []

    class Watching(Assistant):
        async def maintain(self, chat_id, *, user_id=None, wait=True):
            seen.append((out.getvalue(), wait))

    session = ChatSession(Watching(transcript=transcript, model=fake_model), "local", out=out)
    session.run(stream_reader(io.StringIO("q1\nq2\n")))
    assert len(seen) == 2
    assert seen[0][0].endswith("echo: q1\n") and seen[1][0].endswith("echo: q2\n")
    assert [wait for _, wait in seen] == [False, False]  # started in the background, never awaited


class SlowModel(FakeModel):
    """The user presses Ctrl-C (a real SIGINT) while the first answer is on its way."""

    def __init__(self) -> None:
        super().__init__()
        self.slow = True
        self.cancelled = 0

    async def complete(
        self, *, system, messages, max_tokens=None, on_text=None, tools=None, tool_choice=None, on_tool=None, **kw
    ) -> Reply:
        if self.slow:
            self.slow = False
            await on_text("부분 답…")
            os.kill(os.getpid(), signal.SIGINT)
            try:
                await asyncio.Event().wait()  # until Ctrl-C cancels the answer
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        return await super().complete(system=system, messages=messages, max_tokens=max_tokens, on_text=on_text)


def test_ctrl_c_during_an_answer_cancels_it(transcript: Transcript):
    model = SlowModel()
    rc, out, err = run_chat(
        Assistant(transcript=transcript, model=model),
        "느린 질문",
        "/history",
        "/retry",
    )
    assert rc == 0 and model.cancelled == 1
    assert err.strip() == cli_texts.text("cancelled")
    assert "부분 답…\n" in out  # the partial answer's line was ended
    # nothing was stored by the cancelled answer; /retry sent the cancelled question again
    assert out.index(cli_texts.text("history.empty")) < out.index("echo: 느린 질문")
    assert model.calls[-1].messages == [{"role": "user", "content": "느린 질문"}]
    assert contents(transcript) == ["느린 질문", "echo: 느린 질문"]
    # and Ctrl-C is back to Python's default once the answer is done
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_at_the_prompt_clears_the_line_and_ctrl_d_leaves(assistant: Assistant, fake_model: FakeModel):
    reads: list[str] = []
    keys: list[str | BaseException | None] = ["하나", KeyboardInterrupt(), "둘", None]  # None: Ctrl-D

    def read(prompt: str) -> str | None:
        reads.append(prompt)
        key = keys.pop(0)
        if isinstance(key, BaseException):
            raise key
        return key

    out = io.StringIO()
    rc = ChatSession(assistant, "local", out=out, interactive=True).run(read)
    assert rc == 0 and reads == [cli_chat.PROMPT] * 4
    assert [c.last_user_text for c in fake_model.calls] == ["하나", "둘"]  # the session went on after Ctrl-C
    assert out.getvalue().endswith(f"echo: 둘\n\n\n{cli_texts.text('bye')}\n")


def test_ctrl_c_reading_piped_input_stops_with_status_130(assistant: Assistant, fake_model: FakeModel):
    lines: list[str | None] = ["하나"]

    def read(prompt: str) -> str | None:
        if lines:
            return lines.pop()
        raise KeyboardInterrupt

    rc = ChatSession(assistant, "local", out=io.StringIO()).run(read)
    assert rc == cli_chat.INTERRUPTED == 130 and len(fake_model.calls) == 1


class EndingModel(FakeModel):
    """The user presses Ctrl-C (a real SIGINT) just as the answer is complete: nothing is left to cancel."""

    async def complete(self, *, system, messages, max_tokens=None, on_text=None, **kw) -> Reply:
        reply = await super().complete(system=system, messages=messages, max_tokens=max_tokens, on_text=on_text)
        os.kill(os.getpid(), signal.SIGINT)
        return reply


def test_a_ctrl_c_as_an_answer_ends_is_not_lost_and_stops_piped_input(transcript: Transcript):
    """The Ctrl-C found no answer or command left to cancel: it is the prompt's, so the script stops (130)
    after the answer was stored, and the next line is not asked (it was lost, or raised out of the session)."""
    model = EndingModel()
    rc, out, err = run_chat(Assistant(transcript=transcript, model=model), "하나", "둘")
    assert rc == cli_chat.INTERRUPTED
    assert [c.last_user_text for c in model.calls] == ["하나"]
    assert "echo: 하나" in out and contents(transcript) == ["하나", "echo: 하나"]


def test_a_second_ctrl_c_while_one_is_being_answered_does_not_cut_it_short():
    class Pressed:  # a future whose waiter gets a Ctrl-C first
        def __init__(self) -> None:
            self.waits = 0

        def result(self) -> int:
            self.waits += 1
            if self.waits == 1:
                raise KeyboardInterrupt
            return 7

    future = Pressed()
    assert cli_chat._through_ctrl_c(future) == 7 and future.waits == 2  # type: ignore[arg-type]


# -- main(): argv, settings, the console script -------------------------------------------
def console_script_main():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, attr = scripts["assistant-chat"].partition(":")
    return getattr(import_module(module), attr)


def test_console_script_parses_sys_argv(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    main = console_script_main()
    assert main is cli_terminal.main
    monkeypatch.setattr(sys, "argv", ["assistant-chat", "--chat", "no spaces/please"])
    assert main() == 2
    assert "invalid chat id 'no spaces/please'" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["assistant-chat", "--help"])
    assert main() == 0
    usage = capsys.readouterr().out
    assert usage.startswith("usage: assistant-chat") and "--chat ID" in usage and "--data-dir" in usage
    assert main(["--no-such-option"]) == 2


def test_main_needs_the_anthropic_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.chdir(tmp_path)  # no .env here
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.setenv("BOT_LANG", "en")
    assert cli_terminal.main(["--chat", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ANTHROPIC_API_KEY is not set" in err and "TELEGRAM" not in err


def test_main_runs_a_session_with_the_real_client(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fake_anthropic: FakeAnthropic,
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "0")
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    other = tmp_path / "elsewhere"
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello from the keyboard\n/quit\n"))
    monkeypatch.setattr(sys, "argv", ["assistant-chat", "--chat", "kbd", "--data-dir", str(other)])
    assert cli_terminal.main() == 0
    captured = capsys.readouterr()
    # stdout is not a terminal: the answer only, no banner (and stderr is no terminal either)
    assert captured.out == "echo: hello from the keyboard\n" and captured.err == ""
    assert convo(fake_anthropic.requests[0]) == [{"role": "user", "content": "hello from the keyboard"}]
    assert contents(Transcript(other), "kbd") == ["hello from the keyboard", "echo: hello from the keyboard"]


def test_facts_commands_and_tool_calls_in_the_terminal(assistant: Assistant, fake_model: FakeModel):
    from bot.claude.model import tool_call

    fake_model.queue(tool_call("remember", {"text": "이름은 준"}, text="기억할게요."), "반가워요, 준!")
    rc, out, err = run_chat(
        assistant,
        "/memory",
        "/remember 커피는 디카페인만",
        "내 이름은 준이야",
        "/memory",
        "/history",
        "/forget 1",
        "/forget 9",
        "/forget all",
        "/memory",
    )
    assert rc == 0 and err == ""
    assert out.count("아직 기억하고 있는 사실이 없어요") == 2  # before, and after /forget all
    assert "🧠 기억했어요 (1번): 커피는 디카페인만" in out
    # the fact the tool added, after the command's, each with who added it and how
    assert "1. 커피는 디카페인만 (주인(터미널) · /remember)\n2. 이름은 준 (주인(터미널)의 요청으로 Claude가)" in out
    # text before and after the tool call, as streamed, with what the tool was doing between them
    assert "기억할게요.\n\n📝 기억해 두는 중…\n\n반가워요, 준!" in out
    assert "🔧 remember: 이름은 준" in out and '"text"' not in out  # /history shows the call compactly
    assert "🗑 잊었어요 (1번): 커피는 디카페인만" in out and "9번 사실은 없어요" in out
    assert "1개를 모두 잊었어요" in out
    assert len(fake_model.calls) == 2  # only the question went to the model (two rounds)


def test_model_command_shows_switches_and_keeps_the_model(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fake_anthropic: FakeAnthropic,
):
    """/model in the terminal: the model with its capabilities, a switch, and the switch after a restart."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "0")
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    data = tmp_path / "data"
    argv = ["assistant-chat", "--chat", "kbd", "--data-dir", str(data)]
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(sys, "stdin", io.StringIO("/model\n/model claude-nonexistent-9\n/model claude-opus-5-5\nhi\n"))
    assert cli_terminal.main() == 0
    out = capsys.readouterr().out
    assert "Current model: claude-sonnet-5-5" in out and "context: 1,000,000 tokens" in out
    assert "effort: low, medium, high, xhigh, max" in out and "claude-opus-5-5" in out
    assert "There is no model claude-nonexistent-9" in out
    assert "Switched to claude-opus-5-5" in out
    assert fake_anthropic.requests[-1]["model"] == "claude-opus-5-5"

    monkeypatch.setattr(sys, "stdin", io.StringIO("again\n"))  # a restart keeps the choice
    assert cli_terminal.main() == 0
    assert fake_anthropic.requests[-1]["model"] == "claude-opus-5-5" and fake_anthropic.rejected == []
    # a changed ANTHROPIC_MODEL wins over a choice made while another model was configured
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-haiku-5-5")
    monkeypatch.setattr(sys, "stdin", io.StringIO("and now\n"))
    assert cli_terminal.main() == 0
    assert fake_anthropic.requests[-1]["model"] == "claude-haiku-5-5"


def test_stored_text_cannot_drive_the_terminal(transcript: Transcript, fake_model: FakeModel, clock, data_dir):
    """Escape sequences in stored or received text (OSC 52 writes the clipboard, ESC[2J clears the screen)
    are printed visibly by /history, /memory, /search and /reminders, as the streamed answer is."""
    from datetime import UTC, datetime

    from memory.recall import RecallIndex
    from memory.reminders import ReminderStore

    chat = "4242"
    osc52, clear = "\x1b]52;c;cm0gLXJmIH4=\x07", "\x1b[2J"
    transcript.append(chat, [{"role": "user", "content": f"금고 번호{osc52} 알려 줘{clear}"},
                             {"role": "assistant", "content": f"몰라요{clear}\r덮어쓰기"}])  # fmt: skip
    index = RecallIndex(data_dir)
    assistant = Assistant(transcript=transcript, model=fake_model, now=clock, recall=index)
    assistant.facts.add(chat, f"생일{osc52}은 3월")
    store = ReminderStore(data_dir)
    store.add(chat, datetime(2027, 1, 1, tzinfo=UTC), f"약{clear} 먹기", via="terminal")
    out, err = io.StringIO(), io.StringIO()
    session = ChatSession(assistant, chat, out=out, err=err, reminders=store)
    lines = ["/history", "/memory", "/search 금고", "/reminders"]
    assert session.run(stream_reader(io.StringIO("".join(f"{line}\n" for line in lines)))) == 0
    index.close()
    shown = out.getvalue() + err.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown and "\r" not in shown
    assert shown.count("␛]52;c;cm0gLXJmIH4=␇") >= 2  # the history and the search show it, made visible
    assert "생일␛]52" in shown and "약␛[2J 먹기" in shown and "몰라요␛[2J␍덮어쓰기" in shown


class KillingWhileStarting(SlowModel):
    """SlowModel's Ctrl-C, telling when it was sent (``killed``): the test holds the main thread inside the
    command's start (``LoopThread.submit``) until then, as a busy machine can, the loop's thread reaching the
    answer before the main thread is back waiting for the command."""

    def __init__(self) -> None:
        super().__init__()
        self.killed = threading.Event()

    async def complete(self, *, system, messages, max_tokens=None, on_text=None, **kw) -> Reply:
        if self.slow:
            self.slow = False
            await on_text("부분 답…")
            os.kill(os.getpid(), signal.SIGINT)
            self.killed.set()
            try:
                await asyncio.Event().wait()  # until Ctrl-C cancels the answer
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        return await FakeModel.complete(self, system=system, messages=messages, max_tokens=max_tokens, on_text=on_text)


def test_a_ctrl_c_during_the_answer_cancels_it_even_before_the_main_thread_waits_for_it(
    transcript: Transcript, monkeypatch
):
    model = KillingWhileStarting()
    submit = LoopThread.submit

    def slow_to_return(self, coro):
        future = submit(self, coro)
        if not model.killed.is_set():
            model.killed.wait(hang_guard(10))  # the SIGINT lands here, in the main thread
        return future

    monkeypatch.setattr(LoopThread, "submit", slow_to_return)
    rc, out, err = run_chat(Assistant(transcript=transcript, model=model), "느린 질문", "/retry")
    assert rc == 0 and model.cancelled == 1  # the answer was cancelled, the piped script went on
    assert err.strip() == cli_texts.text("cancelled")
    assert contents(transcript) == ["느린 질문", "echo: 느린 질문"]
