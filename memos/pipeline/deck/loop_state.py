"""The refinement loop's working state, rebuilt from its finished steps: the best-so-far, the figures in
force, laps since the last acceptance, and the changelog. Nothing of it lives anywhere else, so a resumed
stage (another worker, after a kill) picks up exactly where the last finished lap left it."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.deck.gates import Scored
from agents.deck.outputs import BaselineOutput, ChangelogEntry, DraftOutput, Finding, LapOutput
from agents.deck.schemas import R2Judgement
from agents.deck.spec import Deck, Figure


@dataclass
class Best:
    deck: Deck
    scored: Scored
    judgement: R2Judgement
    lap: int  # 0: the baseline
    findings: list[Finding]  # lint and humanizer findings: what the planner may target


@dataclass
class LoopState:
    best: Best
    figures: dict[str, Figure]
    data_version: str
    laps_done: int = 0
    without_accept: int = 0
    changelog: list[ChangelogEntry] = field(default_factory=list)
    stopped: str = ""

    @classmethod
    def start(cls, baseline: BaselineOutput, figures: dict[str, Figure]) -> LoopState:
        best = Best(baseline.deck, baseline.scored, baseline.judgement, 0, baseline.findings)
        return cls(best=best, figures=figures, data_version=baseline.epoch.data_version)

    def add(self, lap: LapOutput) -> None:
        self.laps_done = lap.lap
        if lap.figures:
            self.figures = {figure.fact_id: figure for figure in lap.figures}
            self.data_version = lap.data_version or self.data_version
        accepted = lap.decision.accepted and lap.candidate is not None and lap.scored is not None
        if accepted and lap.candidate is not None and lap.scored is not None and lap.judgement is not None:
            found = [*lap.candidate.lint, *lap.candidate.humanizer]
            self.best = Best(lap.candidate.deck, lap.scored, lap.judgement, lap.lap, found)
            self.without_accept = 0
        else:
            self.without_accept += 1
        order = lap.work_order
        self.changelog.append(
            ChangelogEntry(
                lap=lap.lap,
                action=order.action if order else "none",
                target=order.target if order else "",
                accepted=accepted,
                margin=lap.decision.margin,
                reasons=lap.decision.reasons,
                note=lap.note,
            )
        )
        self.stopped = lap.stop


def accepted_draft(drafts: list[DraftOutput]) -> DraftOutput | None:
    return next((draft for draft in drafts if draft.r1.passed), None)


def best_failed_draft(drafts: list[DraftOutput]) -> DraftOutput | None:
    """An escalated deck is the attempt that came closest: most gates passed, then the higher composite."""
    return max(
        drafts,
        key=lambda d: (sum(gate.passed for gate in d.r1.gates), d.r1.composite, -d.attempt),
        default=None,
    )
