"""Bringing history in and out, for both front ends: the answer to an import (what it took in), and a
chat's whole history written as JSON lines or Markdown (/export, ``python -m bot export``).

The work itself is memory.imports; this module only words it, and picks the format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TextIO

from bot.texts import t
from memory.imports import ImportReport, history_jsonl, history_markdown

Format = Literal["jsonl", "md"]
FORMATS: tuple[Format, ...] = ("jsonl", "md")
SOURCE_NAMES = {"chatgpt": "ChatGPT", "claude": "Claude", "telegram": "Telegram"}


def _day(at: str | None) -> str:
    return (at or "?")[:10]


def import_text(report: ImportReport, lang: str, *, name: str | None = None) -> str:
    """What an import took in, in a few lines: conversations, messages, the first and last date; what was
    left out and why; a file that could not be read whole named with its problem."""
    lines: list[str] = []
    if report.error:
        after = t("import.partial" if report.messages else "import.none", lang)
        lines.append(t("import.error", lang, file=name or Path(report.file).name, error=report.error) + " " + after)
    if report.messages:
        source = SOURCE_NAMES.get(report.source or "", report.source or "?")
        lines.append(
            t("import.done", lang, source=source, conversations=f"{report.conversations:,}",
              messages=f"{report.messages:,}", first=_day(report.first), last=_day(report.last))
        )  # fmt: skip
        if report.present:
            lines.append(t("import.present", lang, present=f"{report.present:,}"))
    elif report.present and not report.error:
        lines.append(t("import.nothing_new", lang, present=f"{report.present:,}"))
    if report.skipped:
        lines.append(t("import.skipped", lang, n=report.skipped, problems="; ".join(report.problems)))
    if not report.error and not report.messages and not report.present:
        lines.append(t("import.none", lang))
    if report.messages:
        lines.append(t("import.indexing", lang))
    return "\n".join(lines)


def write_history(data_dir: Path | str, chat: int | str, fmt: Format, out: TextIO) -> int:
    """Write ``chat``'s whole history (archived, imported and live transcripts) to ``out``; messages written."""
    if fmt == "md":
        return history_markdown(data_dir, chat, out)
    return history_jsonl(data_dir, chat, out)
