"""A quant profile becomes one cited fact per computed figure, with a dated id and its derivation."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from agents.data.prices import load_price_csv
from agents.data.types import Citation
from agents.quant import UNITS, QuantProfile, compute_profile, quant_facts
from tests.agents.data import shared_file

CITATION = Citation(
    source="prices",
    url="https://finance.yahoo.com/quote/KO/history",
    label="daily bars, KO_2012-2017_stocknet.csv",
)


def _ko_profile(*, sector: bool) -> QuantProfile:
    series = load_price_csv(shared_file("prices/daily/KO_2012-2017_stocknet.csv"))
    spy = load_price_csv(shared_file("prices/daily/SPY_1999-2020_pandas-ta.csv"))
    xlp = load_price_csv(shared_file("prices/daily/XLP.csv")) if sector else None
    return compute_profile(series, benchmark=spy, sector=xlp, as_of=date(2017, 6, 30))


def test_each_computed_figure_becomes_a_fact_with_a_dated_id_and_its_derivation() -> None:
    profile = _ko_profile(sector=True)

    facts = {fact.metric: fact for fact in quant_facts(profile, ticker="ko", citation=CITATION)}

    assert set(facts) == set(UNITS)
    rsi = facts["rsi14"]
    assert rsi.fact_id == "KO:rsi14:2017-06-30" and rsi.ticker == "KO"
    assert rsi.fiscal_period == "DAY" and rsi.period_end == date(2017, 6, 30)
    assert rsi.value == Decimal(f"{profile.rsi14:.10g}") and rsi.unit == "index"
    assert rsi.citation == CITATION and rsi.derivation.startswith("Wilder RSI over 14 sessions")
    assert "against SPY" in facts["beta"].derivation and "against XLP" in facts["beta_sector"].derivation
    assert facts["atr_pct"].unit == "percent" and facts["return_1w"].unit == "pure"
    assert all(fact.unit == UNITS[metric] for metric, fact in facts.items())


def test_values_keep_ten_significant_digits() -> None:
    profile = _ko_profile(sector=False)
    for fact in quant_facts(profile, ticker="KO", citation=CITATION):
        computed = profile.metrics()[fact.metric]
        assert computed is not None
        assert abs(float(fact.value) - computed) <= abs(computed) * 1e-9
        assert len(fact.value.as_tuple().digits) <= 10


def test_figures_the_data_cannot_support_are_left_out_not_zeroed() -> None:
    profile = _ko_profile(sector=False)

    facts = quant_facts(profile, ticker="KO", citation=CITATION)

    assert {fact.metric for fact in facts} == set(UNITS) - {"beta_sector", "alpha_1w_sector"}
    short = compute_profile(
        load_price_csv(shared_file("prices/recent_2026/XLK.csv")),
        benchmark=load_price_csv(shared_file("prices/recent_2026/SPY.csv")),
    )
    metrics = {fact.metric for fact in quant_facts(short, ticker="XLK", citation=CITATION)}
    assert "sma200_distance_pct" not in metrics and "return_ytd" not in metrics and "rsi14" in metrics
