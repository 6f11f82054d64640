"""Seeing a deck: a deck version's slides laid out for its page, its downloads (the stored PDF and PPTX,
through memos.views.downloads; the JSON of its spec and scores), the version's slide images, drawn from its
stored PDF, and the slide images of the decks a run's steps hold.

Access is the page's: a version through ``visible_versions`` (as memos.views.versions.version_for), a step
through ``visible_runs``; whoever may not see it gets a 404, as for a slide the deck does not have. What is
served never changes (a frozen version's content, a finished step's output), so it is cached for good.

The page draws each slide from the spec, not from its image, so its words are text a reader can select and
every figure carries its citation (fact id, label, period, source, a link to the fact). Everything a model
wrote stays a plain string for the template to escape.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_safe
from pydantic import ValidationError

from agents.deck.gates import R1Result, Scored
from agents.deck.outputs import ChangelogEntry, DeckOutput, DraftOutput, LapOutput
from agents.deck.spec import Chart, Deck, Figure, Slide
from agents.kept import KeptInProcess
from agents.render import charts
from agents.text.untrusted import web_link
from memos.models import AgentStep, ArtefactVersion
from memos.pipeline.deck.desk import images as deck_images
from memos.pipeline.deck.desk.gold_scores import judge_sealed
from memos.pipeline.deck.final import STOPS
from memos.pipeline.deck.plan import DECK, DRAFT_KIND, LAP
from memos.services import version_files
from memos.services.access import visible_runs, visible_versions
from memos.services.render_slots import RenderBusy
from memos.services.surfaces import RENDER_PDF
from memos.views.downloads import forever, serve, stem_of, unavailable
from memos.views.users import user_of

KIND = "deck"
DECK_PPTX = "deck.pptx"
PNG = "image/png"
# The chart's drawing, in SVG user units; it scales to the slide's width and keeps its shape.
CHART_WIDTH = 600.0
CHART_HEIGHT = 200.0
_CHART_PAD = 10.0
_BAR_SHARE = 0.56  # of a column's width
_MAX_BAR = 110.0


# --- the deck a version or a step holds


# Its page asks three times (whether it reads, its viewer, its downloads), its slides and files again.
_READ: KeptInProcess[DeckOutput | None] = KeptInProcess(16)


def version_deck(version: ArtefactVersion) -> DeckOutput | None:
    """A deck version's frozen output; None for another kind, or content this code cannot read."""
    if version.kind != KIND:
        return None
    return _READ.get(version.content_hash, lambda: _read(version.content))


def _read(content: object) -> DeckOutput | None:
    try:
        return DeckOutput.model_validate(content)
    except ValidationError:
        return None


def step_deck(step: AgentStep) -> Deck | None:
    """The deck a finished draft, lap or deck step holds (a lap whose revision failed holds none)."""
    if step.status != AgentStep.Status.DONE:
        return None
    try:
        if step.kind == DRAFT_KIND:
            return DraftOutput.model_validate(step.output).candidate.deck
        if step.kind == LAP:
            candidate = LapOutput.model_validate(step.output).candidate
            return candidate.deck if candidate is not None else None
        if step.kind == DECK:
            return DeckOutput.model_validate(step.output).deck
    except ValidationError:
        return None
    return None


# --- the version page's deck: slides as HTML, scores, changelog, downloads


@dataclass(frozen=True)
class Cited:
    """A figure as the page shows it: its printed value, with its citation in a tooltip of its own."""

    figure: Figure
    tip_id: str  # unique on the page: the tooltip the figure's element describes itself by
    fact_url: str  # this site's page of the fact ("" if its id makes no URL)
    source_url: str  # the filing or page it was read from, only an http(s) link


@dataclass(frozen=True)
class BulletView:
    text: str
    figures: list[Cited]


