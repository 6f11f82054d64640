"""Text in another script than the brief's, on a deck: the humanizer finds it (rule ``other_script``), code
orders it fixed, and code withholds what no lap fixed.

- ``slip_order``: while the best-so-far has such findings on its slides, the lap's work order is code's, not
  the planner's (a small planner may never pick it): rewrite those slides in the brief's language. The
  reviser is shown the findings, which name the slide, the place and the characters.
- ``withhold_slips``: the deck that will be delivered (the loop's best, or the closest draft of an escalated
  run) can be revised no more. Each sentence that still slipped is withheld, the way resolve withholds a
  sentence with a typed number, and listed with where it was and what it held.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.deck.humanizer import OTHER_SCRIPT
from agents.deck.outputs import ChangelogEntry, Finding
from agents.deck.schemas import WorkOrder
from agents.deck.spec import Bullet, Deck, Slide
from agents.text.scripts import Language, note, slips
from agents.text.sentences import fit, sentences

MAX_ORDER_SLIDES = 3  # a work order names at most three slides (agents.deck.schemas.WorkOrder)
_INSTRUCTION_CHARS = 160  # WorkOrder.instruction's bound


def slip_order(findings: Sequence[Finding]) -> WorkOrder | None:
    """Code's work order for the slides whose text slipped into another script (None when none did; the
    deck's title and thesis, slide 0, are not a slide a reviser can replace)."""
    slipped = [finding for finding in findings if finding.rule == OTHER_SCRIPT and finding.slide > 0]
    numbers = list(dict.fromkeys(finding.slide for finding in slipped))[:MAX_ORDER_SLIDES]
    if not numbers:
        return None
    shown = ", ".join(
        f"slide {finding.slide} {finding.shape}" for finding in slipped if finding.slide in numbers
    )
    instruction = f"Write every word in the brief's language: another script slipped into {shown}."
    return WorkOrder(
        target="clean_concise_story",
        action="humanize_text",
        slides=numbers,
        instruction=fit(instruction, _INSTRUCTION_CHARS),
    )


# The humanizer's tells a reviser can fix in the words (seed 001 T12); "ai_design" is the renderer's own.
WORD_TELLS = frozenset({"em_dash", "hedging", "filler", "symmetrical_list", "topic_title"})


def tell_order(findings: Sequence[Finding], last: ChangelogEntry | None) -> WorkOrder | None:
    """Code's work order whenever the best-so-far has AI tells in its words (seed 001: T12's tells are
    fixed by a reviser, not only when the planner asks); None when it has none, or when the lap before was
    such an order and was rejected (the planner then chooses, so a tell the reviser cannot fix never takes
    every lap)."""
    if last is not None and last.action == "humanize_text" and not last.accepted:
        return None
    told = [finding for finding in findings if finding.rule in WORD_TELLS and finding.slide > 0]
    numbers = list(dict.fromkeys(finding.slide for finding in told))[:MAX_ORDER_SLIDES]
    if not numbers:
        return None
    shown = "; ".join(
        f"slide {finding.slide} {finding.shape}: {finding.rule}"
        for finding in told
        if finding.slide in numbers
    )
    return WorkOrder(
        target="executive_altitude",
        action="humanize_text",
        slides=numbers,
        instruction=fit(f"Fix what the desk's humanizer found: {shown}.", _INSTRUCTION_CHARS),
    )


def withhold_slips(deck: Deck, language: Language) -> tuple[Deck, list[str]]:
    """The deck without the sentences that slipped into another script, and what was withheld: "slide 3:
    bullet 1 (Han '市场')". A bullet left with neither words nor figures is dropped."""
    withheld: list[str] = []

    def words(text: str, where: str) -> str:
        kept = []
        for sentence in sentences(text):
            found = slips(sentence, language)
            if found:
                withheld.append(f"{where} ({note(found)})")
            else:
                kept.append(sentence)
        return "".join(kept).strip()

    def slide(current: Slide) -> Slide:
        where = f"slide {current.number}"
        bullets = []
        for index, bullet in enumerate(current.bullets, start=1):
            text = words(bullet.text, f"{where}: bullet {index}")
            # A figure code wrote into a withheld sentence goes with it: it is printed nowhere else.
            inline = tuple(figure for figure in bullet.inline if figure.display in text)
            if text or bullet.figures or inline:
                bullets.append(Bullet(text=text, figures=bullet.figures, inline=inline))
        update: dict[str, object] = {
            "title": words(current.title, f"{where}: title"),
            "takeaway": words(current.takeaway, f"{where}: takeaway"),
            "bullets": tuple(bullets),
        }
        if current.table is not None:
            update["table"] = current.table.model_copy(
                update={"title": words(current.table.title, f"{where}: table title")}
            )
        if current.chart is not None:
            update["chart"] = current.chart.model_copy(
                update={"title": words(current.chart.title, f"{where}: chart title")}
            )
        return current.model_copy(update=update)

    cleaned = deck.model_copy(
        update={
            "title": words(deck.title, "deck title"),
            "thesis": words(deck.thesis, "thesis"),
            "slides": tuple(slide(current) for current in deck.slides),
        }
    )
    return (cleaned, withheld) if withheld else (deck, [])
