"""Transcript lines read into turns, with no database: the part of indexing that is mostly Python.

``read_batch`` reads a batch of complete lines of a transcript from where indexing stopped, parses
their JSON, and makes each message's text, date, speaker and terms (memory.recall.text). It runs
BEFORE memory.recall.store takes SQLite's write lock: that work is most of a batch's time (60% of
it, and a worker at nice 10 that loses the CPU meanwhile would keep every other writer waiting),
while what depends on the index (turn ids, sessions, the retries that mark earlier turns dead)
is decided under the lock from the turns read here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.recall.dates import parse_at
from memory.recall.text import split_quote, turn_terms
from memory.transcript import is_message
from memory.window import content_text

MAX_TEXT = 20_000  # characters of one message that are indexed and kept (a pasted 10 MB log is not a memory)
_SIGN = 256  # bytes hashed at the start of a file and before the point indexing stopped


@dataclass(frozen=True, slots=True)
class Turn:
    """One stored message of a transcript line, as far as it is known without the index."""

    line: int  # 1-based physical line
    offset: int  # byte offset of the line
    ts: float | None
    day: int | None
    at: str | None
    role: str
    name: str | None
    speaker: str | None
    retry: bool
    text: str
    nterms: int  # its own terms (a reply's quote aside: memory.recall.text.turn_terms)
    body: str  # the terms, space-separated, as they go into fts (a reply's own, QUOTE, the quote's)


@dataclass(frozen=True, slots=True)
class Batch:
    """What ``read_batch`` read: the turns of the complete lines from ``start`` to ``end``."""

    dev: int  # the identity of the file read
    ino: int
    start: int
    end: int  # bytes read to (complete lines only: a torn last line is left for later)
    lines: int  # physical lines up to ``end``
    turns: list[Turn]
    more: bool  # stopped at ``limit`` turns with lines left before ``size``
    head: str  # head_digest and tail_digest at ``end`` of the file read
    tail: str


def read_batch(path: Path, start: int, lines: int, size: int, limit: int) -> Batch | None:
    """Read up to ``limit`` turns from byte ``start`` (after physical line ``lines``) up to ``size``;
    None if the file is gone."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below, after its identity is taken
    except FileNotFoundError:
        return None
    with f:
        st = os.fstat(f.fileno())
        turns: list[Turn] = []
        pos = start
        more = False
        f.seek(pos)
        while pos < size:
            if len(turns) >= limit:
                more = True
                break
            raw = f.readline(size - pos)
            if not raw.endswith(b"\n"):
                break  # a torn last line: left for when it is completed
            offset = pos
            pos += len(raw)
            lines += 1
            data = parse_line(raw)
            if data is not None:
                turns.append(_turn(data, lines, offset))
        tail = tail_digest(f, pos)
        head = head_digest(f)
    return Batch(st.st_dev, st.st_ino, start, pos, lines, turns, more, head, tail)


def _turn(data: dict[str, Any], line: int, offset: int) -> Turn:
    text = message_text(data["content"])
    ts, day = parse_at(data.get("at"))
    name = data.get("name") if isinstance(data.get("name"), str) else None
    quote, own = split_quote(text)
    body, nterms = turn_terms(quote, own)
    return Turn(
        line=line,
        offset=offset,
        ts=ts,
        day=day,
        at=data.get("at") if isinstance(data.get("at"), str) else None,
        role=data["role"],
        name=name,
        speaker=speaker_of(name, own),  # a reply's "Name: " follows what it quotes
        retry=bool(data.get("retry")),
        text=text,
        nterms=nterms,
        body=body,
    )


def message_text(content: Any) -> str:
    """The searchable text of a message: its text blocks (tool calls, results and images are left out).

    At most MAX_TEXT characters: indexing and ranking cost in proportion to the text, and a huge
    message must not make every later search slow.
    """
    if isinstance(content, str):
        return content[:MAX_TEXT]
    if isinstance(content, list):
        return content_text([b for b in content if isinstance(b, Mapping) and b.get("type") == "text"])[:MAX_TEXT]
    return ""


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def head_digest(f: Any) -> str:
    """Hash of the first line (at most the first _SIGN bytes) of the open file ``f``."""
    f.seek(0)
    data = f.read(_SIGN)
    cut = data.find(b"\n")
    return _digest(data[: cut + 1] if cut >= 0 else data)


def tail_digest(f: Any, end: int) -> str:
    """Hash of the _SIGN bytes before ``end`` of the open file ``f``."""
    start = max(0, end - _SIGN)
    f.seek(start)
    return _digest(f.read(end - start))


_PREFIX = re.compile(r"([A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30}){0,2}): \S")


def speaker_of(name: str | None, text: str) -> str | None:
    """Who said a turn, case-folded: its ``name`` field, else a ``"Name: "`` the text starts with
    (transcripts of group chats, and conversations converted from elsewhere, write it so)."""
    if name and name.strip():
        return name.strip().casefold()
    m = _PREFIX.match(text)
    return m.group(1).casefold() if m else None


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """A transcript line's message, or None for a line that holds none (blank, not JSON, no role)."""
    text = raw.strip()
    if not text:
        return None
    try:
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if is_message(data) else None
