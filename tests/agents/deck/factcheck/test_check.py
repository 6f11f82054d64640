"""T5, the fact-check: the figures it reads in rendered text, and a rendered deck checked figure by figure.

The seeded-error tests are the issue's demand: every wrong number put into a rendered deck (a digit, a
rounding, a unit, a period, a deletion, a move, a chart label, a table cell, a number typed into a title)
is caught, in the PPTX and in the PDF, and only on the slide where it was put.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Collection, Mapping
from decimal import Decimal
from typing import Any

import pytest
from pptx import Presentation
from pypdf import PageObject, PdfReader

from agents.deck.factcheck import extract
from agents.deck.factcheck.check import FactCheckReport, KnownFact, check, check_texts
from agents.deck.factcheck.extract import SlideText, _wraps_rejoined, figures_in, slide_texts
from agents.deck.render.pdf import page_keys, render_pdf
from agents.deck.render.pptx import render_pptx
from agents.deck.spec import Bullet, Deck, Figure, display, figure_text
from agents.kept import KeptInProcess
from tests.agents.deck.samples import figure, sample_deck


def lookup_from(deck: Deck) -> Callable[[Collection[str]], Mapping[str, KnownFact]]:
    """The authority a pure test uses: the true deck's own figures, as the fact store holds them."""
    known = {
        fact_id: KnownFact(value=figure.decimal, unit=figure.unit, period=figure.period)
        for fact_id, figure in deck.figures().items()
    }
    return lambda ids: {fact_id: known[fact_id] for fact_id in ids if fact_id in known}


def printed(deck: Deck) -> list[SlideText]:
    """The lines a renderer prints for ``deck``: bullets end in their figures, a table row per figure, a
    chart point as its period and its label."""
    slides = []
    for number, slide in enumerate(deck.slides, 1):
        lines = [slide.title, slide.takeaway]
        lines += [" ".join([bullet.text, *map(figure_text, bullet.figures)]) for bullet in slide.bullets]
        if slide.table is not None:
            lines += [f"{f.label} | {f.period} | {f.display} | {f.source}" for f in slide.table.rows]
        if slide.chart is not None:
            lines += [f"{point.period} {point.display}" for point in slide.chart.points]
        slides.append(SlideText(number, tuple(lines)))
    return slides


def with_slide(deck: Deck, number: int, **changes: object) -> Deck:
    slides = list(deck.slides)
    slides[number - 1] = slides[number - 1].model_copy(update=changes)
    return deck.model_copy(update={"slides": tuple(slides)})


def shown(of: Figure, display: str, **changes: str) -> Figure:
    """The same fact, printed otherwise."""
    return of.model_copy(update={"display": display, **changes})


def problems(report: FactCheckReport) -> list[tuple[int, str, str | None, str]]:
    return [(row.slide, row.text, row.expected, row.status) for row in report.problems()]


# What figures_in reads.


@pytest.mark.parametrize(
    ("line", "figures"),
    [
        ("Services carried the year Revenue FY2024: USD 391,035 M", ["USD 391,035 M"]),
        ("Diluted EPS FY2024: USD 6.08", ["USD 6.08"]),
        ("Gross margin | FY2024 | 46.2% | derived by code", ["46.2%"]),
        ("Diluted EPS | FY2024 | 6.08 USD/shares | 10-K filed 2024-11-01", ["6.08 USD/shares"]),
        ("Shares outstanding FY2024: 15,204.1 M shares", ["15,204.1 M shares"]),
        ("Net loss FY2024: USD -5 M and margin -2.0%", ["USD -5 M", "-2.0%"]),
        ("RSI as of 2026-10-30: 55.23 index", ["55.23 index"]),
        ("Revenue FY2024: 3.91e+05 JPY", ["3.91e+05 JPY"]),
        ("A deal worth $1.2bn closed", ["$1.2bn"]),
        ("Revenue FY2024USD 391,035 M", ["USD 391,035 M"]),  # a PDF extraction may glue runs together
        ("USD391,035M", ["USD391,035M"]),
        ("Stores: 1,204 and a ratio of 12.5", ["1,204", "12.5"]),
        ("Margin grew12% in 12-15% of stores, 42 of them", ["grew12%", "12-15%", "42"]),
        ("Revenue FY2024: USD 391,035 M; Net income FY2024: USD 93,736 M", ["USD 391,035 M", "USD 93,736 M"]),
        ("Full-width digits read as digits: １２.５%", ["12.5%"]),
    ],
)
def test_every_shape_a_deck_or_an_edit_prints_is_a_figure(line: str, figures: list[str]) -> None:
    assert [found.text for found in figures_in(line)] == figures


