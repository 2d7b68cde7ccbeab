"""Anthropic's prompt-caching rules, applied by the fake Messages API.

- The prompt is a sequence of blocks in the order tools → system → messages; a block marked
  ``cache_control`` is a breakpoint, and the prefix up to it can be cached.
- A request reads the longest cached prefix that ends at one of its breakpoints or up to
  20 blocks before one (the API looks back that far), and writes the prefixes of its
  breakpoints that are not cached yet.
- A prefix shorter than the model's minimum is silently not cached: the model table's
  ``cache_minimum`` (tests/fakes/models.py: 512 tokens on the 5.5 generation and Fable), else
  by name: 1024 tokens; 4096 for Haiku 4.5 and Opus 4.5 and later; 2048 for Haiku 3.x.
- Entries live 5 minutes after their last use (``clock`` is injectable).
- Any change before a breakpoint changes its prefix (a different hash): a miss.
  Changing ``tool_choice`` invalidates the cached message blocks (not tools and system).

Tokens are estimated (about 3.3 UTF-8 bytes per token, so a Hangul syllable is about
one token and English about four characters), plus a fixed overhead when tools are sent.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

TTL = 300.0
LOOKBACK = 20
TOOLS_OVERHEAD = 300  # the API's own system prompt for tool use


def minimum_tokens(model: str) -> int:
    from tests.fakes.models import find

    spec = find(model)
    if spec is not None:
        return spec.cache_minimum
    name = model.lower()
    if "haiku-4-5" in name or "haiku-4.5" in name or any(f"opus-4-{v}" in name for v in range(5, 10)):
        return 4096
    if "haiku-3" in name or "3-haiku" in name or "3-5-haiku" in name:
        return 2048
    return 1024


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 3.3) if text else 0


def _strip(value: Any) -> Any:
    """The block without its cache_control (the marker itself is not part of the content)."""
    if isinstance(value, Mapping):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    if isinstance(block, Mapping):
        kind = block.get("type")
        if kind == "text":
            return str(block.get("text", ""))
        if kind == "image":
            return "x" * 5000  # images cost about 1,500 tokens
    return json.dumps(_strip(block), ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class Segment:
    key: str  # canonical content, cache markers removed
    tokens: int
    breakpoint: bool
    in_messages: bool


def segments(body: Mapping[str, Any]) -> list[Segment]:
    out: list[Segment] = []
    tools = body.get("tools") or []
    for i, tool in enumerate(tools):
        text = json.dumps(_strip(tool), ensure_ascii=False, sort_keys=True)
        extra = TOOLS_OVERHEAD if i == 0 else 0
        out.append(Segment("tool:" + text, estimate_tokens(text) + extra, bool(tool.get("cache_control")), False))
    system = body.get("system")
    if isinstance(system, str):
        out.append(Segment("system:" + system, estimate_tokens(system), False, False))
    elif isinstance(system, list):
        for b in system:
            text = _block_text(b)
            out.append(Segment("system:" + text, estimate_tokens(text), bool(b.get("cache_control")), False))
    for m in body.get("messages") or []:
        content = m.get("content")
        blocks = [content] if isinstance(content, str) else list(content or [])
        for b in blocks:
            text = _block_text(b)
            mark = isinstance(b, Mapping) and bool(b.get("cache_control"))
            out.append(Segment(f"{m.get('role')}:{text}", estimate_tokens(text) + 3, mark, True))
    return out


@dataclass(frozen=True)
class CacheUsage:
    input_tokens: int
    cache_read: int
    cache_write: int

    def as_usage(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "cache_read_input_tokens": self.cache_read,
            "cache_creation_input_tokens": self.cache_write,
        }


class PromptCache:
    """The cache of one fake server (all requests share it, as one organization's would)."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, minimum: Callable[[str], int | None] | None = None
    ) -> None:
        self.clock = clock
        self._minimum = minimum  # the server's catalog (it may hold made-up models); None: the table
        self._entries: dict[str, float] = {}  # prefix hash -> expiry
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def apply(self, body: Mapping[str, Any]) -> CacheUsage:
        model = str(body.get("model", ""))
        choice = json.dumps(body.get("tool_choice") or {}, sort_keys=True)
        segs = segments(body)
        hashes: list[str] = []
        totals: list[int] = []
        digest = hashlib.sha256(model.encode())
        running = 0
        for seg in segs:
            digest.update(b"\x00" + seg.key.encode())
            running += seg.tokens
            key = digest.copy()
            if seg.in_messages:
                key.update(b"\x01" + choice.encode())
            hashes.append(key.hexdigest())
            totals.append(running)
        total = running
        marks = [i for i, s in enumerate(segs) if s.breakpoint]
        minimum = (self._minimum(model) if self._minimum else None) or minimum_tokens(model)
        now = self.clock()
        with self._lock:
            self._entries = {h: t for h, t in self._entries.items() if t > now}
            hit = -1
            for bp in marks:
                for pos in range(bp, max(-1, bp - LOOKBACK), -1):
                    if hashes[pos] in self._entries:
                        hit = max(hit, pos)
                        break
            read = totals[hit] if hit >= 0 else 0
            if hit >= 0:
                self._entries[hashes[hit]] = now + TTL
            written_to = -1
            for bp in marks:
                if totals[bp] >= minimum and bp > hit:
                    self._entries[hashes[bp]] = now + TTL
                    written_to = bp
                elif totals[bp] >= minimum and hashes[bp] in self._entries:
                    self._entries[hashes[bp]] = now + TTL
            write = totals[written_to] - read if written_to > hit else 0
        return CacheUsage(total - read - write, read, write)
