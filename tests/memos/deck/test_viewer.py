"""Seeing a deck: a deck version's page (every slide drawn from its spec, each figure with its citation), its
slide images and downloads, and the slide images of a run's steps, for a deck run finished on the fake LLM."""

from __future__ import annotations

import hashlib
import io
import json
import struct
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import lxml.html
import pytest
from django.db import transaction
from django.test import Client
from pptx import Presentation
from pypdf import PdfReader

from agents.deck.spec import Chart, Deck
from memos.cache import shared_cache
from memos.models import ArtefactVersion, Brief, Company, VersionFile
from memos.pipeline.deck import desk as deck_desk
from memos.pipeline.deck.desk import images as deck_images
from memos.pipeline.deck.desk.viewer import deck_context
from memos.pipeline.workflows import Artefact
from memos.services import printing, version_files
from memos.services.versions import freeze
from tests.agents.deck.samples import cleared_r1, sample_deck
from tests.agents.deck.samples import figure as sample_figure
from tests.memos.deck_support import Finished, FinishedSnapshot, restored_deck
from tests.memos.pipeline_support import analyst

pytestmark = pytest.mark.django_db(transaction=True)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


def forget_images(deck: Deck, version: ArtefactVersion | None = None) -> None:
    """Drops what an earlier test drew of this (deterministic) deck, and of the PDF stored for its version,
    from the shared cache."""
    digests = [deck_images.deck_digest(deck)]
    if version is not None:
        digests.append(deck_images.stored_digest(stored(version, "render.pdf").sha256))
    slides = range(1, len(deck.slides) + 1)
    keys = [deck_images.slide_key(d, n, deck_images.THUMBNAIL_WIDTH_PX) for d in digests for n in slides]
    shared_cache().delete_many([deck_images.pdf_key(digests[0]), *keys])


def stored(version: ArtefactVersion, name: str) -> VersionFile:
    return VersionFile.objects.get(version=version, name=name)


@pytest.fixture
def finished(finished_deck_rows: FinishedSnapshot) -> Iterator[Finished]:
    # One run for the module (tests/memos/conftest.py), its rows put back for each test.
    done = restored_deck(finished_deck_rows)
    forget_images(done.deck, done.version)
    yield done
    forget_images(done.deck, done.version)


@pytest.fixture
def owner(finished: Finished, client: Client) -> Client:
    client.force_login(finished.run.brief.owner)
    return client


def png_size(png: bytes) -> tuple[int, int]:
    assert png.startswith(PNG_SIGNATURE)
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk comes first
    return int(width), int(height)


def having(root: Any, css_class: str, tag: str = "*") -> list[Any]:
    """The elements under ``root`` with this class (lxml without the cssselect package)."""
    return list(root.xpath(f".//{tag}[contains(concat(' ', normalize-space(@class), ' '), ' {css_class} ')]"))


def page(client: Client, url: str) -> Any:
    response = client.get(url)
    assert response.status_code == 200, url
    return lxml.html.fromstring(response.content.decode())


def test_a_slide_thumbnail_is_a_png_of_the_thumbnail_width_cached_for_good(
    finished: Finished, owner: Client
) -> None:
    response = owner.get(f"/versions/{finished.version.pk}/slides/1.png")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    width, height = png_size(response.content)
    assert width == deck_images.THUMBNAIL_WIDTH_PX == 480
    assert abs(width / height - 16 / 9) < 0.02  # a whole 16:9 page, not a crop
    cache = response["Cache-Control"]
    assert "private" in cache and "immutable" in cache and "max-age=31536000" in cache


def test_the_version_page_shows_every_slide_and_each_figure_with_its_citation(
    finished: Finished, owner: Client
) -> None:
    html = page(owner, f"/versions/{finished.version.pk}/")
    titles = [" ".join(h.text_content().split()) for h in having(html, "slide-title")]
    assert titles == [slide.title for slide in finished.deck.slides]
    assert not html.xpath("//*[@id='artefact']")  # the deck replaces the generic "as frozen" text
    for slide in finished.deck.slides:
        view = html.get_element_by_id(f"slide-{slide.number}")
        figures = having(view, "fig")
        assert len(figures) == len(slide.figures()), slide.number
        for element, figure in zip(figures, slide.figures(), strict=True):
            assert element.text_content() == figure.display
            tip = html.get_element_by_id(element.get("aria-describedby"))
            assert tip.get("role") == "tooltip"
            text = tip.text_content()
            for part in (figure.fact_id, figure.label, figure.period, figure.source):
                assert part in text, (slide.number, part)
            assert f"/facts/{figure.fact_id}/" in [a.get("href") for a in tip.xpath(".//a")]
            # Focusable: a link (or a tabindex) the keyboard reaches, not a bare title attribute.
            assert element.tag == "a" or element.get("tabindex") == "0"
    strip = [img.get("src") for img in having(html, "deck-strip")[0].xpath(".//img")]
    assert strip == [f"/versions/{finished.version.pk}/slides/{n}.png" for n in range(1, len(strip) + 1)]
    assert len(strip) == len(finished.deck.slides)
    assert all(img.get("loading") == "lazy" for img in having(html, "deck-strip")[0].xpath(".//img"))


