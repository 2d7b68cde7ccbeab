"""Claude's Markdown as Telegram HTML, and that HTML split into message-sized parts.

Telegram's HTML knows only a few tags (b, i, u, s, code, pre, a, blockquote,
tg-spoiler) and needs every other ``<``, ``>`` and ``&`` escaped. ``render`` is a pure
function that emits only those tags and never an unbalanced one: markup whose closing
half is missing is shown as the literal characters. ``render_parts`` cuts the result
into parts of at most 4000 visible UTF-16 units (Telegram counts the text after parsing)
and 100 entities, on paragraph and line boundaries, keeping the tags balanced in every
part, and keeps each part's Markdown source for a plain-text fallback.

Telegram's nesting rules hold: code and pre are never inside another entity (bold, italic,
underline, strikethrough and spoiler may hold anything else). A code span inside bold or
italic ends the emphasis before it and reopens it after (``**a `x` b**`` → ``<b>a </b>
<code>x</code><b> b</b>``); inside a link, a strikethrough or a spoiler it keeps that meaning
and loses the code style (a hidden word stays hidden).

What Telegram cannot show is simplified, never dropped: headings become bold lines,
lists ``•``/``1.`` lines, a quote inside a quote joins the outer quote, and a table
becomes aligned monospace text in ``<pre>`` — where no formatting is possible, so its
cells show their visible text (``**b**`` → ``b``, ``[t](u)`` → ``t``, `` `x` `` → ``x``).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

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
SCAN_BUDGET = 200_000  # characters scanned per line for uneven "*" runs; past it they stay text
_SCHEMES = ("http://", "https://", "tg://", "mailto:", "ftp://")
_AUTOLINK = re.compile(r"<((?:https?|tg|ftp)://[^\s<>]+|mailto:[^\s<>]+)>")

References = Mapping[str, str]  # normalized label -> URL, from "[label]: url" lines


def escape(text: str) -> str:
    """Escape the three characters Telegram's HTML reserves."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _run_length(text: str, i: int, end: int) -> int:
    j = i
    while j < end and text[j] == text[i]:
        j += 1
    return j - i


def _label_key(label: str) -> str:
    """A reference label as it is matched: case and runs of whitespace do not matter."""
    return " ".join(label.split()).casefold()


def _rule_of_three(opener: int, closer: int, both: bool) -> bool:
    """CommonMark's rule: runs that can both open and close do not pair if their lengths sum to 3, 6, …

    (unless both are multiples of 3); it keeps ``2*3**2`` and ``2**3*4`` literal.
    """
    return both and (opener + closer) % 3 == 0 and not (opener % 3 == 0 and closer % 3 == 0)


