"""Reading one setting from the environment: the parsing both bot/config.py and bot/tools/web.py need.

Imports nothing of the application, so every layer may use it; each caller names its own error type.
"""

from __future__ import annotations

from collections.abc import Mapping


def env_int(env: Mapping[str, str], name: str, default: int, minimum: int, error: type[Exception]) -> int:
    """The whole number ``env[name]`` (``default`` when unset or blank), at least ``minimum``; else ``error``."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise error(f"{name} must be a whole number, got {raw!r}") from None
    if value < minimum:
        raise error(f"{name} must be at least {minimum}, got {value}")
    return value
