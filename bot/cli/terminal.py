"""The terminal chat as a program: ``python -m bot chat`` (or the ``assistant-chat`` console script).

The command line, the settings and the wiring of one ``ChatSession`` (bot/cli/chat.py) to the
terminal: lines from ``input()`` with readline (line editing, /command completion, a private input
history under DATA_DIR) when the input is a terminal, else from the pipe or file; answers rendered
when the output is a terminal (bot/cli/render.py).

Start-up: rich is not imported before the prompt shows (a background thread imports it while the user
types the first question, when answers are rendered). No SDK is imported at all: the Claude API is spoken
over httpx (bot/claude/api.py), so a fresh process answers a question on a pipe in the time its requests
take.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from bot.cli.chat import ChatSession, ReadLine
from bot.cli.commands import COMMANDS
from bot.cli.conversations import conversations_text, last_used
from bot.cli.loop import sigint_to_main_thread
from bot.cli.render import Renderer, wants_rendering
from bot.cli.render import prewarm as prewarm_renderer
from bot.cli.sigint import PromptInterrupts
from bot.cli.texts import LANGS, LangError, env_lang, text
from bot.core.ask import Assistant
from bot.doctor.preflight import open_data_dir
from memory.conversations import find_conversation, list_conversations
from memory.files import ensure_private_dir
from memory.reminders import ReminderStore
from memory.transcript import InvalidChatId, Transcript, check_chat_id

if TYPE_CHECKING:
    from bot.commands.usage import TerminalUsage
    from bot.config import Settings

log = logging.getLogger(__name__)

DEFAULT_CHAT = "local"
HISTORY_FILE = ".chat_history"  # readline input history, under DATA_DIR, mode 0600
HISTORY_LENGTH = 1000


def stream_reader(stream: TextIO) -> ReadLine:
    """Lines from a non-interactive stream (a pipe, a file, a StringIO); no prompt is shown."""

    def read(prompt: str) -> str | None:
        line = stream.readline()
        if not line:
            return None
        return line.rstrip("\r\n")

    return read


def prompted_reader(stream: TextIO, prompts: TextIO) -> ReadLine:
    """Lines typed at a terminal while stdout goes elsewhere: the prompt is shown on ``prompts``
    (stderr), so stdout carries answers only."""
    read_line = stream_reader(stream)

    def read(prompt: str) -> str | None:
        prompts.write(prompt)
        prompts.flush()
        return read_line(prompt)

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
        # a paste is one question: readline reads a bracketed paste up to its end marker into the line
        # (newlines included) and Enter sends it. Python turns this off (bpo-42819); readline >= 8.0
        readline.parse_and_bind("set enable-bracketed-paste on")
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


class NoQuestion(ValueError):
    """``chat -`` read nothing from stdin, or the question is empty."""


def question_from(words: list[str], stdin: TextIO) -> str:
    """The question of ``chat WORDS...``: the words joined by spaces; ``-`` stands for the whole of
    stdin, set apart from the words around it by a blank line (``cat log | chat - "why?"``)."""
    pieces: list[str] = []
    run: list[str] = []
    for word in words:
        if word != "-":
            run.append(word)
            continue
        if run:
            pieces.append(" ".join(run))
            run = []
        pieces.append(stdin.read().strip("\n"))
    if run:
        pieces.append(" ".join(run))
    question = "\n\n".join(piece for piece in pieces if piece.strip())
    if not question.strip():
        raise NoQuestion("nothing to ask: the question is empty" + (" (stdin was empty)" if "-" in words else ""))
    return question


EPILOG = """\
examples:
  python -m bot chat                        chat in conversation "local"
  python -m bot chat "what is 2+2"          ask once: the answer alone on stdout
  cat error.log | python -m bot chat - "why does this fail?"
                                            stdin, then the words: one question
  python -m bot chat --list                 the conversations, most recent first
  python -m bot chat -c                     continue the most recently used one

{commands}
  Ctrl-D or /quit leaves; Ctrl-C at the prompt clears the line, and while an answer
  arrives cancels just that answer. A paste is one question (Enter sends it); type
  one over several lines with a trailing backslash, or between lines of \"\"\".

pipes and exit status: when stdout is not a terminal it carries the answers and
  command output only (banner, prompts and notices go to stderr if that is a
  terminal, else nowhere). Exit status 0 when every question got an answer, 1 when
  one did not (failed or cancelled, and not answered by /retry), 2 for a usage or
  settings error, 130 after Ctrl-C while reading piped input.

