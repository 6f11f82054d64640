"""Polymarket Gamma captures (July 2024) read into typed markets and prediction-market documents."""

from __future__ import annotations

import json
import shutil
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from agents.data.companies import COMPANY_NAMES
from agents.data.documents import tickers_mentioned
from agents.data.errors import MalformedData
from agents.data.markets import (
    MarketOutcome,
    PredictionMarket,
    SnapshotMarketSource,
    market_document,
    parse_gamma_markets,
)
from tests.agents.data import SHARED_DATA, SNAPSHOT, shared_file

TEN = "polymarket_gamma_ten_markets_2024-07.json"
TWENTY = "polymarket_gamma_twenty_markets_2024-07.json"


def gamma_markets(name: str = TWENTY) -> list[dict[str, Any]]:
    markets: list[dict[str, Any]] = json.loads(shared_file(f"prediction_markets/{name}").read_text())
    return markets


def copy_markets(tmp_path: Path) -> Path:
    """A writable copy of the bundled captures; returns the root that holds ``prediction_markets/``."""
    shutil.copytree(SNAPSHOT / "prediction_markets", tmp_path / "prediction_markets")
    for path in (tmp_path / "prediction_markets").iterdir():
        path.chmod(0o644)
    return tmp_path


def nvidia(markets: list[PredictionMarket]) -> PredictionMarket:
    return next(market for market in markets if market.market_id == "503051")


@pytest.mark.parametrize("root", [SHARED_DATA, SNAPSHOT], ids=["shared-data", "product-snapshot"])
def test_the_first_market_is_nvidia_largest_company_in_july(root: Path) -> None:
    markets = SnapshotMarketSource(root).markets()
    first = markets[0]
    assert first.question == "NVIDIA largest company in July?"
    assert first.market_id == "503051"
    assert first.slug == "nvidia-largest-company-in-july"
    assert first.url == "https://polymarket.com/event/nvidia-largest-company-in-july"
    assert first.outcomes == (
        MarketOutcome(name="Yes", price=Decimal("0.12")),
        MarketOutcome(name="No", price=Decimal("0.88")),
    )
    assert first.end_date == date(2024, 7, 31)
    assert first.updated == date(2024, 7, 15)
    assert (first.active, first.closed) == (True, False)
    assert len(first.clob_token_ids) == 2
    assert first.clob_token_ids[0].startswith("4177362880735560461125986956223827110105844711288634")


def test_amounts_keep_the_full_precision_of_the_string_fields() -> None:
    first = SnapshotMarketSource(SHARED_DATA).markets()[0]
    assert first.liquidity == Decimal("3172.7863")  # "liquidity"; "liquidityNum" rounds it to 3172.79
    assert first.volume == Decimal("12505.366824")  # "volume"; "volumeNum" is 12505.37


def test_the_rounded_number_is_the_fallback_when_the_string_is_missing() -> None:
    raw = gamma_markets()[:1]
    del raw[0]["liquidity"], raw[0]["volume"]
    [market] = parse_gamma_markets(raw, where="capture")
    assert (market.liquidity, market.volume) == (Decimal("3172.79"), Decimal("12505.37"))


def test_every_market_s_outcome_prices_sum_to_one() -> None:
    markets = SnapshotMarketSource(SHARED_DATA).markets()
    assert len(markets) == 20
    for market in markets:
        assert [outcome.name for outcome in market.outcomes] == ["Yes", "No"]
        assert sum(outcome.price for outcome in market.outcomes) == 1, market.question


def test_a_market_in_both_captures_counts_once() -> None:
    ten = {market["id"] for market in gamma_markets(TEN)}
    twenty = {market["id"] for market in gamma_markets(TWENTY)}
    assert ten < twenty
    markets = SnapshotMarketSource(SHARED_DATA).markets()
    assert sorted(market.market_id for market in markets) == sorted(twenty)


def test_a_market_inside_a_larger_event_links_to_its_place_in_the_event() -> None:
    squad = next(m for m in SnapshotMarketSource(SHARED_DATA).markets() if m.market_id == "500665")
    assert squad.url == (
        "https://polymarket.com/event/how-many-members-of-the-squad-will-lose-their-primaries/"
        "will-one-member-of-the-squad-lose-their-primary"
    )


