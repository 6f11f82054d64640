"""Claims that read one figure in opposite ways are flagged by code, both quoted, their specialists named;
claims that agree, or point opposite ways on another period or another metric, are not."""

from __future__ import annotations

from agents.evidence import EvidenceCatalog, EvidenceItem
from agents.memo.citations import CheckedClaim
from agents.memo.contradictions import (
    OtherMemo,
    addressed,
    against_memo,
    between_specialists,
    directed,
    prompt_lines,
)
from agents.memo.schemas import Claim
from tests.agents.memo.answers import fact as _fact

CATALOG = EvidenceCatalog.of(
    [
        _fact("revenue", "FY2023", "383285000000"),
        _fact("revenue", "FY2024", "391035000000"),
        _fact("revenue", "FY2025", "416161000000"),
        _fact("gross_margin", "FY2024", "46.2"),
        EvidenceItem(evidence_id="doc-1", kind="document", tier="LOW", summary="a press report"),
    ]
)


def claim(specialist: str, statement: str, *citations: str) -> CheckedClaim:
    return CheckedClaim.of(
        specialist, Claim(layer="MICRO", statement=statement, citations=list(citations), tier="HIGH"), "HIGH"
    )


def test_two_specialists_reading_revenue_in_fy2024_both_ways_are_flagged_with_both_quoted() -> None:
    rose = claim(
        "fundamentals",
        "Revenue rose into the latest year, [[AAPL:revenue:FY2024]].",
        "AAPL:revenue:FY2023",
        "AAPL:revenue:FY2024",
    )
    fell = claim("competitive", "Revenue fell as rivals took share.", "AAPL:revenue:FY2024", "doc-1")
    (flag,) = between_specialists(directed([rose, fell], CATALOG))
    assert (flag.kind, flag.metric, flag.period, flag.figure) == (
        "specialists",
        "revenue",
        "FY2024",
        "AAPL:revenue:FY2024",
    )
    assert flag.first.statement == rose.statement and flag.second.statement == fell.statement
    assert flag.what == (
        "Two specialists read revenue for FY2024 (AAPL) in opposite ways: the fundamentals brief says it "
        "rose, the competitive brief that it fell."
    )
    lines = prompt_lines([flag])
    assert '- fundamentals says it rose: "Revenue rose into the latest year' in lines
    assert '- competitive says it fell: "Revenue fell as rivals took share."' in lines
    assert "[[AAPL:revenue:FY2024]] (revenue at FY2024)" in lines
    assert "391035000000" not in lines  # the figure goes by its id: no value for the synthesizer to type


def test_claims_that_agree_are_not_flagged() -> None:
    claims = [
        claim("fundamentals", "Revenue grew.", "AAPL:revenue:FY2024"),
        claim("macro", "Revenue increased despite the strong dollar.", "AAPL:revenue:FY2024"),
    ]
    assert between_specialists(directed(claims, CATALOG)) == []


def test_opposite_claims_on_different_periods_are_not_flagged() -> None:
    claims = [
        claim("fundamentals", "Revenue rose.", "AAPL:revenue:FY2023", "AAPL:revenue:FY2024"),
        # Cites FY2024 too, but speaks of the move into FY2025: another period.
        claim("competitive", "Revenue declined.", "AAPL:revenue:FY2024", "AAPL:revenue:FY2025"),
    ]
    read = directed(claims, CATALOG)
    assert [c.period for c in read] == ["FY2024", "FY2025"]
    assert between_specialists(read) == []


def test_opposite_claims_on_different_metrics_are_not_flagged() -> None:
    claims = [
        claim("fundamentals", "Revenue rose.", "AAPL:revenue:FY2024"),
        claim("competitive", "Gross margin fell.", "AAPL:gross_margin:FY2024"),
    ]
    assert between_specialists(directed(claims, CATALOG)) == []


def test_a_claim_with_no_single_direction_or_several_metrics_claims_nothing() -> None:
    claims = [
        claim("fundamentals", "Revenue rose while margins fell.", "AAPL:revenue:FY2024"),  # both ways
        claim("macro", "Revenue fell.", "AAPL:revenue:FY2024", "AAPL:gross_margin:FY2024"),  # two metrics
        claim("news", "Revenue fell.", "doc-1"),  # no figure at all
        claim("competitive", "Revenue is what it is.", "AAPL:revenue:FY2024"),  # no direction
    ]
    assert directed(claims, CATALOG) == []


def test_a_claim_the_memo_of_another_brief_contradicts_is_flagged_and_links_that_memo() -> None:
    ours = directed([claim("fundamentals", "Revenue rose.", "AAPL:revenue:FY2024")], CATALOG)
    theirs = directed(
        [
            claim("competitive", "Revenue shrank on weaker iPhone demand.", "AAPL:revenue:FY2024"),
            claim("macro", "Revenue rose.", "AAPL:revenue:FY2024"),  # agrees: not flagged
            claim("quant", "Revenue fell.", "AAPL:revenue:FY2024", "AAPL:revenue:FY2025"),  # FY2025: not
        ],
        CATALOG,
    )
    other = OtherMemo(version_id=7, label="v2", question="Is the services mix worth a premium?")
    (flag,) = against_memo(ours, theirs, other)
    assert flag.kind == "other brief" and flag.other == other
    assert flag.second.statement == "Revenue shrank on weaker iPhone demand."
    assert flag.what == (
        "This run's fundamentals brief says revenue for FY2024 (AAPL) rose; the memo v2 of another brief on "
        "AAPL rests on a competitive claim that it fell."
    )
    assert "against the memo v2 of another brief" in prompt_lines([flag])


def test_a_flag_is_taken_up_when_the_memo_references_its_metric_or_names_it_and_not_otherwise() -> None:
    (flag,) = between_specialists(
        directed(
            [
                claim("fundamentals", "Revenue rose.", "AAPL:revenue:FY2024"),
                claim("competitive", "Revenue fell.", "AAPL:revenue:FY2024"),
            ],
            CATALOG,
        )
    )
    assert addressed(flag, ["The mix shift shows in [[AAPL:revenue:FY2023]] against the year after."])
    assert addressed(flag, ["Whether revenue grew is contested between the briefs."])
    assert not addressed(flag, ["Gross margin carries the thesis, [[AAPL:gross_margin:FY2024]]."])
    assert not addressed(flag, [])
