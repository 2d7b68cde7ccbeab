"""An answer rendered as Markdown in a terminal while it streams (``rich``); used by bot/cli_render.py.

Imports rich at once: bot/cli_render.py imports this module only when the first answer is shown
(or in a background thread while the user types), so the chat's prompt never waits for it.

How an answer streams without flicker and without duplicated lines in the scrollback:

- The text received so far is cut into top-level Markdown blocks (paragraphs, headings, lists,
  tables, quotes, code fences...) with the parser rich itself uses (markdown-it). A block is final
  once the next block has begun on a complete line: nothing later can change it, so it is printed
  once, for good, into the scrollback.
- Only the unfinished last block is "live": shown in a transient ``rich.live.Live`` region that is
  redrawn as deltas arrive and erased when its block is printed. The region is a few lines high and
  never taller than the screen (the last lines of a taller block are shown), so Live never scrolls
  a half-drawn frame into the scrollback.
- A long list is printed item by item, as each next item begins; a code fence line by line, as its
  lines complete.
- Code is printed highlighted but as it is: no margin, box, background or wrapping inside the code
  lines (a long line is left for the terminal to wrap), so it can be copied from the screen.

Rendering differs from rich's own Markdown in a few choices made for chat answers: a single newline
is a line break (as in Telegram and chat apps), links show their address, paragraphs are not padded
with trailing spaces, and numbered lists keep "1." (aligned up to 99 items, also across chunks).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, TextIO

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.markdown import CodeBlock, ListElement, ListItem, Markdown, MarkdownElement
from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text

log = logging.getLogger(__name__)

CODE_THEME = "monokai"
LISTS = ("bullet_list_open", "ordered_list_open")


def parser() -> MarkdownIt:
    """The Markdown dialect rich renders (CommonMark with tables and strikethrough)."""
    return MarkdownIt().enable("strikethrough").enable("table")


_PARSER = parser()


# -- rendering of whole blocks ---------------------------------------------------------------
def code_syntax(code: str, lexer: str, *, word_wrap: bool = False) -> Syntax:
    """Highlighted code on the terminal's own background, without padding."""
    return Syntax(code, lexer or "text", theme=CODE_THEME, background_color="default", padding=0, word_wrap=word_wrap)


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


class _Trimmed:
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


class _Slot:
    """What the live region shows, changed in place: rich's Live draws its renderable again below
    whatever is printed above it, so the new content must be in place before the print."""

    def __init__(self) -> None:
        self.content: RenderableType = Text("")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.content


class _Bottom:
    """The last ``height`` lines of a renderable: what the live region shows of a tall block."""

    def __init__(self, renderable: RenderableType, height: int) -> None:
        self.renderable = renderable
        self.height = max(1, height)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options.update(height=None), pad=False)
        for line in lines[-self.height :]:
            yield from line
            yield Segment.line()


# -- cutting the text into blocks --------------------------------------------------------------
@dataclass(frozen=True)
class Block:
    """A top-level Markdown block: its opening token and its lines [start, end) in the parsed text."""

    token: Token
    start: int
    end: int

    @property
    def kind(self) -> str:
        return self.token.type


def top_blocks(tokens: Iterable[Token]) -> list[Block]:
    return [Block(t, t.map[0], t.map[1]) for t in tokens if t.level == 0 and t.nesting >= 0 and t.map]


def fence_closed(lines: list[str], block: Block) -> bool:
    """Whether the code fence ``block`` has its closing fence line."""
    last = block.end - 1
    if last <= block.start or last >= len(lines):
        return False
    marker = block.token.markup
    line = lines[last].strip()
    return len(line) >= len(marker) and set(line) == {marker[0]}


def line_offset(text: str, line: int) -> int:
    """The character offset where line number ``line`` (0-based) of ``text`` starts."""
    offset = 0
    for _ in range(line):
        found = text.find("\n", offset)
        if found < 0:
            return len(text)
        offset = found + 1
    return offset


