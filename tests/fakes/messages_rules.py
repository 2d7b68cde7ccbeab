"""What the real Messages API rejects, with its wording (HTTP 400 ``invalid_request_error``).

Used by the fake HTTP server (tests/fakes/anthropic_server.py) and, in-process, by
``FakeModel(validate=...)``, so a malformed request fails every test that sends one.
The messages follow what the real API answers (as seen in public bug reports).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MAX_CACHE_BREAKPOINTS = 4
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
MAX_REQUEST_BYTES = 32 * 1024 * 1024  # the whole request body (HTTP 413 request_too_large beyond)
DOCUMENT_SOURCES = ("base64", "text", "content", "url", "file")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
TOOL_CHOICES = ("auto", "any", "tool", "none")


class InvalidRequest(ValueError):
    """The request would be rejected with HTTP 400; the message is the API's."""


from tests.fakes.server_tools import check_declaration, is_server_tool  # noqa: E402 (it imports InvalidRequest)


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def _check_text_blocks(where: str, blocks: list[Mapping[str, Any]]) -> None:
    for b in blocks:
        if b.get("type") != "text":
            continue
        text = b.get("text")
        if not isinstance(text, str) or text == "":
            raise InvalidRequest(f"{where}: text content blocks must be non-empty")
        if not text.strip():
            raise InvalidRequest(f"{where}: text content blocks must contain non-whitespace text")


def _check_document(where: str, block: Mapping[str, Any]) -> None:
    """A ``document`` block's source as the API checks its shape (the PDF itself: anthropic_server)."""
    source = block.get("source")
    kind = source.get("type") if isinstance(source, Mapping) else None
    if kind not in DOCUMENT_SOURCES:
        raise InvalidRequest(f"{where}.source: Input tag '{kind}' found using 'type' does not match any of the "
                             "expected tags: 'base64', 'text', 'content', 'url', 'file'")  # fmt: skip
    assert isinstance(source, Mapping)
    if kind == "base64":
        if source.get("media_type") != "application/pdf":
            raise InvalidRequest(f"{where}.source.base64.media_type: Input should be 'application/pdf'")
        if not isinstance(source.get("data"), str) or not source["data"]:
            raise InvalidRequest(f"{where}.source.base64.data: Field required")
    elif kind == "text":
        if source.get("media_type") != "text/plain":
            raise InvalidRequest(f"{where}.source.text.media_type: Input should be 'text/plain'")
        if not isinstance(source.get("data"), str):
            raise InvalidRequest(f"{where}.source.text.data: Field required")


def count_cache_controls(body: Mapping[str, Any]) -> int:
    n = sum(1 for t in body.get("tools") or [] if isinstance(t, Mapping) and t.get("cache_control"))
    system = body.get("system")
    if isinstance(system, list):
        n += sum(1 for b in system if isinstance(b, Mapping) and b.get("cache_control"))
    for m in body.get("messages") or []:
        if isinstance(m, Mapping):
            for b in _blocks(m.get("content")):
                if b.get("cache_control"):
                    n += 1
                for inner in _blocks(b.get("content")):
                    if inner.get("cache_control"):
                        n += 1
    return n


