"""One candidate deck, made and measured by code: resolve, render (T6), fact-check (T5), lint (T7) and
humanizer (T12).

Both renders are fact-checked from their own text (the PPTX and the PDF), against the figures the data stage
built from the fact store; the lint reads the PPTX (shapes, boxes and font metrics), the humanizer the words
and the styling of both.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

from agents.deck.code_slides import code_kind
from agents.deck.factcheck.check import FactLookup, KnownFact, check, check_texts
from agents.deck.factcheck.extract import SlideText, deck_pdf_texts, slide_texts
from agents.deck.gates import Measured
from agents.deck.humanizer import humanize_findings
from agents.deck.lint.checks import lint_pptx
from agents.deck.outputs import Candidate, Finding
from agents.deck.render.pdf import deck_html, page_keys, pdf_of_html, slide_pages
from agents.deck.render.pptx import render_pptx
from agents.deck.resolve import DeckFrame, resolve
from agents.deck.schemas import DeckDraft, Scope
from agents.deck.spec import Deck, Figure
from agents.text.scripts import Language
from agents.text.sentences import trim_cut

# Lint rules that make a slide broken (R1's structural validity, R2's structure): a reader would see it.
BROKEN_RULES = frozenset(
    {"overflow", "off_slide", "overlap", "empty_text", "placeholder_text", "chart_missing_figures"}
)
WALL_RULE = "wall_of_text"


def lookup_for(figures: Mapping[str, Figure]) -> FactLookup:
    """The fact-check's authority: the figures the data stage built from the fact store for this run."""

    def lookup(ids: Collection[str]) -> dict[str, KnownFact]:
        return {
            fact_id: KnownFact(
                value=Decimal(figures[fact_id].value),
                unit=figures[fact_id].unit,
                period=figures[fact_id].period,
            )
            for fact_id in ids
            if fact_id in figures
        }

    return lookup


def build(
    draft: DeckDraft,
    figures: Mapping[str, Figure],
    frame: DeckFrame,
    scope: Scope,
    *,
    keep: frozenset[str] = frozenset(),
    language: Language | None = None,
) -> Candidate:
    """The draft resolved and measured. A text the model's answer cut at its bound ends at its last whole
    sentence: a board never reads half of one. Text in another script than the brief's ``language`` stays
    for a reviser to fix, and is a humanizer finding (agents.deck.slips)."""
    draft, trimmed = trim_cut(draft)
    deck, notes = resolve(draft, figures, frame, keep=keep)
    measured = measure(
        deck,
        figures,
        scope,
        unresolved=notes.unresolved,
        withheld=notes.withheld,
        dropped=notes.dropped,
        language=language,
    )
    return measured.model_copy(
        update={"trimmed": trimmed, "resolved": notes.resolved, "contradicted": notes.contradicted}
    )


def measure(
    deck: Deck,
    figures: Mapping[str, Figure],
    scope: Scope,
    *,
    unresolved: list[str] | None = None,
    withheld: list[str] | None = None,
    dropped: list[str] | None = None,
    language: Language | None = None,
) -> Candidate:
    # Each slide's HTML made once: the document, the page keys and a lap's changed pages are made of it.
    slides_html = slide_pages(deck)
    html, lookup = deck_html(deck, pages=slides_html), lookup_for(figures)
    # The PDF is drawn and read on a thread of its own while this one renders and reads the PPTX: with a
    # print server the drawing runs in another process, and a draft's measure took 0.67 s one after the
    # other (PDF 0.40, PPTX and its checks 0.24).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="deck-pdf") as pool:
        read_back = pool.submit(pdf_read_back, deck, slides_html)
        pptx = render_pptx(deck)
        pptx_report = check(pptx, lookup)
        lint_found = lint_pptx(pptx, deck)
        pdf_texts, pages = read_back.result()
    mismatches: list[str] = []
    for name, report in (("pptx", pptx_report), ("pdf", check_texts(deck, pdf_texts, lookup))):
        mismatches.extend(
            f"{name} slide {figure.slide}: {figure.status} {figure.text or '(missing)'}"
            + (f", expected {figure.expected}" if figure.expected else "")
            for figure in report.figures
            if figure.status != "ok"
        )
    lint = [Finding(rule=f.rule, slide=f.slide, shape=f.shape, message=f.message) for f in lint_found]
    human = [
        Finding(rule=f.rule, slide=f.slide, shape=f.where, message=f'{f.message}: "{f.quote}"')
        for f in humanize_findings(deck, pptx=pptx, html=html, language=language)
    ]
    present = set(deck.sections())
    kinds = {slide.kind for slide in deck.slides}
    missing = [
        section.name
        for section in scope.required_sections
        if code_kind(section.name) not in kinds
        and (section.name not in present or not _section_has_words(deck, section.name))
    ]
    if pages != len(deck.slides):
        lint.append(
            Finding(
                rule="render",
                slide=0,
                message=f"the PDF has {pages} pages for {len(deck.slides)} slides",
            )
        )
    measured = Measured(
        figures=len(deck.figures()),
        mismatches=len(mismatches),
        unresolved_ids=len(unresolved or []),
        missing_sections=missing,
        broken=[
            f"slide {f.slide} {f.shape}: {f.message}" for f in lint if f.rule in BROKEN_RULES | {"render"}
        ],
        walls_of_text=sum(1 for f in lint if f.rule == WALL_RULE),
        chart_figures=sum(len(slide.chart.points) for slide in deck.slides if slide.chart is not None),
        humanizer=len(human),
        repeated=repeated_parts(deck),
    )
    return Candidate(
        deck=deck,
        measured=measured,
        unresolved=unresolved or [],
        withheld=withheld or [],
        dropped=dropped or [],
        mismatches=mismatches,
        lint=lint,
        humanizer=human,
        pages=pages,
    )


def pdf_read_back(deck: Deck, pages: Sequence[str]) -> tuple[list[SlideText], int]:
    """What the deck's PDF reads back, page by page, and its number of pages (``pages``: its slides' HTML,
    ``slide_pages``). Only the slides whose pages this process never read are drawn (a lap's changed
    slides: extract.deck_pdf_texts); where one of them overflows its page, the whole deck is drawn and
    read, as a reader's PDF has it."""
    keys = page_keys(deck, pages)
    texts = deck_pdf_texts(
        keys, lambda indexes: pdf_of_html(deck_html(deck, pages=[pages[i] for i in indexes])).pdf
    )
    if texts is not None:
        return texts, len(deck.slides)
    whole = pdf_of_html(deck_html(deck, pages=pages))
    return slide_texts(whole.pdf, page_keys=keys), whole.pages


def repeated_parts(deck: Deck) -> int:
    """Bullets, tables and charts that say again what an earlier slide said (the same words or the same
    figures): a board reads each once."""
    seen: set[tuple[str, ...]] = set()
    repeats = 0
    for slide in deck.slides:
        parts = [
            ("bullet", b.text.casefold().strip(), *(f.fact_id for f in b.figures)) for b in slide.bullets
        ]
        if slide.table is not None:
            parts.append(("table", *(f.fact_id for f in slide.table.rows)))
        if slide.chart is not None:
            parts.append(("chart", *(f.fact_id for f in slide.chart.points)))
        for part in parts:
            repeats += part in seen
            seen.add(part)
    return repeats


def _section_has_words(deck: Deck, section: str) -> bool:
    return any(slide.title and slide.takeaway for slide in deck.slides if slide.section == section)
