"""The model check of ``python -m bot doctor`` (online): what the Models API says about the model
the bot uses (its ``/model`` choice, else ANTHROPIC_MODEL), and whether the prompt's stable prefix
(tools, persona and facts: what every request starts with) is long enough to be cached.

The cache check is measured, not looked up: one request of the bot's own tools and system prompt
with a cache breakpoint and ``max_tokens`` 1. A model caches only prefixes from a minimum length
on (512 tokens on the 5.5 models, 1024 on Sonnet 4.x, 4096 on Haiku 4.5 and Opus 4.5-4.8), and
under it silently caches nothing: then the usage shows neither a cache write nor a cache read.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bot.claude.api import APIError, call
from bot.claude.modelinfo import ModelCatalog, ModelInfo
from bot.claude.pricing import PriceTable
from bot.config import DEFAULT_MODEL
from bot.doctor.base import Context, Result, check, note, ok, problem
from bot.doctor.net import failure


def _stable_prefix(ctx: Context) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The tools and system blocks every request of a new chat starts with (built as the bot does)."""
    from bot.core.prompt import build_system
    from bot.wiring import make_assistant

    assert ctx.settings is not None
    with tempfile.TemporaryDirectory() as tmp:  # the real DATA_DIR is never written by the doctor
        assistant = make_assistant(replace(ctx.settings, data_dir=Path(tmp)))
        tools = assistant.toolbox.schemas()
        if assistant.recall is not None:
            assistant.recall.close()
    system = build_system(datetime.now(UTC), ctx.settings.timezone, time=False)
    return tools, system


@check("price")
def price_check(ctx: Context) -> Iterator[Result]:
    """Whether the models in use (the chat's, the summarizer's) have a price: without one every cost reads
    "price unknown" (bot/claude/pricing.py never guesses). Offline: the table and MODEL_PRICES only."""
    s = ctx.settings
    if s is None:
        return
    configured = s.anthropic_model or DEFAULT_MODEL
    chat = ModelCatalog(s.data_dir).selected_for(configured) or configured
    table = PriceTable(s.model_prices)
    for model in dict.fromkeys([chat, s.summary_model or chat]):
        price = table.price(model)
        if price is not None:
            yield ok("price", f"{model}: ${price.input:g} input / ${price.output:g} output per million tokens")
            continue
        yield note(
            "price",
            f"{model} has no price: its costs show as unknown in /stats and /usage. Add it to MODEL_PRICES "
            f"({model}=input/output in USD per million tokens, from platform.claude.com/docs/en/about-claude/"
            "pricing), or update the bot",
        )


@check("model", network=True)
def model_check(ctx: Context) -> Iterator[Result]:
    key = ctx.env.get("ANTHROPIC_API_KEY", "").strip()
    if not key or ctx.settings is None:
        yield note("model", "not checked: the settings are incomplete")
        return
    configured = ctx.settings.anthropic_model or DEFAULT_MODEL
    name = ModelCatalog(ctx.settings.data_dir).selected_for(configured) or configured
    api = functools.partial(
        call, api_key=key, base_url=ctx.env.get("ANTHROPIC_BASE_URL", ""), timeout=ctx.timeout
    )  # the endpoint the bot uses, from the checked environment
    try:
        info = ModelInfo.from_api(api("GET", f"/v1/models/{quote(name, safe='')}"), datetime.now(UTC))
    except APIError as e:
        if e.status_code != 404:
            yield note("model", f"the Models API could not be read ({failure(e)})")
        info = ModelInfo.unknown(name)
    lines = info.describe()
    yield ok("model", f"{name}: " + "; ".join(lines)) if info.known else note("model", f"{name}: {lines[0]}")
    yield _cache_check(api, name, info, ctx)


def _cache_check(api: Callable[..., dict[str, Any]], name: str, info: ModelInfo, ctx: Context) -> Result:
    tools, system = _stable_prefix(ctx)
    shape = info.answer_shape(ctx.settings.effort if ctx.settings else "")
    body = {"model": name, "max_tokens": 1, "system": system, "tools": tools,
            "messages": [{"role": "user", "content": "ping"}], **shape}  # fmt: skip
    try:
        for _ in range(2):  # the first may write the cache, the second must read it
            usage = api("POST", "/v1/messages", body=body).get("usage") or {}
            cached = (usage.get("cache_read_input_tokens") or 0) + (usage.get("cache_creation_input_tokens") or 0)
            if usage.get("cache_read_input_tokens"):
                break
    except APIError as e:
        return note("cache", f"not measured: {failure(e)}")
    total = (usage.get("input_tokens") or 0) + cached
    if cached:
        return ok("cache", f"the stable prefix ({cached:,} of {total:,} input tokens) is cached by {name}")
    return problem(
        "cache",
        f"{name} cached nothing of the stable prefix ({total:,} tokens): it is under the model's minimum "
        "cacheable length, so every request pays for it in full",
    )
