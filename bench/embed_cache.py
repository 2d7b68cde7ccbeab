"""An embedder that remembers: benchmarks re-rank the same turns many times, and the model takes
about 40 ms a turn. Wraps ``memory.recall.meaning.E5`` (or any Embedder) with a pickle file of the
vectors by (kind, text); the file is keyed by the model's name, so another model starts empty.

    python -m bench.recall_eval --embed-cache /tmp/e5.pkl ...
"""

from __future__ import annotations

import atexit
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory.recall import meaning as meanings


class CachedEmbedder:
    """The wrapped embedder's vectors, computed once per text across runs."""

    def __init__(self, inner: meanings.Embedder, path: Path) -> None:
        self._inner = inner
        self._path = path
        self._vecs: dict[tuple[str, str], Any] = {}
        self._dirty = False
        try:
            with path.open("rb") as f:
                saved = pickle.load(f)
            if saved.get("model") == inner.name:
                self._vecs = saved["vecs"]
        except (OSError, EOFError, pickle.UnpicklingError, KeyError, AttributeError):
            pass
        atexit.register(self.save)

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def floor(self) -> float:
        return self._inner.floor

    @property
    def crowded(self) -> bool:
        return self._inner.crowded

    def passages(self, texts: Sequence[str]) -> Any:
        missing = [t for t in dict.fromkeys(texts) if ("p", t) not in self._vecs]
        if missing:
            for key, vec in zip(missing, self._inner.passages(missing), strict=True):
                self._vecs["p", key] = np.asarray(vec, dtype=np.float32)
            self._dirty = True
        return np.stack([self._vecs["p", t] for t in texts]) if texts else np.zeros((0, 384), np.float32)

    def query(self, text: str) -> Any:
        if ("q", text) not in self._vecs:
            self._vecs["q", text] = np.asarray(self._inner.query(text), dtype=np.float32)
            self._dirty = True
        return self._vecs["q", text]

    def save(self) -> None:
        if not self._dirty:
            return
        tmp = self._path.with_suffix(".tmp")
        with tmp.open("wb") as f:
            pickle.dump({"model": self._inner.name, "vecs": self._vecs}, f)
        tmp.replace(self._path)
        self._dirty = False
