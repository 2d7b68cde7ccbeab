"""The offline checks of ``python -m bot doctor``: settings, the data directory and its files.

Each function is registered with ``@check`` and yields one or more ``Result`` lines.
Nothing here writes to the data directory.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sqlite3
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from bot.doctor.base import Context, Result, check, note, ok, problem, skip
from memory.facts import Fact
from memory.format import FORMAT, UPGRADES, FormatError, read_format
from memory.recall.verify import open_readonly
from memory.summary import Summary, SummaryStore
from memory.transcript import ROLES, Transcript

TOKEN_RE = re.compile(r"^[0-9]{3,}:[A-Za-z0-9_-]{20,}$")
API_KEY_RE = re.compile(r"^sk-ant-[A-Za-z0-9_-]{8,}$")
# the placeholders of .env.example: a copied but unfilled .env
EXAMPLE_VALUES = {"123456789:AAE_your_bot_token_here", "sk-ant-your-key-here"}


# -- settings ---------------------------------------------------------------------------------


@check("settings")
def settings_check(ctx: Context) -> Iterator[Result]:
    """Both keys present and well-formed (never printed), and every other setting valid."""
    token = ctx.env.get("TELEGRAM_BOT_TOKEN", "").strip()
    key = ctx.env.get("ANTHROPIC_API_KEY", "").strip()
    found = False
    other_endpoint = _other_anthropic_endpoint(ctx.env.get("ANTHROPIC_BASE_URL", ""))
    key_noted = False
    for name, value, pattern, where in (
        ("TELEGRAM_BOT_TOKEN", token, TOKEN_RE, "from @BotFather (/token shows it again), like 123456789:AAE…"),
        ("ANTHROPIC_API_KEY", key, API_KEY_RE, "from console.anthropic.com, it starts with sk-ant-"),
    ):
        if not value:
            found = True
            yield problem("settings", f"{name} is not set: put it in .env or the environment ({where})")
        elif value in EXAMPLE_VALUES:
            found = True
            yield problem("settings", f"{name} is still the example value from .env.example: put in yours ({where})")
        elif not pattern.match(value):
            if name == "ANTHROPIC_API_KEY" and other_endpoint:
                # another Messages-API-compatible endpoint has keys of its own shape: its answer decides
                key_noted = True
                yield note(
                    "settings",
                    f"{name} does not look like an Anthropic key (sk-ant-…); fine if the endpoint "
                    f"ANTHROPIC_BASE_URL points at ({other_endpoint}) uses keys of another form",
                )
                continue
            found = True
            yield problem(
                "settings",
                f"{name} is not well-formed ({len(value)} characters; spaces, quotes or a cut copy?): {where}",
            )
    if ctx.config_error:
        found = True
        yield problem("settings", ctx.config_error)
    if not found:
        s = ctx.settings
        mode = f"webhook {s.webhook_url}" if s and s.webhook_url else "long polling"
        model = s.anthropic_model if s else "?"
        keys = "set (the key for that endpoint)" if key_noted else "set and well-formed"
        yield ok("settings", f"TELEGRAM_BOT_TOKEN and ANTHROPIC_API_KEY are {keys}; model {model}; {mode}")


def _other_anthropic_endpoint(base_url: str) -> str:
    """The host of ANTHROPIC_BASE_URL when it is not Anthropic's own API (whose keys start with sk-ant-), else ""."""
    raw = base_url.strip()
    if not raw:
        return ""
    host = (urlsplit(raw if "://" in raw else f"https://{raw}").hostname or "").lower()
    return "" if host == "anthropic.com" or host.endswith(".anthropic.com") else (host or raw)


# -- the data directory -----------------------------------------------------------------------


