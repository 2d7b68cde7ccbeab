"""The network checks of ``python -m bot doctor`` (skipped with ``--offline``).

- telegram: ``getMe`` with the token on TELEGRAM_BASE_URL;
- anthropic: the smallest real Messages call (``max_tokens`` 1) with the configured model on
  ANTHROPIC_BASE_URL (and the summary model, when it is another one).

Error texts of the HTTP libraries are never shown (they may carry the URL, which holds the
token): each failure is described by its status code or exception type and what to do.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx

from bot.claude.api import APIError, call, root_url
from bot.config import DEFAULT_MODEL, DEFAULT_TELEGRAM_BASE_URL
from bot.doctor.base import Context, Result, check, note, ok, problem, skip

PING = [{"role": "user", "content": "ping"}]


def _host(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else "?"


@check("telegram", network=True)
def telegram_check(ctx: Context) -> Iterator[Result]:
    token = ctx.env.get("TELEGRAM_BOT_TOKEN", "").strip()
    if ctx.terminal:
        yield skip("telegram", "skipped (--terminal: the terminal chat does not use Telegram)")
        return
    if not token:
        yield problem("telegram", "not checked: TELEGRAM_BOT_TOKEN is not set")
        return
    base = ctx.settings.telegram_base_url if ctx.settings else DEFAULT_TELEGRAM_BASE_URL
    host = _host(base)
    try:
        r = httpx.get(f"{base}{token}/getMe", timeout=ctx.timeout)
    except httpx.TimeoutException:
        yield problem("telegram", f"{host} did not answer within {ctx.timeout:g} s: check the network or a proxy")
        return
    except httpx.HTTPError as e:
        yield problem(
            "telegram",
            f"cannot reach {host} ({type(e).__name__}): check the network, DNS, a proxy, or TELEGRAM_BASE_URL",
        )
        return
    if r.status_code in (401, 404):
        yield problem(
            "telegram",
            f"Telegram refused the token ({r.status_code} {'Unauthorized' if r.status_code == 401 else 'Not Found'}):"
            " check TELEGRAM_BOT_TOKEN (@BotFather → /mybots → API Token; a revoked token must be replaced)",
        )
        return
    try:
        body = r.json()
    except ValueError:
        body = None
    if r.status_code != 200 or not isinstance(body, dict) or not body.get("ok"):
        yield problem("telegram", f"{host} answered getMe with HTTP {r.status_code}: check TELEGRAM_BASE_URL")
        return
    me = body.get("result") or {}
    yield ok("telegram", f"getMe answered: @{me.get('username', '?')} (id {me.get('id', '?')}) on {host}")
    if ctx.settings is not None and ctx.settings.webhook_url:
        yield _webhook_info(ctx, f"{base}{token}", ctx.settings.webhook_url)


def _webhook_info(ctx: Context, api: str, wanted: str) -> Result:
    """What Telegram knows of the webhook: its URL and the last delivery error, if any."""
    try:
        info = httpx.get(f"{api}/getWebhookInfo", timeout=ctx.timeout).json().get("result") or {}
    except (httpx.HTTPError, ValueError, AttributeError):
        return note("telegram", "getWebhookInfo did not answer: the webhook was not checked")
    url = str(info.get("url") or "")
    if url != wanted:
        shown = url or "none (long polling)"
        return note("telegram", f"Telegram's webhook is {shown}; the bot sets WEBHOOK_URL at its next start")
    error = info.get("last_error_message")
    if error:
        return problem(
            "telegram",
            f"Telegram could not deliver to the webhook: {str(error)[:200]} "
            f"({info.get('pending_update_count', 0)} updates waiting): check the reverse proxy, HTTPS and "
            "WEBHOOK_PORT",
        )
    return ok("telegram", f"webhook {url} is set; {info.get('pending_update_count', 0)} updates waiting")


def _anthropic_check(ctx: Context, key: str, model: str, label: str) -> Result:
    # the same endpoint the bot uses (ANTHROPIC_BASE_URL; here from the checked environment)
    base_url = root_url(ctx.env.get("ANTHROPIC_BASE_URL", ""))
    host = _host(base_url)
    try:
        body = {"model": model, "max_tokens": 1, "messages": PING}
        reply = call("POST", "/v1/messages", api_key=key, base_url=base_url, timeout=ctx.timeout, body=body)
    except APIError as e:
        status = e.status_code
        if e.timeout:
            return problem("anthropic", f"{host} did not answer within {ctx.timeout:g} s: check the network")
        if status == 0:
            return problem("anthropic", f"cannot reach {host}: check the network, DNS, a proxy, or ANTHROPIC_BASE_URL")
        if status == 401:
            return problem(
                "anthropic",
                "the API key was refused (401 Unauthorized): check ANTHROPIC_API_KEY (console.anthropic.com → API "
                "keys)",
            )
        if status == 403:
            return problem("anthropic", f"the API key may not use {label} {model} (403): check the key's workspace")
        if status == 404:
            setting = "SUMMARY_MODEL" if label == "summary model" else "ANTHROPIC_MODEL"
            return problem("anthropic", f"{label} {model!r} was not found (404): check {setting}")
        if status == 429:
            return note("anthropic", f"{label} {model}: the key works, but is rate limited right now (429)")
        if status == 400:
            return problem("anthropic", f"{label} {model}: the request was refused (400): {_api_message(e)}")
        return note("anthropic", f"{host} answered {status} (overloaded or a server error): try again later")
    used = str(reply.get("model") or model)
    return ok("anthropic", f"{label} {used} answered on {host}")


def failure(e: APIError) -> str:
    """A failed call in the words every online check uses: "timed out", "HTTP 503" or "no connection"."""
    return "timed out" if e.timeout else (f"HTTP {e.status_code}" if e.status_code else "no connection")


def _api_message(e: APIError) -> str:
    message = e.error.get("message")
    return message[:200] if isinstance(message, str) else f"HTTP {e.status_code}"


@check("anthropic", network=True)
def anthropic_check(ctx: Context) -> Iterator[Result]:
    key = ctx.env.get("ANTHROPIC_API_KEY", "").strip()
    if not key:
        yield problem("anthropic", "not checked: ANTHROPIC_API_KEY is not set")
        return
    model = ctx.settings.anthropic_model if ctx.settings else DEFAULT_MODEL
    if ctx.settings is not None:
        from bot.claude.modelinfo import ModelCatalog

        model = ModelCatalog(ctx.settings.data_dir).selected_for(model) or model  # the owner's /model choice
    yield _anthropic_check(ctx, key, model, "model")
    summary_model = ctx.settings.summary_model if ctx.settings else ""
    if summary_model and summary_model != model:
        yield _anthropic_check(ctx, key, summary_model, "summary model")
