"""Model prices (bot/claude/pricing.py): each version its entry, overrides by prefix, cache prices, unknown models."""

import pytest

from bot.claude.pricing import DEFAULT_PRICES, Price, PriceTable, parse_prices


@pytest.mark.parametrize(
    ("model", "prefix"),
    [
        ("claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),  # a dated id: the same model
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-opus-4-1", "claude-opus-4-1"),
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),  # not Opus 4's $15: the longer prefix wins
        ("claude-opus-4-6", "claude-opus-4-6"),
        ("claude-haiku-4-5", "claude-haiku-4-5"),
        ("claude-sonnet-5-5", "claude-sonnet-5-5"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
    ],
)
def test_a_model_is_priced_by_its_own_entry(model, prefix):
    assert PriceTable().price(model) is DEFAULT_PRICES[prefix]


def test_opus_4_5_costs_a_third_of_opus_4():
    table = PriceTable()
    assert table.price("claude-opus-4-5").input == 5.0 and table.price("claude-opus-4-1").input == 15.0


def test_unknown_models_have_no_price():
    table = PriceTable()
    # a later version than any entry is not priced as an earlier one (Fable 5.3 is not Fable 5's price)
    for model in ("claude-haiku-4", "gpt-5", "claude-future-9", "", "claude-fable-5-3", "claude-opus-5-7",
                  "claude-sonnet-4-7", "claude-sonnet-5-6-20270101"):  # fmt: skip
        assert table.price(model) is None and table.cost(model, 1000, 1000) is None


def test_cache_prices_follow_the_input_price():
    sonnet = PriceTable().price("claude-sonnet-4-6")
    assert sonnet == Price(3.0, 15.0, 3.75, 0.3)


def test_cost_counts_every_kind_of_token():
    # Sonnet: 1000 input, 500 output, 2000 cache write, 10000 cache read
    assert PriceTable().cost("claude-sonnet-4-6", 1000, 500, 2000, 10000) == pytest.approx(0.021)
    assert PriceTable().cost("claude-sonnet-4-6", 0, 0, 0, 1_000_000) == pytest.approx(0.3)


def test_overrides_replace_and_add():
    table = PriceTable(parse_prices("claude-sonnet-4=6/30, my-proxy=0.5/1.5/0.6/0.05"))
    assert table.price("claude-sonnet-4-6") == Price(6.0, 30.0, 7.5, 0.6)
    assert table.price("my-proxy-large") == Price(0.5, 1.5, 0.6, 0.05)
    assert table.price("claude-opus-4-5") is DEFAULT_PRICES["claude-opus-4-5"]  # the rest stays
    # an override for one exact model beats the shorter family prefix
    table = PriceTable(parse_prices("claude-sonnet-4-6=1/2"))
    assert table.price("claude-sonnet-4-6").input == 1.0 and table.price("claude-sonnet-4-5").input == 3.0


@pytest.mark.parametrize("raw", ["sonnet", "=3/15", "a b=3/15", "x=3", "x=3/15/1", "x=three/15", "x=3/-1", "x=inf/1"])
def test_malformed_prices_are_refused(raw):
    with pytest.raises(ValueError, match="MODEL_PRICES entry"):
        parse_prices(raw)


def test_empty_entries_are_fine():
    assert parse_prices("") == {} and parse_prices(" , ;") == {}


def test_every_current_model_has_its_list_price():
    """The 5.5 generation and Fable 5.1 (pricing pages, December 2026); the default model first."""
    table = PriceTable()
    assert table.price("claude-sonnet-5-5") == Price(2.0, 10.0, 2.5, 0.1)  # cache reads $0.10, half of Sonnet 5's
    assert table.price("claude-opus-5-5") == Price(4.0, 20.0, 5.0, 0.2)
    assert table.price("claude-haiku-5-5") == Price(0.1, 0.5, 0.125, 0.01)
    assert table.price("claude-fable-5-1") == Price(10.0, 50.0, 12.5, 0.25)
    # issue 30 item 7: Fable / Mythos 5.2 (released November 2026) and Fable / Mythos 5, which the old family
    # entries missed ("claude-fable-5-1" does not price "claude-fable-5")
    assert table.price("claude-fable-5-2") == table.price("claude-mythos-5-2") == Price(8.0, 40.0, 10.0, 0.2)
    assert table.price("claude-fable-5") == table.price("claude-mythos-5") == Price(10.0, 50.0, 12.5, 1.0)
    assert table.price("claude-opus-5") == table.price("claude-opus-4-8") == Price(5.0, 25.0, 6.25, 0.5)
    assert table.price("claude-sonnet-5") == Price(2.0, 10.0, 2.5, 0.2)


def test_every_model_the_fake_knows_has_a_price():
    """The fake's table (tests/fakes/models.py) follows the models pages: each model in it is priced."""
    from tests.fakes.models import MODELS

    assert [m.id for m in MODELS if PriceTable().price(m.id) is None] == []
