"""A terminal emulator for tests (pyte): what output leaves on the screen and in the scrollback."""

from __future__ import annotations

import pyte
from pyte import modes


class Term:
    """A ``columns`` x ``lines`` terminal with a scrollback; feed it what a program wrote."""

    def __init__(self, columns: int = 80, lines: int = 24) -> None:
        self.columns = columns
        self.screen = pyte.HistoryScreen(columns, lines, history=100_000)
        self.stream = pyte.ByteStream(self.screen)

    def feed(self, data: bytes | str, *, onlcr: bool = False) -> None:
        """``onlcr``: turn "\\n" into "\\r\\n" as a terminal's line discipline does (for output that
        did not go through a pseudo-terminal)."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        self.stream.feed(raw.replace(b"\n", b"\r\n") if onlcr else raw)

    def _row(self, line: dict) -> str:
        return "".join(line[x].data for x in range(self.columns)).rstrip()

    def rows(self) -> list[str]:
        """Every row, scrollback first, without trailing spaces or trailing empty rows."""
        rows = [self._row(line) for line in self.screen.history.top]
        rows += [self._row(self.screen.buffer[y]) for y in range(self.screen.lines)]
        while rows and not rows[-1]:
            rows.pop()
        return rows

    def cells(self) -> list[pyte.screens.Char]:
        """Every character cell, scrollback first (for attributes: bold, colours)."""
        lines = [*self.screen.history.top, *(self.screen.buffer[y] for y in range(self.screen.lines))]
        return [line[x] for line in lines for x in range(self.columns)]

    def styled(self, text: str) -> list[pyte.screens.Char]:
        """The cells of the first occurrence of ``text`` (no wide characters across a row's end)."""
        cells = [c for c in self.cells() if c.data]  # a wide character's second cell is empty
        joined = "".join(c.data for c in cells)
        at = joined.index(text)
        return cells[at : at + len(text)]

    @property
    def cursor_visible(self) -> bool:
        return modes.DECTCEM in self.screen.mode
