"""The render lint (T7): each rule fires on a slide built to break it, names the slide and the shape, and
stays quiet on the real renderer's sample decks."""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Sequence
from typing import Any

import pytest
from PIL import ImageFont
from pptx import Presentation
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.enum.shapes import MSO_SHAPE
from pptx.enum.text import MSO_AUTO_SIZE
from pptx.oxml.ns import qn
from pptx.util import Emu, Inches, Pt

from agents.deck.lint.checks import RULES, SLIDE_WIDE, Finding, finding_counts, lint_pptx
from agents.deck.render.pptx import render_pptx
from agents.deck.spec import Bullet, Deck, Figure
from agents.render.fonts import FALLBACK_INDEX, FONT_NAME, fallback_path, font_path
from tests.agents.deck.samples import sample_deck

INSET_PT = 7.2  # python-pptx's default insets: 0.1 in left and right, 0.05 in top and bottom
LINE_HEIGHT_EM = 1.2
HOSTILE = "Margins \ud800held\ufffe \x00firm\x07 \udfff"


# ---- building decks by hand -------------------------------------------------------------------------


def new_presentation() -> Any:
    presentation = Presentation()
    presentation.slide_width = Emu(12192000)  # 13.333 in
    presentation.slide_height = Emu(6858000)  # 7.5 in
    return presentation


def add_slide(presentation: Any, *, title: str = "Margins are the highest in the peer set") -> Any:
    slide = presentation.slides.add_slide(presentation.slide_layouts[6])
    add_text(slide, "Title", title, top=0.3, height=0.8, size=28, bold=True)
    add_text(slide, "Takeaway", "Pricing power shows in the gross margin.", top=1.2, height=0.5, size=18)
    return slide


def add_text(
    slide: Any,
    name: str,
    text: str,
    *,
    left: float = 0.6,
    top: float = 2.0,
    width: float = 12.0,
    height: float = 4.5,
    size: float = 18,
    bold: bool = False,
    wrap: bool = True,
) -> Any:
    shape = slide.shapes.add_textbox(Inches(left), Inches(top), Inches(width), Inches(height))
    shape.name = name
    frame = shape.text_frame
    frame.word_wrap = wrap
    frame.auto_size = MSO_AUTO_SIZE.NONE
    for index, line in enumerate(text.split("\n")):
        paragraph = frame.paragraphs[0] if index == 0 else frame.add_paragraph()
        run = paragraph.add_run()
        run.text = line
        run.font.size = Pt(size)
        run.font.bold = bold
        run.font.name = FONT_NAME
    return shape


def add_chart(
    slide: Any, categories: Sequence[str], values: Sequence[float | None], labels: Sequence[str] = ()
) -> Any:
    data = CategoryChartData()  # type: ignore[no-untyped-call]  # python-pptx leaves it unannotated
    data.categories = list(categories)
    data.add_series("Revenue", list(values))  # type: ignore[no-untyped-call]
    frame = slide.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(6.5), Inches(2.0), Inches(6.0), Inches(4.5), data
    )
    frame.name = "Chart"
    for point, label in zip(frame.chart.plots[0].series[0].points, labels, strict=False):
        point.data_label.text_frame.text = label
    return frame


def saved(presentation: Any) -> bytes:
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def one_slide(build: Any) -> bytes:
    presentation = new_presentation()
    build(add_slide(presentation))
    return saved(presentation)


def rules_on(findings: list[Finding], rule: str) -> list[Finding]:
    return [finding for finding in findings if finding.rule == rule]


# ---- metrics, measured here with Pillow independently of the lint ---------------------------------------


def width_pt(text: str, size: float, *, bold: bool = False) -> float:
    return ImageFont.truetype(str(font_path(bold=bold)), 1000).getlength(text) * size / 1000


def words_per_line(word: str, size: float, inner_width: float) -> int:
    """How many copies of ``word``, one space apart, fit on one line of ``inner_width`` points."""
    return 1 + math.floor((inner_width - width_pt(word, size)) / (width_pt(" ", size) + width_pt(word, size)))


