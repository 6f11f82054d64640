"""Resolved decks for the renderer, fact-check and lint tests: real-looking figures, built without a database.

Values are Apple's filed FY2022-FY2024 figures (rounded to the dollar as filed, in USD); the ids follow the
fact store's ``TICKER:metric:PERIOD`` shape.
"""

from __future__ import annotations

from decimal import Decimal

from agents.deck.code_slides import risks_slide, sources_slide, title_slide
from agents.deck.gates import Measured, R1Result, r1_gates
from agents.deck.outputs import DeckOutput
from agents.deck.spec import Bullet, Chart, Deck, Figure, Slide, Table, Theme, display

_FILED = {
    ("revenue", 2022): "394328000000",
    ("revenue", 2023): "383285000000",
    ("revenue", 2024): "391035000000",
    ("net_income", 2022): "99803000000",
    ("net_income", 2023): "96995000000",
    ("net_income", 2024): "93736000000",
    ("gross_margin", 2024): "0.4620680246",
    ("operating_margin", 2024): "0.3151022287",
    ("revenue_growth_yoy", 2023): "-0.0280046053",
    ("revenue_growth_yoy", 2024): "0.0202225479",
    ("eps_diluted", 2024): "6.08",
}
_UNITS = {
    "gross_margin": "pure",
    "operating_margin": "pure",
    "revenue_growth_yoy": "pure",
    "eps_diluted": "USD/shares",
}
_LABELS = {
    "revenue": "Revenue",
    "net_income": "Net income",
    "gross_margin": "Gross margin",
    "operating_margin": "Operating margin",
    "revenue_growth_yoy": "Revenue growth",
    "eps_diluted": "Diluted EPS",
}


def figure(metric: str, year: int, *, ticker: str = "AAPL") -> Figure:
    value = Decimal(_FILED[(metric, year)])
    unit = _UNITS.get(metric, "USD")
    derived = unit == "pure"
    return Figure(
        fact_id=f"{ticker}:{metric}:FY{year}",
        label=_LABELS[metric],
        period=f"FY{year}",
        value=str(value),
        unit=unit,
        display=display(value, unit),
        source="derived by code" if derived else f"10-K filed {year}-11-01",
        url="https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&CIK=0000320193",
    )


def _slide(number: int, section: str) -> Slide:
    kind = number % 4
    if kind == 1:
        return Slide(
            number=number,
            section=section,
            title="Revenue held near its peak while the mix moved to services",
            takeaway="Growth resumed in FY2024 after a flat year.",
            bullets=(
                Bullet(text="Services carried the year", figures=(figure("revenue", 2024),)),
                Bullet(
                    text="Growth returned on the previous year", figures=(figure("revenue_growth_yoy", 2024),)
                ),
            ),
            chart=Chart(
                title="Revenue by fiscal year",
                kind="bar",
                unit="USD",
                points=tuple(figure("revenue", year) for year in (2022, 2023, 2024)),
            ),
        )
    if kind == 2:
        return Slide(
            number=number,
            section=section,
            title="Margins are the highest in the peer set",
            takeaway="Pricing power shows in the gross margin.",
            table=Table(
                title="Profitability",
                rows=(
                    figure("gross_margin", 2024),
                    figure("operating_margin", 2024),
                    figure("eps_diluted", 2024),
                ),
            ),
        )
    if kind == 3:
        return Slide(
            number=number,
            section=section,
            title="Net income eased for two years",
            takeaway="Watch the tax charge before reading it as a trend.",
            chart=Chart(
                title="Net income by fiscal year",
                kind="line",
                unit="USD",
                points=tuple(figure("net_income", year) for year in (2022, 2023, 2024)),
            ),
        )
    return Slide(
        number=number,
        section=section,
        title="Recommendation: hold, add on weakness",
        takeaway="The board should keep the position and revisit after the next 10-K.",
        bullets=(
            Bullet(text="Cash generation funds the buyback"),
            Bullet(text="Regulatory cases are the main risk to services"),
            Bullet(text="Next review after the annual filing"),
        ),
    )


SECTIONS = ("Thesis", "Performance", "Profitability", "Risks", "Recommendation")


def sample_deck(slides: int = 5) -> Deck:
    return Deck(
        company="Apple Inc.",
        ticker="AAPL",
        title="Apple: hold through the services transition",
        subtitle="For the investment committee · data as of 2024-11-01",
        thesis="Services growth offsets a flat hardware cycle; hold.",
        slides=tuple(_slide(n, SECTIONS[(n - 1) % len(SECTIONS)]) for n in range(1, slides + 1)),
    )


def clean_measure(deck: Deck) -> Measured:
    """What code measures on a deck with nothing wrong: every figure traced, every section, no lint."""
    charts = sum(len(slide.chart.points) for slide in deck.slides if slide.chart is not None)
    return Measured(
        figures=len(deck.figures()),
        mismatches=0,
        unresolved_ids=0,
        missing_sections=[],
        broken=[],
        walls_of_text=0,
        chart_figures=charts,
        humanizer=0,
    )


def cleared_r1(deck: Deck, *, composite: float = 3.6) -> DeckOutput:
    """A deck's output as the deck step writes it when its draft cleared R1 and no lap ran."""
    r1 = R1Result(
        gates=r1_gates(clean_measure(deck)), scores={}, composite=composite, entry_bar=3.2, passed=True
    )
    return DeckOutput(deck=deck, escalated=False, r1=r1)


def titled_deck(slides: int = 5, *, theme: Theme | None = None) -> Deck:
    """A deck as the desk builds one: code's title slide, the drafted slides, code's risks and sources."""
    body = sample_deck(slides)
    drafted = [slide.model_copy(update={"number": slide.number + 1}) for slide in body.slides]
    figures = {f.fact_id: f for slide in drafted for f in slide.figures()}
    risks = risks_slide(len(drafted) + 2, figures, (), None, lambda text: text)
    shown = [f for slide in (*drafted, risks) for f in slide.figures()]
    return body.model_copy(
        update={
            "slides": (
                title_slide(body.title, body.thesis),
                *drafted,
                risks,
                sources_slide(len(drafted) + 3, shown),
            ),
            "theme": theme or Theme(),
        }
    )
