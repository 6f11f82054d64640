"""The slides code writes around the drafted ones: the title slide, the risks slide and the sources slide.

Their words are code's, true of the figures by construction ("fell", "more than the market" are decided by
comparing the fact store's values), and carry no number of their own: every figure on them is a ``Figure``,
printed and fact-checked like any other. A board reads the risks from the record, not from a model that may
leave them out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from agents.deck.assign import metric_of
from agents.deck.spec import Bullet, Figure, Slide
from agents.deck.watch_slide import MemoCatalyst, without_if

TITLE_SECTION = "Title"
RISKS_SECTION = "Risks"
SOURCES_SECTION = "Sources"
# Figures whose fall from one fiscal year to the next is a risk a board should see, most telling first.
WATCHED_FALLS = ("revenue_growth_yoy", "operating_margin", "net_margin", "gross_margin", "fcf")
MAX_FALLS = 2
MAX_MEMO_LINES = 1
MAX_SOURCES = 9
MAX_RISK_BULLETS = 4


@dataclass(frozen=True)
class MemoLines:
    """What the brief's latest memo version says a board should watch, as code quotes it."""

    version: str  # "memo v3"
    falsifiers: tuple[str, ...] = ()
    recommendation: str = ""  # "HOLD, half position"
    thesis: str = ""  # its headline thesis, as frozen (its citations still "[[fact id]]")
    catalysts: tuple[MemoCatalyst, ...] = ()


def code_kind(section: str) -> str | None:
    """The kind of slide code writes that a scope's section asks for, if any: a scope often lists an
    executive summary, the risks or the sources, which the desk writes itself (the summary with the
    framing): such a section is not drafted again, and its slide counts as the section's."""
    name = " ".join(re.findall(r"[a-z]+", section.casefold()))
    if re.fullmatch(r"(executive )?summary|overview|summary and recommendation|key takeaways", name):
        return "summary"
    if re.search(r"\brisks?\b", name):
        return "risks"
    if re.search(r"\b(sources|references|appendix|citations)\b", name):
        return "sources"
    return None


def title_slide(title: str, thesis: str) -> Slide:
    return Slide(number=1, section=TITLE_SECTION, kind="title", title=title, takeaway=thesis)


def falls(figures: Mapping[str, Figure], *, own: str = "") -> list[tuple[Figure, Figure]]:
    """Watched figures of the company (``own``, its ticker: not a peer's) whose latest fiscal year is below
    the year before, most telling first."""
    found = []
    mine = [f for f in figures.values() if not own or f.fact_id.startswith(f"{own}:")]
    for metric in WATCHED_FALLS:
        annual = sorted(
            (f for f in mine if metric_of(f.fact_id) == metric and f.period[:2] == "FY"),
            key=lambda f: f.period,
        )
        annual = [f for f in annual if len(f.period) == len("FY2024")]
        if len(annual) >= 2 and annual[-1].decimal < annual[-2].decimal:
            found.append((annual[-2], annual[-1]))
    return found[:MAX_FALLS]


def risks_slide(
    number: int,
    figures: Mapping[str, Figure],
    risk_ids: Sequence[str],
    memo: MemoLines | None,
    words: Callable[[str], str],
    *,
    own: str = "",
) -> Slide:
    """The risks slide: what fell in the latest fiscal year, how the shares move with the market, and the
    memo's falsifiers (its words, less any sentence that states a figure: ``words``)."""
    fell = falls(figures, own=own)
    risk = [figures[i] for i in risk_ids if i in figures]
    beta = next((f for f in risk if metric_of(f.fact_id) == "beta"), None)
    bullets = [
        Bullet(text=f"{later.label} fell on the year before", figures=(earlier, later))
        for earlier, later in fell
    ]
    if beta is not None:
        swing = tuple(f for f in risk if metric_of(f.fact_id) in ("beta", "volatility_annualised"))
        bullets.append(Bullet(text=f"The shares {market_move(beta)}", figures=swing))
    if memo is not None:
        for line in memo.falsifiers[:MAX_MEMO_LINES]:
            kept = words(line)
            if kept:
                bullets.append(Bullet(text=f"The {memo.version} would be wrong if: {without_if(kept)}"))
    if not fell:
        bullets.insert(0, Bullet(text="No watched margin or growth figure fell in the latest fiscal year"))
    title = _risks_title(fell, beta)
    return Slide(
        number=number,
        section=RISKS_SECTION,
        kind="risks",
        title=title,
        takeaway="What could break the thesis, from the filings and the price record.",
        bullets=tuple(bullets[:MAX_RISK_BULLETS]),
    )


def _risks_title(fell: Sequence[tuple[Figure, Figure]], beta: Figure | None) -> str:
    first = f"{fell[0][1].label} fell in {fell[0][1].period}" if fell else "No watched margin fell"
    if beta is None:
        return first
    return f"{first}; the shares {market_move(beta)}"


# Within this of one, a beta says the shares move with the market: 1.02 is not "more than the market".
MARKET_LIKE = Decimal("0.1")


def market_move(beta: Figure) -> str:
    """ "move more than the market", "move less than the market" or "move with the market", by the beta."""
    if abs(beta.decimal - 1) <= MARKET_LIKE:
        return "move with the market"
    return f"move {'more' if beta.decimal > 1 else 'less'} than the market"


def sources_slide(number: int, shown: Sequence[Figure]) -> Slide:
    """Every source the deck's figures come from, with what each gives: filings by form and date, the
    figures code derived, and the price record."""
    by_source: dict[str, list[str]] = {}
    for figure in shown:
        by_source.setdefault(figure.source, [])
        if figure.label not in by_source[figure.source]:
            by_source[figure.source].append(figure.label)
    ordered = sorted(by_source.items(), key=lambda item: (_rank(item[0]), item[0]))
    bullets = tuple(
        Bullet(
            text=f"{_source_name(source)}: {', '.join(labels[:6])}{' and more' if len(labels) > 6 else ''}"
        )
        for source, labels in ordered[:MAX_SOURCES]
    )
    return Slide(
        number=number,
        section=SOURCES_SECTION,
        kind="sources",
        title="Every figure in this deck traces to a filing, the price record or code's arithmetic on them",
        takeaway="Each slide's footer names its own sources; each figure's fact id travels inside the file.",
        bullets=bullets,
    )


_FILING = re.compile(r"\S+ filed [0-9]{4}-[0-9]{2}-[0-9]{2}")


def _rank(source: str) -> int:
    if _FILING.fullmatch(source):
        return 0
    return 1 if source.startswith("derived") else 2


def _source_name(source: str) -> str:
    if _FILING.fullmatch(source):
        return f"SEC EDGAR, {source}"
    return source[0].upper() + source[1:]
