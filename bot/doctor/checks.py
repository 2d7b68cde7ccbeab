"""The offline checks of ``python -m bot doctor``: settings, the data directory and its files.

Each function is registered with ``@check`` and yields one or more ``Result`` lines.
Nothing here writes to the data directory.
"""

from __future__ import annotations

import os
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from bot.claude.modelinfo import ModelCatalog
from bot.doctor.base import Context, Result, check, note, ok, problem
from bot.doctor.preflight import NOTE, Finding, findings, model_note, read_only_fs, subdir_findings
from memory.format import FORMAT, UPGRADES, FormatError, read_format

# -- settings ---------------------------------------------------------------------------------


@check("settings")
def settings_check(ctx: Context) -> Iterator[Result]:
    """The keys present and well-formed (never printed), the endpoint, and every other setting valid:
    the checks every start runs (bot/doctor/preflight.py). With ``--terminal`` the Telegram token is
    not needed (a note when it is missing)."""
    found = False
    key_noted = False
    for finding in findings(ctx.env, telegram=not ctx.terminal):
        if finding.level == NOTE:
            key_noted = key_noted or finding.key == "other_key"
            yield note("settings", finding.text("en"))
        else:
            found = True
            yield problem("settings", finding.text("en") + _terminal_hint(ctx, finding))
    if ctx.terminal and not ctx.env.get("TELEGRAM_BOT_TOKEN", "").strip():
        yield note("settings", "TELEGRAM_BOT_TOKEN is not set: fine for the terminal chat (./bot.sh chat) alone")
    if ctx.config_error:
        found = True
        yield problem("settings", ctx.config_error)
        if "WEBHOOK_SECRET" in ctx.config_error:  # missing, malformed, short or weak: offer a strong one
            yield note(
                "settings", f"a freshly generated secret you can use: WEBHOOK_SECRET={secrets.token_urlsafe(32)}"
            )
    if not found:
        s = ctx.settings
        mode = f"webhook {s.webhook_url}" if s and s.webhook_url else "long polling"
        keys = "set (the key for that endpoint)" if key_noted else "set and well-formed"
        names = "ANTHROPIC_API_KEY is" if ctx.terminal else "TELEGRAM_BOT_TOKEN and ANTHROPIC_API_KEY are"
        yield ok("settings", f"{names} {keys}; model {_model_in_use(ctx)}" + ("" if ctx.terminal else f"; {mode}"))
        unknown = model_note(s) if s is not None else None
        if unknown is not None:
            yield note("settings", unknown.text("en"))


def _terminal_hint(ctx: Context, finding: Finding) -> str:
    """A missing Telegram token: say how to check a terminal-only set-up."""
    if finding.key == "not_set" and finding.fields.get("name") == "TELEGRAM_BOT_TOKEN":
        return "; for the terminal chat alone: ./bot.sh doctor --terminal"
    return ""


def _model_in_use(ctx: Context) -> str:
    """The model the bot and the terminal answer with: the owner's /model choice, else ANTHROPIC_MODEL."""
    s = ctx.settings
    if s is None:
        return "?"
    chosen = ModelCatalog(s.data_dir).selected_for(s.anthropic_model)
    if chosen and chosen != s.anthropic_model:
        return f"{chosen} (chosen with /model; ANTHROPIC_MODEL is {s.anthropic_model})"
    return s.anthropic_model


# -- the data directory -----------------------------------------------------------------------


def _owner(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return str(uid)


@check("data dir")
def data_dir_check(ctx: Context) -> Iterator[Result]:
    """DATA_DIR exists (or can be created), belongs to this user, mode 0700; the subdirectories it keeps the
    data in are directories this user can write (or do not exist yet)."""
    d = ctx.data_dir
    try:
        st = d.stat()
    except FileNotFoundError:
        parent = d.absolute().parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if read_only_fs(parent):
            yield problem(
                "data dir",
                f"{d} does not exist and cannot be created: {parent} is on a read-only file system; set "
                "DATA_DIR to a writable place (in Docker, a volume)",
            )
        elif os.access(parent, os.W_OK | os.X_OK):
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
    if read_only_fs(d):
        yield problem(
            "data dir",
            f"{d} is on a read-only file system: set DATA_DIR to a writable place (in Docker, a volume); "
            "changing its owner or mode cannot help",
        )
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
    for finding in subdir_findings(d):  # what the start refuses too: a file where chats/ should be, …
        found = True
        yield problem("data dir", finding.text("en"))
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