def test_the_version_page_shows_the_scores_the_epoch_the_stop_and_the_changelog(
    finished: Finished, owner: Client
) -> None:
    html = page(owner, f"/versions/{finished.version.pk}/")
    scores = " ".join(html.get_element_by_id("deck-scores").text_content().split())
    output = finished.output
    assert output.r2 is not None and output.epoch is not None
    assert f"{output.r2.composite:.2f}" in scores
    assert f"{output.r1.composite:.2f}" in scores
    assert output.epoch.rubric_version in scores
    rows = having(html, "deck-changelog", "table")[0].xpath("./tbody/tr")
    assert len(rows) == len(output.changelog) == output.laps
    for row, entry in zip(rows, output.changelog, strict=True):
        assert ("accepted" if entry.accepted else "rejected") in row.text_content()
    actions = having(html, "version-actions")[0]
    links = {a.text_content(): a.get("href") for a in actions.xpath(".//a[@download]")}
    version = finished.version.pk
    assert links["PowerPoint (PPTX)"] == f"/versions/{version}/deck.pptx"
    assert links["Slides (PDF)"] == f"/versions/{version}/deck.pdf"
    assert links["deck.json"] == f"/versions/{version}/deck.json"
    assert links["scores.json"] == f"/versions/{version}/scores.json"
    assert not html.xpath("//*[@id='deck-escalated']")


def test_the_downloads_are_attachments_of_the_right_type_and_the_pptx_opens_with_every_slide(
    finished: Finished, owner: Client
) -> None:
    version = finished.version.pk
    slides = len(finished.deck.slides)

    def download(name: str, content_type: str, filename: str) -> bytes:
        response = owner.get(f"/versions/{version}/{name}")
        assert response.status_code == 200, name
        assert response["Content-Type"] == content_type, name
        assert response["Content-Disposition"] == f'attachment; filename="{filename}"'
        return bytes(response.content)

    pptx = Presentation(io.BytesIO(download("deck.pptx", PPTX, "AAPL-v1-deck.pptx")))
    assert len(pptx.slides) == slides
    pdf = PdfReader(io.BytesIO(download("deck.pdf", "application/pdf", "AAPL-v1-deck.pdf")))
    assert len(pdf.pages) == slides
    spec = json.loads(download("deck.json", "application/json", "AAPL-v1-deck.json"))
    assert Deck.model_validate(spec) == finished.deck
    scores = json.loads(download("scores.json", "application/json", "AAPL-v1-scores.json"))
    assert scores["scores"] == finished.version.scores
    assert scores["changelog"] == [entry.model_dump(mode="json") for entry in finished.output.changelog]
    assert scores["version"] == "v1"


def test_a_deck_step_document_shows_its_slides_as_lazy_thumbnails_served_for_the_step(
    finished: Finished, owner: Client
) -> None:
    run = finished.run.pk
    for kind in ("draft", "lap", "deck"):
        step = finished.step(kind)
        html = page(owner, f"/runs/{run}/steps/{step.pk}/")
        images = having(html, "deck-thumbs")[0].xpath(".//img")
        assert images, kind
        assert all(img.get("loading") == "lazy" for img in images)
        first = images[0].get("src")
        assert first.startswith(f"/runs/{run}/steps/{step.pk}/slides/1.png?v="), first
        response = owner.get(first)
        assert response.status_code == 200 and response["Content-Type"] == "image/png", kind
        assert png_size(response.content)[0] == deck_images.THUMBNAIL_WIDTH_PX


def new_urls(done: Finished) -> list[str]:
    version, run = done.version.pk, done.run.pk
    steps = [done.step(kind).pk for kind in ("draft", "lap", "deck")]
    return [
        f"/versions/{version}/slides/1.png",
        f"/versions/{version}/deck.pdf",
        f"/versions/{version}/deck.pptx",
        f"/versions/{version}/deck.json",
        f"/versions/{version}/scores.json",
        *(f"/runs/{run}/steps/{step}/slides/1.png" for step in steps),
    ]


