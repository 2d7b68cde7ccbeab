"""RecallIndex's side of recall by meaning: the model it was given, the vectors in memory, the
background thread that makes them, and a question's vector (memory.recall.meaning has the model,
the vectors' table and the search by meaning).

``MeaningIndex`` is a part of RecallIndex (memory.recall.index), not used alone: it runs its
queries through the index's ``_run`` (a connection of its pool, the database rebuilt once if unusable).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from memory.recall import meaning as meanings
from memory.recall import tuning
from memory.recall.build import READY, Builder, IndexStatus
from memory.recall.store import ChatRow, chat_row
from memory.transcript import check_chat_id

log = logging.getLogger(__name__)

T = TypeVar("T")
ByMeaning = Callable[[str], Callable[[], meanings.Dense | None]]  # a text -> its closest turns, when asked


class MeaningIndex:
    """Recall by meaning, for RecallIndex: ``meaning`` (the model, None: by words only), ``vectors``
    (those of the chats searched lately) and ``meaning_builder`` (the thread that makes them)."""

    meaning: meanings.Embedder | None
    vectors: meanings.Vectors
    meaning_builder: Builder
    _embedding: ThreadPoolExecutor

    def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        raise NotImplementedError  # RecallIndex._run

    def _start_meaning(self, meaning: meanings.Embedder | None) -> None:
        """Set up recall by meaning with the model ``meaning`` (from RecallIndex.__init__)."""
        self.meaning = meaning
        self.vectors = meanings.Vectors()
        self._embedding = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall-question")
        # vectors are made by a thread: the model runs in C without the interpreter's lock
        self.meaning_builder = Builder(self.meaning_step, name="recall-meaning", quiet=True)

    def _hand_off_meaning(self, conn: sqlite3.Connection, chat: str, row: ChatRow) -> None:
        """Have the meaning builder make the chat's missing vectors, if any (from catch_up)."""
        if self.meaning is not None and meanings.wanted(conn, row, self.meaning.name):
            self.meaning_builder.request(chat)

    def meaning_step(self, chat: str) -> tuple[int, IndexStatus]:
        """The meaning builder's unit of work: vectors for memory.recall.meaning.BATCH more turns, in a
        thread of low priority (READY when none are left)."""
        meanings.lower_priority()
        if self.meaning is None:
            return 0, READY
        row = self._run(lambda conn: chat_row(conn, chat, create=False))
        if row is None:
            return 0, READY
        done, more = meanings.fill_step(self._run, self.meaning, row)
        return max(done, 1) if more else done, IndexStatus(not more, building=more)

    def missing_vectors(self, chat_id: int | str) -> int:
        """How many of the chat's turns wait for their vector (0 without a model)."""
        chat = check_chat_id(chat_id)
        if self.meaning is None:
            return 0
        row = self._run(lambda conn: chat_row(conn, chat, create=False))
        return 0 if row is None else self._run(lambda conn: meanings.missing(conn, row))

    def embed(self, chat_id: int | str) -> int:
        """Make every vector the chat is missing now, on the caller's thread (batch tools and benchmarks;
        the bot has them made in the background); return the turns embedded. 0 without a model."""
        chat = check_chat_id(chat_id)
        if self.meaning is None:
            return 0
        row = self._run(lambda conn: chat_row(conn, chat, create=False))
        done = 0
        while row is not None:
            n, more = meanings.fill_step(self._run, self.meaning, row, limit=meanings.BATCH * 8)
            done += n
            if not more:
                break
        return done

    def _by_meaning(
        self, conn: sqlite3.Connection, row: ChatRow, weights: tuning.Weights, effort: tuning.Effort
    ) -> ByMeaning | None:
        """The meaning side of one search (memory.recall.rank's ``meaning``), None when it goes by words
        only: no model, or no weight for meaning in ``weights`` or ``effort``."""
        embedder = self.meaning
        if embedder is None or weights.meaning <= 0 or effort.meaning <= 0:
            return None

        def meaning(text: str) -> Callable[[], meanings.Dense | None]:
            # no vector yet, or another model's (the builder clears those): no question to embed
            if (now := meanings.mark(conn, row)) < row.lo or not meanings.current(conn, embedder.name):
                return lambda: None
            question = self._embedding.submit(embedder.query, text)  # meanwhile rank reads the candidates
            crowded = bool(getattr(embedder, "crowded", True))

            def closest() -> meanings.Dense | None:
                try:
                    return self.vectors.search(conn, row, now, question.result, effort.meaning, embedder.floor, crowded)
                except sqlite3.Error:
                    raise
                except Exception:  # the model failed: this search goes by words
                    log.warning("recall by meaning failed for a question; searching by words", exc_info=True)
                    return None

            return closest

        return meaning
