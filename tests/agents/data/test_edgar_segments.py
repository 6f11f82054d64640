"""Revenue by product line and business segment from the real inline XBRL filings in ../shared/data."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from agents.data.edgar import (
    facts_from_filing,
    filings_from_submissions,
    find_report,
    is_segment,
    read_filing,
    segment_axis,
    segment_facts,
    segment_facts_from_inline_xbrl,
)
from agents.data.edgar.inline_xbrl import InlineFiling
from agents.data.edgar.segments import complete_breakdown, member_name
from agents.data.edgar.sources import read_json_file
from agents.data.types import Fact
from agents.text.figures import REF
from tests.agents.data import shared_file
from tests.agents.data.test_edgar_inline_xbrl import FILINGS, SMALL_FILING

AAPL_10K = "edgar/filings/aapl-10-k-2024-11-01.html.gz"
M = 1_000_000


def filing(ticker: str, relative: str | None = None) -> InlineFiling:
    return read_filing(shared_file(relative or FILINGS[ticker]).read_bytes(), ticker=ticker)


def lines(parsed: InlineFiling) -> dict[str, Fact]:
    return {fact.metric: fact for fact in segment_facts(parsed)}


def total(parsed: InlineFiling) -> Fact:
    return next(fact for fact in facts_from_filing(parsed).facts if fact.metric == "revenue")


def test_apple_fy2024_product_lines_sum_to_the_filed_total() -> None:
    parsed = filing("AAPL", AAPL_10K)
    found, revenue = lines(parsed), total(parsed)
    five = {
        "revenue_product_iphone": 201_183,
        "revenue_product_mac": 29_984,
        "revenue_product_ipad": 26_694,
        "revenue_product_wearables_home_and_accessories": 37_005,
        "revenue_product_service": 96_169,
    }
    assert {metric: found[metric].value for metric in five} == {m: Decimal(v * M) for m, v in five.items()}
    assert sum(found[metric].value for metric in five) == revenue.value == 391_035 * M
    # Apple also tags the Products subtotal on the same axis: the four hardware lines, not a sixth line.
    hardware = ("iphone", "mac", "ipad", "wearables_home_and_accessories")
    assert found["revenue_product_product"].value == sum(
        found[f"revenue_product_{n}"].value for n in hardware
    )
    # Its reportable segments (geographic) are a second, complete breakdown of the same total.
    segments = [
        fact
        for fact in found.values()
        if segment_axis(fact.fact_id) == "us-gaap:StatementBusinessSegmentsAxis"
    ]
    assert [fact.citation.label for fact in segments] == [
        "Revenue: Americas",
        "Revenue: Europe",
        "Revenue: Greater China",
        "Revenue: Japan",
        "Revenue: Rest of Asia Pacific",
    ]
    assert sum(fact.value for fact in segments) == revenue.value


def test_lines_have_the_totals_period_label_unit_and_citation() -> None:
    rows = filings_from_submissions(read_json_file(shared_file("edgar/submissions/CIK0000320193_AAPL.json")))
    report = find_report(rows, form="10-K", report_date=date(2024, 9, 28))
    assert report is not None
    raw = shared_file(AAPL_10K).read_bytes()
    parsed = read_filing(raw, ticker="AAPL", accession=report.accession, filed=report.filing_date)
    revenue, iphone = total(parsed), lines(parsed)["revenue_product_iphone"]
    assert iphone.fact_id == "AAPL:revenue_product_iphone:FY2024"
    assert iphone.citation.label == "Revenue: iPhone"
    assert (
        iphone.fiscal_year,
        iphone.fiscal_period,
        iphone.period_start,
        iphone.period_end,
        iphone.unit,
    ) == (
        2024,
        "FY",
        date(2023, 10, 1),
        date(2024, 9, 28),
        "USD",
    )
    assert iphone.citation.model_copy(update={"label": ""}) == revenue.citation
    assert iphone.citation.accession == "0000320193-24-000123"
    # The one-call route reads the same lines.
    same = segment_facts_from_inline_xbrl(
        raw, ticker="AAPL", accession=report.accession, filed=report.filing_date
    )
    assert same == segment_facts(parsed)


@pytest.mark.parametrize(
    ("ticker", "period", "partition", "total_millions"),
    [
        (
            "AAPL",
            "FY2025Q3",
            {
                "revenue_product_iphone": 44_582,
                "revenue_product_mac": 8_046,
                "revenue_product_ipad": 6_581,
                "revenue_product_wearables_home_and_accessories": 7_404,
                "revenue_product_service": 27_423,
            },
            94_036,
        ),
        (
            "NVDA",
            "FY2026Q2",
            {
                "revenue_product_data_center": 41_096,
                "revenue_product_gaming": 4_287,
                "revenue_product_professional_visualization": 601,
                "revenue_product_automotive": 586,
                "revenue_product_oem_and_other": 173,
            },
            46_743,
        ),
        (
            "TSLA",
            "FY2025Q2",
            {"revenue_segment_automotive": 19_707, "revenue_segment_energy_generation_and_storage": 2_789},
            22_496,
        ),
        (
            "TSLA",
            "FY2025Q2",
            {
                "revenue_product_automotive_sales": 15_787,
                "revenue_product_automotive_regulatory_credits": 439,
                "revenue_product_automotive_leasing": 435,
                "revenue_product_energy_generation_and_storage_sales": 2_646,
                "revenue_product_energy_generation_and_storage_leasing": 143,
                "revenue_product_services_and_other": 3_046,
            },
            22_496,
        ),
        (
            "KO",
            "FY2025Q2",
            {
                "revenue_segment_north_america": 5_029,
                "revenue_segment_europe_middle_east_africa": 3_176,
                "revenue_segment_latin_america": 1_587,
                "revenue_segment_pacific": 1_572,
                "revenue_segment_bottling_investments": 1_411,
                "revenue_segment_corporate": 39,
                "revenue_segment_eliminations": -279,  # tagged sign="-"
            },
            12_535,
        ),
    ],
)
def test_each_10q_gives_its_own_quarter_s_lines_and_a_complete_breakdown_sums_to_the_total(
    ticker: str, period: str, partition: dict[str, int], total_millions: int
) -> None:
    parsed = filing(ticker)
    found = lines(parsed)
    assert {metric: found[metric].value for metric in partition} == {m: v * M for m, v in partition.items()}
    assert sum(found[metric].value for metric in partition) == total(parsed).value == total_millions * M
    assert {fact.fact_id.split(":")[0] for fact in found.values()} == {ticker}
    assert {fact.fact_id.rsplit(":", 1)[1] for fact in found.values()} == {period}


def test_nvidia_s_segments_cross_a_second_dimension_and_are_not_lines() -> None:
    # NVIDIA tags Compute & Networking and Graphics with srt:ConsolidationItemsAxis as well: two members.
    found = lines(filing("NVDA"))
    assert not [metric for metric in found if metric.startswith("revenue_segment_")]
    # Data Center is a subtotal of its Compute and Networking lines, both on the product axis.
    assert found["revenue_product_data_center"].value == (
        found["revenue_product_compute"].value + found["revenue_product_networking"].value
    )


def test_tesla_s_lines_take_the_revenue_concept_each_is_tagged_with() -> None:
    found = lines(filing("TSLA"))
    assert found["revenue_segment_automotive"].citation.concept == "us-gaap:Revenues"
    assert found["revenue_product_automotive_sales"].citation.concept == (
        "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax"
    )


def test_coca_cola_s_product_lines_by_country_are_cross_cuts_and_skipped() -> None:
    found = lines(filing("KO"))
    products = {metric: fact.value for metric, fact in found.items() if metric.startswith("revenue_product_")}
    assert products == {
        "revenue_product_concentrate_operations": 8_289 * M,
        "revenue_product_finished_product_operations": 4_246 * M,
    }


def test_every_line_id_is_a_citable_fact_id_the_store_can_hold() -> None:
    for ticker in FILINGS:
        for fact in segment_facts(filing(ticker)):
            assert REF.fullmatch(f"[[{fact.fact_id}]]"), fact.fact_id
            assert len(fact.metric) <= 60 and len(fact.fact_id) <= 120 and len(fact.citation.label) <= 300
            assert is_segment(fact.fact_id)


def test_is_segment_tells_a_line_from_every_other_fact() -> None:
    assert segment_axis("AAPL:revenue_product_iphone:FY2024") == "srt:ProductOrServiceAxis"
    assert segment_axis("TSLA:revenue_segment_automotive:FY2025Q2") == "us-gaap:StatementBusinessSegmentsAxis"
    for other in (
        "AAPL:revenue:FY2024",
        "AAPL:revenue_growth_yoy:FY2024",
        "AAPL:rsi14:2017-09-01",
        "sector:energy:avg_alpha_1w:2015-08-21",
        "revenue_product_iphone",
    ):
        assert not is_segment(other), other


@pytest.mark.parametrize(
    ("member", "name"),
    [
        ("aapl:IPhoneMember", "iPhone"),
        ("aapl:IPadMember", "iPad"),
        ("aapl:MacMember", "Mac"),
        ("aapl:WearablesHomeandAccessoriesMember", "Wearables Home and Accessories"),
        ("aapl:RestOfAsiaPacificSegmentMember", "Rest of Asia Pacific"),
        ("nvda:DataCenterMember", "Data Center"),
        ("nvda:OEMAndOtherMember", "OEM and Other"),
        ("nvda:ComputeAndNetworkingSegmentMember", "Compute and Networking"),
        ("us-gaap:ServiceMember", "Service"),
        ("ko:SegmentMember", "Segment"),
    ],
)
def test_a_member_s_name_for_people(member: str, name: str) -> None:
    assert member_name(member) == name


SEGMENTED = SMALL_FILING.replace(
    ' <xbrli:unit id="usd">',
    """ <xbrli:context id="crossed"><xbrli:entity>
  <xbrli:identifier scheme="http://www.sec.gov/CIK">0000000042</xbrli:identifier><xbrli:segment>
  <xbrldi:explicitMember dimension="srt:ProductOrServiceAxis">srt:ServiceMember</xbrldi:explicitMember>
  <xbrldi:explicitMember dimension="srt:StatementGeographicalAxis">country:US</xbrldi:explicitMember>
  </xbrli:segment></xbrli:entity><xbrli:period><xbrli:startDate>2025-04-01</xbrli:startDate>
  <xbrli:endDate>2025-06-30</xbrli:endDate></xbrli:period></xbrli:context>
 <xbrli:context id="region"><xbrli:entity>
  <xbrli:identifier scheme="http://www.sec.gov/CIK">0000000042</xbrli:identifier><xbrli:segment>
  <xbrldi:explicitMember dimension="srt:StatementGeographicalAxis">country:US</xbrldi:explicitMember>
  </xbrli:segment></xbrli:entity><xbrli:period><xbrli:startDate>2025-04-01</xbrli:startDate>
  <xbrli:endDate>2025-06-30</xbrli:endDate></xbrli:period></xbrli:context>
 <xbrli:context id="adjustment"><xbrli:entity>
  <xbrli:identifier scheme="http://www.sec.gov/CIK">0000000042</xbrli:identifier><xbrli:segment>
  <xbrldi:explicitMember dimension="us-gaap:StatementBusinessSegmentsAxis">
   ex:EliminationsMember</xbrldi:explicitMember>
  </xbrli:segment></xbrli:entity><xbrli:period><xbrli:startDate>2025-04-01</xbrli:startDate>
  <xbrli:endDate>2025-06-30</xbrli:endDate></xbrli:period></xbrli:context>
 <xbrli:unit id="usd">""",
).replace(
    " Total <ix:nonFraction",
    """ Crossed <ix:nonFraction name="us-gaap:Revenues" contextRef="crossed" unitRef="usd"
   scale="6">50</ix:nonFraction>
 US <ix:nonFraction name="us-gaap:Revenues" contextRef="region" unitRef="usd" scale="6">900</ix:nonFraction>
 Eliminations (<ix:nonFraction name="us-gaap:Revenues" contextRef="adjustment" unitRef="usd" scale="3"
   sign="-">12,345</ix:nonFraction>)
 Total <ix:nonFraction""",
)


def test_only_one_dimension_lines_on_the_two_axes_with_scale_and_sign_applied() -> None:
    found = {fact.fact_id: fact.value for fact in segment_facts_from_inline_xbrl(SEGMENTED, ticker="EXMP")}
    # The product line (700, scale 6) and the negative elimination; not the two-dimension cross-cut (50),
    # not the geographic line (900), not the year to date.
    assert found == {
        "EXMP:revenue_product_product:FY2025Q2": Decimal(700_000_000),
        "EXMP:revenue_segment_eliminations:FY2025Q2": Decimal(-12_345_000),
    }
    # The totals are as before: the segment contexts are still skipped there.
    totals = facts_from_filing(read_filing(SEGMENTED, ticker="EXMP")).facts_by_id()
    assert totals["EXMP:revenue:FY2025Q2"].value == Decimal(1_250_500_000)


@pytest.mark.parametrize(
    ("ticker", "relative", "expected"),
    [
        # Apple's Products subtotal gives way to the four hardware lines it adds up: the finest breakdown.
        ("AAPL", AAPL_10K, ["iphone", "mac", "ipad", "wearables_home_and_accessories", "service"]),
        # NVIDIA's Data Center gives way to its Compute and Networking parts.
        ("NVDA", None, ["compute", "networking", "gaming", "professional_visualization", "automotive"]),
    ],
)
def test_the_finest_complete_breakdown_sums_exactly_to_the_filed_total(
    ticker: str, relative: str | None, expected: list[str]
) -> None:
    parsed = filing(ticker, relative)
    product = {
        fact.fact_id: fact.value
        for fact in segment_facts(parsed)
        if segment_axis(fact.fact_id) == "srt:ProductOrServiceAxis"
    }
    chosen = complete_breakdown(product, total(parsed).value)
    names = [fact_id.split(":")[1].removeprefix("revenue_product_") for fact_id in chosen]
    assert set(expected) <= set(names) and not {"product", "data_center"} & set(names)
    assert sum(product[i] for i in chosen) == total(parsed).value
    # Lines that add up to no total are no breakdown: nothing rather than a partial one.
    assert complete_breakdown(product, total(parsed).value + 1) == ()
