"""The terminal chat's session: one conversation read line by line, answered through the Assistant.

The same ``Assistant`` service (bot/core/ask.py) and the same files as the Telegram bot, so a
conversation can be continued at the keyboard and the assistant can be tried without Telegram.
The chat loop never touches storage itself: it reads lines, calls the service and prints. Slash
commands are answered by bot/cli/commands.py, answers rendered by bot/cli/render.py; the program
around the session (command line, readline, settings) is bot/cli/terminal.py.

Threads: lines are read with ``input()`` in the main thread, which is what makes readline line
editing and Ctrl-C / Ctrl-D at the prompt behave (a reader thread blocked in ``input()`` can be
neither interrupted nor joined). One asyncio loop serves the whole session in a thread of its own
(``LoopThread``, SIGINT blocked there): each line is handled on it while the main thread waits,
and the work after an answer (indexing, the summary) goes on there while the next question is
typed. Ctrl-C reaches the main thread: at the prompt it clears the line; while an answer is on its
way it cancels just that answer; during a command it interrupts the command.

Output: answers and command output go to ``out``; the banner, notices and the prompt's blank lines
to ``notes`` (stdout in a terminal; stderr or nothing when stdout is a file or a pipe); errors to
``err``. ``run`` returns the exit status: whether every question got an answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO, TypeVar

from bot.claude.model import ModelError, TextCallback
from bot.cli.clean import visible_controls
from bot.cli.commands import SlashCommands
from bot.cli.loop import LoopThread
from bot.cli.render import AnswerView, Renderer
from bot.cli.texts import error_line, text
from bot.commands.reminders import pending_lines
from bot.core.ask import Answer, Assistant, NothingToRetry, Question
from bot.texts import error_text
from bot.texts import t as bot_text
from memory.reminders import ReminderFileError, ReminderStore
from memory.transcript import check_chat_id

if TYPE_CHECKING:
    from bot.commands.usage import TerminalUsage

log = logging.getLogger(__name__)

T = TypeVar("T")

PROMPT = "> "
MORE_PROMPT = "… "  # the next line of a question typed over several lines
BLOCK = '"""'  # a line starting with it opens a multi-line question, a line ending with it closes it
USAGE_ERROR = 2  # the exit status when the conversation named at start cannot be brought back
INTERRUPTED = 130  # the exit status after Ctrl-C on piped input, as a shell reports a SIGINT
ReadLine = Callable[[str], str | None]
"""Reads one line (without its newline) after showing the prompt; None at end of input.
Raises KeyboardInterrupt on Ctrl-C."""


class _Cancelled(Exception):
    """The user pressed Ctrl-C while an answer was on its way."""


