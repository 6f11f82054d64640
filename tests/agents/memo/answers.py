"""Schema-valid answers for the rules' tests, built here: tests of ``agents`` import nothing of ``memos``."""

from __future__ import annotations

from typing import Any

from agents.evidence import EvidenceItem
from agents.memo.schemas import JMINUS_DIMENSIONS, JPLUS_DIMENSIONS, SynthesisIteration

GAPS = ("The competitive response.", "Currency exposure.", "The regulatory docket.")


def spread(names: tuple[str, ...], total: int) -> dict[str, int]:
    """``total`` (0-10) over five 0-2 dimensions, first dimensions first."""
    scores = {}
    for name in names:
        scores[name] = min(2, max(0, total))
        total -= scores[name]
    return scores


def iteration(
    *,
    jplus: int = 6,
    jminus: int = 3,
    meso: str = "Peers set the bar.",
    dates: tuple[str, ...] = ("2026-10-30",),
    answered: list[dict[str, Any]] | None = None,
    headline: str = "Cash generation funds a cycle the market discounts.",
) -> SynthesisIteration:
    return SynthesisIteration.model_validate(
        {
            "answered_gaps": answered or [],
            "analysis": {"macro": "Rates frame the multiple.", "meso": meso, "micro": "Filed figures lead."},
            "memo": {
                "headline_thesis": headline,
                "risk_budget": "A miss on margins costs no more than the budget.",
                "catalysts": [
                    {"event": "Quarterly report", "date": date, "expected_sign": "positive"} for date in dates
                ],
                "falsifiers": ["Gross margin contracts.", "Growth turns negative."],
                "recommendation": "BUY",
                "sizing": "starter",
                "sizing_rationale": "A starter until the catalyst confirms it.",
                "load_bearing": ["AAPL:revenue:FY2025"],
            },
            "what_i_missed": list(GAPS),
            "self_jplus": spread(JPLUS_DIMENSIONS, jplus),
            "self_jminus": spread(JMINUS_DIMENSIONS, jminus),
        }
    )


def fact(metric: str, period: str, value: str) -> EvidenceItem:
    """An AAPL fact as the evidence holds it (``AAPL:<metric>:<period>``), HIGH tier."""
    return EvidenceItem(
        evidence_id=f"AAPL:{metric}:{period}",
        kind="fact",
        tier="HIGH",
        summary=f"{metric} {period}",
        metric=metric,
        period=period,
        value=value,
    )
