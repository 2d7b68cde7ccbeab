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


_ON_OFF = {"true": "on", "1": "on", "yes": "on", "false": "off", "0": "off", "no": "off"}


def env_choice(
    env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...], error: type[Exception]
) -> str:
    """One of ``choices`` for ``env[name]`` (``default`` when unset or blank; any case; true/1/yes
    read as on, false/0/no as off); else ``error``."""
    given = env.get(name, "").strip()
    raw = given.lower() or default
    raw = _ON_OFF.get(raw, raw)
    if raw not in choices:
        allowed = " or ".join(choices) if len(choices) == 2 else "one of " + ", ".join(choices)
        raise error(f"{name} must be {allowed}, got {given!r}")
    return raw
