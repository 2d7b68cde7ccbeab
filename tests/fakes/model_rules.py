"""What each model refuses (HTTP 400 ``invalid_request_error``): the rules that depend on the model.

tests/fakes/README.md is the one table of every rule of the fake, its page and its test (guesses marked).

Applied by ``messages_rules.validate`` to models in the table (tests/fakes/models.py); a model
name the table does not know gets none of them (the fake's old, model-blind behaviour).

Sources (``search`` tool, December 2026) and wording:

- Claude Sonnet 5.5 migration guide: five settings return a 400 on the 5.5 models — thinking
  budgets, sampling parameters, assistant prefill, forced tool choice and
  ``thinking: {"type": "disabled"}``. What's new in Claude Sonnet 5.5: the ``disabled`` 400's
  "message points to between_tools"; ``between_tools`` works at low, medium and high effort,
  "at xhigh or max effort, requests that use between_tools return a 400 error". Thinking in
  tool and multi-turn workflows: forced tool use returns a 400 on Opus 5.5, Sonnet 5.5 and
  Fable; with manual extended thinking (``enabled``) forced tool use is an error on every model.
- Real wordings seen in public reports: ``"thinking.type.enabled" is not supported for this
  model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking
  behavior.`` (Opus 4.7), ``temperature is deprecated for this model`` (Sonnet 5, same for
  top_p / top_k), ``This model does not support assistant message prefill. The conversation
  must end with a user message.``, ``Thinking may not be enabled when tool_choice forces tool
  use.``, ``prompt is too long: N tokens > M maximum``, ``max_tokens: N > M, which is the
  maximum allowed number of output tokens for <model>``, ``temperature may only be set to 1
  when thinking is enabled.``
- The messages for ``disabled`` / ``between_tools`` / unsupported effort / forced tool_choice
  on the 5.5 models are not quoted in the pages read; they are written in the same form as the
  ``thinking.type.enabled`` one and name the field and the documented alternative.
- Effort levels (``output_config.effort``): low, medium, high, xhigh, max (the SDK's
  ``OutputConfigParam``); which ones a model takes is its Models API ``capabilities.effort``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tests.fakes.models import EFFORTS, ModelSpec
from tests.fakes.prompt_cache import segments

if TYPE_CHECKING:
    from tests.fakes.messages_rules import InvalidRequest

THINKING_TAGS = ("adaptive", "between_tools", "disabled", "enabled")
THINKING_FIELDS = {
    "adaptive": ("type", "display"),
    "between_tools": ("type",),
    "disabled": ("type",),
    "enabled": ("type", "budget_tokens", "display"),
}
SAMPLING = ("temperature", "top_p", "top_k")
HAIKU_5_5_TOP_P = 0.99


def _above(effort: str, spec: ModelSpec) -> bool:
    limit = spec.disabled_max_effort
    return limit is not None and effort in EFFORTS and EFFORTS.index(effort) > EFFORTS.index(limit)


def prompt_tokens(body: Mapping[str, Any]) -> int:
    return sum(s.tokens for s in segments(body))


def _bad(message: str) -> InvalidRequest:
    from tests.fakes.messages_rules import InvalidRequest

    return InvalidRequest(message)


def _thinking(body: Mapping[str, Any], spec: ModelSpec, effort: str | None) -> None:
    config = body.get("thinking")
    if config is None:
        return
    kind = config.get("type") if isinstance(config, Mapping) else None
    if kind not in THINKING_TAGS:
        raise _bad(f"thinking: Input tag '{kind}' found using 'type' does not match any of the expected tags: "
                   "'adaptive', 'between_tools', 'disabled', 'enabled'")  # fmt: skip
    assert isinstance(config, Mapping)
    for key in config:  # the SDK's ThinkingConfig*Param: between_tools and disabled take ``type`` only
        if key not in THINKING_FIELDS[kind]:
            raise _bad(f"thinking.{kind}.{key}: Extra inputs are not permitted")
    if kind not in spec.thinking_types:
        if kind == "enabled":
            raise _bad('"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
                       '"output_config.effort" to control thinking behavior.')  # fmt: skip
        if kind == "disabled" and "between_tools" in spec.thinking_types:
            raise _bad('"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" '
                       "to turn off up-front thinking.")  # fmt: skip
        if kind == "disabled":
            raise _bad('"thinking.type.disabled" is not supported for this model: thinking is always on. Use '
                       '"output_config.effort" to control thinking behavior.')  # fmt: skip
        if kind == "adaptive":
            raise _bad('"thinking.type.adaptive" is not supported for this model. Use "thinking.type.enabled" with '
                       '"thinking.budget_tokens".')  # fmt: skip
        raise _bad(f'"thinking.type.{kind}" is not supported for this model.')
    if kind == "enabled":
        budget = config.get("budget_tokens")
        if not isinstance(budget, int):
            raise _bad("thinking.enabled.budget_tokens: Field required")
        if budget < 1024:
            raise _bad("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if budget >= int(body.get("max_tokens") or 0):
            raise _bad(
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
                "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
            )
    if kind == "disabled" and _above(effort or spec.default_effort or "", spec):
        effort = effort or spec.default_effort
        raise _bad(f'"thinking.type.disabled" is not supported with effort "{effort}". Use effort '
                   f'"{spec.disabled_max_effort}" or lower, or "thinking.type.adaptive".')  # fmt: skip
    if kind == "between_tools" and effort in ("xhigh", "max"):
        raise _bad(f'"thinking.type.between_tools" is not supported with effort "{effort}". Use '
                   '"thinking.type.adaptive" (or omit `thinking`) to run at xhigh or max effort.')  # fmt: skip
    display = config.get("display")
    if display is not None and display not in ("summarized", "omitted"):
        raise _bad(f"thinking.{kind}.display: Input should be 'summarized' or 'omitted'")


def _sampling(body: Mapping[str, Any], spec: ModelSpec) -> None:
    """``temperature`` / ``top_p`` / ``top_k`` as the model's rule ``spec.sampling`` allows them."""
    sent = {name: body[name] for name in SAMPLING if body.get(name) is not None}
    if spec.sampling == "default":  # "non-default temperature, top_p, and top_k are not supported"
        for name, value in sent.items():
            if not (name != "top_k" and value == 1):
                raise _bad(f"{name} is deprecated for this model")
    elif spec.sampling == "haiku_5_5":
        if "top_k" in sent:
            raise _bad("top_k is deprecated for this model")
        if "temperature" in sent and "top_p" in sent:
            raise _bad("`temperature` and `top_p` cannot both be specified for this model. Please use only one.")
        if "top_p" in sent and sent["top_p"] != HAIKU_5_5_TOP_P:
            raise _bad(f"top_p: only {HAIKU_5_5_TOP_P} is supported for this model")
        if "temperature" in sent and sent["temperature"] != 1:
            raise _bad("temperature is deprecated for this model")
    elif spec.sampling == "one_of" and "temperature" in sent and "top_p" in sent:
        raise _bad("`temperature` and `top_p` cannot both be specified for this model. Please use only one.")


