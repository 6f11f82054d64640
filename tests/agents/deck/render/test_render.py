"""The deck renderers: one resolved deck becomes a 16:9 PPTX and a PDF that print the same figures on the
same slide, carry the deck as deck.json, and survive hostile model-written text without fetching anything."""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from lxml import etree
from pptx import Presentation
from pptx.util import Emu
from pypdf import PdfReader

from agents.deck.lint.checks import lint_pptx
from agents.deck.render.embedded import DECK_PART_NAME, NoEmbeddedDeck, read_deck
from agents.deck.render.pdf import deck_html, render_pdf
from agents.deck.render.pptx import render_pptx
from agents.deck.spec import Bullet, Chart, Deck, Figure, Slide, Table, Theme, bullet_text, display
from agents.kept import KeptInProcess
from agents.render.charts import chart_svg
from agents.render.fonts import CSS_FONT_FAMILY, FALLBACK_FONT_NAME, FONT_NAME
from agents.render.pdf import RenderedPdf, html_to_pdf
from tests.agents.deck.samples import figure, sample_deck, titled_deck
from tests.agents.render.pdf_fonts import embedded_fonts

SLIDES = 20
C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
HOSTILE_TITLE = "Bad \ud800 text \ufffe and \x00 <script>alert(1)</script> <a href='file:///etc/passwd'>x</a>"
HOSTILE_TAKEAWAY = '<link rel="attachment" href="file:///etc/passwd"> <img src="http://127.0.0.1:9/x.png">'


@dataclass(frozen=True)
class Rendered:
    deck: Deck
    pptx: bytes
    pdf: RenderedPdf


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    deck = sample_deck(SLIDES)
    return Rendered(deck=deck, pptx=render_pptx(deck), pdf=render_pdf(deck))


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def chart_labels(shape: Any) -> list[str]:
    """The text of each data label, read from the chart part's XML (what PowerPoint draws)."""
    space = shape.chart._chartSpace
    return ["".join(t.text or "" for t in label.iter(f"{A}t")) for label in space.iter(f"{C}dLbl")]


def pptx_slide_texts(data: bytes) -> list[str]:
    """Each slide's text: text boxes, table cells and chart data labels, in shape order."""
    texts = []
    for slide in Presentation(io.BytesIO(data)).slides:
        parts = []
        for shape in slide.shapes:
            if shape.has_text_frame:
                parts.append(shape.text_frame.text)
            elif getattr(shape, "has_table", False):
                parts.extend(cell.text for row in shape.table.rows for cell in row.cells)
            elif getattr(shape, "has_chart", False):
                parts.extend(chart_labels(shape))
        texts.append(one_line(" ".join(parts)))
    return texts


def pdf_page_texts(data: bytes) -> list[str]:
    return [one_line(page.extract_text()) for page in PdfReader(io.BytesIO(data)).pages]


def slides_showing(texts: list[str], shown: str) -> set[int]:
    return {number for number, text in enumerate(texts, 1) if shown in text}


def test_the_pptx_is_16_by_9_and_the_pdf_has_one_page_per_slide(rendered: Rendered) -> None:
    presentation = Presentation(io.BytesIO(rendered.pptx))

    assert (presentation.slide_width, presentation.slide_height) == (Emu(12192000), Emu(6858000))
    assert len(presentation.slides) == SLIDES
    assert rendered.pdf.pages == SLIDES
    assert len(PdfReader(io.BytesIO(rendered.pdf.pdf)).pages) == SLIDES
    page = PdfReader(io.BytesIO(rendered.pdf.pdf)).pages[0].mediabox
    assert (round(float(page.width)), round(float(page.height))) == (960, 540)  # 13.333 in x 7.5 in


def test_every_figure_is_printed_on_its_own_slide_and_no_other_in_both_files(rendered: Rendered) -> None:
    pptx_texts = pptx_slide_texts(rendered.pptx)
    pdf_texts = pdf_page_texts(rendered.pdf.pdf)
    expected: dict[str, set[int]] = {}
    for slide in rendered.deck.slides:
        for printed in slide.figures():
            expected.setdefault(printed.display, set()).add(slide.number)

    assert len(expected) >= 9  # revenue x3, net income x3, margins, growth, EPS
    for shown, numbers in expected.items():
        assert slides_showing(pptx_texts, shown) == numbers, shown
        assert slides_showing(pdf_texts, shown) == numbers, shown


