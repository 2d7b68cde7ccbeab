"""Documents for Claude: PDFs as ``document`` blocks, text files as their text, fenced, with the file name.

Only the Telegram ``file_id`` (with the name, type and size) is stored with the turn, never the
bytes or the text, so the transcript stays small and recall indexes the marker and the question,
not the document. ``/retry`` downloads the file again.

Limits, checked before the model is called (a refused file gets a clear reply and nothing is stored):

- Telegram lets bots download files up to 20 MB (``MAX_DOWNLOAD``), checked before downloading;
- Anthropic takes requests up to 32 MB and PDFs of at most 100 pages; a 20 MB PDF is 26.7 MB of
  base64, so the download limit keeps the request under 32 MB, and the pages are counted here
  (pypdf, imported on the first PDF: ~0.2 s) — encrypted and unreadable PDFs are refused too;
- text files up to ``MAX_TEXT_BYTES`` (~200 KB, some 50-70k tokens), decoded as UTF-8, else as
  UTF-16 with a byte-order mark, else as the likeliest legacy encoding (CP949 for Korean, then
  CP1252) when it decodes cleanly, else refused.
"""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from telegram import Bot

from bot.tg import photos

log = logging.getLogger(__name__)

MAX_DOWNLOAD = photos.MAX_DOWNLOAD  # Telegram's Bot API serves files up to 20 MB
MAX_REQUEST_BYTES = 32 * 1024 * 1024  # Anthropic's Messages API request limit
MAX_PDF_PAGES = 100
MAX_TEXT_BYTES = 200 * 1024
DOC_MARK = "[문서]"
PDF = "application/pdf"

# a 20 MB PDF is 26.7 MB as base64: with the rest of a request it stays under Anthropic's 32 MB
assert photos.base64_len(MAX_DOWNLOAD) < MAX_REQUEST_BYTES - 4 * 1024 * 1024

# file name extensions read as text, with the language tag of their code fence
TEXT_EXTENSIONS: dict[str, str] = {
    ".txt": "", ".text": "", ".log": "", ".md": "markdown", ".markdown": "markdown", ".rst": "rst",
    ".csv": "csv", ".tsv": "tsv", ".json": "json", ".jsonl": "json", ".ndjson": "json", ".geojson": "json",
    ".xml": "xml", ".html": "html", ".htm": "html", ".css": "css", ".svg": "xml",
    ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".ini": "ini", ".cfg": "ini", ".conf": "",
    ".env": "", ".properties": "properties", ".sql": "sql", ".graphql": "graphql", ".proto": "protobuf",
    ".py": "python", ".pyi": "python", ".ipynb": "json", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "jsx", ".ts": "typescript", ".tsx": "tsx", ".java": "java",
    ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".groovy": "groovy", ".gradle": "groovy",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".cs": "csharp", ".go": "go", ".rs": "rust", ".rb": "ruby", ".php": "php", ".swift": "swift",
    ".m": "objectivec", ".mm": "objectivec", ".r": "r", ".jl": "julia", ".lua": "lua", ".pl": "perl",
    ".pm": "perl", ".sh": "bash", ".bash": "bash", ".zsh": "zsh", ".fish": "fish", ".ps1": "powershell",
    ".bat": "bat", ".cmd": "bat", ".dart": "dart", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang",
    ".hs": "haskell", ".clj": "clojure", ".vue": "vue", ".svelte": "svelte", ".tex": "latex",
    ".bib": "bibtex", ".srt": "", ".vtt": "", ".diff": "diff", ".patch": "diff", ".dockerfile": "dockerfile",
    ".mk": "makefile", ".cmake": "cmake", ".tf": "hcl", ".nix": "nix", ".zig": "zig", ".sol": "solidity",
}  # fmt: skip
TEXT_NAMES = {"dockerfile": "dockerfile", "makefile": "makefile", "readme": "", "license": "", "procfile": ""}
TEXT_MIME_TYPES = {
    "application/json", "application/xml", "application/x-yaml", "application/yaml", "application/toml",
    "application/javascript", "application/x-javascript", "application/x-sh", "application/x-python",
    "application/x-python-code", "application/sql", "application/x-tex", "application/x-ndjson",
    "application/ld+json", "application/x-subrip", "application/csv",
}  # fmt: skip


class DocumentError(Exception):
    """A document that cannot go to Claude; ``code`` picks the reply (``document.<code>`` in bot/texts.py)."""

    code = "unreadable"

    def __init__(self, detail: str = "", **fields: Any) -> None:
        super().__init__(detail or self.code)
        self.fields = fields


class TooBig(DocumentError):
    code = "too_big"


class TextTooBig(DocumentError):
    code = "text_too_big"


class TooManyPages(DocumentError):
    code = "too_many_pages"


class Encrypted(DocumentError):
    code = "encrypted"


class Unreadable(DocumentError):
    code = "unreadable"


class NotText(DocumentError):
    code = "not_text"


@dataclass(frozen=True)
class DocInfo:
    """What is stored of a document: enough to show it and to download it again."""

    file_id: str
    name: str
    mime_type: str
    size: int | None
    kind: str  # "pdf" or "text"

    def meta(self) -> dict[str, Any]:
        return {"file_id": self.file_id, "name": self.name, "type": self.mime_type, "size": self.size}

    @classmethod
    def from_meta(cls, value: Any) -> DocInfo | None:
        """The stored ``document`` field back (for /retry); None if it is not one."""
        if not isinstance(value, dict) or not isinstance(value.get("file_id"), str):
            return None
        name, mime = str(value.get("name") or "document"), str(value.get("type") or "")
        kind = kind_of(name, mime)
        if kind not in ("pdf", "text"):
            return None
        size = value.get("size")
        return cls(value["file_id"], name, mime, size if isinstance(size, int) else None, kind)


