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

from agents.kept import KeptInProcess
from agents.screen.chart import PriceChart, chart_svg
from agents.screen.criteria import model_part
from agents.screen.display import LABELS, metric_of, value_text
from agents.screen.evidence import symbol_evidence
from agents.screen.flags import UNREAD_SUMMARY
from agents.screen.inputs import Input, declared_gaps
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
from agents.screen.portfolio import Portfolio, portfolio
from agents.screen.quant import SHOWN, Figure, MarketContext, QuantOutput, SectorGroup, SymbolProfile
from agents.screen.summary import ListCheck, check_list, kept_summary, market_week, portfolio_text
from agents.screen.summary import strongest as code_strongest
from agents.screen.summary import weakest as code_weakest
from agents.text.figures import REF
from agents.text.slots import FILLER, filler_word
from memos.models import ArtefactVersion

KIND = "screen"
PROFILE_ROWS = SHOWN  # the quant profile panel: the figures the screen shows per symbol
# Who wrote each text on the dashboard and the report (issue 32, 4): a role's name, or code.
ROLES = {
    "code": "code",
    "news": "news analyst",
    "senior": "senior analyst",
    "director": "managing director",
}


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
    reason: list[Part]  # the protocol's sentence (code's) then the senior analyst's reason
    concern: list[Part]
    sources: list[Document]  # what names the symbol (agents.screen.evidence): its own evidence
    chart: SafeString
    context: list[Document] = field(default_factory=list)  # its sector's cited documents, said to be so
    rule: str = ""  # the protocol's part of the reason (code's)
    model_reason: list[Part] = field(default_factory=list)  # the senior analyst's part

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
    summary_rule: str = ""  # the protocol's sentences in the news summary (code's)

    @property
    def mean_week(self) -> str:
        return value_text("avg_return_1w", self.group.avg_return_1w)

    @property
    def mean_alpha(self) -> str:
        return value_text("avg_alpha_1w", self.group.avg_alpha_1w)


@dataclass(frozen=True)
class RankedView:
    symbol: str
    alpha: str  # printed by code
    ref: str
    flag: str


