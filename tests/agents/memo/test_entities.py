"""Claims without figures, audited against what they cite; specialists graded on the gaps they declare; and
what is unsupported counts against the memo's evaluation."""

from __future__ import annotations

from agents.evidence import EvidenceCatalog, EvidenceItem
from agents.memo.audit import audit
from agents.memo.citations import CheckedClaim
from agents.memo.entities import entities, grade_gaps, unsupported_entities
from agents.memo.schemas import Claim

OWN = ("Apple Inc.", "AAPL")
REVENUE = EvidenceItem(
    evidence_id="AAPL:revenue:FY2025",
    kind="fact",
    tier="HIGH",
    summary="Apple Inc. revenue FY2025: USD 416,161 M (10-K filed 2025-10-31)",
    metric="revenue",
    period="FY2025",
    value="416161000000",
)
NEWS = EvidenceItem(
    evidence_id="news:1",
    kind="document",
    tier="MEDIUM",
    summary="Supplier news",
    text="Foxconn said on 2025-09-09 it would add lines in India for the new phones.",
)
CATALOG = EvidenceCatalog.of([REVENUE, NEWS])


def claim(statement: str, *citations: str, shard: str = "fundamentals") -> CheckedClaim:
    made = Claim(layer="MICRO", statement=statement, citations=list(citations), tier="HIGH")
    return CheckedClaim.of(shard, made, "HIGH")


def test_names_and_dates_are_found_and_the_company_s_own_name_and_sentence_openers_are_not() -> None:
    assert entities("Apple signed with TSMC in March 2025, said Tim Cook.", own=OWN) == [
        "March 2025",
        "TSMC",
        "Tim Cook",
    ]
    assert entities("Demand rose in FY2025 as revenue grew.", own=OWN) == []
    assert entities("Sales held; the launch on 2025-09-09 helped.", own=OWN) == ["2025-09-09"]
    # The company's full name, as the embedded model opens every claim, names nothing a source must hold.
    assert entities("Apple Inc. (AAPL) has kept a strong balance sheet.", own=OWN) == []
    assert entities("Apple Inc. competes with Google and Microsoft Corp.", own=OWN) == ["Google", "Microsoft"]


def test_a_name_or_date_none_of_the_cited_items_holds_marks_the_claim_and_drops_it_to_low() -> None:
    held = claim("Apple added capacity with Foxconn on 2025-09-09.", "news:1")
    missing = claim("Apple revenue rose as Samsung lost share in India.", "AAPL:revenue:FY2025")
    found = unsupported_entities([held, missing], CATALOG, own=OWN)
    assert [(u.statement, u.entities) for u in found] == [(missing.statement, ["Samsung", "India"])]

    audited, report = audit([held, missing], CATALOG, own=OWN)
    assert [c.tier for c in audited] == ["HIGH", "LOW"]
    assert report.penalties == 1 and report.downgraded == [missing.dedup_key]


def test_a_real_gap_is_credit_and_a_claim_on_what_was_declared_missing_is_a_penalty() -> None:
    gaps = ["No management guidance for the next fiscal year.", "Supplier capacity in India is unknown."]
    asserts_missing = claim("Management guidance points to higher sales next year.", "AAPL:revenue:FY2025")
    grades, invented = grade_gaps("fundamentals", gaps, [asserts_missing], CATALOG)
    assert [(g.gap, g.real) for g in grades] == [(gaps[0], True), (gaps[1], False)]
    assert "news:1" in grades[1].note  # the desk held an item on Indian supplier capacity
    assert [i.statement for i in invented] == [asserts_missing.statement]
    assert invented[0].why == f"it declared missing: {gaps[0]}"

    _, report = audit([asserts_missing], CATALOG, own=OWN, gaps={"fundamentals": gaps})
    assert report.penalties == 1 and len(report.gap_grades) == 2

    # A "gap" saying there is none is no gap: not graded as credit, nothing to invent against.
    none = ["The analyst did not find any coverage gaps for this question.", "No significant gaps."]
    assert grade_gaps("quant", none, [asserts_missing], CATALOG) == ([], [])
