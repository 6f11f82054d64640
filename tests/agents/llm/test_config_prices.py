"""LLM_PRICES: a per-model price table; models not in it (local ones) cost nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents.llm.config import ConfigError, load_llm_settings


def test_prices_are_read_per_model_and_unknown_models_are_free() -> None:
    settings = load_llm_settings({"LLM_PRICES": "gpt-4o-mini=0.00015/0.0006, gpt-4o=0.0025/0.01"})
    assert settings.price_for("gpt-4o").cost(1000, 500) == Decimal("0.0075")
    assert settings.price_for("gpt-4o-mini").cost(2000, 1000) == Decimal("0.0009")
    assert settings.price_for("local").cost(10_000, 10_000) == 0


def test_no_price_table_means_everything_is_free() -> None:
    assert load_llm_settings({}).prices == {}


@pytest.mark.parametrize("raw", ["gpt-4o", "gpt-4o=1", "=1/2", "gpt-4o=1/x", "gpt-4o=-1/2", "gpt-4o=NaN/1"])
def test_a_malformed_price_is_a_config_error(raw: str) -> None:
    with pytest.raises(ConfigError, match="LLM_PRICES entries look like model=IN/OUT"):
        load_llm_settings({"LLM_PRICES": raw})
