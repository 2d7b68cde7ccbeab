"""The terminal chat: ``python -m bot chat`` (or the ``assistant-chat`` console script).

The same ``Assistant`` service (bot/core/ask.py) and the same files as the Telegram bot, so a
conversation can be continued at the keyboard and the assistant can be tried without Telegram.
The chat loop never touches storage itself: it reads lines, calls the service and prints.

Event loop: one asyncio loop (an ``asyncio.Runner``) serves the whole session. Lines are read
with ``input()`` in the main thread *between* turns, which is what makes readline line editing
and Ctrl-C / Ctrl-D at the prompt behave (a reader thread blocked in ``input()`` can be neither
interrupted nor joined); each line is then handled with ``runner.run(...)`` on that same loop.
While an answer is on its way, Ctrl-C cancels just that answer and returns to the prompt.

Language: Korean by default; English when the locale (``LC_ALL``, ``LC_MESSAGES`` or ``LANG``,
first one set) names another language than Korean (``C``/``POSIX`` count as unset).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from bot.claude.model import ModelError, TextCallback
from bot.commands.facts import forget_text, memory_text, remember_text
from bot.commands.reminders import pending_lines, reminders_text
from bot.commands.search import search_text
from bot.core.ask import Answer, Assistant, NothingToRetry, Question
from bot.texts import error_text, lang_of, lookup
from bot.texts import t as bot_text
from bot.tools.reminders import is_telegram_chat
from memory.content import display_text
from memory.files import ensure_private_dir
from memory.reminders import ReminderFileError, ReminderStore
from memory.transcript import InvalidChatId, check_chat_id

if TYPE_CHECKING:
    from bot.config import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_CHAT = "local"
HISTORY_FILE = ".chat_history"  # readline input history, under DATA_DIR, mode 0600
HISTORY_LENGTH = 1000
PROMPT = "> "
COMMANDS = (
    "/help", "/history", "/summary", "/search", "/memory", "/remember", "/forget", "/reminders", "/reset",
    "/retry", "/quit",
)  # fmt: skip
ReadLine = Callable[[str], str | None]
"""Reads one line (without its newline) after showing the prompt; None at end of input.
Raises KeyboardInterrupt on Ctrl-C."""

TEXTS: dict[str, dict[str, str]] = {
    "banner": {
        "ko": "Claude 터미널 채팅 · 대화 {chat} · 데이터 {data} · 모델 {model}",
        "en": "Claude terminal chat · chat {chat} · data {data} · model {model}",
    },
    "banner.continue": {
        "ko": "이전 대화를 이어서 해요 (최근 메시지 {n}개를 기억해요).",
        "en": "Continuing the conversation ({n} recent messages in memory).",
    },
    "banner.new": {"ko": "새 대화예요.", "en": "A new conversation."},
    "banner.summary": {
        "ko": "더 오래된 대화는 요약으로 기억해요 (/summary).",
        "en": "Older conversation is remembered as a summary (/summary).",
    },
    "banner.help": {
        "ko": "/help 명령 보기 · /quit 또는 Ctrl-D 로 끝내기",
        "en": "/help for commands · /quit or Ctrl-D to leave",
    },
    "help": {
        "ko": "명령:\n"
        "  /history   다음 질문과 함께 보낼 최근 대화 보기\n"
        "  /summary   오래된 대화의 요약 보기\n"
        "  /search <말>       지난 대화 전체에서 찾기\n"
        "  /memory    기억하고 있는 사실 보기 (새 대화를 시작해도 남아요)\n"
        "  /remember <내용>   사실 하나 기억시키기\n"
        "  /forget <번호>     사실 잊게 하기 (/forget all: 모두, 파일은 보관)\n"
        "  /reminders         예정된 알림 보기 (/reminders cancel <번호>: 취소; 알림은 텔레그램 봇이 보내요)\n"
        "  /reset     새 대화 시작 (이전 대화는 보관, 지우지 않아요)\n"
        "  /retry     마지막 질문 다시 보내기 (실패·취소한 질문, 아니면 마지막 답을 새로 받기)\n"
        "  /quit      끝내기 (Ctrl-D, 프롬프트에서 Ctrl-C 도 같아요)\n"
        "  /help      이 도움말\n"
        "빈 줄은 무시해요. '/' 로 시작하는 질문은 '//' 로 시작해 보내세요. 답을 받는 중 Ctrl-C 는 그 답만 취소해요.",
        "en": "Commands:\n"
        "  /history   show the recent conversation sent with the next question\n"
        "  /summary   show the summary of older conversation\n"
        "  /search <words>    search all earlier conversations\n"
        "  /memory    show the facts remembered about you (kept across /reset)\n"
        "  /remember <text>   make the assistant remember a fact\n"
        "  /forget <number>   make it forget a fact (/forget all: every one; the file is archived)\n"
        "  /reminders         pending reminders (/reminders cancel <number>; the Telegram bot delivers them)\n"
        "  /reset     start a new conversation (the old one is archived, nothing deleted)\n"
        "  /retry     send the last question again (a failed or cancelled one, else get a new last answer)\n"
        "  /quit      leave (so do Ctrl-D, and Ctrl-C at the prompt)\n"
        "  /help      this help\n"
        "Empty lines are ignored. Start a question that begins with '/' with '//'. "
        "Ctrl-C while an answer arrives cancels just that answer.",
    },
    "history.empty": {"ko": "(아직 대화가 없어요)", "en": "(no conversation yet)"},
    "history.header": {
        "ko": "다음 질문과 함께 보낼 최근 대화 (메시지 {n}개):",
        "en": "Recent conversation sent with the next question ({n} messages):",
    },
    "role.user": {"ko": "나", "en": "you"},
    "role.assistant": {"ko": "Claude", "en": "Claude"},
    "summary.none": {
        "ko": "아직 요약이 없어요. 대화가 길어지면 오래된 부분이 요약돼요.",
        "en": "No summary yet. Older parts are summarized once the conversation grows.",
    },
    "summary.header": {"ko": "대화 요약:", "en": "Summary:"},
    "reset.done": {
        "ko": "새 대화를 시작해요. 이전 대화는 archive/{name} 으로 보관했어요 (지우지 않았어요).",
        "en": "Started a new conversation. The previous one was archived as archive/{name} (nothing deleted).",
    },
    "reset.empty": {"ko": "이미 새 대화예요.", "en": "This is already a new conversation."},
    "retry.start": {"ko": "↻ 다시 보내는 중: {text}", "en": "↻ Sending again: {text}"},
    "retry.again": {"ko": "↻ 마지막 질문을 다시 보내는 중…", "en": "↻ Sending the last question again…"},
    "retry.hint": {"ko": "(/retry 로 다시 보낼 수 있어요)", "en": "(/retry sends it again)"},
    "cancelled": {
        "ko": "⏹ 답을 취소했어요. /retry 로 다시 보낼 수 있어요.",
        "en": "⏹ Answer cancelled. /retry sends it again.",
    },
    "interrupted": {"ko": "⏹ 중단했어요.", "en": "⏹ Interrupted."},
    "unknown": {
        "ko": "모르는 명령이에요: {cmd}. 명령: {commands} (/help)",
        "en": "Unknown command: {cmd}. Commands: {commands} (/help)",
    },
    "bye": {"ko": "안녕히 가세요.", "en": "Bye."},
    # -- reminders (set here, delivered by the Telegram bot) --
    "banner.reminders": {
        "ko": "⏰ 예정된 알림 {n}개 (텔레그램 봇이 보내요):",
        "en": "⏰ {n} pending reminders (the Telegram bot delivers them):",
    },
    "reminders.none_here": {
        "ko": "이 대화는 텔레그램 채팅이 아니라서 알림이 없어요. 알림은 --chat <텔레그램 채팅 ID> 로 맞춰요.",
        "en": "This conversation is not a Telegram chat, so it has no reminders; use --chat <Telegram chat id>.",
    },
}


def text(key: str, lang: str = "ko", **kwargs: Any) -> str:
    """A terminal text in ``lang`` (falls back to Korean), formatted with ``kwargs``."""
    return lookup(TEXTS, key, lang, **kwargs)


def env_lang(env: Mapping[str, str] | None = None) -> str:
    """'ko' or 'en' from the locale variables; Korean unless another language is named."""
    env = os.environ if env is None else env
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "").strip()
        if value:
            break
    else:
        return "ko"
    if value.split(".")[0].split("@")[0].upper() in ("C", "POSIX"):
        return "ko"
    return lang_of(value)


class _Cancelled(Exception):
    """The user pressed Ctrl-C while an answer was on its way."""


class ChatSession:
    """One terminal conversation with one chat of the Assistant.

    ``out`` receives answers and command output, ``err`` one-line error messages. With
    ``interactive`` the prompt and a goodbye are shown; with ``catch_sigint`` Ctrl-C during
    an answer cancels it (needs the main thread).
    """

    def __init__(
        self,
        assistant: Assistant,
        chat_id: int | str,
        *,
        out: TextIO,
        err: TextIO | None = None,
        lang: str = "ko",
        interactive: bool = False,
        catch_sigint: bool = False,
        reminders: ReminderStore | None = None,
    ) -> None:
        self.assistant = assistant
        self.reminders = reminders
        self.chat_id = check_chat_id(chat_id)
        self.out = out
        self.err = err if err is not None else out
        self.lang = lang
        self.interactive = interactive
        self.catch_sigint = catch_sigint
        self._cancelled: str | None = None  # a question cancelled with Ctrl-C: /retry sends it
        self._failed: str | None = None  # a question whose answer failed (the Assistant re-sends it)
        self._midline = False  # the cursor is not at the start of a line (after streamed text)
        self._streamed = False

    # -- output --------------------------------------------------------------------
    @property
    def prompt(self) -> str:
        return PROMPT if self.interactive else ""

    def say(self, message: str) -> None:
        self._end_line()
        self.out.write(message + "\n")
        self.out.flush()

    def error(self, message: str) -> None:
        self._end_line()
        self.err.write(message + "\n")
        self.err.flush()

    def _end_line(self) -> None:
        if self._midline:
            self.out.write("\n")
            self.out.flush()
            self._midline = False

    async def _on_text(self, delta: str) -> None:
        if not delta:
            return
        self.out.write(delta)
        self.out.flush()
        self._streamed = True
        self._midline = not delta.endswith("\n")

    def banner(self) -> None:
        root = Path(self.assistant.transcript.root).resolve()
        model = getattr(self.assistant.model, "name", "?")
        self.say(text("banner", self.lang, chat=self.chat_id, data=root, model=model))
        try:
            n = len(self.assistant.history(self.chat_id))
            summarized = bool(self.assistant.summary(self.chat_id))
        except Exception:  # unreadable memory is reported at the first question, not here
            log.warning("chat %s: could not read the memory", self.chat_id, exc_info=True)
            n, summarized = 0, False
        self.say(text("banner.continue", self.lang, n=n) if n or summarized else text("banner.new", self.lang))
        if summarized:
            self.say(text("banner.summary", self.lang))
        self.show_pending_reminders()
        self.say(text("banner.help", self.lang))

    def show_pending_reminders(self) -> None:
        """At start: the chat's pending reminders (the Telegram bot delivers them)."""
        if self.reminders is None:
            return
        try:
            lines = pending_lines(self.reminders, self.chat_id, self.lang, self.assistant.timezone)
        except ReminderFileError as e:
            log.warning("reminders: %s", e)
            return
        if lines:
            self.say("\n".join([text("banner.reminders", self.lang, n=len(lines)), *(f"  {x}" for x in lines)]))

    def goodbye(self, *, after_prompt: bool = False) -> None:
        if self.interactive:
            if after_prompt:
                self.out.write("\n")  # Ctrl-D / Ctrl-C leave the cursor after the prompt
            self.say(text("bye", self.lang))

    # -- the loop ------------------------------------------------------------------
    def run(self, read_line: ReadLine) -> int:
        """Read and handle lines until /quit, end of input or Ctrl-C at the prompt. Returns 0."""
        with asyncio.Runner() as runner:
            self.banner()
            while True:
                try:
                    line = read_line(self.prompt)
                except KeyboardInterrupt:
                    self.goodbye(after_prompt=True)
                    return 0
                if line is None:
                    self.goodbye(after_prompt=True)
                    return 0
                try:
                    keep_going = runner.run(self.handle(line))
                except KeyboardInterrupt:
                    # Ctrl-C outside an answer (e.g. a second one, or during a command)
                    _drop_pending(runner)
                    self.error(text("interrupted", self.lang))
                    continue
                if not keep_going:
                    self.goodbye()
                    return 0

    async def handle(self, line: str) -> bool:
        """Handle one input line; False when the session should end. Errors are printed, never raised."""
        try:
            return await self._handle(line)
        except Exception as e:  # the loop survives anything; details go to the log (-v)
            log.warning("chat %s: %r failed", self.chat_id, line[:40], exc_info=True)
            self.error(f"{error_text('internal', self.lang)} ({type(e).__name__})")
            return True

    async def _handle(self, line: str) -> bool:
        line = line.strip()
        if not line:
            return True
        if line.startswith("//"):
            await self.send(line[1:])
            return True
        if not line.startswith("/"):
            await self.send(line)
            return True
        command = line.split()[0].lower()
        if command in ("/quit", "/exit"):
            return False
        if command == "/help":
            self.say(text("help", self.lang))
        elif command == "/history":
            self.show_history()
        elif command == "/summary":
            self.show_summary()
        elif command == "/search":
            argument = line.split(maxsplit=1)[1] if " " in line else ""
            self.say(await asyncio.to_thread(search_text, self.assistant, self.chat_id, argument, self.lang))
        elif command == "/reminders":
            await self.reminders_command(line.split(maxsplit=1)[1] if " " in line else "")
        elif command in ("/memory", "/remember", "/forget"):
            await self.facts_command(command, line.split(maxsplit=1)[1] if " " in line else "")
        elif command == "/reset":
            await self.reset()
        elif command == "/retry":
            await self.retry()
        else:
            self.error(text("unknown", self.lang, cmd=command, commands=" ".join(COMMANDS)))
        return True

    # -- commands ------------------------------------------------------------------
    async def send(self, question: str) -> None:
        """Ask ``question`` and stream the answer."""

        def start(on_text: TextCallback) -> Awaitable[Answer]:
            return self.assistant.ask(self.chat_id, Question(question, meta={"via": "terminal"}), on_text=on_text)

        await self._turn(start, question=question)

    async def retry(self) -> None:
        if self._cancelled is not None:
            # the Assistant never saw a cancelled question fail, so it is simply asked again
            question, self._cancelled = self._cancelled, None
            self.say(text("retry.start", self.lang, text=question))
            await self.send(question)
            return
        if self._failed is not None:
            self.say(text("retry.start", self.lang, text=self._failed))
        else:
            self.say(text("retry.again", self.lang))

        async def start(on_text: TextCallback) -> Answer:
            _, answer = await self.assistant.retry(self.chat_id, on_text=on_text)
            return answer

        await self._turn(start, question=None)

    async def reset(self) -> None:
        self._cancelled = self._failed = None
        name = await self.assistant.reset(self.chat_id)
        self.say(text("reset.done", self.lang, name=name) if name else text("reset.empty", self.lang))

    async def facts_command(self, command: str, argument: str) -> None:
        """/memory, /remember <text>, /forget <n|all> — the same texts as in Telegram."""
        run = {"/memory": lambda: memory_text(self.assistant, self.chat_id, self.lang)}
        run["/remember"] = lambda: remember_text(self.assistant, self.chat_id, argument, self.lang)
        run["/forget"] = lambda: forget_text(self.assistant, self.chat_id, argument, self.lang)
        self.say(await asyncio.to_thread(run[command]))

    async def reminders_command(self, argument: str) -> None:
        """/reminders [cancel <id>] — the same texts as in Telegram."""
        if self.reminders is None or not is_telegram_chat(self.chat_id):
            self.error(text("reminders.none_here", self.lang))
            return
        store, tz = self.reminders, self.assistant.timezone
        self.say(await asyncio.to_thread(reminders_text, store, self.chat_id, argument, self.lang, tz))

    def show_history(self) -> None:
        messages = self.assistant.history(self.chat_id)
        if not messages:
            self.say(text("history.empty", self.lang))
            return
        lines = [text("history.header", self.lang, n=len(messages))]
        for m in messages:
            who = text("role.user" if m.get("role") == "user" else "role.assistant", self.lang)
            body = display_text(m.get("content")).replace("\n", "\n    ")
            lines.append(f"{who}: {body}")
        self.say("\n".join(lines))

    def show_summary(self) -> None:
        summary = self.assistant.summary(self.chat_id)
        if not summary:
            self.say(text("summary.none", self.lang))
            return
        self.say(text("summary.header", self.lang) + "\n" + summary)

    # -- one question and its answer -------------------------------------------------
    async def _turn(self, start: Callable[[TextCallback], Awaitable[Answer]], *, question: str | None) -> None:
        self._streamed = False
        try:
            answer = await self._cancellable(start(self._on_text))
        except _Cancelled:
            if question is not None:
                self._cancelled = question
            self.error(text("cancelled", self.lang))
            return
        except NothingToRetry:
            self.error(bot_text("retry.nothing", self.lang))
            return
        except ModelError as e:
            if question is not None:
                self._failed = question
            self.error(f"{error_text(e.kind, self.lang)} {text('retry.hint', self.lang)}")
            return
        except Exception as e:  # the loop survives anything; details go to the log (-v)
            log.warning("chat %s: turn failed", self.chat_id, exc_info=True)
            self.error(f"{error_text('internal', self.lang)} ({type(e).__name__})")
            return
        self._cancelled = self._failed = None
        if not self._streamed:
            self.out.write(answer.text)
            self._midline = not answer.text.endswith("\n")
        self._end_line()
        if not answer.saved:
            self.error(bot_text("error.not_saved", self.lang))
        if self.interactive:
            self.out.write("\n")
        self.out.flush()
        try:
            await self._cancellable(self.assistant.maintain(self.chat_id))
        except _Cancelled:
            pass
        except Exception:
            log.warning("chat %s: maintenance after the answer failed", self.chat_id, exc_info=True)

    async def _cancellable(self, aw: Awaitable[T]) -> T:
        """Await ``aw`` as a task that Ctrl-C cancels (raising _Cancelled) when ``catch_sigint``."""
        task = asyncio.ensure_future(aw)
        loop = asyncio.get_running_loop()
        hooked = False
        if self.catch_sigint:
            try:
                loop.add_signal_handler(signal.SIGINT, task.cancel)
                hooked = True
            except (ValueError, RuntimeError, NotImplementedError):
                pass  # not the main thread, or no signals here: Ctrl-C then interrupts the turn
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and (current is None or current.cancelling() == 0):
                raise _Cancelled from None
            raise
        finally:
            if hooked:
                loop.remove_signal_handler(signal.SIGINT)


