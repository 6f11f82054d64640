"""Stage 3, draft and the R1 gate (seed 001 section 3): L3 drafts, code renders and measures, the judge
grades, code applies the hard gates and the entry bar. A failing draft is rebuilt, told what failed, up to the
rubric's ``max_rebuilds``; then the deck is escalated ("can't clear the entry bar") and the loop is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from pydantic import BaseModel

from agents.deck.assign import SectionPlanned, figures_of, latest_figures
from agents.deck.candidate import build
from agents.deck.gates import r1_result
from agents.deck.humanizer import OTHER_SCRIPT
from agents.deck.narrowing import framing_schema, section_slide_schema
from agents.deck.outputs import DraftOutput
from agents.deck.resolve import SUMMARY_SECTION, DeckFrame
from agents.deck.schemas import DeckDraft, Framing, SectionPlan, SlideDraft
from agents.llm.errors import BudgetExceeded, LLMError
from agents.llm.gateway import LLMGateway
from agents.llm.roles import Role
from agents.text.sentences import trim_cut, within_bounds
from memos.pipeline.context import StageContext
from memos.pipeline.deck.breadths import SLIDES
from memos.pipeline.deck.inputs import figure_lines, inputs
from memos.pipeline.deck.judging import checked_quotes, found_pairs, judge_r1
from memos.pipeline.deck.plan import BASELINE, DRAFT, REFINE, draft_key, lap_key
from memos.pipeline.deck.reask import reasked
from memos.pipeline.deck.scope import scope_text
from memos.pipeline.errors import StageFailed
from memos.pipeline.fanout import in_parallel
from memos.pipeline.gateway import gateway
from memos.pipeline.prompts import template
from memos.pipeline.skips import skip_steps


def run_draft(ctx: StageContext) -> None:
    attempts = inputs(ctx).config.max_rebuilds + 1
    base = inputs(ctx).config.base_version
    if base is not None:
        reason = "not needed: a refinement cycle continues from an accepted deck version"
        skip_steps(ctx, DRAFT, [draft_key(n) for n in range(1, attempts + 1)], reason)
        return
    gw = gateway()
    previous: DraftOutput | None = None
    for attempt in range(1, attempts + 1):
        done = ctx.once(draft_key(attempt), DraftOutput, partial(draft_once, ctx, gw, attempt, previous))
        if done is None:
            return  # skipped: an earlier pass of this stage settled the draft
        if done.r1.passed:
            skip_steps(
                ctx,
                DRAFT,
                [draft_key(n) for n in range(attempt + 1, attempts + 1)],
                "not needed: the draft cleared R1",
            )
            return
        previous = done
    # Every attempt failed the gate: escalate. The loop has nothing to refine.
    skip_steps(
        ctx,
        REFINE,
        [BASELINE, *(lap_key(n) for n in range(1, inputs(ctx).config.max_laps + 1))],
        "not run: no draft cleared the entry bar (escalated)",
    )


def draft_once(ctx: StageContext, gw: LLMGateway, attempt: int, previous: DraftOutput | None) -> DraftOutput:
    draft, repairs = reasked(ctx, draft_deck(ctx, gw, rebuild_note(previous)))
    scope = inputs(ctx).scope.scope
    found = inputs(ctx)
    candidate = build(draft, found.figures, found.frame, scope, keep=found.keep, language=found.language)
    rubric = inputs(ctx).r1
    # The judge is asked only when every hard gate passed: a deck failing one is rebuilt whatever its grade.
    hard = r1_result(rubric, candidate.measured, None)
    if not all(gate.passed for gate in hard.gates):
        return DraftOutput(attempt=attempt, repairs=repairs, candidate=candidate, r1=hard)
    judgement = judge_r1(ctx, gw, candidate.deck, candidate.measured, DRAFT)
    quotes = checked_quotes(judgement, candidate.deck)
    return DraftOutput(
        attempt=attempt,
        repairs=repairs,
        candidate=candidate,
        judgement=judgement,
        quotes=quotes,
        r1=r1_result(rubric, candidate.measured, judgement, found_pairs(quotes)),
    )


def draft_deck(ctx: StageContext, gw: LLMGateway, rebuild: str) -> DeckDraft:
    """Every section's slide and the deck's framing (title, thesis, the executive summary), drafted at once
    under the concurrency bound: independent calls, and for a small model one slide per answer keeps the
    slides apart (asked for a whole deck at once, the embedded 1.5B wrote one slide five times). Each
    section's drafter is offered only the figures code assigned to it (agents.deck.assign), so no table or
    chart appears twice. A section whose slide could not be drafted is missing from the deck, and the scope
    gate says so."""
    scope = inputs(ctx).scope.scope
    company = ctx.company
    found = inputs(ctx).figures
    plan = inputs(ctx).plan
    shared = {"company": company.name, "ticker": company.ticker}
    # The scope's section names and purposes are model-written, the brief a person's words, the rebuild note
    # quotes the judge: all of it reaches the prompt fenced, as data.
    untrusted = {"scope": scope_text(scope), "brief": inputs(ctx).brief}
    names = "\n".join(f"- {section.name}" for section in inputs(ctx).body)

    def slide(section: SectionPlan) -> SlideDraft:
        ctx.check()
        planned = plan.sections.get(section.name)
        own = figures_of(planned.figures, found) if planned is not None and planned.figures else found
        values = shared | {"figures": figure_lines(own), "graphic": graphic_note(planned)}
        fenced = untrusted | {
            "sections": names,
            "section": f"{section.name}: {section.purpose}",
            "rebuild": rebuild,
        }
        prompt = template("deck_drafter", ctx.run).render(values, fenced, nonce=ctx.run.nonce)
        schema = section_slide_schema(tuple(own), section.name)
        # Cut back at the bound it was asked for (tighter than a draft may hold): a board never reads half
        # of a sentence.
        answer, _ = trim_cut(gw.complete(prompt, schema, context=inputs(ctx).call(DRAFT, Role.DRAFTER)))
        # The section is the one asked for, whatever the answer says: code routes, the model writes.
        return SlideDraft.model_validate(
            within_bounds(SlideDraft, answer.model_dump() | {"section": section.name})
        )

    def framing() -> Framing:
        ctx.check()
        # Each metric's latest year and quarter only: a reason states where the company stands now.
        offered = latest_figures(found)
        values = shared | {"figures": figure_lines(offered)}
        prompt = template("deck_framing", ctx.run).render(
            values, untrusted | {"memo": memo_note(inputs(ctx).frame)}, nonce=ctx.run.nonce
        )
        schema = framing_schema(tuple(offered))
        # Cut back at the bound it was asked for (tighter than a draft may hold): a board never reads half
        # of a sentence.
        answer, _ = trim_cut(gw.complete(prompt, schema, context=inputs(ctx).call(DRAFT, Role.DRAFTER)))
        return Framing.model_validate(within_bounds(Framing, answer.model_dump()))

    # A section the desk's own slides answer (an executive summary, the risks, the sources) is not drafted;
    # code adds body sections where the scope left too few (DeckInputs.body).
    drafted = inputs(ctx).body
    tasks: list[tuple[str, Callable[[], BaseModel]]] = [("", framing)]
    tasks += [(section.name, partial(slide, section)) for section in drafted]
    answers: dict[str, BaseModel] = {}
    for key, future in in_parallel(tasks, limit=gw.settings.max_concurrency, breadth=SLIDES):
        try:
            answers[key] = future.result()
        except BudgetExceeded:
            raise
        except LLMError:
            continue  # that slide is missing: the gate names its section
    slides = [answer for s in drafted if isinstance(answer := answers.get(s.name), SlideDraft)]
    head = answers.get("")
    if drafted and not slides:
        raise StageFailed(f"none of the {len(drafted)} sections' slides could be drafted")
    if not isinstance(head, Framing):  # no framing: the scope's decision stands in (its own words)
        return DeckDraft(title=scope.decision[:90], thesis=scope.decision, slides=slides)
    return DeckDraft(title=head.title, thesis=head.thesis, slides=[summary_slide(head), *slides])


def summary_slide(head: Framing) -> SlideDraft:
    """The executive summary: the recommendation as its title, the thesis as its takeaway, the three
    reasons as its bullets."""
    return SlideDraft(
        section=SUMMARY_SECTION,
        title=head.recommendation,
        takeaway=head.thesis,
        bullets=head.reasons,
    )


def graphic_note(planned: SectionPlanned | None) -> str:
    if planned is not None and planned.bridge:
        return (
            "Code draws this slide's chart: the latest year's bridge from revenue to net income. "
            "Leave the chart out; a table or bullets may explain the bridge."
        )
    if planned is not None and planned.earnings:
        return (
            "Code draws this slide's chart: what moved net income from the year before (revenue's change "
            "and each cost's effect). Leave the chart out; bullets may say which line moved it most."
        )
    if planned is not None and planned.mix:
        return (
            "Code shows revenue by line on this slide: as its chart, or as its table if you choose a chart "
            "of another figure. Leave the table out."
        )
    return "Choose a chart or a table only where this slide's point is a number."


def memo_note(frame: DeckFrame) -> str:
    memo = frame.memo
    if memo is None:
        return "This brief has no memo yet."
    return f"The brief's latest memo ({memo.version}) recommends {memo.recommendation}."


def rebuild_note(previous: DraftOutput | None) -> str:
    """What the drafter is told on a rebuild: code's reasons, and the judge's weakest parts (model-written,
    but they only describe the drafter's own deck)."""
    if previous is None:
        return "This is the first draft."
    lines = [f"Your previous draft (attempt {previous.attempt}) did not clear the entry bar:"]
    lines += [f"- {gate.key}: {gate.reason}" for gate in previous.r1.gates if not gate.passed]
    if previous.judgement is not None:
        lines.append(f"- graded composite {previous.r1.composite:.2f}, entry bar {previous.r1.entry_bar:.2f}")
        lines += [f"- slide {w.slide} ({w.dimension}): {w.problem}" for w in previous.judgement.weakest]
    if previous.candidate.withheld:
        lines.append("- sentences removed for typing numbers: " + ", ".join(previous.candidate.withheld[:5]))
    contradicted = previous.candidate.contradicted[:3]
    lines += [f"- words removed, their own figures say otherwise: {c}" for c in contradicted]
    slipped = [f for f in previous.candidate.humanizer if f.rule == OTHER_SCRIPT]
    lines += [f"- slide {f.slide} {f.shape}: {f.message}" for f in slipped[:3]]
    return "\n".join(lines)