# ---- a clean slide ----------------------------------------------------------------------------------


def test_a_plain_slide_that_fits_has_no_findings() -> None:
    data = one_slide(
        lambda slide: add_text(slide, "Bullets", "Services carried the year\nCash funds the buyback")
    )
    assert lint_pptx(data) == []


def test_the_renderers_sample_decks_lint_clean() -> None:
    for slides in (1, 4, 5, 8):
        deck = sample_deck(slides)
        assert lint_pptx(render_pptx(deck), deck) == [], f"sample_deck({slides})"


# ---- overflow ---------------------------------------------------------------------------------------


def test_a_box_filled_to_its_last_line_is_not_flagged_and_ten_percent_more_is() -> None:
    size, lines, width_in = 20.0, 5, 6.0
    per_line = words_per_line("margin", size, width_in * 72 - 2 * INSET_PT)
    # Room for exactly five lines plus 6 pt, less than a sixth line would need.
    height_in = (lines * LINE_HEIGHT_EM * size + INSET_PT + 6) / 72
    fitting = " ".join(["margin"] * per_line * lines)
    too_long = " ".join(["margin"] * math.ceil(per_line * lines * 1.1))

    def box(text: str) -> bytes:
        return one_slide(
            lambda slide: add_text(slide, "Bullets", text, width=width_in, height=height_in, size=size)
        )

    assert lint_pptx(box(fitting)) == []
    [overflow] = rules_on(lint_pptx(box(too_long)), "overflow")
    assert (overflow.slide, overflow.shape) == (1, "Bullets")
    assert "needs 144 pt" in overflow.message


def test_overflow_is_measured_with_the_bold_face_when_the_text_is_bold() -> None:
    text = "Operating margin expanded again"
    regular, bold = width_pt(text, 24), width_pt(text, 24, bold=True)
    assert regular < bold
    # One line high, and as wide as halfway between the regular and the bold width of the text.
    width_in = ((regular + bold) / 2 + 2 * INSET_PT) / 72
    height_in = (LINE_HEIGHT_EM * 24 + INSET_PT + 4) / 72

    def box(*, is_bold: bool) -> bytes:
        return one_slide(
            lambda slide: add_text(
                slide, "Chart title", text, width=width_in, height=height_in, size=24, bold=is_bold
            )
        )

    assert lint_pptx(box(is_bold=False)) == []
    assert [f.shape for f in rules_on(lint_pptx(box(is_bold=True)), "overflow")] == ["Chart title"]


def test_chinese_text_is_measured_with_the_fallback_faces_widths_so_a_box_it_overflows_is_flagged() -> None:
    # A line of ten ideographs: 10 em in the fallback face that draws them, 6 em as DejaVu's empty boxes.
    text = "市场" * 5
    drawn = ImageFont.truetype(str(fallback_path()), 1000, index=FALLBACK_INDEX).getlength(text) * 24 / 1000
    assert drawn == 240 and width_pt(text, 24) < drawn
    height_in = (LINE_HEIGHT_EM * 24 + INSET_PT + 4) / 72

    def box(width_pt_inside: float) -> bytes:
        width_in = (width_pt_inside + 2 * INSET_PT) / 72
        return one_slide(
            lambda slide: add_text(slide, "Takeaway box", text, width=width_in, height=height_in, size=24)
        )

    assert lint_pptx(box(drawn + 1)) == []
    assert [f.shape for f in rules_on(lint_pptx(box(drawn - 10)), "overflow")] == ["Takeaway box"]


def test_a_line_too_wide_for_a_box_that_does_not_wrap_overflows() -> None:
    data = one_slide(lambda slide: add_text(slide, "Bullets", "x " * 200, height=1.0, wrap=False))
    [overflow] = rules_on(lint_pptx(data), "overflow")
    assert "does not wrap" in overflow.message


