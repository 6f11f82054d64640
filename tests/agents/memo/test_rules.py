"""The rules code applies to model output: citations, dedup, hill-climb, audit, firewall, verdict, prose."""

from __future__ import annotations

from typing import Any

import pytest

from agents.evidence import EvidenceCatalog, EvidenceItem
from agents.memo import hillclimb
from agents.memo.audit import audit, direction, firewall
from agents.memo.citations import check_claims, dedup_key, merge
from agents.memo.roster import RosterError, load_profiles
from agents.memo.schemas import (
    Claim,
    Evaluation,
    JMinusScores,
    JPlusScores,
    MemoDraft,
    SpecialistBrief,
    SynthesisIteration,
)
from agents.memo.verdict import decide
from agents.text.figures import segments

CATALOG = EvidenceCatalog.of(
    [
        EvidenceItem(
            evidence_id="AAPL:revenue:FY2024",
            kind="fact",
            tier="HIGH",
            summary="revenue FY2024",
            metric="revenue",
            period="FY2024",
            value="391035000000",
        ),
        EvidenceItem(
            evidence_id="AAPL:revenue_growth_yoy:FY2024",
            kind="fact",
            tier="HIGH",
            summary="growth",
            metric="revenue_growth_yoy",
            period="FY2024",
            value="0.0202",
        ),
        EvidenceItem(
            evidence_id="AAPL:capex:FY2023",
            kind="fact",
            tier="HIGH",
            summary="capex",
            metric="capex",
            period="FY2023",
            value="10959",
        ),
        EvidenceItem(
            evidence_id="AAPL:capex:FY2024",
            kind="fact",
            tier="HIGH",
            summary="capex",
            metric="capex",
            period="FY2024",
            value="9447",
        ),
        EvidenceItem(evidence_id="news:1", kind="document", tier="LOW", summary="a press report"),
        EvidenceItem(evidence_id="market:1", kind="document", tier="MEDIUM", summary="a prediction market"),
    ]
)


def _claim(statement: str, citations: list[str], tier: str = "HIGH", layer: str = "MICRO") -> Claim:
    return Claim.model_validate(
        {"layer": layer, "statement": statement, "citations": citations, "tier": tier}
    )


def _brief(*claims: Claim) -> SpecialistBrief:
    return SpecialistBrief(
        claims=list(claims), coverage_gaps=["none found"], undercurrents=[], evidence_quality="weak"
    )


def _scores(plus: int, minus: int) -> tuple[JPlusScores, JMinusScores]:
    def spread(total: int, names: tuple[str, ...]) -> dict[str, int]:
        out = {}
        for name in names:
            out[name] = min(2, total)
            total -= out[name]
        return out

    return (
        JPlusScores.model_validate(spread(plus, tuple(JPlusScores.model_fields))),
        JMinusScores.model_validate(spread(minus, tuple(JMinusScores.model_fields))),
    )


def test_claims_with_unresolvable_citations_are_dropped_and_recorded() -> None:
    kept, dropped = check_claims(
        "fundamentals",
        _brief(
            _claim("Revenue held up", ["AAPL:revenue:FY2024"]), _claim("Invented", ["AAPL:made_up:FY2099"])
        ),
        CATALOG,
    )
    assert [c.claim.statement for c in kept] == ["Revenue held up"]
    assert dropped[0].unresolved == ["AAPL:made_up:FY2099"]


def test_a_claim_that_says_nothing_where_its_figure_goes_is_dropped_with_the_reason() -> None:
    """The embedded model's quant claims, barred from typing a figure: fillers in its place, or nothing."""
    kept, dropped = check_claims(
        "quant",
        _brief(
            _claim("Apple has a high alpha of ouch ouch ouch, a strong run.", ["AAPL:revenue:FY2024"]),
            _claim("Its revenue was . The margin held.", ["AAPL:revenue:FY2024"]),
            _claim("Its revenue was ouch, while the margin held.", ["AAPL:revenue:FY2024"]),
            _claim("Revenue reached [[AAPL:revenue:FY2024]], a high.", ["AAPL:revenue:FY2024"]),
            _claim("Revenue was high, while the margin held.", ["AAPL:revenue:FY2024"]),
        ),
        CATALOG,
    )
    assert [c.statement for c in kept] == [
        "Revenue reached [[AAPL:revenue:FY2024]], a high.",
        "Revenue was high, while the margin held.",
    ]
    assert all(d.citations == ["AAPL:revenue:FY2024"] for d in dropped)
    assert [(d.unresolved, d.reason) for d in dropped] == [
        ([], "it repeated one word or sign over and over"),
        ([], "it left a figure's place empty"),
        ([], "it put a word that is no figure where a figure belongs ('ouch')"),
    ]


