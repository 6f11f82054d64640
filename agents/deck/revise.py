"""A reviser's answer applied by code: only the slides the work order names change (seed 001 L6).

A replacement for a slide the work order does not name is ignored and listed; a removal is honoured only
for a ``merge_slides`` or ``remove_slide`` order, only for named slides, and never below the draft's minimum
slide count; an added slide only for an ``add_slide`` order, after the last named slide, and never past the
profile's bound. What the deck gained or lost is said in the lap's note, with the reviser's reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.deck.schemas import MAX_SLIDES, DeckDraft, Revision, WorkOrder
from agents.deck.spec import Deck

MIN_SLIDES = 3
REMOVING = frozenset({"merge_slides", "remove_slide"})


@dataclass(frozen=True)
class Applied:
    draft: DeckDraft
    changed: list[int]  # slide numbers (in the draft before) replaced or removed
    ignored: list[int]  # slide numbers the reviser touched outside the work order
    added: int | None = None  # the added slide's number in the deck after, if one was added
    removed: tuple[int, ...] = ()  # the slides removed, by their number before
    refused: str = ""  # why an addition the order allowed was not made

    def note(self, reason: str) -> str:
        """What the deck gained or lost, with the reviser's reason: the changelog's line for the lap."""
        parts = []
        if self.added is not None:
            parts.append(f"added slide {self.added}")
        if self.removed:
            parts.append("removed slide " + ", ".join(map(str, self.removed)))
        if self.refused:
            parts.append(self.refused)
        said = "; ".join(parts)
        return f"{said}: {reason}" if said and reason else said or ""


def apply_revision(
    before: DeckDraft, order: WorkOrder, revision: Revision, *, max_slides: int = MAX_SLIDES
) -> Applied:
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
    added: int | None = None
    refused = ""
    if revision.add and order.action == "add_slide":
        if len(slides) + 1 > max_slides:
            refused = f"no slide added: the profile allows {max_slides} drafted slides"
        else:
            after = max((n for n in named if 1 <= n <= len(slides)), default=len(slides))
            slides.insert(after, revision.add[0])
            added = after + 1
    removable = [
        number
        for number in dict.fromkeys(revision.remove)
        if order.action in REMOVING and number in named and 1 <= number <= len(slides)
    ]
    ignored.extend(number for number in revision.remove if number not in removable)
    keep_count = len(slides) - len(removable)
    removed: list[int] = []
    if removable and keep_count >= MIN_SLIDES:
        removed = removable
        gone = {number - 1 if added is None or number < added else number for number in removable}
        slides = [slide for index, slide in enumerate(slides) if index not in gone]
        changed.extend(removable)
    elif removable:
        ignored.extend(removable)
    return Applied(
        draft=before.model_copy(update={"slides": slides}),
        changed=sorted(set(changed)),
        ignored=sorted(set(ignored)),
        added=added,
        removed=tuple(removed),
        refused=refused,
    )


def apply_to_deck(
    deck: Deck, draft: DeckDraft, order: WorkOrder, revision: Revision, *, max_slides: int = MAX_SLIDES
) -> Applied:
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
    applied = apply_revision(draft, mapped_order, mapped, max_slides=max_slides)
    code_named = [n for n in (*(r.number for r in revision.slides), *revision.remove) if n not in inward]
    first = numbers[0] if numbers else 1  # drafted slides are numbered in a row from the first
    return Applied(
        draft=applied.draft,
        changed=[outward[n] for n in applied.changed if n in outward],
        ignored=sorted({*(outward[n] for n in applied.ignored if n in outward), *code_named}),
        added=applied.added + first - 1 if applied.added is not None else None,
        removed=tuple(outward[n] for n in applied.removed if n in outward),
        refused=applied.refused,
    )