def _suffix(name: str) -> str:
    return PurePosixPath(name.lower()).suffix


def kind_of(name: str | None, mime: str | None) -> str | None:
    """ "pdf", "text" or "image" for what Claude can read; None for other files."""
    name, mime = (name or "").strip(), (mime or "").lower().split(";")[0].strip()
    if mime == PDF or _suffix(name) == ".pdf":
        return "pdf"
    if mime in photos.IMAGE_TYPES:
        return "image"
    if (
        mime.startswith("text/")
        or mime in TEXT_MIME_TYPES
        or _suffix(name) in TEXT_EXTENSIONS
        or PurePosixPath(name.lower()).stem in TEXT_NAMES
    ):
        return "text"
    return None


def fence_language(name: str) -> str:
    lower = name.lower()
    return TEXT_EXTENSIONS.get(_suffix(lower), TEXT_NAMES.get(PurePosixPath(lower).stem, ""))


# -- PDFs ------------------------------------------------------------------------------------------
def pdf_pages(data: bytes) -> int:
    """The PDF's page count; Encrypted, or Unreadable when it is no PDF pypdf can open."""
    if b"%PDF-" not in data[:1024]:
        raise Unreadable("no %PDF- header")
    import pypdf  # imported on the first PDF only (~0.2 s)
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # a damaged file is reported once, by us
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise Encrypted
        pages = len(reader.pages)
    except DocumentError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as e:
        raise Unreadable(f"{type(e).__name__}: {e}") from e
    if pages < 1:
        raise Unreadable("no pages")
    return pages


def pdf_block(data: bytes) -> dict[str, Any]:
    """An Anthropic ``document`` block with the PDF inline (base64)."""
    return {
        "type": "document",
        "source": {"type": "base64", "media_type": PDF, "data": base64.b64encode(data).decode()},
    }


def check_pdf(data: bytes) -> dict[str, Any]:
    """The PDF's block after checking it can go to Claude: TooManyPages, Encrypted, Unreadable."""
    pages = pdf_pages(data)
    if pages > MAX_PDF_PAGES:
        raise TooManyPages(pages=pages, limit=MAX_PDF_PAGES)
    return pdf_block(data)


# -- text files ------------------------------------------------------------------------------------
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _plausible(text: str) -> bool:
    """Few control characters: text, not binary decoded by accident."""
    return len(_CONTROL.findall(text)) <= max(2, len(text) // 1000)


def decode_text(data: bytes) -> str:
    """The file's text: UTF-8, UTF-16 with a BOM, else CP949 or CP1252 when clean; NotText otherwise."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        candidates = ["utf-16"]
    elif b"\x00" in data:
        raise NotText("binary (NUL bytes)")
    else:
        candidates = ["utf-8-sig", "cp949", "cp1252"]
    for encoding in candidates:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if _plausible(text):
            return text.replace("\r\n", "\n")
    raise NotText("no encoding fits")


def text_block(name: str, text: str) -> dict[str, Any]:
    """The file as a text block: its name, then its text in a code fence longer than any inside it."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return {"type": "text", "text": f"{name}:\n{fence}{fence_language(name)}\n{body}{fence}"}


def check_text(name: str, data: bytes) -> dict[str, Any]:
    if len(data) > MAX_TEXT_BYTES:
        raise TextTooBig(limit_kb=MAX_TEXT_BYTES // 1024)
    text = decode_text(data)
    if not text.strip():
        raise NotText("empty")
    return text_block(name, text)


# -- downloading --------------------------------------------------------------------------------------
def check_size(doc: DocInfo) -> None:
    """Refuse before downloading what is known to be too big (TooBig)."""
    if doc.size is None:
        return
    if doc.size > MAX_DOWNLOAD:
        raise TooBig(limit_mb=MAX_DOWNLOAD // (1024 * 1024))
    if doc.kind == "text" and doc.size > MAX_TEXT_BYTES:
        raise TextTooBig(limit_kb=MAX_TEXT_BYTES // 1024)


async def fetch_block(bot: Bot, doc: DocInfo) -> dict[str, Any]:
    """Download the document and make the block Claude gets (checking off the event loop).

    Raises a DocumentError (too big, too many pages, encrypted, unreadable, not text) or a TelegramError.
    """
    check_size(doc)
    async with photos.file_slot():  # with images: a bounded number of files downloaded and read at once
        try:
            data = await photos.download(bot, doc.file_id, doc.size)
        except photos.PhotoTooBig:
            raise TooBig(limit_mb=MAX_DOWNLOAD // (1024 * 1024)) from None
        if doc.kind == "pdf":
            return await asyncio.to_thread(check_pdf, data)
        return await asyncio.to_thread(check_text, doc.name, data)


def stored_text(name: str, question: str) -> str:
    """The user turn as stored and sent: ``[문서] report.pdf — <question>``."""
    name = " ".join(name.split()) or "document"
    return f"{DOC_MARK} {name} — {question.strip()}" if question.strip() else f"{DOC_MARK} {name}"
