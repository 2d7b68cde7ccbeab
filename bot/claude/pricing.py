"""Model prices and the estimated cost of token usage.

Prices are USD per million tokens for four kinds of tokens: input (uncached), output, cache
write (5-minute cache: 1.25x input) and cache read (0.1x input). A model name is priced by the
longest table prefix it starts with (``claude-sonnet-4`` prices ``claude-sonnet-4-6`` and
``claude-sonnet-4-5-20250929``). ``MODEL_PRICES`` adds or replaces entries::

    MODEL_PRICES=claude-sonnet-4=3/15, my-proxy-model=0.5/1.5/0.6/0.05

``prefix=input/output`` (cache prices derived) or ``prefix=input/output/cache_write/cache_read``,
entries separated by commas or semicolons. A model no entry matches has no price: the cost is
reported as unknown, never guessed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

CACHE_WRITE_FACTOR = 1.25  # 5-minute cache writes
CACHE_READ_FACTOR = 0.1
PER = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    @classmethod
    def of(cls, input: float, output: float) -> Price:  # noqa: A002
        """A price with the standard cache multipliers (write 1.25x, read 0.1x input)."""
        return cls(input, output, round(input * CACHE_WRITE_FACTOR, 6), round(input * CACHE_READ_FACTOR, 6))

    def cost(self, input: int, output: int, cache_write: int = 0, cache_read: int = 0) -> float:  # noqa: A002
        """USD for these token counts."""
        return (
            input * self.input + output * self.output + cache_write * self.cache_write + cache_read * self.cache_read
        ) / PER


# Anthropic's list prices (platform.claude.com "Pricing", checked 2026-11). Long-context surcharges
# (prompts over 200K tokens) are not modelled: this bot's prompts are a few thousand tokens.
DEFAULT_PRICES: dict[str, Price] = {
    "claude-opus-5-5": Price(4.0, 20.0, 5.0, 0.2),
    "claude-opus-5": Price.of(5.0, 25.0),
    "claude-opus-4-8": Price.of(5.0, 25.0),
    "claude-opus-4-7": Price.of(5.0, 25.0),
    "claude-opus-4-6": Price.of(5.0, 25.0),
    "claude-opus-4-5": Price.of(5.0, 25.0),
    "claude-opus-4": Price.of(15.0, 75.0),  # Opus 4 and 4.1
    "claude-sonnet-5-5": Price(2.0, 10.0, 2.5, 0.1),
    "claude-sonnet-5": Price.of(2.0, 10.0),
    "claude-sonnet-4": Price.of(3.0, 15.0),  # Sonnet 4, 4.5, 4.6
    "claude-haiku-4-5": Price.of(1.0, 5.0),
    "claude-3-7-sonnet": Price.of(3.0, 15.0),
    "claude-3-5-sonnet": Price.of(3.0, 15.0),
    "claude-3-5-haiku": Price.of(0.8, 4.0),
    "claude-3-opus": Price.of(15.0, 75.0),
    "claude-3-haiku": Price(0.25, 1.25, 0.3, 0.03),
}

FORMAT = "prefix=input/output[/cache_write/cache_read] in USD per million tokens, separated by commas"


def parse_prices(raw: str) -> dict[str, Price]:
    """The entries of a MODEL_PRICES value; ValueError with a one-line reason when malformed."""
    prices: dict[str, Price] = {}
    for entry in raw.replace(";", ",").split(","):
        entry = entry.strip()
        if not entry:
            continue
        prefix, sep, numbers = entry.partition("=")
        prefix = prefix.strip()
        if not sep or not prefix or any(c.isspace() for c in prefix):
            raise ValueError(f"MODEL_PRICES entry {entry!r} must look like {FORMAT}")
        parts = [p.strip() for p in numbers.split("/")]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise ValueError(f"MODEL_PRICES entry {entry!r}: prices must be numbers ({FORMAT})") from None
        if len(values) not in (2, 4):
            raise ValueError(f"MODEL_PRICES entry {entry!r} needs 2 or 4 prices ({FORMAT})")
        if any(not math.isfinite(v) or v < 0 for v in values):
            raise ValueError(f"MODEL_PRICES entry {entry!r}: prices must be finite and not negative")
        prices[prefix] = Price.of(*values) if len(values) == 2 else Price(*values)
    return prices


class PriceTable:
    """The default prices with overrides; ``price(model)`` by longest prefix."""

    def __init__(self, overrides: Mapping[str, Price] | Iterable[tuple[str, Price]] = ()) -> None:
        self.prices = {**DEFAULT_PRICES, **dict(overrides)}
        self._order = sorted(self.prices, key=len, reverse=True)

    def price(self, model: str) -> Price | None:
        """The price of ``model``, or None when no entry matches (unknown: never guessed)."""
        return next((self.prices[p] for p in self._order if model.startswith(p)), None)

    def cost(self, model: str, input: int, output: int, cache_write: int = 0, cache_read: int = 0) -> float | None:  # noqa: A002
        price = self.price(model)
        return None if price is None else price.cost(input, output, cache_write, cache_read)
