"""The screen's dashboard (seed 002), the story a non-technical viewer can follow: the executive summary, then
the sector themes, then the symbol inspector (its quant profile, its price chart drawn by code, its flag
with the reason and the evidence, each driver with its sources).

Built from a screen version's frozen content alone, so the run page (once its version is frozen), the
version page, the standalone HTML report and the PDF show the same thing, and none of them reads a price
file or a row that may change. Every number on it is printed by code (agents.screen.display); a model's
``[[fact id]]`` reference is printed as the figure it names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.safestring import SafeString, mark_safe
from pydantic import ValidationError

from agents.screen.chart import PriceChart, chart_svg
from agents.screen.display import LABELS, metric_of, value_text
from agents.screen.evidence import symbol_evidence
from agents.screen.outputs import (
    Assessment,
    ChartsOutput,
    DirectorOutput,
    Document,
    DriverOut,
    NewsOutput,
    OverallOutput,
    QuantStep,
    ScreenResult,
)
from agents.screen.quant import SHOWN, Figure, MarketContext, QuantOutput, SectorGroup, SymbolProfile
from agents.text.figures import REF
from memos.cache import KeptInProcess
from memos.models import ArtefactVersion

KIND = "screen"
PROFILE_ROWS = SHOWN  # the quant profile panel: the figures the screen shows per symbol


@dataclass(frozen=True)
class Part:
    text: str
    ref: str = ""  # the fact id a printed figure came from ("" for plain text)


@dataclass(frozen=True)
class DriverView:
    driver: DriverOut
    text: list[Part]
    sources: list[Document]


@dataclass(frozen=True)
class SymbolView:
    assessment: Assessment
    profile: SymbolProfile
    rows: list[tuple[str, str, str]]  # (label, printed value, fact id)
    reason: list[Part]
    concern: list[Part]
    sources: list[Document]  # what names the symbol (agents.screen.evidence): its own evidence
    chart: SafeString
    context: list[Document] = field(default_factory=list)  # its sector's cited documents, said to be so

    @property
    def market_part_text(self) -> str:
        return value_text("return_1w", self.profile.market_part)

    @property
    def values(self) -> dict[str, str]:
        """Each shown figure as printed, by its name (the symbols table reads a few)."""
        return {key: value_text(key, self.profile.figures.get(key)) for key in PROFILE_ROWS}


@dataclass(frozen=True)
class SectorView:
    group: SectorGroup
    evidence: str
    summary: list[Part]
    synthesis: list[Part]
    drivers: list[DriverView]
    symbols: list[SymbolView]
    flags: dict[str, int]

    @property
    def mean_week(self) -> str:
        return value_text("avg_return_1w", self.group.avg_return_1w)

    @property
    def mean_alpha(self) -> str:
        return value_text("avg_alpha_1w", self.group.avg_alpha_1w)


@dataclass(frozen=True)
class Dashboard:
    as_of: str
    market: MarketContext
    market_rows: list[tuple[str, str, str]]
    executive_summary: list[Part]
    portfolio_note: list[Part]
    data_note: str
    quality: int | None
    quality_rationale: list[Part]
    blind_spots: list[list[Part]]
    strongest: list[str]
    weakest: list[str]
    overview: list[Part]
    overview_sources: list[Document]
    market_view: list[Part]
    themes: list[list[Part]]
    sectors: list[SectorView]
    flag_counts: dict[str, int]
    llm_calls: int
    call_bound: int
    paid_requests: int
    warning: str
    refused: list[Assessment] = field(default_factory=list)  # the managing director's changes code refused

    @property
    def symbols(self) -> list[SymbolView]:
        return [symbol for sector in self.sectors for symbol in sector.symbols]

    def symbol(self, name: str) -> SymbolView | None:
        return next((s for s in self.symbols if s.assessment.symbol == name), None)


def parts(text: str, figures: dict[str, Figure]) -> list[Part]:
    """Prose with each ``[[fact id]]`` printed as its figure (by code's format), the id kept for its title."""
    out: list[Part] = []
    last = 0
    for match in REF.finditer(text):
        out.append(Part(text[last : match.start()]))
        ref = match.group(1)
        figure = figures.get(ref)
        out.append(Part(value_text(metric_of(ref), figure.value) if figure else f"[{ref}]", ref))
        last = match.end()
    out.append(Part(text[last:]))
    return [part for part in out if part.text]


# A frozen version never changes, so its dashboard is built once per content hash and kept for the next page
# that shows it (the run page's reloads, the version page, its report and PDF): building one for 87 symbols
# reads about 1 MB of content and draws 87 charts.
_BUILT: KeptInProcess[Dashboard | None] = KeptInProcess(8)


def dashboard_of(version: ArtefactVersion) -> Dashboard | None:
    """The dashboard of a screen version; None for another kind, or content this code cannot read."""
    if version.kind != KIND:
        return None
    return _BUILT.get(version.content_hash, lambda: _built(version.content))


def _built(content: dict[str, Any]) -> Dashboard | None:
    try:
        return build(content)
    except (KeyError, TypeError, ValidationError):
        return None


def build(content: dict[str, Any]) -> Dashboard:
    step = QuantStep.model_validate(content["quant"])
    result = ScreenResult.model_validate(content["result"])
    charts = ChartsOutput.model_validate(content.get("charts") or {"charts": {}}).charts
    news = {sector: NewsOutput.model_validate(raw) for sector, raw in content["news"].items()}
    overview = NewsOutput.model_validate(content["overview"]) if content.get("overview") else None
    overall = OverallOutput.model_validate(content["overall"]) if content.get("overall") else None
    director = DirectorOutput.model_validate(content["director"]) if content.get("director") else None
    quant = step.quant
    figures = {f.fact_id: f for f in quant.figures}
    assessments = {a.symbol: a for a in result.assessments}
    builder = _Sectors(result, quant, assessments, charts, figures)
    sectors = [builder.sector(group, news.get(group.sector)) for group in quant.sectors]
    market = quant.market

    def said(text: str) -> list[Part]:
        return parts(text, figures)

    return Dashboard(
        as_of=str(result.as_of),
        market=market,
        market_rows=_market_rows(market, figures),
        executive_summary=said(director.executive_summary) if director else [],
        portfolio_note=said(director.portfolio_note) if director else [],
        data_note=result.data_note,
        quality=director.quality_score if director else None,
        quality_rationale=said(director.quality_rationale) if director else [],
        blind_spots=[said(line) for line in director.blind_spots] if director else [],
        strongest=director.strongest_candidates if director else [],
        weakest=director.weakest_candidates if director else [],
        overview=said(overview.summary) if overview else [],
        overview_sources=[d for d in overview.documents if d.doc_id in overview.cited] if overview else [],
        market_view=said(overall.market_view) if overall else [],
        themes=[said(theme) for theme in overall.themes] if overall else [],
        sectors=sectors,
        flag_counts=result.flag_counts,
        llm_calls=result.llm_calls,
        call_bound=result.call_bound,
        paid_requests=result.paid_requests,
        warning=step.same_model_warning,
        refused=[a for a in result.assessments if a.adjustment is not None and not a.adjustment.accepted],
    )


def _market_rows(market: MarketContext, figures: dict[str, Figure]) -> list[tuple[str, str, str]]:
    rows = []
    for name, ref in market.facts.items():
        if ref in figures:
            who = market.volatility_index if name == "close" else market.benchmark
            rows.append((f"{who} {LABELS.get(name, name)}", value_text(name, figures[ref].value), ref))
    return rows


@dataclass(frozen=True)
class _Sectors:
    result: ScreenResult
    quant: QuantOutput
    assessments: dict[str, Assessment]
    charts: dict[str, PriceChart]
    figures: dict[str, Figure]

    def sector(self, group: SectorGroup, reading: NewsOutput | None) -> SectorView:
        figures = self.figures
        documents = {d.doc_id: d for d in reading.documents} if reading else {}
        view = next((v for v in self.result.sectors if v.sector == group.sector), None)
        symbols = [
            self.symbol(profile, assessment, documents)
            for symbol in group.symbols
            if (profile := self.quant.symbol(symbol)) is not None
            and (assessment := self.assessments.get(symbol)) is not None
        ]
        flags = {f: sum(1 for s in symbols if s.assessment.flag == f) for f in ("GREEN", "YELLOW", "RED")}
        return SectorView(
            group=group,
            evidence=view.evidence_quality if view else "none",
            summary=parts(view.news_summary, figures) if view else [],
            synthesis=parts(view.synthesis, figures) if view else [],
            drivers=[
                DriverView(
                    driver=d,
                    text=parts(d.evidence, figures),
                    sources=[documents[ref] for ref in d.citations if ref in documents],
                )
                for d in (view.drivers if view else [])
            ],
            symbols=symbols,
            flags=flags,
        )

    def symbol(
        self, profile: SymbolProfile, assessment: Assessment, documents: dict[str, Document]
    ) -> SymbolView:
        chart = self.charts.get(profile.symbol)
        chosen = symbol_evidence(profile.symbol, profile.name, list(documents.values()), assessment.sources)
        return SymbolView(
            assessment=assessment,
            profile=profile,
            rows=[
                (LABELS.get(key, key), value_text(key, profile.figures.get(key)), profile.facts.get(key, ""))
                for key in PROFILE_ROWS
            ],
            reason=parts(assessment.flag_reason, self.figures),
            concern=parts(assessment.key_concern, self.figures),
            sources=chosen.own,
            context=chosen.context,
            # Drawn by code from numbers; every text in it is escaped (agents.screen.chart).
            chart=mark_safe(chart_svg(chart)) if chart else mark_safe(""),  # noqa: S308
        )
