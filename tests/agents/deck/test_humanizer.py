"""The humanizer (T12): each AI tell is found, counted on its slide and quoted exactly; the sample decks,
their PPTX and their HTML are clean."""

from __future__ import annotations

import io
from typing import Any

import pytest
from lxml import etree
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE
from pptx.oxml.ns import qn
from pptx.util import Inches

from agents.deck.humanizer import (
    HumanizerFinding,
    counts_by_slide,
    humanize_findings,
    text_findings,
    total,
)
from agents.deck.render.pdf import deck_html
from agents.deck.render.pptx import render_pptx
from agents.deck.spec import Bullet, Deck
from tests.agents.deck.samples import sample_deck

HOSTILE = "Margins \ud800held\ufffe \x00firm\x07 \udfff — arguably"


def with_slide(deck: Deck, number: int, **changes: Any) -> Deck:
    slides = tuple(
        slide.model_copy(update=changes) if slide.number == number else slide for slide in deck.slides
    )
    return deck.model_copy(update={"slides": slides})


def bullets(*texts: str) -> tuple[Bullet, ...]:
    return tuple(Bullet(text=text) for text in texts)


def quotes(findings: list[HumanizerFinding], rule: str) -> list[str]:
    return [finding.quote for finding in findings if finding.rule == rule]


def in_text(text: str) -> list[HumanizerFinding]:
    return text_findings(text, slide=1, where="takeaway")


# ---- clean decks ------------------------------------------------------------------------------------


def test_the_sample_decks_their_pptx_and_their_html_have_no_findings() -> None:
    for slides in (1, 4, 5, 8):
        deck = sample_deck(slides)
        findings = humanize_findings(deck, pptx=render_pptx(deck), html=deck_html(deck))
        assert findings == [], f"sample_deck({slides})"
        assert total(findings) == 0


# ---- em-dashes --------------------------------------------------------------------------------------


def test_em_dashes_and_typed_double_hyphens_are_counted_on_their_slide_and_quoted_in_context() -> None:
    deck = with_slide(
        sample_deck(4),
        4,
        takeaway="Margins held — and pricing did the work",
        bullets=bullets("Cash -- not debt -- funds the buyback"),
    )
    findings = humanize_findings(deck)
    assert counts_by_slide(findings) == {4: {"em_dash": 3}}
    assert quotes(findings, "em_dash")[0] == "Margins held — and pricing did"
    assert [f.where for f in findings] == ["takeaway", "bullet 1", "bullet 1"]


def test_a_spaced_en_dash_is_a_dash_but_a_range_and_a_hyphen_are_not() -> None:
    assert quotes(in_text("Services grew – hardware did not"), "em_dash") == [
        "Services grew – hardware did not"
    ]
    assert in_text("Revenue FY2022–FY2024 held; a well-run, year-on-year business") == []


# ---- hedging ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "hedge"),
    [
        ("It's worth noting that margins held", "It's worth noting"),
        ("It’s important to note the tax charge", "It’s important to note"),
        ("Arguably the strongest franchise", "Arguably"),
        ("It should be noted that cash fell", "It should be noted"),
        ("Needless to say, the board agreed", "Needless to say"),
        ("In today's fast-paced market, scale wins", "In today's fast-paced"),
    ],
)
def test_a_hedge_is_found_once_and_quoted_as_written(text: str, hedge: str) -> None:
    assert quotes(in_text(text), "hedging") == [hedge]


def test_hedges_are_matched_at_word_boundaries() -> None:
    assert in_text("Unarguably is not a word we use; noteworthy results") == []


# ---- filler -----------------------------------------------------------------------------------------


def test_filler_words_are_each_counted_and_quoted() -> None:
    findings = in_text("We delve into a robust, seamless game-changer that unlocked synergy")
    assert quotes(findings, "filler") == [
        "delve",
        "robust",
        "seamless",
        "game-changer",
        "unlocked",
        "synergy",
    ]


def test_filler_lookalikes_and_the_m_and_a_term_synergies_are_not_filler() -> None:
    assert in_text("Robustness of cash flow; cost synergies from the merger; an unlockable door") == []


@pytest.mark.parametrize(
    "text",
    [
        "The company can leverage its installed base",
        "Leveraging the brand into services",
        "Management will leverage scale",
        "They leveraged their distribution",
    ],
)
def test_leverage_as_a_verb_is_filler(text: str) -> None:
    assert len(quotes(in_text(text), "filler")) == 1


