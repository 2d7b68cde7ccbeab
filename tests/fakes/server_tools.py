"""The fake Messages API's server tools: ``web_search`` and ``web_fetch`` as the real API runs them.

A test scripts a ``WebAnswer``: the searches Claude makes (each a query and the pages it finds,
or a documented error code), the pages it fetches, and the answer's text pieces with the URLs
each cites. The fake answers the way the real API does:

- a ``server_tool_use`` block (``srvtoolu_…`` id) then its ``web_search_tool_result`` with
  ``web_search_result`` items carrying ``encrypted_content``; a fetch: ``web_fetch_tool_result``
  with a ``web_fetch_result`` document; an error: ``web_search_tool_result_error`` with its
  ``error_code``; searches beyond the tool's ``max_uses`` in one request: ``max_uses_exceeded``;
- text blocks with ``web_search_result_location`` citations (url, title, cited_text,
  encrypted_index); ``usage.server_tool_use`` counts the searches and fetches that ran;
- ``pause_after``: the reply stops with ``pause_turn`` after that many server tool calls, and
  the rest comes when the paused content is sent back as the last (assistant) message;
- only when the request declares the tool and ``tool_choice`` is not ``none`` (Tool use: with
  ``none`` Claude uses no tool; else the model answers without searching).

``check_server_tools`` rejects what the real API rejects (HTTP 400): a malformed server tool
declaration (unknown version, wrong name, both allowed and blocked domains, a bad ``max_uses``
or ``user_location``), a result block whose ``server_tool_use`` is not right before it in the
same message, encrypted content or a citation index the API never issued (edited, made up, or
replayed from another conversation), and a continued ``pause_turn`` whose content was changed.
``enabled = False`` plays an organization where web search is not enabled.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.messages_rules import InvalidRequest
from tests.fakes.scripts import DEFAULT_THINKING

SEARCH_TYPES = ("web_search_20250305", "web_search_20260209", "web_search_20260318")
FETCH_TYPES = ("web_fetch_20250910", "web_fetch_20260209", "web_fetch_20260309", "web_fetch_20260318")
SERVER_RESULT_BLOCKS = ("web_search_tool_result", "web_fetch_tool_result")
NOT_ENABLED = "Web search is not enabled for this organization. An administrator can enable it in the Console."


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    text: str = "Page text."
    page_age: str | None = "November 30, 2026"


@dataclass(frozen=True)
class Search:
    query: str
    pages: tuple[Page, ...] = ()
    error: str | None = None  # a documented error code: unavailable, too_many_requests, query_too_long, …


@dataclass(frozen=True)
class Fetch:
    url: str
    title: str = "Fetched page"
    text: str = "Fetched text."
    error: str | None = None  # url_not_accessible, url_not_allowed, …


@dataclass
class WebAnswer:
    """A scripted reply that searches (``steps``: Search / Fetch in order) and answers with citations.

    ``parts``: (text, [cited urls]) pieces of the answer, in order; ``intro``: text before the first
    search. ``pause_after``: stop with ``pause_turn`` after that many steps. ``calls``: client tool calls
    (name, input) after the text, ending the reply with ``stop_reason`` ``tool_use`` (Server tools page,
    "mixed server and client tool turns": a response may carry server tool blocks and end in a client
    tool call; that searches already answered come before it in the same response is a guess from that
    page's server-side loop, whose results "appear in the same assistant turn").
    """

    steps: list[Search | Fetch]
    parts: list[tuple[str, list[str]]] = field(default_factory=list)
    intro: str = ""
    pause_after: int | None = None
    chunk: int = 20
    delay: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)
    thinking: str | None = DEFAULT_THINKING  # on models that think, the reply begins with it
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # filled by the fake while it answers
    done: int = 0  # steps answered so far (over pause_turn continuations)
    issued: list[dict[str, Any]] = field(default_factory=list)  # the blocks sent so far, to check continuations


def _declared(body: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """name -> declaration of the request's server tools."""
    out: dict[str, Mapping[str, Any]] = {}
    for tool in body.get("tools") or []:
        if isinstance(tool, Mapping) and isinstance(tool.get("type"), str) and tool["type"] != "custom":
            out[str(tool.get("name"))] = tool
    return out


def is_server_tool(tool: Mapping[str, Any]) -> bool:
    kind = tool.get("type")
    return isinstance(kind, str) and kind != "custom"


def check_declaration(i: int, tool: Mapping[str, Any]) -> None:
    """A server tool declaration as the API checks it."""
    kind = str(tool.get("type"))
    if kind in SEARCH_TYPES:
        name, label = "web_search", "web_search"
    elif kind in FETCH_TYPES:
        name, label = "web_fetch", "web_fetch"
    else:
        raise InvalidRequest(f"tools.{i}: Input tag '{kind}' found using 'type' does not match any expected tag")
    if tool.get("name") != name:
        raise InvalidRequest(f"tools.{i}.{label}.name: Input should be '{name}'")
    max_uses = tool.get("max_uses")
    if max_uses is not None and (not isinstance(max_uses, int) or isinstance(max_uses, bool) or max_uses < 1):
        raise InvalidRequest(f"tools.{i}.{label}.max_uses: Input should be greater than 0")
    if tool.get("allowed_domains") and tool.get("blocked_domains"):
        raise InvalidRequest(f"tools.{i}.{label}: Cannot specify both allowed_domains and blocked_domains")
    for key in ("allowed_domains", "blocked_domains"):
        for domain in tool.get(key) or []:
            if not isinstance(domain, str) or "://" in domain:
                raise InvalidRequest(f"tools.{i}.{label}.{key}: domains must not include the scheme ('{domain}')")
    location = tool.get("user_location")
    if location is not None:
        if not isinstance(location, Mapping) or location.get("type") != "approximate":
            raise InvalidRequest(f"tools.{i}.{label}.user_location.type: Input should be 'approximate'")
        country = location.get("country")
        if country is not None and (not isinstance(country, str) or len(country) != 2):
            raise InvalidRequest(f"tools.{i}.{label}.user_location.country: String should have exactly 2 characters")
    if kind in SEARCH_TYPES and ("citations" in tool or "max_content_tokens" in tool):
        raise InvalidRequest(f"tools.{i}.{label}: Extra inputs are not permitted")


class ServerTools:
    """The fake's web search and fetch: issues encrypted content and checks what comes back."""

    def __init__(self) -> None:
        self.enabled = True
        self._lock = threading.Lock()
        self._ids = 0
        self._issued: dict[str, str] = {}  # encrypted token -> what it encrypts (url)
        self.continuation: WebAnswer | None = None  # a paused reply, continued by the next request
        self.searches = 0  # searches run, in all
        self.fetches = 0
        self._texts: dict[str, str] = {}  # encrypted token -> the page text it stands for

    # -- issuing -------------------------------------------------------------------------
    def _token(self, kind: str, url: str) -> str:
        with self._lock:
            self._ids += 1
            token = "Eq" + hashlib.sha256(f"{kind}:{url}:{self._ids}".encode()).hexdigest()[:48]
            self._issued[token] = url
        return token

    def _page_token(self, page: Page) -> str:
        token = self._token("content", page.url)
        with self._lock:
            self._texts[token] = page.text
        return token

    def read_text(self, content: list[dict[str, Any]]) -> str:
        """The text of the pages found or fetched in ``content`` (what the model read: billed as input)."""
        out: list[str] = []
        for block in content:
            value = block.get("content")
            if block.get("type") == "web_search_tool_result" and isinstance(value, list):
                out += [self._texts.get(str(r.get("encrypted_content")), "") for r in value]
            elif block.get("type") == "web_fetch_tool_result" and isinstance(value, dict):
                out.append(str(((value.get("content") or {}).get("source") or {}).get("data", "")))
        return "\n".join(out)

    def _tool_id(self) -> str:
        with self._lock:
            self._ids += 1
            return f"srvtoolu_fake{self._ids:06d}"

    def respond(self, item: WebAnswer, body: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str, dict[str, int]]:
        """(content, stop_reason, server_tool_use usage) for one request answered by ``item``."""
        tools = _declared(body)
        search_tool, fetch_tool = tools.get("web_search"), tools.get("web_fetch")
        continuing = item.done > 0
        content: list[dict[str, Any]] = []
        if item.intro and not continuing:
            content.append({"type": "text", "text": item.intro})
        # tool_choice none: "Claude will not use any tools" (Tool use: Controlling Claude's output / tool_choice)
        if (search_tool is None and fetch_tool is None) or (body.get("tool_choice") or {}).get("type") == "none":
            text = "".join(t for t, _ in item.parts) or "(answered without searching)"
            return [{"type": "text", "text": text}], "end_turn", {}
        used = {"web_search": 0, "web_fetch": 0}  # max_uses counts the uses "in the API request" (this one)
        searches = fetches = 0
        index: dict[str, dict[str, Any]] = {}  # url -> the result it came in (for citations)
        for block in item.issued:
            if block.get("type") == "web_search_tool_result" and isinstance(block.get("content"), list):
                for r in block["content"]:
                    index[r["url"]] = r
        steps = item.steps[item.done :]
        stop = "end_turn"
        n = 0
        for n, step in enumerate(steps):  # noqa: B007 (n is read after the loop)
            if item.pause_after is not None and item.done + n >= item.pause_after and not continuing:
                stop = "pause_turn"
                break
            name = "web_search" if isinstance(step, Search) else "web_fetch"
            tool = search_tool if name == "web_search" else fetch_tool
            if tool is None:
                continue
            use_id = self._tool_id()
            value = {"query": step.query} if isinstance(step, Search) else {"url": step.url}
            content.append({"type": "server_tool_use", "id": use_id, "name": name, "input": value})
            limit = tool.get("max_uses")
            over = isinstance(limit, int) and used[name] >= limit
            used[name] += 1
            error = "max_uses_exceeded" if over else step.error
            if isinstance(step, Search):
                if error:
                    result: Any = {"type": "web_search_tool_result_error", "error_code": error}
                else:
                    searches += 1
                    result = [
                        {
                            "type": "web_search_result",
                            "url": p.url,
                            "title": p.title,
                            "encrypted_content": self._page_token(p),
                            "page_age": p.page_age,
                        }
                        for p in step.pages
                    ]
                    for r in result:
                        index[r["url"]] = r
                content.append({"type": "web_search_tool_result", "tool_use_id": use_id, "content": result})
            else:
                if error:
                    result = {"type": "web_fetch_tool_result_error", "error_code": error}
                else:
                    fetches += 1
                    result = {
                        "type": "web_fetch_result",
                        "url": step.url,
                        "content": {
                            "type": "document",
                            "source": {"type": "text", "media_type": "text/plain", "data": step.text},
                            "title": step.title,
                            "citations": {"enabled": True},
                        },
                        "retrieved_at": "2026-12-01T00:00:00Z",
                    }
                content.append({"type": "web_fetch_tool_result", "tool_use_id": use_id, "content": result})
        if stop == "pause_turn":
            item.done += n
        else:
            item.done = len(item.steps)
            for text, urls in item.parts:
                block: dict[str, Any] = {"type": "text", "text": text}
                cites = []
                for url in urls:
                    r = index.get(url)
                    if r is None:  # the model cites only what it found
                        continue
                    cites.append(
                        {
                            "type": "web_search_result_location",
                            "url": url,
                            "title": r["title"],
                            "cited_text": text.strip()[:150] or r["title"],
                            "encrypted_index": self._token("index", url),
                        }
                    )
                if cites:
                    block["citations"] = cites
                content.append(block)
        item.issued = [*item.issued, *content]
        with self._lock:
            self.searches += searches
            self.fetches += fetches
            self.continuation = item if stop == "pause_turn" else None
        return content, stop, {"web_search_requests": searches, "web_fetch_requests": fetches}

    # -- checking ------------------------------------------------------------------------
    def check(self, body: Mapping[str, Any], *, supported: bool = True, fetch: bool = True) -> None:
        """Raise InvalidRequest for what the real API refuses in a request's server tool use
        (``supported``: whether the request's model takes the web tools; ``fetch``: whether it takes
        web_fetch, which Claude Opus 5 does not: Claude Opus 5 migration guide)."""
        declared = _declared(body)
        for name in declared:
            if (not supported and name in ("web_search", "web_fetch")) or (not fetch and name == "web_fetch"):
                raise InvalidRequest(f"tools: '{name}' is not supported on {body.get('model')}")
        if ("web_search" in declared or "web_fetch" in declared) and not self.enabled:
            raise InvalidRequest(NOT_ENABLED)
        for i, message in enumerate(body.get("messages") or []):
            content = message.get("content") if isinstance(message, Mapping) else None
            if not isinstance(content, list):
                continue
            uses: dict[str, str] = {}
            for j, block in enumerate(content):
                if not isinstance(block, Mapping):
                    continue
                kind = block.get("type")
                where = f"messages.{i}.content.{j}"
                if kind == "server_tool_use":
                    if message.get("role") != "assistant":
                        raise InvalidRequest(f"{where}: `server_tool_use` blocks can only be in assistant messages")
                    if not str(block.get("id", "")).startswith("srvtoolu_"):
                        raise InvalidRequest(f"{where}.server_tool_use.id: String should match pattern '^srvtoolu_'")
                    uses[str(block.get("id"))] = str(block.get("name"))
                elif kind in SERVER_RESULT_BLOCKS:
                    use = str(block.get("tool_use_id"))
                    if message.get("role") != "assistant" or use not in uses:
                        raise InvalidRequest(
                            f"{where}: `{kind}` block with tool_use_id {use} must follow its `server_tool_use` "
                            "block in the same assistant message"
                        )
                    self._check_result(where, block)
                elif kind == "text":
                    for k, cite in enumerate(block.get("citations") or []):
                        if isinstance(cite, Mapping) and cite.get("type") == "web_search_result_location":
                            if str(cite.get("encrypted_index")) not in self._issued:
                                raise InvalidRequest(f"{where}.text.citations.{k}: Invalid encrypted_index")
            missing = [u for u in uses if not any(
                isinstance(b, Mapping) and b.get("type") in SERVER_RESULT_BLOCKS and str(b.get("tool_use_id")) == u
                for b in content)]  # fmt: skip
            messages = body.get("messages") or []
            last = i == len(messages) - 1
            if missing and not last and not _continued(content, messages[i + 1], missing):
                raise InvalidRequest(
                    f"messages.{i}: `server_tool_use` ids were found without a result block: {', '.join(missing)}"
                )
        self._check_continuation(body)

    def _check_result(self, where: str, block: Mapping[str, Any]) -> None:
        content = block.get("content")
        if isinstance(content, list):
            for k, result in enumerate(content):
                token = str(result.get("encrypted_content")) if isinstance(result, Mapping) else ""
                if self._issued.get(token) != (result.get("url") if isinstance(result, Mapping) else None):
                    raise InvalidRequest(f"{where}.content.{k}.encrypted_content: Invalid encrypted content")

    def _check_continuation(self, body: Mapping[str, Any]) -> None:
        """A continued ``pause_turn`` must send the paused content back unchanged, as the last message."""
        paused = self.continuation
        if paused is None:
            return
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        if not isinstance(last, Mapping) or last.get("role") != "assistant":
            return  # not a continuation (a new question): the paused turn is simply dropped
        thinking = ("thinking", "redacted_thinking")
        sent = [b for b in last.get("content") or [] if isinstance(b, Mapping) and b.get("type") not in thinking]
        if _plain(sent) != _plain([b for b in paused.issued if b.get("type") not in thinking]):
            raise InvalidRequest(
                f"messages.{len(messages) - 1}: the content of a paused turn must be sent back unchanged"
            )


def _continued(content: list[Any], following: Any, missing: list[str]) -> bool:
    """An assistant turn that ends in its one unfinished ``server_tool_use``, followed by a user message that
    starts with ``tool_result`` blocks: a valid continuation (issue 30 item 8, from the tool-use pages: the
    turn goes on after the client's results; the page's exact wording was not found in the search corpus)."""
    tail = content[-1] if content else None
    ends_unfinished = (
        isinstance(tail, Mapping) and tail.get("type") == "server_tool_use" and missing == [str(tail.get("id"))]
    )
    if not ends_unfinished or not isinstance(following, Mapping) or following.get("role") != "user":
        return False
    blocks = following.get("content")
    first = blocks[0] if isinstance(blocks, list) and blocks else None
    return isinstance(first, Mapping) and first.get("type") == "tool_result"


def _plain(value: Any) -> Any:
    """``value`` without None fields (the SDK leaves them out when it sends blocks back) and without
    ``cache_control`` (a breakpoint may be put on any block sent back)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items() if v is not None and k != "cache_control"}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