def test_a_stated_tier_is_capped_by_what_its_sources_support() -> None:
    kept, _ = check_claims("news", _brief(_claim("The press says so", ["news:1"], tier="HIGH")), CATALOG)
    assert kept[0].tier == "LOW"
    kept, _ = check_claims("macro", _brief(_claim("Odds moved", ["market:1"], tier="LOW")), CATALOG)
    assert kept[0].tier == "LOW"  # a model may state less confidence than the source allows, never more


def test_dedup_is_a_normalisation_rule_not_a_judgment() -> None:
    first = _claim("Revenue GREW, in the year!", ["AAPL:revenue:FY2024"])
    same = _claim("revenue grew in year", ["AAPL:revenue:FY2024"])
    other = _claim("revenue grew in year", ["news:1"])
    assert dedup_key(first) == dedup_key(same) != dedup_key(other)
    kept_a, _ = check_claims("fundamentals", _brief(first), CATALOG)
    kept_b, _ = check_claims("competitive", _brief(same, other), CATALOG)
    merged = merge(kept_a + kept_b)
    assert [(m.count, m.shards) for m in merged] == [
        (2, ("fundamentals", "competitive")),
        (1, ("competitive",)),
    ]


@pytest.mark.parametrize(
    ("previous", "current", "passed"),
    [((4, 5), (6, 4), True), ((4, 5), (5, 4), False), ((4, 5), (6, 5), False), ((4, 5), (8, 1), True)],
)
def test_hill_climb_needs_plus_1_5_on_j_plus_and_minus_1_on_j_minus(
    previous: tuple[int, int], current: tuple[int, int], passed: bool
) -> None:
    check = hillclimb.check(2, *_scores(*current), _scores(*previous))
    assert check.passed is passed
    assert (check.delta_jplus, check.delta_jminus) == (current[0] - previous[0], current[1] - previous[1])
    assert hillclimb.check(1, *_scores(*current), None).passed


def test_direction_words() -> None:
    assert direction("Revenue grew strongly") == 1
    assert direction("Margins contracted") == -1
    assert direction("Revenue grew while margins fell") == 0
    assert direction("Revenue has risen") == 1 and direction("Free cash flow eroded") == -1


def test_words_of_a_rates_change_a_sign_or_something_else_claim_no_direction() -> None:
    """The memo's list, unlike the deck's, counted "slowed", "accelerated", "higher", "lower", "up", "down"
    and "loss"; one list now (agents.text.directions says why each is left out)."""
    for statement in (
        "Revenue growth slowed",
        "Growth accelerated",
        "Lower costs lifted the margin",
        "Services held up",
        "The net loss narrowed",
    ):
        assert direction(statement) == 0, statement


def test_a_growth_rate_that_slowed_above_zero_is_no_contradiction() -> None:
    """Read as "down", "slowed" set the claim against the positive growth it cites and dropped it to LOW."""
    kept, _ = check_claims(
        "fundamentals", _brief(_claim("Revenue growth slowed", ["AAPL:revenue_growth_yoy:FY2024"])), CATALOG
    )
    audited, report = audit(kept, CATALOG)
    assert not report.contradictions and audited[0].tier == "HIGH"


def test_the_audit_flags_a_claim_that_contradicts_the_sign_of_its_figure_and_drops_it_to_low() -> None:
    """ "Revenue declined" beside growth above zero is read by the rate's sign. "Revenue growth declined" says
    where the rate went, which one rate cannot tell (the reading the deck and the agency share): it stands."""
    kept, _ = check_claims(
        "news", _brief(_claim("Revenue declined", ["AAPL:revenue_growth_yoy:FY2024"])), CATALOG
    )
    audited, report = audit(kept, CATALOG)
    assert report.contradictions[0].kind == "direction vs figures"
    assert "revenue growth is above zero in every figure it cites" in report.contradictions[0].detail
    assert audited[0].tier == "LOW" and "AAPL:revenue_growth_yoy:FY2024" in report.contested_ids
    rate, _ = check_claims(
        "news", _brief(_claim("Revenue growth declined", ["AAPL:revenue_growth_yoy:FY2024"])), CATALOG
    )
    assert not audit(rate, CATALOG)[1].contradictions


