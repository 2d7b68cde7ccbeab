"""Claude's Markdown as Telegram HTML, and that HTML split into message-sized parts.

Telegram's HTML knows only a few tags (b, i, u, s, code, pre, a, blockquote,
tg-spoiler) and needs every other ``<``, ``>`` and ``&`` escaped. ``render`` is a pure
function that emits only those tags and never an unbalanced one: markup whose closing
half is missing is shown as the literal characters. ``render_parts`` cuts the result
into parts of at most 4000 visible UTF-16 units (Telegram counts the text after parsing)
and 100 entities, on paragraph and line boundaries, keeping the tags balanced in every
part, and keeps each part's Markdown source for a plain-text fallback.

Inline markup (emphasis, code spans, links) is bot.tg.markdown_inline; this module reads the
blocks around it. Telegram's nesting rules hold: code and pre are never inside another entity.

What Telegram cannot show is simplified, never dropped: headings become bold lines,
lists ``•``/``1.`` lines, a quote inside a quote joins the outer quote, and a table
becomes aligned monospace text in ``<pre>`` — where no formatting is possible, so its
cells show their visible text (``**b**`` → ``b``, ``[t](u)`` → ``t``, `` `x` `` → ``x``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from bot.tg.markdown_inline import SCHEMES, Inline, References, escape, label_key, lift_code, render_inline
from bot.tg.split import (
    MAX_ENTITIES,
    PART_LIMIT,
    entity_count,
    html_to_text,
    split_html,
    split_text,
    visible_len,
)

__all__ = ["Part", "Unit", "escape", "html_to_text", "render", "render_inline", "render_parts", "split_html"]

# -- blocks --------------------------------------------------------------------------------

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+(.*)$")
_TASK = re.compile(r"^\[([ xX])\][ \t]+(.*)$")
_ORDERED = re.compile(r"^([ \t]*)(\d{1,9})[.)][ \t]+(.*)$")
_QUOTE = re.compile(r"^ {0,3}>[ \t]?(.*)$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*$")
_REF_DEF = re.compile(
    r"^ {0,3}\[((?:[^\]\\]|\\.){1,999})\]:[ \t]*(?:<([^<>\s]+)>|(\S+))"
    r"(?:[ \t]+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?[ \t]*$"
)
_LANG = re.compile(r"[^\w+#.-]")
RULE_LINE = "──────────"


@dataclass(frozen=True)
class Unit:
    """One rendered line or block (code, quote, table) with the Markdown it came from."""

    html: str
    source: str
    blank: bool = False


@dataclass(frozen=True)
class Part:
    """One Telegram message: its HTML, and its Markdown source to send as plain text if the HTML is refused."""

    html: str
    plain: str


def _indent(spaces: str) -> str:
    return "  " * (len(spaces.expandtabs(4)) // 2)


def _line(line: str, refs: References) -> str:
    """A line that is not part of a fenced, quoted or table block."""
    if m := _HEADING.match(line):
        inner = Inline(m.group(1), refs).render(0, len(m.group(1)), frozenset({"b"}))
        return lift_code(f"<b>{inner}</b>") if inner.strip() else ""
    if _RULE.match(line):
        return RULE_LINE
    if m := _BULLET.match(line):
        body = m.group(2)
        mark = "•"
        if t := _TASK.match(body):
            mark, body = ("☑" if t.group(1) in "xX" else "☐"), t.group(2)
        return f"{_indent(m.group(1))}{mark} {render_inline(body, refs)}"
    if m := _ORDERED.match(line):
        return f"{_indent(m.group(1))}{m.group(2)}. {render_inline(m.group(3), refs)}"
    return render_inline(line, refs)


def _hard_break(line: str, following: str | None) -> str:
    """``line\\`` before another line of text is a line break: the backslash is not shown."""
    if following is None or not following.strip():
        return line
    trailing = len(line) - len(line.rstrip("\\"))
    return line[:-1] if trailing % 2 else line


def _code(code: str, lang: str) -> str:
    lang = _LANG.sub("", lang)[:32]
    if lang:
        return f'<pre><code class="language-{lang}">{escape(code)}</code></pre>'
    return f"<pre>{escape(code)}</pre>"


def _fence_end(lines: list[str], i: int, fence: str) -> int:
    """Index of the line closing the fence opened on line ``i`` (``len(lines)`` if it is never closed)."""
    closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    j = i + 1
    while j < len(lines) and not closing.match(lines[j]):
        j += 1
    return j


def _dedent(line: str, indent: int) -> str:
    """``line`` without up to ``indent`` leading spaces (a fence's own indentation is not code)."""
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(indent, spaces) :]


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _cells(row: str, refs: References) -> list[str]:
    """The visible text of a table row's cells (monospace text cannot show bold, links, …)."""
    row = row.strip().removeprefix("|").removesuffix("|")
    cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)]
    return [html_to_text(render_inline(c, refs)) for c in cells]


def _table(rows: list[str], refs: References) -> str:
    grid = [_cells(r, refs) for i, r in enumerate(rows) if i != 1]
    cols = max(len(r) for r in grid)
    grid = [r + [""] * (cols - len(r)) for r in grid]
    widths = [max(_width(r[c]) for r in grid) for c in range(cols)]

    def line(cells: list[str]) -> str:
        return " | ".join(cell + " " * (widths[c] - _width(cell)) for c, cell in enumerate(cells)).rstrip()

    text = "\n".join([line(grid[0]), "-+-".join("-" * w for w in widths), *(line(r) for r in grid[1:])])
    return f"<pre>{escape(text)}</pre>"


