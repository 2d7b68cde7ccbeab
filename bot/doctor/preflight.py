"""The configuration checks every start runs before anything else (``python -m bot``, ``python -m bot
chat``), and the doctor's ``settings`` check: one set of rules, worded in the user's language.

- ``findings(env, telegram=...)``: the keys (missing, still the example value of .env.example, not
  well-formed), ANTHROPIC_BASE_URL ending in ``/v1``, a model name no list knows; each a ``Finding``
  (a problem stops the start, a note is printed and the start goes on). Offline and instant.
- ``startup_problems(env, telegram=..., lang=...)``: the same as one-line texts, plus any other
  setting ``load_settings`` refuses.
- ``data_dir_error(error, path, lang)``: an OSError met on DATA_DIR as one line naming the setting,
  the path and what to do (never the raw errno text).
- ``data_dir_findings(path)``: once DATA_DIR is opened, whether it and the subdirectories the data
  lives in (``DATA_SUBDIRS``) can be written, without writing anything: a file where ``chats`` should be,
  or a directory this user may not write, stops the start instead of failing at the first question.
  ``subdir_findings`` is the part about the subdirectories (the doctor checks DATA_DIR itself its own way).

Nothing here prints a secret: a finding names a setting and its length, never its value.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bot.texts import t

if TYPE_CHECKING:
    from bot.config import Settings

TOKEN_RE = re.compile(r"^[0-9]{3,}:[A-Za-z0-9_-]{20,}$")
API_KEY_RE = re.compile(r"^sk-ant-[A-Za-z0-9_-]{8,}$")
# the placeholders of .env.example: a copied but unfilled .env
EXAMPLE_VALUES = {"123456789:AAE_your_bot_token_here", "sk-ant-your-key-here"}
PROBLEM, NOTE = "problem", "note"


@dataclass(frozen=True)
class Finding:
    level: str  # PROBLEM: the start stops; NOTE: said, and the start goes on
    key: str  # a text of bot/texts.py ("start.<key>")
    fields: dict[str, object] = field(default_factory=dict)

    def text(self, lang: str = "en") -> str:
        fields = dict(self.fields)
        if "where" in fields:  # the hint where the value comes from, in the same language
            fields["where"] = t(f"start.where.{fields['where']}", lang)
        return t(f"start.{self.key}", lang, **fields)


def other_anthropic_endpoint(base_url: str) -> str:
    """The host of ANTHROPIC_BASE_URL when it is not Anthropic's own API (whose keys start with sk-ant-), else ""."""
    raw = base_url.strip()
    if not raw:
        return ""
    host = (urlsplit(raw if "://" in raw else f"https://{raw}").hostname or "").lower()
    return "" if host == "anthropic.com" or host.endswith(".anthropic.com") else (host or raw)


def _key_findings(env: Mapping[str, str], telegram: bool) -> list[Finding]:
    found: list[Finding] = []
    other_endpoint = other_anthropic_endpoint(env.get("ANTHROPIC_BASE_URL", ""))
    keys = [("ANTHROPIC_API_KEY", API_KEY_RE, "key")]
    if telegram:
        keys.insert(0, ("TELEGRAM_BOT_TOKEN", TOKEN_RE, "token"))
    for name, pattern, where in keys:
        value = env.get(name, "").strip()
        if not value:
            found.append(Finding(PROBLEM, "not_set", {"name": name, "where": where}))
        elif value in EXAMPLE_VALUES:
            found.append(Finding(PROBLEM, "example", {"name": name, "where": where}))
        elif not pattern.match(value):
            if name == "ANTHROPIC_API_KEY" and other_endpoint:
                # another Messages-API-compatible endpoint has keys of its own shape: its answer decides
                found.append(Finding(NOTE, "other_key", {"name": name, "host": other_endpoint}))
            else:
                found.append(Finding(PROBLEM, "malformed", {"name": name, "n": len(value), "where": where}))
    return found


def base_url_finding(env: Mapping[str, str]) -> Finding | None:
    """ANTHROPIC_BASE_URL ending in /v1: the SDK adds /v1/messages itself, so every call would be a 404."""
    url = env.get("ANTHROPIC_BASE_URL", "").strip().rstrip("/")
    if url.endswith("/v1"):
        return Finding(PROBLEM, "base_v1", {"url": url, "fixed": url[: -len("/v1")]})
    return None


def findings(env: Mapping[str, str], *, telegram: bool = True) -> list[Finding]:
    """The checks of the keys and the endpoint (offline); ``telegram`` False: the terminal chat, no token needed."""
    found = _key_findings(env, telegram)
    v1 = base_url_finding(env)
    if v1 is not None:
        found.append(v1)
    return found


def startup_problems(env: Mapping[str, str], *, telegram: bool, lang: str = "en") -> tuple[list[str], list[str]]:
    """(problems, notes) as one-line texts in ``lang``: what stops a start, and what is only said.

    Runs the checks of ``findings``, then every other setting (``load_settings``); then, when all
    is well, whether the model in use is one a list knows.
    """
    from bot.config import ConfigError, load_settings

    found = findings(env, telegram=telegram)
    problems = [f.text(lang) for f in found if f.level == PROBLEM]
    notes = [f.text(lang) for f in found if f.level == NOTE]
    if problems:
        return problems, notes
    try:
        settings = load_settings(env, need_telegram=telegram)
    except ConfigError as e:
        return [t("start.config", lang, detail=str(e))], notes
    try:
        unknown = model_note(settings)
    except OSError:
        unknown = None  # an unreadable DATA_DIR is said by the start itself
    if unknown is not None:
        notes.append(unknown.text(lang))
    return problems, notes


