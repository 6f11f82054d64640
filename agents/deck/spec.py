"""The deck spec (seed 001): what the renderers draw, the fact-check traces and a version freezes.

Two layers. The drafter and the reviser write a ``DeckDraft`` (agents.deck.schemas): words and fact ids,
never a number. Code resolves it into this ``Deck``: every figure on a slide is a ``Figure`` built from a
fact-store record (a filed figure, a quant figure, or a figure derived by code, each with its citation), and
its ``display`` string is what both renderers print and what T5 (agents.factcheck) expects to read back.

The resolved deck is plain data: the PPTX and the PDF are drawn from the same ``Deck``, so they show the same
numbers and the same words.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.data.formatting import format_value
from agents.env import ConfigError

_FISCAL = re.compile(r"FY(\d{4})(?:Q([1-4]))?")

ChartKind = Literal["bar", "line", "bridge"]
# What a slide is: the sections' slides carry the model's words; the title, risks and sources slides are
# written by code from the run's figures (the executive summary is drafted with the deck's framing).
SlideKind = Literal["title", "summary", "section", "risks", "watch", "sources"]
CODE_SLIDES: frozenset[str] = frozenset({"title", "risks", "watch", "sources"})
SPEC_VERSION = 2


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Figure(_Frozen):
    """One code-owned number as a slide shows it, with where it comes from."""

    fact_id: str
    label: str  # what it measures, in words ("Revenue", "Gross margin")
    period: str  # "FY2024", "FY2025Q3", "as of 2026-10-30"
    value: str  # the fact store's exact value (a Decimal as text)
    unit: str  # the fact store's unit: USD, pure, percent, USD/shares, shares ...
    display: str  # exactly what the slide prints for it (agents.deck.spec.display)
    source: str  # "10-K filed 2024-11-01", "derived: a / b - 1", "daily prices"
    url: str = ""

    @property
    def decimal(self) -> Decimal:
        return Decimal(self.value)

    @property
    def fiscal(self) -> tuple[int, int] | None:
        """(year, quarter) of a fiscal period, quarter 0 for a whole year: (2025, 0) for "FY2025", (2025, 3)
        for "FY2025Q3"; None for another kind of period ("as of 2026-10-30")."""
        match = _FISCAL.fullmatch(self.period)
        return (int(match.group(1)), int(match.group(2) or 0)) if match else None


class Bullet(_Frozen):
    text: str  # model-written words (figures withheld by code), no numbers of its own but ``inline``'s
    figures: tuple[Figure, ...] = ()  # printed after the text, each as "label period: display"
    # Figures code wrote into the words, each as its display where the model had typed a number this fact
    # backs (agents.deck.resolve): cited and checked like the others, printed once, where they stand.
    inline: tuple[Figure, ...] = ()


class Table(_Frozen):
    title: str
    rows: tuple[Figure, ...]  # one row per figure: metric, period, value, source


class Chart(_Frozen):
    title: str
    kind: ChartKind
    unit: str  # every point shares it (code refuses a chart mixing units)
    points: tuple[Figure, ...]  # in the order drawn, one bar or point each, labelled by its period
    # A bridge (waterfall) only: for each point, whether it is a total (a bar from zero) or a step taken
    # away from the running total (a floating bar); its points are labelled by what they measure.
    steps: tuple[bool, ...] = ()
    # A breakdown of one period's total (revenue by product line): its bars are labelled by their line.
    parts: bool = False
    # A bridge whose steps are signed effects added to the running total (last year's net income to this
    # year's), not amounts taken away from it (revenue to net income).
    adds: bool = False

    def category(self, index: int) -> str:
        """What labels point ``index`` under the plot: its period, in a breakdown its line ("iPhone" of
        "Revenue: iPhone"), in a bridge what it measures."""
        point = self.points[index]
        if self.parts:
            return point.label.rpartition(": ")[2]
        if self.kind != "bridge":
            return point.period
        if self.adds:  # totals of one metric in two years, and each line's effect between them
            return point.label if self.steps[index] else f"{point.label} {point.period}"
        return f"Less {point.label[0].lower()}{point.label[1:]}" if self.steps[index] else point.label


class Theme(_Frozen):
    """The firm's look, frozen with each deck (settings.DECK_THEME): its name on the title slide and in the
    footers, and the colours both renderers draw with."""

    firm: str = "Analyst Desk"
    accent: str = "#1F4E79"  # titles' rules, takeaways, table headers, positive figures
    ink: str = "#1F2933"
    muted: str = "#6B7280"
    negative: str = "#A23B3B"


_COLOUR = re.compile(r"#[0-9A-Fa-f]{6}")


def deck_theme(*, firm: str, accent: str, ink: str, negative: str) -> Theme:
    """The theme from settings; a colour that is not ``#RRGGBB`` or an empty firm name is refused by name."""
    for name, colour in (
        ("DECK_ACCENT_COLOUR", accent),
        ("DECK_INK_COLOUR", ink),
        ("DECK_NEGATIVE_COLOUR", negative),
    ):
        if not _COLOUR.fullmatch(colour.strip()):
            raise ConfigError(f"{name} must be a colour written #RRGGBB, not {colour!r}")
    if not firm.strip() or len(firm) > 60:
        raise ConfigError("DECK_FIRM_NAME must be a name of 1 to 60 characters")
    return Theme(
        firm=firm.strip(),
        accent=accent.strip().upper(),
        ink=ink.strip().upper(),
        negative=negative.strip().upper(),
    )


