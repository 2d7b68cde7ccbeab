"""What the real Messages API rejects, with its wording (HTTP 400 ``invalid_request_error``).

tests/fakes/README.md is the one table of every rule of the fake, its page and its test (guesses marked).

Used by the fake HTTP server (tests/fakes/anthropic_server.py) and, in-process, by
``FakeModel(validate=...)``, so a malformed request fails every test that sends one.
The messages follow what the real API answers (as seen in public bug reports).

Model-blind rules live here; what depends on the model (thinking settings, effort, sampling
parameters, prefill, forced tool_choice, max_tokens and the context window, per the model
table in tests/fakes/models.py) is in tests/fakes/model_rules.py, applied when the body names
a model the table knows (or the server passes its spec).

Also refused, with the API's pydantic-style wording (issue 22 item 4): unknown top-level
fields (``<field>: Extra inputs are not permitted``) and message fields other than ``role`` and
``content`` (``messages.N.<field>: ...``), unknown content block types
(``messages.N.content.M: Input tag '<type>' found using 'type' does not match any of the
expected tags: ...``), a ``cache_control`` whose type is not ``ephemeral``
(``...cache_control.type: Input should be 'ephemeral'``) or whose ttl is not 5m/1h, and a
``tool_use`` naming a tool the request does not declare (``messages.N.content.M: tool_use
block names tool '<name>', which is not defined in `tools`.`` — wording not found in the
pages read, written in the API's style). Mid-conversation ``role: "system"`` messages (text
only) are accepted on the models that support them (Sonnet 5.5 and its generation) and are
``messages.N.role: Input should be 'user' or 'assistant'`` elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tests.fakes.models import ModelSpec, find

MAX_CACHE_BREAKPOINTS = 4
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
MAX_REQUEST_BYTES = 32 * 1024 * 1024  # the whole request body (HTTP 413 request_too_large beyond)
DOCUMENT_SOURCES = ("base64", "text", "content", "url", "file")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # Define tools: "Must match the regex ^[a-zA-Z0-9_-]{1,64}$"
TOOL_CHOICES = ("auto", "any", "tool", "none")
TOP_LEVEL = frozenset({
    "model", "messages", "max_tokens", "system", "tools", "tool_choice", "stream", "stop_sequences", "metadata",
    "thinking", "output_config", "service_tier", "cache_control", "container", "diagnostics", "inference_geo",
    "speed", "user_profile_id", "workspace_id", "temperature", "top_p", "top_k", "context_management",
    "mcp_servers",
})  # fmt: skip
BLOCK_TYPES = (
    "text", "image", "document", "search_result", "thinking", "redacted_thinking", "tool_use", "tool_result",
    "server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
    "container_upload", "compaction",
)  # fmt: skip
CACHE_TTLS = ("5m", "1h")
_UNSET: Any = object()


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


def _check_cache_control(where: str, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping) or value.get("type") != "ephemeral":
        raise InvalidRequest(f"{where}.cache_control.type: Input should be 'ephemeral'")
    if "ttl" in value and value["ttl"] not in CACHE_TTLS:
        raise InvalidRequest(f"{where}.cache_control.ephemeral.ttl: Input should be '5m' or '1h'")


def _check_shapes(body: Mapping[str, Any]) -> None:
    """Unknown fields and block types, bogus cache_control, tool_use of an undeclared tool."""
    for key in body:
        if key not in TOP_LEVEL:
            raise InvalidRequest(f"{key}: Extra inputs are not permitted")
    top = body.get("cache_control")
    if top is not None and (not isinstance(top, Mapping) or top.get("type") != "ephemeral"):
        raise InvalidRequest("cache_control.type: Input should be 'ephemeral'")
    tools = body.get("tools") or []
    for i, tool in enumerate(tools):
        if isinstance(tool, Mapping):
            _check_cache_control(f"tools.{i}", tool.get("cache_control"))
    system = body.get("system")
    if isinstance(system, list):
        for i, b in enumerate(system):
            if isinstance(b, Mapping):
                _check_cache_control(f"system.{i}", b.get("cache_control"))
    declared = {t.get("name") for t in tools if isinstance(t, Mapping)}
    for i, m in enumerate(body.get("messages") or []):
        if not isinstance(m, Mapping):
            continue
        for key in m:
            if key not in ("role", "content"):
                raise InvalidRequest(f"messages.{i}.{key}: Extra inputs are not permitted")
        for j, b in enumerate(_blocks(m.get("content"))):
            kind = b.get("type")
            if kind not in BLOCK_TYPES:
                tags = ", ".join(f"'{t}'" for t in BLOCK_TYPES)
                raise InvalidRequest(f"messages.{i}.content.{j}: Input tag '{kind}' found using 'type' does not match "
                                     f"any of the expected tags: {tags}")  # fmt: skip
            if kind in ("thinking", "redacted_thinking") and "cache_control" in b:
                # Prompt caching: thinking blocks cannot be marked with cache_control (they are cached with
                # the content around them); the SDK's ThinkingBlockParam has no such field
                raise InvalidRequest(f"messages.{i}.content.{j}.{kind}.cache_control: Extra inputs are not permitted")
            _check_cache_control(f"messages.{i}.content.{j}.{kind}", b.get("cache_control"))
            for k, inner in enumerate(_blocks(b.get("content"))):
                _check_cache_control(f"messages.{i}.content.{j}.{kind}.content.{k}", inner.get("cache_control"))
            if kind == "tool_use" and b.get("name") not in declared and declared:
                raise InvalidRequest(f"messages.{i}.content.{j}: tool_use block names tool '{b.get('name')}', which "
                                     "is not defined in `tools`.")  # fmt: skip


def _check_system_message(messages: list[Any], i: int) -> None:
    """A mid-conversation system message (a run of them) comes right after a user turn (or an assistant
    turn ending in server_tool_use) and is the last message or followed by an assistant turn."""
    content = messages[i].get("content")
    if isinstance(content, list):
        for j, b in enumerate(_blocks(content)):
            if b.get("type") != "text":
                raise InvalidRequest(f"messages.{i}.content.{j}: Input tag '{b.get('type')}' found using 'type' "
                                     "does not match any of the expected tags: 'text'")  # fmt: skip
    start = i
    while start > 0 and isinstance(messages[start - 1], Mapping) and messages[start - 1].get("role") == "system":
        start -= 1
    end = i
    while (
        end + 1 < len(messages) and isinstance(messages[end + 1], Mapping) and messages[end + 1].get("role") == "system"
    ):
        end += 1
    before = messages[start - 1] if start > 0 else None
    after = messages[end + 1] if end + 1 < len(messages) else None
    tail = before.get("content") if isinstance(before, Mapping) else None
    paused = (
        isinstance(tail, list)
        and bool(tail)
        and isinstance(tail[-1], Mapping)
        and (tail[-1].get("type") == "server_tool_use")
    )
    follows = isinstance(before, Mapping) and (
        before.get("role") == "user" or (before.get("role") == "assistant" and paused)
    )
    if not follows or not (after is None or (isinstance(after, Mapping) and after.get("role") == "assistant")):
        raise InvalidRequest(f"messages.{i}: a `system` message must come right after a `user` message and be "
                             "followed by an `assistant` message or end `messages`")  # fmt: skip


def validate(body: Mapping[str, Any], spec: ModelSpec | None = _UNSET, *, paused: frozenset[str] = frozenset()) -> None:
    """Raise InvalidRequest as the real API would answer 400 for ``body``.

    ``spec``: the model's rules (default: the table's entry for ``body["model"]``, if any);
    ``paused``: server_tool_use ids of pause_turn replies (their continuation may end with an
    assistant message).
    """
    if spec is _UNSET:
        spec = find(str(body.get("model") or ""))
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
            raise InvalidRequest(f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
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
    _check_shapes(body)
    system_ok = spec is not None and spec.system_messages
    uses_tools = False
    previous_uses: list[str] = []
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, Mapping) else None
        if role == "system" and not system_ok:
            raise InvalidRequest(f"messages.{i}: role 'system' is not supported on this model")
        if role not in ("user", "assistant", "system"):
            allowed = "'user', 'assistant' or 'system'" if system_ok else "'user' or 'assistant'"
            raise InvalidRequest(f"messages.{i}.role: Input should be {allowed}")
        assert isinstance(m, Mapping)
        if role == "system":
            _check_system_message(messages, i)
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
    if spec is not None:
        from tests.fakes.model_rules import check_model

        check_model(body, spec, paused=paused)
