"""Splitting long replies into Telegram-sized messages.

Telegram measures a message's length in UTF-16 code units (4096 at most), so an
emoji or another astral character counts twice.
"""

from __future__ import annotations

import re

TELEGRAM_LIMIT = 4096


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