def test_search_finds_a_keyword_as_a_whole_word_in_any_case() -> None:
    source = SnapshotMarketSource(SHARED_DATA)
    assert [market.question for market in source.search("NVIDIA")] == ["NVIDIA largest company in July?"]
    assert source.search("nvidia") == source.search("NVIDIA")
    assert [market.question for market in source.search("Solana")] == ["Solana above $140 on July 19?"]
    assert len(source.search("Senate")) == 2
    assert source.search("AI") == []  # not "airdrop"
    with pytest.raises(ValueError, match="needs a keyword"):
        source.search("  ")


def test_of_the_bundled_markets_only_nvidia_s_names_a_demo_company() -> None:
    linked = {
        market.market_id: tickers_mentioned(market.question, COMPANY_NAMES)
        for market in SnapshotMarketSource(SNAPSHOT).markets()
    }
    assert {market_id: tickers for market_id, tickers in linked.items() if tickers} == {"503051": ("NVDA",)}


def test_a_market_becomes_a_prediction_market_document() -> None:
    market = nvidia(SnapshotMarketSource(SHARED_DATA).markets())
    doc = market_document(market, tickers=("NVDA",))
    assert doc.kind == "prediction-market"
    assert doc.title == "NVIDIA largest company in July?"
    assert doc.text == (
        "NVIDIA largest company in July?\nMarket probabilities: Yes 12%, No 88%.\nMarket closes 2024-07-31."
    )
    assert doc.url == "https://polymarket.com/event/nvidia-largest-company-in-july"
    assert doc.published == date(2024, 7, 15)
    assert doc.source == "Polymarket"
    assert doc.tickers == ("NVDA",)


def test_small_probabilities_are_written_without_rounding() -> None:
    balance = next(m for m in SnapshotMarketSource(SHARED_DATA).markets() if m.market_id == "500640")
    assert "Market probabilities: Yes 0.75%, No 99.25%." in market_document(balance).text


def test_market_document_ids_are_stable_across_loads_and_unique() -> None:
    first = [market_document(m).doc_id for m in SnapshotMarketSource(SHARED_DATA).markets()]
    second = [market_document(m).doc_id for m in SnapshotMarketSource(SNAPSHOT).markets()]
    assert first == second
    assert len(set(first)) == 20
    assert first[0] == "market:c0718857bae79350"


def test_hidden_characters_injected_into_a_question_are_stripped(tmp_path: Path) -> None:
    root = copy_markets(tmp_path)
    for path in (root / "prediction_markets").glob("*.json"):
        raw = json.loads(path.read_text())
        raw[0]["question"] = "NVIDIA\u200b largest\x1b company\ufeff in\u202e July?"
        path.write_text(json.dumps(raw))
    source = SnapshotMarketSource(root)
    assert source.markets()[0].question == "NVIDIA largest company in July?"
    assert [market.market_id for market in source.search("NVIDIA")] == ["503051"]


def test_prices_that_are_not_json_inside_the_json_are_malformed_data_naming_file_and_field(
    tmp_path: Path,
) -> None:
    root = copy_markets(tmp_path)
    path = root / "prediction_markets" / TWENTY
    raw = json.loads(path.read_text())
    raw[4]["outcomePrices"] = '["0.545", "0.455"'
    path.write_text(json.dumps(raw))
    with pytest.raises(
        MalformedData, match=rf"{TWENTY} is not a list of Polymarket markets: 4\.outcomePrices: Invalid JSON"
    ):
        SnapshotMarketSource(root).markets()


def test_outcomes_without_a_price_each_are_malformed_data() -> None:
    raw = gamma_markets()[:1]
    raw[0]["outcomePrices"] = '["0.12"]'
    with pytest.raises(MalformedData, match=r"^capture: market 503051 has 2 outcomes but 1 prices$"):
        parse_gamma_markets(raw, where="capture")


def test_a_capture_that_is_not_json_is_malformed_data_naming_it(tmp_path: Path) -> None:
    root = copy_markets(tmp_path)
    (root / "prediction_markets" / TEN).write_text("[{'id': '503051'}]")  # a Python repr, not JSON
    with pytest.raises(MalformedData, match=rf"{TEN} is not valid JSON"):
        SnapshotMarketSource(root).markets()


def test_a_missing_capture_directory_is_malformed_data(tmp_path: Path) -> None:
    with pytest.raises(MalformedData, match=r"prediction_markets holds no prediction-market JSON files"):
        SnapshotMarketSource(tmp_path).markets()
