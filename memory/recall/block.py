"""Text for recalled turns: the ``[관련 기억 / Related memories]`` block of the automatic recall,
and the lines of a ``/search`` answer.

Which hits are good enough is ``Hit.relevant`` (memory.recall.hit); this module only formats. A reply stored with
what it answers quoted before it (memory.recall.text.split_quote) is shown by its own words first, then what it
answers, shortened: "Quiet, with a park (↩ Mom: How's the new flat?)"; a line cut to its width keeps the reply.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from memory.content import unquote_block
from memory.recall.hit import Hit
from memory.recall.text import split_quote
from memory.window import shorten

TURN_CHARS = 600  # longest text of one recalled message in the block
QUOTE_CHARS = 200  # of what a reply answers, in the block (the message itself may be one of the hits)
QUOTE_LINE_CHARS = 80  # the same in a /search line
HEADER = "[관련 기억 / Related memories]"
INTRO = (
    "Older parts of this conversation (archived or summarized) that may be relevant to the new message, "
    "found by search; use them only if they help, and prefer newer information where they disagree."
)


def when(at: str | None, tz: str) -> str:
    """``at`` as ``YYYY-MM-DD HH:MM`` in zone ``tz`` (times without a zone are shown as written)."""
    if not at:
        return "?"
    try:
        dt = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return at
    if dt.tzinfo is not None:
        dt = dt.astimezone(ZoneInfo(tz))
    return dt.strftime("%Y-%m-%d %H:%M")


def who(hit: Hit) -> str:
    if hit.role == "assistant":
        return "assistant"
    return f"user ({hit.name})" if hit.name else "user"


def readable(content: str, quote_chars: int) -> str:
    """``content`` on one line; a reply's own words first, then what it answers cut to ``quote_chars``."""
    quote, own = split_quote(content)
    own = " ".join(own.split())
    if not quote:
        return own
    asked = " ".join(unquote_block(quote).split())
    if len(asked) > quote_chars:
        asked = asked[: quote_chars - 1] + "…"
    return f"{own} (↩ {asked})"


def _line(hit: Hit, tz: str) -> str:
    text = " ".join(shorten(readable(hit.content, QUOTE_CHARS), TURN_CHARS).split())
    return f"{when(hit.at, tz)} {who(hit)}: {text}"


def related_block(hits: list[Hit], tz: str) -> str | None:
    """The block of recalled turns (each with its date, who said it, and the turn completing the
    exchange), in the order they were said; None when there is nothing to recall."""
    if not hits:
        return None
    entries: dict[tuple[str | None, int], Hit] = {}
    for h in hits:
        for part in (h, *h.context):
            entries.setdefault((part.file, part.line), part)
    groups: list[list[Hit]] = []
    ordered = sorted(entries.values(), key=lambda h: (h.file is None, h.file or "", h.line))  # archives first
    for h in ordered:
        last = groups[-1][-1] if groups else None
        if last is not None and last.file == h.file and 0 < h.line - last.line <= 1:
            groups[-1].append(h)
        else:
            groups.append([h])
    lines = [HEADER, INTRO]
    for g in groups:
        lines.append("- " + _line(g[0], tz))
        lines.extend("  " + _line(h, tz) for h in g[1:])
    return "\n".join(lines)


def hit_lines(hits: list[Hit], tz: str, width: int = 200) -> list[str]:
    """One line per hit, best first, for ``/search``: ``YYYY-MM-DD HH:MM who: text`` (text cut to ``width``)."""
    out = []
    for h in hits:
        text = readable(h.content, QUOTE_LINE_CHARS)
        if len(text) > width:
            text = text[: width - 1] + "…"
        out.append(f"{when(h.at, tz)} {who(h)}: {text}")
    return out
