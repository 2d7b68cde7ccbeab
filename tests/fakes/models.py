"""The fake's model table: what ``GET /v1/models`` answers and what each model accepts.

tests/fakes/README.md is the one table of every rule of the fake, its page and its test (guesses
marked); each entry below says its sources in a comment.

Sources (read with the ``search`` tool, December 2026):

- Models API (``GET /v1/models``, ``GET /v1/models/{model_id}``): the response shape is the
  installed SDK's ``anthropic.types.ModelInfo`` (anthropic 2.15): ``id``, ``type: "model"``,
  ``display_name``, ``created_at`` (RFC 3339), ``lifecycle``, ``deprecated_at``, ``retires_at``,
  ``line``, ``max_input_tokens``, ``max_tokens`` and ``capabilities`` with every key present:
  ``batch``, ``citations``, ``code_execution``, ``context_management`` (``supported`` +
  strategies), ``effort`` (``supported`` + ``low``/``medium``/``high``/``xhigh``/``max``),
  ``image_input``, ``pdf_input``, ``server_tools`` (``supported``, ``code_execution``,
  ``web_search``), ``structured_outputs``, ``thinking`` (``supported`` + ``types``:
  ``adaptive``, ``between_tools``, ``disabled``, ``enabled``), each a ``{"supported": bool}``.
  The list is paginated (``data``, ``has_more``, ``first_id``, ``last_id``; ``limit`` 1-1000,
  default 20; ``after_id`` / ``before_id``), newest first. Unknown id: 404 ``not_found_error``.
- Models overview / model pages: the 5.5 generation and Fable have a 1M context and 128K
  output; Opus 5.5 and Fable think always ("Adaptive (always on)"), Sonnet 5.5 and Haiku 5.5
  think adaptively by default; default effort high (Sonnet 5.5, Fable), medium (Opus 5.5,
  Haiku 5.5).
- What's new in Claude Sonnet 5.5 / migration guide: accepted ``thinking.type`` adaptive and
  between_tools (``disabled`` and budget thinking are 400s); effort low, medium, high, xhigh,
  max; between_tools only at low/medium/high; forced ``tool_choice`` (any/tool), sampling
  parameters and assistant prefill are 400s; minimum cacheable prompt 512 tokens (1,024 on
  Sonnet 5); mid-conversation ``role: "system"`` messages are accepted ("Per-message effort,
  mid-conversation system messages: Yes").
- Thinking in tool and multi-turn workflows: forced tool use (``tool_choice`` any/tool) is an
  error with manual thinking (``enabled``); adaptive thinking supports it (thinking is then
  skipped), except on Opus 5.5, Sonnet 5.5, Fable 5.1 (and Mythos 5.1), which return a 400 —
  Haiku 5.5 is not in that list, so it accepts forced tool use.
- Prefix checks on thinking blocks: the models with preserved thinking (prefix check) are
  claude-fable-5-2, claude-fable-5-1, claude-opus-5-5, claude-sonnet-5-5, claude-haiku-5-5.
- Prompt caching minimums: 512 on the 5.x generation named above; 1,024 Sonnet 4.6/4.5;
  4,096 Opus 4.6/4.5 and Haiku 4.5 (tests/fakes/prompt_cache.py keeps its rules for names
  not in this table).
- Migration guide (4.6): prefill returns a 400 on the Claude 4.6 models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EFFORTS = ("low", "medium", "high", "xhigh", "max")


@dataclass(frozen=True)
class ModelSpec:
    id: str
    display_name: str
    created_at: str
    line: str
    max_input_tokens: int
    max_tokens: int
    cache_minimum: int
    thinking_types: frozenset[str]  # accepted ``thinking.type`` values
    thinks_by_default: bool  # no ``thinking`` field: adaptive thinking
    efforts: tuple[str, ...]  # accepted ``output_config.effort`` values; () = no effort parameter
    default_effort: str | None = None
    preserved_thinking: bool = False  # thinking blocks bound to their prefix (the prefix check)
    strict_5_5: bool = False  # sampling parameters are 400s (the 5.5 generation)
    forced_tools: bool = True  # tool_choice any/tool accepted (not on Opus/Sonnet 5.5 and Fable)
    prefill: bool = True  # a last assistant message (prefill) is accepted
    system_messages: bool = False  # mid-conversation ``role: "system"`` messages accepted
    web_search: bool = True  # takes the web_search / web_fetch server tools (capabilities.server_tools)
    web_fetch: bool = True  # takes the web_fetch server tool (not on Opus 5: its migration guide)
    default_display: str = "summarized"  # thinking text shown ("summarized") or not ("omitted")
    disabled_max_effort: str | None = None  # ``disabled`` is a 400 above this effort (Haiku 5.5, Opus 5: high)
    sampling: str = "any"  # "any"; "one_of" (temperature or top_p, not both); "default" (non-default: 400);
    # "haiku_5_5" (top_p only at 0.99, never top_k, never temperature with top_p; non-default temperature 400)
    extra: dict[str, bool] = field(default_factory=dict)

    def info(self) -> dict[str, Any]:
        """The ``ModelInfo`` object ``GET /v1/models/{id}`` answers."""

        def s(flag: bool) -> dict[str, bool]:
            return {"supported": flag}

        thinking = {t: s(t in self.thinking_types) for t in ("adaptive", "between_tools", "disabled", "enabled")}
        effort: dict[str, Any] = {"supported": bool(self.efforts)}
        effort.update({level: s(level in self.efforts) for level in EFFORTS})
        five = self.line in ("fable", "mythos") or self.strict_5_5
        return {
            "type": "model",
            "id": self.id,
            "display_name": self.display_name,
            "created_at": self.created_at,
            "lifecycle": "active",
            "deprecated_at": None,
            "retires_at": None,
            "line": self.line,
            "max_input_tokens": self.max_input_tokens,
            "max_tokens": self.max_tokens,
            "capabilities": {
                "batch": s(True),
                "citations": s(True),
                "code_execution": s(True),
                "context_management": {
                    "supported": True,
                    "clear_thinking_20251015": s(True),
                    "clear_tool_uses_20250919": s(True),
                    "compact_20260112": s(five),
                },
                "effort": effort,
                "image_input": s(True),
                "pdf_input": s(True),
                "server_tools": {"supported": True, "code_execution": s(True), "web_search": s(self.web_search)},
                "structured_outputs": s(True),
                "thinking": {"supported": bool(self.thinking_types - {"disabled"}), "types": thinking},
            },
        }


_FIVE_FIVE = dict(
    max_input_tokens=1_000_000,
    max_tokens=128_000,
    cache_minimum=512,
    thinks_by_default=True,
    efforts=EFFORTS,
    preserved_thinking=True,
    strict_5_5=True,
    sampling="default",
    prefill=False,
    system_messages=True,
    default_display="omitted",
    forced_tools=False,
)
_ADAPTIVE_ONLY = frozenset({"adaptive"})
_OFF_OR_ADAPTIVE = frozenset({"adaptive", "disabled"})
# Fable 5 / Mythos 5 (Fable 5 migration guide): thinking always on, ``disabled`` and ``enabled`` are 400s; no
# prefix check (Prefix checks names only the 5.1/5.2 Fable models); the rest of the shape: see tests/fakes/README.md
_FABLE_5 = dict(
    max_input_tokens=1_000_000, max_tokens=128_000, cache_minimum=512, thinks_by_default=True, efforts=EFFORTS,
    sampling="default", prefill=False, default_display="omitted",
)  # fmt: skip
# Opus 4.7 / 4.8 (Opus 5 migration guide: "on Claude Opus 4.8, a request without a thinking field runs without
# thinking"; adaptive only, budgets 400): sampling parameters refused like Opus 4.7's
_OPUS_4_7 = dict(
    max_input_tokens=1_000_000, max_tokens=128_000, cache_minimum=4096, thinks_by_default=False, efforts=EFFORTS,
    sampling="default", prefill=False, default_display="omitted",
)  # fmt: skip

MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("claude-fable-5-2", "Claude Fable 5.2", "2026-11-09T00:00:00Z", "fable",
              thinking_types=_ADAPTIVE_ONLY, default_effort="high", **_FIVE_FIVE),  # type: ignore[arg-type]
    ModelSpec("claude-mythos-5-2", "Claude Mythos 5.2", "2026-11-09T00:00:00Z", "mythos",
              thinking_types=_ADAPTIVE_ONLY, default_effort="high", **_FIVE_FIVE),  # type: ignore[arg-type]
    ModelSpec("claude-sonnet-5-5", "Claude Sonnet 5.5", "2026-09-28T00:00:00Z", "sonnet",
              thinking_types=frozenset({"adaptive", "between_tools"}), default_effort="high",
              **_FIVE_FIVE),  # type: ignore[arg-type]
    ModelSpec("claude-opus-5-5", "Claude Opus 5.5", "2026-09-22T00:00:00Z", "opus",
              thinking_types=_ADAPTIVE_ONLY, default_effort="medium", **_FIVE_FIVE),  # type: ignore[arg-type]
    # Haiku 5.5: ``disabled`` at effort high or below, no ``between_tools``; forced tool use accepted; its
    # own sampling rule (What's new in / migration guide for Claude Haiku 5.5; Prompting Claude Haiku 5.5)
    ModelSpec("claude-haiku-5-5", "Claude Haiku 5.5", "2026-10-07T00:00:00Z", "haiku",
              thinking_types=_OFF_OR_ADAPTIVE, default_effort="medium",
              **{**_FIVE_FIVE, "forced_tools": True, "disabled_max_effort": "high", "sampling": "haiku_5_5"}),  # type: ignore[arg-type]
    ModelSpec("claude-fable-5-1", "Claude Fable 5.1", "2026-09-01T00:00:00Z", "fable",
              thinking_types=_ADAPTIVE_ONLY, default_effort="high", **_FIVE_FIVE),  # type: ignore[arg-type]
    ModelSpec("claude-mythos-5-1", "Claude Mythos 5.1", "2026-09-01T00:00:00Z", "mythos",
              thinking_types=_ADAPTIVE_ONLY, default_effort="high", **_FIVE_FIVE),  # type: ignore[arg-type]
    # Opus 5 (Claude Opus 5 overview and migration guide): thinking on by default, ``disabled`` only at effort
    # high or below, display "omitted" by default, no web fetch; 512-token cache minimum (guess: third-party)
    ModelSpec("claude-opus-5", "Claude Opus 5", "2026-07-24T00:00:00Z", "opus", 1_000_000, 128_000, 512,
              _OFF_OR_ADAPTIVE, True, EFFORTS, "high", sampling="default", prefill=False, system_messages=True,
              default_display="omitted", disabled_max_effort="high", web_fetch=False),
    # Sonnet 5 (Claude Sonnet 5 migration guide): adaptive by default, budgets and non-default sampling 400s;
    # ``disabled`` accepted, 1,024-token cache minimum, forced tool_choice accepted (What's new in Sonnet 5.5)
    ModelSpec("claude-sonnet-5", "Claude Sonnet 5", "2026-06-30T00:00:00Z", "sonnet", 1_000_000, 128_000, 1024,
              _OFF_OR_ADAPTIVE, True, EFFORTS, "high", sampling="default", prefill=False,
              default_display="omitted"),
    ModelSpec("claude-fable-5", "Claude Fable 5", "2026-06-09T00:00:00Z", "fable",
              thinking_types=_ADAPTIVE_ONLY, default_effort="high", **_FABLE_5),  # type: ignore[arg-type]
    ModelSpec("claude-mythos-5", "Claude Mythos 5", "2026-06-09T00:00:00Z", "mythos",
              thinking_types=_ADAPTIVE_ONLY, default_effort="high", **_FABLE_5),  # type: ignore[arg-type]
    # Opus 4.8 takes mid-conversation system messages (What's new in Claude Opus 4.8); Opus 4.7 does not
    ModelSpec("claude-opus-4-8", "Claude Opus 4.8", "2026-05-28T00:00:00Z", "opus",
              thinking_types=_OFF_OR_ADAPTIVE, default_effort="high", system_messages=True,
              **_OPUS_4_7),  # type: ignore[arg-type]
    ModelSpec("claude-opus-4-7", "Claude Opus 4.7", "2026-04-16T00:00:00Z", "opus",
              thinking_types=_OFF_OR_ADAPTIVE, default_effort="high", **_OPUS_4_7),  # type: ignore[arg-type]
    ModelSpec("claude-opus-4-6", "Claude Opus 4.6", "2026-02-05T00:00:00Z", "opus", 1_000_000, 128_000, 4096,
              frozenset({"adaptive", "enabled", "disabled"}), False, ("low", "medium", "high", "max"), "high",
              prefill=False),
    ModelSpec("claude-sonnet-4-6", "Claude Sonnet 4.6", "2026-02-17T00:00:00Z", "sonnet", 1_000_000, 64_000, 1024,
              frozenset({"adaptive", "enabled", "disabled"}), False, ("low", "medium", "high", "max"), "high",
              prefill=False),
    ModelSpec("claude-haiku-4-5", "Claude Haiku 4.5", "2025-10-15T00:00:00Z", "haiku", 200_000, 64_000, 4096,
              frozenset({"enabled", "disabled"}), False, (), sampling="one_of"),
    ModelSpec("claude-sonnet-4-5", "Claude Sonnet 4.5", "2025-09-29T00:00:00Z", "sonnet", 200_000, 64_000, 1024,
              frozenset({"enabled", "disabled"}), False, (), sampling="one_of"),
)  # fmt: skip

_BY_ID = {m.id: m for m in MODELS}


def find(model: str) -> ModelSpec | None:
    """The model's spec, or None for a name the table does not know (then no model rule applies)."""
    return _BY_ID.get(model)


def like(model_id: str, base: str, **changes: Any) -> ModelSpec:
    """A spec for a made-up model id that behaves like ``base`` (``FakeAnthropic.add_model``)."""
    from dataclasses import replace

    spec = _BY_ID[base]
    return replace(spec, id=model_id, display_name=changes.pop("display_name", model_id), **changes)