class _Inline:
    """Inline Markdown of one line (or one table cell) to HTML."""

    def __init__(self, text: str, refs: References | None = None) -> None:
        self.text = text
        self.refs = refs or {}
        self._no_closer: dict[tuple[str, int, int], int] = {}  # (char, run, end) -> no closer at or after
        self._budget = SCAN_BUDGET

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
                plain = not code or bool(active & _NO_CODE)  # hidden, struck or linked text stays so
                out.append(escape(code) if plain else f"<code>{escape(code)}</code>")
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
        """The emphasis opened by the delimiter run of ``run`` characters at ``i`` (and its end), or None."""
        found = self._pair(i, run, i, i + run, end, active, links)
        if found is not None or self.text[i] != "*" or run not in (2, 3):
            return found
        # an uneven "*" run: "***a** b*" opens an outer * around an inner ** (which must close first) …
        for k in range(run - 1, 0, -1):
            found = self._pair(i, k, i, i + run, end, active, links)
            if found is not None and self._closer("*", run - k, i + run, found[1] - k) >= 0:
                return found
        # … and in "***a**" the first star is text
        for k in range(run - 1, 0, -1):
            if (found := self._pair(i + run - k, k, i, i + run, end, active, links)) is not None:
                return escape(self.text[i : i + run - k]) + found[0], found[1]
        return None

    def _pair(
        self, at: int, k: int, run_start: int, run_end: int, end: int, active: frozenset[str], links: bool
    ) -> tuple[str, int] | None:
        """Emphasis opened by the ``k`` delimiters at ``at`` of the run ``[run_start, run_end)``, or None.

        The text starts after the opener (possibly with the rest of the run), the closer
        is searched after the whole run.
        """
        s = self.text
        c = s[at]
        tags = _EMPHASIS.get((c, k))
        if tags is None:
            return None
        if run_end >= end or s[run_end].isspace():
            return None  # an opener is followed by text
        if c == "_" and run_start > 0 and s[run_start - 1].isalnum():
            return None  # snake_case is not emphasis
        full = run_end - run_start
        can_close = run_start > 0 and not s[run_start - 1].isspace()  # the opening run could also close
        close, n = self._closer(c, k, run_end, end), k
        if close < 0 and c == "*":
            close, n = self._long_closer(k, full, can_close, run_end, end)
        if close < 0:
            return None
        if full != k and n == k:  # part of an uneven opening run, closed by an exact run
            if _rule_of_three(full, n, can_close or (close + n < end and not s[close + n].isspace())):
                return None
        if c == "_" and k == 2 and s[run_end:close].isidentifier():
            return None  # __init__ is a name, not bold
        inner = self.render(at + k, close, active | set(tags), links)
        new = [t for t in tags if t not in active]
        opened = "".join(f"<{t}>" for t in new)
        closed = "".join(f"</{t}>" for t in reversed(new))
        return opened + inner + closed, close + k

    def _closer(self, c: str, run: int, start: int, end: int) -> int:
        """Start of the delimiter run of exactly ``run`` that closes an emphasis opened before ``start``, or -1."""
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

    def _long_closer(self, k: int, full: int, can_close: bool, start: int, end: int) -> tuple[int, int]:
        """A longer "*" run that closes ``k`` opening stars: (start of its last ``k`` stars, its length), or (-1, 0).

        The extra stars stay inside the emphasis (``**feature/***`` is bold ``feature/*``).
        Emphasis pairs on the way (``*a **b** c``) are skipped over, not split.
        """
        s = self.text
        i = start
        while i < end:
            self._budget -= 1
            if self._budget < 0:
                return -1, 0
            ch = s[i]
            if ch == "*":
                n = _run_length(s, i, end)
                can_open = i + n < end and not s[i + n].isspace()
                closes = n > k and i > start and not s[i - 1].isspace()
                if closes and not _rule_of_three(full, n, can_close or can_open):
                    return i + n - k, n
                if n <= 3 and can_open and (close := self._closer("*", n, i + n, end)) >= 0:
                    i = close + n
                    continue
                i += n
            elif ch in "\\`":
                i = self._skip(i, end)
            else:
                i += 1
        return -1, 0

    def _link(self, i: int, end: int, active: frozenset[str]) -> tuple[str, int] | None:
        """``[label](url)`` or ``[label][ref]`` with an absolute URL → ``<a href>``; None if it is not one."""
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
        if label_end < 0:
            return None
        if label_end + 1 < end and s[label_end + 1] == "(" and (inline := self._inline_url(label_end + 2, end)):
            url, after = inline
            return self._anchor(url, i, label_end, active), after
        return self._reference(i, label_end, end, active)

    def _inline_url(self, k: int, end: int) -> tuple[str, int] | None:
        """The URL of ``(url "title")`` starting at ``k`` and the index after ``)``, or None."""
        s = self.text
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
        return url, close + 1

    def _reference(self, i: int, label_end: int, end: int, active: frozenset[str]) -> tuple[str, int] | None:
        """``[text][ref]``, ``[ref][]`` or ``[ref]`` when ``ref`` has a definition; None otherwise."""
        if not self.refs:
            return None
        s = self.text
        label = s[i + 1 : label_end]
        if label_end + 1 < end and s[label_end + 1] == "[":
            close = s.find("]", label_end + 2, min(end, label_end + 2 + MAX_LABEL))
            if close >= 0:
                ref = s[label_end + 2 : close] or label
                if (url := self.refs.get(_label_key(ref))) is not None:
                    return self._anchor(url, i, label_end, active), close + 1
        if (url := self.refs.get(_label_key(label))) is not None:
            return self._anchor(url, i, label_end, active), label_end + 1
        return None

    def _anchor(self, url: str, i: int, label_end: int, active: frozenset[str]) -> str:
        label = self.render(i + 1, label_end, active | {"a"}, links=False) if label_end > i + 1 else escape(url)
        return f'<a href="{html.escape(url, quote=True)}">{label}</a>'


_NO_CODE = frozenset({"code", "a", "s", "tg-spoiler"})  # code inside these loses its style, not their meaning
_INLINE_TAG = re.compile(r"<(/?)(b|i|u|s|tg-spoiler|code|a)((?:\s[^>]*)?)>")
_EMPTY_PAIR = re.compile(r"<(b|i|u|s|tg-spoiler)></\1>")


def _lift_code(markup: str) -> str:
    """Close the emphasis open around each ``<code>`` before it and reopen it after: Telegram
    does not allow code inside another entity."""
    if "<code>" not in markup:
        return markup
    out: list[str] = []
    stack: list[str] = []  # the open tags, as written
    pos = 0
    for m in _INLINE_TAG.finditer(markup):
        out.append(markup[pos : m.start()])
        pos = m.end()
        closing, name = m.group(1) == "/", m.group(2)
        if name == "code" and not closing:
            out.extend(f"</{_INLINE_TAG.match(t).group(2)}>" for t in reversed(stack))  # type: ignore[union-attr]
            out.append(m.group(0))
        elif name == "code":
            out.append(m.group(0))
            out.extend(stack)
        elif closing:
            stack.pop()
            out.append(m.group(0))
        else:
            stack.append(m.group(0))
            out.append(m.group(0))
    out.append(markup[pos:])
    result = "".join(out)
    while (shorter := _EMPTY_PAIR.sub("", result)) != result:
        result = shorter
    return result


def render_inline(text: str, refs: References | None = None) -> str:
    """One line of inline Markdown (bold, italic, strike, spoiler, code, links) as Telegram HTML."""
    return _lift_code(_Inline(text, refs).render(0, len(text)))


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
        inner = _Inline(m.group(1), refs).render(0, len(m.group(1)), frozenset({"b"}))
        return _lift_code(f"<b>{inner}</b>") if inner.strip() else ""
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
        if d and url.lower().startswith(_SCHEMES):
            refs.setdefault(_label_key(d.group(1)), url)
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
