"""Claude's Markdown as Telegram HTML, and that HTML split into message-sized parts.

Telegram's HTML knows only a few tags (b, i, u, s, code, pre, a, blockquote,
tg-spoiler) and needs every other ``<``, ``>`` and ``&`` escaped. ``render`` is a pure
function that emits only those tags and never an unbalanced one: markup whose closing
half is missing is shown as the literal characters. ``render_parts`` cuts the result
into parts of at most 4096 UTF-16 units on paragraph and line boundaries, keeping the
tags balanced in every part, and keeps each part's Markdown source for a plain-text
fallback.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections import deque
from dataclasses import dataclass

from bot.tg.split import TELEGRAM_LIMIT, split_text, utf16_len

# -- inline markup -----------------------------------------------------------------------------

_ESCAPABLE = set("\\`*_{}[]()#+-.!|~<>&\"'=:;,/?@$%^")
_EMPHASIS: dict[tuple[str, int], tuple[str, ...]] = {
    ("*", 1): ("i",),
    ("*", 2): ("b",),
    ("*", 3): ("b", "i"),
    ("_", 1): ("i",),
    ("_", 2): ("b",),
    ("_", 3): ("b", "i"),
    ("~", 2): ("s",),
    ("|", 2): ("tg-spoiler",),
}
MAX_LABEL = 500  # longer "[...](...)" spans are not links (keeps pathological input fast)
MAX_URL = 2048
_SCHEMES = ("http://", "https://", "tg://", "mailto:", "ftp://")
_AUTOLINK = re.compile(r"<((?:https?|tg|ftp)://[^\s<>]+|mailto:[^\s<>]+)>")


def escape(text: str) -> str:
    """Escape the three characters Telegram's HTML reserves."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _run_length(text: str, i: int, end: int) -> int:
    j = i
    while j < end and text[j] == text[i]:
        j += 1
    return j - i


