"""A chat's transcript files on disk against what the recall index recorded of them (memory.recall.index)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memory.recall.build import IndexStatus
from memory.recall.store import ChatRow, FileRow


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
