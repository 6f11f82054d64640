"""Before a draft is built: the drafter asked once per slide about the sentences code would withhold (a
figure typed that no figure of the run backs, or another script than the brief's), through the same
machinery as every workflow's writers (memos.pipeline.reader_text). A typed number a figure backs is not
asked about: code prints that figure in its place when the deck is built (agents.deck.resolve).
"""

from __future__ import annotations

from collections.abc import Mapping

from agents.deck.assign import figures_of
from agents.deck.resolve import FIRST_DRAFTED, SUMMARY_SECTION, DeckWriter
from agents.deck.schemas import BulletDraft, DeckDraft, SlideDraft
from agents.deck.spec import Figure
from agents.llm.roles import Role
from agents.text.patterns import Prose
from agents.text.repair import SectionRepair
from memos.pipeline.context import StageContext
from memos.pipeline.deck.inputs import figure_lines, inputs
from memos.pipeline.deck.plan import DRAFT
from memos.pipeline.reader_text import Asking, Section, repair_sections

FRAMING = "title and thesis"
HOW = (
    "Do not write a figure's value: the slide prints its figures after its words, from the fact store; "
    "a sentence may say what they show."
)


def reasked(ctx: StageContext, draft: DeckDraft) -> tuple[DeckDraft, list[SectionRepair]]:
    """The draft with each faulty sentence the drafter rewrote in place, and what each slide had repaired."""
    found = inputs(ctx)
    writer = DeckWriter(known=frozenset(), keep=found.keep, language=found.language, figures=found.figures)
    company = ctx.company
    asking = Asking(
        role=Role.DRAFTER,
        stage=DRAFT,
        what=f"a board deck on {company.name} ({company.ticker})",
        how=HOW,
        prose=Prose(),
    )
    # Each re-ask shows the figures its slide prints (the title and thesis: the summary's reasons'), not the
    # run's whole list: on the embedded model a deck's first re-ask read 4,500 tokens of it (85 s).
    summary = next((slide for slide in draft.slides if slide.section == SUMMARY_SECTION), None)
    sections = [
        Section(FRAMING, FRAMING, [draft.title, draft.thesis], facts=_printed(summary, found.figures))
    ]
    sections += [
        Section(
            f"slide {number}",
            f"slide {number} ({slide.section})",
            _texts(slide),
            facts=_printed(slide, found.figures),
        )
        for number, slide in enumerate(draft.slides, start=FIRST_DRAFTED)
    ]
    if not any(writer.withholds(sentence) for section in sections for sentence in section.texts):
        return draft, []
    repaired = repair_sections(ctx, sections, writer, asking)
    title, thesis = repaired.texts[FRAMING]
    slides = [
        _rewritten(slide, repaired.texts[f"slide {number}"])
        for number, slide in enumerate(draft.slides, start=FIRST_DRAFTED)
    ]
    repairs = [
        repair.model_copy(update={"section": section.key})
        for repair, section in zip(repaired.repairs, sections, strict=True)
    ]
    return draft.model_copy(update={"title": title, "thesis": thesis, "slides": slides}), repairs


def _printed(slide: SlideDraft | None, figures: Mapping[str, Figure]) -> str:
    """The figures ``slide`` places as a re-ask shows them."""
    printed = figures_of([] if slide is None else slide.fact_ids(), figures)
    if not printed:
        return "The slide prints no figures."
    return "The figures the slide prints (values rendered by code):\n" + figure_lines(printed)


def _texts(slide: SlideDraft) -> list[str]:
    texts = [slide.title, slide.takeaway, *(bullet.text for bullet in slide.bullets)]
    if slide.table is not None:
        texts.append(slide.table.title)
    if slide.chart is not None:
        texts.append(slide.chart.title)
    return texts


def _rewritten(slide: SlideDraft, texts: list[str]) -> SlideDraft:
    """``slide`` with its words replaced, in the order ``_texts`` read them."""
    title, takeaway, *rest = texts
    bullets: list[BulletDraft] = [
        bullet.model_copy(update={"text": text}) for bullet, text in zip(slide.bullets, rest, strict=False)
    ]
    rest = rest[len(slide.bullets) :]
    update: dict[str, object] = {"title": title, "takeaway": takeaway, "bullets": bullets}
    if slide.table is not None:
        update["table"] = slide.table.model_copy(update={"title": rest.pop(0)})
    if slide.chart is not None:
        update["chart"] = slide.chart.model_copy(update={"title": rest.pop(0)})
    return slide.model_copy(update=update)
