"""What the synthesizer and the evaluator read of the specialists' briefs: a declared gap that says there is
none is left out, so a small model has no sentence about the desk's work to copy into the memo."""

from __future__ import annotations

from agents.memo.outputs import AuditOutput, SpecialistOutput
from agents.memo.schemas import SpecialistBrief
from memos.pipeline.memo.reads import briefs_text


def _output(*gaps: str, undercurrents: tuple[str, ...] = ()) -> SpecialistOutput:
    brief = SpecialistBrief.model_validate(
        {
            "claims": [],
            "coverage_gaps": list(gaps),
            "undercurrents": list(undercurrents),
            "evidence_quality": "weak",
        }
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
            # What a fresh desk's quick memo copied into every section (the fifty-third stop):
            "news": _output(
                "The analyst's brief does not mention Apple Inc. or its products.",
                undercurrents=(
                    "The analyst's brief does not provide any latent links, a limitation for this question.",
                    "Services margins lean on the App Store's fees, which regulators in Europe are reading.",
                ),
            ),
        },
        AuditOutput(claims=[], tiers={}),
    )
    assert "- coverage gap: No management guidance on services margins in the filings." in text
    assert "- undercurrent: Services margins lean on the App Store's fees" in text
    assert "did not find any" not in text and "None identified" not in text and "brief does not" not in text