def test_another_analyst_gets_a_404_for_every_new_url_and_a_visitor_is_sent_to_log_in(
    finished: Finished, client: Client
) -> None:
    client.force_login(analyst("dave"))
    for url in new_urls(finished):
        assert client.get(url).status_code == 404, url
    client.logout()
    for url in new_urls(finished):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url


def test_a_slide_the_deck_does_not_have_is_a_404(finished: Finished, owner: Client) -> None:
    beyond = len(finished.deck.slides) + 1
    deck_step = finished.step("deck").pk
    for number in (0, beyond):
        assert owner.get(f"/versions/{finished.version.pk}/slides/{number}.png").status_code == 404
        assert owner.get(f"/runs/{finished.run.pk}/steps/{deck_step}/slides/{number}.png").status_code == 404
    scope = finished.step("scope").pk  # a step that holds no deck
    assert owner.get(f"/runs/{finished.run.pk}/steps/{scope}/slides/1.png").status_code == 404


def counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    calls: list[int] = []
    real: Callable[..., Any] = getattr(deck_images, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(deck_images, name, counted)
    return calls


def test_a_versions_thumbnails_are_rasterised_once_from_its_stored_pdf_and_nothing_is_rendered_again(
    finished: Finished, owner: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    renders = counting(monkeypatch, "render_pdf")
    rasterised = counting(monkeypatch, "rasterise")
    version = finished.version.pk
    first = owner.get(f"/versions/{version}/slides/1.png").content
    assert (len(renders), len(rasterised)) == (0, 1)
    for number in range(1, len(finished.deck.slides) + 1):
        assert owner.get(f"/versions/{version}/slides/{number}.png").status_code == 200
    assert owner.get(f"/versions/{version}/slides/1.png").content == first
    assert owner.get(f"/versions/{version}/deck.pdf").status_code == 200
    assert (len(renders), len(rasterised)) == (0, 1)

    # A step's deck is not frozen: its PDF is rendered once, for all its thumbnails.
    deck_step = finished.step("deck").pk
    for number in (2, 1, 2):
        assert owner.get(f"/runs/{finished.run.pk}/steps/{deck_step}/slides/{number}.png").status_code == 200
    assert (len(renders), len(rasterised)) == (1, 2)


def test_the_downloads_are_the_bytes_stored_at_freezing_whatever_the_renderer_does_later(
    finished: Finished, owner: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    version = finished.version
    pdf, pptx = stored(version, "render.pdf"), stored(version, "deck.pptx")
    assert pdf.sha256 == hashlib.sha256(bytes(pdf.body)).hexdigest() and pdf.size == len(bytes(pdf.body))
    names = ("deck.pdf", "deck.pptx", "pdf/", "files/deck.pptx")
    before = {name: owner.get(f"/versions/{version.pk}/{name}") for name in names}

    def changed_renderer(*_: Any, **__: Any) -> Any:
        raise AssertionError("a frozen version is never rendered again")

    monkeypatch.setattr(deck_desk, "deck_html", changed_renderer)
    monkeypatch.setattr(printing, "print_pdf", changed_renderer)
    monkeypatch.setattr(deck_desk, "render_pptx", changed_renderer)
    monkeypatch.setattr(version_files, "render_files", changed_renderer)
    monkeypatch.setattr(deck_images, "render_pdf", changed_renderer)
    for name, first in before.items():
        again = owner.get(f"/versions/{version.pk}/{name}")
        assert again.status_code == 200 and again.content == first.content, name
    assert before["deck.pdf"].content == before["pdf/"].content == bytes(pdf.body)
    assert before["deck.pptx"].content == before["files/deck.pptx"].content == bytes(pptx.body)
    assert (
        before["deck.pdf"]["ETag"] == f'"{pdf.sha256}"' and before["deck.pptx"]["ETag"] == f'"{pptx.sha256}"'
    )
    assert owner.get(f"/versions/{version.pk}/slides/1.png").status_code == 200  # from the stored PDF

    # A reader who has the file already is told so, without its bytes.
    cached = owner.get(f"/versions/{version.pk}/deck.pdf", HTTP_IF_NONE_MATCH=f'"{pdf.sha256}"')
    assert cached.status_code == 304 and cached.content == b"" and cached["ETag"] == f'"{pdf.sha256}"'
    other = owner.get(f"/versions/{version.pk}/deck.pdf", HTTP_IF_NONE_MATCH='"something-else"')
    assert other.status_code == 200 and other.content == bytes(pdf.body)


def test_thumbnails_asked_for_all_at_once_wait_for_one_render_of_the_deck(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deck = sample_deck(4)
    forget_images(deck)
    renders = counting(monkeypatch, "render_pdf")
    rasterised = counting(monkeypatch, "rasterise")
    asked = [1, 2, 3, 4, 4, 3, 2, 1]  # a page of lazy thumbnails, each its own request

    def thumbnail(number: int) -> bytes:
        return deck_images.slide_png(deck, number, width_px=deck_images.THUMBNAIL_WIDTH_PX)

    with ThreadPoolExecutor(max_workers=len(asked)) as pool:
        pngs = list(pool.map(thumbnail, asked))
    forget_images(deck)
    assert (len(renders), len(rasterised)) == (1, 1)
    assert [png_size(png)[0] for png in pngs] == [deck_images.THUMBNAIL_WIDTH_PX] * len(asked)
    assert pngs[0] == pngs[-1] and pngs[0] != pngs[1]


def test_an_escalated_deck_says_so_at_the_top_of_its_page(finished: Finished, owner: Client) -> None:
    never_refined: dict[str, Any] = {"escalated": True, "r2": None, "epoch": None, "changelog": [], "laps": 0}
    content = finished.version.content | never_refined
    with transaction.atomic():
        escalated = freeze(
            run=finished.run,
            artefact=Artefact(
                kind="deck",
                title="AAPL deck: escalated",
                content=content,
                sections={"Slide 1": "the closest draft"},
                evaluated=False,
                score=finished.output.r1.composite,
                score_label="R1 (escalated)",
            ),
        )
    html = page(owner, f"/versions/{escalated.pk}/")
    banner = html.get_element_by_id("deck-escalated")
    assert "Escalated: this deck did not clear the entry bar" in banner.text_content()
    sections = [element.get("id") for element in html.xpath("//*[@id='version-page']/*[@id]")]
    assert sections.index("deck-escalated") < sections.index("deck-viewer")


def test_a_deck_versions_pdf_is_its_slides_every_one_of_them(finished: Finished, owner: Client) -> None:
    response = owner.get(f"/versions/{finished.version.pk}/pdf/")
    assert response.status_code == 200
    text = " ".join(
        " ".join(page.extract_text().split()) for page in PdfReader(io.BytesIO(response.content)).pages
    )
    for slide in finished.deck.slides:
        assert slide.title in text, slide.number


def drawn(deck: Deck) -> Any:
    """The deck view a version page shows for ``deck`` (a version row that is never saved)."""
    content = cleared_r1(deck, composite=3.5).model_dump(mode="json")
    brief = Brief(company=Company(ticker="AAPL", name="Apple Inc."))
    return deck_context(ArtefactVersion(pk=1, number=1, kind="deck", content=content, brief=brief))[
        "deck_view"
    ]


def test_chart_marks_follow_the_values_bars_from_zero_either_way_and_a_line_through_each_point() -> None:
    growth = sample_figure("revenue_growth_yoy", 2024)  # about +2.0%
    shrink = growth.model_copy(update={"fact_id": "AAPL:g:FY2023", "period": "FY2023", "value": "-0.0405"})
    bars = Chart(title="Growth", kind="bar", unit="pure", points=(shrink, growth))
    deck = sample_deck(3)
    deck = deck.model_copy(
        update={"slides": (deck.slides[0].model_copy(update={"chart": bars}), *deck.slides[1:])}
    )
    view = drawn(deck)

    chart = view.slides[0].chart
    down, up = chart.marks
    assert down.negative and not up.negative
    assert down.y == chart.zero_y  # hangs from the zero rule
    assert abs(up.y + up.height - chart.zero_y) < 0.2  # stands on it
    assert abs(down.height / up.height - 0.0405 / 0.0202225479) < 0.02  # lengths compare honestly
    assert [mark.cited.figure.period for mark in chart.marks] == ["FY2023", "FY2024"]

    line = view.slides[2].chart  # net income FY2022-FY2024: 99.8B, 97.0B, 93.7B
    assert line.kind == "line"
    ys = [mark.y for mark in line.marks]
    assert ys == sorted(ys)  # falling values: each dot lower on the page than the one before
    assert line.line == " ".join(f"{mark.x},{mark.y}" for mark in line.marks)


def test_the_deck_version_page_offers_its_analyst_the_refinement_schedule(
    finished: Finished, owner: Client
) -> None:
    root = page(owner, f"/versions/{finished.version.pk}/")
    panel = root.get_element_by_id("schedule")
    assert "Refinement cycles" in panel.text_content()
    assert panel.xpath(".//form[@method='post']"), "the brief's analyst may set the schedule here"
