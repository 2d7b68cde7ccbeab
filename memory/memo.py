"""The summary memo: its fixed headings, the validity check, and the mechanical clip.

The memo is a handover note with fixed Markdown headings (in the chat's main language). A
memo from the summarizer is used only if every heading is there and something was said.
"""

from __future__ import annotations

import re

# The fixed headings of the memo (a handover memo, in the chat's main language).
HEADINGS: tuple[str, ...] = (
    "사용자의 목표",
    "결정·제약·선호",
    "바뀐 것",
    "진행 중인 작업",
    "핵심 사실",
    "막다른 길",
    "다음에 할 일",
)
"""Each heading is a Markdown ``## `` line; a section with nothing to say holds ``없음``."""

NOTHING = "없음"


# -- the memo -----------------------------------------------------------------------------

_HEADING_LINE = re.compile(r"^\s*#{1,6}\s*(.+?)\s*$")


def _sections(text: str) -> list[tuple[str | None, list[str]]]:
    """(heading or None for the preamble, body lines) in order."""
    out: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        m = _HEADING_LINE.match(line)
        if m:
            out.append((m.group(1), []))
        else:
            out[-1][1].append(line)
    return out


def memo_problems(text: str) -> list[str]:
    """What is wrong with a summary memo (empty list: it is valid).

    Valid means: not empty, every fixed heading present as a Markdown heading line, and
    at least one section with content (a section may say ``없음``).
    """
    if not text or not text.strip():
        return ["empty"]
    sections = _sections(text)
    titles = [h for h, _ in sections if h is not None]
    problems = [f"missing heading: {h}" for h in HEADINGS if not any(t.startswith(h) for t in titles)]
    if not any(h is not None and any(line.strip() not in ("", NOTHING, "-") for line in body) for h, body in sections):
        problems.append("all sections empty")
    return problems


def clip_memo(text: str, limit: int) -> str:
    """Mechanically shorten a memo to ``limit`` characters, keeping every heading.

    Used only when the summarizer could not condense it: the last lines of the longest
    sections go first.
    """
    if len(text) <= limit:
        return text
    sections = _sections(text.strip())
    bodies = [list(body) for _, body in sections]

    def render() -> str:
        parts: list[str] = []
        for (heading, _), body in zip(sections, bodies, strict=True):
            if heading is not None:
                parts.append(f"## {heading}")
            parts.extend(body)
        return "\n".join(parts).strip()

    out = render()
    while len(out) > limit:
        longest = max(range(len(bodies)), key=lambda i: sum(len(x) + 1 for x in bodies[i]))
        if not bodies[longest]:
            return out[:limit]
        bodies[longest].pop()
        out = render()
    return out