# -- one streamed answer -----------------------------------------------------------------------
class MarkdownStream:
    """One answer, fed in deltas, rendered to ``console`` (a terminal) as described above.

    ``feed()`` as text arrives, ``close()`` once at the end (also after a cancelled answer: what
    arrived is printed). Rendering trouble never loses text: the rest is then written raw.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.pending = ""  # received and not yet printed for good; starts at a block boundary
        self.live: Live | None = None
        self.slot = _Slot()  # the live region's content
        self.units = 0  # blocks (or runs of list items) printed so far
        self.in_list = False  # ``pending`` continues a list whose first items are printed
        self.code_lines: int | None = None  # lines printed of the open code fence; None: no fence open
        self.code_lexer = ""  # the language of the open code fence
        self.midline = False  # raw text (after a failure) left the cursor inside a line
        self.broken = False
        self.closed = False

    # -- the public side
    def feed(self, delta: str) -> None:
        if not delta or self.closed:
            return
        if self.broken:
            self._raw(delta)
            return
        self.pending += delta.replace("\r\n", "\n").replace("\r", "\n")
        try:
            done = self._advance(final=False)
            tail = self._tail()
            self.slot.content = self._bounded(tail)
            if tail is not None and self.live is None:
                self.live = Live(
                    self.slot, console=self.console, auto_refresh=False, transient=True, redirect_stdout=False,
                    redirect_stderr=False, vertical_overflow="visible",
                )  # fmt: skip
                self.live.start()
            if done:
                self._print(done)  # above the live region, which is redrawn below in the same write
            elif self.live is not None:
                self.live.refresh()
        except Exception:
            self._fail()

    def close(self) -> None:
        """The answer is complete (or cancelled): print what is left and end the live region."""
        if self.closed:
            return
        self.closed = True
        if self.broken:
            self._end_raw()
            return
        try:
            done = self._advance(final=True)
            self._stop_live()
            if done:
                self._print(done)
        except Exception:
            self._fail()
            self._end_raw()

    def _print(self, renderables: list[RenderableType]) -> None:
        # one Group, so that lines of code are not joined like print()'s Text arguments; not
        # cropped, so that long lines of code reach the terminal whole (it wraps them)
        self.console.print(Group(*renderables), crop=False)

    # -- cutting and printing
    def _advance(self, *, final: bool) -> list[RenderableType]:
        """Take the blocks that are final off ``pending``; returns what to print for them."""
        out: list[RenderableType] = []
        while True:
            cut = len(self.pending) if final else self.pending.rfind("\n") + 1
            src = self.pending[:cut]
            tokens = _PARSER.parse(src)
            blocks = top_blocks(tokens)
            if not blocks:
                if final:
                    self.pending = ""
                return out
            first = blocks[0]
            following = blocks[1].start if len(blocks) > 1 else None
            if first.kind == "fence":
                lines = src.split("\n")
                out += self._code(first)
                if following is None and not final and not fence_closed(lines, first):
                    return out
                self.code_lines = None
                self._done()
                self._drop(following if following is not None else first.end)
                continue
            if following is None and not final:
                if first.kind in LISTS:
                    out += self._list_items(tokens, first, src)
                return out
            end = following if following is not None else len(src.split("\n"))
            start = line_offset(src, first.start)
            out += self._block(src[start : line_offset(src, end)])
            self._done()
            self._drop(end)

    def _separator(self) -> list[RenderableType]:
        """A blank line between blocks, as rich puts between the blocks of one document."""
        return [Text("")] if self.units and not self.in_list else []

    def _done(self) -> None:
        self.units += 1
        self.in_list = False

    def _drop(self, line: int) -> None:
        self.pending = self.pending[line_offset(self.pending, line) :]

    def _block(self, markup: str) -> list[RenderableType]:
        return [*self._separator(), _Trimmed(AnswerMarkdown(markup.rstrip("\n")))]

    def _list_items(self, tokens: list[Token], first: Block, src: str) -> list[RenderableType]:
        """The finished items of the list being written (all but the last), printed as a run."""
        items = [t for t in tokens if t.type == "list_item_open" and t.level == 1 and t.map]
        if len(items) < 2:
            return []
        last = items[-1].map[0] if items[-1].map else first.end
        out = self._block(src[line_offset(src, first.start) : line_offset(src, last)])
        self._done()
        self.in_list = True
        self._drop(last)
        return out

    def _code(self, block: Block) -> list[RenderableType]:
        """The code lines of a fence not printed yet (complete lines only), highlighted, unwrapped."""
        out: list[RenderableType] = []
        lexer = self.code_lexer = (block.token.info or "").strip().split(" ")[0]
        if self.code_lines is None:
            out += self._separator()
            if lexer:
                out.append(Text(lexer, style="dim"))
            self.code_lines = 0
        code = block.token.content
        lines = code.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > self.code_lines:
            highlighted = code_syntax(code, lexer).highlight(code).split("\n", allow_blank=True)
            for line in list(highlighted)[self.code_lines : len(lines)]:
                line.no_wrap, line.overflow, line.end = True, "ignore", "\n"
                out.append(line)
            self.code_lines = len(lines)
        return out

    def _tail(self) -> RenderableType | None:
        """What the live region shows: the unfinished block (or the unfinished line of code)."""
        if self.code_lines is not None:
            partial = self.pending[self.pending.rfind("\n") + 1 :]
            if not partial:
                return None
            line = code_syntax(partial, self.code_lexer).highlight(partial)
            line.no_wrap, line.overflow = True, "ellipsis"
            return line
        if not self.pending.strip():
            return None
        return Group(*self._separator(), _Trimmed(AnswerMarkdown(self.pending)))

    def _bounded(self, tail: RenderableType | None) -> RenderableType:
        if tail is None:
            return Text("")
        return _Bottom(tail, self.console.size.height - 1)

    # -- endings
    def _stop_live(self) -> None:
        live, self.live = self.live, None
        if live is not None:
            self.slot.content = Text("")
            live.stop()  # transient: the region is erased, the cursor shown again

    def _fail(self) -> None:
        """Rendering failed: what was not printed yet, and from here on all text, goes out raw."""
        log.warning("could not render the answer; showing it as text", exc_info=True)
        self.broken = True
        try:
            self._stop_live()
        except Exception:
            log.warning("could not end the live display", exc_info=True)
            self.console.show_cursor(True)
        pending, self.pending = self.pending, ""
        self._raw(pending)

    def _raw(self, text: str) -> None:
        if text:
            self.console.file.write(text)
            self.console.file.flush()
            self.midline = not text.endswith("\n")

    def _end_raw(self) -> None:
        if self.midline:
            self._raw("\n")


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