def _thinks(body: Mapping[str, Any], spec: ModelSpec) -> bool:
    config = body.get("thinking")
    kind = config.get("type") if isinstance(config, Mapping) else None
    return kind in ("adaptive", "enabled") or (kind is None and spec.thinks_by_default)


def check_model(body: Mapping[str, Any], spec: ModelSpec, *, paused: frozenset[str] = frozenset()) -> None:
    """Raise InvalidRequest for what ``spec``'s model refuses. ``paused``: the server_tool_use ids of
    ``pause_turn`` replies, whose assistant content may be sent back as the last message."""
    model = spec.id
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens > spec.max_tokens:
        raise _bad(f"max_tokens: {max_tokens} > {spec.max_tokens}, which is the maximum allowed number of output "
                   f"tokens for {model}")  # fmt: skip
    config = body.get("output_config")
    effort = config.get("effort") if isinstance(config, Mapping) else None
    if effort is not None:
        if effort not in EFFORTS:
            raise _bad("output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'")
        if effort not in spec.efforts:
            if not spec.efforts:
                raise _bad("output_config.effort: This model does not support the effort parameter.")
            raise _bad(f"output_config.effort: effort '{effort}' is not supported for this model.")
    _thinking(body, spec, effort)
    choice = body.get("tool_choice")
    forced = isinstance(choice, Mapping) and choice.get("type") in ("any", "tool")
    if forced and not spec.forced_tools:
        assert isinstance(choice, Mapping)
        raise _bad(f'"tool_choice.type.{choice.get("type")}" is not supported for this model. Use '
                   '"tool_choice.type.auto" and ask for the tool in the prompt.')  # fmt: skip
    thinking = body.get("thinking")
    if forced and isinstance(thinking, Mapping) and thinking.get("type") == "enabled":
        raise _bad("Thinking may not be enabled when tool_choice forces tool use.")
    _sampling(body, spec)
    if _thinks(body, spec) and "temperature" in body and body["temperature"] != 1:
        raise _bad("temperature may only be set to 1 when thinking is enabled.")
    messages = body.get("messages")
    if isinstance(messages, list) and messages and not spec.prefill:
        last = messages[-1]
        if isinstance(last, Mapping) and last.get("role") == "assistant":
            content = last.get("content")
            # a paused server-tool turn sent back (it may end with the server_tool_use, or with its result)
            resumed = isinstance(content, list) and any(
                isinstance(b, Mapping) and b.get("type") == "server_tool_use" and b.get("id") in paused for b in content
            )
            if not resumed:
                raise _bad("This model does not support assistant message prefill. The conversation must end with a "
                           "user message.")  # fmt: skip
    tokens = prompt_tokens(body)
    if tokens > spec.max_input_tokens:
        raise _bad(f"prompt is too long: {tokens} tokens > {spec.max_input_tokens} maximum")
