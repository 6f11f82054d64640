"""What the synthesizer and the evaluator read of the specialists' briefs: a declared gap that says there is
none is left out, so a small model has no sentence about the desk's work to copy into the memo."""

from __future__ import annotations

from agents.memo.outputs import AuditOutput, SpecialistOutput
from agents.memo.schemas import SpecialistBrief
from memos.pipeline.memo.reads import briefs_text


def _output(*gaps: str) -> SpecialistOutput:
    brief = SpecialistBrief.model_validate(
        {"claims": [], "coverage_gaps": list(gaps), "undercurrents": [], "evidence_quality": "weak"}
    )
    return SpecialistOutput(brief=brief, claims=[], dropped=[], reasked=False, asked_model=True)


def test_a_gap_that_declares_none_is_left_out_and_a_real_gap_is_read() -> None:
    text = briefs_text(
        {
            "fundamentals": _output(
                "The analyst did not find any coverage gaps for this question.",
                "No management guidance on services margins in the filings.",
            ),
            "quant": _output("None identified; there are no gaps."),
        },
        AuditOutput(claims=[], tiers={}),
    )
    assert "- coverage gap: No management guidance on services margins in the filings." in text
    assert "did not find any" not in text and "None identified" not in text