def test_a_table_cell_taller_than_its_row_overflows_and_names_the_cell() -> None:
    def build(slide: Any) -> None:
        frame = slide.shapes.add_table(2, 2, Inches(0.6), Inches(2.0), Inches(4.0), Inches(0.8))
        frame.name = "Table"
        table = frame.table
        for row in table.rows:
            row.height = Inches(0.4)
        for column in table.columns:
            column.width = Inches(2.0)
        table.cell(0, 0).text = "Metric"
        table.cell(1, 0).text = "Revenue from services and wearables combined"
        for cell in (table.cell(0, 0), table.cell(1, 0)):
            cell.text_frame.paragraphs[0].runs[0].font.size = Pt(14)

    [overflow] = rules_on(lint_pptx(one_slide(build)), "overflow")
    assert overflow.shape == "Table"
    assert overflow.message.startswith("row 2, column 1:")


def test_the_finding_names_the_slide_the_broken_box_is_on() -> None:
    presentation = new_presentation()
    add_slide(presentation)
    broken = add_slide(presentation)
    add_text(broken, "Bullets", "revenue " * 300, height=1.0)
    [overflow] = rules_on(lint_pptx(saved(presentation)), "overflow")
    assert (overflow.slide, overflow.shape) == (2, "Bullets")


# ---- wall of text -----------------------------------------------------------------------------------


def test_a_bullet_of_more_than_thirty_words_is_a_wall_of_text() -> None:
    bullet = " ".join(["services"] * 31)
    data = one_slide(lambda slide: add_text(slide, "Bullets", f"Short point\n{bullet}"))
    [wall] = rules_on(lint_pptx(data), "wall_of_text")
    assert wall.shape == "Bullets"
    assert "31-word paragraph" in wall.message


def test_seven_points_in_one_box_are_a_wall_of_text() -> None:
    data = one_slide(
        lambda slide: add_text(slide, "Bullets", "\n".join(f"Point {n}" for n in range(7)), size=14)
    )
    assert [f.message for f in rules_on(lint_pptx(data), "wall_of_text")] == [
        "7 points in one box (at most 6)"
    ]


def test_more_than_sixty_words_on_a_slide_is_a_wall_even_when_each_box_is_short() -> None:
    bullets = "\n".join(
        " ".join(["revenue"] * 13) for _ in range(4)
    )  # 52 words + 8 in the title and 7 in the takeaway
    [wall] = rules_on(lint_pptx(one_slide(lambda slide: add_text(slide, "Bullets", bullets))), "wall_of_text")
    assert (wall.slide, wall.shape, wall.message) == (1, SLIDE_WIDE, "67 words on the slide (at most 60)")


def test_the_footers_small_print_does_not_count_towards_the_slides_words() -> None:
    def build(slide: Any) -> None:
        add_text(
            slide, "Bullets", "\n".join([" ".join(["revenue"] * 20)] * 2), height=2.0
        )  # 55 words with the title
        add_text(slide, "Footer", " ".join(["10-K"] * 25), top=6.9, height=0.5, size=8)

    assert rules_on(lint_pptx(one_slide(build)), "wall_of_text") == []


# ---- geometry ---------------------------------------------------------------------------------------


def test_a_box_past_the_right_edge_is_off_the_slide() -> None:
    data = one_slide(
        lambda slide: add_text(slide, "Chart title", "Revenue", left=12.0, width=2.0, height=0.5)
    )
    [off] = rules_on(lint_pptx(data), "off_slide")
    assert off.shape == "Chart title"
    assert "past the right edge" in off.message


def test_two_boxes_that_intersect_overlap() -> None:
    data = one_slide(
        lambda slide: add_text(slide, "Bullets", "Services carried the year", top=1.5, height=1.0)
    )
    [overlap] = rules_on(lint_pptx(data), "overlap")
    assert (overlap.shape, overlap.message) == ("Takeaway", "overlaps 'Bullets' by 12.00 in x 0.20 in")


