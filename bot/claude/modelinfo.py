"""What the Models API says about a model, kept on disk, and the request shape chosen from it.

No model table is hard-coded: ``GET /v1/models/{id}`` gives each model's ``max_input_tokens``,
``max_tokens`` and ``capabilities`` (thinking types, effort levels, image and PDF input, …).
It is read once per model and kept in ``DATA_DIR/models.json`` (written to a temp file and
renamed), refreshed when older than ``MAX_AGE`` or on ``/model refresh``. An endpoint without
the Models API (a compatible proxy) gets ``ModelInfo.unknown``: requests then carry neither
``thinking`` nor ``effort`` — the API's defaults, valid on every model.

One thing the Models API does not list is whether a model takes mid-conversation
``role: "system"`` messages. ``system_messages`` starts unknown (try them) and is set to
False, and kept, the first time the API answers that the role is not supported.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
"""The documented effort levels, lowest first."""

MAX_AGE = timedelta(days=7)
"""Capabilities older than this are fetched again (in the background of the next request)."""

FILE = "models.json"


def _supported(node: Any) -> bool | None:
    if isinstance(node, Mapping):
        value = node.get("supported")
        return bool(value) if isinstance(value, bool) else None
    return None


@dataclass(frozen=True)
class ModelInfo:
    """One model as the Models API describes it (``known`` False: the endpoint had no Models API)."""

    id: str
    display_name: str = ""
    max_input_tokens: int | None = None
    max_tokens: int | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    known: bool = True
    fetched_at: str = ""
    system_messages: bool | None = None  # mid-conversation role "system": None unknown (try), learned on a 400

    @classmethod
    def unknown(cls, model: str, now: datetime | None = None) -> ModelInfo:
        at = now.astimezone(UTC).isoformat(timespec="seconds") if now is not None else ""
        return cls(model, known=False, fetched_at=at)

    @classmethod
    def from_api(cls, data: Mapping[str, Any], now: datetime) -> ModelInfo:
        caps = data.get("capabilities")
        return cls(
            id=str(data.get("id") or ""),
            display_name=str(data.get("display_name") or ""),
            max_input_tokens=data.get("max_input_tokens") if isinstance(data.get("max_input_tokens"), int) else None,
            max_tokens=data.get("max_tokens") if isinstance(data.get("max_tokens"), int) else None,
            capabilities=dict(caps) if isinstance(caps, Mapping) else {},
            known=True,
            fetched_at=now.astimezone(UTC).isoformat(timespec="seconds"),
        )

    # -- capabilities ----------------------------------------------------------------
    def thinking_type(self, kind: str) -> bool | None:
        """Whether ``thinking.type`` = ``kind`` is accepted (None: not known)."""
        thinking = self.capabilities.get("thinking")
        if not isinstance(thinking, Mapping):
            return None
        types = thinking.get("types")
        return _supported(types.get(kind)) if isinstance(types, Mapping) else None

    @property
    def thinks(self) -> bool:
        """Whether the model supports thinking at all (then replies may carry thinking blocks)."""
        return bool(_supported(self.capabilities.get("thinking")))

    def efforts(self) -> tuple[str, ...]:
        """The effort levels the model accepts, lowest first (empty: no effort parameter)."""
        effort = self.capabilities.get("effort")
        if not isinstance(effort, Mapping) or not effort.get("supported"):
            return ()
        return tuple(level for level in EFFORT_LEVELS if _supported(effort.get(level)))

    def effort_for(self, wanted: str) -> str | None:
        """``wanted`` when accepted, else the nearest accepted level below it (else above); None without effort."""
        levels = self.efforts()
        if not levels or not wanted:
            return None
        if wanted in levels:
            return wanted
        rank = EFFORT_LEVELS.index(wanted) if wanted in EFFORT_LEVELS else 2
        lower = [lv for lv in levels if EFFORT_LEVELS.index(lv) < rank]
        return lower[-1] if lower else levels[0]

    def supports(self, name: str) -> bool | None:
        """A plain capability (``image_input``, ``pdf_input``, ``citations``, …); None when not known."""
        return _supported(self.capabilities.get(name))

    def answer_shape(self, effort: str) -> dict[str, Any]:
        """Request fields for an answer: the configured effort where accepted; thinking left at the
        model's default (adaptive on the models that think by default, off on the others)."""
        level = self.effort_for(effort)
        return {"output_config": {"effort": level}} if level else {}

    def lowest_shape(self) -> dict[str, Any]:
        """Request fields for the least thinking the model accepts (the summarizer):
        ``disabled`` where accepted, else ``between_tools``, else adaptive at the lowest effort."""
        shape: dict[str, Any] = {}
        if self.thinking_type("disabled"):
            shape["thinking"] = {"type": "disabled"}
        elif self.thinking_type("between_tools"):
            shape["thinking"] = {"type": "between_tools"}  # accepted at low, medium and high effort
        levels = self.efforts()
        if levels:
            shape["output_config"] = {"effort": levels[0]}
        return shape

    def describe(self) -> list[str]:
        """Lines for /model and the doctor."""
        if not self.known:
            return ["Models API: not available on this endpoint (requests use the API's defaults)"]
        lines = [f"{self.display_name or self.id} ({self.id})"]
        if self.max_input_tokens:
            lines.append(f"context: {self.max_input_tokens:,} tokens, output up to {self.max_tokens or 0:,} tokens")
        types = [k for k in ("adaptive", "between_tools", "enabled", "disabled") if self.thinking_type(k)]
        lines.append(f"thinking: {', '.join(types) if self.thinks and types else 'no'}")
        levels = self.efforts()
        lines.append(f"effort: {', '.join(levels) if levels else 'no'}")
        inputs = [n for n, k in (("images", "image_input"), ("PDF", "pdf_input")) if self.supports(k)]
        lines.append(f"input: text{''.join(', ' + i for i in inputs)}")
        if self.supports("citations"):
            lines.append("citations: yes")
        return lines