@dataclass(frozen=True)
class Mark:
    """One point of a chart: a bar (x, y, width, height) or a dot (cx = x, cy = y), in SVG units."""

    cited: Cited
    x: float
    y: float
    width: float
    height: float
    negative: bool  # a negative figure, or a bridge's step taken from the total
    category: str = ""  # what labels the point: its period, or in a bridge what it measures

    @property
    def colour(self) -> str:
        return charts.NEGATIVE if self.negative else charts.POSITIVE


@dataclass(frozen=True)
class ChartView:
    title: str
    kind: str
    unit: str
    marks: list[Mark]
    line: str  # a line chart's polyline points ("" for bars)
    zero_y: float  # where the zero rule (or the plot's bottom) is drawn
    width: float = CHART_WIDTH
    height: float = CHART_HEIGHT
    # The PDF's and PPTX's colours, as SVG attributes: WeasyPrint (the page's PDF) styles no SVG by CSS.
    ink: str = charts.POSITIVE
    rule: str = charts.RULE


@dataclass(frozen=True)
class SlideView:
    number: int
    kind: str  # agents.deck.spec.SlideKind
    section: str
    title: str
    takeaway: str
    bullets: list[BulletView]
    table_title: str
    table_rows: list[Cited]
    chart: ChartView | None
    sources: list[str]
    image_url: str

    @property
    def has_body(self) -> bool:
        return bool(self.table_rows or self.chart is not None)


@dataclass(frozen=True)
class Download:
    label: str
    url: str
    filename: str


@dataclass(frozen=True)
class DeckView:
    output: DeckOutput
    slides: list[SlideView]
    r1_rows: list[tuple[str, int]]
    r2_rows: list[tuple[str, int]]
    stop: str  # the stop reason in words
    accepted: list[ChangelogEntry]
    rejected: list[ChangelogEntry]
    downloads: list[Download]

    @property
    def deck(self) -> Deck:
        return self.output.deck

    @property
    def r1(self) -> R1Result:
        return self.output.r1

    @property
    def r2(self) -> Scored | None:
        return self.output.r2

    @property
    def gate_rows(self) -> list[tuple[str, bool, str]]:
        return [(_dimension(gate.key), gate.passed, gate.reason) for gate in self.output.r1.gates]

    @property
    def failed_gates(self) -> list[tuple[str, str]]:
        return [(label, reason) for label, passed, reason in self.gate_rows if not passed]


def deck_context(version: ArtefactVersion) -> dict[str, Any]:
    """What the version page's deck viewer needs (memos.views.versions.page_context): ``deck_view`` is
    None for a version that is not a deck."""
    output = version_deck(version)
    if output is None:
        return {"deck_view": None}
    deck = output.deck
    slides = [
        _slide_view(slide, reverse("version_slide", args=[version.pk, slide.number])) for slide in deck.slides
    ]
    return {
        "deck_view": DeckView(
            output=output,
            slides=slides,
            r1_rows=[(_dimension(key), score) for key, score in output.r1.scores.items()],
            r2_rows=[(_dimension(key), score) for key, score in output.r2.scores.items()]
            if output.r2 is not None
            else [],
            stop=STOPS.get(output.stop, output.stop),
            accepted=[entry for entry in output.changelog if entry.accepted],
            rejected=[entry for entry in output.changelog if not entry.accepted],
            downloads=_downloads(version),
        )
    }


def _dimension(key: str) -> str:
    return key.replace("_", " ").capitalize()


def _downloads(version: ArtefactVersion) -> list[Download]:
    stem = stem_of(version)
    return [
        Download("Slides (PDF)", reverse("version_deck_pdf", args=[version.pk]), f"{stem}-deck.pdf"),
        Download("PowerPoint (PPTX)", reverse("version_deck_pptx", args=[version.pk]), f"{stem}-deck.pptx"),
        Download("deck.json", reverse("version_deck_json", args=[version.pk]), f"{stem}-deck.json"),
        Download("scores.json", reverse("version_scores_json", args=[version.pk]), f"{stem}-scores.json"),
    ]