Input history is kept in DATA_DIR/{history} (mode 0600) when the input is a terminal.
Language of everything the chat prints: --lang, else BOT_LANG, else the locale (LC_ALL,
LC_MESSAGES, LANG): Korean unless it names another language (C, POSIX and C.UTF-8 name
none: Korean).
"""


def chat_of(name: str) -> str:
    """The chat id of ``--chat NAME``: NAME itself, or for an archived conversation (``<chat id>.<stamp>``,
    as ``--list`` shows it) the part before the dot. InvalidChatId when it is neither."""
    chat, dot, stamp = name.partition(".")
    if dot and chat and stamp.replace("-", "").replace("_", "").isalnum() and stamp.isascii():
        return check_chat_id(chat)
    return check_chat_id(name)


def _parser() -> argparse.ArgumentParser:
    prog = "assistant-chat" if Path(sys.argv[0]).name == "assistant-chat" else "python -m bot chat"
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Chat with the assistant in the terminal, with the same memory (DATA_DIR) as the "
        "Telegram bot. Needs only ANTHROPIC_API_KEY (from .env or the environment).",
        epilog=EPILOG.format(
            commands=textwrap.fill("in the chat: " + " ".join(COMMANDS), 80, subsequent_indent="  "),
            history=HISTORY_FILE,
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "question",
        nargs="*",
        metavar="QUESTION",
        help="ask this once, print the answer on stdout and exit (status 1 if it got no answer); the "
        "turn is remembered like any other. '-' stands for the whole of stdin: "
        'cat error.log | python -m bot chat - "why does this fail?" is one question',
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--chat",
        "--cid",
        dest="chat",
        metavar="ID",
        help="the conversation to continue or start: a Telegram chat id (the file names in DATA_DIR/chats/) "
        f"or any name of letters, digits, '_' and '-' (default: {DEFAULT_CHAT}); an archived conversation's "
        "name from --list (e.g. local.20261202T073000Z) brings it back as its chat's current one",
    )
    which.add_argument(
        "-c", "--continue", dest="continue_last", action="store_true",
        help="continue the most recently used conversation",
    )  # fmt: skip
    which.add_argument(
        "-l", "--list", dest="list_chats", action="store_true",
        help="list the conversations (name, last used, first words; archived ones too) and exit",
    )  # fmt: skip
    parser.add_argument("--data-dir", metavar="DIR", help="where the memory lives (default: $DATA_DIR or ./data)")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="print answers as the raw Markdown text, as on a pipe (default in a terminal: rendered, "
        "unless NO_COLOR is set or TERM=dumb)",
    )
    # the summary after a one-shot answer, in a detached process of its own (spawn_upkeep)
    parser.add_argument("--upkeep", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--lang",
        choices=LANGS,
        help="the language of everything the chat prints (default: BOT_LANG, else the locale; see below)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show log messages on stderr")
    parser.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    return parser


def _start_checks(args: argparse.Namespace) -> tuple[str, int | None]:
    """(the language, an exit status when the chat must not start): BOT_LANG and the doctor's
    configuration checks (bot/doctor/preflight.py), each problem one line on stderr in that language."""
    from dotenv import load_dotenv

    from bot.doctor.preflight import startup_problems

    load_dotenv(Path.cwd() / ".env", override=False)
    if args.lang:
        os.environ["BOT_LANG"] = args.lang  # --lang wins over BOT_LANG and the locale, for the whole run
    try:
        lang = env_lang()
    except LangError as e:
        print(f"error: {e}", file=sys.stderr)
        return "en", 2
    try:
        chat_of(args.chat or DEFAULT_CHAT)
    except InvalidChatId as e:
        print(text("start.error", lang, message=e), file=sys.stderr)
        return lang, 2
    env = {**os.environ, **({"DATA_DIR": args.data_dir} if args.data_dir else {})}
    problems, notes = startup_problems(env, telegram=False, lang=lang)
    for line in problems:
        print(text("start.error", lang, message=line), file=sys.stderr)
    for line in notes:
        print(text("start.note", lang, message=line), file=sys.stderr)
    return lang, 2 if problems else None


def main(argv: list[str] | None = None) -> int:
    """``python -m bot chat [options]`` and the ``assistant-chat`` console script."""
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as e:  # --help, or a usage error (printed by argparse)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    if args.version:
        from bot.config import version_line

        print(version_line())
        return 0
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,  # one-line messages only, unless -v
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            # a terminal that cannot show some characters must not end the chat
            stream.reconfigure(errors="replace")

    from bot.config import ConfigError, load_settings

    lang, refused = _start_checks(args)
    if refused is not None:
        return refused
    try:
        name = args.chat or DEFAULT_CHAT
        chat_id = chat_of(name)
        settings = load_settings(need_telegram=False, dotenv=False)
    except (InvalidChatId, ConfigError) as e:
        print(text("start.error", lang, message=e), file=sys.stderr)
        return 2
    if args.data_dir:
        settings = replace(settings, data_dir=Path(args.data_dir).expanduser())
    transcript = Transcript(settings.data_dir)
    if args.list_chats:
        print(conversations_text(list_conversations(transcript), None, settings.timezone, env_lang()))
        return 0
    resume: str | None = None
    if args.continue_last:
        chat_id = last_used(transcript) or DEFAULT_CHAT
    elif name != chat_id:
        if find_conversation(transcript, name) is None:
            print(f"error: no conversation {name!r} (python -m bot chat --list shows them)", file=sys.stderr)
            return 2
        resume = name
    question: str | None = None
    if args.question:
        try:
            question = question_from(args.question, sys.stdin)
        except NoQuestion as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    os.umask(0o077)  # files this process creates are private, like the bot's
    stopped = open_data_dir(settings.data_dir, lang)
    if stopped:
        print(text("start.error", lang, message=stopped), file=sys.stderr)
        return 2

    from bot.claude.pricing import PriceTable
    from bot.commands.usage import TerminalUsage
    from bot.core.limits import Limits
    from bot.wiring import make_assistant
    from memory.usage import UsageLedger

    # the owner at the keyboard: usage recorded (as "terminal"), never limited
    ledger = UsageLedger(settings.data_dir)
    limits = Limits(ledger, timezone=settings.timezone)
    prices = PriceTable(settings.model_prices, search_price=settings.web.price_per_1000)
    reminders = ReminderStore(settings.data_dir)
    with sigint_to_main_thread():  # the threads started here never take Ctrl-C from the main thread
        assistant = make_assistant(settings, reminders=reminders, on_spend=limits.record)
    usage = TerminalUsage(limits, prices)

    try:
        if args.upkeep:
            return _upkeep(assistant, chat_id)
        if question is not None:
            hand_off = functools.partial(spawn_upkeep, data_dir=settings.data_dir)
            return _one_shot(
                assistant, chat_id, question, plain=args.plain, resume=resume, usage=usage, hand_off=hand_off
            )
        return _run_session(assistant, chat_id, settings, reminders, plain=args.plain, resume=resume, usage=usage)
    finally:
        try:
            ledger.close()
        except OSError as e:
            print(f"warning: could not write the usage counters: {e}", file=sys.stderr)


def _one_shot(
    assistant: Assistant,
    chat_id: str,
    question: str,
    *,
    plain: bool = False,
    resume: str | None = None,
    usage: TerminalUsage | None = None,
    hand_off: Callable[[str], None] | None = None,
) -> int:
    """``chat QUESTION``: the answer alone on stdout, errors on stderr; nothing else is printed."""
    renderer = Renderer(sys.stdout) if wants_rendering(sys.stdout, plain=plain) else None
    session = ChatSession(
        assistant, chat_id, out=sys.stdout, err=sys.stderr, notes=None, lang=env_lang(), renderer=renderer, usage=usage
    )
    return session.ask_once(question, resume=resume, hand_off=hand_off)


def spawn_upkeep(chat_id: str, *, data_dir: Path) -> None:
    """Write the chat's summary in a detached process (``chat --upkeep``): a one-shot question's
    shell prompt does not wait for it. Same environment and working directory (.env, settings)."""
    root = str(Path(__file__).resolve().parents[2])  # where the bot package is
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "bot", "chat", "--upkeep", "--chat", chat_id, "--data-dir", str(data_dir)]
    try:
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # not stopped by the shell's Ctrl-C or hang-up
        )
    except OSError as e:  # the summary is then written after a later answer
        log.warning("could not start the summary's process: %s", e)


def _upkeep(assistant: Assistant, chat_id: str) -> int:
    """``chat --upkeep``: index and summarize the chat if due, then exit."""

    async def run() -> None:
        try:
            await assistant.maintain(chat_id)
        finally:
            await assistant.aclose()

    asyncio.run(run())
    return 0


def _run_session(
    assistant: Assistant,
    chat_id: str,
    settings: Settings,
    reminders: ReminderStore,
    *,
    plain: bool = False,
    resume: str | None = None,
    usage: TerminalUsage | None = None,
) -> int:
    interactive = sys.stdin.isatty()
    # stdout carries answers only when it is not a terminal: the banner, notices and prompts go to
    # stderr when that is a terminal, else they are left out
    on_screen = sys.stdout.isatty()
    notes: TextIO | None | Literal["out"] = "out" if on_screen else (sys.stderr if sys.stderr.isatty() else None)
    renderer = Renderer(sys.stdout) if wants_rendering(sys.stdout, plain=plain) else None
    if renderer is not None:
        with sigint_to_main_thread():
            prewarm_renderer()  # rich is imported while the user types the first question
    session = ChatSession(
        assistant,
        chat_id,
        out=sys.stdout,
        err=sys.stderr,
        notes=notes,
        usage=usage,
        lang=env_lang(),
        interactive=interactive,
        reminders=reminders,
        renderer=renderer,
    )
    if not interactive:
        return session.run(stream_reader(sys.stdin), resume=resume)
    if not on_screen:  # typed at a terminal, answers to a file or a pipe: no readline (it writes to stdout)
        return session.run(prompted_reader(sys.stdin, sys.stderr), resume=resume)
    history_path: Path | None = settings.data_dir / HISTORY_FILE
    try:
        ensure_private_dir(settings.data_dir)
    except OSError:
        history_path = None
    save_history = setup_readline(history_path)
    try:
        with PromptInterrupts() as interrupts:  # Ctrl-C at the prompt taken at once (bot/cli/sigint.py)
            return session.run(interrupts.reading(tty_reader()), resume=resume)
    finally:
        save_history()


if __name__ == "__main__":
    sys.exit(main())