def test_the_audit_flags_a_claim_naming_another_metric_than_it_cites() -> None:
    kept, _ = check_claims(
        "fundamentals", _brief(_claim("Free cash flow is ample", ["AAPL:revenue:FY2024"])), CATALOG
    )
    audited, report = audit(kept, CATALOG)
    assert [c.kind for c in report.contradictions] == ["metric vs figures"]
    assert "it names free cash flow, but the figures it cites are revenue" in report.contradictions[0].detail
    assert audited[0].tier == "LOW"


def test_the_audit_flags_briefs_reading_one_figure_in_opposite_directions() -> None:
    up, _ = check_claims("fundamentals", _brief(_claim("Revenue rose", ["AAPL:revenue:FY2024"])), CATALOG)
    down, _ = check_claims("competitive", _brief(_claim("Revenue fell", ["AAPL:revenue:FY2024"])), CATALOG)
    audited, report = audit(up + down, CATALOG)
    # Each brief's word is also read against its one figure, which shows no trend (issue 32, row 5): both
    # are flagged on their own before the briefs are set against each other.
    assert [c.kind for c in report.contradictions] == [
        "direction vs figures",
        "direction vs figures",
        "direction across briefs",
    ]
    assert all("one period cannot show a trend" in c.detail for c in report.contradictions[:2])
    across = report.contradictions[2].detail
    assert across == "fundamentals read AAPL:revenue:FY2024 as up; competitive as down"
    assert {c.tier for c in audited} == {"LOW"}


def test_the_audit_checks_a_claimed_trend_against_the_series_it_cites() -> None:
    series = ["AAPL:capex:FY2023", "AAPL:capex:FY2024"]
    rising, _ = check_claims("fundamentals", _brief(_claim("Capex has been increasing", series)), CATALOG)
    audited, report = audit(rising, CATALOG)
    assert [c.kind for c in report.contradictions] == ["direction vs figures"]
    assert (
        "FY2023 10959 (AAPL:capex:FY2023), FY2024 9447 (AAPL:capex:FY2024)" in report.contradictions[0].detail
    )
    assert "fell 13.8% in FY2024 (the latest change)" in report.contradictions[0].detail
    assert audited[0].tier == "LOW"
    falling, _ = check_claims("fundamentals", _brief(_claim("Capex declined", series)), CATALOG)
    assert not audit(falling, CATALOG)[1].contradictions


def test_consistent_briefs_pass_the_audit_untouched() -> None:
    a, _ = check_claims(
        "fundamentals", _brief(_claim("Revenue rose", ["AAPL:revenue_growth_yoy:FY2024"])), CATALOG
    )
    audited, report = audit(a, CATALOG)
    assert not report.contradictions and audited[0].tier == "HIGH"


def _memo(recommendation: str, load_bearing: list[str], sizing: str = "starter") -> MemoDraft:
    return MemoDraft.model_validate(
        {
            "headline_thesis": "t",
            "risk_budget": "r",
            "catalysts": [{"event": "e", "date": "2026-10-30", "expected_sign": "positive"}],
            "falsifiers": ["a", "b"],
            "recommendation": recommendation,
            "sizing": sizing,
            "sizing_rationale": "s",
            "load_bearing": load_bearing,
        }
    )


def test_the_firewall_downgrades_a_buy_that_rests_on_a_low_tier_source() -> None:
    _, report = audit([], CATALOG)
    decision = firewall(_memo("BUY", ["AAPL:revenue:FY2024", "news:1"]), CATALOG, report)
    assert (decision.stated, decision.final, decision.low_tier_ids) == ("BUY", "WATCH", ("news:1",))
    assert firewall(_memo("BUY", ["AAPL:revenue:FY2024"]), CATALOG, report).final == "BUY"
    assert firewall(_memo("HOLD", ["news:1"]), CATALOG, report).final == "HOLD"


