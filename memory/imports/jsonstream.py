"""A small incremental JSON reader: walk the containers of a huge JSON file, decode its parts one by one.

The standard library decodes a whole document at once (a 1 GB export would need several GB of memory).
``JsonStream`` reads the file in chunks and lets the caller walk the outer structure: ``items()`` over an
array, ``keys()`` over an object, and ``value()`` to decode the next whole value (a conversation, a
message) with the C decoder (``json.JSONDecoder.raw_decode``). Memory stays in proportion to the biggest
single value decoded, never to the file.

When a value does not decode, the reader tells "the buffer ends inside it" (read more, at least as much
again, so the work stays linear) from "it is broken here" (``JsonError`` at once, without reading the rest of
a file that is already known to be bad). At the end of the file a value that is still cut is ``Truncated``.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from typing import IO, Any

CHUNK = 1 << 20  # bytes read at a time
MAX_VALUE = 512 * 1024 * 1024  # characters of one decoded value at most (one conversation, one message)
_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


class JsonError(ValueError):
    """The file is not the JSON expected here; the message says what and near which byte."""


class Truncated(JsonError):
    """The file ends in the middle of a value (a cut download, a full disk)."""


class JsonStream:
    """Walks one JSON document read from a binary stream, in bounded memory."""

    def __init__(self, raw: IO[bytes], *, chunk: int = CHUNK, max_value: int = MAX_VALUE) -> None:
        self._raw = raw
        self._chunk = chunk
        self._max = max_value
        self._text = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self._buf = ""
        self._pos = 0
        self._eof = False
        self.bytes_read = 0  # bytes taken from the stream so far (progress)
        self._base = 0  # characters dropped from the buffer's front so far (positions in messages)

    # -- reading -----------------------------------------------------------
    def _fill(self, at_least: int = 1) -> bool:
        """Read until ``at_least`` more characters are buffered (or the file ends); False if none came."""
        if self._eof:
            return False
        if self._pos:
            self._base += self._pos
            self._buf = self._buf[self._pos :]
            self._pos = 0
        start = len(self._buf)
        target = start + at_least
        while len(self._buf) < target:
            data = self._raw.read(self._chunk)
            try:
                if not data:
                    self._buf += self._text.decode(b"", final=True)
                    self._eof = True
                    return len(self._buf) > start
                self.bytes_read += len(data)
                self._buf += self._text.decode(data)
            except UnicodeDecodeError as e:
                raise JsonError(f"not UTF-8 text near byte {self.bytes_read}: {e.reason}") from None
        return True

    def _where(self) -> str:
        return f"character {self._base + self._pos:,}"

    def peek(self) -> str:
        """The next character that is not white space ('' at the end of the file); it stays unread."""
        while True:
            buf, pos = self._buf, self._pos
            n = len(buf)
            while pos < n and buf[pos] in _WS:
                pos += 1
            self._pos = pos
            if pos < n:
                return buf[pos]
            if not self._fill():
                return ""

    def expect(self, char: str) -> None:
        got = self.peek()
        if got != char:
            if not got:
                raise Truncated(f"the file ends where {char!r} was expected")
            raise JsonError(f"expected {char!r} at {self._where()}, found {got!r}")
        self._pos += 1

    def at_end(self) -> bool:
        return self.peek() == ""

    def value(self) -> Any:
        """Decode the next whole value (reading as much as it takes)."""
        if not self.peek():
            raise Truncated("the file ends where a value was expected")
        while True:
            try:
                value, end = _DECODER.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as e:
                if self._eof and self._ends_inside(e):
                    raise Truncated(f"it ends inside the entry that starts at {self._where()}") from None
                if not self._cut_off(e):
                    raise JsonError(f"malformed JSON at {self._base + e.pos:,}: {e.msg}") from None
                have = len(self._buf) - self._pos
                if have >= self._max:
                    raise JsonError(f"one value at {self._where()} is over {self._max:,} characters") from None
                if not self._fill(max(self._chunk, have)):  # at least as much again: linear overall
                    raise Truncated(f"it ends inside the entry that starts at {self._where()}") from None
                continue
            if isinstance(value, int | float) and not self._eof and end >= len(self._buf) - 32:
                self._fill(64)  # a number may go on in the next chunk ("1" of "1.5e3"): decode it again
                continue
            self._pos = end
            return value

    def _ends_inside(self, e: json.JSONDecodeError) -> bool:
        """At the end of the file: whether the decode failed because the text stops inside the value."""
        return e.msg.startswith("Unterminated string") or e.pos >= len(self._buf.rstrip())

    def _cut_off(self, e: json.JSONDecodeError) -> bool:
        """Whether a decode failed only because the buffer ends inside the value."""
        if self._eof:
            return False
        if e.msg.startswith("Unterminated string"):
            return True
        return e.pos >= len(self._buf) - 16  # a cut token ("tru", "\\u00", "1.5e") or an expected delimiter

    def string(self) -> str:
        if self.peek() != '"':
            raise JsonError(f"expected a string at {self._where()}")
        value = self.value()
        assert isinstance(value, str)
        return value

    # -- containers --------------------------------------------------------
    def items(self) -> Iterator[None]:
        """Step into an array: yields once per element, positioned on it; the caller consumes each one
        (``value()``, or walks it) before asking for the next."""
        self.expect("[")
        if self.peek() == "]":
            self._pos += 1
            return
        while True:
            yield
            if not self._more("]", "array"):
                return

    def keys(self) -> Iterator[str]:
        """Step into an object: yields each key, positioned on its value; the caller consumes the value
        (``value()``, ``skip()``, or walks it) before asking for the next."""
        self.expect("{")
        if self.peek() == "}":
            self._pos += 1
            return
        while True:
            key = self.string()
            self.expect(":")
            yield key
            if not self._more("}", "object"):
                return

    def _more(self, close: str, what: str) -> bool:
        """After a container's member: True at a ',' (another follows), False at its end (both read)."""
        nxt = self.peek()
        if nxt in (",", close) and nxt:
            self._pos += 1
            return nxt == ","
        if not nxt:
            raise Truncated(f"the file ends inside an {what}")
        raise JsonError(f"expected ',' or {close!r} at {self._where()}, found {nxt!r}")

    def skip(self) -> None:
        """Pass over the next value; arrays and objects are walked, so a huge one costs no memory."""
        first = self.peek()
        if first == "[":
            for _ in self.items():
                self.skip()
        elif first == "{":
            for _ in self.keys():
                self.skip()
        else:
            self.value()