@dataclass(frozen=True)
class ListView:
    """Code's list of one side, and the managing director's, checked against it."""

    side: str
    ranked: list[RankedView]
    check: ListCheck | None

    @property
    def named_kept(self) -> list[str]:
        return self.check.named if self.check and self.check.kept else []


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
    market_week: list[Part] = field(default_factory=list)  # code's paragraph
    portfolio_text: list[Part] = field(default_factory=list)  # code's paragraph
    portfolio: Portfolio | None = None
    lists: list[ListView] = field(default_factory=list)
    summary_notes: list[str] = field(default_factory=list)  # the summary's sentences code withheld, and why
    revised: list[tuple[str, str]] = field(default_factory=list)  # (sector, the director's reason)
    base_bound: int = 0  # seed 002's bound before the sectors sent back
    inputs: list[Input] = field(default_factory=list)
    overview_rule: str = ""  # the protocol's sentences in the overview (code's)

    @property
    def roles(self) -> dict[str, str]:
        return ROLES

    @property
    def portfolio_rows(self) -> list[tuple[str, str, str, str]]:
        """(sector, candidates, its share printed, the count's fact id), largest first."""
        book = self.portfolio
        if book is None or not book.candidates:
            return []
        return [
            (c.sector, str(c.candidates), value_text("share_red", c.candidates / book.candidates), c.fact_id)
            for c in book.sectors
        ]

    @property
    def portfolio_chips(self) -> list[tuple[str, str, str]]:
        book = self.portfolio
        if book is None:
            return []
        names = ("candidates", "largest_sector_share", "hhi", "share_green", "share_yellow", "share_red")
        return [
            (LABELS.get(name, name), value_text(name, figure.value), figure.fact_id)
            for name in names
            if (figure := book.figure(name)) is not None
        ]

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
    # Versions frozen before the portfolio was code's get it computed here from their own flags.
    book = result.portfolio or portfolio(
        quant, {a.symbol: a.flag for a in result.assessments}, stage="watchlist"
    )
    reviewed = director.portfolio.figures if director and director.portfolio else []
    figures = {f.fact_id: f for f in [*quant.figures, *reviewed, *book.figures]}
    assessments = {a.symbol: a for a in result.assessments}
    builder = _Sectors(result, quant, assessments, charts, figures)
    sectors = [builder.sector(group, news.get(group.sector)) for group in quant.sectors]
    market = quant.market

    def said(text: str) -> list[Part]:
        return parts(text, figures)

    symbols = {p.symbol for p in quant.symbols}
    strong, weak = code_strongest(quant), code_weakest(quant)
    summary = kept_summary(director.executive_summary, symbols, strong, weak) if director else None
    notes = list(director.summary_notes) if director else []
    notes += [n for n in (summary.notes if summary else []) if n not in notes]
    note = director.portfolio_note if director else ""
    if note and filler_word(note):
        notes.append(f"Code withheld the managing director's note on concentration: {FILLER}.")
        note = ""
    lists = [
        ListView(
            side,
            [
                RankedView(r.symbol, value_text("alpha_1w", r.alpha), r.fact_id, assessments[r.symbol].flag)
                for r in ranked
                if r.symbol in assessments
            ],
            check_list(named, ranked, side, quant) if director else None,
        )
        for side, ranked, named in (
            ("strongest", strong, director.strongest_candidates if director else []),
            ("weakest", weak, director.weakest_candidates if director else []),
        )
    ]
    return Dashboard(
        as_of=str(result.as_of),
        market=market,
        market_rows=_market_rows(market, figures),
        executive_summary=said(summary.text) if summary else [],
        portfolio_note=said(note),
        data_note=result.data_note,
        quality=director.quality_score if director else None,
        quality_rationale=said(director.quality_rationale) if director else [],
        blind_spots=[said(line) for line in director.blind_spots] if director else [],
        strongest=director.strongest_candidates if director else [],
        weakest=director.weakest_candidates if director else [],
        overview=said(_said(overview.summary)) if overview else [],
        overview_rule=_rule(overview.summary) if overview else "",
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
        market_week=said(market_week(quant)),
        portfolio_text=said(portfolio_text(book)),
        portfolio=book,
        lists=lists,
        summary_notes=notes,
        revised=[(r.sector, r.reason) for r in director.revisits if r.sector in result.revised]
        if director
        else [],
        base_bound=result.call_bound - len(result.revised),
        inputs=_inputs(quant, news, overview),
    )


def _said(text: str) -> str:
    """A news summary's words a model wrote (the protocol's and the unread sentence are code's)."""
    return "" if text == UNREAD_SUMMARY else model_part(text)


def _rule(text: str) -> str:
    """The protocol's sentences code wrote into a text a model's words follow (agents.screen.flags)."""
    if text == UNREAD_SUMMARY:
        return text
    return text.removesuffix(model_part(text)).strip()


def _inputs(quant: QuantOutput, news: dict[str, NewsOutput], overview: NewsOutput | None) -> list[Input]:
    """What the screen read, and what seed 002 asks for that the desk does not hold."""
    market = quant.market
    documents = {
        d.doc_id for reading in [*news.values(), *([overview] if overview else [])] for d in reading.documents
    }
    held = [
        Input(f"{market.benchmark} daily prices", True, "the market's week, its averages and each beta"),
        Input("each symbol's daily prices", True, "its profile and its alpha residual"),
        Input(
            f"{market.volatility_index} closes",
            market.volatility_level is not None,
            "the volatility level"
            if market.volatility_level is not None
            else "no close near the as-of session",
        ),
        Input(
            "documents the searches found",
            bool(documents),
            "the news analyst's evidence" if documents else "none found for this week",
        ),
    ]
    return held + declared_gaps()


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
            summary=parts(_said(view.news_summary), figures) if view else [],
            summary_rule=_rule(view.news_summary) if view else "",
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
            rule=assessment.flag_reason.removesuffix(model_part(assessment.flag_reason)).strip(),
            model_reason=parts(model_part(assessment.flag_reason), self.figures),
            concern=parts(assessment.key_concern, self.figures),
            sources=chosen.own,
            context=chosen.context,
            # Drawn by code from numbers; every text in it is escaped (agents.screen.chart).
            chart=mark_safe(chart_svg(chart)) if chart else mark_safe(""),  # noqa: S308
        )
