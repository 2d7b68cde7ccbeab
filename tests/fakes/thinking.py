"""Thinking blocks of the fake Messages API: signatures bound to their prefix, and their checks.

Sources (read with the ``search`` tool, December 2026):

- Preserved thinking / Prefix checks on thinking blocks: a thinking or redacted_thinking block
  sent back is checked against its *prefix* — the top-level ``system``, ``tools`` and every
  message before the block. "A prefix check fails if ``system``, ``tools``, or an earlier
  message changed after Claude produced a block. It also fails if a thinking block between
  others was left out or moved." A change only invalidates the thinking after it. Models with
  the check: Fable 5.x, Opus 5.5, Sonnet 5.5, Haiku 5.5. The error (400
  ``invalid_request_error``), from "Fix a thinking block bound to a different conversation":
  ``messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a
  different conversation. Remove the block, or set
  `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".``
  If the current model cannot read a block (another model produced it) the API drops it
  without an error.
- Thinking in tool and multi-turn workflows: "Pass thinking blocks back complete and
  unmodified: when you return a tool result, the thinking blocks from the assistant message
  must come back with it"; rebuilding the message or filtering out redacted_thinking is a 400.
  The wording for a missing block is the API's long-standing one (``messages.N.content.0.type:
  Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is
  enabled, a final `assistant` message must start with a thinking block ...``), and an
  altered block gets ``messages.N.content.M: Invalid `signature` in `thinking` block``.
  Thinking from completed earlier turns may be left out (the "append-only" pages: remove
  thinking from kept turns), as long as no block *between* kept blocks is missing.

How the fake binds a block: its signature is an HMAC (a per-server secret) over the producing
model, a digest of the prefix with every thinking block taken out (so dropping older
thinking does not change it), a digest of the block's own content, and a link to the
previous thinking block in the prefix (so leaving out or moving a block between others
breaks the chain, while leaving out a leading run — completed earlier turns — does not).
Content comparisons ignore ``cache_control`` markers and null fields, and treat a string
``content``/``system`` as its one text block.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

THINKING_TYPES = ("thinking", "redacted_thinking")

PREFIX_MISMATCH = (
    "Invalid `signature` in `thinking` block. The block is bound to a different conversation. "
    'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
)
INVALID_SIGNATURE = "Invalid `signature` in `thinking` block"


def missing_thinking(i: int, found: str) -> str:
    return (
        f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. "
        "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
        "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
        "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult "
        "our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
    )


def _clean(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _clean(v) for k, v in value.items() if k != "cache_control" and v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def is_thinking(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") in THINKING_TYPES


class PrefixHasher:
    """Digests of the prompt prefix, in order: tools, system, then each message's blocks."""

    def __init__(self, tools: Any, system: Any) -> None:
        self._h = hashlib.sha256()
        self._h.update(b"tools\x00" + json.dumps(_clean(tools or []), sort_keys=True, ensure_ascii=False).encode())
        self._h.update(b"system\x00" + json.dumps(_clean(_blocks(system)), sort_keys=True, ensure_ascii=False).encode())

    def role(self, role: str) -> None:
        self._h.update(b"\x01role\x00" + role.encode())

    def block(self, block: Any) -> None:
        if not is_thinking(block):
            self._h.update(b"\x02" + json.dumps(_clean(block), sort_keys=True, ensure_ascii=False).encode())

    def digest(self) -> str:
        return self._h.copy().hexdigest()[:32]


