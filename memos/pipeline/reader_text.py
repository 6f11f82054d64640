"""A writer's sections made whole before a reader sees them, the same way in every workflow: code resolves
the typed numbers a fact backs, then the writer is asked once per section about the sentences still
withheld, those calls in parallel under the run's bound (agents.text.repair).

A re-ask goes through the run's gateway like every call: recorded in the ledger and answered from it on a
rerun with unchanged inputs, so a resumed stage pays for nothing twice. A re-ask that fails (an endpoint
down, an answer that does not fit its schema, a spent budget) changes nothing: its sentences stay withheld,
and the section's repair says no rewrite was made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from agents.llm.errors import LLMError
from agents.llm.gateway import LLMGateway
from agents.llm.types import CallContext, RenderedPrompt
from agents.text.patterns import Prose
from agents.text.repair import (
    Fault,
    Rewrites,
    SectionRepair,
    Writer,
    apply_rewrites,
    faults,
    quoted,
    resolve,
    rewrites_schema,
    tally,
)
from agents.text.sentences import within_bounds
from memos.pipeline import fanout
from memos.pipeline.breadth import Breadth
from memos.pipeline.context import StageContext
from memos.pipeline.gateway import gateway
from memos.pipeline.prompts import template

REASK_PROMPT = "reask"


@dataclass(frozen=True)
class Section:
    """One section of a writer's prose: its texts (a paragraph, or the items of a list) in reading order."""

    key: str
    title: str
    texts: list[str]
    # The figures its re-ask shows, under a heading, one per line with the value code renders: a memo's
    # sections each show the writer's whole list, a deck's slide only what it prints (the whole list is
    # 4,000 tokens and more).
    facts: str


@dataclass(frozen=True)
class Asking:
    """Who wrote the sections and what the re-ask shows them."""

    role: str  # the writer's role: its endpoint answers the re-ask
    stage: str
    what: str  # "an investment memo on Apple Inc. (AAPL)"
    how: str  # how the writer may mention a figure instead ("as its fact id in double brackets ...")
    prose: Prose  # what a rewrite may hold besides plain words (its pattern)


@dataclass(frozen=True)
class Repaired:
    texts: dict[str, list[str]]  # by section key
    repairs: list[SectionRepair]


# Desk-wide: a finished section's withheld sentences are asked again of their writer, one call per section.
REASKS = Breadth(
    "re-asks",
    "each section's withheld sentences are asked again of their writer, once, apart from the other sections",
    distinct_verdicts="where the writer is a verdict role (the managing director), each asks about another "
    "section's text",
)


def repair_sections(
    ctx: StageContext, sections: Sequence[Section], writer: Writer, asking: Asking
) -> Repaired:
    """``sections`` as a reader gets them: typed numbers resolved, then one re-ask per section still
    holding a withheld sentence, and what each section had repaired."""
    resolved: dict[str, list[str]] = {}
    repaired: dict[str, int] = {}
    for section in sections:
        resolved[section.key], repaired[section.key] = resolve(section.texts, writer)
    found = {section.key: faults(resolved[section.key], writer) for section in sections}
    asked = {key: items for key, items in found.items() if items}
    answers: dict[str, Rewrites | None] = {}
    if asked:
        gw = gateway()
        by_key = {section.key: section for section in sections}
        prompts = {key: _prompt(ctx, asking, by_key[key], items) for key, items in asked.items()}
        schemas = {key: rewrites_schema(len(items), asking.prose) for key, items in asked.items()}
        work = {key: partial(_reask, gw, ctx, asking, prompts[key], schemas[key]) for key in asked}
        # Re-asks showing the writer's whole list (a memo's sections) begin with the same figures: the
        # embedded model reads them once when asked one re-ask after another, and once a call when asked
        # them together.
        alike = gw.shares_start([(prompts[key], schemas[key]) for key in asked], role=asking.role)
        ctx.check()
        for key, future in fanout.in_parallel(
            work.items(), limit=1 if alike else gw.settings.max_concurrency, breadth=REASKS
        ):
            try:
                answers[key] = future.result()
            except LLMError:
                answers[key] = None  # the sentences stay withheld; the repair records no rewrite
    texts: dict[str, list[str]] = {}
    repairs: list[SectionRepair] = []
    for section in sections:
        final, rewritten = resolved[section.key], 0
        answer = answers.get(section.key)
        if answer is not None:
            final, rewritten = apply_rewrites(final, asked[section.key], answer, writer)
        texts[section.key] = final
        repairs.append(
            tally(
                section.title,
                section.texts,
                final,
                writer,
                resolved=repaired[section.key],
                reasked=rewritten,
                asked=section.key in asked,
            )
        )
    return Repaired(texts, repairs)


def _prompt(ctx: StageContext, asking: Asking, section: Section, items: list[Fault]) -> RenderedPrompt:
    return template(REASK_PROMPT, ctx.run).render(
        {"what": asking.what, "section": section.title, "how": asking.how, "facts": section.facts},
        {"sentences": quoted(items)},
        nonce=ctx.run.nonce,
    )


def _reask(
    gw: LLMGateway, ctx: StageContext, asking: Asking, prompt: RenderedPrompt, schema: type[Rewrites]
) -> Rewrites:
    context = CallContext(run_id=ctx.run_id, stage=asking.stage, role=asking.role)
    answer = gw.complete(prompt, schema, context=context)
    return Rewrites.model_validate(within_bounds(Rewrites, answer.model_dump()))
