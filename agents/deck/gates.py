"""T8, the score aggregator (seed 001 sections 3-5): the R1 gate, R2's invariants, accept/reject and stop.

Everything here is code over numbers the judge gave and facts code measured; the judge never decides.

- R1: three hard gates (source of truth, scope coverage, structural validity) all pass AND the graded
  composite (the rubric's weights) reaches the entry bar.
- R2, each lap: a candidate c replaces the best-so-far b iff every protected invariant holds (truth by the
  fact-check, scope by code and judge, story integrity at or above the rubric's floor, no new walls of text
  and no chart that carried a figure removed), no protected dimension falls by more than tau
  (s_d(c) >= s_d(b) - tau), R2(c) >= R2(b) + delta, and the judge did not drift this lap (T11).
- Stop: ship (R2(b) >= ship bar), plateau (N laps in a row without an accepted candidate) or the lap limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

from agents.deck.ceilings import ceilings
from agents.deck.schemas import ProtectedDimension, R1Judgement, R1Score, R2Judgement, R2Score
from agents.rubrics import Rubric

PROTECTED: tuple[str, ...] = get_args(ProtectedDimension)
COMPOSITE = "composite"
StopReason = Literal["", "ship", "plateau", "max_laps", "budget"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GateResult(_Frozen):
    key: str
    passed: bool
    reason: str  # code's words: what failed, or what was checked


class Measured(_Frozen):
    """What code measured on one rendered candidate (fact-check, coverage, lint), before any judge."""

    figures: int  # figures on the slides
    mismatches: int  # fact-check figures not ok, both renders together
    unresolved_ids: int  # fact ids the draft cited that the run was not given
    missing_sections: list[str]  # required sections with no slide
    broken: list[str]  # lint findings that break a slide: overflow, empty or placeholder text, off-slide, ...
    walls_of_text: int
    chart_figures: int  # figures carried by charts
    humanizer: int  # T12 findings
    repeated: int = 0  # bullets, tables and charts that repeat another slide's


class R1Result(_Frozen):
    gates: list[GateResult]
    scores: dict[str, int]
    composite: float
    entry_bar: float
    passed: bool
    ceilings: list[str] = []  # scores code lowered where it measured the opposite (agents.deck.ceilings)


def r1_gates(measured: Measured) -> list[GateResult]:
    truth_ok = measured.mismatches == 0 and measured.unresolved_ids == 0
    return [
        GateResult(
            key="source_of_truth",
            passed=truth_ok,
            reason=f"{measured.figures} figures; {measured.mismatches} not matching the fact store, "
            f"{measured.unresolved_ids} fact ids the run was not given",
        ),
        GateResult(
            key="scope_coverage",
            passed=not measured.missing_sections,
            reason="every required section has a slide"
            if not measured.missing_sections
            else "no slide for: " + ", ".join(measured.missing_sections),
        ),
        GateResult(
            key="structural_validity",
            passed=not measured.broken,
            reason="renders, no broken slide" if not measured.broken else "; ".join(measured.broken[:5]),
        ),
    ]


def r1_result(
    rubric: Rubric,
    measured: Measured,
    judgement: R1Judgement | None,
    quotes: Sequence[tuple[str, bool]] = (),
) -> R1Result:
    """The gate's verdict; with no judgement (a hard gate failed, so the judge was not asked) the graded
    composite is 0."""
    scores = _complete(rubric, judgement.scores) if judgement is not None else {}
    scores, capped = _capped(scores, measured, quotes)
    composite = float(rubric.composite(COMPOSITE, scores)) if judgement is not None else 0.0
    gates = r1_gates(measured)
    bar = rubric.thresholds["entry_bar"]
    return R1Result(
        gates=gates,
        scores=scores,
        composite=composite,
        entry_bar=bar,
        passed=all(gate.passed for gate in gates) and composite >= bar,
        ceilings=capped,
    )


class Scored(_Frozen):
    """One deck scored on R2: the judge's integer scores (improvement and protected) and code's measures."""

    scores: dict[str, int]
    composite: float  # R2, over the improvement dimensions only
    measured: Measured
    ceilings: list[str] = []  # scores code lowered where it measured the opposite


def r2_scored(
    rubric: Rubric, judgement: R2Judgement, measured: Measured, quotes: Sequence[tuple[str, bool]] = ()
) -> Scored:
    scores, capped = _capped(_complete(rubric, judgement.scores, extra=PROTECTED), measured, quotes)
    improvement = {key: float(scores[key]) for key in rubric.objective(COMPOSITE).weights()}
    return Scored(
        scores=scores,
        composite=float(rubric.composite(COMPOSITE, improvement)),
        measured=measured,
        ceilings=capped,
    )


def _capped(
    scores: dict[str, int], measured: Measured, quotes: Sequence[tuple[str, bool]]
) -> tuple[dict[str, int], list[str]]:
    return ceilings(scores, repeated=measured.repeated, walls=measured.walls_of_text, quotes=quotes)


def _complete(
    rubric: Rubric, given: Sequence[R1Score | R2Score], *, extra: Sequence[str] = ()
) -> dict[str, int]:
    """Every dimension's score; one the judge left out (or gave twice, the first counts) scores 0: code
    never fills a gap in the judge's favour."""
    scores: dict[str, int] = {}
    for score in given:
        scores.setdefault(score.dimension, score.score)
    wanted = [*rubric.objective(COMPOSITE).weights(), *extra]
    return {key: scores.get(key, 0) for key in wanted}


