"""What a search of the recall index returns: ``Hit``, one stored message, made from rank's turns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory.recall import tuning
from memory.recall.rank import Turn
from memory.recall.store import FileRow


@dataclass(frozen=True, slots=True)
class Hit:
    """One stored message found by a search.

    ``file`` is None for the live transcript, else the archived file's name; ``line`` is its
    1-based physical line in that file and ``offset`` its byte offset; ``relevance`` the share of
    the query's weight (idf) it contains (0..1) and ``matched`` that weight; ``context`` the
    neighbouring turn that completes the exchange (the answer to a question, or the question of
    an answer), if any.
    """

    file: str | None
    line: int
    offset: int
    at: str | None
    role: str
    content: str
    score: float
    name: str | None = None
    relevance: float = 0.0
    matched: float = 0.0
    context: tuple[Hit, ...] = field(default=())

    @property
    def relevant(self) -> bool:
        """Whether this hit is good enough to be recalled without being asked for."""
        return tuning.relevant(self.matched, self.relevance)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line, "at": self.at, "role": self.role, "content": self.content}
        if self.name:
            out["name"] = self.name
        if self.file is not None:
            out["file"] = self.file
        out["score"] = round(self.score, 4)
        return out


def hits(turns: list[Turn], files: dict[int, FileRow], exclude: tuple[int, int] | None) -> list[Hit]:
    """The hits of ranked ``turns``, each with the neighbouring turn that completes its exchange (same
    session, the other role) unless that one is excluded (``exclude``: live file id, first byte offset
    left out); ``files``: the chat's file rows by id."""

    def hit(t: Turn, context: tuple[Hit, ...] = ()) -> Hit:
        name = files[t.file].name if t.file in files else ""
        return Hit(
            file=name or None, line=t.line, offset=t.offset, at=t.at, role=t.role, content=t.content,
            score=t.score, name=t.name, relevance=t.relevance, matched=t.matched, context=context,
        )  # fmt: skip

    out = []
    for t in turns:
        other = t.next if t.role == "user" else t.prev
        ctx = ()
        if other is not None and other.role != t.role and other.session == t.session:
            if not (exclude and other.file == exclude[0] and other.offset >= exclude[1]):
                ctx = (hit(other),)
        out.append(hit(t, ctx))
    return out
