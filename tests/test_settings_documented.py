"""Every setting the code reads is in the settings table of the docs, and every documented setting is read.

The settings are found twice over: statically, every environment read in ``bot/`` and ``memory/``
(``env.get("X")``, ``os.environ["X"]``, ``getenv("X")``, ``_int(env, "X")``, ``_setting("X")`` …), and at
run time, every name ``load_settings`` looks up in the environment it is given.
The documented ones are the names in the first column of a settings table (a Markdown table row that
starts with backticked UPPER_CASE names, several joined by ``/``) in ``SETTINGS_DOCS``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from bot.config import load_settings
from tests.conftest import ROOT

SETTINGS_DOCS: tuple[str, ...] = ("docs/settings.md",)
"""The files (relative to the repository) holding the settings table: change here when it moves."""

CODE_DIRS = ("bot", "memory")

NOT_SETTINGS = frozenset({"PATH", "PYTHONPATH", "HOME", "LANG", "LC_ALL", "LC_MESSAGES", "TZ", "TERM", "NO_COLOR"})
"""Variables of the operating system the code may read, which are not the bot's settings."""

_NAME = re.compile(r"^[A-Z][A-Z0-9_]{2,}$")
_ROW = re.compile(r"^\|\s*((?:`[A-Z][A-Z0-9_]*`\s*(?:/|,|and)?\s*)+)\|")


def _is_setting_name(value: object) -> bool:
    return isinstance(value, str) and bool(_NAME.match(value)) and value not in NOT_SETTINGS


def _env_like(node: ast.AST) -> bool:
    """``env``, ``os.environ``, ``ctx.env``, ``self.env``, ``environ`` …"""
    text = ast.unparse(node).lower()
    return text.endswith("env") or text.endswith("environ")


def _reads(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            first = args[0] if args else None
            if not _is_setting_name(first):
                continue
            if name in ("get", "pop", "setdefault") and isinstance(func, ast.Attribute) and _env_like(func.value):
                yield str(first)  # env.get("X"), os.environ.get("X")
            elif name == "getenv" or "setting" in name.lower() or name.lower().endswith("env"):
                yield str(first)  # os.getenv("X"), _setting("X")
            elif any(isinstance(a, (ast.Name, ast.Attribute)) and _env_like(a) for a in node.args):
                yield str(first)  # _int(env, "X", 5), _float(env, "X", 1.0)
        elif isinstance(node, ast.Subscript) and _env_like(node.value):
            key = node.slice
            if isinstance(key, ast.Constant) and _is_setting_name(key.value):
                yield str(key.value)  # os.environ["X"]
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            left = node.left
            if isinstance(left, ast.Constant) and _is_setting_name(left.value) and _env_like(node.comparators[0]):
                yield str(left.value)  # "X" in os.environ


def settings_in_code() -> dict[str, list[str]]:
    """Setting name -> the files that read it."""
    found: dict[str, list[str]] = {}
    for folder in CODE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name in _reads(ast.parse(path.read_text(encoding="utf-8"))):
                where = str(path.relative_to(ROOT))
                if where not in found.setdefault(name, []):
                    found[name].append(where)

    class Recorder(dict[str, str]):
        def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
            found.setdefault(key, []).append("load_settings()")
            return super().get(key, default)

        def __getitem__(self, key: str) -> str:
            found.setdefault(key, []).append("load_settings()")
            return super().__getitem__(key)

        def __contains__(self, key: object) -> bool:
            found.setdefault(str(key), []).append("load_settings()")
            return super().__contains__(key)

    load_settings(Recorder(TELEGRAM_BOT_TOKEN="1:x", ANTHROPIC_API_KEY="k"), dotenv=False)
    return {name: files for name, files in found.items() if name not in NOT_SETTINGS}


def documented_settings() -> dict[str, str]:
    """Setting name -> the doc file whose settings table lists it."""
    documented: dict[str, str] = {}
    for doc in SETTINGS_DOCS:
        for line in (ROOT / doc).read_text(encoding="utf-8").splitlines():
            m = _ROW.match(line.strip())
            if m:
                for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", m.group(1)):
                    documented.setdefault(name, doc)
    return documented


def test_the_scan_finds_every_kind_of_read():
    """The static scan itself, on every form of read the code uses (else a setting could hide from it)."""
    code = """
import os
a = env.get("ONE_X", "")
b = os.environ.get("TWO_X")
c = os.environ["THREE_X"]
d = os.getenv("FOUR_X")
e = _int(env, "FIVE_X", 5, minimum=0)
f = _setting("SIX_X")
g = ctx.env.get("SEVEN_X", "").strip()
h = "EIGHT_X" in os.environ
i = log.info("NOT_A_READ %s", x)
j = other.get("NOT_ENV_X")
k = os.environ.get("LANG")
"""
    assert sorted(_reads(ast.parse(code))) == sorted(
        ["ONE_X", "TWO_X", "THREE_X", "FOUR_X", "FIVE_X", "SIX_X", "SEVEN_X", "EIGHT_X"]
    )


def test_the_settings_table_is_found():
    documented = documented_settings()
    # a few that have been there from the start: the table itself was found and parsed
    assert {"TELEGRAM_BOT_TOKEN", "ANTHROPIC_API_KEY", "DATA_DIR", "ANTHROPIC_TIMEOUT", "WEBHOOK_PORT"} <= set(
        documented
    ), documented
    assert not any(name.startswith("/") for name in documented)


def test_every_setting_the_code_reads_is_documented():
    documented = documented_settings()
    missing = {name: files for name, files in settings_in_code().items() if name not in documented}
    assert not missing, f"settings read by the code but not in the settings table of {SETTINGS_DOCS}: {missing}"


def test_every_documented_setting_is_read_by_the_code():
    in_code = settings_in_code()
    stale = {name: doc for name, doc in documented_settings().items() if name not in in_code}
    assert not stale, f"settings documented but read nowhere in {CODE_DIRS}: {stale}"


def test_the_example_env_file_names_only_real_settings():
    example = Path(ROOT / ".env.example")
    names = re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", example.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert names, "no settings found in .env.example"
    in_code = settings_in_code()
    assert [n for n in names if n not in in_code] == []
