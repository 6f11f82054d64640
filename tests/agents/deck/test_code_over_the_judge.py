"""Code caps a judge's score that a measurement contradicts, and never raises one; and a text the model's
answer cut at its bound reaches the slide as its last whole sentence."""

from __future__ import annotations

from agents.deck.candidate import build, repeated_parts
from agents.deck.ceilings import ceilings
from agents.deck.resolve import DeckFrame
from agents.deck.schemas import DeckDraft, Scope
from agents.deck.spec import Slide
from tests.agents.deck.samples import sample_deck

ALL_FIVE = {
    "clean_concise_story": 5,
    "narrative_flow": 5,
    "visual_digestibility": 5,
    "visual_baseline": 5,
    "actionability": 5,
}


def test_repeated_slides_cap_the_story_at_the_rubrics_redundant_anchor() -> None:
    capped, notes = ceilings(ALL_FIVE, repeated=2, walls=0, quotes=[])
    assert capped["clean_concise_story"] == 1 and capped["narrative_flow"] == 2
    assert capped["actionability"] == 5 and len(notes) == 2


def test_walls_of_text_and_unfound_quotes_cap_their_dimensions_and_low_scores_stay() -> None:
    low = dict.fromkeys(ALL_FIVE, 1)
    assert ceilings(low, repeated=3, walls=2, quotes=[("actionability", False)]) == (low, [])
    capped, notes = ceilings(ALL_FIVE, repeated=0, walls=1, quotes=[("actionability", False)])
    assert capped["visual_digestibility"] == 2 and capped["actionability"] == 3
    assert any("not in the deck" in note for note in notes)


def test_a_deck_that_repeats_a_slide_counts_each_repeated_part() -> None:
    deck = sample_deck(4)
    assert repeated_parts(deck) == 0
    copy = deck.slides[0].model_copy(update={"number": 5})
    repeated = deck.model_copy(update={"slides": (*deck.slides, copy)})
    parts = len(copy.bullets) + (copy.table is not None) + (copy.chart is not None)
    assert repeated_parts(repeated) == parts
    assert isinstance(copy, Slide)


def test_a_takeaway_cut_at_its_bound_reaches_the_slide_as_its_last_whole_sentence() -> None:
    deck = sample_deck(3)
    figures = deck.figures()
    cut = "Services carry the year. The company's capital expenditure is " + "rising " * 20
    draft = DeckDraft.model_validate(
        {
            "title": "Apple: hold",
            "thesis": "Hold the position.",
            "slides": [
                {
                    "section": s.section,
                    "title": s.title,
                    "takeaway": cut[:160] if n == 0 else s.takeaway,
                    "bullets": [],
                }
                for n, s in enumerate(deck.slides)
            ],
        }
    )
    scope = Scope.model_validate(
        {
            "audience": "The committee.",
            "decision": "Hold or sell.",
            "required_sections": [{"name": s.section, "purpose": "Why."} for s in deck.slides],
            "key_questions": ["Is growth holding?", "What changes the call?"],
        }
    )
    candidate = build(draft, figures, DeckFrame("Apple Inc.", "AAPL", "For the committee"), scope)
    assert candidate.deck.slides[1].takeaway == "Services carry the year."  # after code's title slide
    assert candidate.trimmed == ["slides[0].takeaway"]
