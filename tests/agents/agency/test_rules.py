"""The agency's rules that code applies: merging duplicates by key, adding up and ranking scores with the
tie-break, and recording what moved a board member's position."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from agents.agency.checks import Change, answer_check, change, echoes, shown
from agents.agency.dedup import clusters, dedup_key
from agents.agency.directions import Figure, direction_problem
from agents.agency.ranking import rank, top_overlap
from agents.agency.schemas import MetricScore, ScoreCard


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


def test_a_claim_whose_cited_figures_went_the_other_way_is_caught() -> None:
    revenue = [
        Figure("AAPL:revenue:FY2024", "revenue", date(2024, 11, 1), Decimal("391035000000"), "USD 391,035 M"),
        Figure(
            "AAPL:revenue:FY2025", "revenue", date(2025, 10, 31), Decimal("416161000000"), "USD 416,161 M"
        ),
    ]
    wrong = direction_problem("The company's revenue has been declining over the past two years.", revenue)
    assert "went down, but the figures it cites rose: USD 391,035 M" in wrong
    assert direction_problem("Revenue grew over the last two years.", revenue) == ""
    # What the figures did comes first; what the writer makes of it after (read on the embedded model).
    assert direction_problem("Revenue has been decreasing, suggesting a need to improve efficiency.", revenue)
    assert direction_problem("Revenue has been increasing, so costs may decline next.", revenue) == ""
    # A claim about several metrics, a single period, or no direction at all: nothing to check.
    margin = Figure("AAPL:gross_margin:FY2025", "gross_margin", date(2025, 10, 31), Decimal("46.9"), "46.9%")
    assert direction_problem("Revenue fell while margins rose.", [*revenue, margin]) == ""
    assert direction_problem("Revenue declined.", revenue[:1]) == ""
    assert direction_problem("Revenue is large.", revenue) == ""


def test_a_claim_naming_growth_is_read_by_its_verb() -> None:
    """The agency read the noun "growth" as an up word (its list, unlike the deck's, matched any word
    beginning "grow"), so a claim that growth declined, beside rates that did, was withheld as a claim that
    it went up. One list now (agents.text.directions): the claim stands."""
    rates = [
        Figure(
            "AAPL:revenue_growth_yoy:FY2024", "revenue_growth_yoy", date(2024, 11, 1), Decimal("0.08"), "8.0%"
        ),
        Figure(
            "AAPL:revenue_growth_yoy:FY2025",
            "revenue_growth_yoy",
            date(2025, 10, 31),
            Decimal("0.02"),
            "2.0%",
        ),
    ]
    assert direction_problem("Revenue growth declined over the two years.", rates) == ""
    assert "went up, but the figures it cites fell" in direction_problem("Revenue growth rose again.", rates)


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