def _references(lines: list[str]) -> tuple[list[str], dict[str, str]]:
    """The lines without link reference definitions (``[ref]: https://…``), and those definitions.

    Only definitions with an absolute URL count (``[참고]: 중요`` is text), and none inside code.
    """
    kept: list[str] = []
    refs: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := _FENCE.match(line):
            j = _fence_end(lines, i, m.group(2))
            kept.extend(lines[i : j + 1])
            i = j + 1
            continue
        d = _REF_DEF.match(line)
        url = (d.group(2) or d.group(3)) if d else ""
        if d and url.lower().startswith(SCHEMES):
            refs.setdefault(label_key(d.group(1)), url)
        else:
            kept.append(line)
        i += 1
    return kept, refs


def _blocks(lines: list[str], refs: References, quoted: bool = False) -> list[Unit]:
    """Rendered units of ``lines``; inside a quote (``quoted``) a nested quote joins the outer one."""
    units: list[Unit] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            if units and not units[-1].blank:
                units.append(Unit("", "", blank=True))
            i += 1
        elif m := _FENCE.match(line):
            j = _fence_end(lines, i, m.group(2))
            indent = len(m.group(1).expandtabs(4))
            code = "\n".join(_dedent(code_line, indent) for code_line in lines[i + 1 : j])
            source = "\n".join(lines[i : j + 1])
            units.append(Unit(_code(code, m.group(3)), source) if code.strip() else Unit("", source, blank=True))
            i = j + 1
        elif _QUOTE.match(line):
            j = i
            while j < len(lines) and _QUOTE.match(lines[j]):
                j += 1
            inner = _blocks([_QUOTE.match(q).group(1) for q in lines[i:j]], refs, quoted=True)  # type: ignore[union-attr]
            source = "\n".join(lines[i:j])
            body = "\n".join(u.html for u in inner).strip("\n")
            if quoted:
                units.extend(inner)
            else:
                units.append(Unit(f"<blockquote>{body}</blockquote>", source) if body.strip() else Unit("", source))
            i = j
        elif "|" in line and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]) and "|" in lines[i + 1]:
            j = i + 2
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                j += 1
            units.append(Unit(_table(lines[i:j], refs), "\n".join(lines[i:j])))
            i = j
        else:
            following = lines[i + 1] if i + 1 < len(lines) else None
            units.append(Unit(_line(_hard_break(line, following), refs), line))
            i += 1
    while units and units[-1].blank:
        units.pop()
    return units


def _units(markdown: str) -> list[Unit]:
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines, refs = _references(lines)
    return _blocks(lines, refs)


def render(markdown: str) -> str:
    """Claude's Markdown as Telegram HTML (only Telegram's tags; everything else escaped)."""
    return "\n".join(u.html for u in _units(markdown))


# -- parts -----------------------------------------------------------------------------------


def render_parts(markdown: str, limit: int = PART_LIMIT, max_entities: int = MAX_ENTITIES) -> list[Part]:
    """``markdown`` rendered and cut into Telegram messages of at most ``limit`` visible UTF-16 units.

    Telegram counts a message's text after parsing, so tags cost nothing; a part also
    holds at most ``max_entities`` entities. Whole lines and blocks are packed into a
    part; a cut prefers a blank line (a paragraph boundary) in the second half of the
    part, then the last line boundary that fits. A single block larger than a part (e.g.
    a long code block) is cut by ``split_html``: the code block is closed at the end of
    one part and reopened, with its language, in the next.
    """
    units: list[Unit] = []
    for u in _units(markdown):
        if visible_len(u.html) <= limit and entity_count(u.html) <= max_entities:
            units.append(u)
        else:
            units.extend(Unit(piece, html_to_text(piece)) for piece in split_html(u.html, limit, max_entities))
    parts: list[Part] = []

    def emit(us: list[Unit]) -> None:
        while us and us[-1].blank:
            us = us[:-1]
        html_text = "\n".join(u.html for u in us).strip("\n")
        if html_to_text(html_text).strip():
            parts.append(Part(html_text, "\n".join(u.source for u in us).strip("\n")))

    cur: list[Unit] = []
    sizes: list[tuple[int, int]] = []  # (visible units, entities) of each unit in cur
    total, entities = -1, 0  # visible size of cur joined by line breaks (-1 when empty), and its entities
    for unit in units:
        if not cur and unit.blank:
            continue
        cur.append(unit)
        sizes.append((visible_len(unit.html), entity_count(unit.html)))
        total += sizes[-1][0] + 1
        entities += sizes[-1][1]
        while total > limit or entities > max_entities:
            c = _cut(cur, sizes, limit, max_entities)
            emit(cur[:c])
            cur, sizes = cur[c:], sizes[c:]
            while cur and cur[0].blank:
                cur, sizes = cur[1:], sizes[1:]
            total = sum(v + 1 for v, _ in sizes) - 1
            entities = sum(e for _, e in sizes)
    emit(cur)
    if not parts and markdown.strip():  # only markup that shows nothing (e.g. an empty fence): send it as it is
        parts = [Part(escape(chunk), chunk) for chunk in split_text(markdown, limit // 5)]
    return parts


def _cut(cur: list[Unit], sizes: list[tuple[int, int]], limit: int, max_entities: int) -> int:
    """How many of the units in ``cur`` go into the next part (at least one; the rest fit no more)."""
    fits = [1]
    total, entities = -1, 0
    for c in range(1, len(cur)):
        total += sizes[c - 1][0] + 1
        entities += sizes[c - 1][1]
        if total > limit or entities > max_entities:
            break
        fits.append(c)
    paragraph = [c for c in fits if cur[c].blank and _prefix(sizes, c) > limit // 2]
    return paragraph[-1] if paragraph else fits[-1]


def _prefix(sizes: list[tuple[int, int]], c: int) -> int:
    return sum(v + 1 for v, _ in sizes[:c]) - 1
