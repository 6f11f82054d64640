"""Claims read against every figure they cite (agents.text.figure_claims), on the sentences the embedded
agency wrote for Apple (issue 32) and Apple's filed figures: a trend word holds at each step or the claim is
withheld with the series and the latest change; the metric named is the metric cited; advice is no finding.
And the other side: what is true stands unchanged."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents.data.edgar.derived import DERIVED_METRICS
from agents.data.edgar.metrics import METRICS, US_GAAP
from agents.quant.profile import UNITS
from agents.text.figure_claims import (
    STEADY_LEVEL,
    STEADY_POINTS,
    CitedFigure,
    advice,
    cited_figure,
    read_claim,
    read_text,
)
from agents.text.metric_words import METRIC_WORDS, metric_words_for, named_metrics

# Apple's 10-K figures, FY2023-FY2025 (us-gaap, USD), and the net margins code derives from them.
_FILED = {
    "operating_cash_flow": ("110543000000", "118254000000", "111482000000"),
    "cash": ("29965000000", "29943000000", "35934000000"),
    "revenue": ("383285000000", "391035000000", "416161000000"),
    "gross_profit": ("169148000000", "180683000000", "195201000000"),
    "net_margin": ("0.2530623426", "0.2397125577", "0.2691482383"),
}
_CONCEPTS = {
    "operating_cash_flow": "us-gaap:NetCashProvidedByUsedInOperatingActivities",
    "cash": "us-gaap:CashAndCashEquivalentsAtCarryingValue",
    "revenue": "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax",
    "gross_profit": "us-gaap:GrossProfit",
}


def _shown(value: Decimal, unit: str) -> str:
    return f"{value * 100:.1f}%" if unit == "pure" else f"USD {value / 1_000_000:,.0f} M"


def series(metric: str, years: tuple[int, ...] = (2023, 2024, 2025)) -> list[CitedFigure]:
    unit = "pure" if metric.endswith("margin") else "USD"
    found = []
    for year in years:
        value = Decimal(_FILED[metric][year - 2023])
        found.append(
            CitedFigure(
                f"AAPL:{metric}:FY{year}",
                metric,
                f"FY{year}",
                value,
                _shown(value, unit),
                _CONCEPTS.get(metric, ""),
                unit,
            )
        )
    return found


def test_f1_3_operating_cash_flow_increasing_is_withheld_with_the_series_and_the_latest_fall() -> None:
    verdict = read_claim("Apple's operating cash flow has been increasing.", series("operating_cash_flow"))
    assert verdict.rule == "trend" and not verdict.kept
    # Every figure with its period and id, and the latest change named: the first-to-last reading let it pass.
    for shown in (
        "FY2023 USD 110,543 M (AAPL:operating_cash_flow:FY2023)",
        "FY2024 USD 118,254 M (AAPL:operating_cash_flow:FY2024)",
        "FY2025 USD 111,482 M (AAPL:operating_cash_flow:FY2025)",
    ):
        assert shown in verdict.reason
    assert "rose 7.0% in FY2024 and fell 5.7% in FY2025 (the latest change)" in verdict.reason
    assert verdict.series == tuple(f.fact_id for f in series("operating_cash_flow"))


def test_f1_5_net_margin_increasing_over_a_fall_then_a_rise_is_withheld() -> None:
    verdict = read_claim("Apple's net margin has been increasing.", series("net_margin"))
    assert verdict.rule == "trend"
    assert (
        "FY2023 25.3%" in verdict.reason
        and "FY2024 24.0%" in verdict.reason
        and "FY2025 26.9%" in verdict.reason
    )
    assert "fell 1.3 points in FY2024 and rose 2.9 points in FY2025" in verdict.reason


def test_f1_1_cash_flow_citing_the_cash_balance_names_the_wrong_metric() -> None:
    verdict = read_claim("Apple's cash flow has been increasing.", series("cash"))
    assert verdict.rule == "metric"
    assert verdict.reason.startswith("it names cash flow, but the figures it cites are the cash balance")
    assert "AAPL:cash:FY2023" in verdict.reason
    # Read by the concept too: a figure filed as operating cash flow backs "cash flow" whatever its name.
    flow = [
        CitedFigure(f.fact_id, "ocf_reported", f.period, f.value, f.shown, f.concept, f.unit)
        for f in series("operating_cash_flow", (2023, 2024))
    ]
    assert read_claim("Apple's cash flow has been increasing.", flow).kept


def test_revenue_is_not_gross_profit_and_net_margin_is_not_revenue() -> None:
    assert read_claim("Revenue has been increasing.", series("gross_profit")).rule == "metric"
    assert read_claim("Net margin widened on services.", series("revenue")).rule == "metric"
    assert "it names net margin" in read_claim("Net margin widened.", series("revenue")).reason


def test_f2_advice_with_no_finding_is_withheld_as_advice() -> None:
    for sentence in (
        "Apple should consider investing in customer service.",
        "Apple should consider expanding its distribution channels.",
        "It is recommended that Apple invest in retail staff.",
        "Apple needs to improve its after-sales support.",
        "Apple could expand its presence in emerging markets.",
    ):
        verdict = read_claim(sentence, [], finding=True)
        assert verdict.rule == "advice", sentence
        assert verdict.reason.startswith("advice, not a finding from the documents")


def test_advice_that_carries_a_finding_stands_and_advice_is_judged_only_where_findings_are_asked() -> None:
    assert advice("Posts complain about slow repairs, so Apple should invest in service.") == ""
    assert advice("Apple should invest in service because customers complained of waits in the posts.") == ""
    assert advice("Margins fell, and Apple needs to cut costs.") == ""
    assert advice("Analysts recommend that Apple expand its services.") == ""  # whose advice: reported
    assert read_claim("Apple should consider investing in customer service.", []).kept  # a deck's advice


def test_a_true_monotone_claim_over_the_right_metric_stands() -> None:
    assert read_claim("Apple's revenue has been increasing.", series("revenue")).kept
    assert read_claim("Gross profit rose in each of the three years.", series("gross_profit")).kept
    assert read_claim("Operating cash flow fell in FY2025.", series("operating_cash_flow")).kept
    assert read_claim("Operating cash flow rose in FY2024.", series("operating_cash_flow")).kept


def test_one_period_named_judges_the_step_into_it_and_two_the_steps_between_them() -> None:
    verdict = read_claim("Operating cash flow rose in FY2025.", series("operating_cash_flow"))
    assert verdict.rule == "trend" and "rose into FY2025" in verdict.reason
    assert read_claim("Operating cash flow rose from FY2023 to FY2024.", series("operating_cash_flow")).kept
    assert not read_claim(
        "Operating cash flow rose from FY2023 to FY2025.", series("operating_cash_flow")
    ).kept
    # Periods named by the figures' own references count as named: every step between them is read.
    cited = " ".join(f"[[{f.fact_id}]]" for f in series("operating_cash_flow"))
    assert not read_claim(f"Operating cash flow rose: {cited}.", series("operating_cash_flow")).kept


def test_a_claim_with_no_trend_word_stands() -> None:
    assert read_claim("Operating cash flow funds the buyback.", series("operating_cash_flow")).kept
    assert read_claim("The balance sheet holds ample cash.", series("cash")).kept


def test_steady_holds_within_its_tolerance_and_not_beyond() -> None:
    # Cash moved 0.07% into FY2024: steady. Then 20% into FY2025: not.
    assert read_claim("Apple's cash balance held steady.", series("cash", (2023, 2024))).kept
    verdict = read_claim("Apple's cash balance has been stable.", series("cash"))
    assert verdict.rule == "trend" and "rose 20.0% in FY2025" in verdict.reason
    # A margin within one point is flat; the net margin's 1.3-point fall is not.
    base = Decimal(100)
    for moved, steady in ((STEADY_LEVEL - Decimal("0.001"), True), (STEADY_LEVEL + Decimal("0.001"), False)):
        pair = [
            CitedFigure("AAPL:capex:FY2024", "capex", "FY2024", base, "USD 100"),
            CitedFigure("AAPL:capex:FY2025", "capex", "FY2025", base * (1 + moved), "USD ...", unit="USD"),
        ]
        assert read_claim("Capex held steady.", pair).kept is steady
    assert STEADY_POINTS == 1
    assert not read_claim("Net margin was flat.", series("net_margin", (2023, 2024))).kept
    flat = [
        cited_figure(
            fact_id=f"AAPL:gross_margin:FY{y}",
            metric="gross_margin",
            period=f"FY{y}",
            value=v,
            shown=v,
            unit="pure",
        )
        for y, v in ((2023, "0.441"), (2024, "0.446"))
    ]
    assert read_claim("Gross margin was flat.", [f for f in flat if f is not None]).kept


def test_two_metrics_are_read_clause_by_clause() -> None:
    both = series("revenue") + series("operating_cash_flow")
    assert read_claim("Revenue rose while operating cash flow fell in FY2025.", both).kept
    verdict = read_claim("Revenue rose while operating cash flow kept rising.", both)
    assert verdict.rule == "trend" and "operating cash flow" in verdict.reason
    # What the figures did comes first; the writer's inference after names no metric and is not judged.
    assert read_claim(
        "Revenue has been increasing, suggesting a need to improve efficiency.", series("revenue")
    ).kept


def test_a_direction_beside_growth_rates_is_read_by_their_sign() -> None:
    rates = [
        cited_figure(
            fact_id="AAPL:revenue_growth_yoy:FY2023",
            metric="revenue_growth_yoy",
            period="FY2023",
            value="-0.028",
            shown="-2.8%",
            unit="pure",
        ),
        cited_figure(
            fact_id="AAPL:revenue_growth_yoy:FY2024",
            metric="revenue_growth_yoy",
            period="FY2024",
            value="0.020",
            shown="2.0%",
            unit="pure",
        ),
    ]
    cited = [f for f in rates if f is not None]
    assert read_claim("Sales grew again.", cited).kept  # not every rate below zero
    assert (
        "revenue growth is below zero in every figure it cites" in read_claim("Sales grew.", cited[:1]).reason
    )
    assert read_claim("Revenue growth improved.", cited).kept  # the rate itself rose
    assert read_claim("Revenue growth declined.", cited[1:]).kept  # one rate: no step to judge
    assert read_claim("Revenue growth has been strong.", cited[:1]).rule == "trend"


def test_a_peer_s_figures_are_no_step_of_the_company_s_series() -> None:
    peer = CitedFigure("MSFT:revenue:FY2023", "revenue", "FY2023", Decimal("211915000000"), "USD 211,915 M")
    # Apple's three rising years beside a peer's one: the trend is read on Apple's series alone.
    assert read_claim("Revenue has been increasing.", [peer, *series("revenue")]).kept
    assert not read_claim("Revenue declined.", [peer, *series("revenue")]).kept
    # One Apple year beside one peer year: this read as no step and stood; one period of each company's
    # revenue shows no trend (issue 32, row 5), so it is withheld, and no step from the peer's figure to
    # Apple's (a rise of 85%) is named.
    verdict = read_claim("Revenue declined.", [peer, *series("revenue", (2024,))])
    assert verdict.rule == "trend" and "one period cannot show a trend" in verdict.reason
    assert "MSFT:revenue:FY2023" in verdict.reason and "AAPL:revenue:FY2024" in verdict.reason
    assert "rose" not in verdict.reason


def test_the_map_reads_the_longest_metric_words_first() -> None:
    names = [
        entry.words.name for entry in named_metrics("Operating cash flow beat cash flow and the cash pile.")
    ]
    assert names == ["operating cash flow", "cash flow", "the cash balance"]
    assert [n.words.name for n in named_metrics("The earnings call praised net profit margin.")] == [
        "net margin"
    ]


def test_every_metric_the_desk_files_or_computes_is_backed_by_some_words_of_the_map() -> None:
    """The map covers the fact store's metrics (agents.data.edgar), its derived figures and the quant
    engine's, by name, and each filed metric's XBRL concepts by concept: a new metric must be mapped."""
    unnamed = {"below_operating"}  # "tax, interest and other": no words of a claim name it alone
    for metric in [m.name for m in METRICS] + list(DERIVED_METRICS) + list(UNITS):
        backed = [entry.name for entry in METRIC_WORDS if entry.backs(metric)]
        assert backed or metric in unnamed, metric
    for filed in METRICS:
        for concept in filed.concepts(US_GAAP):
            assert any(entry.backs("", concept) for entry in METRIC_WORDS), concept
    assert metric_words_for("cash") == "the cash balance"
    assert metric_words_for("revenue_growth_yoy") == "revenue growth"
    assert metric_words_for("operating_cash_flow") == "operating cash flow"


@pytest.mark.parametrize(
    ("sentence", "metric"),
    [
        ("Apple's cash flow has been increasing.", "cash"),
        ("Operating cash flow rose.", "cash"),
        ("Free cash flow rose.", "cash"),
        ("Revenue rose.", "gross_profit"),
        ("Gross profit rose.", "revenue"),
        ("Net margin rose.", "revenue"),
        ("The cash balance grew.", "operating_cash_flow"),
    ],
)
def test_words_and_metrics_that_do_not_match_are_withheld(sentence: str, metric: str) -> None:
    assert read_claim(sentence, series(metric)).rule == "metric"


def test_a_paragraph_citing_figures_inline_loses_only_the_sentences_its_figures_do_not_bear_out() -> None:
    """The screen's narratives cite figures inline: each sentence is read against the ids it cites."""
    alpha = cited_figure(
        fact_id="AAPL:return_1w:2015-12-31",
        metric="return_1w",
        period="2015-12-31",
        value="-0.0197",
        shown="-1.97%",
        unit="pure",
    )
    assert alpha is not None
    figures = {alpha.fact_id: alpha, **{f.fact_id: f for f in series("cash")}}
    text = (
        "AAPL's share price rose this week [[AAPL:return_1w:2015-12-31]]. "
        "Its cash flow grew [[AAPL:cash:FY2024]] [[AAPL:cash:FY2025]]. "
        "The company holds [[AAPL:cash:FY2025]] in cash. Sentiment on the posts was mixed."
    )
    read = read_text(text, figures)
    assert read.text == "The company holds [[AAPL:cash:FY2025]] in cash. Sentiment on the posts was mixed."
    assert len(read.withheld) == 2
    assert read.withheld[0].startswith("\u201cAAPL's share price rose this week")
    assert "the stock's return is below zero in every figure it cites: 2015-12-31 -1.97%" in read.withheld[0]
    assert "it names cash flow, but the figures it cites are the cash balance" in read.withheld[1]
    assert read_text("The share price fell this week [[AAPL:return_1w:2015-12-31]].", figures).withheld == ()


