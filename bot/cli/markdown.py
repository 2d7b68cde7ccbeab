"""Rendering Markdown answers in a terminal with ``rich``: the pieces bot/cli/stream.py prints.

Imports rich at once: the chat imports it only when the first answer is shown (or in a background
thread while the user types; bot/cli/render.py), so the prompt never waits for it.

rich's Markdown, with a few choices made for chat answers: a single newline is a line break (as in
Telegram and chat apps), links show their address, paragraphs are not padded with trailing spaces,
numbered lists keep "1." (aligned up to 99 items, also when a list is printed in runs), and code is
highlighted on the terminal's own background without padding, so it can be copied as it is.
"""

from __future__ import annotations

import functools
from typing import ClassVar, TextIO

from markdown_it import MarkdownIt
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markdown import CodeBlock, ListElement, ListItem, Markdown, MarkdownElement
from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text

CODE_THEME = "monokai"


def parser() -> MarkdownIt:
    """The Markdown dialect rich renders (CommonMark with tables and strikethrough)."""
    return MarkdownIt().enable("strikethrough").enable("table")


# -- rendering of whole blocks ---------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def lexer_for(language: str) -> Lexer | str:
    """Pygments' lexer for a fence's language (looked up once: the lookup is slow), else plain text."""
    try:
        return get_lexer_by_name(language) if language else "text"
    except ClassNotFound:
        return "text"


def code_syntax(code: str, lexer: str | Lexer, *, word_wrap: bool = False) -> Syntax:
    """Highlighted code on the terminal's own background, without padding."""
    if isinstance(lexer, str):
        lexer = lexer_for(lexer)
    return Syntax(code, lexer, theme=CODE_THEME, background_color="default", padding=0, word_wrap=word_wrap)


class _NestedCode(CodeBlock):
    """A code block inside a list or a quote: highlighted, no padding or background (copyable)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield code_syntax(str(self.text).rstrip(), self.lexer_name, word_wrap=True)


class _Item(ListItem):
    """A list item numbered "1." rather than rich's bare "1", aligned for lists of up to 99 items."""

    def render_number(self, console: Console, options: ConsoleOptions, number: int, last_number: int) -> RenderResult:
        width = max(len(str(last_number - 1)), 2) + 2
        lines = console.render_lines(self.elements, options.update(width=options.max_width - width), style=self.style)
        style = console.get_style("markdown.item.number", default="none")
        numeral = Segment(f"{number}.".rjust(width - 1) + " ", style)
        padding = Segment(" " * width, style)
        for i, line in enumerate(lines):
            yield numeral if i == 0 else padding
            yield from line
            yield Segment("\n")


class AnswerMarkdown(Markdown):
    """rich's Markdown with the chat's choices (see the module's docstring)."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "fence": _NestedCode,
        "code_block": _NestedCode,
        "bullet_list_open": ListElement,
        "ordered_list_open": ListElement,
        "list_item_open": _Item,
    }

    def __init__(self, markup: str) -> None:
        super().__init__(markup, code_theme=CODE_THEME, justify="default", hyperlinks=False)
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"


class Trimmed:
    """A renderable without blank lines around it (rich's Markdown starts a list with one, a table
    has empty edge lines, a rule ends with one): the stream puts exactly one between blocks."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options, pad=False)
        blank = [not "".join(s.text for s in line).strip() for line in lines]
        if all(blank):
            return
        first, last = blank.index(False), len(blank) - blank[::-1].index(False)
        for line in lines[first:last]:
            yield from _rstrip(line)
            yield Segment.line()


def _rstrip(line: list[Segment]) -> list[Segment]:
    """A line without the padding spaces rich adds up to the width (kept where they have a background)."""
    line = list(line)
    while line and not line[-1].control:
        segment = line[-1]
        if segment.style is not None and segment.style.bgcolor is not None:
            break
        text = segment.text.rstrip(" ")
        if text:
            line[-1] = Segment(text, segment.style)
            break
        line.pop()
    return line


class Slot:
    """What the live region shows, changed in place: rich's Live draws its renderable again below
    whatever is printed above it, so the new content must be in place before the print."""

    def __init__(self) -> None:
        self.content: RenderableType = Text("")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.content


class Bottom:
    """The last ``height`` lines of a renderable: what the live region shows of a tall block."""

    def __init__(self, renderable: RenderableType, height: int) -> None:
        self.renderable = renderable
        self.height = max(1, height)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options.update(height=None), pad=False)
        for line in lines[-self.height :]:
            yield from line
            yield Segment.line()


def make_console(file: TextIO, *, width: int | None = None, height: int | None = None) -> Console:
    """A console for a terminal: colours as the terminal says, no guessing of markup or emoji codes."""
    return Console(
        file=file,
        force_terminal=True,
        width=width,
        height=height,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=False,
    )
