"""Flags by code, under seed 002's epistemic honesty protocol. A model proposes a flag and its reason; code
decides what the flag may be from the symbol's alpha residual, its sector's evidence quality and the
drivers found, and refuses any proposal or managing-director adjustment that would break a floor:

- no sector news and |alpha| under ``pure_beta_alpha_pct``: YELLOW, with the "pure beta" sentence;
- no sector news and |alpha| over ``unexplained_alpha_pct``: RED, "unexplained alpha";
- GREEN only with strong evidence and a transient driver for the symbol's sector;
- weak evidence says "Limited evidence found" and cites what exists; no evidence says no catalyst was found.

Evidence quality is the news analyst's word capped by code (``evidence_ceiling``): none without a cited
document that resolves, weak below ``STRONG_DOCUMENTS`` distinct cited documents or with nothing but social
posts, strong otherwise. A model cannot talk its way past either.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from agents.screen.config import Thresholds
from agents.screen.quant import pct

Flag = Literal["GREEN", "YELLOW", "RED"]
Evidence = Literal["none", "weak", "strong"]
# What a sector's symbols are assessed on: the evidence, or "unread" when its news reading did not finish
# (a failed call): nothing is known of its news, which is not the same as no news.
Assessed = Literal["none", "weak", "strong", "unread"]
UNREAD: Assessed = "unread"
FLAGS: tuple[Flag, ...] = ("GREEN", "YELLOW", "RED")
EVIDENCE_ORDER: dict[str, int] = {"none": 0, "weak": 1, "strong": 2}
STRONG_DOCUMENTS = 3

PURE_BETA = (
    "The move is primarily explained by market-wide movement (beta). No idiosyncratic catalyst identified. "
    "This is a pure beta trade."
)
UNEXPLAINED = (
    "Significant idiosyncratic move ({alpha} beyond the market) but no news explanation found. CAUTION: "
    "unexplained alpha may indicate information the desk has not captured (insider activity, a block trade, "
    "an index rebalance)."
)
NO_NEWS = "No sector-specific news found. No specific catalyst identified."
UNASSESSED = (
    "Unassessed: this sector's news reading did not finish, so nothing is known of its news (which is not "
    "the same as no news). The flag stays YELLOW until it is read: never RED for unexplained alpha, never "
    "GREEN."
)
UNREAD_SUMMARY = (
    "Unread: the news analyst's reading of this sector did not finish; its symbols are unassessed."
)
LIMITED = (
    "Limited evidence found: {cited}. Insufficient to determine a specific catalyst with confidence; no "
    "specific catalyst identified."
)


def evidence_ceiling(cited: Collection[str], social: Collection[str]) -> Evidence:
    """The most the cited documents can support: ``cited`` the distinct resolving document ids, ``social``
    those among them that are social posts."""
    if not cited:
        return "none"
    if len(cited) < STRONG_DOCUMENTS or all(doc in social for doc in cited):
        return "weak"
    return "strong"


def capped(claimed: Evidence, ceiling: Evidence) -> Evidence:
    return claimed if EVIDENCE_ORDER[claimed] <= EVIDENCE_ORDER[ceiling] else ceiling


@dataclass(frozen=True)
class Floor:
    """What the protocol allows a symbol: ``forced`` when it settles the flag, else the flags allowed."""

    forced: Flag | None
    allowed: frozenset[Flag]
    rule: str  # the protocol's sentence for the symbol ("" when none applies)

    def admits(self, flag: Flag) -> bool:
        return flag == self.forced if self.forced else flag in self.allowed


def unread_floor() -> Floor:
    """A symbol whose sector's news was never read: unassessed, held at YELLOW; no proposal and no managing
    director's change moves it (the floors that need the news cannot be applied without it)."""
    return Floor("YELLOW", frozenset({"YELLOW"}), UNASSESSED)


def floor(
    alpha: float | None,
    evidence: Evidence,
    *,
    transient: bool,
    thresholds: Thresholds,
    cited_titles: tuple[str, ...] = (),
) -> Floor:
    size = abs(alpha) * 100 if alpha is not None else None
    if evidence == "none":
        if size is not None and size < thresholds.pure_beta_alpha_pct:
            return Floor("YELLOW", frozenset({"YELLOW"}), PURE_BETA)
        if size is not None and size > thresholds.unexplained_alpha_pct:
            return Floor("RED", frozenset({"RED"}), UNEXPLAINED.format(alpha=pct(alpha)))
        return Floor(None, frozenset({"YELLOW", "RED"}), NO_NEWS)
    green = evidence == "strong" and transient and alpha is not None
    allowed: frozenset[Flag] = frozenset({"GREEN", "YELLOW", "RED"} if green else {"YELLOW", "RED"})
    if evidence == "weak":
        cited = "; ".join(f'"{title}"' for title in cited_titles[:3]) or "the documents cited below"
        return Floor(None, allowed, LIMITED.format(cited=cited))
    return Floor(None, allowed, "")


@dataclass(frozen=True)
class Decision:
    flag: Flag
    proposed: Flag | None
    note: str  # code's line when it overruled the proposal, or ""


def decide(proposed: Flag | None, rule: Floor) -> Decision:
    """The flag a symbol gets: the proposal where the floor admits it; otherwise the floor's own flag, or
    YELLOW (insufficient evidence for GREEN), with code's reason."""
    if rule.forced is not None:
        note = "" if proposed in (None, rule.forced) else f"Code set {rule.forced} (proposed {proposed})."
        return Decision(rule.forced, proposed, note)
    if proposed is not None and rule.admits(proposed):
        return Decision(proposed, proposed, "")
    if proposed == "GREEN":
        return Decision(
            "YELLOW",
            proposed,
            "Code set YELLOW (proposed GREEN): GREEN needs strong evidence and a transient driver.",
        )
    return Decision("YELLOW", proposed, "Code set YELLOW: no flag was proposed.")


@dataclass(frozen=True)
class Adjustment:
    symbol: str
    before: Flag
    to: Flag
    reason: str
    accepted: bool
    refusal: str  # why code refused it, or ""


def adjust(symbol: str, before: Flag, to: Flag, reason: str, rule: Floor) -> Adjustment:
    """A managing director's flag change, applied only where the protocol admits the new flag."""
    if rule.admits(to):
        return Adjustment(symbol, before, to, reason, True, "")
    if rule.forced is not None:
        why = f"the protocol fixes {symbol} at {rule.forced}: {rule.rule}"
    else:
        why = f"{to} needs strong evidence and a transient driver, which {symbol}'s sector lacks."
    return Adjustment(symbol, before, to, reason, False, f"Refused: {why}")