def test_boxes_that_only_touch_do_not_overlap() -> None:
    data = one_slide(lambda slide: add_text(slide, "Bullets", "Services", top=1.7, height=1.0))
    assert rules_on(lint_pptx(data), "overlap") == []


def test_a_text_less_panel_behind_a_box_it_contains_is_not_an_overlap_but_in_front_it_is() -> None:
    def panel(slide: Any) -> None:
        shape = slide.shapes.add_shape(
            MSO_SHAPE.RECTANGLE, Inches(0.5), Inches(1.9), Inches(12.2), Inches(4.7)
        )
        shape.name = "Panel"

    def behind(slide: Any) -> None:
        panel(slide)
        add_text(slide, "Bullets", "Services carried the year")

    def in_front(slide: Any) -> None:
        add_text(slide, "Bullets", "Services carried the year")
        panel(slide)

    assert rules_on(lint_pptx(one_slide(behind)), "overlap") == []
    [overlap] = rules_on(lint_pptx(one_slide(in_front)), "overlap")
    assert (overlap.shape, overlap.message.split(" by ")[0]) == ("Bullets", "overlaps 'Panel'")


# ---- empty, placeholder and garbled text -------------------------------------------------------------


def test_an_empty_title_and_a_blank_takeaway_are_empty_text() -> None:
    presentation = new_presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[6])
    add_text(slide, "Title", "", top=0.3, height=0.8)
    add_text(slide, "Takeaway", "   ", top=1.2, height=0.5)
    findings = rules_on(lint_pptx(saved(presentation)), "empty_text")
    assert [(f.shape, f.message) for f in findings] == [
        ("Title", "the title is empty"),
        ("Takeaway", "the takeaway is empty"),
    ]


def test_a_slide_without_a_title_is_flagged_but_a_title_placeholder_counts_as_one() -> None:
    presentation = new_presentation()
    untitled = presentation.slides.add_slide(presentation.slide_layouts[6])
    add_text(untitled, "Bullets", "Services carried the year")
    titled = presentation.slides.add_slide(presentation.slide_layouts[5])  # "Title Only"
    titled.shapes.title.text = "Margins held"
    findings = rules_on(lint_pptx(saved(presentation)), "empty_text")
    assert [(f.slide, f.shape, f.message) for f in findings] == [(1, SLIDE_WIDE, "the slide has no title")]


@pytest.mark.parametrize(
    "text",
    [
        "Lorem ipsum dolor sit amet",
        "Revenue outlook: tbd",
        "TODO add the peers",
        "Click to add text",
        "Growth drivers [Placeholder]",
        "Margin of XXX against peers",
        "Insert the peer chart here",
        "Hold {{ recommendation }}",
    ],
)
def test_placeholder_text_is_flagged_whatever_its_case(text: str) -> None:
    [finding] = rules_on(
        lint_pptx(one_slide(lambda slide: add_text(slide, "Bullets", text))), "placeholder_text"
    )
    assert finding.shape == "Bullets"


@pytest.mark.parametrize(
    "text", ["Todos los mercados", "Phase-in starts in the spring", "XXL margins", "To be done"]
)
def test_ordinary_words_that_look_like_placeholders_are_not_flagged(text: str) -> None:
    assert (
        rules_on(lint_pptx(one_slide(lambda slide: add_text(slide, "Bullets", text))), "placeholder_text")
        == []
    )


def test_placeholder_text_in_a_table_cell_names_the_cell() -> None:
    def build(slide: Any) -> None:
        frame = slide.shapes.add_table(2, 2, Inches(0.6), Inches(2.0), Inches(6.0), Inches(1.0))
        frame.name = "Table"
        frame.table.cell(1, 1).text = "TBD"

    [finding] = rules_on(lint_pptx(one_slide(build)), "placeholder_text")
    assert (finding.shape, finding.message) == ("Table", "row 2, column 2: placeholder text 'TBD'")


