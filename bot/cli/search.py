"""``python -m bot search``: search a chat's whole history from the shell (JSON lines).

    python -m bot search --chat ID [--limit N] [--data-dir DIR] QUERY...
    python -m bot search --chat ID [--limit N] --stdin      # one query per line, one result line each

Prints the best matches, best first, one JSON object per line: ``line`` (1-based line in its
transcript file), ``at``, ``role``, ``content``, ``name`` (group chats), ``file`` (when the match
is in an archived transcript) and ``score`` (on the scale of the query's words: a message holding each of
them once scores about 1). Only messages related to the query by its words or their meaning come
back: with none, nothing is printed and standard error says so. With ``--stdin`` each output line is
``{"query": ..., "results": [...]}``. Needs no API key, never writes a transcript; it builds or
updates the recall index (``DATA_DIR/recall.sqlite3``), the vectors of recall by meaning included
(about 50 ms a message the first time on one core; ``RECALL_MEANING=off``: by words only; a value
other than on or off is refused, as by the bot: bot.config.recall_meaning reads it for both).
Imports neither the Claude client nor telegram.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any, TextIO
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.config import ConfigError, recall_meaning
from memory.recall import RecallIndex, meaning
from memory.transcript import InvalidChatId, check_chat_id

SAY_MISSING = 1000  # missing vectors from which the wait is announced on stderr
SECONDS_PER_VECTOR = 0.025  # a message embedded on two cores (bench.recall_meaning: 43 ms on one)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {message} (see python -m bot search --help)", file=sys.stderr)
        raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m bot search",
        description="Search a chat's whole history (live and archived transcripts); prints JSON lines.",
    )
    p.add_argument("--chat", required=True, help="the chat id (the name of data/chats/<id>.jsonl)")
    p.add_argument("--limit", type=_positive, default=10, help="matches per query (default 10)")
    p.add_argument("--data-dir", help="data directory (default: $DATA_DIR, then ./data)")
    p.add_argument("--stdin", action="store_true", help="read one query per line from standard input")
    p.add_argument("query", nargs="*", help="the words to search for")
    return p


def _setting(name: str) -> str:
    """A setting from the environment, else from ./.env (like bot.config; no key is ever needed)."""
    value = os.environ.get(name, "").strip()
    if value:
        return value
    from dotenv import dotenv_values

    return (dotenv_values(Path.cwd() / ".env").get(name) or "").strip()


def data_dir_from_env(explicit: str | None) -> Path:
    """--data-dir, else DATA_DIR from the environment or ./.env, else ./data."""
    return Path(explicit or _setting("DATA_DIR") or "data")


def _today() -> date:
    name = _setting("TIMEZONE") or "Asia/Seoul"
    try:
        return datetime.now(ZoneInfo(name)).date()
    except (ZoneInfoNotFoundError, ValueError):
        return date.today()


def search_json(index: RecallIndex, chat: str, query: str, limit: int, today: date | None) -> list[dict[str, Any]]:
    """One query's results as JSON objects (the code path of the CLI and of bench.recall_eval)."""
    return [h.to_json() for h in index.search(chat, query, limit, today=today, sync=False)]


def _emit(out: TextIO, value: Any) -> None:
    out.write(json.dumps(value, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # --help (0) or a bad argument (2, message already printed)
        return int(e.code or 0)
    query = " ".join(args.query).strip()
    if args.stdin and query:
        print("error: give either QUERY words or --stdin, not both", file=sys.stderr)
        return 2
    if not args.stdin and not query:
        print("error: nothing to search for: give QUERY words or --stdin", file=sys.stderr)
        return 2
    try:
        chat = check_chat_id(args.chat)
    except InvalidChatId as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        by_meaning = recall_meaning({"RECALL_MEANING": _setting("RECALL_MEANING")})
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    data_dir = data_dir_from_env(args.data_dir)
    index = RecallIndex(data_dir, meaning=meaning.load(by_meaning, threads=os.cpu_count() or 1))
    try:
        if not index.chat_exists(chat):
            print(f"error: no chat {chat!r} in {data_dir / 'chats'}", file=sys.stderr)
            return 2
        index.sync(chat)
        missing = index.missing_vectors(chat)
        if missing >= SAY_MISSING:
            print(f"recall by meaning: making the vectors of {missing:,} messages first (once; about "
                  f"{max(1, round(missing * SECONDS_PER_VECTOR / 60))} min; RECALL_MEANING=off skips it)",
                  file=sys.stderr)  # fmt: skip
        index.embed(chat)  # recall by meaning: the vectors of turns that have none yet (the bot makes them as it goes)
        today = _today()
        if not args.stdin:
            found = search_json(index, chat, query, args.limit, today)
            for item in found:
                _emit(sys.stdout, item)
            if not found:  # below the relevance floor: nothing printed on stdout, and said so
                print(f"nothing related to {query!r} in chat {chat}: no message uses these words or means anything "
                      "close", file=sys.stderr)  # fmt: skip
            return 0
        for raw in sys.stdin:
            text = raw.rstrip("\r\n")
            _emit(sys.stdout, {"query": text, "results": search_json(index, chat, text, args.limit, today)})
            sys.stdout.flush()
        return 0
    finally:
        index.close()