def _owner(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return str(uid)


@check("data dir")
def data_dir_check(ctx: Context) -> Iterator[Result]:
    """DATA_DIR exists (or can be created), belongs to this user, mode 0700."""
    d = ctx.data_dir
    try:
        st = d.stat()
    except FileNotFoundError:
        parent = d.absolute().parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if os.access(parent, os.W_OK | os.X_OK):
            yield ok("data dir", f"{d} does not exist yet: it will be created (mode 0700) at the first start")
        else:
            yield problem(
                "data dir",
                f"{d} does not exist and cannot be created ({parent} is not writable for {_owner(os.getuid())}): "
                f"create it, owned by the bot's user: mkdir -m 700 {d} && chown {_owner(os.getuid())} {d}",
            )
        return
    if not stat.S_ISDIR(st.st_mode):
        yield problem("data dir", f"{d} is not a directory: set DATA_DIR to a directory")
        return
    mode = stat.S_IMODE(st.st_mode)
    me = os.getuid()
    found = False
    if st.st_uid != me:
        found = True
        yield problem(
            "data dir",
            f"{d} belongs to {_owner(st.st_uid)}, not to {_owner(me)} who runs this: chown -R {_owner(me)} {d} "
            "(or run the doctor as the bot's user)",
        )
    if mode & stat.S_IWOTH:
        found = True
        yield problem(
            "data dir",
            f"{d} is world-writable (mode {mode:04o}): anyone on this machine can change the memory: chmod 700 {d}",
        )
    elif mode & 0o077:
        found = True
        yield problem("data dir", f"{d} is open to other users (mode {mode:04o}): chmod 700 {d}")
    if not os.access(d, os.W_OK | os.X_OK):
        found = True
        yield problem("data dir", f"{d} is not writable for {_owner(me)}: chown -R {_owner(me)} {d}")
    if not found:
        yield ok("data dir", f"{d} (owner {_owner(st.st_uid)}, mode {mode:04o})")


@check("file modes")
def file_modes_check(ctx: Context) -> Iterator[Result]:
    """Nothing inside DATA_DIR is open to other users (files 0600, directories 0700)."""
    if not ctx.data_dir.is_dir():
        yield ok("file modes", "no files yet")
        return
    open_to_others: list[tuple[Path, int]] = []
    foreign: list[Path] = []
    count = 0
    for root, dirs, files in os.walk(ctx.data_dir):
        for name in [*dirs, *files]:
            path = Path(root) / name
            try:
                st = path.lstat()
            except OSError:
                continue
            count += 1
            if stat.S_IMODE(st.st_mode) & 0o077 and not stat.S_ISLNK(st.st_mode):
                open_to_others.append((path, stat.S_IMODE(st.st_mode)))
            if st.st_uid != os.getuid():
                foreign.append(path)
    d = ctx.data_dir
    if open_to_others:
        path, mode = open_to_others[0]
        more = f" and {len(open_to_others) - 1} more" if len(open_to_others) > 1 else ""
        writable = any(m & stat.S_IWOTH for _, m in open_to_others)
        yield problem(
            "file modes",
            f"{path.relative_to(d)} (mode {mode:04o}){more} {'can be changed' if writable else 'can be read'} by "
            f"other users: chmod -R go-rwx {d}",
        )
    if foreign:
        more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
        yield problem(
            "file modes",
            f"{foreign[0].relative_to(d)}{more} belong to another user: chown -R {_owner(os.getuid())} {d}",
        )
    if not open_to_others and not foreign:
        yield ok("file modes", f"{count} files and directories, all private to {_owner(os.getuid())}")


@check("format")
def format_check(ctx: Context) -> Iterator[Result]:
    """format.json: the data format this code knows (read only; the bot writes it at start)."""
    try:
        state = read_format(ctx.data_dir)
    except FormatError as e:
        yield problem("format", str(e))
        return
    if state.version is None:
        if state.has_data:
            yield ok("format", f"no {state.path.name} yet: the chats are format 1, recorded at the next start")
        else:
            yield ok("format", f"{state.path.name} will be written at the first start (format {FORMAT})")
    elif state.version == FORMAT:
        yield ok("format", f"format {FORMAT}")
    elif state.version > FORMAT:
        yield problem(
            "format",
            f"the data is format {state.version}, newer than this version knows ({FORMAT}): upgrade the program",
        )
    elif all(v in UPGRADES for v in range(state.version, FORMAT)):
        yield note("format", f"format {state.version}: upgraded in place to {FORMAT} at the next start (back up first)")
    else:
        yield problem(
            "format", f"format {state.version} has no automatic upgrade to {FORMAT}: see deploy/README.md (Upgrade)"
        )


# -- the files ----------------------------------------------------------------------------------


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


@check("heartbeat", default=False)
def heartbeat_check(ctx: Context) -> Iterator[Result]:
    """The running bot touched HEARTBEAT_FILE recently (the Docker HEALTHCHECK: --only heartbeat)."""
    name = ctx.env.get("HEARTBEAT_FILE", "").strip()
    if not name:
        yield problem("heartbeat", "HEARTBEAT_FILE is not set: the bot writes no heartbeat")
        return
    try:
        age = time.time() - os.stat(name).st_mtime
    except FileNotFoundError:
        yield problem(
            "heartbeat", f"no heartbeat in {name} yet: the bot is starting, stopped, or cannot reach Telegram"
        )
        return
    if age > ctx.heartbeat_max_age:
        yield problem(
            "heartbeat",
            f"the last heartbeat is {age:.0f} s old (more than {ctx.heartbeat_max_age:.0f} s): the bot does not "
            "reach Telegram or hangs; see its log",
        )
    else:
        yield ok("heartbeat", f"the bot reached Telegram {max(age, 0):.0f} s ago")
