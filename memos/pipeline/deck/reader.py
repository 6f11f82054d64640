"""What a reader got of a finished deck's words, slide by slide (``manage.py reader_report``): the sentences
the drafter or the reviser wrote, those code withheld (a figure typed that no figure backs, or another
script than the brief's), and those code wrote with the figure that backs a typed number.

The counts come from the candidate the delivered deck is (a draft, a rebuild or a lap's revision): its
resolution listed each withheld and each resolved sentence by slide.
"""

from __future__ import annotations

import re

from agents.deck.outputs import Candidate, DeckOutput, DraftOutput, LapOutput
from agents.text.repair import SectionRepair, split
from memos.models import AgentStep, Run
from memos.pipeline.deck.plan import DECK, DRAFT_KIND, LAP

WHERE = re.compile(r"^slide (\d+)\b")


def deck_reader_text(run: Run) -> list[SectionRepair]:
    steps = list(
        AgentStep.objects.filter(
            run=run, kind__in=[DECK, DRAFT_KIND, LAP], status=AgentStep.Status.DONE
        ).values_list("kind", "output")
    )
    delivered = next((DeckOutput.model_validate(out) for kind, out in steps if kind == DECK), None)
    if delivered is None:
        return []
    made = [(kind, out) for kind, out in steps if kind != DECK]
    candidates = [(_candidate(kind, out), _repairs(kind, out)) for kind, out in made]
    source, repairs = next(
        ((c, r) for c, r in reversed(candidates) if c is not None and c.deck == delivered.deck), (None, [])
    )
    reasked = {repair.section: repair.reasked for repair in repairs}
    withheld = [*(source.withheld if source else []), *delivered.withheld]
    resolved = source.resolved if source else []
    framing = "title and thesis"
    out = [_section(framing, [delivered.deck.title, delivered.deck.thesis], [], [], reasked.get(framing, 0))]
    for slide in delivered.deck.slides:
        out.append(
            _section(
                f"slide {slide.number}",
                slide.words(),
                _on(slide.number, withheld),
                _on(slide.number, resolved),
                reasked.get(f"slide {slide.number}", 0),
            )
        )
    return out


def _candidate(kind: str, output: object) -> Candidate | None:
    if kind == DRAFT_KIND:
        return DraftOutput.model_validate(output).candidate
    return LapOutput.model_validate(output).candidate


def _on(number: int, places: list[str]) -> list[str]:
    return [place for place in places if (match := WHERE.match(place)) and int(match.group(1)) == number]


def _repairs(kind: str, output: object) -> list[SectionRepair]:
    return DraftOutput.model_validate(output).repairs if kind == DRAFT_KIND else []


def _section(
    title: str, texts: list[str], withheld: list[str], resolved: list[str], reasked: int
) -> SectionRepair:
    shown = sum(len(split(text)) for text in texts)
    return SectionRepair(
        section=title,
        sentences=shown + len(withheld),
        typed=len(withheld) + len(resolved) + reasked,
        resolved=len(resolved),
        reasked=reasked,
        withheld=len(withheld),
        empty=shown == 0,
    )