def test_control_characters_that_python_pptx_escapes_are_garbled_text() -> None:
    [finding] = rules_on(
        lint_pptx(one_slide(lambda slide: add_text(slide, "Bullets", "Revenue\x07 grew"))), "garbled_text"
    )
    assert finding.shape == "Bullets"
    assert "_x0007_" in finding.message


def test_a_soft_line_break_is_not_garbled_text() -> None:
    def build(slide: Any) -> None:
        paragraph = add_text(slide, "Bullets", "Services carried the year").text_frame.paragraphs[0]
        paragraph.add_line_break()
        paragraph.add_run().text = "and the next"

    assert lint_pptx(one_slide(build)) == []


# ---- charts -----------------------------------------------------------------------------------------


def test_a_chart_point_without_a_value_is_a_missing_figure() -> None:
    data = one_slide(lambda slide: add_chart(slide, ["FY2022", "FY2023", "FY2024"], [1.0, None, 3.0]))
    [finding] = rules_on(lint_pptx(data), "chart_missing_figures")
    assert (finding.shape, finding.message) == ("Chart", "the point 'FY2023' of 'Revenue' has no value")


def test_a_chart_with_no_points_is_a_missing_figure() -> None:
    def build(slide: Any) -> None:
        chart_space = add_chart(slide, ["FY2024"], [1.0]).chart._chartSpace
        for point in list(chart_space.iter(qn("c:pt"))):
            point.getparent().remove(point)
        for count in chart_space.iter(qn("c:ptCount")):
            count.set("val", "0")

    [finding] = rules_on(lint_pptx(one_slide(build)), "chart_missing_figures")
    assert (finding.shape, finding.message) == ("Chart", "the chart has no points")


def spec_with_chart() -> Deck:
    deck = sample_deck(1)  # slide 1 charts revenue for FY2022-FY2024
    assert deck.slides[0].chart is not None
    return deck


def chart_slide(deck: Deck, labels: Sequence[str]) -> bytes:
    chart = deck.slides[0].chart
    assert chart is not None
    presentation = new_presentation()
    slide = add_slide(presentation, title=deck.slides[0].title)
    add_chart(slide, [p.period for p in chart.points], [float(p.decimal) for p in chart.points], labels)
    return saved(presentation)


def test_a_chart_whose_labels_read_the_specs_figures_passes() -> None:
    deck = spec_with_chart()
    assert deck.slides[0].chart is not None
    labels = [point.display for point in deck.slides[0].chart.points]
    assert rules_on(lint_pptx(chart_slide(deck, labels), deck), "chart_missing_figures") == []


def test_a_chart_label_that_does_not_read_the_specs_figure_is_flagged_with_the_figure() -> None:
    deck = spec_with_chart()
    chart = deck.slides[0].chart
    assert chart is not None
    labels = [chart.points[0].display, "$1", chart.points[2].display]
    [finding] = rules_on(lint_pptx(chart_slide(deck, labels), deck), "chart_missing_figures")
    assert finding.shape == "Chart"
    assert finding.message == f"no data label reads the spec's figures: FY2023 {chart.points[1].display}"


def test_a_chart_in_the_spec_but_not_on_the_slide_is_flagged() -> None:
    deck = spec_with_chart()
    data = one_slide(lambda slide: None)
    [finding] = rules_on(lint_pptx(data, deck), "chart_missing_figures")
    assert (finding.shape, finding.message) == (
        SLIDE_WIDE,
        "the spec's chart 'Revenue by fiscal year' is not drawn on the slide",
    )


def test_a_spec_slide_with_no_slide_in_the_file_is_missing() -> None:
    deck = sample_deck(2)
    presentation = new_presentation()
    add_slide(presentation, title=deck.slides[0].title)
    add_chart(presentation.slides[0], ["FY2022"], [1.0], ["x"])
    missing = rules_on(lint_pptx(saved(presentation), deck), "missing_slide")
    assert [f.message for f in missing] == [
        f"spec slide 2 ('{deck.slides[1].title}') has no slide in the file"
    ]


