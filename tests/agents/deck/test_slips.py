"""Text in another script than the brief's on a deck: the humanizer names it, code orders it rewritten, and
code withholds what no lap was left to fix."""

from __future__ import annotations

from typing import Any

from agents.deck.humanizer import counts_by_slide, humanize_findings
from agents.deck.outputs import Finding
from agents.deck.slips import slip_order, withhold_slips
from agents.deck.spec import Bullet, Deck
from agents.text.scripts import ENGLISH, Language
from tests.agents.deck.samples import figure, sample_deck


def with_slide(deck: Deck, number: int, **changes: Any) -> Deck:
    slides = tuple(s.model_copy(update=changes) if s.number == number else s for s in deck.slides)
    return deck.model_copy(update={"slides": slides})


def slipped_deck() -> Deck:
    deck = sample_deck(5)
    bullet = Bullet(text="Services 市场 share held. Cash funds it", figures=(figure("revenue", 2024),))
    deck = with_slide(deck, 1, bullets=(bullet,), takeaway="Growth resumed in FY2024.")
    return with_slide(deck, 4, title="サービス drives the year")


def test_the_humanizer_names_the_slide_the_place_and_the_characters_of_each_slip() -> None:
    findings = [f for f in humanize_findings(slipped_deck(), language=ENGLISH) if f.rule == "other_script"]
    assert [(f.slide, f.where, f.quote) for f in findings] == [
        (1, "bullet 1", "市场"),
        (4, "title", "サービス"),
    ]
    assert (
        findings[0].message
        == "text in another script than the brief's (Han): write it in the brief's language"
    )
    assert counts_by_slide(humanize_findings(sample_deck(5), language=ENGLISH)) == {}


def test_a_brief_in_chinese_makes_chinese_no_slip_and_without_a_language_nothing_is_checked() -> None:
    chinese = Language.of("回购速度可持续吗？")
    assert [
        f.quote for f in humanize_findings(slipped_deck(), language=chinese) if f.rule == "other_script"
    ] == ["サービス"]
    assert not [f for f in humanize_findings(slipped_deck()) if f.rule == "other_script"]


def test_code_orders_the_slipped_slides_rewritten_but_never_slide_zero() -> None:
    findings = [
        Finding(rule="other_script", slide=0, shape="deck thesis", message="m"),
        Finding(rule="em_dash", slide=2, shape="title", message="m"),
        *(Finding(rule="other_script", slide=n, shape="bullet 1", message="m") for n in (3, 5, 3, 6, 7)),
    ]
    order = slip_order(findings)
    assert order is not None
    assert (order.action, order.slides) == ("humanize_text", [3, 5, 6])
    assert order.instruction.startswith("Write every word in the brief's language: another script slipped")
    assert len(order.instruction) <= 160
    assert slip_order(findings[:2]) is None


def test_what_no_lap_fixed_is_withheld_sentence_by_sentence_and_listed() -> None:
    deck, withheld = withhold_slips(slipped_deck(), ENGLISH)
    assert withheld == ["slide 1: bullet 1 (Han '市场')", "slide 4: title (Katakana 'サービス')"]
    first = deck.slides[0]
    assert [b.text for b in first.bullets] == ["Cash funds it"] and first.bullets[0].figures
    assert deck.slides[3].title == ""
    assert withhold_slips(sample_deck(5), ENGLISH) == (sample_deck(5), [])
