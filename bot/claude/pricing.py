"""Model prices and the estimated cost of token usage.

Prices are USD per million tokens for four kinds of tokens: input (uncached), output, cache
write (5-minute cache) and cache read. The built-in table (``DEFAULT_PRICES``) names each model
version the pricing page lists; an entry prices that id and its dated or aliased forms
(``claude-sonnet-4-5`` prices ``claude-sonnet-4-5-20250929``), never a later version:
``claude-fable-5`` does not price ``claude-fable-5-3``, whose price nobody here knows.
``MODEL_PRICES`` adds or replaces entries, and its entries are plain prefixes (they win over the
table)::

    MODEL_PRICES=claude-sonnet-4=3/15, my-proxy-model=0.5/1.5/0.6/0.05

``prefix=input/output`` (cache prices derived: write 1.25x, read 0.1x input) or
``prefix=input/output/cache_write/cache_read``, entries separated by commas or semicolons. A model
no entry matches has no price: the cost is reported as unknown, never guessed (``./bot.sh doctor``
says so for the models in use).
"""

from __future__ import annotations

import math
import re
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


# Anthropic's list prices: platform.claude.com "Pricing" (Model pricing table, read December 2026) and
# each model's overview page. Long-context surcharges (Haiku 5.5 prompts over 100K tokens cost 5x; the
# 200K-context 4.x models' prompts over 200K tokens) are not modelled: this bot's prompts are a few thousand
# tokens. Fable 5.2 / Mythos 5.2 (released 2026-11-09) are not on the pricing page in the search corpus:
# their prices ($8 / $40, 5-minute write $10, cache read $0.20) are the ones third-party pages that resell at
# list price quote (docs.laozhang.ai and docs.apiyi.com launch notes, the "rightsize" release notes).
DEFAULT_PRICES: dict[str, Price] = {
    "claude-fable-5-2": Price(8.0, 40.0, 10.0, 0.2),  # third-party pages (see above)
    "claude-mythos-5-2": Price(8.0, 40.0, 10.0, 0.2),  # Mythos shares its Fable's prices (third-party, above)
    "claude-fable-5-1": Price(10.0, 50.0, 12.5, 0.25),
    "claude-mythos-5-1": Price(10.0, 50.0, 12.5, 0.25),
    "claude-fable-5": Price(10.0, 50.0, 12.5, 1.0),
    "claude-mythos-5": Price(10.0, 50.0, 12.5, 1.0),
    "claude-opus-5-5": Price(4.0, 20.0, 5.0, 0.2),
    "claude-opus-5": Price.of(5.0, 25.0),
    "claude-opus-4-8": Price.of(5.0, 25.0),
    "claude-opus-4-7": Price.of(5.0, 25.0),
    "claude-opus-4-6": Price.of(5.0, 25.0),
    "claude-opus-4-5": Price.of(5.0, 25.0),
    "claude-opus-4-1": Price.of(15.0, 75.0),
    "claude-opus-4": Price.of(15.0, 75.0),
    "claude-sonnet-5-5": Price(2.0, 10.0, 2.5, 0.1),
    "claude-sonnet-5": Price.of(2.0, 10.0),
    "claude-sonnet-4-6": Price.of(3.0, 15.0),
    "claude-sonnet-4-5": Price.of(3.0, 15.0),
    "claude-sonnet-4": Price.of(3.0, 15.0),
    "claude-haiku-5-5": Price(0.1, 0.5, 0.125, 0.01),  # prompts up to 100K tokens (longer ones cost 5x)
    "claude-haiku-4-5": Price.of(1.0, 5.0),
    "claude-3-7-sonnet": Price.of(3.0, 15.0),
    "claude-3-5-sonnet": Price.of(3.0, 15.0),
    "claude-3-5-haiku": Price.of(0.8, 4.0),
    "claude-3-opus": Price.of(15.0, 75.0),
    "claude-3-haiku": Price(0.25, 1.25, 0.3, 0.03),
}

_LATER_VERSION = re.compile(r"-\d{1,2}(?:-|$)")
"""What follows a built-in id in a later version's id (``-3`` in ``claude-fable-5-3``), not in a dated or
aliased form of the same model (``-20250929``, ``-latest``)."""


def _same_model(entry: str, model: str) -> bool:
    """Whether the built-in entry ``entry`` names ``model``: the same id, or it with a date or alias after it."""
    if not model.startswith(entry):
        return False
    rest = model[len(entry) :]
    return rest == "" or (rest.startswith("-") and _LATER_VERSION.match(rest) is None)


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

    def __init__(
        self, overrides: Mapping[str, Price] | Iterable[tuple[str, Price]] = (), *, search_price: float = 10.0
    ) -> None:
        self.overrides = dict(overrides)
        self.prices = {**DEFAULT_PRICES, **self.overrides}
        self.search_price = search_price  # USD per 1,000 web searches (WEB_SEARCH_PRICE)
        self._overrides = sorted(self.overrides, key=len, reverse=True)
        self._defaults = sorted(DEFAULT_PRICES, key=len, reverse=True)

    def price(self, model: str) -> Price | None:
        """The price of ``model``: the longest MODEL_PRICES prefix it starts with, else the built-in entry
        for its version; None when neither knows it (unknown: never guessed)."""
        override = next((self.overrides[p] for p in self._overrides if model.startswith(p)), None)
        if override is not None:
            return override
        return next((DEFAULT_PRICES[p] for p in self._defaults if _same_model(p, model)), None)

    def search_cost(self, searches: int) -> float:
        """USD for ``searches`` web searches."""
        return searches * self.search_price / 1000

    def cost(self, model: str, input: int, output: int, cache_write: int = 0, cache_read: int = 0) -> float | None:  # noqa: A002
        price = self.price(model)
        return None if price is None else price.cost(input, output, cache_write, cache_read)
