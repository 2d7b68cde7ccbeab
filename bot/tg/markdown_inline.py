"""Inline Markdown of one line (or one table cell) as Telegram HTML: emphasis, code spans, links.

Emphasis (``*``/``_`` italic and bold, ``~~`` strikethrough, ``||`` spoiler) pairs its delimiter
runs by CommonMark's rules (the rule of three, ``snake_case`` and ``__init__`` stay text, uneven
``*`` runs); code spans by backtick runs of equal length; links are ``[label](url)``,
``[label][ref]`` (with the definitions of the answer's ``[ref]: url`` lines, found by bot.tg.render)
and ``<url>``, only with an absolute URL. Markup whose closing half is missing is shown as the
literal characters, and every other ``<``, ``>`` and ``&`` is escaped (``escape``).

Telegram's nesting rules hold: code is never inside another entity (bold, italic,
underline, strikethrough and spoiler may hold anything else). A code span inside bold or
italic ends the emphasis before it and reopens it after (``**a `x` b**`` → ``<b>a </b>
<code>x</code><b> b</b>``, ``lift_code``); inside a link, a strikethrough or a spoiler it keeps
that meaning and loses the code style (a hidden word stays hidden).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

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
SCHEMES = ("http://", "https://", "tg://", "mailto:", "ftp://")
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


def label_key(label: str) -> str:
    """A reference label as it is matched: case and runs of whitespace do not matter."""
    return " ".join(label.split()).casefold()


def _rule_of_three(opener: int, closer: int, both: bool) -> bool:
    """CommonMark's rule: runs that can both open and close do not pair if their lengths sum to 3, 6, …

    (unless both are multiples of 3); it keeps ``2*3**2`` and ``2**3*4`` literal.
    """
    return both and (opener + closer) % 3 == 0 and not (opener % 3 == 0 and closer % 3 == 0)


class Inline:
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
        if not url.lower().startswith(SCHEMES):
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
                if (url := self.refs.get(label_key(ref))) is not None:
                    return self._anchor(url, i, label_end, active), close + 1
        if (url := self.refs.get(label_key(label))) is not None:
            return self._anchor(url, i, label_end, active), label_end + 1
        return None

    def _anchor(self, url: str, i: int, label_end: int, active: frozenset[str]) -> str:
        label = self.render(i + 1, label_end, active | {"a"}, links=False) if label_end > i + 1 else escape(url)
        return f'<a href="{html.escape(url, quote=True)}">{label}</a>'


_NO_CODE = frozenset({"code", "a", "s", "tg-spoiler"})  # code inside these loses its style, not their meaning
_INLINE_TAG = re.compile(r"<(/?)(b|i|u|s|tg-spoiler|code|a)((?:\s[^>]*)?)>")
_EMPTY_PAIR = re.compile(r"<(b|i|u|s|tg-spoiler)></\1>")


def lift_code(markup: str) -> str:
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
    return lift_code(Inline(text, refs).render(0, len(text)))
