"""What the deck's stages read of their run, as one typed object built once per stage (``inputs(ctx)``):
its configuration, its pinned rubrics, the frozen scope, the figures the data stage chose, the frame every
slide is drawn in, and the brief's own words and numbers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from agents.deck.assign import Assignment, assign, body_sections
from agents.deck.code_slides import MemoLines, code_kind
from agents.deck.outputs import DeckEvidence, ScopeOutput
from agents.deck.profile import DeckConfig
from agents.deck.resolve import DeckFrame
from agents.deck.rubrics import DECK_R1, DECK_R2
from agents.deck.schemas import SectionPlan
from agents.deck.spec import Figure
from agents.llm.types import CallContext
from agents.rubrics import Rubric
from agents.text.scripts import Language
from memos.pipeline.context import StageContext
from memos.pipeline.deck.plan import DATA, FIGURES, SCOPE
from memos.pipeline.deck.settings import deck_settings
from memos.pipeline.errors import StageFailed
from memos.pipeline.inputs import brief_block, kept_numbers, language
from memos.pipeline.prompts import rubric


@dataclass
class DeckInputs:
    ctx: StageContext

    @cached_property
    def config(self) -> DeckConfig:
        return DeckConfig.model_validate(self.ctx.config)

    @cached_property
    def r1(self) -> Rubric:
        return rubric(DECK_R1, self.ctx.run)

    @cached_property
    def r2(self) -> Rubric:
        return rubric(DECK_R2, self.ctx.run)

    @cached_property
    def scope(self) -> ScopeOutput:
        """The frozen scope (read once the scope step has finished)."""
        found = self.ctx.output(SCOPE, SCOPE, ScopeOutput)
        if found is None:
            raise StageFailed("the scope step did not finish")
        return found

    @cached_property
    def evidence(self) -> DeckEvidence:
        found = self.ctx.output(DATA, FIGURES, DeckEvidence)
        if found is None:
            raise StageFailed("the figures step did not finish")
        return found

    @cached_property
    def figures(self) -> dict[str, Figure]:
        return {figure.fact_id: figure for figure in self.evidence.figures}

    @cached_property
    def body(self) -> list[SectionPlan]:
        """The sections whose slides are drafted: the scope's, less those the desk's own slides answer (an
        executive summary, the risks, the sources), and code's own after them where fewer than three remain
        (agents.deck.assign.body_sections)."""
        asked = [(s.name, s.purpose) for s in self.scope.scope.required_sections if code_kind(s.name) is None]
        sections = body_sections(asked, self.evidence.figures, own=self.ctx.company.ticker)
        return [SectionPlan(name=name, purpose=purpose) for name, purpose in sections]

    @cached_property
    def plan(self) -> Assignment:
        """Which figures each section's slide may show (agents.deck.assign)."""
        sections = [(s.name, s.purpose) for s in self.body]
        return assign(sections, self.evidence.figures, own=self.ctx.company.ticker)

    @cached_property
    def frame(self) -> DeckFrame:
        company, brief = self.ctx.company, self.ctx.run.brief
        evidence = self.evidence
        as_of = evidence.as_of
        memo = (
            MemoLines(
                version=evidence.memo_version,
                falsifiers=tuple(evidence.memo_falsifiers),
                recommendation=evidence.memo_recommendation,
                thesis=evidence.memo_thesis,
                catalysts=tuple(evidence.memo_catalysts),
            )
            if evidence.memo_version
            else None
        )
        return DeckFrame(
            company=company.name,
            ticker=company.ticker,
            subtitle=f"For {brief.audience}" + (f" · data as of {as_of}" if as_of else ""),
            theme=deck_settings().theme,
            plan=self.plan,
            memo=memo,
        )

    @cached_property
    def brief(self) -> str:
        """The analyst's words, for a prompt's fence (memos.pipeline.inputs)."""
        return brief_block(self.ctx)

    @cached_property
    def language(self) -> Language:
        """What counts as the brief's own script(s), and the names a slide may spell in another
        (memos.pipeline.inputs)."""
        return language(self.ctx)

    @cached_property
    def keep(self) -> frozenset[str]:
        """The numbers the brief itself contains: a slide may repeat them."""
        return kept_numbers(self.ctx)

    def call(self, stage: str, role: str) -> CallContext:
        return CallContext(run_id=self.ctx.run_id, stage=stage, role=role)


def inputs(ctx: StageContext) -> DeckInputs:
    return ctx.inputs(DeckInputs)


def figure_lines(found: Mapping[str, Figure]) -> str:
    return "\n".join(
        f"- {f.fact_id}: {f.label} {f.period} = {f.display} ({f.source})" for f in found.values()
    )