class ChatSession(SlashCommands):
    """One terminal conversation with one chat of the Assistant.

    ``out`` receives answers and command output, ``err`` one-line error messages, ``notes`` the
    banner and notices (None: left out). With ``interactive`` the prompt and a goodbye are shown.
    ``run`` is called in the main thread: Ctrl-C during an answer cancels it. With a ``renderer``
    answers are rendered (Markdown in a terminal, bot/cli/render.py); without, their text is
    written as it comes.
    """

    def __init__(
        self,
        assistant: Assistant,
        chat_id: int | str,
        *,
        out: TextIO,
        err: TextIO | None = None,
        notes: TextIO | None | Literal["out"] = "out",
        lang: str = "ko",
        interactive: bool = False,
        reminders: ReminderStore | None = None,
        renderer: Renderer | None = None,
        usage: TerminalUsage | None = None,
    ) -> None:
        self.assistant = assistant
        self.renderer = renderer
        self._view: AnswerView | None = None  # the answer being rendered
        self.reminders = reminders
        self.usage = usage  # counts the questions, answers /stats; None: no usage ledger
        self.chat_id = check_chat_id(chat_id)
        self.out = out
        self.err = err if err is not None else out
        self.notes = out if notes == "out" else notes
        self.lang = lang
        self.interactive = interactive
        self._loop: LoopThread | None = None
        self._task: asyncio.Task[bool] | None = None  # the line being handled (on the loop's thread)
        self._answer: asyncio.Future[Any] | None = None  # the answer on its way
        self._cancels = 0  # answers a Ctrl-C cancelled (counted on the loop's thread)
        self._listed = []
        self._hand_off: Callable[[str], None] | None = None  # one-shot: who writes the summary
        self.unanswered = 0  # questions left without an answer (failed or cancelled): exit status 1
        self._midline = False  # the cursor is not at the start of a line (after streamed text)
        self._streamed = False

    # -- output --------------------------------------------------------------------
    @property
    def prompt(self) -> str:
        return PROMPT if self.interactive else ""

    def say(self, message: str) -> None:
        """Print a line; its control characters made visible (facts, history, the summary, search results
        and reminders are stored or received text: an escape sequence in them must not drive the terminal)."""
        self._end_line()
        self.out.write(visible_controls(message) + "\n")
        self.out.flush()

    def note(self, message: str) -> None:
        """The banner and notices: never on stdout when stdout is not a terminal (``notes``)."""
        if self.notes is self.out:
            self.say(message)
        elif self.notes is not None:
            self._end_line()
            self.notes.write(message + "\n")
            self.notes.flush()

    def error(self, message: str) -> None:
        self._end_line()
        self.err.write(visible_controls(message) + "\n")
        self.err.flush()

    def _end_line(self) -> None:
        if self._view is not None:  # anything else printed ends the answer being rendered
            view, self._view = self._view, None
            view.close()
        if self._midline:
            self.out.write("\n")
            self.out.flush()
            self._midline = False

    async def _on_text(self, delta: str) -> None:
        if not delta:
            return
        if self.renderer is not None:
            if self._view is None:
                self._view = self.renderer.start()
            self._view.feed(delta)
            self._streamed = True
            return
        self.out.write(visible_controls(delta))
        self.out.flush()
        self._streamed = True
        self._midline = not delta.endswith("\n")

    def banner(self) -> None:
        root = Path(self.assistant.transcript.root).resolve()
        model = getattr(self.assistant.model, "name", "?")
        self.note(text("banner", self.lang, chat=self.chat_id, data=root, model=model))
        try:
            n = len(self.assistant.history(self.chat_id))
            summarized = bool(self.assistant.summary(self.chat_id))
        except Exception:  # unreadable memory is reported at the first question, not here
            log.warning("chat %s: could not read the memory", self.chat_id, exc_info=True)
            n, summarized = 0, False
        self.note(text("banner.continue", self.lang, n=n) if n or summarized else text("banner.new", self.lang))
        if summarized:
            self.note(text("banner.summary", self.lang))
        self.show_pending_reminders()
        self.note(text("banner.help", self.lang))

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
            self.note("\n".join([text("banner.reminders", self.lang, n=len(lines)), *(f"  {x}" for x in lines)]))

    def goodbye(self, *, after_prompt: bool = False) -> None:
        if self.interactive:
            if after_prompt and self.notes is not None:
                self.notes.write("\n")  # Ctrl-D / Ctrl-C leave the cursor after the prompt
            self.note(text("bye", self.lang))

    def _read_question(self, read_line: ReadLine) -> str | None:
        """One question, perhaps typed over several lines: a BLOCK (from a line starting with three
        double quotes to a line ending with them), or at a terminal lines ending with a backslash.
        A paste arrives whole (readline's bracketed paste)."""
        line = read_line(self.prompt)
        more = MORE_PROMPT if self.interactive else ""
        if line is not None and line.lstrip().startswith(BLOCK):
            lines, line = [], line.lstrip()[len(BLOCK) :]
            while line is not None and not line.rstrip().endswith(BLOCK):
                lines.append(line)
                line = read_line(more)
            if line is not None:
                lines.append(line.rstrip()[: -len(BLOCK)])
            return "\n".join(lines).strip("\n")
        while self.interactive and line is not None and line.endswith("\\"):
            next_line = read_line(more)
            line = line[:-1] + "\n" + (next_line or "")
            if next_line is None:
                break
        return line

    def _new_prompt_line(self) -> None:
        stream = self.notes if self.notes is not None else self.err
        stream.write("\n")
        stream.flush()

    # -- the loop ------------------------------------------------------------------
    def run(self, read_line: ReadLine, *, resume: str | None = None) -> int:
        """Read and handle lines until /quit or end of input (Ctrl-D). Returns the exit status: 0 when
        every question got an answer, 1 when some did not (failed or cancelled, and not answered by
        /retry); ``INTERRUPTED`` after Ctrl-C while reading piped input. Ctrl-C at a terminal's
        prompt clears the line."""
        with LoopThread() as loop:
            self._loop = loop
            # an archived conversation named at start is brought back first (status 2 if it cannot be)
            if resume is not None and not self._call(self._resume(resume)):
                return USAGE_ERROR
            self.banner()
            while True:
                try:  # Ctrl-C at the prompt, or one no command took (it came as the command ended)
                    line = self._read_question(read_line)
                    done = line is None or self._call(self.handle(line), leftover_to_prompt=True) is False
                except KeyboardInterrupt:
                    if self.interactive:  # as in a shell: the line typed so far is dropped, a new prompt
                        self._new_prompt_line()
                        continue
                    # input from a pipe or a file: Ctrl-C stops the script (status 128 + SIGINT)
                    _through_ctrl_c(self._loop.submit(self.assistant.upkeep.aclose()))
                    return INTERRUPTED
                if done:
                    self.goodbye(after_prompt=line is None)
                    break
            self._finish_upkeep()
        return 1 if self.unanswered else 0

    def ask_once(
        self, question: str, *, resume: str | None = None, hand_off: Callable[[str], None] | None = None
    ) -> int:
        """One question (``chat "question"``): its answer on ``out``; the exit status says whether it got one.

        A summary due after the answer is left to ``hand_off(chat_id)`` (a process of its own), so
        the shell's prompt does not wait for it; without ``hand_off`` it is written before returning.
        """
        self._hand_off = hand_off
        with LoopThread() as loop:
            self._loop = loop
            if resume is not None and not self._call(self._resume(resume)):
                return USAGE_ERROR
            answered = self._call(self._ask_once(question))
            self._finish_upkeep()
        return 0 if answered and not self.unanswered else 1

    async def _resume(self, name: str) -> bool:
        """Bring back the archived conversation ``name``; False (the error shown) when it failed."""
        try:
            await self.chats(name)
        except Exception as e:  # e.g. another process brought it back meanwhile
            log.warning("chat %s: could not bring back %s", self.chat_id, name, exc_info=True)
            self.error(f"{error_text('internal', self.lang)} ({type(e).__name__})")
            return False
        return True

    async def _ask_once(self, question: str) -> bool:
        await self.send(question)
        return True

    def _call(self, coro: Coroutine[Any, Any, bool], *, leftover_to_prompt: bool = False) -> bool | None:
        """Run ``coro`` on the session's loop and wait for it in this (the main) thread; None when
        it was interrupted: Ctrl-C meanwhile cancels the answer on its way, or else the whole command.

        A Ctrl-C that cancelled nothing (it came as the answer was being stored, or as the command ended)
        is not lost: with ``leftover_to_prompt`` it is raised again once the command's result is in, for
        the prompt (piped input stops there; a terminal shows a new prompt).
        """
        assert self._loop is not None
        cancels, held = self._cancels, _HeldCtrlC()  # handing the command over: a Ctrl-C meanwhile is for it
        try:
            future = self._loop.submit(self._tracked(coro))
        except BaseException:
            held.release()
            raise
        pressed = False
        while True:
            try:
                if held.release():  # (inside the try: a Ctrl-C from here on is caught below)
                    raise KeyboardInterrupt
                result = future.result()
            except KeyboardInterrupt:
                pressed = True
                self._loop.call(self._interrupt)
                continue
            except concurrent.futures.CancelledError:
                self.error(text("interrupted", self.lang))
                return None
            if pressed and self._cancels == cancels and leftover_to_prompt:
                raise KeyboardInterrupt
            return result

    async def _tracked(self, coro: Coroutine[Any, Any, bool]) -> bool:
        self._task = asyncio.current_task()
        try:
            return await coro
        finally:
            self._task = None

    def _interrupt(self) -> None:
        """Ctrl-C (on the loop's thread): cancel the answer on its way, or else the running command."""
        if self._answer is not None and not self._answer.done():
            self._answer.cancel()
        elif self._task is not None:
            self._task.cancel()

    def _finish_upkeep(self) -> None:
        """Leaving: the summary still being written in the background is finished (Ctrl-C skips it,
        and a cancelled summary writes nothing)."""
        assert self._loop is not None
        upkeep = self.assistant.upkeep
        if not upkeep.busy:
            return
        self.note(text("upkeep.finishing", self.lang))
        try:
            self._loop.submit(upkeep.drain()).result()
        except KeyboardInterrupt:
            _through_ctrl_c(self._loop.submit(upkeep.aclose()))

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
        return await self.command(line)

    # -- asking: a question, or the last one again ------------------------------------
    async def send(self, question: str) -> None:
        """Ask ``question`` and stream the answer."""

        if self.usage is not None:
            self.usage.question(self.chat_id)

        def start(on_text: TextCallback) -> Awaitable[Answer]:
            return self.assistant.ask(self.chat_id, Question(question, meta={"via": "terminal"}), on_text=on_text)

        await self._turn(start)

    async def retry(self) -> None:
        """Ask again the last question that got no answer (failed or cancelled), else the last one anew."""
        if self.usage is not None:
            self.usage.question(self.chat_id)
        unanswered = await self.assistant.unanswered(self.chat_id)
        if unanswered is not None:
            self.note(text("retry.start", self.lang, text=unanswered.text))
        else:
            self.note(text("retry.again", self.lang))

        async def start(on_text: TextCallback) -> Answer:
            _, answer = await self.assistant.retry(self.chat_id, on_text=on_text)
            return answer

        await self._turn(start, again=unanswered is not None)

    # -- one question and its answer -------------------------------------------------
    async def _turn(self, start: Callable[[TextCallback], Awaitable[Answer]], *, again: bool = False) -> None:
        """One answer, streamed. ``again``: asking an unanswered question again (``unanswered`` counts
        the questions left without an answer: the exit status)."""
        self._streamed = False
        try:
            answer = await self._cancellable(start(self._on_text))
        except _Cancelled:
            self.unanswered += not again
            self.error(text("cancelled", self.lang))
            return
        except NothingToRetry:
            self.error(bot_text("retry.nothing", self.lang))
            return
        except ModelError as e:
            self.unanswered += not again
            self.error(error_line(e.kind, self.lang, model=getattr(self.assistant.model, "name", "?")))
            return
        except Exception as e:  # the loop survives anything; details go to the log (-v)
            self.unanswered += not again
            log.warning("chat %s: turn failed", self.chat_id, exc_info=True)
            self.error(f"{error_text('internal', self.lang)} ({type(e).__name__})")
            return
        if again:
            self.unanswered = max(0, self.unanswered - 1)
        if not self._streamed and self.renderer is not None:
            await self._on_text(answer.text)
        elif not self._streamed:
            self.out.write(visible_controls(answer.text))
            self._midline = not answer.text.endswith("\n")
        elif answer.note or answer.sources:  # streamed: what came after the model's text
            self.out.write("\n\n" + visible_controls(web_footer(answer)))
            self._midline = True
        self._end_line()
        if not answer.saved:
            self.error(error_text("not_saved", self.lang, where="terminal", data=self.assistant.transcript.root))
        if self.interactive and self.notes is not None:
            self.notes.write("\n")  # a blank line before the next prompt (not in a file of answers)
            self.notes.flush()
        self.out.flush()
        # the summary is written in the background: the next prompt never waits for it
        if self._hand_off is None:
            await self.assistant.maintain(self.chat_id, wait=False)
        elif await asyncio.to_thread(self.assistant.memory.due, self.chat_id):
            self._hand_off(self.chat_id)  # (indexing for recall catches up at the next search)

    async def _cancellable(self, aw: Awaitable[T]) -> T:
        """Await ``aw`` as the answer on its way: Ctrl-C cancels it (raising _Cancelled)."""
        task = asyncio.ensure_future(aw)
        self._answer = task
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and (current is None or current.cancelling() == 0):
                self._cancels += 1  # a Ctrl-C took effect (ChatSession._call)
                raise _Cancelled from None
            raise
        finally:
            self._answer = None