# ---- broken files and hostile text ------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"not a presentation", b"PK\x03\x04 truncated"])
def test_bytes_that_are_not_a_presentation_are_one_unreadable_finding(data: bytes) -> None:
    [finding] = lint_pptx(data)
    assert (finding.rule, finding.slide) == ("unreadable", 0)


def test_a_slide_with_broken_xml_is_unreadable() -> None:
    source = zipfile.ZipFile(io.BytesIO(one_slide(lambda slide: None)))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for name in source.namelist():
            target.writestr(name, b"<p:sld" if name == "ppt/slides/slide1.xml" else source.read(name))
    assert [f.rule for f in lint_pptx(buffer.getvalue())] == ["unreadable"]


def hostile_deck() -> Deck:
    deck = sample_deck(4)
    slides = list(deck.slides)
    first = slides[0]
    assert first.chart is not None
    points = tuple(
        point.model_copy(update={"display": f"{point.display}{HOSTILE}"}) for point in first.chart.points
    )
    slides[0] = first.model_copy(
        update={
            "title": HOSTILE,
            "takeaway": HOSTILE,
            "bullets": (Bullet(text=HOSTILE, figures=(first.bullets[0].figures[0],)),),
            "chart": first.chart.model_copy(update={"title": HOSTILE, "points": points}),
        }
    )
    return deck.model_copy(update={"title": HOSTILE, "thesis": HOSTILE, "slides": tuple(slides)})


def test_hostile_text_in_the_spec_never_crashes_the_lint_and_findings_stay_printable() -> None:
    deck = hostile_deck()
    findings = lint_pptx(one_slide(lambda slide: None), deck)
    assert {f.rule for f in findings} >= {"chart_missing_figures", "missing_slide"}
    for finding in findings:
        finding.message.encode("utf-8")  # no lone surrogate survives into a finding
        assert "\x00" not in finding.message


def test_a_deck_rendered_from_hostile_text_lints_without_crashing_and_shows_the_damage() -> None:
    deck = hostile_deck()
    findings = lint_pptx(render_pptx(deck), deck)
    # The renderer turns a lone surrogate into U+FFFD, which a board would see: the words are garbled.
    assert {(f.rule, f.slide) for f in findings} >= {("garbled_text", 1)}
    assert all(f.slide == 1 for f in findings)


def test_a_figure_built_from_hostile_text_is_quoted_cleanly() -> None:
    figure = Figure(
        fact_id="X", label=HOSTILE, period="FY2024", value="1", unit="USD", display="\ud800$1", source="s"
    )
    deck = spec_with_chart()
    chart = deck.slides[0].chart
    assert chart is not None
    spec = deck.model_copy(
        update={
            "slides": (
                deck.slides[0].model_copy(update={"chart": chart.model_copy(update={"points": (figure,)})}),
            )
        }
    )
    [finding] = rules_on(lint_pptx(chart_slide(deck, ["$1"]), spec), "chart_missing_figures")
    assert finding.message == "no data label reads the spec's figures: FY2024 \ufffd$1"


# ---- counting, for the loop ---------------------------------------------------------------------------


def test_finding_counts_has_every_rule_and_counts_each() -> None:
    presentation = new_presentation()
    first = add_slide(presentation)
    add_text(first, "Bullets", "TODO\nTBD")
    third_title = "Net income eased"
    add_slide(presentation)
    third = add_slide(presentation, title=third_title)
    add_text(third, "Chart title", "Revenue", left=12.5, width=2.0, height=0.5)
    findings = lint_pptx(saved(presentation))
    assert [f.slide for f in findings] == [1, 1, 3]
    counts = finding_counts(findings)
    assert set(counts) == set(RULES)
    assert counts["placeholder_text"] == 2
    assert counts["off_slide"] == 1
    assert sum(counts.values()) == 3