def test_the_screen_s_sector_figures_are_one_series_per_sector() -> None:
    def sector(slug: str, metric: str, day: str, value: str) -> CitedFigure:
        shown = f"{Decimal(value) * 100:+.2f}%"
        return CitedFigure(f"sector:{slug}:{metric}:{day}", metric, day, Decimal(value), shown, unit="pure")

    energy, staples = (
        sector("energy", "avg_alpha_1w", "2015-08-21", "0.010"),
        sector("staples", "avg_alpha_1w", "2015-08-28", "-0.020"),
    )
    assert energy.entity == "sector:energy"
    assert read_claim("Sector alpha was steady.", [energy, staples]).kept  # two sectors: no series
    week = sector("energy", "avg_return_1w", "2015-08-21", "0.012")
    read = read_text(f"The sector's share prices fell [[{week.fact_id}]].", {week.fact_id: week})
    assert "the share price went down" in read.withheld[0] and "above zero" in read.withheld[0]


def _net_income(period: str, value: str) -> CitedFigure:
    return CitedFigure(
        f"AAPL:net_income:{period}",
        "net_income",
        period,
        Decimal(value),
        f"USD {Decimal(value) / 1_000_000:,.0f} M",
        "us-gaap:NetIncomeLoss",
        "USD",
    )


