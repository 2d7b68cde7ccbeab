"""Splitting long replies into Telegram-sized messages, counted the way Telegram counts.

Telegram measures a message's length in UTF-16 code units (4096 at most), so an
emoji or another astral character counts twice. For HTML it counts the text *after*
entity parsing: tags are free and ``&amp;`` is one character. It shows at most 100
entities (bold, code, links, …) per message and silently drops the formatting of the
rest, so a part holds at most ``MAX_ENTITIES`` of them.
"""

from __future__ import annotations

import html
import re
from collections import deque

TELEGRAM_LIMIT = 4096
PART_LIMIT = 4000  # visible UTF-16 units per HTML part: Telegram's limit less a small margin
MAX_ENTITIES = 100  # Telegram ignores the formatting beyond this many entities in a message


def utf16_len(text: str) -> int:
    """Length of ``text`` as Telegram counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def _prefix_within(text: str, limit: int) -> int:
    """The largest number of characters of ``text`` whose UTF-16 length is <= ``limit``."""
    units = 0
    for i, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return i
    return len(text)


_LEADING_BLANK_LINES = re.compile(r"(?:[ \t]*\n)+")


def _after_cut(rest: str) -> str:
    """The text after a cut: without the separator and blank lines, but with the indentation of its first line."""
    if rest.startswith(" "):
        return rest[1:]  # a cut at a space drops that space
    m = _LEADING_BLANK_LINES.match(rest)
    return rest[m.end() :] if m else rest


def split_text(text: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """Split ``text`` into parts of at most ``limit`` UTF-16 units.

    Prefers paragraph breaks, then line breaks, then spaces; cuts hard only inside
    a very long word. Joining the parts gives back the text, except for the
    whitespace at the cut points.
    """
    parts: list[str] = []
    rest = text
    while utf16_len(rest) > limit:
        n = _prefix_within(rest, limit)
        window = rest[:n]
        cut = -1
        for sep in ("\n\n", "\n", " "):
            cut = window.rfind(sep)
            if cut > n // 4:
                break
            cut = -1
        if cut <= 0:
            cut = n
        head, rest = rest[:cut].rstrip(), _after_cut(rest[cut:])
        if head:
            parts.append(head)
    if rest.strip():
        parts.append(rest.rstrip())
    return parts


# -- Telegram HTML ---------------------------------------------------------------------------

_TOKEN = re.compile(r"<[^>]*>|&#?\w+;|[^<&]", re.DOTALL)
_TAG_NAME = re.compile(r"</?([a-zA-Z][\w-]*)")
_OPENING_TAG = re.compile(r"<([a-zA-Z][\w-]*)[^>]*>")
_EMPTY_PAIR = re.compile(r"<([a-zA-Z][\w-]*)(?:\s[^>]*)?></\1>")


def html_to_text(text: str) -> str:
    """What Telegram shows for ``text`` in HTML mode: the tags removed, the entities decoded."""
    return html.unescape(re.sub(r"<[^>]*>", "", text))


def visible_len(text: str) -> int:
    """The length Telegram counts for HTML ``text``: its visible text in UTF-16 units."""
    return utf16_len(html_to_text(text))


def entity_count(text: str) -> int:
    """How many entities Telegram makes of HTML ``text`` (``<pre><code class>`` is one)."""
    return len(_OPENING_TAG.findall(text)) - text.count("<pre><code")


def _drop_empty_tags(text: str) -> str:
    while True:
        new = _EMPTY_PAIR.sub("", text)
        if new == text:
            return text
        text = new


def _size(token: str) -> int:
    """Visible UTF-16 units of one token: 0 for a tag, 1 for ``&amp;``, 2 for an emoji."""
    if token.startswith("<"):
        return 0
    return utf16_len(html.unescape(token)) if token.startswith("&") else utf16_len(token)


def _is_entity(name: str, stack: list[tuple[str, str]]) -> bool:
    """An opening tag makes a new entity, except ``<code>`` right inside ``<pre>`` (the language)."""
    return not (name == "code" and stack and stack[-1][0] == "pre")


def split_html(text: str, limit: int = PART_LIMIT, max_entities: int = MAX_ENTITIES) -> list[str]:
    """Split balanced Telegram HTML into parts of at most ``limit`` visible UTF-16 units and ``max_entities``.

    Cuts on line breaks, then spaces, and only if there is none, anywhere between two
    characters (never inside a tag or an entity). Tags open at a cut are closed at the
    end of the part and opened again, with their attributes, at the start of the next.
    """
    parts: list[str] = []
    pending: deque[str] = deque(_TOKEN.findall(text))
    stack: list[tuple[str, str]] = []  # (name, opening tag)
    cur: list[str] = []
    size = 0  # visible UTF-16 units of cur
    entities = 0  # entities opened in cur (reopened ones included)
    content = False  # cur holds more than reopened tags
    breaks: list[tuple[int, int, int, list[tuple[str, str]]]] = []  # (rank, index after, size, stack)

    def closers(st: list[tuple[str, str]]) -> str:
        return "".join(f"</{name}>" for name, _ in reversed(st))

    def start_part(st: list[tuple[str, str]]) -> None:
        nonlocal stack, cur, size, entities, content, breaks
        stack, cur, size, entities, content, breaks = [], [], 0, 0, False, []
        for name, tag in st:
            entities += _is_entity(name, stack)
            stack.append((name, tag))
            cur.append(tag)

    start_part([])
    while pending:
        tok = pending.popleft()
        if tok.startswith("<"):
            name = (_TAG_NAME.match(tok) or _TAG_NAME.match("<x")).group(1).lower()  # type: ignore[union-attr]
            if tok.startswith("</"):
                if stack and stack[-1][0] == name:
                    stack.pop()
                    cur.append(tok)
                continue
            new = _is_entity(name, stack)
            if not (content and entities + new > max_entities):
                stack.append((name, tok))
                entities += new
                cur.append(tok)
                continue
        else:
            n = _size(tok)
            if size + n <= limit or not content:
                cur.append(tok)
                size += n
                content = True
                if tok in ("\n", " "):
                    breaks.append((2 if tok == "\n" else 1, len(cur), size, list(stack)))
                continue
        pending.appendleft(tok)
        # the token does not fit: cut at the best break (a line break, else a space, else here)
        cut = None
        for rank in (2, 1):
            cut = next((b for b in reversed(breaks) if b[0] == rank and b[2] > size // 4), None)
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