@pytest.mark.parametrize(
    "unit", ["USD", "EUR", "TWD", "JPY", "USD/shares", "percent", "pure", "shares", "index"]
)
@pytest.mark.parametrize(
    "value", ["391035000000", "-5000000", "999999", "6.08", "0", "-0.5", "0.4620680246", "2024"]
)
def test_every_display_the_deck_prints_reads_back_as_one_whole_figure(unit: str, value: str) -> None:
    shown = display(Decimal(value), unit)
    assert [found.text for found in figures_in(f"Label FY2024: {shown}")] == [shown]


@pytest.mark.parametrize(
    "line",
    [
        "Growth resumed in 2024 after a flat year",
        "FY2024, FY2025Q3 and Q3 are labels",
        "10-K filed 2024-11-01, then a 10-Q and an 8-K",
        "Cited as AAPL:revenue:FY2024 in the store",
        "Three risks, 2 of them regulatory",
        "For the investment committee · data as of 2024-11-01",
        "broken text \ud800 with \ufffe and \x00 controls",
    ],
)
def test_years_labels_dates_forms_ids_and_a_counting_digit_are_not_figures(line: str) -> None:
    assert figures_in(line) == []


def test_each_figure_keeps_the_period_printed_just_before_it() -> None:
    found = figures_in("Revenue FY2024: USD 391,035 M, Net income FY2023: USD 96,995 M, then USD 1 M")
    assert [(f.text, f.period) for f in found] == [
        ("USD 391,035 M", "FY2024"),
        ("USD 96,995 M", "FY2023"),
        ("USD 1 M", None),  # the period before it belongs to the figure before it
    ]
    assert [f.period for f in figures_in("as of 2026-10-30: 0.9% | FY2025Q3 | 1.5%")] == [
        "as of 2026-10-30",
        "FY2025Q3",
    ]


def test_a_figure_is_classed_as_currency_percent_per_share_or_plain() -> None:
    line = "USD 6.08, 46.2%, 6.08 USD/shares, 15,204.1 M shares, $1.2bn, 12.5"
    assert [f.kind for f in figures_in(line)] == [
        "currency",
        "percent",
        "per-share",
        "plain",
        "currency",
        "plain",
    ]


# check_texts on printed lines.


def test_a_deck_printed_as_resolved_is_all_ok() -> None:
    deck = sample_deck(8)
    report = check_texts(deck, printed(deck), lookup_from(deck))
    assert report.ok
    assert len(report.figures) == sum(len(slide.figures()) for slide in deck.slides)
    revenue = report.figures[0]
    assert revenue.model_dump(mode="json") == {
        "slide": 1,
        "text": "USD 391,035 M",
        "fact_id": "AAPL:revenue:FY2024",
        "expected": "USD 391,035 M",
        "status": "ok",
    }


def test_the_expected_display_comes_from_the_lookup_not_from_the_embedded_deck() -> None:
    true = sample_deck(2)
    margin = figure("gross_margin", 2024)
    table = true.slides[1].table
    assert table is not None
    edited = with_slide(
        true, 2, table=table.model_copy(update={"rows": (shown(margin, "48.0%"), *table.rows[1:])})
    )
    report = check_texts(edited, printed(edited), lookup_from(true))  # JSON and text edited together
    assert problems(report) == [(2, "48.0%", "46.2%", "mismatch")]