def own_digest(block: Mapping[str, Any]) -> str:
    body = block.get("data") if block.get("type") == "redacted_thinking" else block.get("thinking")
    return hashlib.sha256(f"{block.get('type')}\x00{body}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Binding:
    model: str
    prefix: str
    own: str
    previous: str  # own digest of the thinking block before this one in the prefix; "" if none


class Signer:
    """Signs and reads the thinking blocks of one fake server (its own secret)."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._key = secret or secrets.token_bytes(32)

    def sign(self, binding: Binding) -> str:
        payload = json.dumps([binding.model, binding.prefix, binding.own, binding.previous]).encode()
        mac = hmac.new(self._key, payload, hashlib.sha256).digest()
        return base64.b64encode(payload + b"|" + mac).decode()

    def read(self, signature: Any) -> Binding | None:
        """The binding a signature carries, or None if this server never produced it (forged, altered)."""
        try:
            raw = base64.b64decode(str(signature), validate=True)
            payload, mac = raw[:-33], raw[-32:]
            if raw[-33:-32] != b"|":
                return None
            if not hmac.compare_digest(mac, hmac.new(self._key, payload, hashlib.sha256).digest()):
                return None
            model, prefix, own, previous = json.loads(payload)
            return Binding(str(model), str(prefix), str(own), str(previous))
        except (ValueError, TypeError):
            return None

    def redacted_data(self, binding: Binding) -> str:
        """A redacted_thinking block carries its signature in ``data`` (opaque, encrypted in the real API)."""
        return "fake-redacted:" + self.sign(binding)

    def read_block(self, block: Mapping[str, Any]) -> Binding | None:
        if block.get("type") == "redacted_thinking":
            data = str(block.get("data", ""))
            return self.read(data.removeprefix("fake-redacted:")) if data.startswith("fake-redacted:") else None
        return self.read(block.get("signature"))


@dataclass
class Problem:
    message: str


def check_thinking(
    body: Mapping[str, Any],
    signer: Signer,
    *,
    model: str,
    preserved: bool,
    readable: frozenset[str] | None = None,
) -> Problem | None:
    """The 400 the API answers for the thinking blocks ``body`` sends back, or None.

    ``readable``: the models whose blocks the current model reads (default: only its own).
    Blocks another model produced are dropped without an error, as the API does.
    """
    readable = readable if readable is not None else frozenset({model})
    hasher = PrefixHasher(body.get("tools"), body.get("system"))
    last_kept: str | None = None
    for i, message in enumerate(body.get("messages") or []):
        if not isinstance(message, Mapping):
            continue
        hasher.role(str(message.get("role")))
        for j, block in enumerate(_blocks(message.get("content"))):
            if not (is_thinking(block) and message.get("role") == "assistant"):
                hasher.block(block)
                continue
            binding = signer.read_block(block)
            if binding is None or (block.get("type") == "thinking" and binding.own != own_digest(block)):
                return Problem(f"messages.{i}.content.{j}: {INVALID_SIGNATURE}")
            if binding.model not in readable:
                continue  # the model cannot read it: dropped without an error
            if preserved:
                moved = last_kept is not None and binding.previous != last_kept
                if binding.prefix != hasher.digest() or moved:
                    return Problem(f"messages.{i}.content.{j}: {PREFIX_MISMATCH}")
            last_kept = own_digest(block)
    return None


def required_thinking(body: Mapping[str, Any], thought_before: Mapping[str, int]) -> Problem | None:
    """A tool continuation must send back the thinking that came with the tool call.

    ``thought_before`` maps the tool_use ids this server produced to the number of thinking
    blocks that preceded them in their assistant message. The last assistant message (the
    one whose tool_use the request's final user message answers) must still begin with them.
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    if len(messages) < 2 or messages[-1].get("role") != "user":
        return None
    i = len(messages) - 2
    assistant = messages[i]
    if assistant.get("role") != "assistant":
        return None
    blocks = _blocks(assistant.get("content"))
    uses = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use"]
    needed = max((thought_before.get(str(u.get("id")), 0) for u in uses), default=0)
    if not needed:
        return None
    leading = 0
    for b in blocks:
        if not is_thinking(b):
            break
        leading += 1
    if leading == 0:
        first = blocks[0].get("type") if blocks and isinstance(blocks[0], Mapping) else "text"
        return Problem(missing_thinking(i, str(first)))
    if leading < needed:
        return Problem(f"messages.{i}.content.{leading}: {PREFIX_MISMATCH}")
    return None


def chain_start(body: Mapping[str, Any]) -> tuple[PrefixHasher, str]:
    """The hasher over the request's whole prompt and the own digest of its last thinking block
    (what a new reply's first thinking block links to)."""
    hasher = PrefixHasher(body.get("tools"), body.get("system"))
    previous = ""
    for message in body.get("messages") or []:
        if not isinstance(message, Mapping):
            continue
        hasher.role(str(message.get("role")))
        for block in _blocks(message.get("content")):
            if is_thinking(block) and message.get("role") == "assistant":
                previous = own_digest(block)
            hasher.block(block)
    return hasher, previous


def sign_reply(
    blocks: Sequence[dict[str, Any]], body: Mapping[str, Any], signer: Signer, model: str
) -> list[dict[str, Any]]:
    """Give each thinking / redacted_thinking block of a new reply its signature (in place order)."""
    hasher, previous = chain_start(body)
    hasher.role("assistant")
    out: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "thinking":
            own = own_digest(block)
            block = {**block, "signature": signer.sign(Binding(model, hasher.digest(), own, previous))}
            previous = own
        elif block.get("type") == "redacted_thinking":
            data = signer.redacted_data(Binding(model, hasher.digest(), "", previous))
            block = {"type": "redacted_thinking", "data": data}
            previous = own_digest(block)
        else:
            hasher.block(block)
        out.append(block)
    return out


def changed_tool_use(body: Mapping[str, Any], issued: Mapping[str, Mapping[str, Any]]) -> Problem | None:
    """A tool_use block of the current turn sent back other than the API returned it.

    Source: Thinking in tool and multi-turn workflows / Handle tool calls ("pass the assistant
    content back complete and unmodified" within a tool loop). The current turn is every
    assistant message after the last user message that is not only tool results (the question).
    Completed earlier turns may be rebuilt (their thinking dropped), so they are not checked.
    ``cache_control`` markers and null fields are ignored. The wording is a guess in the API's style
    (no page quotes it).
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    start = 0
    for i, m in enumerate(messages):
        blocks = _blocks(m.get("content"))
        if m.get("role") == "user" and any(not (isinstance(b, Mapping) and b.get("type") == "tool_result")
                                           for b in blocks):  # fmt: skip
            start = i
    for i in range(start, len(messages)):
        if messages[i].get("role") != "assistant":
            continue
        for j, block in enumerate(_blocks(messages[i].get("content"))):
            if not (isinstance(block, Mapping) and block.get("type") == "tool_use"):
                continue
            original = issued.get(str(block.get("id")))
            if original is not None and _clean(block) != _clean(original):
                return Problem(f"messages.{i}.content.{j}: `tool_use` block differs from the block the API returned. "
                               "Send the assistant content of the current turn back unmodified.")  # fmt: skip
    return None