class _Inline:
    """Inline Markdown of one line (or one table cell) to HTML."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._no_closer: dict[tuple[str, int, int], int] = {}  # (char, run, end) -> no closer at or after

    def render(self, start: int, end: int, active: frozenset[str] = frozenset(), links: bool = True) -> str:
        s = self.text
        out: list[str] = []
        i = start
        while i < end:
            c = s[i]
            if c == "\\" and i + 1 < end and s[i + 1] in _ESCAPABLE:
                out.append(escape(s[i + 1]))
                i += 2
            elif c == "`":
                run = _run_length(s, i, end)
                close = self._code_close(i + run, end, run)
                if close < 0:
                    out.append(escape(s[i : i + run]))
                    i += run
                    continue
                code = s[i + run : close]
                if len(code) > 2 and code[0] == " " and code[-1] == " " and code.strip():
                    code = code[1:-1]
                out.append(escape(code) if "code" in active or not code else f"<code>{escape(code)}</code>")
                i = close + run
            elif c == "[" and links and (link := self._link(i, end, active)) is not None:
                rendered, i = link
                out.append(rendered)
            elif c == "<" and links and (m := _AUTOLINK.match(s, i, end)) is not None:
                url = m.group(1)
                out.append(f'<a href="{html.escape(url, quote=True)}">{escape(url)}</a>')
                i = m.end()
            elif c in "*_~|":
                run = _run_length(s, i, end)
                emphasis = self._emphasis(i, run, end, active, links)
                if emphasis is None:
                    out.append(escape(s[i : i + run]))
                    i += run
                else:
                    rendered, i = emphasis
                    out.append(rendered)
            else:
                j = i + 1
                while j < end and s[j] not in "\\`[<*_~|":
                    j += 1
                out.append(escape(s[i:j]))
                i = j
        return "".join(out)

    def _code_close(self, i: int, end: int, run: int) -> int:
        """Start of the backtick run of exactly ``run`` that closes a code span, or -1."""
        s = self.text
        while True:
            i = s.find("`" * run, i, end)
            if i < 0:
                return -1
            n = _run_length(s, i, end)
            if n == run:
                return i
            i += n

    def _skip(self, i: int, end: int) -> int:
        """Index after an escape or a whole code span starting at ``i`` (else ``i + 1``)."""
        s = self.text
        if s[i] == "\\" and i + 1 < end:
            return i + 2
        if s[i] == "`":
            run = _run_length(s, i, end)
            close = self._code_close(i + run, end, run)
            return close + run if close >= 0 else i + run
        return i + 1

    def _emphasis(self, i: int, run: int, end: int, active: frozenset[str], links: bool) -> tuple[str, int] | None:
        s = self.text
        c = s[i]
        tags = _EMPHASIS.get((c, run))
        if tags is None:
            return None
        after = i + run
        if after >= end or s[after].isspace():
            return None  # an opener is followed by text
        if c == "_" and i > 0 and s[i - 1].isalnum():
            return None  # snake_case is not emphasis
        close = self._closer(c, run, after, end)
        if close < 0:
            return None
        if c == "_" and run == 2 and s[after:close].isidentifier():
            return None  # __init__ is a name, not bold
        inner = self.render(after, close, active | set(tags), links)
        new = [t for t in tags if t not in active]
        opened = "".join(f"<{t}>" for t in new)
        closed = "".join(f"</{t}>" for t in reversed(new))
        return opened + inner + closed, close + run

    def _closer(self, c: str, run: int, start: int, end: int) -> int:
        """Start of the delimiter run that closes an emphasis opened before ``start``, or -1."""
        key = (c, run, end)
        if self._no_closer.get(key, end + 1) <= start:
            return -1
        s = self.text
        i = start
        while i < end:
            ch = s[i]
            if ch == c:
                n = _run_length(s, i, end)
                if (
                    n == run
                    and i > start
                    and not s[i - 1].isspace()
                    and not (c == "_" and i + n < end and s[i + n].isalnum())
                ):
                    return i
                i += n
            elif ch in "\\`":
                i = self._skip(i, end)
            else:
                i += 1
        self._no_closer[key] = min(start, self._no_closer.get(key, start))
        return -1

    def _link(self, i: int, end: int, active: frozenset[str]) -> tuple[str, int] | None:
        """``[label](url)`` with an absolute URL → ``<a href>``; None if it is not one."""
        s = self.text
        scan_end = min(end, i + MAX_LABEL)
        if s.find("]", i, scan_end) < 0:
            return None
        depth = 0
        j = i
        label_end = -1
        while j < scan_end:
            ch = s[j]
            if ch in "\\`":
                j = self._skip(j, end)
                continue
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    label_end = j
                    break
            j += 1
        if label_end < 0 or label_end + 1 >= end or s[label_end + 1] != "(":
            return None
        k = label_end + 2
        parens = 0
        url_start = k
        url_end = min(end, k + MAX_URL)
        while k < url_end:
            ch = s[k]
            if ch == "(":
                parens += 1
            elif ch == ")":
                if parens == 0:
                    break
                parens -= 1
            elif ch.isspace():
                break
            k += 1
        url = s[url_start:k]
        close = s.find(")", k, end)
        if close < 0 or s[k:close].strip() and not re.fullmatch(r'\s+(".*"|\'.*\')\s*', s[k:close]):
            return None
        if not url.lower().startswith(_SCHEMES):
            return None
        label = self.render(i + 1, label_end, active, links=False) if label_end > i + 1 else escape(url)
        return f'<a href="{html.escape(url, quote=True)}">{label}</a>', close + 1


def render_inline(text: str) -> str:
    """One line of inline Markdown (bold, italic, strike, spoiler, code, links) as Telegram HTML."""
    return _Inline(text).render(0, len(text))


# -- blocks --------------------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+(.*)$")
_TASK = re.compile(r"^\[([ xX])\][ \t]+(.*)$")
_ORDERED = re.compile(r"^([ \t]*)(\d{1,9})[.)][ \t]+(.*)$")
_QUOTE = re.compile(r"^ {0,3}>[ \t]?(.*)$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*$")
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


def _line(line: str) -> str:
    """A line that is not part of a fenced, quoted or table block."""
    if m := _HEADING.match(line):
        inner = _Inline(m.group(1)).render(0, len(m.group(1)), frozenset({"b"}))
        return f"<b>{inner}</b>" if inner.strip() else ""
    if _RULE.match(line):
        return RULE_LINE
    if m := _BULLET.match(line):
        body = m.group(2)
        mark = "•"
        if t := _TASK.match(body):
            mark, body = ("☑" if t.group(1) in "xX" else "☐"), t.group(2)
        return f"{_indent(m.group(1))}{mark} {render_inline(body)}"
    if m := _ORDERED.match(line):
        return f"{_indent(m.group(1))}{m.group(2)}. {render_inline(m.group(3))}"
    return render_inline(line)


def _code(code: str, lang: str) -> str:
    lang = _LANG.sub("", lang)[:32]
    if lang:
        return f'<pre><code class="language-{lang}">{escape(code)}</code></pre>'
    return f"<pre>{escape(code)}</pre>"


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _cells(row: str) -> list[str]:
    row = row.strip()
    row = row.removeprefix("|").removesuffix("|")
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)]
    # tables become monospace text: drop inline markup that would show as symbols
    return [re.sub(r"\*\*|__|`|\\(?=\|)", "", c) for c in cells]


def _table(rows: list[str]) -> str:
    grid = [_cells(r) for i, r in enumerate(rows) if i != 1]
    cols = max(len(r) for r in grid)
    grid = [r + [""] * (cols - len(r)) for r in grid]
    widths = [max(_width(r[c]) for r in grid) for c in range(cols)]

    def line(cells: list[str]) -> str:
        return " | ".join(cell + " " * (widths[c] - _width(cell)) for c, cell in enumerate(cells)).rstrip()

    text = "\n".join([line(grid[0]), "-+-".join("-" * w for w in widths), *(line(r) for r in grid[1:])])
    return f"<pre>{escape(text)}</pre>"


def _units(markdown: str) -> list[Unit]:
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    units: list[Unit] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            if units and not units[-1].blank:
                units.append(Unit("", "", blank=True))
            i += 1
        elif m := _FENCE.match(line):
            fence = m.group(1)
            j = i + 1
            while j < len(lines) and not re.match(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}[ \t]*$", lines[j]):
                j += 1
            code = "\n".join(lines[i + 1 : j])
            source = "\n".join(lines[i : j + 1])
            units.append(Unit(_code(code, m.group(2)), source) if code.strip() else Unit("", source, blank=True))
            i = j + 1
        elif _QUOTE.match(line):
            j = i
            while j < len(lines) and _QUOTE.match(lines[j]):
                j += 1
            inner = [_line(_QUOTE.match(q_line).group(1)) for q_line in lines[i:j]]  # type: ignore[union-attr]
            body = "\n".join(inner).strip("\n")
            source = "\n".join(lines[i:j])
            units.append(Unit(f"<blockquote>{body}</blockquote>", source) if body.strip() else Unit("", source))
            i = j
        elif "|" in line and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]) and "|" in lines[i + 1]:
            j = i + 2
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                j += 1
            units.append(Unit(_table(lines[i:j]), "\n".join(lines[i:j])))
            i = j
        else:
            units.append(Unit(_line(line), line))
            i += 1
    while units and units[-1].blank:
        units.pop()
    return units


def render(markdown: str) -> str:
    """Claude's Markdown as Telegram HTML (only Telegram's tags; everything else escaped)."""
    return "\n".join(u.html for u in _units(markdown))


# -- splitting -------------------------------------------------------------------------------

_TOKEN = re.compile(r"<[^>]*>|&#?\w+;|[^<&]", re.DOTALL)
_TAG_NAME = re.compile(r"</?([a-zA-Z][\w-]*)")
_EMPTY_PAIR = re.compile(r"<([a-zA-Z][\w-]*)(?:\s[^>]*)?></\1>")


def html_to_text(text: str) -> str:
    """What Telegram shows for ``text`` in HTML mode: the tags removed, the entities decoded."""
    return html.unescape(re.sub(r"<[^>]*>", "", text))


def _drop_empty_tags(text: str) -> str:
    while True:
        new = _EMPTY_PAIR.sub("", text)
        if new == text:
            return text
        text = new


def split_html(text: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """Split balanced Telegram HTML into parts of at most ``limit`` UTF-16 units.

    Cuts on line breaks, then spaces, and only if there is none, anywhere between two
    characters (never inside a tag or an entity). Tags open at a cut are closed at the
    end of the part and opened again, with their attributes, at the start of the next.
    """
    parts: list[str] = []
    pending: deque[str] = deque(_TOKEN.findall(text))
    stack: list[tuple[str, str]] = []  # (name, opening tag)
    cur: list[str] = []
    size = 0  # UTF-16 units of cur
    closing = 0  # UTF-16 units of the closing tags the stack needs
    content = False  # cur holds more than reopened tags
    breaks: list[tuple[int, int, int, list[tuple[str, str]]]] = []  # (rank, index after, size, stack)

    def closers(st: list[tuple[str, str]]) -> str:
        return "".join(f"</{name}>" for name, _ in reversed(st))

    def start_part(st: list[tuple[str, str]]) -> None:
        nonlocal stack, cur, size, closing, content, breaks
        stack = list(st)
        cur = [tag for _, tag in stack]
        size = sum(utf16_len(t) for t in cur)
        closing = utf16_len(closers(stack))
        content = False
        breaks = []

    start_part([])
    while pending:
        tok = pending.popleft()
        n = utf16_len(tok)
        if tok.startswith("<"):
            name = (_TAG_NAME.match(tok) or _TAG_NAME.match("<x")).group(1).lower()  # type: ignore[union-attr]
            if tok.startswith("</"):
                if stack and stack[-1][0] == name:
                    stack.pop()
                    closing -= len(name) + 3
                    cur.append(tok)
                    size += n
                continue
            if size + n + closing + len(name) + 3 + 1 > limit and content:
                pending.appendleft(tok)
            else:
                stack.append((name, tok))
                closing += len(name) + 3
                cur.append(tok)
                size += n
                continue
        elif size + n + closing <= limit or not content:
            cur.append(tok)
            size += n
            content = True
            if tok in ("\n", " "):
                breaks.append((2 if tok == "\n" else 1, len(cur), size, list(stack)))
            continue
        else:
            pending.appendleft(tok)
        # the token does not fit: cut at the best break (a line break, else a space, else here)
        cut = None
        for rank in (2, 1):
            cut = next((b for b in reversed(breaks) if b[0] == rank and b[2] > limit // 4), None)
            if cut is not None:
                break
        if cut is not None:
            _, index, _, cut_stack = cut
            head, rest = cur[: index - 1], cur[index:]  # the break character itself is dropped
        else:
            cut_stack, head, rest = list(stack), cur, []
        part = _drop_empty_tags("".join(head) + closers(cut_stack))
        if html_to_text(part).strip():
            parts.append(part)
        # the tokens after the cut go back, after the tags that were open there
        pending.extendleft(reversed(rest))
        start_part(cut_stack)
    part = _drop_empty_tags("".join(cur) + closers(stack))
    if html_to_text(part).strip():
        parts.append(part)
    return parts


def render_parts(markdown: str, limit: int = TELEGRAM_LIMIT) -> list[Part]:
    """``markdown`` rendered and cut into Telegram messages of at most ``limit`` UTF-16 units.

    Whole lines and blocks are packed into a part; a cut prefers a blank line (a
    paragraph boundary), then any line boundary. A single block longer than a part
    (e.g. a long code block) is cut by ``split_html``: the code block is closed at the
    end of one part and reopened, with its language, in the next.
    """
    units: list[Unit] = []
    for u in _units(markdown):
        if utf16_len(u.html) <= limit:
            units.append(u)
        else:
            units.extend(Unit(piece, html_to_text(piece)) for piece in split_html(u.html, limit))
    parts: list[Part] = []
    cur: list[Unit] = []

    def emit(us: list[Unit]) -> None:
        while us and us[-1].blank:
            us = us[:-1]
        html_text = "\n".join(u.html for u in us).strip("\n")
        if html_to_text(html_text).strip():
            parts.append(Part(html_text, "\n".join(u.source for u in us).strip("\n")))

    total = -1  # UTF-16 size of cur joined by line breaks (-1 when empty)
    for unit in units:
        if not cur and unit.blank:
            continue
        cur.append(unit)
        total += utf16_len(unit.html) + 1
        while total > limit:
            sizes = [-1]  # sizes[c]: UTF-16 size of the first c units joined by line breaks
            for u in cur:
                sizes.append(sizes[-1] + utf16_len(u.html) + 1)
            fits = [c for c in range(1, len(cur)) if sizes[c] <= limit]
            blank = [c for c in fits if cur[c].blank and sizes[c] > limit // 4]
            c = blank[-1] if blank else fits[-1]
            emit(cur[:c])
            cur = cur[c:]
            while cur and cur[0].blank:
                cur = cur[1:]
            total = sum(utf16_len(u.html) + 1 for u in cur) - 1
    emit(cur)
    if not parts and markdown.strip():  # only markup that shows nothing (e.g. an empty fence): send it as it is
        parts = [Part(escape(chunk), chunk) for chunk in split_text(markdown, limit // 5)]
    return parts