def test_both_files_show_the_title_slide_first_and_the_words_of_every_slide() -> None:
    deck = titled_deck(6, theme=Theme(firm="Northwind Capital"))
    pptx_texts = pptx_slide_texts(render_pptx(deck))
    pdf_texts = pdf_page_texts(render_pdf(deck).pdf)

    for texts in (pptx_texts, pdf_texts):
        cover = texts[0]
        for shown in (
            deck.title,
            deck.thesis,
            "Apple Inc. (AAPL)",
            deck.subtitle,
            "Prepared by Northwind Capital",
        ):
            assert shown in cover, (shown, cover)
        assert deck.title not in texts[1]
        for slide in deck.slides:
            for words in [*slide.words(), *(bullet_text(bullet) for bullet in slide.bullets)]:
                assert one_line(words) in texts[slide.number - 1], (slide.number, words)


def test_the_pdf_reads_in_the_same_order_as_the_pptx(rendered: Rendered) -> None:
    slide = rendered.deck.slides[0]
    assert slide.chart is not None
    in_order = [slide.title, slide.takeaway, bullet_text(slide.bullets[0]), slide.chart.title]
    pdf_text = pdf_page_texts(rendered.pdf.pdf)[0]
    pptx_text = pptx_slide_texts(rendered.pptx)[0]

    for text in (pdf_text, pptx_text):
        positions = [text.index(one_line(part)) for part in in_order]
        assert positions == sorted(positions)


def test_bullets_print_their_words_then_each_figure_after_a_semicolon(rendered: Rendered) -> None:
    slide = Presentation(io.BytesIO(rendered.pptx)).slides[0]
    bullets = next(shape for shape in slide.shapes if shape.name == "Bullets")

    assert [p.text for p in bullets.text_frame.paragraphs] == [
        "Services carried the year; Revenue FY2024: USD 391,035 M",
        "Growth returned on the previous year; Revenue growth FY2024: 2.0%",
    ]


def test_shapes_are_named_for_what_they_are_and_sit_on_the_slide(rendered: Rendered) -> None:
    presentation = Presentation(io.BytesIO(rendered.pptx))
    names = [[shape.name for shape in slide.shapes] for slide in presentation.slides]

    assert names[0] == ["Title", "Takeaway", "Bullets", "Chart title", "Chart", "Footer"]
    assert names[1] == ["Title", "Takeaway", "Table title", "Table", "Footer"]
    assert names[3] == ["Title", "Takeaway", "Bullets", "Footer"]
    for slide in presentation.slides:
        assert not slide.placeholders
        for shape in slide.shapes:
            assert shape.left >= 0 and shape.left + shape.width <= presentation.slide_width, shape.name
            assert shape.top >= 0 and shape.top + shape.height <= presentation.slide_height, shape.name


def test_the_templates_own_layouts_are_stretched_to_16_by_9_too(rendered: Rendered) -> None:
    presentation = Presentation(io.BytesIO(rendered.pptx))
    master = presentation.slide_master
    width = presentation.slide_width

    for layout in [master, *master.slide_layouts]:
        for shape in layout.shapes:
            assert shape.left + shape.width <= width, (layout.name, shape.name)
    title = master.slide_layouts[0].placeholders[0]  # a slide added later in PowerPoint gets this title
    assert title.left + title.width / 2 == pytest.approx(width / 2, abs=Emu(12700))


def test_every_run_is_set_in_the_deck_typeface(rendered: Rendered) -> None:
    slide_xml = zipfile.ZipFile(io.BytesIO(rendered.pptx)).read("ppt/slides/slide1.xml")
    runs = etree.fromstring(slide_xml).findall(f".//{A}rPr")

    assert runs
    for properties in runs:
        assert properties.find(f"{A}latin").get("typeface") == FONT_NAME
        # East Asian text in the face the PDF falls back to for it, as PowerPoint and LibreOffice pick it.
        assert properties.find(f"{A}ea").get("typeface") == FALLBACK_FONT_NAME
        assert properties.find(f"{A}cs").get("typeface") == FONT_NAME