def web_footer(answer: Answer) -> str:
    """The note and the source list under a streamed answer, as plain terminal text (URLs shown whole)."""
    lines = [answer.note] if answer.note else []
    if answer.sources:
        if lines:
            lines.append("")
        lines.append("출처 · Sources")
        lines += [f"{n}. {title}\n   {url}" for n, (title, url) in enumerate(answer.sources, 1)]
    return "\n".join(lines)


class _HeldCtrlC:
    """From its making until ``release()``, a Ctrl-C raises nothing and is noted instead (main thread only;
    elsewhere Python takes no signals anyway). On a busy machine the loop's thread can reach the answer, and
    the user's Ctrl-C come, before the main thread is back waiting for the command: raised there, it left
    ``ChatSession._call`` and counted for the prompt (piped input stopped with 130) while the answer went on."""

    def __init__(self) -> None:
        self._noted = False
        self._previous: Any = None
        in_main = threading.current_thread() is threading.main_thread()
        if in_main and signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # Ctrl-C: KeyboardInterrupt
            self._previous = signal.signal(signal.SIGINT, self._note)

    def _note(self, signum: int, frame: Any) -> None:
        self._noted = True

    def release(self) -> bool:
        """Python's handler back (once); whether a Ctrl-C came meanwhile."""
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None
        noted, self._noted = self._noted, False
        return noted


def _through_ctrl_c(future: concurrent.futures.Future[T]) -> T:
    """Wait for ``future`` in the main thread, a Ctrl-C meanwhile doing nothing more: what is being waited
    for is itself the answer to a Ctrl-C (cancelling, closing), and a second one must not cut it short
    with a KeyboardInterrupt out of the session (a traceback, the process killed by SIGINT)."""
    while True:
        try:
            return future.result()
        except KeyboardInterrupt:
            continue