def validate(body: Mapping[str, Any]) -> None:
    """Raise InvalidRequest as the real API would answer 400 for ``body``."""
    if not body.get("model") and "model" in body:
        raise InvalidRequest("model: Field required")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidRequest("max_tokens: Field required")
    tools = body.get("tools") or []
    for i, tool in enumerate(tools):
        if isinstance(tool, Mapping) and is_server_tool(tool):  # web search / fetch (tests/fakes/server_tools.py)
            check_declaration(i, tool)
            continue
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise InvalidRequest(f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'")
        schema = tool.get("input_schema")
        if not isinstance(schema, Mapping) or schema.get("type") != "object":
            raise InvalidRequest(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
    names = [t.get("name") for t in tools if isinstance(t, Mapping)]
    if len(set(names)) != len(names):
        raise InvalidRequest("tools: Tool names must be unique.")
    choice = body.get("tool_choice")
    if choice is not None:
        if not isinstance(choice, Mapping) or choice.get("type") not in TOOL_CHOICES:
            raise InvalidRequest("tool_choice: Input tag does not match any of the expected tags")
        if choice.get("type") != "none" and not tools:
            raise InvalidRequest("tool_choice may only be specified while providing tools.")
    system = body.get("system")
    if isinstance(system, list):
        for b in system:
            if not isinstance(b, Mapping) or b.get("type") != "text":
                raise InvalidRequest("system: Input should be a valid list of text blocks")
        _check_text_blocks("system", [b for b in system if isinstance(b, Mapping)])
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("messages: at least one message is required")
    if count_cache_controls(body) > MAX_CACHE_BREAKPOINTS:
        raise InvalidRequest(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {count_cache_controls(body)}."
        )
    uses_tools = False
    previous_uses: list[str] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or m.get("role") not in ("user", "assistant"):
            raise InvalidRequest(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if i == 0 and m["role"] != "user":
            raise InvalidRequest('messages: first message must use the "user" role')
        content = m.get("content")
        last = i == len(messages) - 1
        if isinstance(content, str):
            if not content and not (last and m["role"] == "assistant"):
                raise InvalidRequest(
                    f"messages.{i}: all messages must have non-empty content except for the optional final "
                    "assistant message"
                )
            blocks: list[Mapping[str, Any]] = []
        elif isinstance(content, list):
            if not content and not (last and m["role"] == "assistant"):
                raise InvalidRequest(
                    f"messages.{i}: all messages must have non-empty content except for the optional final "
                    "assistant message"
                )
            blocks = _blocks(content)
        else:
            raise InvalidRequest(f"messages.{i}.content: Input should be a valid string or list")
        _check_text_blocks("messages", blocks)
        for j, b in enumerate(blocks):
            kind = b.get("type")
            if kind == "image":
                data = (b.get("source") or {}).get("data", "")
                if isinstance(data, str) and len(data) > MAX_IMAGE_BASE64:
                    raise InvalidRequest(
                        f"messages.{i}.content.{j}.image.source.base64: image exceeds 5 MB maximum: "
                        f"{len(data)} bytes > {MAX_IMAGE_BASE64} bytes"
                    )
            if kind == "document":
                _check_document(f"messages.{i}.content.{j}.document", b)
            if kind == "tool_use" and m["role"] != "assistant":
                raise InvalidRequest(f"messages.{i}.content.{j}: `tool_use` blocks can only be in assistant messages")
            if kind == "tool_result" and m["role"] != "user":
                raise InvalidRequest(f"messages.{i}.content.{j}: `tool_result` blocks can only be in user messages")
            if kind in ("tool_use", "tool_result"):
                uses_tools = True
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if previous_uses:
            leading = 0
            for b in blocks:
                if b.get("type") != "tool_result":
                    break
                leading += 1
            missing = [u for u in previous_uses if u not in {str(r.get("tool_use_id")) for r in results}]
            if m["role"] != "user" or missing:
                raise InvalidRequest(
                    f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(missing or previous_uses)}. Each `tool_use` block must have a corresponding "
                    "`tool_result` block in the next message."
                )
            if leading < len(previous_uses):
                raise InvalidRequest(
                    f"messages.{i}: Did not find {len(previous_uses)} `tool_result` block(s) at the beginning of "
                    "this message. Messages following `tool_use` blocks must begin with a matching number of "
                    "`tool_result` blocks."
                )
        for j, b in enumerate(blocks):
            if b.get("type") == "tool_result" and str(b.get("tool_use_id")) not in previous_uses:
                raise InvalidRequest(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{b.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` block "
                    "in the previous message."
                )
        previous_uses = (
            [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"] if m["role"] == "assistant" else []
        )
        if previous_uses and last:
            raise InvalidRequest(
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(previous_uses)}. Each `tool_use` block must have a corresponding `tool_result` block "
                "in the next message."
            )
    if uses_tools and not tools:
        raise InvalidRequest("Requests which include `tool_use` or `tool_result` blocks must define tools.")
