"""Deck schemas narrowed to a run: fact ids become an enum of the figures the run was given, sections an
enum of the scope's required sections, and the slide count the profile's bound.

A constrained decoder (llama.cpp's grammar, OpenAI structured outputs) then cannot invent an id or a
section; code still resolves every id (agents.deck.resolve), because not every endpoint enforces the schema.
The fake OpenAI server answers from these schemas too, so tests and benchmarks get decks grounded in the
run's own figures without a model.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, cast

from pydantic import Field, JsonValue, create_model

from agents.deck.schemas import (
    MIN_SECTIONS,
    AskedBulletDraft,
    ChartDraft,
    Framing,
    R1Judgement,
    R1Score,
    R2Judgement,
    R2Score,
    RevisedSlide,
    Revision,
    Scope,
    SectionPlan,
    SlideDraft,
    TableDraft,
)
from agents.llm.schema import ids_field
from agents.text.patterns import Prose, patterned


def _cited_bullet(name: str, ids: tuple[str, ...], prose: Prose, *, figures: int) -> Any:
    """A bullet as the model is asked for it: patterned words, and up to ``figures`` of the run's ids."""
    return patterned(
        AskedBulletDraft,
        prose,
        ["text"],
        class_name=name,
        figures=(list[str], ids_field(ids, min_length=0, max_length=figures)),
    )


@lru_cache(maxsize=8)
def scope_schema(max_sections: int) -> type[Scope]:
    """The scope with at most ``max_sections`` body sections (the profile's: agents.deck.profile)."""
    return create_model(
        "BoundedScope",
        __base__=Scope,
        required_sections=(
            list[SectionPlan],
            Field(min_length=MIN_SECTIONS, max_length=max(MIN_SECTIONS, max_sections)),
        ),
    )


@lru_cache(maxsize=64)
def slide_schema(ids: tuple[str, ...], sections: tuple[str, ...]) -> type[SlideDraft]:
    """A slide whose figures are among ``ids`` and whose words hold no digit (agents.text.patterns: a deck's
    words reference no fact inline; its figures are printed by code)."""
    prose = Prose()
    bullet = _cited_bullet("CitedBullet", ids, prose, figures=2)
    table = patterned(
        TableDraft,
        prose,
        ["title"],
        class_name="CitedTable",
        rows=(list[str], ids_field(ids, min_length=2, max_length=5)),
    )
    chart = patterned(
        ChartDraft,
        prose,
        ["title"],
        class_name="CitedChart",
        points=(list[str], ids_field(ids, min_length=2, max_length=5)),
    )
    slide = patterned(
        SlideDraft,
        prose,
        ["title", "takeaway"],
        class_name="CitedSlide",
        section=(str, Field(min_length=1, max_length=40, json_schema_extra={"enum": list(sections)})),
        bullets=(list[bullet], Field(max_length=3)),  # type: ignore[valid-type]
        table=(table | None, None),
        chart=(chart | None, None),
    )
    return slide


@lru_cache(maxsize=256)
def section_slide_schema(ids: tuple[str, ...], section: str) -> type[SlideDraft]:
    """One section's slide: its section is fixed, its figures the run's."""
    return slide_schema(ids, (section,))


@lru_cache(maxsize=64)
def framing_schema(ids: tuple[str, ...]) -> type[Framing]:
    """The deck's title, thesis, recommendation and reasons, without a figure of the model's: each reason's
    figures are among ``ids``."""
    prose = Prose()
    # One figure a reason: three reasons with two each made the summary a wall of text.
    reason = _cited_bullet("CitedReason", ids, prose, figures=1)
    framing = patterned(
        Framing,
        prose,
        ["title", "thesis", "recommendation"],
        class_name="CitedFraming",
        reasons=(list[reason], Field(min_length=3, max_length=3)),  # type: ignore[valid-type]
    )
    return framing


@lru_cache(maxsize=64)
def revision_schema(
    ids: tuple[str, ...], sections: tuple[str, ...], slides: tuple[int, ...]
) -> type[Revision]:
    """Replacements only for the work order's slides: the decoder cannot even name another one."""
    numbered: dict[str, JsonValue] = {"type": "integer", "enum": list(slides)}
    revised = create_model(
        "OrderedSlide",
        __base__=RevisedSlide,
        number=(int, Field(ge=1, le=20, json_schema_extra=numbered)),
        slide=(slide_schema(ids, sections), ...),
    )
    drafted = slide_schema(ids, sections)
    revision = patterned(
        Revision,
        Prose(),
        ["reason"],
        class_name="OrderedRevision",
        slides=(list[revised], Field(min_length=0, max_length=len(slides))),
        remove=(list[int], Field(max_length=2, json_schema_extra={"items": numbered})),
        # A list of the narrowed slide, built at run time: mypy cannot see a runtime class as a type.
        add=(list[drafted], Field(default_factory=list, max_length=1)),  # type: ignore[valid-type]
    )
    return revision


QUOTE_CHARS = 160  # agents.deck.schemas.Quote's bound


def quotable_lines(lines: list[str]) -> tuple[str, ...]:
    """The deck's lines a judge may quote, each cut to the quote's bound at a word (a prefix of a line is
    still the deck's words, verbatim)."""
    kept = []
    for line in lines:
        text = " ".join(line.split())
        if len(text) > QUOTE_CHARS:
            text = text[:QUOTE_CHARS].rsplit(" ", 1)[0]
        if text:
            kept.append(text)
    return tuple(dict.fromkeys(kept))


@lru_cache(maxsize=64)
def judgement_schema(r2: bool, lines: tuple[str, ...]) -> type[R1Judgement] | type[R2Judgement]:
    """The judge's answer with every score's evidence one of the deck's own lines (``quotable_lines``): a
    decoder that enforces the schema can only quote the deck verbatim; code still checks each quote
    (agents.deck.outline.quote_found), since not every endpoint enforces it."""
    quoted: dict[str, JsonValue] = {"enum": list(lines)} if lines else {}
    base: type[R1Score] | type[R2Score] = R2Score if r2 else R1Score
    score = create_model(
        "QuotedScore",
        __base__=base,
        evidence=(str, Field(min_length=1, max_length=QUOTE_CHARS, json_schema_extra=quoted)),
    )
    count = 8 if r2 else 5
    judgement = create_model(
        "QuotedJudgement",
        __base__=R2Judgement if r2 else R1Judgement,
        scores=(list[score], Field(min_length=count, max_length=count)),
    )
    return cast(type[R1Judgement] | type[R2Judgement], judgement)
