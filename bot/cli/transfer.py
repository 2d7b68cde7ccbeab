"""``python -m bot import`` and ``python -m bot export``: a chat's history in from other assistants' exports,
and out again.

    python -m bot import FILE... [--chat ID] [--data-dir DIR]
    python -m bot export [--chat ID] [--format jsonl|md] [--output FILE] [--data-dir DIR]

``import`` takes ChatGPT's and Claude's ``conversations.json`` (or the .zip they come in) and Telegram
Desktop's ``result.json``, told apart by their content; each conversation becomes an archived transcript of
the chat with its own dates (memory.imports). On a terminal it shows its progress on stderr; it prints what
each file gave; a file it could not read whole gets one line naming it and its problem (exit status 1).
The chat's index is built in the background at its next question, by the bot or the terminal chat.

The chat is ``--chat``, else the owner's private chat (OWNER_ID, the first of ALLOWED_USERS, or the owner
paired in DATA_DIR/access.json). Needs no API key; imports neither the Claude client nor telegram.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from bot.cli.search import data_dir_from_env
from bot.cli.texts import env_lang, text
from bot.commands.transfer import FORMATS, Format, import_text, write_history
from memory.access import AccessFileError, AccessStore
from memory.format import FormatError, ensure_format
from memory.imports import ImportReport, import_file
from memory.transcript import InvalidChatId, check_chat_id


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


class Usage(Exception):
    """A one-line reason the command cannot run."""


def _env(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if value:
        return value
    from dotenv import dotenv_values

    return (dotenv_values(Path.cwd() / ".env").get(name) or "").strip()


def owner_chat(data_dir: Path) -> str:
    """The owner's private chat (its id is the owner's user id)."""
    named = _env("OWNER_ID") or _env("ALLOWED_USERS").split(",")[0].strip()
    if named:
        if not named.isdigit():
            raise Usage(f"OWNER_ID / ALLOWED_USERS is not a numeric user id: {named!r}")
        return named
    try:
        owner = AccessStore(data_dir).load().owner
    except AccessFileError as e:
        raise Usage(str(e)) from None
    if owner is None:
        raise Usage("no owner yet: pair the bot first (see README), or name the chat with --chat ID")
    return str(owner)


def _chat(args: argparse.Namespace, data_dir: Path) -> str:
    try:
        return check_chat_id(args.chat) if args.chat else owner_chat(data_dir)
    except InvalidChatId as e:
        raise Usage(str(e)) from None


def _open_data(explicit: str | None) -> Path:
    data_dir = data_dir_from_env(explicit)
    os.umask(0o077)  # what this writes is as private as the bot's own files
    try:
        ensure_format(data_dir)
    except (FormatError, OSError) as e:
        raise Usage(f"{e} (python -m bot doctor explains more)") from None
    return data_dir


class _Progress:
    """One line on stderr, rewritten in place: how far the file is, conversations, messages, dates."""

    def __init__(self, name: str, out: TextIO) -> None:
        self.name, self.out = name, out
        self.shown = False

    def __call__(self, r: ImportReport) -> None:
        percent = f"{r.bytes_read * 100 // r.total_bytes}%" if r.total_bytes else ""
        dates = f" · {(r.first or '')[:10]} – {(r.last or '')[:10]}" if r.first else ""
        self.out.write(
            f"\r\x1b[K{self.name}: {percent} · {r.read:,} conversations · {r.messages:,} new messages{dates}"
        )
        self.out.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.out.write("\r\x1b[K")
            self.out.flush()


def import_main(argv: list[str] | None = None) -> int:
    p = _Parser(prog="python -m bot import", description="Import ChatGPT, Claude or Telegram exports into a chat.")
    p.add_argument("files", nargs="+", metavar="FILE", help="conversations.json, result.json, or the export's .zip")
    p.add_argument("--chat", help="the chat the history belongs to (default: the owner's private chat)")
    p.add_argument("--data-dir", help="data directory (default: $DATA_DIR, then ./data)")
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    lang = env_lang()
    try:
        data_dir = _open_data(args.data_dir)
        chat = _chat(args, data_dir)
        missing = [f for f in args.files if not Path(f).is_file()]
        if missing:
            raise Usage(f"no such file: {missing[0]}")
    except Usage as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    failed = False
    for name in args.files:
        started = time.monotonic()
        progress = _Progress(Path(name).name, sys.stderr) if sys.stderr.isatty() else None
        report = import_file(name, data_dir, chat, progress=progress)
        if progress is not None:
            progress.done()
        failed = failed or report.error is not None or report.skipped > 0
        text = import_text(report, lang, name=name)
        seconds = time.monotonic() - started
        print(f"{name} → chat {chat} ({seconds:.1f} s)\n{text}", file=sys.stderr if report.error else sys.stdout)
    return 1 if failed else 0


def export_main(argv: list[str] | None = None) -> int:
    p = _Parser(prog="python -m bot export", description="Write a chat's whole history, imported parts included.")
    p.add_argument("--chat", help="the chat (default: the owner's private chat)")
    p.add_argument("--format", choices=FORMATS, default="jsonl", help="JSON lines (default) or Markdown")
    p.add_argument("--output", "-o", help="the file to write (default: standard output)")
    p.add_argument("--data-dir", help="data directory (default: $DATA_DIR, then ./data)")
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        data_dir = _open_data(args.data_dir)
        chat = _chat(args, data_dir)
    except Usage as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.output is None:
        n = write_history(data_dir, chat, args.format, sys.stdout)
    else:
        n = _write_file(data_dir, chat, args.format, Path(args.output))
    if n == 0:
        print(f"chat {chat}: no messages stored", file=sys.stderr)
    elif args.output:
        print(f"chat {chat}: {n:,} messages written to {args.output}", file=sys.stderr)
    return 0


def export_here(data_dir: Path, chat: str, line: str, lang: str, out: TextIO) -> str:
    """The terminal chat's ``/export [md] [FILE]``: the whole history into FILE, else onto ``out`` (the
    screen); returns what to say."""
    words = line.split()[1:]
    fmt: Format = "md" if words and words[0].lower() in ("md", "markdown") else "jsonl"
    if words and words[0].lower() in ("md", "markdown", "jsonl", "json"):
        words = words[1:]
    if not words:
        n = write_history(data_dir, chat, fmt, out)
        out.flush()
        return text("export.written", lang, n=n, path="stdout") if n else text("export.empty", lang)
    target = Path(" ".join(words)).expanduser()
    n = _write_file(data_dir, chat, fmt, target)
    return text("export.written", lang, n=n, path=target) if n else text("export.empty", lang)


def _write_file(data_dir: Path, chat: str, fmt: Format, target: Path) -> int:
    """Write the history into ``target`` through a temporary file renamed into place."""
    tmp = target.with_name(f".{target.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        n = write_history(data_dir, chat, fmt, out)
    os.replace(tmp, target)
    return n
