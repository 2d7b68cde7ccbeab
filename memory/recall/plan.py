"""A chat's transcript files on disk against what the recall index recorded of them (memory.recall.index):
which files there are, what is left to index, and the index's records following renamed and deleted files."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from memory.recall.build import IndexStatus
from memory.recall.store import ChatRow, FileRow, chat_row, file_rows, forget_file, write_transaction


def chat_files(chats_dir: Path, chat: str) -> dict[str, Path]:
    """The chat's transcript files by index name: '' for the live one, else the archive file name."""
    out: dict[str, Path] = {}
    archive = chats_dir / "archive"
    prefix = chat + "."
    try:
        names = sorted(n for n in os.listdir(archive) if n.startswith(prefix) and n.endswith(".jsonl"))
    except (FileNotFoundError, NotADirectoryError):
        names = []
    for n in names:
        out[n] = archive / n
    live = chats_dir / f"{chat}.jsonl"
    if live.exists():
        out[""] = live
    return out


@dataclass(slots=True)
class Plan:
    """A chat's transcript files on disk against what the index recorded of them."""

    row: ChatRow
    files: dict[str, Path]
    stats: dict[str, os.stat_result]
    known: dict[str, FileRow]

    @property
    def unchanged(self) -> bool:
        """Nothing to do: the same files, each seen to its current size."""
        known, stats = self.known, self.stats
        return set(known) == set(stats) and all(
            (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (r.dev, r.ino, r.seen, r.mtime)
            for n, st in stats.items()
            for r in (known[n],)
        )

    def _by_inode(self) -> dict[tuple[int, int], FileRow]:
        return {(r.dev, r.ino): r for r in self.known.values()}

    @property
    def cost(self) -> int:
        """Bytes to index plus bytes of turns to drop (files gone or replaced) to catch up."""
        by_inode = self._by_inode()
        seen: set[int] = set()
        cost = 0
        for st in self.stats.values():
            r = by_inode.get((st.st_dev, st.st_ino))
            if r is not None and st.st_size >= r.done:
                seen.add(r.id)
                cost += st.st_size - r.done
            else:
                cost += st.st_size
        return cost + sum(r.done for r in self.known.values() if r.id not in seen)

    def status(self, *, building: bool) -> IndexStatus:
        by_inode = self._by_inode()
        total = sum(st.st_size for st in self.stats.values())
        done = 0
        for st in self.stats.values():
            r = by_inode.get((st.st_dev, st.st_ino))
            if r is not None and st.st_size >= r.done:
                done += r.done
        return IndexStatus(False, done, total, building)


def read_plan(conn: sqlite3.Connection, chats_dir: Path, chat: str, *, create: bool = True) -> Plan | None:
    """The chat's files against the index (its row created if it has files and ``create``); None: no row."""
    files = chat_files(chats_dir, chat)
    row = chat_row(conn, chat, create=create and bool(files))
    if row is None:
        return None
    stats: dict[str, os.stat_result] = {}
    for name, path in files.items():
        with contextlib.suppress(FileNotFoundError):
            stats[name] = os.stat(path)
    return Plan(row, files, stats, file_rows(conn, row.id))


def follow_renames(conn: sqlite3.Connection, chat: ChatRow, stats: dict[str, os.stat_result]) -> None:
    """A /reset renames the live file into the archive: keep its index under the new name.

    Files that are gone are forgotten (their turns leave the index).
    """
    with write_transaction(conn):
        rows = list(file_rows(conn, chat.id).values())
        by_name = {r.name: r for r in rows}
        by_inode = {(st.st_dev, st.st_ino): n for n, st in stats.items()}
        gone: set[int] = set()
        for r in rows:
            if r.id in gone:
                continue
            now = by_inode.get((r.dev, r.ino))
            if now == r.name:
                continue
            if now is None:
                forget_file(conn, chat, r.id)  # deleted, or replaced by another file
                gone.add(r.id)
                continue
            occupant = by_name.get(now)
            if occupant is not None and occupant is not r:
                forget_file(conn, chat, occupant.id)
                gone.add(occupant.id)
            conn.execute("UPDATE files SET name=? WHERE id=?", (now, r.id))
            if by_name.get(r.name) is r:
                del by_name[r.name]
            by_name[now] = r
            r.name = now
