"""From a ticker to a company's facts or filings, through any EdgarSource."""

from __future__ import annotations

from agents.data.edgar.companyfacts import facts_from_companyfacts
from agents.data.edgar.factset import CompanyFactSet
from agents.data.edgar.sources import DocumentUnavailable, EdgarSource
from agents.data.edgar.submissions import FilingRow, filings_from_submissions
from agents.data.errors import UnknownTicker


def resolve_ticker(source: EdgarSource, ticker: str) -> tuple[str, int, str]:
    """(ticker in upper case, CIK, company name) from SEC's company list."""
    symbol = ticker.strip().upper()
    found = source.company_tickers().get(symbol)
    if found is None:
        raise UnknownTicker(f"unknown ticker {symbol or ticker!r}: not in SEC's company list")
    cik, title = found
    return symbol, cik, title


def load_company_facts(source: EdgarSource, ticker: str) -> CompanyFactSet:
    symbol, cik, title = resolve_ticker(source, ticker)
    try:
        payload = source.companyfacts(cik)
    except DocumentUnavailable as exc:
        raise DocumentUnavailable(
            f"{symbol} ({title}, CIK {cik}) has no companyfacts here ({exc}); read its numbers from a "
            "10-Q or 10-K inline XBRL document instead (agents.data.edgar.facts_from_inline_xbrl)"
        ) from exc
    return facts_from_companyfacts(payload, ticker=symbol)


def load_company_filings(source: EdgarSource, ticker: str) -> list[FilingRow]:
    """The company's recent filings (``filings.recent``: about the newest thousand), newest first."""
    _, cik, _ = resolve_ticker(source, ticker)
    return filings_from_submissions(source.submissions(cik), cik=cik)