def _drop_pending(runner: asyncio.Runner) -> None:
    """Cancel whatever a Ctrl-C left running on the session's loop, and let it finish."""
    loop = runner.get_loop()
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        with contextlib.suppress(BaseException):
            runner.run(asyncio.wait(pending))


# -- the terminal ------------------------------------------------------------------------
def stream_reader(stream: TextIO) -> ReadLine:
    """Lines from a non-interactive stream (a pipe, a file, a StringIO); no prompt is shown."""

    def read(prompt: str) -> str | None:
        line = stream.readline()
        if not line:
            return None
        return line.rstrip("\r\n")

    return read


def tty_reader() -> ReadLine:
    """``input()`` with the prompt (line editing and history when readline is set up)."""

    def read(prompt: str) -> str | None:
        try:
            return input(prompt)
        except EOFError:
            return None

    return read


def setup_readline(history_path: Path | None) -> Callable[[], None]:
    """Line editing, /command completion and input history; returns the function saving the history.

    Only for a terminal: importing readline can write escape codes to stdout.
    """
    try:
        import readline
    except ImportError:  # e.g. Windows without pyreadline
        return lambda: None

    def complete(prefix: str, state: int) -> str | None:
        options = [c for c in COMMANDS if c.startswith(prefix)] if prefix.startswith("/") else []
        return options[state] if state < len(options) else None

    readline.set_completer(complete)
    readline.set_completer_delims(" \t\n")
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    if history_path is None:
        return lambda: None
    with contextlib.suppress(OSError):
        readline.read_history_file(history_path)
    readline.set_history_length(HISTORY_LENGTH)

    def save() -> None:
        try:
            # create it private before readline writes into it
            os.close(os.open(history_path, os.O_WRONLY | os.O_CREAT, 0o600))
            readline.write_history_file(history_path)
            os.chmod(history_path, 0o600)
        except OSError as e:
            log.warning("could not save the input history to %s: %s", history_path, e)

    return save