def test_a_rounding_of_the_same_value_is_a_mismatch() -> None:
    deck = sample_deck(2)
    text = printed(deck)
    text[1] = SlideText(2, tuple(line.replace("46.2%", "46.3%") for line in text[1].lines))
    assert problems(check_texts(deck, text, lookup_from(deck))) == [(2, "46.3%", "46.2%", "mismatch")]


def test_a_wrong_period_beside_a_right_value_names_both_periods() -> None:
    deck = sample_deck(1)
    text = [
        SlideText(
            1, tuple(line.replace("Revenue FY2024", "Revenue FY2023") for line in printed(deck)[0].lines)
        )
    ]
    assert problems(check_texts(deck, text, lookup_from(deck))) == [
        (1, "USD 391,035 M (FY2023)", "USD 391,035 M (FY2024)", "mismatch")
    ]


def test_a_removed_figure_and_a_number_nobody_placed_are_both_reported() -> None:
    deck = sample_deck(4)
    text = printed(deck)
    text[0] = SlideText(1, tuple(line for line in text[0].lines if "FY2023 USD" not in line))
    text[3] = SlideText(4, (*text[3].lines, "Buybacks reached 1,200 stores"))
    assert problems(check_texts(deck, text, lookup_from(deck))) == [
        (1, "", "USD 383,285 M", "mismatch"),
        (4, "1,200", None, "unresolved"),
    ]


def test_a_changed_figure_is_paired_with_the_placement_it_most_resembles() -> None:
    deck = sample_deck(3)
    text = printed(deck)
    text[2] = SlideText(3, tuple(line.replace("USD 96,995 M", "USD 96,895 M") for line in text[2].lines))
    report = check_texts(deck, text, lookup_from(deck))
    assert [(row.text, row.fact_id, row.expected) for row in report.problems()] == [
        ("USD 96,895 M", "AAPL:net_income:FY2023", "USD 96,995 M")
    ]


def test_a_fact_the_store_does_not_know_is_unresolved() -> None:
    deck = sample_deck(2)
    known = lookup_from(deck)
    without_eps = lambda ids: {i: fact for i, fact in known(ids).items() if i != "AAPL:eps_diluted:FY2024"}  # noqa: E731
    report = check_texts(deck, printed(deck), without_eps)
    assert [(row.slide, row.text, row.fact_id, row.status) for row in report.problems()] == [
        (2, "6.08 USD/shares", "AAPL:eps_diluted:FY2024", "unresolved")
    ]


def test_a_slide_missing_from_the_file_has_every_figure_removed() -> None:
    deck = sample_deck(3)
    report = check_texts(deck, printed(deck)[:2], lookup_from(deck))
    assert {(row.slide, row.text, row.status) for row in report.problems()} == {(3, "", "mismatch")}
    assert len(report.problems()) == 3


def test_the_same_value_in_two_periods_is_told_apart_by_the_period_beside_it() -> None:
    fy2023 = shown(figure("revenue", 2023), "USD 391,035 M", value="391035000000")
    first = sample_deck(1).slides[0]
    bullets = (Bullet(text="One", figures=(figure("revenue", 2024),)), Bullet(text="Two", figures=(fy2023,)))
    deck = sample_deck(1).model_copy(
        update={"slides": (first.model_copy(update={"bullets": bullets, "chart": None}),)}
    )
    swapped = ("One Revenue FY2023: USD 391,035 M", "Two Revenue FY2024: USD 391,035 M")
    report = check_texts(deck, [SlideText(1, swapped)], lookup_from(deck))
    assert report.ok
    assert [row.fact_id for row in report.figures] == ["AAPL:revenue:FY2023", "AAPL:revenue:FY2024"]


