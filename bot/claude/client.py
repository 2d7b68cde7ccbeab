"""The Claude client: streams a Messages API reply and maps failures to ModelError.

The Anthropic SDK takes over a second to import, so it is imported when the client is
first needed (the first question), not at start: the terminal shows its prompt and the bot
polls Telegram at once. ``prewarm()`` imports it in a background thread meanwhile.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bot.claude.model import ModelError, Reply, TextCallback, Usage

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

log = logging.getLogger(__name__)


_sdk_loaded = threading.Event()


def import_sdk() -> None:
    """Import the Anthropic SDK and its HTTP library (slow: run it in a thread)."""
    importlib.import_module("anthropic")
    importlib.import_module("httpx2")
    _sdk_loaded.set()


def prewarm() -> threading.Thread:
    """Import the Anthropic SDK in a daemon thread, so the first question does not wait for it."""
    thread = threading.Thread(target=import_sdk, name="import-anthropic", daemon=True)
    thread.start()
    return thread


async def load_sdk() -> None:
    """Make sure the SDK is imported without blocking the event loop.

    An ``import anthropic`` on the loop while the prewarm thread is still importing it would wait
    for the import lock and stall every chat; this waits in a worker thread instead (the import
    system lets it finish the import the prewarm thread started, or do it itself).
    """
    if not _sdk_loaded.is_set():
        await asyncio.to_thread(import_sdk)


class ClaudeModel:
    """Talks to the Anthropic Messages API (or any compatible endpoint)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        client: AsyncAnthropic | None = None,
        share: ClaudeModel | None = None,
        max_tokens: int = 4096,
        max_retries: int = 2,
        timeout: float = 120.0,
    ) -> None:
        self.name = model
        self.max_tokens = max_tokens
        self._client = client
        self._share = share  # use that model's HTTP client (one connection pool, closed once)
        self._options: dict[str, Any] = {"api_key": api_key, "max_retries": max_retries, "timeout": timeout}

    @property
    def client(self) -> AsyncAnthropic:
        """The SDK client, made (and the SDK imported) on first use."""
        if self._share is not None:
            return self._share.client
        if self._client is None:
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic(**self._options)
        return self._client

    @client.setter
    def client(self, value: AsyncAnthropic) -> None:
        self._client, self._share = value, None

    async def aclose(self) -> None:
        """Close the HTTP client if one was made (a shared one is closed by its owner)."""
        if self._share is None and self._client is not None:
            await self._client.close()

    async def complete(
        self,
        *,
        system: Sequence[dict[str, Any]],
        messages: Sequence[dict[str, Any]],
        max_tokens: int | None = None,
        on_text: TextCallback | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
    ) -> Reply:
        await load_sdk()
        import anthropic
        import httpx2

        extra: dict[str, Any] = {}
        if tools:
            extra["tools"] = list(tools)
        if tool_choice:
            extra["tool_choice"] = dict(tool_choice)
        try:
            async with self.client.messages.stream(
                model=self.name,
                max_tokens=max_tokens or self.max_tokens,
                system=list(system),  # type: ignore[arg-type]
                messages=list(messages),  # type: ignore[arg-type]
                **extra,
            ) as stream:
                async for text in stream.text_stream:
                    if on_text is not None and text:
                        await on_text(text)
                final = await stream.get_final_message()
        except anthropic.RateLimitError as e:
            raise ModelError("rate_limit", str(e)) from e
        except anthropic.AuthenticationError as e:
            raise ModelError("auth", str(e)) from e
        except anthropic.PermissionDeniedError as e:
            raise ModelError("auth", str(e)) from e
        except anthropic.BadRequestError as e:
            raise ModelError("bad_request", str(e)) from e
        except anthropic.APITimeoutError as e:
            raise ModelError("timeout", str(e)) from e
        except anthropic.APIConnectionError as e:
            raise ModelError("connection", str(e)) from e
        except anthropic.APIStatusError as e:
            kind = "overloaded" if e.status_code == 529 else "server"
            raise ModelError(kind, f"HTTP {e.status_code}: {e}") from e
        except anthropic.APIError as e:  # e.g. an error event inside the stream
            text = str(e).lower()
            raise ModelError("overloaded" if "overload" in text else "server", str(e)) from e
        except anthropic.AnthropicError as e:
            raise ModelError("server", str(e)) from e
        except httpx2.TimeoutException as e:
            raise ModelError("timeout", str(e) or type(e).__name__) from e
        except httpx2.HTTPError as e:
            raise ModelError("connection", str(e) or type(e).__name__) from e
        blocks = [_block(b) for b in final.content]
        blocks = [b for b in blocks if b is not None]
        text = "".join(b["text"] for b in blocks if b["type"] == "text").strip()
        calls = [b for b in blocks if b["type"] == "tool_use"]
        if not text and not calls:
            raise ModelError("empty", f"stop_reason={final.stop_reason}")
        u = final.usage
        usage = Usage(
            input_tokens=u.input_tokens or 0,
            output_tokens=u.output_tokens or 0,
            cache_read_tokens=getattr(u, "cache_read_input_tokens", None) or 0,
            cache_write_tokens=getattr(u, "cache_creation_input_tokens", None) or 0,
        )
        return Reply(text, usage, final.model, final.stop_reason, tuple(blocks))


def _block(block: Any) -> dict[str, Any] | None:
    """A response content block as a plain dict to store and send back (text and tool_use only)."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return {"type": "text", "text": str(block.text)}
    if kind == "tool_use":
        value = block.input if isinstance(block.input, dict) else {}
        return {"type": "tool_use", "id": str(block.id), "name": str(block.name), "input": value}
    return None