# Apple's net income in its fiscal third quarter (the June quarter), FY2023-FY2025, as filed on 10-Q.
_JUNE_QUARTERS = [
    _net_income("FY2023Q3", "19881000000"),
    _net_income("FY2024Q3", "21448000000"),
    _net_income("FY2025Q3", "23434000000"),
]


def test_a_trend_word_over_one_period_of_a_level_is_withheld_with_the_figure_shown() -> None:
    """The embedded agency wrote "net income has been increasing steadily" citing one quarter's net income:
    one figure cannot show a trend, however true the trend may be."""
    sentence = "Apple's net income has been increasing steadily."
    verdict = read_claim(sentence, _JUNE_QUARTERS[-1:])
    assert verdict.rule == "trend" and not verdict.kept
    assert verdict.reason == (
        "it says net income rose (\u201cincreasing\u201d), but it cites net income for one period only: "
        "FY2025Q3 USD 23,434 M (AAPL:net_income:FY2025Q3); one period cannot show a trend"
    )
    assert verdict.series == ("AAPL:net_income:FY2025Q3",)
    # The same words over the three June quarters, each above the last: the trend is shown, and stands.
    assert read_claim(sentence, _JUNE_QUARTERS).kept
    # A ratio is a level too, and so is "steady": one margin shows neither a rise nor a flat line.
    margin = series("net_margin", (2025,))
    assert "one period cannot show a trend" in read_claim("Net margin has been rising.", margin).reason
    assert "one period cannot show a trend" in read_claim("Net margin held steady.", margin).reason
    # A quarter beside a year is no second period: no step is read from one kind to the other.
    mixed = [series("revenue", (2025,))[0], *_JUNE_QUARTERS[-1:]]
    assert not read_claim("Net income rose.", mixed).kept
    # No trend word, one figure: nothing to withhold.
    assert read_claim("Net income was USD 23,434 M in the June quarter.", _JUNE_QUARTERS[-1:]).kept


def test_a_growth_rate_carries_its_direction_by_its_sign_alone() -> None:
    """A figure that is itself a change shows a direction on its own: "revenue grew 6%" beside a growth rate
    of +6% stands, beside -6% it is withheld."""

    def growth(value: str) -> CitedFigure:
        figure = cited_figure(
            fact_id="AAPL:revenue_growth_yoy:FY2025",
            metric="revenue_growth_yoy",
            period="FY2025",
            value=value,
            shown=f"{Decimal(value) * 100:+.1f}%",
            unit="pure",
        )
        assert figure is not None
        return figure

    assert read_claim("Revenue grew 6% in FY2025.", [growth("0.06")]).kept
    fell = read_claim("Revenue grew 6% in FY2025.", [growth("-0.06")])
    assert fell.rule == "trend" and "revenue growth is below zero in every figure it cites" in fell.reason
    # Revenue's one year beside its growth rate: the rate carries the direction the level alone cannot.
    assert read_claim("Revenue grew.", [*series("revenue", (2025,)), growth("0.06")]).kept
    assert not read_claim("Revenue grew.", series("revenue", (2025,))).kept
