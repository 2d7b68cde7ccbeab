"""The web pages an answer drew on, as a short numbered list of links under it.

A reply that searched carries ``server_tool_use`` blocks, their ``web_search_tool_result`` /
``web_fetch_tool_result`` blocks (with encrypted page content) and text blocks whose
``citations`` name the pages they quote. ``WebTrail`` collects them over one question (every
round and ``pause_turn`` continuation), and gives:

- the cited pages, in the order first cited, one per URL (and the pages Claude read with
  ``web_fetch``), as Markdown ``1. [title](url)`` lines — titles, not raw URLs; the renderer turns
  them into Telegram HTML links and the splitter keeps the message within Telegram's limits;
- the searches and fetches made (``usage.server_tool_use``), and the errors (``unavailable``,
  ``max_uses_exceeded``, …) so the user can be told that the web could not be searched;
- whether the web was used so far in the question at all (``used``) and the pages read
  (``pages()``), so that a fact saved after it is marked as coming after the web (bot/tools/facts.py).

``storable`` strips what must never be stored or sent again in a later turn: the server tool
blocks with their encrypted content and the citations (whose ``encrypted_index`` points into
them). The transcript keeps what the user saw: the answer text and its source list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

SERVER_BLOCKS = ("server_tool_use", "web_search_tool_result", "web_fetch_tool_result")
MAX_SOURCES = 6
MAX_FACT_PAGES = 5
"""How many of the pages read before a fact was saved its provenance names."""
MAX_TITLE = 80
HEADER = "**출처 · Sources**"
_MD_SPECIAL = "\\`*_[]<>|~#"


@dataclass(frozen=True)
class Source:
    title: str
    url: str

    def as_dict(self) -> dict[str, str]:
        return {"title": self.title, "url": self.url}


def _clean_url(url: str) -> str | None:
    """An http(s) URL safe inside ``[..](..)``: spaces and parentheses percent-encoded; None otherwise."""
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return quote(url, safe=":/?#[]@!$&'*+,;=%~-._")


def _title(title: str, url: str) -> str:
    """A one-line title (the page's host when it has none), cut to MAX_TITLE characters."""
    text = " ".join(str(title or "").split())
    if not text:
        text = urlsplit(url).netloc.removeprefix("www.")
    if len(text) > MAX_TITLE:
        text = text[: MAX_TITLE - 1].rstrip() + "…"
    return text


def escape_markdown(text: str) -> str:
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in text)


@dataclass
class WebTrail:
    """What one question's replies searched, read and cited."""

    sources: list[Source] = field(default_factory=list)
    searches: int = 0  # billed searches (usage.server_tool_use.web_search_requests)
    fetches: int = 0
    errors: list[str] = field(default_factory=list)  # error codes of failed searches and fetches
    queries: list[str] = field(default_factory=list)
    used: bool = False  # a server tool block came back: the web was searched or read in this question
    found: list[str] = field(default_factory=list)  # the URLs of the pages the searches found, in order
    _seen: set[str] = field(default_factory=set)

    def add_source(self, url: str, title: str) -> None:
        clean = _clean_url(url)
        if clean is None:
            return
        key = clean.rstrip("/").lower()
        if key in self._seen:
            return
        self._seen.add(key)
        self.sources.append(Source(_title(title, clean), clean))

    def add_reply(self, blocks: Iterable[Mapping[str, Any]], server_usage: Mapping[str, Any] | None = None) -> None:
        """Take one reply's content blocks (and its ``usage.server_tool_use``)."""
        fetched: list[tuple[str, str]] = []
        for block in blocks:
            kind = block.get("type")
            self.used = self.used or kind in SERVER_BLOCKS
            if kind == "server_tool_use":
                value = block.get("input")
                if block.get("name") == "web_search" and isinstance(value, Mapping) and value.get("query"):
                    self.queries.append(str(value["query"]))
            elif kind in ("web_search_tool_result", "web_fetch_tool_result"):
                content = block.get("content")
                if isinstance(content, Mapping) and str(content.get("type", "")).endswith("_error"):
                    self.errors.append(str(content.get("error_code") or "unknown"))
                elif isinstance(content, list):  # the search's results
                    self.found += [str(r["url"]) for r in content if isinstance(r, Mapping) and r.get("url")]
                elif kind == "web_fetch_tool_result" and isinstance(content, Mapping):
                    doc = content.get("content")
                    title = doc.get("title", "") if isinstance(doc, Mapping) else ""
                    fetched.append((str(content.get("url", "")), str(title or "")))
            elif kind == "text":
                for cite in block.get("citations") or ():
                    if isinstance(cite, Mapping) and cite.get("url"):
                        self.add_source(str(cite["url"]), str(cite.get("title") or ""))
        for url, title in fetched:  # pages read in full count as sources, after the cited ones
            self.add_source(url, title)
        if server_usage:
            self.searches += int(server_usage.get("web_search_requests") or 0)
            self.fetches += int(server_usage.get("web_fetch_requests") or 0)

    def pages(self, limit: int = MAX_FACT_PAGES) -> list[str]:
        """The pages read so far, at most ``limit``: the cited and fetched ones first, then what the searches found."""
        out: list[str] = []
        for url in [*(s.url for s in self.sources), *self.found]:
            clean = _clean_url(url)
            if clean is not None and clean not in out:
                out.append(clean)
        return out[:limit]

    @property
    def failed(self) -> bool:
        """Search was tried and gave nothing to cite."""
        return bool(self.errors) and not self.sources

    def markdown(self, limit: int = MAX_SOURCES) -> str:
        """The source list as Markdown (empty without sources)."""
        if not self.sources:
            return ""
        lines = [HEADER]
        for n, source in enumerate(self.sources[:limit], 1):
            lines.append(f"{n}. [{escape_markdown(source.title)}]({source.url})")
        if len(self.sources) > limit:
            lines.append(f"… +{len(self.sources) - limit}")
        return "\n".join(lines)

    def stored(self, limit: int = MAX_SOURCES) -> list[dict[str, str]]:
        return [s.as_dict() for s in self.sources[:limit]]


def with_sources(answer: str, trail: WebTrail, note: str = "") -> str:
    """The answer as the user sees it: the text, an optional note, then the source list."""
    parts = [answer.rstrip()] if answer.strip() else []
    if note:
        parts.append(note)
    if listing := trail.markdown():
        parts.append(listing)
    return "\n\n".join(parts)


def storable(blocks: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Content blocks without server tool blocks and citations: what may be stored and replayed later."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") in SERVER_BLOCKS:
            continue
        out.append({k: v for k, v in block.items() if k != "citations"})
    return out


def has_server_blocks(blocks: Iterable[Mapping[str, Any]]) -> bool:
    return any(b.get("type") in SERVER_BLOCKS for b in blocks)
