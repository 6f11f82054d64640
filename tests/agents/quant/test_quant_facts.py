from __future__ import annotations

from datetime import date
from decimal import Decimal

from agents.data.prices import load_price_csv
from agents.data.types import Citation
from agents.quant import UNITS, compute_profile, quant_facts
from tests.agents.data import shared_file

CITATION = Citation(source="prices", url="https://finance.yahoo.com/quote/KO/history", label="KO daily bars")


def test_each_computed_figure_becomes_a_fact_with_a_dated_id_and_its_derivation() -> None:
    series = load_price_csv(shared_file("prices/daily/KO_2012-2017_stocknet.csv"))
    spy = load_price_csv(shared_file("prices/daily/SPY_1999-2020_pandas-ta.csv"))
    profile = compute_profile(series, benchmark=spy, as_of=date(2017, 6, 30))

    facts = {fact.metric: fact for fact in quant_facts(profile, ticker="ko", citation=CITATION)}

    assert set(facts) == set(UNITS) - {"beta_sector", "alpha_1w_sector"}  # no sector ETF given
    rsi = facts["rsi14"]
    assert rsi.fact_id == "KO:rsi14:2017-06-30" and rsi.fiscal_period == "DAY"
    assert rsi.value == Decimal(f"{profile.rsi14:.10g}") and rsi.unit == "index"
    assert rsi.citation == CITATION and "Wilder" in rsi.derivation
    assert "against SPY" in facts["beta"].derivation
    assert facts["atr_pct"].unit == "percent"
