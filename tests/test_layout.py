"""The layout the README describes, checked from the imports themselves.

- memory/ imports nothing from bot/, telegram or anthropic;
- only bot/tg imports telegram; no module imports the Anthropic SDK (bot/claude/api.py speaks the Claude API over
  httpx), and httpx is imported only there and by the doctor's network checks;
- the layers point one way: front ends (bot/tg, bot/cli, the doctor) → shared commands (bot/commands)
  → the service (bot/core) → tools (bot/tools) and the model side (bot/claude) → memory/;
- no import circle anywhere (imports inside functions count: they are circles put off, not removed);
- no module over 450 lines.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "memory")
MAX_LINES = 500  # the "~450"
LONG_TABLES = {"bot.texts": "the table of the bot's own texts in Korean and English: one idea, however many texts"}

# layer of each package prefix: a module may import only from its own layer or a lower one
LAYERS = {
    "memory": 0,
    "bot.texts": 0,
    "bot.envparse": 0,
    "bot.claude": 1,
    "bot.tools": 1,
    "bot.core": 2,
    "bot.config": 2,
    "bot.commands": 3,
    "bot.wiring": 4,
    "bot.tg": 5,
    "bot.cli": 5,
    "bot.search_cli": 5,
    "bot.doctor": 5,
    "bot.__main__": 6,
    "bot": 6,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:`` (imports for type hints only)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for b in node.body for n in ast.walk(b))
    return skip


def imports(path: Path, known: set[str]) -> set[str]:
    """Every module of ours that ``path`` imports, at any depth of its code (not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(), str(path))
    skip = type_checking_only(tree)
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            for alias in node.names:  # ``from package import module`` depends on that module only
                full = f"{base}.{alias.name}"
                names.add(full if full in known else base)
    ours = set()
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != this:
            ours.add(name)
    return ours


def external(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    skip = type_checking_only(tree)
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def layer(name: str) -> int:
    best = max((p for p in LAYERS if name == p or name.startswith(p + ".")), key=len)
    return LAYERS[best]


@functools.cache
def graph() -> dict[str, set[str]]:
    """Every module of ours -> the modules of ours it imports (built when a test first needs it, not at
    collection, which every test process does)."""
    known = set(modules())
    return {name: imports(path, known) for name, path in modules().items()}


def test_memory_imports_nothing_of_the_application() -> None:
    for name, path in modules().items():
        if name.startswith("memory"):
            assert not {m for m in graph()[name] if m.startswith("bot")}, name
            assert not external(path) & {"telegram", "anthropic", "httpx", "httpx2"}, name


def test_only_the_telegram_front_end_imports_telegram() -> None:
    for name, path in modules().items():
        if "telegram" in external(path):
            assert name.startswith("bot.tg"), name


def test_no_module_imports_the_sdk_and_only_the_api_client_and_the_doctor_import_httpx() -> None:
    for name, path in modules().items():
        assert not external(path) & {"anthropic", "httpx2"}, name
        if "httpx" in external(path):
            assert name in ("bot.claude.api", "bot.doctor.net"), name


def test_imports_point_down_the_layers() -> None:
    upward = [
        f"{name} → {other}"
        for name, others in graph().items()
        for other in others
        if layer(other) > layer(name) and not other.startswith(name + ".")
    ]
    assert upward == []


def test_no_import_circles() -> None:
    circles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph().get(node, ())):
            # a package's __init__ importing its own submodules is not a circle unless they import it back
            if state.get(nxt) == 1:
                circles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph()):
        if node not in state:
            visit(node)
    assert circles == []


@pytest.mark.parametrize("name", sorted(modules()))
def test_modules_stay_small(name: str) -> None:
    lines = len(modules()[name].read_text().splitlines())
    if name in LONG_TABLES:
        pytest.skip(LONG_TABLES[name])
    assert lines <= MAX_LINES, f"{name}: {lines} lines"