def _slide_view(slide: Slide, image_url: str) -> SlideView:
    counter = itertools.count(1)

    def cite(figure: Figure) -> Cited:
        return _cited(figure, f"cite-{slide.number}-{next(counter)}")

    bullets = [BulletView(bullet.text, [cite(f) for f in bullet.figures]) for bullet in slide.bullets]
    rows = [cite(f) for f in slide.table.rows] if slide.table is not None else []
    chart = _chart_view(slide.chart, cite) if slide.chart is not None else None
    return SlideView(
        number=slide.number,
        kind=slide.kind,
        section=slide.section,
        title=slide.title,
        takeaway=slide.takeaway,
        bullets=bullets,
        table_title=slide.table.title if slide.table is not None else "",
        table_rows=rows,
        chart=chart,
        sources=list(dict.fromkeys(f.source for f in slide.figures() if f.source)),
        image_url=image_url,
    )


def _cited(figure: Figure, tip_id: str) -> Cited:
    try:
        fact_url = reverse("fact", args=[figure.fact_id])
    except NoReverseMatch:  # an id the fact pages' URL cannot carry: shown, not linked
        fact_url = ""
    # The URL came from a filing index or a feed: link out only to the web, never javascript: or data:.
    source_url = web_link(figure.url)
    return Cited(figure=figure, tip_id=tip_id, fact_url=fact_url, source_url=source_url)


def _chart_view(chart: Chart, cite: Callable[[Figure], Cited]) -> ChartView:
    """The chart's marks in SVG units: bars from zero, a line over the data's padded range (the range the
    PDF and PPTX charts use, agents.render.charts.value_range), one column per point."""
    low, high = charts.value_range(chart)
    top, bottom = _CHART_PAD, CHART_HEIGHT - _CHART_PAD
    span = high - low

    def y(value: Decimal) -> float:
        return top + float((high - value) / span) * (bottom - top)

    count = max(len(chart.points), 1)
    column = CHART_WIDTH / count
    zero_y = y(Decimal(0)) if low <= 0 <= high else bottom
    spans = charts.bridge_spans(chart) if chart.kind == "bridge" else []
    marks = []
    for index, figure in enumerate(chart.points):
        centre = column * (index + 0.5)
        value_y = y(figure.decimal)
        if chart.kind in ("bar", "bridge"):
            # A bar from zero; a bridge's step floats from the running total (agents.render.charts).
            base, top_value = spans[index] if spans else (Decimal(0), figure.decimal)
            start, end = y(base), y(top_value)
            width = min(column * _BAR_SHARE, _MAX_BAR)
            mark = Mark(
                cite(figure),
                x=round(centre - width / 2, 1),
                y=round(min(start, end), 1),
                width=round(width, 1),
                height=round(max(abs(end - start), 1.0), 1),
                negative=charts.takes_away(chart, index) if spans else figure.decimal < 0,
                category=chart.category(index),
            )
        else:
            mark = Mark(
                cite(figure),
                x=round(centre, 1),
                y=round(value_y, 1),
                width=0,
                height=0,
                negative=False,
                category=figure.period,
            )
        marks.append(mark)
    line = " ".join(f"{m.x},{m.y}" for m in marks) if chart.kind == "line" and len(marks) > 1 else ""
    return ChartView(
        title=chart.title, kind=chart.kind, unit=chart.unit, marks=marks, line=line, zero_y=round(zero_y, 1)
    )


# --- the routes


def slide_response(draw: Callable[[], bytes]) -> HttpResponse:
    """A slide's image as ``draw`` makes it: a 404 for a slide the deck does not have, a 503 (to be asked
    again, never cached) when poppler failed or every render slot stayed busy."""
    try:
        png = draw()
    except IndexError as error:
        raise Http404("no such slide") from error
    except deck_images.SlideImageFailed:
        return unavailable("The slide image could not be drawn.")
    except RenderBusy as busy:
        return unavailable(f"The slide image is waiting for a render: {busy}.")
    return forever(HttpResponse(png, content_type=PNG))