def test_chinese_in_a_slide_is_drawn_in_the_fallback_face_and_the_rest_in_dejavu() -> None:
    deck = sample_deck(2)
    slide = deck.slides[0]
    bullet = Bullet(text="Services 市场 carried the year", figures=(figure("revenue", 2024),))
    slides = (slide.model_copy(update={"bullets": (bullet,)}), deck.slides[1])
    deck = deck.model_copy(update={"slides": slides})
    html = deck_html(deck)

    assert f"font-family: {CSS_FONT_FAMILY};" in html
    assert embedded_fonts(render_pdf(deck).pdf) == {"DejaVu-Sans", "DejaVu-Sans-Bold", "WenQuanYi-Micro-Hei"}
    assert embedded_fonts(render_pdf(sample_deck(2)).pdf) == {"DejaVu-Sans", "DejaVu-Sans-Bold"}


def test_the_table_is_native_with_metric_period_value_and_source(rendered: Rendered) -> None:
    slide = Presentation(io.BytesIO(rendered.pptx)).slides[1]
    table = next(shape for shape in slide.shapes if shape.name == "Table").table
    rows = [[cell.text for cell in row.cells] for row in table.rows]

    assert rows == [
        ["Metric", "Period", "Value", "Source"],
        ["Gross margin", "FY2024", "46.2%", "derived by code"],
        ["Operating margin", "FY2024", "31.5%", "derived by code"],
        ["Diluted EPS", "FY2024", "6.08 USD/shares", "10-K filed 2024-11-01"],
    ]


def test_the_chart_is_native_with_periods_values_and_display_strings_as_labels(
    rendered: Rendered,
) -> None:
    slide = Presentation(io.BytesIO(rendered.pptx)).slides[0]
    shape = next(shape for shape in slide.shapes if shape.name == "Chart")
    plot = shape.chart.plots[0]

    assert list(plot.categories) == ["FY2022", "FY2023", "FY2024"]
    assert list(plot.series[0].values) == [394328000000.0, 383285000000.0, 391035000000.0]
    assert chart_labels(shape) == ["USD 394,328 M", "USD 383,285 M", "USD 391,035 M"]
    assert shape.chart.value_axis.minimum_scale == 0  # bars compare from zero


def test_a_line_chart_spans_the_same_padded_range_in_both_files(rendered: Rendered) -> None:
    slide = Presentation(io.BytesIO(rendered.pptx)).slides[2]
    axis = next(shape for shape in slide.shapes if shape.name == "Chart").chart.value_axis

    # Net income 93.7bn to 99.8bn, padded by a quarter of the span each way: the shape of the change shows.
    assert axis.minimum_scale == pytest.approx(93736e6 - 0.25 * 6067e6)
    assert axis.maximum_scale == pytest.approx(99803e6 + 0.25 * 6067e6)


def longest_deck() -> Deck:
    """As much text as the drafter may write: a 90-character title, a 160-character takeaway and five
    bullets of about 140 characters, each with a figure, beside a chart; on slide 1, under the deck title."""
    title = ("Services revenue carried the year while hardware stayed flat across every region we cover ")[
        :90
    ]
    takeaway = (
        "The board should hold the position: services margins fund the buyback, and the hardware cycle "
        "turns when the installed base upgrades in the next two fiscal years at the latest"
    )[:160]
    words = (
        "Services grew in every region while the installed base kept rising, which carries the margin "
        "through a flat hardware cycle for the whole of the year"
    )[:140]
    base = sample_deck(2)
    bullets = tuple(Bullet(text=words, figures=(figure("revenue", 2024),)) for _ in range(5))
    first = base.slides[0].model_copy(update={"title": title, "takeaway": takeaway, "bullets": bullets})
    return base.model_copy(update={"slides": (first, base.slides[1])})


def test_the_longest_text_the_drafter_may_write_fits_its_boxes_by_the_lints_measure() -> None:
    deck = longest_deck()
    findings = lint_pptx(render_pptx(deck), deck)

    assert [f for f in findings if f.rule in ("overflow", "overlap", "off_slide")] == []
    assert render_pdf(deck).pages == 2


def test_an_empty_chart_or_table_still_renders_one_page_per_slide() -> None:
    base = sample_deck(2)
    empty_chart = Chart(title="Nothing resolved", kind="bar", unit="USD", points=())
    slides = (
        base.slides[0].model_copy(update={"chart": empty_chart}),
        Slide(number=2, section="Risks", title="No rows", takeaway="None.", table=Table(title="T", rows=())),
    )
    deck = base.model_copy(update={"slides": slides})

    assert len(Presentation(io.BytesIO(render_pptx(deck))).slides) == 2
    assert render_pdf(deck).pages == 2


