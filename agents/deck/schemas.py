"""What each deck role must answer (seed 001 section 6b): the JSON schemas the gateway enforces.

Models write words and pick fact ids; they never write a figure. Code resolves the ids into figures
(agents.deck.resolve), withholds any sentence in which a model typed a number, and computes every score
rule (agents.deck.gates) from the integer scores the judge gives.

Every string and list is bounded so the longest answer fits its prompt's ``max_tokens`` (a test checks every
prompt, as for the memo): a decoder that enforces the schema closes a field at its bound, but never has to
stop the whole answer half-way. The prompts ask for about half of each bound.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

R1Dimension = Literal[
    "thesis_clarity", "coverage_depth", "narrative_flow", "visual_baseline", "actionability"
]
R2Dimension = Literal[
    "actionability",
    "executive_altitude",
    "visual_digestibility",
    "clean_concise_story",
    "metric_traceability",
]
# Seed 001 section 4a: the invariants the judge measures (truth is code's: the fact-check). A candidate
# whose score on one falls more than tau below the best-so-far's is rejected whatever its composite.
ProtectedDimension = Literal["scope_adherence", "story_integrity", "visual_integrity"]
# The planner's taxonomy (seed 001 section 8 leaves it open): one action per lap, chosen fresh.
Action = Literal[
    # code re-selects the facts (a newer filing opens a new epoch), then the named slides are redrawn
    "repull_analysis",
    "rewrite_section",  # the words of the named slides: titles, takeaways, bullets
    "fix_graphic",  # a slide's chart or table: which figures, which kind of chart
    "merge_slides",  # two or three slides become one
    "add_slide",  # a slide the story lacks, after the named slide (within the profile's bound)
    "remove_slide",  # a named slide the story does not need (never below the draft's minimum)
    "tighten_text",  # fewer, shorter words on the named slides
    "humanize_text",  # the humanizer's findings on the named slides (em-dashes, hedging, filler)
]

Name = Annotated[str, Field(min_length=1, max_length=40)]
Title = Annotated[str, Field(min_length=1, max_length=90)]
Sentence = Annotated[str, Field(min_length=1, max_length=160)]
Point = Annotated[str, Field(min_length=1, max_length=140)]
Quote = Annotated[str, Field(min_length=1, max_length=160)]
SlideNumber = Annotated[int, Field(ge=1, le=20)]
Score = Annotated[int, Field(ge=0, le=5)]
MAX_SLIDES = 8
FactId = Annotated[str, Field(min_length=1, max_length=80)]  # narrowed per run to the ids it was given


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- L1 scope builder, L2 rubric builder


# A scope's body sections (the desk adds the title, summary, risks, watch and sources slides itself).
MIN_SECTIONS, MAX_SECTIONS = 3, 6


class SectionPlan(_Strict):
    name: Name
    purpose: Sentence


class Scope(_Strict):
    """The brief, frozen: what the deck must contain for whom, and the questions it must answer."""

    audience: Sentence
    decision: Sentence  # the decision the deck supports
    required_sections: list[SectionPlan] = Field(min_length=MIN_SECTIONS, max_length=MAX_SECTIONS)
    key_questions: list[Sentence] = Field(min_length=2, max_length=4)


class Descriptor(_Strict):
    dimension: Literal[R1Dimension, R2Dimension]
    five: Sentence  # what a 5 looks like for this brief


class RubricProposal(_Strict):
    """Brief-specific anchors drafted on top of the active R1/R2 versions: shown to the judge as guidance and
    offered to an admin to adopt; the weights and thresholds stay the governed rubric's."""

    descriptors: list[Descriptor] = Field(min_length=1, max_length=10)


# --- L3 drafter, L6 reviser


class BulletDraft(_Strict):
    text: Point
    figures: list[FactId] = Field(max_length=2)  # printed by code after the words


# What a model is asked for is tighter than what a draft may hold (a draft frozen by an older desk still
# validates): on the embedded model, 140-character bullets beside a table made every slide a wall of text.
ASKED_POINT_CHARS = 100


class AskedBulletDraft(BulletDraft):
    """A bullet as the drafter and the reviser are asked for it: at most ``ASKED_POINT_CHARS``."""

    text: Annotated[str, Field(min_length=1, max_length=ASKED_POINT_CHARS)]


class TableDraft(_Strict):
    title: Title
    rows: list[FactId] = Field(min_length=2, max_length=5)  # one row each


class ChartDraft(_Strict):
    title: Title
    kind: Literal["bar", "line"]
    points: list[FactId] = Field(min_length=2, max_length=5)  # one metric, in period order


class SlideDraft(_Strict):
    section: Name
    title: Title
    takeaway: Sentence
    bullets: list[BulletDraft] = Field(max_length=3)
    table: TableDraft | None = None
    chart: ChartDraft | None = None

    def fact_ids(self) -> list[str]:
        """The fact ids the slide places, once each, in the order the built slide draws them (bullets, table
        rows, chart points; agents.deck.spec.Slide.figures walks the built slide the same way)."""
        ids = [fact_id for bullet in self.bullets for fact_id in bullet.figures]
        if self.table is not None:
            ids += self.table.rows
        if self.chart is not None:
            ids += self.chart.points
        return list(dict.fromkeys(ids))


class Framing(_Strict):
    """The deck's title and thesis, and its executive summary (the recommendation as the summary slide's
    title, its three reasons as bullets with their figures), drafted beside the sections' slides."""

    title: Title
    thesis: Sentence
    recommendation: Title
    reasons: list[BulletDraft] = Field(min_length=3, max_length=3)


class DeckDraft(_Strict):
    """The drafted slides (the executive summary and the sections' that code does not write itself),
    assembled by code from the drafter's answers."""

    title: Title
    thesis: Sentence
    slides: list[SlideDraft] = Field(min_length=1, max_length=MAX_SLIDES)


class RevisedSlide(_Strict):
    number: SlideNumber  # the slide replaced (a slide the work order names)
    slide: SlideDraft


class Revision(_Strict):
    """The reviser's answer: replacements for the slides the work order names, the named slides it folds
    away (a merge, a removal), a slide it adds (an addition), and why, for the changelog. Code ignores any
    change to a slide the work order does not name, and any the order's action does not allow."""

    slides: list[RevisedSlide] = Field(min_length=0, max_length=3)
    remove: list[SlideNumber] = Field(max_length=2)
    add: list[SlideDraft] = Field(default_factory=list, max_length=1)
    reason: Annotated[str, Field(max_length=160)] = ""


# --- L4 scorer (the judge), L5 planner


class R1Score(_Strict):
    dimension: R1Dimension
    score: Score
    evidence: Quote  # words quoted from the deck that justify the score


class R2Score(_Strict):
    dimension: Literal[R2Dimension, ProtectedDimension]
    score: Score
    evidence: Quote


class WeakPart(_Strict):
    slide: SlideNumber
    dimension: Literal[R1Dimension, R2Dimension, ProtectedDimension]
    problem: Sentence


class R1Judgement(_Strict):
    scores: list[R1Score] = Field(min_length=5, max_length=5)
    weakest: list[WeakPart] = Field(min_length=1, max_length=4)


class R2Judgement(_Strict):
    scores: list[R2Score] = Field(min_length=8, max_length=8)
    weakest: list[WeakPart] = Field(min_length=1, max_length=4)  # ranked, weakest first


class WorkOrder(_Strict):
    """One task per lap: the dimension to raise, one action, the slides it touches and what to do."""

    target: R2Dimension
    action: Action
    slides: list[SlideNumber] = Field(min_length=1, max_length=3)
    instruction: Sentence
