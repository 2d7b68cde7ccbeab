"""How the terminal chat shows answers: rendered Markdown in a terminal, the raw text elsewhere.

In a terminal, answers are rendered as they stream (bold, lists, headings, tables, highlighted code)
by bot/cli/stream.py and bot/cli/markdown.py with ``rich``. A pipe, a file, ``NO_COLOR``,
``TERM=dumb`` or ``--plain`` get the raw Markdown text as the model wrote it, so scripts keep working
(``wants_rendering``).

rich is never imported at start-up: ``prewarm()`` imports it in a background thread while the user
types the first question, and the first answer imports it anyway if that thread has not finished.
This module itself imports nothing heavy.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:
    from rich.console import Console

log = logging.getLogger(__name__)


class AnswerView(Protocol):
    """One answer on its way to the screen."""

    def feed(self, delta: str) -> None:
        """Show the next piece of the answer's text."""

    def close(self) -> None:
        """The answer is complete or cancelled: show the rest; the cursor ends at the start of a line."""


def wants_rendering(out: TextIO, env: Mapping[str, str] | None = None, *, plain: bool = False) -> bool:
    """Whether answers written to ``out`` are rendered: only on a terminal that can show colours."""
    env = os.environ if env is None else env
    if plain or env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    try:
        return out.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _load() -> None:
    import bot.cli.stream  # noqa: F401  (rich, markdown-it and pygments' base)


def prewarm() -> threading.Thread:
    """Import the renderer in a daemon thread, so that the first answer does not wait for it."""

    def run() -> None:
        try:
            _load()
        except Exception:  # reported by the first answer, which imports it again
            log.debug("could not import the renderer in the background", exc_info=True)

    thread = threading.Thread(target=run, name="render-prewarm", daemon=True)
    thread.start()
    return thread


class Renderer:
    """Makes one ``AnswerView`` per answer, rendering to the terminal ``out``.

    ``width``/``height`` fix the size (tests); by default the terminal's size at each answer.
    """

    def __init__(self, out: TextIO, *, width: int | None = None, height: int | None = None) -> None:
        self.out = out
        self.width = width
        self.height = height
        self._console: Console | None = None

    def start(self) -> AnswerView:
        from bot.cli.markdown import make_console
        from bot.cli.stream import MarkdownStream

        if self._console is None:
            self._console = make_console(self.out, width=self.width, height=self.height)
        return MarkdownStream(self._console)
