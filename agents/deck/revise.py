"""A reviser's answer applied by code: only the slides the work order names change (seed 001 L6).

A replacement for a slide the work order does not name is ignored and listed; a removal is honoured only
for a ``merge_slides`` order, only for named slides, and never below the draft's minimum slide count.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.deck.schemas import DeckDraft, Revision, WorkOrder
from agents.deck.spec import Deck

MIN_SLIDES = 3


@dataclass(frozen=True)
class Applied:
    draft: DeckDraft
    changed: list[int]  # slide numbers (in the draft before) replaced or removed
    ignored: list[int]  # slide numbers the reviser touched outside the work order


def apply_revision(before: DeckDraft, order: WorkOrder, revision: Revision) -> Applied:
    named = set(order.slides)
    slides = list(before.slides)
    changed: list[int] = []
    ignored: list[int] = []
    for revised in revision.slides:
        index = revised.number - 1
        if revised.number not in named or not 0 <= index < len(slides):
            ignored.append(revised.number)
            continue
        if slides[index] != revised.slide:
            slides[index] = revised.slide
            changed.append(revised.number)
    removable = [
        number
        for number in dict.fromkeys(revision.remove)
        if order.action == "merge_slides" and number in named and 1 <= number <= len(slides)
    ]
    ignored.extend(number for number in revision.remove if number not in removable)
    keep_count = len(slides) - len(removable)
    if removable and keep_count >= MIN_SLIDES:
        gone = {number - 1 for number in removable}
        slides = [slide for index, slide in enumerate(slides) if index not in gone]
        changed.extend(removable)
    elif removable:
        ignored.extend(removable)
    return Applied(
        draft=before.model_copy(update={"slides": slides}),
        changed=sorted(set(changed)),
        ignored=sorted(set(ignored)),
    )


def apply_to_deck(deck: Deck, draft: DeckDraft, order: WorkOrder, revision: Revision) -> Applied:
    """``apply_revision`` on the deck's drafted slides (``draft``, from agents.deck.outline.draft_of), with
    the work order and the revision naming slides by their number in the deck, as the judge, the planner
    and the reviser read it: a slide code writes (the title, risks and sources slides) is never changed."""
    numbers = [slide.number for slide in deck.drafted()]
    inward = {number: index for index, number in enumerate(numbers, start=1)}
    outward = {index: number for number, index in inward.items()}
    mapped_order = order.model_copy(update={"slides": [inward.get(n, 0) for n in order.slides]})
    mapped = revision.model_copy(
        update={
            "slides": [r.model_copy(update={"number": inward.get(r.number, 0)}) for r in revision.slides],
            "remove": [inward.get(n, 0) for n in revision.remove],
        }
    )
    applied = apply_revision(draft, mapped_order, mapped)
    code_named = [n for n in (*(r.number for r in revision.slides), *revision.remove) if n not in inward]
    return Applied(
        draft=applied.draft,
        changed=[outward[n] for n in applied.changed if n in outward],
        ignored=sorted({*(outward[n] for n in applied.ignored if n in outward), *code_named}),
    )
