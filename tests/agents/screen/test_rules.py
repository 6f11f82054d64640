"""The screen's rules by code: the honesty protocol's floors for every combination of evidence and alpha, the
evidence ceiling, the managing director's changes, sector grouping and the strategy file's refusals."""

from __future__ import annotations

import itertools

import pytest

from agents.screen.config import StrategyError, Thresholds, load_strategy
from agents.screen.flags import (
    FLAGS,
    LIMITED,
    NO_NEWS,
    PURE_BETA,
    Decision,
    Evidence,
    Flag,
    adjust,
    capped,
    decide,
    evidence_ceiling,
    floor,
)
from agents.screen.quant import decomposition
from agents.screen.sectors import UNCLASSIFIED, group, sector_of

THRESHOLDS = Thresholds()
EVIDENCE: tuple[Evidence, ...] = ("none", "weak", "strong")
# Alphas (ratios) below the pure-beta line, between the lines, above the unexplained line, and none.
ALPHAS = (0.001, -0.004, 0.01, -0.012, 0.02, -0.05, None)


@pytest.mark.parametrize(
    ("alpha", "evidence", "transient", "proposed"),
    list(itertools.product(ALPHAS, EVIDENCE, (True, False), (*FLAGS, None))),
)
def test_no_proposal_or_change_breaks_a_floor(
    alpha: float | None, evidence: Evidence, transient: bool, proposed: Flag | None
) -> None:
    rule = floor(alpha, evidence, transient=transient, thresholds=THRESHOLDS, cited_titles=("a post",))
    decision = decide(proposed, rule)
    size = abs(alpha) * 100 if alpha is not None else None
    if evidence == "none" and size is not None and size < THRESHOLDS.pure_beta_alpha_pct:
        assert decision.flag == "YELLOW" and rule.rule == PURE_BETA
    elif evidence == "none" and size is not None and size > THRESHOLDS.unexplained_alpha_pct:
        assert decision.flag == "RED" and "unexplained alpha" in rule.rule
    elif evidence == "none":
        assert decision.flag in {"YELLOW", "RED"} and rule.rule == NO_NEWS
    if decision.flag == "GREEN":
        assert evidence == "strong" and transient and alpha is not None
    if evidence == "weak":
        assert rule.rule.startswith('Limited evidence found: "a post"')
    if proposed is not None and decision.flag != proposed:
        assert decision.note.startswith("Code set")
    for to in FLAGS:  # whatever the managing director asks, the result keeps the floor
        change = adjust("XOM", decision.flag, to, "a reason", rule)
        after = change.to if change.accepted else decision.flag
        assert rule.admits(after)
        assert change.accepted or change.refusal.startswith("Refused:")


def test_what_the_protocol_admits_is_granted_green_included_and_a_directors_change_applied() -> None:
    """The other side of the floors: a protocol reduced to "always YELLOW" or "refuse every change" fails."""
    strong = floor(0.02, "strong", transient=True, thresholds=THRESHOLDS)
    assert decide("GREEN", strong) == Decision("GREEN", "GREEN", "")
    for flag in FLAGS:
        assert decide(flag, strong).flag == flag  # the analyst's own call stands where the protocol allows it
    raised = adjust("XOM", "YELLOW", "GREEN", "The driver is a one-off recall, now fixed.", strong)
    assert raised.accepted and raised.to == "GREEN" and raised.refusal == ""
    weak = floor(0.01, "weak", transient=True, thresholds=THRESHOLDS, cited_titles=("a post",))
    lowered = adjust("XOM", "YELLOW", "RED", "Margins are breaking down.", weak)
    assert lowered.accepted and lowered.to == "RED"
    # Without a transient driver, the same strong evidence does not admit GREEN.
    lasting = floor(0.02, "strong", transient=False, thresholds=THRESHOLDS)
    assert decide("GREEN", lasting).flag == "YELLOW"
    assert not adjust("XOM", "YELLOW", "GREEN", "It will pass.", lasting).accepted


def test_the_evidence_a_model_claims_is_capped_by_what_it_cites() -> None:
    assert evidence_ceiling([], set()) == "none"
    assert evidence_ceiling(["a", "b"], set()) == "weak"
    assert evidence_ceiling(["a", "b", "c"], {"a", "b", "c"}) == "weak"  # posts only: one person's view each
    assert evidence_ceiling(["a", "b", "c"], {"a", "b"}) == "strong"
    assert capped("strong", "weak") == "weak"
    assert capped("weak", "strong") == "weak"
    assert capped("none", "strong") == "none"
    assert LIMITED.startswith("Limited evidence found")


def test_every_assessment_splits_the_week_into_market_and_own_parts_in_numbers() -> None:
    line = decomposition("XOM", -0.0795, -0.0240, 0.99, "SPY")
    assert line == (
        "XOM moved -7.95% this week: -5.55% is the market's move (beta 0.99 against SPY) and -2.40% its own "
        "(the alpha residual)."
    )
    assert "unknown" in decomposition("NEW", 0.01, None, None, "SPY")


def test_sectors_come_from_the_table_then_the_overrides_then_name_keywords() -> None:
    assert sector_of("XOM", table={"XOM": "Energy"}).sector == "Energy"
    assert sector_of("XLF", table={}).how == "override"
    assert sector_of("XLF", table={"XLF": "Banks"}).sector == "Banks"
    found = sector_of("ACME", table={}, name="Acme Semiconductor Holdings")
    assert (found.sector, found.how) == ("Technology", "keyword")
    assert sector_of("ZZZ", table={}, name="Zeta Holdings").sector == UNCLASSIFIED
    grouped = group([sector_of(s, table={}, name=n) for s, n in [("A", "x"), ("B", "Big Bank"), ("C", "y")]])
    assert list(grouped) == ["Financial", UNCLASSIFIED]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("as_of: 2015-13-01\n", "as_of"),
        ("universe:\n  source: watchlist\n", "universe"),
        ("universe:\n  symbols: [AAPL, 'two words']\n", "universe.symbols"),
        ("thresholds:\n  pure_beta_alpha_pct: 2\n", "thresholds"),
        ("news:\n  queries_per_sector: 1\n", "news.queries_per_sector"),
        ("models:\n  cfo: gpt\n", "models"),
        ("colour: blue\n", "colour"),
        ("- a list\n", "the strategy file must be a mapping"),
        ("universe: [\n", "not YAML"),
    ],
)
def test_a_malformed_strategy_is_refused_naming_the_field(text: str, field: str) -> None:
    with pytest.raises(StrategyError) as refused:
        load_strategy(text)
    assert field in str(refused.value)
    assert "\n" not in str(refused.value)