def test_the_deck_comes_back_out_of_both_files(rendered: Rendered) -> None:
    assert read_deck(rendered.pptx) == rendered.deck
    assert read_deck(rendered.pdf.pdf) == rendered.deck


def test_the_embedded_spec_is_the_one_passed_not_the_one_printed() -> None:
    printed, spec = sample_deck(2), sample_deck(3)

    assert read_deck(render_pptx(printed, spec=spec)) == spec
    assert read_deck(render_pdf(printed, spec=spec).pdf) == spec
    assert len(Presentation(io.BytesIO(render_pptx(printed, spec=spec))).slides) == 2


def test_the_same_deck_renders_to_the_same_pptx_bytes() -> None:
    assert render_pptx(sample_deck(3)) == render_pptx(sample_deck(3))


def test_the_workbooks_embedded_for_the_charts_carry_no_time_of_rendering() -> None:
    """python-pptx embeds each chart's data as an Excel workbook, which XlsxWriter stamps with the time it
    is written: a render in the next second gave other bytes (seen in a loaded test run). They carry the
    package's fixed date instead."""
    package = zipfile.ZipFile(io.BytesIO(render_pptx(sample_deck(3))))
    workbooks = [name for name in package.namelist() if name.endswith(".xlsx")]
    assert workbooks
    for name in workbooks:
        core = zipfile.ZipFile(io.BytesIO(package.read(name))).read("docProps/core.xml").decode()
        stamps = re.findall(r"<dcterms:(?:created|modified)[^>]*>([^<]+)<", core)
        assert stamps == ["2000-01-01T00:00:00Z", "2000-01-01T00:00:00Z"], name


def hostile_deck() -> Deck:
    base = sample_deck(2)
    first = base.slides[0].model_copy(update={"title": HOSTILE_TITLE, "takeaway": HOSTILE_TAKEAWAY})
    bullet = Bullet(
        text="Tab\there, bell \x07, BOM \ufeff, <b>bold</b> & more", figures=(figure("revenue", 2024),)
    )
    second = base.slides[1].model_copy(update={"bullets": (bullet,)})
    return base.model_copy(update={"thesis": "Hold \udfff.", "slides": (first, second)})


def test_hostile_text_renders_as_plain_text_without_crashing_or_fetching_anything() -> None:
    deck = hostile_deck()
    pptx = render_pptx(deck)
    pdf = render_pdf(deck)
    pptx_texts = pptx_slide_texts(pptx)
    pdf_texts = pdf_page_texts(pdf.pdf)
    reader = PdfReader(io.BytesIO(pdf.pdf))

    assert (pdf.refused, pdf.missing) == ((), ())
    assert [attachment.description for attachment in reader.attachment_list] == ["deck.json"]
    assert b"root:" not in pdf.pdf and b"root:" not in pptx
    for texts in (pptx_texts, pdf_texts):
        assert "<script>alert(1)</script>" in texts[0]  # shown as the words it is, not run
        assert "file:///etc/passwd" in texts[0]
        assert "USD 391,035 M" in texts[1]
        assert "_x0000_" not in " ".join(texts) and "_x0007_" not in " ".join(texts)
    assert "<script>" not in deck_html(deck)
    assert read_deck(pptx) == deck  # the lone surrogates travel in deck.json as escapes
    assert read_deck(pdf.pdf) == deck


def pptx_with_deck_json(raw: bytes) -> bytes:
    """A real rendered PPTX whose deck.json part is replaced by ``raw``."""
    source = zipfile.ZipFile(io.BytesIO(render_pptx(sample_deck(1))))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for info in source.infolist():
            member = raw if "/" + info.filename == DECK_PART_NAME else source.read(info)
            target.writestr(info, member)
    return buffer.getvalue()


def plain_pptx() -> bytes:
    buffer = io.BytesIO()
    Presentation().save(buffer)
    return buffer.getvalue()