# Rendered decks: check() reads the PPTX or the PDF back and finds what was seeded, on its slide only.

SLIDES = 8  # every kind of slide samples.py makes, twice
Render = Callable[..., bytes]
FORMATS: dict[str, Render] = {
    "pptx": render_pptx,
    "pdf": lambda deck, spec=None: render_pdf(deck, spec=spec).pdf,
}


@pytest.fixture(scope="module")
def true_deck() -> Deck:
    return sample_deck(SLIDES)


@pytest.mark.parametrize("kind", FORMATS)
def test_a_twenty_slide_deck_rendered_as_resolved_checks_clean(kind: str) -> None:
    deck = sample_deck(20)
    report = check(FORMATS[kind](deck), lookup_from(deck))
    assert report.problems() == []
    assert report.ok
    placed = [(number, f.fact_id) for number, s in enumerate(deck.slides, 1) for f in s.figures()]
    assert sorted((row.slide, row.fact_id) for row in report.figures) == sorted(placed)


Json = dict[str, Any]


def edited(deck: Deck, edit: Callable[[Json], object]) -> Deck:
    """``deck`` after ``edit`` changed its JSON in place (what a hand in the file, or a bug, would do)."""
    document = deck.model_dump(mode="json")
    edit(document)
    return Deck.model_validate(document)


def bullet(document: Json, slide: int, index: int) -> Json:
    figure: Json = document["slides"][slide - 1]["bullets"][index]["figures"][0]
    return figure


def row(document: Json, slide: int, index: int) -> Json:
    figure: Json = document["slides"][slide - 1]["table"]["rows"][index]
    return figure


def point(document: Json, slide: int, index: int) -> Json:
    figure: Json = document["slides"][slide - 1]["chart"]["points"][index]
    return figure


def swap_labels(document: Json, slide: int) -> None:
    first, second = point(document, slide, 0), point(document, slide, 1)
    first["display"], second["display"] = second["display"], first["display"]


# Slide kinds (samples.py): 1 and 5 bullets and a revenue chart, 2 and 6 a table, 3 and 7 a net income
# chart, 4 and 8 bullets without figures.
PRINTED_WRONG: dict[str, tuple[Callable[[Json], object], set[int]]] = {
    "a digit changed in a bullet": (lambda d: bullet(d, 1, 0).update(display="USD 391,036 M"), {1}),
    "a rounding changed in a table": (lambda d: row(d, 2, 0).update(display="46.3%"), {2}),
    "the scale dropped": (lambda d: bullet(d, 5, 0).update(display="USD 391,035"), {5}),
    "the scale changed": (lambda d: bullet(d, 1, 0).update(display="USD 391.0 bn"), {1}),
    "the grouping changed": (lambda d: point(d, 7, 2).update(display="USD 93736 M"), {7}),
    "the percent sign dropped": (lambda d: bullet(d, 1, 1).update(display="2.0"), {1}),
    "the sign flipped": (lambda d: point(d, 3, 2).update(display="USD -93,736 M"), {3}),
    "the period beside a bullet's figure": (lambda d: bullet(d, 5, 0).update(period="FY2023"), {5}),
    "the period of a table row": (lambda d: row(d, 6, 2).update(period="FY2023"), {6}),
    "a chart label altered": (lambda d: point(d, 3, 1).update(display="USD 96,996 M"), {3}),
    "a chart period altered": (lambda d: point(d, 1, 0).update(period="FY2021"), {1}),
    "two chart labels swapped": (lambda d: swap_labels(d, 7), {7}),
    "a table cell altered": (lambda d: row(d, 2, 2).update(display="6.09 USD/shares"), {2}),
    "a figure deleted": (lambda d: d["slides"][0]["bullets"][1].update(figures=[]), {1}),
    "a chart point deleted": (lambda d: d["slides"][2]["chart"]["points"].pop(0), {3}),
    "a figure moved to another slide": (
        lambda d: d["slides"][3]["bullets"][0]["figures"].append(d["slides"][1]["table"]["rows"].pop(2)),
        {2, 4},
    ),
    "a figure printed twice": (
        lambda d: d["slides"][4]["bullets"][0]["figures"].append(bullet(d, 5, 0)),
        {5},
    ),
    "a number typed into a title": (
        lambda d: d["slides"][3].update(title="Hold: the stock is up 12.5%"),
        {4},
    ),
    "an amount typed into a takeaway": (
        lambda d: d["slides"][7].update(takeaway="Buybacks could reach USD 110,000 M next year."),
        {8},
    ),
    "a slide left out": (lambda d: d["slides"].pop(5), {6, 7}),
}


