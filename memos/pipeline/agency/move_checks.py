"""Reading what the moves' checks by code need (agents.agency.feasibility): the company's names, the
companies a target may name, and each company's size figures from the fact store.

A target is named by SEC's company list (its titles, suffixes dropped: "Alphabet Inc." is "alphabet") or by
one of ``FORMER_NAMES``. Its figures come from the fact store; when the store has none, the desk's EDGAR
source is asked once for its companyfacts (bundled for GOOG and META among others); a target it has none
for is not judged, and the move is debated.
"""

from __future__ import annotations

from functools import lru_cache

from agents.agency.dedup import target_words
from agents.agency.feasibility import (
    Figure,
    Holdings,
    MoveCheck,
    acquisition,
    generic,
    is_acquisition,
    names_of,
    resolve,
)
from agents.agency.outputs import ProposedMove
from agents.data.edgar import load_company_facts
from agents.data.edgar.sources import TickerMap
from agents.data.errors import DataError
from memos.models import Company, FactRecord
from memos.pipeline.data_sources import edgar_source
from memos.pipeline.evidence import fact_period
from memos.pipeline.fact_store import save_company_facts

# Names a company went by until recently, which a model trained on older text still uses: Google became
# Alphabet (2015), Facebook became Meta Platforms (2021). SEC's list knows only the current names.
FORMER_NAMES = {"google": "GOOG", "facebook": "META"}
_METRICS = {
    "cash": "cash",
    "operating_income": "operating_income",
    "net_income": "net_income",
    "equity": "stockholders_equity",
}


@lru_cache(maxsize=2)
def _index(tickers: tuple[tuple[str, str], ...]) -> dict[frozenset[str], str]:
    index: dict[frozenset[str], str] = {}
    # The shortest ticker, then the alphabetically first, names a company listed under several (GOOG
    # before GOOGL): one company, one ticker.
    for ticker, title in sorted(tickers, key=lambda pair: (len(pair[0]), pair[0])):
        words = target_words(title)
        if words:
            index.setdefault(words, ticker)
        index.setdefault(frozenset({ticker.casefold()}), ticker)
    for name, ticker in FORMER_NAMES.items():
        index.setdefault(frozenset({name}), ticker)
    return index


def name_index(listed: TickerMap | None = None) -> dict[frozenset[str], str]:
    """Target words -> ticker, for every company SEC lists (and the former names)."""
    try:
        found = listed if listed is not None else edgar_source().company_tickers()
    except DataError:
        found = {}
    return _index(tuple(sorted((ticker, title) for ticker, (_, title) in found.items())))


def holdings(company: Company) -> Holdings:
    figures: dict[str, Figure] = {}
    for field, metric in _METRICS.items():
        fact = (
            FactRecord.objects.filter(company=company, metric=metric, fiscal_period="FY")
            .order_by("-fiscal_year", "-period_end")
            .first()
        )
        if fact is not None:
            figures[field] = Figure(fact.fact_id, metric, fact.value, fact.unit, fact_period(fact))
    return Holdings(ticker=company.ticker, name=company.name or company.ticker, **figures)


def target_holdings(ticker: str) -> Holdings | None:
    """The target's figures: from the store, else loaded from the desk's EDGAR source; None when neither
    has them."""
    company = Company.objects.filter(ticker=ticker).first()
    if company is None or not company.facts.exists():
        try:
            save_company_facts(load_company_facts(edgar_source(), ticker))
        except DataError:
            return None
        company = Company.objects.filter(ticker=ticker).first()
    return holdings(company) if company is not None else None


def check(
    move: ProposedMove, company: Company, index: dict[frozenset[str], str]
) -> tuple[MoveCheck | None, str]:
    """(why the move is set aside, or None; a note on an acquisition not judged, or "")."""
    own = names_of([company.name], company.ticker)
    found = generic(move.target, own, company.name or company.ticker)
    if found is not None:
        return found, ""
    if not is_acquisition(move.action, move.title):
        return None, ""
    ticker = resolve(move.target, index)
    if ticker is None:
        return None, "not judged: the target names no company the desk can look up"
    target = target_holdings(ticker)
    if target is None:
        return None, f"not judged: the desk holds no figures for {ticker}"
    return acquisition(holdings(company), target)
