"""The agency's rules that code applies: merging duplicates by key, adding up and ranking scores with the
tie-break, recording what moved a board member's position, and reading an inference against the figures it
cites (agents.text.figure_claims) with F2's advice giving way to what its documents report."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from agents.agency.checks import NOTHING_REPORTED, Change, answer_check, change, echoes, shown
from agents.agency.dedup import clusters, dedup_key
from agents.agency.outputs import Source
from agents.agency.ranking import rank, top_overlap
from agents.agency.schemas import Inference, InferenceClaim, MetricScore, ScoreCard
from agents.text.figure_claims import CitedFigure, read_claim
from memos.pipeline.agency.inference import checked


def _card(impact: int, feasibility: int, rar: int, alignment: int) -> ScoreCard:
    def metric(score: int) -> MetricScore:
        return MetricScore(score=score, quote="a passage of the move", reason="Because.")

    return ScoreCard(
        impact=metric(impact),
        feasibility=metric(feasibility),
        risk_adjusted_return=metric(rar),
        strategic_alignment=metric(alignment),
    )


def test_the_key_normalises_case_stop_words_plurals_and_order() -> None:
    assert dedup_key("acquire", "a smaller competitor") == dedup_key("acquire", "Smaller competitors")
    assert dedup_key("acquire", "the competitor, smaller") == "acquire:competitor small"
    assert dedup_key("partner", "a smaller competitor") != dedup_key("acquire", "a smaller competitor")


def test_duplicates_collapse_into_the_first_proposed_and_nothing_else_is_dropped() -> None:
    found = clusters([("m1", "a:x"), ("m2", "b:y"), ("m3", "a:x"), ("m4", "c:z")])
    assert [(c.first, c.members) for c in found] == [("m1", ["m1", "m3"]), ("m2", ["m2"]), ("m4", ["m4"])]


def test_totals_are_code_s_sums_and_ties_break_by_agreement_then_feasibility_then_order() -> None:
    even = {"d1": _card(7, 7, 7, 7), "d2": _card(7, 7, 7, 7), "d3": _card(7, 7, 7, 7)}  # 84, lowest 28
    split = {"d1": _card(10, 10, 10, 10), "d2": _card(5, 5, 5, 5), "d3": _card(6, 6, 6, 6)}  # 84, lowest 20
    feasible = {"d1": _card(6, 9, 6, 7), "d2": _card(7, 9, 6, 6), "d3": _card(7, 7, 7, 7)}  # 84, lowest 28
    weak = {"d1": _card(4, 4, 4, 4), "d2": _card(7, 7, 7, 7), "d3": _card(7, 7, 7, 7)}  # 72
    ranked = rank({"m2": split, "m5": even, "m9": feasible, "m1": weak, "m3": even})
    assert [(r.move, r.total, r.rank) for r in ranked] == [
        ("m9", 84, 1),  # the same total and lowest member as m3 and m5, and more feasibility
        ("m3", 84, 2),  # tied with m5 on everything: the earlier proposed first
        ("m5", 84, 3),
        ("m2", 84, 4),  # the same total, but one member far less convinced
        ("m1", 72, 5),
    ]
    assert top_overlap(["m1", "m2", "m3", "m4"], ["m3", "m1", "m9"]) == 2


def test_a_change_of_position_names_what_moved_it_or_is_marked_unsupported() -> None:
    critic = ["1. The plan ignores the cost of building new plants abroad."]
    known = frozenset({"F1.1", "F2.2"})

    def moved(previous: str, position: str, moved_by: str, citations: list[str], before: list[str]) -> Change:
        return change(
            previous=previous,
            position=position,
            moved_by=moved_by,
            citations=citations,
            cited_before=before,
            critic_turns=critic,
            known_ids=known,
        )

    held = moved("support", "support", "", [], [])
    assert (held.changed, held.supported) == (False, None)
    cited = moved("support", "oppose", "", ["F2.2"], ["F1.1"])
    assert cited.supported and "cites F2.2" in cited.basis
    argued = moved("support", "conditional", "ignores the cost of building new plants", [], [])
    assert argued.supported and "the critic's argument" in argued.basis
    bare = moved("oppose", "support", "I changed my mind", ["F1.1"], ["F1.1"])
    assert bare.changed and bare.supported is False


def test_a_quote_of_the_critic_must_be_its_words_and_a_typed_figure_is_withheld() -> None:
    assert answer_check("the plan ignores the cost", "1. The plan ignores the cost of plants.") == ""
    assert "not in" in answer_check("the plan is cheap and easy", "1. The plan ignores the cost of plants.")
    text = shown("Revenue grew 12% last year. The moat is real.", frozenset())
    assert text.text == "The moat is real." and text.withheld == 1 and text.note


def _figure(metric: str, year: int, value: str, shown_as: str) -> CitedFigure:
    return CitedFigure(f"AAPL:{metric}:FY{year}", metric, f"FY{year}", Decimal(value), shown_as)


REVENUE = [
    _figure("revenue", 2024, "391035000000", "USD 391,035 M"),
    _figure("revenue", 2025, "416161000000", "USD 416,161 M"),
]


def test_a_claim_whose_cited_figures_went_the_other_way_is_withheld() -> None:
    answer = Inference(
        claims=[
            InferenceClaim(
                statement="The company's revenue has been declining over the past two years.",
                citations=[f.fact_id for f in REVENUE],
            ),
            # "Grew" over one year's revenue: one period cannot show it (issue 32, row 5). This claim stood
            # before; it cites FY2024 alone, though the two years it speaks of are both held.
            InferenceClaim(statement="Revenue grew over the last two years.", citations=[REVENUE[0].fact_id]),
            # What the figures did comes first, what the writer makes of it after (the embedded model's).
            InferenceClaim(
                statement="Revenue has been increasing, so costs may decline next.",
                citations=[f.fact_id for f in REVENUE],
            ),
        ],
        gaps=["No segment split."],
    )
    found = checked("F1", answer, {f.fact_id for f in REVENUE}, {f.fact_id: f for f in REVENUE}, frozenset())
    assert [c.statement for c in found.claims] == [
        "Revenue has been increasing, so costs may decline next.",
    ]
    assert found.dropped == [
        "claim 1 withheld: it says revenue fell at each step (\u201cdeclining\u201d), "
        "but the series it cites does not: FY2024 USD 391,035 M (AAPL:revenue:FY2024), "
        "FY2025 USD 416,161 M (AAPL:revenue:FY2025); "
        "it rose 6.4% in FY2025 (the latest change)",
        "claim 2 withheld: it says revenue rose (\u201cgrew\u201d), but it cites revenue for one period "
        "only: FY2024 USD 391,035 M (AAPL:revenue:FY2024); one period cannot show a trend",
    ]


def test_a_claim_of_two_metrics_is_read_clause_by_clause() -> None:
    """Read first to last on one metric only, "revenue fell while margins rose" passed beside a revenue that
    rose; each clause is read against its own metric's figures now."""
    margin = CitedFigure("AAPL:gross_margin:FY2025", "gross_margin", "FY2025", Decimal("0.469"), "46.9%")
    cited = [*REVENUE, margin]
    assert "it says revenue fell" in read_claim("Revenue fell while margins rose.", cited).reason
    assert read_claim("Revenue rose while margins held.", cited).kept
    # One period of a level: this read as no step and stood; one figure cannot show a fall (issue 32, row
    # 5), so the claim is withheld with the figure shown.
    assert "one period cannot show a trend" in read_claim("Revenue declined.", REVENUE[:1]).reason
    assert read_claim("Revenue is large.", REVENUE).kept


