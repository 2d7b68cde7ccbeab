"""One answer streamed into a terminal as rendered Markdown (bot/cli/markdown.py renders the pieces).

How an answer streams without flicker and without duplicated lines in the scrollback:

- The text received so far is cut into top-level Markdown blocks (paragraphs, headings, lists,
  tables, quotes, code fences...) with the parser rich itself uses (markdown-it). A block is final
  once the next block has begun on a complete line: nothing later can change it, so it is printed
  once, for good, into the scrollback.
- Only the unfinished last block is "live": shown in a transient ``rich.live.Live`` region that is
  redrawn as deltas arrive and erased when its block is printed. The region is never taller than
  the screen (the last lines of a taller block are shown), so Live never scrolls a half-drawn frame
  into the scrollback; each redraw is one synchronized update.
- A long list is printed item by item, as each next item begins; a code fence line by line, as its
  lines complete (read without parsing the fence again; highlighted from a few lines back).
- Code is printed highlighted but as it is: no margin, box, background or wrapping inside the code
  lines (a long line is left for the terminal to wrap), so it can be copied from the screen.
- Control characters in the text are shown (␛), never sent to the terminal.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from markdown_it.token import Token
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from bot.cli.clean import visible_controls
from bot.cli.markdown import AnswerMarkdown, Bottom, Slot, Trimmed, code_syntax, lexer_for, parser

log = logging.getLogger(__name__)

LISTS = ("bullet_list_open", "ordered_list_open")
SYNC_BEGIN, SYNC_END = "\x1b[?2026h", "\x1b[?2026l"  # synchronized output: the terminal shows a redraw
# at once (terminals without the mode ignore it)
_PARSER = parser()


def lines_of(text: str) -> list[str]:
    """``text`` cut after each "\n" only (str.splitlines also cuts at other separators)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


# -- cutting the text into blocks --------------------------------------------------------------
CODE_CONTEXT = 20  # lines of code before the new ones that the highlighter sees again


class _Fence:
    """The code fence being written: how it closes, its language, the lines printed so far."""

    def __init__(self, char: str, length: int, indent: int, language: str) -> None:
        self.char, self.length, self.indent = char, length, indent
        self.lexer = lexer_for(language)
        self.lines: list[str] = []
        self.scanned = 0  # offset in ``pending`` of the first line not read yet

    def closes(self, line: str) -> bool:
        """A closing fence line (CommonMark): up to 3 spaces, the fence's character at least as many
        times as it opened with, nothing else."""
        body = line.rstrip("\n")
        text = body.strip(" \t")
        return len(body) - len(body.lstrip(" ")) <= 3 and len(text) >= self.length and set(text) == {self.char}

    def code_line(self, line: str) -> str:
        """The line as code: without its newline, and without the fence's own indentation."""
        line = line.rstrip("\n")
        cut = min(self.indent, len(line) - len(line.lstrip(" ")))
        return line[cut:]


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
        self.slot = Slot()  # the live region's content
        self.units = 0  # blocks (or runs of list items) printed so far
        self.in_list = False  # ``pending`` continues a list whose first items are printed
        self.fence: _Fence | None = None  # the code fence being written, if any
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
        self.pending += visible_controls(delta.replace("\r\n", "\n").replace("\r", "\n"))
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
                self._sync(self.live.refresh)
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
        self._sync(lambda: self.console.print(Group(*renderables), crop=False))

    def _sync(self, draw: Callable[[], None]) -> None:
        """``draw`` (one write of the console) between the synchronized-output marks."""
        file = self.console.file
        file.write(SYNC_BEGIN)
        try:
            draw()
        finally:
            file.write(SYNC_END)
            file.flush()

    # -- cutting and printing
    def _advance(self, *, final: bool) -> list[RenderableType]:
        """Take the blocks that are final off ``pending``; returns what to print for them."""
        out: list[RenderableType] = []
        while True:
            if self.fence is not None:  # lines of code: no need to parse the whole fence again
                out += self._fence_lines(final=final)
                if self.fence is not None:
                    return out
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
                out += self._open_fence(first)
                out += self._fence_lines(final=final)
                if self.fence is not None:
                    return out
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
        return [*self._separator(), Trimmed(AnswerMarkdown(markup.rstrip("\n")))]

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

    def _open_fence(self, block: Block) -> list[RenderableType]:
        """A code fence begins (its first line is complete): the language on a line of its own."""
        opening = self.pending[line_offset(self.pending, block.start) :].split("\n", 1)[0]
        marker = block.token.markup
        lexer = (block.token.info or "").strip().split(" ")[0]
        self.fence = _Fence(marker[0], len(marker), len(opening) - len(opening.lstrip(" ")), lexer)
        self.fence.scanned = line_offset(self.pending, block.start + 1)
        return [*self._separator(), *([Text(lexer, style="dim")] if lexer else [])]

    def _fence_lines(self, *, final: bool) -> list[RenderableType]:
        """The open fence's lines completed since last time: printed as code; at its closing line
        (or at the end of the answer) the fence is done and ``pending`` goes on after it."""
        fence = self.fence
        assert fence is not None
        end = len(self.pending) if final else self.pending.rfind("\n") + 1
        closed_at: int | None = None
        position = fence.scanned
        new: list[str] = []
        for line in lines_of(self.pending[fence.scanned : end]):
            if fence.closes(line):
                closed_at = position + len(line)
                break
            new.append(fence.code_line(line))
            position += len(line)
        fence.scanned = position
        out = self._code(fence, new)
        if closed_at is not None or final:
            self.pending = self.pending[closed_at if closed_at is not None else len(self.pending) :]
            self.fence = None
            self._done()
        return out

    def _code(self, fence: _Fence, new: list[str]) -> list[RenderableType]:
        """New lines of code, highlighted, unwrapped. The lexer starts a few lines back (at a line
        that is not indented, if there is one) rather than at the top of the fence each time."""
        if not new:
            return []
        done = len(fence.lines)
        fence.lines += new
        start = max(0, done - CODE_CONTEXT)
        for i in range(done, start - 1, -1):
            if i < done and fence.lines[i][:1] not in ("", " ", "\t"):
                start = i
                break
        code = "\n".join(fence.lines[start:])
        highlighted = list(code_syntax(code, fence.lexer).highlight(code).split("\n", allow_blank=True))
        highlighted += [Text("") for _ in range(len(fence.lines) - start - len(highlighted))]  # (trailing blank
        # lines: the highlighter drops them)
        out: list[RenderableType] = []
        for line in highlighted[done - start : len(fence.lines) - start]:
            line.no_wrap, line.overflow, line.end = True, "ignore", "\n"
            out.append(line)
        return out

    def _tail(self) -> RenderableType | None:
        """What the live region shows: the unfinished block (or the unfinished line of code)."""
        if self.fence is not None:
            partial = self.fence.code_line(self.pending[self.fence.scanned :])
            if not partial:
                return None
            line = code_syntax(partial, self.fence.lexer).highlight(partial)
            line.no_wrap, line.overflow = True, "ellipsis"
            return line
        if not self.pending.strip():
            return None
        return Group(*self._separator(), Trimmed(AnswerMarkdown(self.pending)))

    def _bounded(self, tail: RenderableType | None) -> RenderableType:
        if tail is None:
            return Text("")
        return Bottom(tail, self.console.size.height - 1)

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