@pytest.mark.parametrize("kind", FORMATS)
@pytest.mark.parametrize("seed", PRINTED_WRONG)
def test_a_wrong_number_printed_under_the_true_deck_is_caught_on_its_slide(
    true_deck: Deck, kind: str, seed: str
) -> None:
    edit, slides = PRINTED_WRONG[seed]
    data = FORMATS[kind](edited(true_deck, edit), spec=true_deck)
    report = check(data, lookup_from(true_deck))
    assert not report.ok
    assert {row.slide for row in report.problems()} == slides


@pytest.mark.parametrize("kind", FORMATS)
def test_a_file_whose_deck_json_was_edited_with_its_text_is_still_caught(true_deck: Deck, kind: str) -> None:
    forged = edited(true_deck, lambda d: row(d, 2, 0).update(display="48.0%", value="0.48"))
    report = check(FORMATS[kind](forged), lookup_from(true_deck))  # the embedded deck is the forged one
    assert problems(report) == [(2, "48.0%", "46.2%", "mismatch")]


# The same, typed into a rendered PPTX with python-pptx: the file's deck.json still tells the truth.

C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


def named(presentation: Any, slide: int, name: str) -> Any:
    return next(shape for shape in presentation.slides[slide - 1].shapes if shape.name == name)


def retyped(presentation: Any, slide: int, name: str, old: str, new: str) -> None:
    """The first run holding ``old`` in a text box, or in a table row by row, now says ``new``."""
    shape = named(presentation, slide, name)
    frames = (
        [cell.text_frame for r in shape.table.rows for cell in r.cells]
        if shape.has_table
        else [shape.text_frame]
    )
    runs = [run for frame in frames for paragraph in frame.paragraphs for run in paragraph.runs]
    run = next(run for run in runs if old in run.text)
    run.text = run.text.replace(old, new, 1)


def chart_xml(presentation: Any, slide: int) -> Any:
    return named(presentation, slide, "Chart").chart._chartSpace


def relabelled(presentation: Any, slide: int, index: int, text: str) -> None:
    label = list(chart_xml(presentation, slide).iter(f"{C}dLbl"))[index]
    next(label.iter(f"{A}t")).text = text


def unlabelled(presentation: Any, slide: int, index: int) -> None:
    label = list(chart_xml(presentation, slide).iter(f"{C}dLbl"))[index]
    label.getparent().remove(label)


def recategorised(presentation: Any, slide: int, index: int, text: str) -> None:
    category = list(chart_xml(presentation, slide).find(f".//{C}cat").iter(f"{C}v"))[index]
    category.text = text


def bullet_cut(presentation: Any, slide: int, index: int) -> str:
    paragraph = named(presentation, slide, "Bullets").text_frame.paragraphs[index]
    paragraph._p.getparent().remove(paragraph._p)
    return str(paragraph.text)


def bullet_moved(presentation: Any, source: int, index: int, target: int) -> None:
    text = bullet_cut(presentation, source, index)
    named(presentation, target, "Bullets").text_frame.add_paragraph().text = text


