"""The web search check of ``python -m bot doctor`` (online; skipped with ``--offline``).

It sends the smallest Messages call (``max_tokens`` 1) with the web search tool declared as the
bot declares it: the API checks the declaration and whether the organization may use web
search before the model writes anything, so a refusal shows here and no search is run or billed.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.claude.api import APIError, call, root_url
from bot.config import DEFAULT_MODEL
from bot.doctor.base import Context, Result, check, note, ok, problem
from bot.doctor.net import PING, _api_message, _host, failure
from bot.tools.web import WebSearch, WebSettings, search_disabled_error, supports_web_search


@check("websearch", network=True)
def websearch_check(ctx: Context) -> Iterator[Result]:
    key = ctx.env.get("ANTHROPIC_API_KEY", "").strip()
    settings = ctx.settings.web if ctx.settings else WebSettings()
    model = ctx.settings.anthropic_model if ctx.settings else DEFAULT_MODEL
    if settings.mode == "off":
        yield note("websearch", "off (WEB_SEARCH=off): answers come from the model and memory only")
        return
    if not key:
        yield problem("websearch", "not checked: ANTHROPIC_API_KEY is not set")
        return
    if not supports_web_search(model):
        yield note("websearch", f"model {model} does not take the web search tool: answers without search")
        return
    yield _search_check(ctx, key, model, settings)


def _search_check(ctx: Context, key: str, model: str, settings: WebSettings) -> Result:
    base_url = root_url(ctx.env.get("ANTHROPIC_BASE_URL", ""))
    host = _host(base_url)
    tools = WebSearch(settings, ctx.settings.timezone if ctx.settings else "Asia/Seoul").tools()
    body = {"model": model, "max_tokens": 1, "messages": PING, "tools": tools}
    try:
        call("POST", "/v1/messages", api_key=key, base_url=base_url, timeout=ctx.timeout, body=body)
    except APIError as e:
        if e.status_code != 400:
            return note("websearch", f"not checked: {host}: {failure(e)} (see the anthropic line)")
        message = _api_message(e)
        if search_disabled_error(message):
            return problem(
                "websearch",
                "web search is not enabled for this organization: an admin can turn it on in the Claude Console "
                "(privacy settings); until then answers come without search",
            )
        return problem("websearch", f"the web search tool was refused (400): {message}")
    who = "the owner" if settings.mode == "owner" else "everyone"
    limit = f"{settings.daily_limit} a day per user" if settings.daily_limit else "no daily limit"
    return ok(
        "websearch",
        f"web search works for {who} with {model} (up to {settings.max_uses} per question, {limit}, "
        f"${settings.price_per_1000:g} per 1,000 searches)",
    )