def model_note(settings: Settings) -> Finding | None:
    """A note when the model in use (the /model choice, else ANTHROPIC_MODEL) is a name that neither
    the price list (MODEL_PRICES included) nor the Models API (as cached in DATA_DIR/models.json)
    knows: most likely a typo. A note, not a refusal: a model newer than this version is no mistake."""
    from bot.claude.modelinfo import ModelCatalog
    from bot.claude.pricing import PriceTable

    # a DATA_DIR that is not a directory (yet) has no models.json: its own message comes later
    catalog = ModelCatalog(settings.data_dir if settings.data_dir.is_dir() else None)
    configured = settings.anthropic_model
    model = catalog.selected_for(configured) or configured
    if PriceTable(settings.model_prices).price(model) is not None or catalog.get(model) is not None:
        return None
    setting = "ANTHROPIC_MODEL" if model == configured else "/model"
    return Finding(NOTE, "model_unknown", {"model": model, "setting": setting})


def data_dir_error(error: OSError, data_dir: Path, lang: str = "en") -> str:
    """An OSError met while opening DATA_DIR, as one line: the setting, the path, what to do."""
    path = Path(error.filename) if error.filename else data_dir
    shown = data_dir.absolute()
    code = error.errno
    if code in (errno.EEXIST, errno.ENOTDIR) or (data_dir.exists() and not data_dir.is_dir()):
        return t("start.data_not_dir", lang, path=shown)
    if code == errno.EROFS:
        return t("start.data_read_only", lang, path=shown)
    if code in (errno.EACCES, errno.EPERM):
        user = _user()
        return t("start.data_denied", lang, path=shown, file=path, user=user)
    if code == errno.ENOSPC:
        return t("start.data_full", lang, path=shown)
    return t("start.data_other", lang, path=shown, reason=error.strerror or type(error).__name__)


DATA_SUBDIRS = ("chats", "chats/archive", "chats/archive/facts")
"""The directories inside DATA_DIR the stores write to (each created 0700 at its first use): the chats, their
archive (reset conversations, imports, forgotten facts files), the removed facts (memory/facts.py)."""


def _unwritable(path: Path, data_dir: Path, key: str) -> Finding | None:
    """A finding when this user cannot create files in ``path`` (``key``: the text of the denied case)."""
    if os.access(path, os.W_OK | os.X_OK):
        return None
    fields: dict[str, object] = {"path": data_dir.absolute(), "user": _user()}
    if key == "data_denied":
        fields["file"] = path.absolute()
    else:
        fields["sub"] = path.absolute()
    if read_only_fs(path):
        return Finding(PROBLEM, "data_read_only" if key == "data_denied" else "data_sub_read_only", fields)
    return Finding(PROBLEM, key, fields)


def subdir_findings(data_dir: Path) -> list[Finding]:
    """The first of DATA_SUBDIRS that is in the way: not a directory (a file, a broken link) or not writable.
    One that does not exist yet is fine: it is created in its parent, checked before it."""
    for name in DATA_SUBDIRS:
        sub = data_dir / name
        if not os.path.lexists(sub):
            return []
        if not sub.is_dir():
            return [Finding(PROBLEM, "data_sub_not_dir", {"path": data_dir.absolute(), "sub": sub.absolute()})]
        found = _unwritable(sub, data_dir, "data_sub_denied")
        if found is not None:
            return [found]
    return []


def data_dir_findings(data_dir: Path) -> list[Finding]:
    """What stops the start in an existing DATA_DIR: the directory itself or one of its subdirectories
    cannot be written (checked, nothing written: a DATA_DIR that already holds format.json is only read)."""
    found = _unwritable(data_dir, data_dir, "data_denied")
    return [found] if found is not None else subdir_findings(data_dir)


def open_data_dir(data_dir: Path, lang: str = "en") -> str | None:
    """Opens DATA_DIR for a start, as the bot and the terminal chat both do (format.json checked or written),
    and says in one line what stops the start: a newer data format, a directory that cannot be made or
    written, a file where a subdirectory should be. None when the start may go on."""
    from memory.format import FormatError, ensure_format

    try:
        ensure_format(data_dir)  # a newer data format than this code knows stops here
    except FormatError as e:
        return t("start.format", lang, detail=e)
    except OSError as e:
        return data_dir_error(e, data_dir, lang)
    in_the_way = data_dir_findings(data_dir)  # e.g. a file where chats/ should be: said now, not later
    return in_the_way[0].text(lang) if in_the_way else None


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return str(os.getuid())


def read_only_fs(path: Path) -> bool:
    """Whether ``path`` (or its nearest existing parent) is on a file system mounted read-only."""
    probe = path.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return bool(os.statvfs(probe).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False