@pytest.mark.parametrize(
    "text",
    [
        "Net leverage fell after the buyback",
        "Operating leverage is high",
        "Debt and leverage rose together",
        "The group is leveraging up to buy back stock",
    ],
)
def test_leverage_as_the_finance_noun_is_not_filler(text: str) -> None:
    assert in_text(text) == []


# ---- over-symmetrical lists -------------------------------------------------------------------------


def test_a_list_of_same_length_gerund_bullets_is_over_symmetrical() -> None:
    deck = with_slide(
        sample_deck(4),
        4,
        bullets=bullets("Expanding services revenue", "Growing wearables share", "Driving buyback returns"),
    )
    findings = humanize_findings(deck)
    assert counts_by_slide(findings) == {4: {"symmetrical_list": 1}}
    assert findings[0].quote == "Expanding services… / Growing wearables… / Driving buyback…"
    assert "a gerund" in findings[0].message


def test_label_colon_bullets_of_one_length_are_over_symmetrical() -> None:
    deck = with_slide(
        sample_deck(4),
        4,
        bullets=bullets(
            "Growth: services carry it", "Margins: pricing holds them", "Risk: regulation in services"
        ),
    )
    assert counts_by_slide(humanize_findings(deck)) == {4: {"symmetrical_list": 1}}


def test_a_list_of_uneven_length_or_mixed_openings_is_not_over_symmetrical() -> None:
    uneven = bullets(
        "Expanding services revenue", "Growing wearables share in every region we sell", "Driving buybacks"
    )
    mixed = bullets("Expanding services revenue", "Wearables share grew", "Driving buyback returns")
    for listed in (uneven, mixed):
        assert humanize_findings(with_slide(sample_deck(4), 4, bullets=listed)) == []


def test_bullets_whose_words_code_withheld_are_no_symmetrical_list() -> None:
    figures_only = bullets("", "", "")  # the figures stand alone: nothing was worded alike
    assert humanize_findings(with_slide(sample_deck(4), 4, bullets=figures_only)) == []


def test_three_bullets_on_every_bulleted_slide_is_the_rule_of_three_across_the_deck() -> None:
    deck = sample_deck(8)  # slides 1, 4, 5 and 8 have bullets
    for number in (1, 5):
        deck = with_slide(
            deck,
            number,
            bullets=bullets(
                "Services carried the year", "Cash funds the buyback", "Risk sits in services regulation"
            ),
        )
    findings = humanize_findings(deck)
    assert counts_by_slide(findings) == {0: {"symmetrical_list": 1}}
    assert findings[0].quote == "3 bullets on slides 1, 4, 5, 8"


# ---- AI-looking design: PPTX ------------------------------------------------------------------------


def pptx_with(*builds: Any) -> bytes:
    presentation = Presentation()
    for build in builds:
        build(presentation.slides.add_slide(presentation.slide_layouts[6]))
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def plain(slide: Any) -> None:
    shape = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1))
    shape.name = "Title"
    shape.text_frame.text = "Margins held"


def gradient_box(slide: Any) -> None:
    shape = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1))
    shape.name = "Takeaway"
    shape.fill.gradient()


def glowing_box(slide: Any) -> None:
    shape = slide.shapes.add_textbox(Inches(1), Inches(3), Inches(4), Inches(1))
    shape.name = "Bullets"
    effects = etree.SubElement(shape._element.spPr, qn("a:effectLst"))
    etree.SubElement(etree.SubElement(effects, qn("a:glow"), rad="63500"), qn("a:srgbClr"), val="FFC000")
    etree.SubElement(effects, qn("a:softEdge"), rad="12700")


def default_rectangle(slide: Any) -> None:
    shape = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, Inches(6), Inches(1), Inches(3), Inches(2))
    shape.name = "Panel"


def flat_rectangle(slide: Any) -> None:
    shape = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, Inches(6), Inches(1), Inches(3), Inches(2))
    shape.name = "Panel"
    shape.fill.solid()
    shape.shadow.inherit = False  # an empty effect list: no theme shadow


def design(findings: list[HumanizerFinding]) -> list[tuple[int, str, str]]:
    return [(f.slide, f.where, f.quote) for f in findings if f.rule == "ai_design"]


def test_gradient_glow_and_soft_edges_in_the_pptx_are_found_on_their_slide_and_shape() -> None:
    findings = humanize_findings(sample_deck(4), pptx=pptx_with(plain, gradient_box, glowing_box))
    assert design(findings) == [
        (2, "pptx 'Takeaway'", "a:gradFill"),
        (3, "pptx 'Bullets'", "a:glow"),
        (3, "pptx 'Bullets'", "a:softEdge"),
    ]