def test_a_claim_naming_growth_is_read_by_its_verb() -> None:
    """The agency read the noun "growth" as an up word (its list, unlike the deck's, matched any word
    beginning "grow"), so a claim that growth declined, beside rates that did, was withheld as a claim that
    it went up. One list now (agents.text.directions): the claim stands."""
    rates = [
        CitedFigure(
            "AAPL:revenue_growth_yoy:FY2024", "revenue_growth_yoy", "FY2024", Decimal("0.08"), "8.0%"
        ),
        CitedFigure(
            "AAPL:revenue_growth_yoy:FY2025", "revenue_growth_yoy", "FY2025", Decimal("0.02"), "2.0%"
        ),
    ]
    assert read_claim("Revenue growth declined over the two years.", rates).kept
    assert "it says revenue growth rose" in read_claim("Revenue growth rose again.", rates).reason


def test_a_reply_that_mostly_copies_the_critic_back_is_an_echo_and_one_that_answers_is_not() -> None:
    critic = [
        "The acquisition overpays for a shrinking market. Integration risk is high for a firm of this size.",
        "Cash would be better spent on buybacks.",
    ]
    copied = (
        "The acquisition overpays for a shrinking market. Integration risk is high for a firm of this size."
    )
    assert echoes(copied, critic)
    half = "Integration risk is high for a firm of this size. We have closed four deals of this size on time."
    assert echoes(half, critic)  # half or more of its sentences are the critic's
    answered = (
        "Our last four deals of this size closed on time. The market is shrinking, but our share of it grows."
    )
    assert not echoes(answered, critic)
    assert not echoes("Yes. No.", critic)  # sentences too short to judge are no echo
    assert not echoes(copied, [])


