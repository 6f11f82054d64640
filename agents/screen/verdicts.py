"""Each symbol's floor and flag, from the typed hand-offs (the quant, each sector's news, each sector's
synthesis): the honesty protocol applied by code, the same way before the managing director sees the flags
and after, when its changes are checked."""

from __future__ import annotations

from collections.abc import Mapping

from agents.screen.config import Thresholds
from agents.screen.flags import Decision, Floor, decide, floor, unread_floor
from agents.screen.outputs import NewsOutput, SymbolCallOut, SynthesisOutput
from agents.screen.quant import QuantOutput, SymbolProfile


def symbol_floor(profile: SymbolProfile, news: NewsOutput | None, thresholds: Thresholds) -> Floor:
    """The protocol's floor for the symbol; ``news`` None: its sector's reading did not finish (unread)."""
    if news is None:
        return unread_floor()
    transient = any(
        driver.type == "transient"
        and (not driver.affected_symbols or profile.symbol in driver.affected_symbols)
        for driver in news.drivers
    )
    titles = {doc.doc_id: doc.title for doc in news.documents}
    return floor(
        profile.alpha,
        news.evidence_quality,
        transient=transient,
        thresholds=thresholds,
        cited_titles=tuple(titles[ref][:80] for ref in news.cited if ref in titles),
    )


def proposals(syntheses: Mapping[str, SynthesisOutput]) -> dict[str, SymbolCallOut]:
    return {call.symbol: call for synthesis in syntheses.values() for call in synthesis.calls}


def floors(quant: QuantOutput, news: Mapping[str, NewsOutput], thresholds: Thresholds) -> dict[str, Floor]:
    """Symbol -> its floor; ``news`` by sector name."""
    return {p.symbol: symbol_floor(p, news.get(p.sector), thresholds) for p in quant.symbols}


def decisions(
    quant: QuantOutput,
    news: Mapping[str, NewsOutput],
    syntheses: Mapping[str, SynthesisOutput],
    thresholds: Thresholds,
) -> dict[str, tuple[Floor, Decision]]:
    """Symbol -> (its floor, code's decision on the senior analyst's proposal)."""
    calls = proposals(syntheses)
    found = {}
    for symbol, rule in floors(quant, news, thresholds).items():
        call = calls.get(symbol)
        found[symbol] = (rule, decide(call.proposed if call else None, rule))
    return found