def test_a_buy_or_sell_sized_none_takes_no_position_and_is_shown_as_watch() -> None:
    _, report = audit([], CATALOG)
    decision = firewall(_memo("BUY", ["AAPL:revenue:FY2024"], sizing="none"), CATALOG, report)
    assert (decision.stated, decision.final) == ("BUY", "WATCH")
    assert decision.reason == "BUY was sized none, which takes no position: shown as WATCH"
    assert firewall(_memo("HOLD", ["AAPL:revenue:FY2024"], sizing="none"), CATALOG, report).final == "HOLD"


def test_a_buy_on_a_contested_figure_is_conditional() -> None:
    up, _ = check_claims("fundamentals", _brief(_claim("Revenue rose", ["AAPL:revenue:FY2024"])), CATALOG)
    down, _ = check_claims("competitive", _brief(_claim("Revenue fell", ["AAPL:revenue:FY2024"])), CATALOG)
    _, report = audit(up + down, CATALOG)
    decision = firewall(_memo("SELL", ["AAPL:revenue:FY2024"]), CATALOG, report)
    assert decision.final == "SELL" and decision.conditional


def _iteration(plus: int, minus: int) -> SynthesisIteration:
    jplus, jminus = _scores(plus, minus)
    return SynthesisIteration(
        analysis={"macro": "m", "meso": "m", "micro": "m"},
        memo=_memo("BUY", ["AAPL:revenue:FY2024"]),
        what_i_missed=["a", "b", "c"],
        self_jplus=jplus,
        self_jminus=jminus,
    )


def _evaluation(grades: list[tuple[int, int]]) -> Evaluation:
    rows: list[dict[str, Any]] = []
    for number, (plus, minus) in enumerate(grades, 1):
        jplus, jminus = _scores(plus, minus)
        rows.append({"iteration": number, "jplus": jplus.model_dump(), "jminus": jminus.model_dump()})
    return Evaluation.model_validate(
        {"grades": rows, "divergences": [], "inflation_diagnosis": "d", "next_run_recommendation": "n"}
    )


def test_the_verdict_and_the_inflation_come_from_the_evaluators_scores() -> None:
    verdict = decide([_iteration(6, 4), _iteration(9, 2)], _evaluation([(4, 5), (6, 3)]))
    assert verdict.decision == "ACCEPT" and (verdict.calibrated_jplus, verdict.calibrated_jminus) == (6, 3)
    assert sum(v for k, v in verdict.inflation.items() if k in JPlusScores.model_fields) == 3
    assert verdict.recalibrated_hill_climb[1].passed is True
    assert decide([_iteration(9, 2)], _evaluation([(4, 5)])).decision == "REVISE"


def test_prose_keeps_fact_references_and_loses_model_typed_numbers() -> None:
    parts = segments(
        "Revenue of [[AAPL:revenue:FY2024]] grew 12.5% in 2024 Q3, [[AAPL:x:FY1]]", {"AAPL:revenue:FY2024"}
    )
    kinds = [(p.kind, p.text) for p in parts]
    assert ("fact", "AAPL:revenue:FY2024") in kinds
    assert [k for k, _ in kinds].count("removed") == 2  # "12.5%" and the unknown id
    assert any("2024 Q3" in text for kind, text in kinds if kind == "text")


def test_profiles_are_configuration() -> None:
    profiles = load_profiles({"MEMO_QUICK_ROSTER": "quant,news", "MEMO_ITERATIONS": "2"})
    assert profiles["quick"].roster == ("quant", "news") and profiles["full"].iterations == 2
    with pytest.raises(RosterError, match="unknown specialists"):
        load_profiles({"MEMO_ROSTER": "fundamentals,astrology"})
    with pytest.raises(RosterError, match="1 to 5"):
        load_profiles({"MEMO_ITERATIONS": "12"})


def test_a_divergence_names_one_of_the_rubrics_dimensions() -> None:
    from typing import get_args

    from agents.memo.schemas import JMINUS_DIMENSIONS, JPLUS_DIMENSIONS, Dimension

    assert set(get_args(Dimension)) == set(JPLUS_DIMENSIONS) | set(JMINUS_DIMENSIONS)