class ModelCatalog:
    """Model infos kept in ``DATA_DIR/models.json`` (one entry per model id), and the model the
    owner chose with /model (``selected``, kept across restarts)."""

    def __init__(self, data_dir: Path | None) -> None:
        self.path = Path(data_dir) / FILE if data_dir is not None else None
        self._lock = threading.Lock()
        self._infos: dict[str, ModelInfo] = {}
        self._selected: str | None = None
        self._over: str | None = None  # the configured model (ANTHROPIC_MODEL) the choice replaced
        self._loaded = False

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.path is None:
            return
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as e:  # a damaged file is only a cache: fetch again
            log.warning("%s unreadable (%s); the models will be fetched again", self.path, e)
            return
        if not isinstance(raw, dict):
            return
        self._selected, self._over = _choice(raw)
        fields = ModelInfo.__dataclass_fields__
        for key, value in (raw.get("models") or {}).items():
            if isinstance(value, dict):
                try:
                    self._infos[key] = ModelInfo(**{k: v for k, v in value.items() if k in fields})
                except TypeError:
                    continue

    def get(self, model: str) -> ModelInfo | None:
        with self._lock:
            self._load()
            return self._infos.get(model)

    def selected_for(self, configured: str) -> str | None:
        """The model the owner chose with /model in place of ``configured`` (ANTHROPIC_MODEL), or None.
        A choice made while another model was configured no longer applies: a changed setting wins."""
        with self._lock:
            self._load()
            return self._selected if self._over in (None, configured) else None

    def select(self, model: str | None, over: str) -> None:
        """Keep the owner's choice ``model`` (None: back to the setting), made over the configured ``over``."""
        with self._lock:
            self._load()
            self._selected, self._over = model, over
            self._save(choice=True)

    def put(self, info: ModelInfo, key: str | None = None) -> None:
        with self._lock:
            self._load()
            old = self._infos.get(key or info.id)
            if old is not None and info.system_messages is None:
                info = replace(info, system_messages=old.system_messages)  # learned, not in the Models API
            self._infos[key or info.id] = info
            self._save()

    def learn(self, model: str, **changes: Any) -> ModelInfo:
        """Record something learned about ``model`` (e.g. ``system_messages=False``)."""
        with self._lock:
            self._load()
            info = replace(self._infos.get(model) or ModelInfo.unknown(model), **changes)
            self._infos[model] = info
            self._save()
            return info

    def stale(self, model: str, now: datetime) -> bool:
        """True when ``model`` was never fetched, or its capabilities are older than MAX_AGE."""
        info = self.get(model)
        if info is None or not info.fetched_at:
            return True
        try:
            return now - datetime.fromisoformat(info.fetched_at) > MAX_AGE
        except ValueError:
            return True

    def _save(self, *, choice: bool = False) -> None:
        """Write the file; ``choice``: this write records a /model choice. Any other write keeps the
        choice the file holds now: another process (the terminal chat beside the bot) may have made
        one since this one read the file, and a refreshed model entry must not undo it."""
        if self.path is None:
            return
        if not choice:
            self._selected, self._over = self._choice_on_disk()
        data: dict[str, Any] = {"models": {k: asdict(v) for k, v in self._infos.items()}}
        if self._selected:
            data["selected"] = self._selected
            data["over"] = self._over
        try:
            _atomic_write(self.path, json.dumps(data, ensure_ascii=False, indent=1))
        except OSError as e:  # a cache: the next start fetches again
            log.warning("could not write %s: %s", self.path, e)

    def _choice_on_disk(self) -> tuple[str | None, str | None]:
        """(selected, over) as the file holds them now; this process's own when it cannot be read."""
        assert self.path is not None
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None, None
        except (OSError, ValueError):
            return self._selected, self._over
        return _choice(raw) if isinstance(raw, dict) else (self._selected, self._over)


def _choice(raw: dict[str, Any]) -> tuple[str | None, str | None]:
    """(selected, over) of a models.json: the /model choice and the configured model it replaced."""
    selected, over = raw.get("selected"), raw.get("over")
    return (selected if isinstance(selected, str) and selected else None), (over if isinstance(over, str) else None)


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to a temp file beside ``path``, fsync it, rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