def plain_pdf(tmp_path: Any) -> bytes:
    return html_to_pdf("<p>No deck here</p>", base_url=None, static_root=tmp_path).pdf


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda tmp: plain_pptx(), "the PPTX carries no deck.json"),
        (lambda tmp: b"\x00garbage bytes", "neither a PDF nor a PPTX"),
        (lambda tmp: b"PK\x03\x04 truncated zip", "not a readable PPTX"),
        (lambda tmp: b"%PDF-1.7\n truncated", "not a readable PDF"),
        (plain_pdf, "no deck.json attachment"),
        (lambda tmp: pptx_with_deck_json(b"{not json"), "is not JSON"),
        (lambda tmp: pptx_with_deck_json(b'{"title": "no slides"}'), "is not a valid deck"),
    ],
    ids=[
        "pptx-without-part",
        "garbage",
        "broken-zip",
        "broken-pdf",
        "pdf-without-attachment",
        "bad-json",
        "not-a-deck",
    ],
)
def test_read_deck_says_clearly_when_a_file_carries_no_usable_deck(
    make: Any, reason: str, tmp_path: Any
) -> None:
    with pytest.raises(NoEmbeddedDeck, match=re.escape(reason)):
        read_deck(make(tmp_path))


def money(value: str, period: str) -> Figure:
    amount = Decimal(value)
    return Figure(
        fact_id=f"X:fcf:{period}",
        label="Free cash flow",
        period=period,
        value=value,
        unit="USD",
        display=display(amount, "USD"),
        source="derived by code",
    )


def rects(svg: str) -> list[dict[str, float]]:
    found = re.findall(r'<rect x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)"', svg)
    return [dict(zip(("x", "y", "width", "height"), map(float, row), strict=True)) for row in found]


def test_a_bar_chart_draws_negatives_below_the_zero_line_and_labels_every_bar() -> None:
    chart = Chart(
        title="Free cash flow",
        kind="bar",
        unit="USD",
        points=(money("2100000000", "FY2024Q1"), money("-1234000000", "FY2024Q2")),
    )
    svg = chart_svg(chart, 600, 300)
    zero_line = re.search(r'<line x1="[\d.]+" y1="([\d.]+)"', svg)
    assert zero_line is not None
    zero = float(zero_line.group(1))
    positive, negative = rects(svg)

    assert positive["y"] + positive["height"] == pytest.approx(zero, abs=0.2)
    assert negative["y"] == pytest.approx(zero, abs=0.2)
    assert positive["height"] > negative["height"] > 0
    for text in ("USD 2,100 M", "USD -1,234 M", "FY2024Q1", "FY2024Q2"):
        assert f">{text}</text>" in svg
    assert "Gradient" not in svg and "filter" not in svg


def test_a_chart_of_one_point_and_hostile_labels_still_draws_escaped_text() -> None:
    point = money("5", "<FY2024>").model_copy(update={"display": "USD 5.00 & \x00up"})
    chart = Chart(title='"Cash" <b>', kind="line", unit="USD", points=(point,))
    svg = chart_svg(chart, 400, 200)

    assert "<circle" in svg and "<polyline" not in svg
    assert ">&lt;FY2024&gt;</text>" in svg and ">USD 5.00 &amp; up</text>" in svg
    assert 'aria-label="&quot;Cash&quot; &lt;b&gt;"' in svg
    etree.fromstring(svg.encode())  # well-formed XML


def test_the_html_has_one_16_by_9_page_per_slide_in_the_deck_typeface() -> None:
    deck = sample_deck(3)
    html = deck_html(deck)

    assert "@page { size: 13.333in 7.5in; margin: 0; }" in html
    assert f'font-family: "{FONT_NAME}"' in html
    assert html.count('<section class="slide"') == 3
    assert 'rel="attachment" title="deck.json" href="data:application/json;base64,' in html


def test_the_same_deck_is_drawn_once_and_a_changed_one_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # The deck a run freezes is the candidate it measured: its bytes come back without drawing it again,
    # and any change to the deck (or to the deck embedded) draws it anew.
    from agents.deck.render import pptx as module

    drawn: list[str] = []
    real = module._render

    def counting(deck: Deck, embedded: Deck) -> bytes:
        drawn.append(deck.title)
        return real(deck, embedded)

    monkeypatch.setattr(module, "_made", KeptInProcess(4))
    monkeypatch.setattr(module, "_render", counting)
    deck = sample_deck()
    first = render_pptx(deck)
    assert render_pptx(deck.model_copy(deep=True)) == first and len(drawn) == 1
    retitled = deck.model_copy(update={"title": deck.title + " (revised)"})
    assert render_pptx(retitled) != first and len(drawn) == 2
    assert render_pptx(deck, spec=retitled) != first and len(drawn) == 3
    assert read_deck(render_pptx(deck, spec=retitled)).title == retitled.title