def _attachment(body: bytes, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return forever(response)


def version_and_deck(request: HttpRequest, version_id: int) -> tuple[ArtefactVersion, DeckOutput]:
    # Not versions.version_for: the version page imports this module for its deck (deck_context).
    version = get_object_or_404(
        visible_versions(user_of(request)).select_related("brief__company"), pk=version_id
    )
    output = version_deck(version)
    if output is None:
        raise Http404("this version is not a deck")
    return version, output


@require_safe
@login_required
def version_deck_json(request: HttpRequest, version_id: int) -> HttpResponse:
    """The resolved spec, as the PPTX and the PDF carry it inside (agents.deck.render.embedded)."""
    version, output = version_and_deck(request, version_id)
    body = json.dumps(output.deck.model_dump(mode="json"), indent=2, ensure_ascii=False).encode()
    return _attachment(body, "application/json", f"{stem_of(version)}-deck.json")


@require_safe
@login_required
def version_scores_json(request: HttpRequest, version_id: int) -> HttpResponse:
    """The version's scores as frozen, with the changelog of the laps that made it (seed 001 section 7);
    refused (403, with the reason) to a committee member who has not scored the deck yet."""
    version, output = version_and_deck(request, version_id)
    sealed = judge_sealed(user_of(request), version)
    if sealed:
        return HttpResponseForbidden(sealed, content_type="text/plain; charset=utf-8")
    document = {
        "company": version.brief.subject,
        "version": version.label,
        "score": version.score,
        "score_label": version.score_label,
        "score_delta": version.score_delta,
        "scores": version.scores,
        "laps": output.laps,
        "changelog": [entry.model_dump(mode="json") for entry in output.changelog],
    }
    body = json.dumps(document, indent=2, ensure_ascii=False).encode()
    return _attachment(body, "application/json", f"{stem_of(version)}-scores.json")


@require_safe
@login_required
def step_slide(request: HttpRequest, run_id: UUID, step_id: int, number: int) -> HttpResponse:
    step = get_object_or_404(
        AgentStep.objects.filter(run__in=visible_runs(user_of(request))), pk=step_id, run_id=run_id
    )
    deck = step_deck(step)
    if deck is None:
        raise Http404("this step holds no deck")
    return slide_response(
        lambda: deck_images.slide_png(deck, number, width_px=deck_images.THUMBNAIL_WIDTH_PX)
    )


@require_safe
@login_required
def version_deck_pdf(request: HttpRequest, version_id: int) -> HttpResponse:
    return serve(request, version_id, RENDER_PDF, kind=KIND)


@require_safe
@login_required
def version_deck_pptx(request: HttpRequest, version_id: int) -> HttpResponse:
    return serve(request, version_id, DECK_PPTX, kind=KIND)


@require_safe
@login_required
def version_slide(request: HttpRequest, version_id: int, number: int) -> HttpResponse:
    """Slide ``number`` as an image, rasterised from the version's stored PDF (and kept in the shared cache
    under that PDF's sha256)."""
    width = deck_images.THUMBNAIL_WIDTH_PX
    known = version_files.readable_file(
        visible_versions(user_of(request)), version_id, RENDER_PDF, kind=KIND, body=False
    )
    if known is not None and (drawn := deck_images.stored_slide_if_drawn(known.file.sha256, number, width)):
        return forever(HttpResponse(drawn, content_type=PNG))
    version, output = version_and_deck(request, version_id)
    pages = len(output.deck.slides)
    if not 1 <= number <= pages:
        raise Http404("no such slide")
    try:
        stored = version_files.file_of(version, RENDER_PDF)
    except RenderBusy as busy:
        return unavailable(f"The deck's PDF is waiting for a render: {busy}.")
    return slide_response(
        lambda: deck_images.stored_slide_png(
            stored.sha256,
            pages=pages,
            number=number,
            width_px=width,
            pdf=lambda: version_files.body_of(stored),
        )
    )