class Slide(_Frozen):
    number: int  # 1-based, in reading order
    section: str  # the scope's required section this slide belongs to
    kind: SlideKind = "section"
    title: str
    takeaway: str  # the "so what", one sentence
    bullets: tuple[Bullet, ...] = ()
    table: Table | None = None
    chart: Chart | None = None

    def figures(self) -> list[Figure]:
        """Every figure the slide shows, in the order the renderers draw them: bullets, table, chart."""
        found = [figure for bullet in self.bullets for figure in (*bullet.inline, *bullet.figures)]
        if self.table is not None:
            found.extend(self.table.rows)
        if self.chart is not None:
            found.extend(self.chart.points)
        return found

    def words(self) -> list[str]:
        """The model-written text of the slide (for the humanizer and the lint), in reading order."""
        texts = [self.title, self.takeaway, *(bullet.text for bullet in self.bullets)]
        if self.table is not None:
            texts.append(self.table.title)
        if self.chart is not None:
            texts.append(self.chart.title)
        return [text for text in texts if text]


class Deck(_Frozen):
    """A resolved deck: what is rendered, checked, scored and frozen."""

    spec_version: int = SPEC_VERSION
    company: str  # the company's name
    ticker: str
    title: str
    subtitle: str  # audience and the data's as-of date, written by code
    thesis: str
    slides: tuple[Slide, ...] = Field(min_length=1)
    theme: Theme = Theme()

    def figures(self) -> dict[str, Figure]:
        """Every figure in the deck by fact id."""
        return {figure.fact_id: figure for slide in self.slides for figure in slide.figures()}

    def sections(self) -> list[str]:
        return list(dict.fromkeys(slide.section for slide in self.slides))

    def drafted(self) -> list[Slide]:
        """The slides a reviser may change: the executive summary and the sections' slides."""
        return [slide for slide in self.slides if slide.kind not in CODE_SLIDES]


# Pure numbers that are not shares of a whole: a beta of 1.02 is not "102.0%".
MULTIPLES = frozenset({"beta", "beta_sector"})


def display(value: Decimal, unit: str, *, fact_id: str = "") -> str:
    """How a deck prints a figure: a ratio (unit ``pure``, 0.4621) as a percent with one decimal, as boards
    read margins, growth and returns, but a multiple (a beta: the fact id names the metric) with two
    decimals; everything else as the rest of the desk writes it (agents.data.formatting)."""
    if unit == "pure":
        metric = fact_id.split(":")[1] if fact_id.count(":") >= 2 else ""
        return f"{value:,.2f}" if metric in MULTIPLES else f"{value * 100:,.1f}%"
    return format_value(value, unit)


def figure_text(figure: Figure) -> str:
    """A figure as a bullet prints it after the bullet's words."""
    return f"{figure.label} {figure.period}: {figure.display}"


def bullet_text(bullet: Bullet) -> str:
    """A bullet as both renderers print it: its words, then each figure, separated by "; " (by a space
    alone after words that end a sentence: "spending.; Capital" reads as a typo)."""
    figures = "; ".join(map(figure_text, bullet.figures))
    words = bullet.text.strip()
    if not words or not figures:
        return words or figures
    return f"{words} {figures}" if words[-1] in ".!?:;" else f"{words}; {figures}"