def _parser() -> argparse.ArgumentParser:
    prog = "assistant-chat" if Path(sys.argv[0]).name == "assistant-chat" else "python -m bot chat"
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Chat with the assistant in the terminal, with the same memory (DATA_DIR) as the "
        "Telegram bot. Needs only ANTHROPIC_API_KEY (from .env or the environment).",
        epilog="In the chat: /help /history /summary /search /memory /remember /forget /reminders /reset /retry "
        "/quit "
        "(also Ctrl-D, "
        "or Ctrl-C at the prompt); Ctrl-C while an answer arrives cancels that answer. Input history is kept in "
        f"DATA_DIR/{HISTORY_FILE} (mode 0600) when the input is a terminal. Texts are Korean unless "
        "LC_ALL/LC_MESSAGES/LANG names another language.",
    )
    parser.add_argument(
        "--chat",
        metavar="ID",
        default=DEFAULT_CHAT,
        help="the conversation to continue: a Telegram chat id (the file names in DATA_DIR/chats/) "
        f"or any name of letters, digits, '_' and '-' (default: {DEFAULT_CHAT})",
    )
    parser.add_argument("--data-dir", metavar="DIR", help="where the memory lives (default: $DATA_DIR or ./data)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show log messages on stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m bot chat [options]`` and the ``assistant-chat`` console script."""
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as e:  # --help, or a usage error (printed by argparse)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,  # one-line messages only, unless -v
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    for name in ("httpx", "httpx2", "httpcore", "httpcore2"):
        logging.getLogger(name).setLevel(logging.WARNING)
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            # a terminal that cannot show some characters must not end the chat
            stream.reconfigure(errors="replace")

    from bot.config import ConfigError, load_settings

    try:
        chat_id = check_chat_id(args.chat)
        settings = load_settings(need_telegram=False)
    except (InvalidChatId, ConfigError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.data_dir:
        settings = replace(settings, data_dir=Path(args.data_dir).expanduser())
    from memory.format import FormatError, ensure_format

    os.umask(0o077)  # files this process creates are private, like the bot's
    try:
        ensure_format(settings.data_dir)  # a newer data format than this code knows stops here
    except (FormatError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    from bot.claude.client import prewarm
    from bot.core.limits import Limits
    from bot.wiring import make_assistant
    from memory.usage import UsageLedger

    # the owner at the keyboard: usage recorded (as "terminal"), never limited
    ledger = UsageLedger(settings.data_dir)
    reminders = ReminderStore(settings.data_dir)
    assistant = make_assistant(
        settings, reminders=reminders, on_spend=Limits(ledger, timezone=settings.timezone).record
    )
    prewarm()  # the SDK is imported while the user types the first question
    try:
        return _run_session(assistant, chat_id, settings, reminders)
    finally:
        try:
            ledger.close()
        except OSError as e:
            print(f"warning: could not write the usage counters: {e}", file=sys.stderr)


def _run_session(assistant: Assistant, chat_id: str, settings: Settings, reminders: ReminderStore) -> int:
    interactive = sys.stdin.isatty()
    session = ChatSession(
        assistant,
        chat_id,
        out=sys.stdout,
        err=sys.stderr,
        lang=env_lang(),
        interactive=interactive,
        catch_sigint=True,
        reminders=reminders,
    )
    if not interactive:
        return session.run(stream_reader(sys.stdin))
    history_path: Path | None = settings.data_dir / HISTORY_FILE
    try:
        ensure_private_dir(settings.data_dir)
    except OSError:
        history_path = None
    save_history = setup_readline(history_path)
    try:
        return session.run(tty_reader())
    finally:
        save_history()


if __name__ == "__main__":
    sys.exit(main())