class Decision(_Frozen):
    accepted: bool
    reasons: list[str]  # why rejected (every rule that failed), or why accepted
    margin: float  # R2(c) - R2(b)


def invariants(rubric: Rubric, candidate: Scored, best: Scored) -> list[str]:
    """Seed 001 section 4a: each broken invariant, in code's words (empty when all hold)."""
    broken = []
    got = candidate.measured
    if got.mismatches or got.unresolved_ids:
        broken.append(f"truth: {got.mismatches + got.unresolved_ids} figures do not trace to the fact store")
    if got.missing_sections:
        broken.append("scope adherence: no slide for " + ", ".join(got.missing_sections))
    floor = rubric.thresholds["story_floor"]
    if candidate.scores.get("story_integrity", 0) < floor:
        broken.append(
            f"story integrity: scored {candidate.scores.get('story_integrity', 0)}, below {floor:g}"
        )
    if got.walls_of_text > best.measured.walls_of_text:
        broken.append(
            f"visual integrity: {got.walls_of_text - best.measured.walls_of_text} new walls of text"
        )
    if got.chart_figures < best.measured.chart_figures:
        broken.append("visual integrity: a chart that carried figures was removed")
    if got.broken:
        broken.append("structure: " + "; ".join(got.broken[:3]))
    return broken


def decide(
    rubric: Rubric, candidate: Scored, best: Scored, *, drift: Sequence[str] = (), new_epoch: bool = False
) -> Decision:
    """Accept the candidate only if every rule holds; every failing rule is named. In a new epoch (fresh
    data) the candidate re-baselines when the truth holds, even if its score fell: truth wins over a
    prettier score."""
    if new_epoch:
        truth = [line for line in invariants(rubric, candidate, best) if line.startswith("truth")]
        margin = round(candidate.composite - best.composite, 2)
        if truth:
            return Decision(accepted=False, reasons=truth, margin=margin)
        return Decision(accepted=True, reasons=["fresh data: a new epoch, re-baselined"], margin=margin)
    tau = rubric.thresholds["protected_regression_tau"]
    delta = rubric.thresholds["min_improvement"]
    margin = round(candidate.composite - best.composite, 2)
    reasons = invariants(rubric, candidate, best)
    for key in PROTECTED:
        before, after = best.scores.get(key, 0), candidate.scores.get(key, 0)
        if after < before - tau:
            reasons.append(f"protected regression: {key} fell from {before} to {after} (tau {tau:g})")
    if margin < delta - 1e-9:
        reasons.append(f"R2 rose by {margin:+.2f}, less than the {delta:+.2f} required")
    reasons.extend(f"judge drift: {line}" for line in drift)
    if reasons:
        return Decision(accepted=False, reasons=reasons, margin=margin)
    return Decision(
        accepted=True, reasons=[f"R2 {best.composite:.2f} -> {candidate.composite:.2f}"], margin=margin
    )


def drifted(rubric: Rubric, recorded: Mapping[str, int], rescored: Mapping[str, int]) -> list[str]:
    """T11: dimensions on which the judge, re-scoring the unchanged best, moved beyond the tolerance."""
    tolerance = rubric.thresholds["drift_tolerance"]
    return [
        f"{key} {recorded[key]} -> {rescored[key]}"
        for key in recorded
        if key in rescored and abs(rescored[key] - recorded[key]) > tolerance
    ]


def stop_reason(
    rubric: Rubric, best: float, laps_without_accept: int, laps: int, max_laps: int
) -> StopReason:
    if best >= rubric.thresholds["ship_bar"]:
        return "ship"
    if laps_without_accept >= rubric.thresholds["plateau_laps"]:
        return "plateau"
    if laps >= max_laps:
        return "max_laps"
    return ""