def _post(doc_id: str, text: str) -> Source:
    return Source(
        doc_id=doc_id,
        kind="social",
        source="stocknet",
        published=date(2015, 12, 30),
        title=text,
        text=text,
        about="AAPL",
        stale=True,
    )


def test_f2_s_advice_gives_way_to_what_its_documents_report_or_to_code_s_line_that_they_report_nothing() -> (
    None
):
    posts = {
        "social:1": _post("social:1", "customers in the apple store waited an hour for a repair today"),
        "social:2": _post("social:2", "$aapl to 150 by friday, 40 % upside"),
    }
    answer = Inference(
        claims=[
            InferenceClaim(
                statement="Apple should consider investing in customer service.", citations=["social:1"]
            ),
            InferenceClaim(
                statement="Apple should expand its distribution channels.", citations=["social:2"]
            ),
        ],
        gaps=["No news from the last quarter."],
    )
    found = checked("F2", answer, set(posts), {}, frozenset(), documents=posts)
    assert [(c.claim_id, c.statement, c.citations, c.by_code) for c in found.claims] == [
        (
            "F2.1",
            "stocknet (2015-12-30, stale) reports: "
            "\u201ccustomers in the apple store waited an hour for a repair today\u201d",
            ["social:1"],
            True,
        )
    ]
    assert sum("advice, not a finding" in why for why in found.dropped) == 2
    assert any(why.startswith("social:2 holds no sentence code may quote") for why in found.dropped)
    # Nothing quotable in any cited document: code says so, never an empty F2 and never the advice.
    only_figures = {"social:2": posts["social:2"]}
    answer = Inference(claims=answer.claims[1:], gaps=answer.gaps)
    nothing = checked("F2", answer, set(only_figures), {}, frozenset(), documents=only_figures)
    assert [(c.statement, c.by_code) for c in nothing.claims] == [(NOTHING_REPORTED, True)]
    # F2 with a finding among its claims keeps it and adds nothing of code's; F1's advice is withheld too.
    mixed = Inference(
        claims=[
            InferenceClaim(statement="Posts complain of long waits for repairs.", citations=["social:1"]),
            *answer.claims,
        ],
        gaps=answer.gaps,
    )
    kept = checked("F2", mixed, set(posts), {}, frozenset(), documents=posts)
    assert [c.statement for c in kept.claims] == ["Posts complain of long waits for repairs."]
    assert not any(c.by_code for c in kept.claims)
    advice = checked("F1", answer, set(posts), {}, frozenset(), documents=posts)
    assert advice.claims == [] and "advice, not a finding" in advice.dropped[0]