TYPED_WRONG: dict[str, tuple[Callable[[Any], object], set[int]]] = {
    "a digit changed in a bullet": (lambda p: retyped(p, 1, "Bullets", "391,035", "391,085"), {1}),
    "a rounding changed in a table cell": (lambda p: retyped(p, 2, "Table", "46.2%", "46.3%"), {2}),
    "another row's value in a table cell": (lambda p: retyped(p, 6, "Table", "31.5%", "46.2%"), {6}),
    "the period of a table row": (lambda p: retyped(p, 6, "Table", "FY2024", "FY2023"), {6}),
    "the scale dropped in a bullet": (
        lambda p: retyped(p, 5, "Bullets", "USD 391,035 M", "USD 391,035"),
        {5},
    ),
    "the period beside a bullet's figure": (lambda p: retyped(p, 1, "Bullets", "FY2024:", "FY2023:"), {1}),
    "a chart's data label": (lambda p: relabelled(p, 3, 2, "USD 93,737 M"), {3}),
    "a chart's data label deleted": (lambda p: unlabelled(p, 3, 1), {3}),
    "a chart's category": (lambda p: recategorised(p, 7, 0, "FY2021"), {7}),
    "a bullet with its figure deleted": (lambda p: bullet_cut(p, 1, 1), {1}),
    "a bullet moved to another slide": (lambda p: bullet_moved(p, 5, 1, 8), {5, 8}),
    "a number typed into a title": (lambda p: retyped(p, 4, "Title", "hold", "hold at 3.5x"), {4}),
}


@pytest.mark.parametrize("seed", TYPED_WRONG)
def test_a_wrong_number_typed_into_a_rendered_pptx_is_caught_on_its_slide(true_deck: Deck, seed: str) -> None:
    edit, slides = TYPED_WRONG[seed]
    presentation = Presentation(io.BytesIO(render_pptx(true_deck)))
    edit(presentation)
    buffer = io.BytesIO()
    presentation.save(buffer)
    report = check(buffer.getvalue(), lookup_from(true_deck))
    assert not report.ok
    assert {row.slide for row in report.problems()} == slides


def test_a_rendered_pptx_saved_again_without_edits_still_checks_clean(true_deck: Deck) -> None:
    buffer = io.BytesIO()
    Presentation(io.BytesIO(render_pptx(true_deck))).save(buffer)
    assert check(buffer.getvalue(), lookup_from(true_deck)).ok


def test_a_figure_is_printed_whole_and_one_a_pdf_wrapped_still_reads_whole(true_deck: Deck) -> None:
    padded = tuple(
        Bullet(text="Services carried the year" + " and more" * words, figures=(figure("revenue", 2024),))
        for words in range(6)
    )
    deck = with_slide(true_deck, 1, bullets=padded)
    pdf = render_pdf(deck).pdf
    raw = PdfReader(io.BytesIO(pdf)).pages[0].extract_text().splitlines()
    assert not any(line.endswith("USD") for line in raw)  # the renderer no longer wraps a figure
    assert check(pdf, lookup_from(deck)).ok
    # A PDF frozen before the renderer kept figures whole wrapped them: read back whole all the same.
    assert _wraps_rejoined(("Revenue FY2024: USD", "391,035 M; Net income")) == (
        "Revenue FY2024: USD 391,035 M; Net income",
    )
    assert _wraps_rejoined(("Diluted EPS FY2023: 6.13 USD/", "shares; Diluted")) == (
        "Diluted EPS FY2023: 6.13 USD/shares; Diluted",
    )
    wrong = edited(deck, lambda d: bullet(d, 1, 0).update(display="USD 391,036 M"))
    assert problems(check(render_pdf(wrong, spec=deck).pdf, lookup_from(deck))) == [
        (1, "USD 391,036 M", "USD 391,035 M", "mismatch")
    ]


