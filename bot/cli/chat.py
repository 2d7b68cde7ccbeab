"""The terminal chat's session: one conversation read line by line, answered through the Assistant.

The same ``Assistant`` service (bot/core/ask.py) and the same files as the Telegram bot, so a
conversation can be continued at the keyboard and the assistant can be tried without Telegram.
The chat loop never touches storage itself: it reads lines, calls the service and prints. Slash
commands are answered by bot/cli/commands.py, answers rendered by bot/cli/render.py; the program
around the session (command line, readline, settings) is bot/cli/terminal.py.

Event loop: one asyncio loop (an ``asyncio.Runner``) serves the whole session. Lines are read
with ``input()`` in the main thread *between* turns, which is what makes readline line editing
and Ctrl-C / Ctrl-D at the prompt behave (a reader thread blocked in ``input()`` can be neither
interrupted nor joined); each line is then handled with ``runner.run(...)`` on that same loop.
While an answer is on its way, Ctrl-C cancels just that answer and returns to the prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TextIO, TypeVar

from bot.claude.model import ModelError, TextCallback
from bot.cli.commands import SlashCommands
from bot.cli.render import AnswerView, Renderer
from bot.cli.texts import error_line, text
from bot.commands.reminders import pending_lines
from bot.core.ask import Answer, Assistant, NothingToRetry, Question
from bot.texts import error_text
from bot.texts import t as bot_text
from memory.reminders import ReminderFileError, ReminderStore
from memory.transcript import check_chat_id

log = logging.getLogger(__name__)

T = TypeVar("T")

PROMPT = "> "
ReadLine = Callable[[str], str | None]
"""Reads one line (without its newline) after showing the prompt; None at end of input.
Raises KeyboardInterrupt on Ctrl-C."""


class _Cancelled(Exception):
    """The user pressed Ctrl-C while an answer was on its way."""


class ChatSession(SlashCommands):
    """One terminal conversation with one chat of the Assistant.

    ``out`` receives answers and command output, ``err`` one-line error messages. With
    ``interactive`` the prompt and a goodbye are shown; with ``catch_sigint`` Ctrl-C during
    an answer cancels it (needs the main thread). With a ``renderer`` answers are rendered
    (Markdown in a terminal, bot/cli/render.py); without, their text is written as it comes.
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
        renderer: Renderer | None = None,
    ) -> None:
        self.assistant = assistant
        self.renderer = renderer
        self._view: AnswerView | None = None  # the answer being rendered
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
        return await self.command(line)

    # -- asking: a question, or the last one again ------------------------------------
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
            self.error(error_line(e.kind, self.lang, model=getattr(self.assistant.model, "name", "?")))
            return
        except Exception as e:  # the loop survives anything; details go to the log (-v)
            log.warning("chat %s: turn failed", self.chat_id, exc_info=True)
            self.error(f"{error_text('internal', self.lang)} ({type(e).__name__})")
            return
        self._cancelled = self._failed = None
        if not self._streamed and self.renderer is not None:
            await self._on_text(answer.text)
        elif not self._streamed:
            self.out.write(answer.text)
            self._midline = not answer.text.endswith("\n")
        elif answer.note or answer.sources:  # streamed: what came after the model's text
            self.out.write("\n\n" + web_footer(answer))
            self._midline = True
        self._end_line()
        if not answer.saved:
            self.error(error_text("not_saved", self.lang, where="terminal", data=self.assistant.transcript.root))
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


def web_footer(answer: Answer) -> str:
    """The note and the source list under a streamed answer, as plain terminal text (URLs shown whole)."""
    lines = [answer.note] if answer.note else []
    if answer.sources:
        if lines:
            lines.append("")
        lines.append("출처 · Sources")
        lines += [f"{n}. {title}\n   {url}" for n, (title, url) in enumerate(answer.sources, 1)]
    return "\n".join(lines)
