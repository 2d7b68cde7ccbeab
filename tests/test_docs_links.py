"""Every relative link in the README and docs/ points at a file that exists (docs moved out of the README)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "deploy" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path):
    text = re.sub(r"```.*?```|`[^`\n]*`", "", page.read_text(), flags=re.S)  # links in code are examples
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#")[0]
        if not (page.parent / path).exists():
            broken.append(target)
    assert broken == []


def test_the_readme_links_every_docs_page():
    readme = (ROOT / "README.md").read_text()
    assert [p.name for p in sorted((ROOT / "docs").glob("*.md")) if f"docs/{p.name}" not in readme] == []
