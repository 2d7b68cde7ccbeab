"""docs/access.md's "who can make the bot do, read or spend what": every sentence names a test that exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Who can make the bot do, read or spend what"
REF = re.compile(r"`(tests/test_[a-z0-9_]+\.py)::(test_[a-z0-9_]+)`")


def sentences() -> list[str]:
    text = (ROOT / "docs" / "access.md").read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0].split("**Who may talk.**", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


def functions_of(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_the_section_covers_the_three_kinds_of_people():
    text = (ROOT / "docs" / "access.md").read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1]
    for who in ("**A stranger**", "**An allowed user**", "**A group member**"):
        assert who in section
    assert len(sentences()) >= 15


def test_every_sentence_names_tests_that_exist():
    for line in sentences():
        refs = REF.findall(line)
        assert refs, f"names no test: {line}"
        for path, name in refs:
            assert name in functions_of(path), f"{path}::{name} does not exist ({line[:60]}…)"