@pytest.mark.parametrize(
    "words",
    [
        pytest.param("市场", id="drawn-by-the-fallback-font"),
        pytest.param("क्षेत्र", id="drawn-by-no-installed-font"),
    ],
)
def test_a_slide_with_characters_dejavu_lacks_reads_back_as_its_words_and_checks_clean(words: str) -> None:
    # WeasyPrint then embeds a CMap that pypdf alone reads one byte at a time: NULs between every letter.
    deck = sample_deck()
    bullet = Bullet(text=f"Services {words} carried the year", figures=(figure("revenue", 2024),))
    deck = with_slide(deck, 1, bullets=(bullet, *deck.slides[0].bullets[1:]))
    pdf = render_pdf(deck).pdf
    report = check(pdf, lookup_from(deck))
    assert report.ok, report.problems()
    lines = slide_texts(pdf)[0].lines
    assert f"• Services {words} carried the year;" in lines
    assert "Revenue FY2024: USD 391,035 M" in lines


def test_nul_control_and_replacement_characters_are_never_read_as_figures() -> None:
    assert figures_in("\x00\x05\x00 \ufffd\ufffd \x00") == []
    interleaved = "\x00U\x00S\x00D\x00 \x003\x009\x001\x00 \x00M"
    assert [found.text for found in figures_in(interleaved)] == ["USD 391 M"]


def test_a_per_share_figure_is_never_broken_across_lines_of_the_pdf() -> None:
    """WeasyPrint broke "6.13 USD/shares" after its slash; the fact-check then read "6.13" as a number nobody
    placed and the placement as missing, and the embedded model's decks escalated on it. Whatever the words
    before it (at 2, 8 and 18 of these words it fell on the slash), the figure stays whole and the deck's PDF
    checks clean."""
    eps = figure("eps_diluted", 2024)
    base = sample_deck(4)
    words = [
        "company",
        "strategy",
        "and",
        "growth",
        "potential",
        "to",
        "evaluate",
        "the",
        "company's",
        "long-term",
        "growth",
        "prospects",
        "and",
        "strategic",
        "direction",
        "the",
        "company's",
        "market",
        "trends",
        "and",
        "competition",
        "to",
        "understand",
    ]
    for length in range(len(words) + 1):
        bullet = Bullet(text=" ".join(words[:length]) or "Earnings", figures=(eps, eps))
        deck = with_slide(base, 4, bullets=(bullet,))
        pdf = render_pdf(deck).pdf
        assert not any(line.endswith("USD/") for text in slide_texts(pdf) for line in text.lines), length
        assert check(pdf, lookup_from(deck)).ok, length


def test_a_pdf_page_read_before_is_answered_by_its_key_and_a_changed_slide_is_read_again(
    true_deck: Deck, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refinement lap's PDF: the pages of slides the lap left as they were are not read back again, and
    the slide it changed is, with what it prints wrong found all the same."""
    monkeypatch.setattr(extract, "_page_texts", KeptInProcess(512))  # nothing read before this test
    reads: list[int] = []
    read_page = PageObject.extract_text

    def counted(page: PageObject, *args: Any, **kwargs: Any) -> str:
        reads.append(1)
        text: str = read_page(page, *args, **kwargs)
        return text

    monkeypatch.setattr(PageObject, "extract_text", counted)
    lookup = lookup_from(true_deck)
    assert check(render_pdf(true_deck).pdf, lookup, page_keys=page_keys(true_deck)).ok
    assert len(reads) == SLIDES
    reads.clear()
    wrong = edited(true_deck, lambda d: bullet(d, 1, 0).update(display="USD 391,036 M"))
    report = check(render_pdf(wrong, spec=true_deck).pdf, lookup, page_keys=page_keys(wrong))
    assert problems(report) == [(1, "USD 391,036 M", "USD 391,035 M", "mismatch")]
    assert len(reads) == 1
    # Keys that are not one a page (a slide overflowed onto a page of its own): every page is read.
    reads.clear()
    assert check(render_pdf(true_deck).pdf, lookup, page_keys=page_keys(true_deck)[1:]).ok
    assert len(reads) == SLIDES