def test_a_default_python_pptx_shape_inherits_the_themes_gradient_and_shadow() -> None:
    findings = humanize_findings(sample_deck(4), pptx=pptx_with(default_rectangle))
    assert design(findings) == [
        (1, "pptx 'Panel'", 'a:fillRef idx="3"'),
        (1, "pptx 'Panel'", 'a:effectRef idx="2" (outerShdw)'),
    ]


def test_a_shape_with_its_own_flat_fill_and_no_effects_is_clean() -> None:
    assert humanize_findings(sample_deck(4), pptx=pptx_with(flat_rectangle, plain)) == []


def test_a_gradient_slide_background_is_found() -> None:
    def gradient_background(slide: Any) -> None:
        slide.background.fill.gradient()

    assert design(humanize_findings(sample_deck(4), pptx=pptx_with(gradient_background))) == [
        (1, "pptx background", "a:gradFill")
    ]


# ---- AI-looking design: HTML ------------------------------------------------------------------------


def page(head_css: str, *slides: str) -> str:
    sections = "".join(
        f'<section class="slide" id="slide-{n}">{body}</section>' for n, body in enumerate(slides, 1)
    )
    return f"<html><head><style>{head_css}</style></head><body>{sections}</body></html>"


def test_css_gradients_shadows_and_svg_effects_are_found_on_their_slides() -> None:
    html = page(
        ".slide { background: linear-gradient(90deg, #fff, #eef); }",
        '<div style="box-shadow: 0 0 12px rgba(0, 0, 0, 0.4)">Title</div>',
        '<svg><defs><linearGradient id="g"/>'
        '<filter id="f"><feGaussianBlur stdDeviation="3"/></filter></defs></svg>',
        '<p style="text-shadow: 0 0 4px #fff">Glow</p>',
    )
    findings = humanize_findings(sample_deck(4), html=html)
    assert [(f.slide, f.quote) for f in findings] == [
        (0, "linear-gradient(90deg, #fff, #eef)"),
        (1, "box-shadow: 0 0 12px rgba(0, 0, 0, 0.4)"),
        (2, "<linearGradient"),
        (2, "<filter"),
        (2, "<feGaussianBlur"),
        (3, "text-shadow: 0 0 4px #fff"),
    ]
    assert counts_by_slide(findings) == {
        0: {"ai_design": 1},
        1: {"ai_design": 1},
        2: {"ai_design": 3},
        3: {"ai_design": 1},
    }


def test_a_hard_rule_shadow_no_shadow_and_words_about_gradients_are_not_design_findings() -> None:
    html = page(
        "th { box-shadow: inset 0 -1px 0 #ccc; text-shadow: none; }",
        "<p>We avoid linear-gradient( fills and box-shadow: 0 0 9px glows</p>",
    )
    assert humanize_findings(sample_deck(4), html=html) == []


def test_blur_filters_are_found() -> None:
    html = page(".band { backdrop-filter: blur(6px); } .chart { filter: drop-shadow(0 2px 4px #000); }")
    assert len(humanize_findings(sample_deck(4), html=html)) == 2


# ---- hostile text -----------------------------------------------------------------------------------


def test_hostile_text_never_crashes_and_every_finding_survives_json() -> None:
    deck = with_slide(sample_deck(4), 4, title=HOSTILE, takeaway=HOSTILE, bullets=bullets(HOSTILE, HOSTILE))
    deck = deck.model_copy(update={"thesis": HOSTILE})
    html = f'<style>{HOSTILE}</style><section id="slide-1" style="{HOSTILE}">{HOSTILE}</section>'
    findings = humanize_findings(deck, pptx=b"\x00not a pptx", html=html)
    assert counts_by_slide(findings) == {0: {"em_dash": 1, "hedging": 1}, 4: {"em_dash": 4, "hedging": 4}}
    for finding in findings:
        finding.model_dump_json()
        assert "\x00" not in finding.quote and "\ufffe" not in finding.quote


def test_total_counts_every_finding() -> None:
    deck = with_slide(sample_deck(4), 1, takeaway="Arguably — robust")
    findings = humanize_findings(deck)
    assert total(findings) == 3
    assert counts_by_slide(findings) == {1: {"em_dash": 1, "hedging": 1, "filler": 1}}
