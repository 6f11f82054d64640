"""Each symbol's floor and flag, from the typed hand-offs (the quant, each sector's news, each sector's
synthesis): the honesty protocol applied by code, the same way before the managing director sees the flags
and after, when its changes are checked."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from agents.screen.config import Thresholds
from agents.screen.evidence import nothing_own, symbol_evidence
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
    # The symbol quotes only what names it (agents.screen.evidence): the sector's other documents are its
    # context, and a symbol with nothing of its own says so in a sentence of its own.
    chosen = symbol_evidence(profile.symbol, profile.name, news.documents, news.cited)
    rule = floor(
        profile.alpha,
        news.evidence_quality,
        transient=transient,
        thresholds=thresholds,
        cited_titles=tuple(doc.title[:80] for doc in chosen.own),
    )
    if news.evidence_quality == "none" or chosen.own:
        return rule
    found = len(news.documents) - len(chosen.promotional)
    return Floor(rule.forced, rule.allowed, nothing_own(profile.symbol, profile.sector, found, news.searches))


def _masked(call: SymbolCallOut) -> str:
    said = re.sub(rf"(?<![\w$]){re.escape(call.symbol)}(?!\w)", "<symbol>", call.flag_reason, flags=re.I)
    return " ".join(said.lower().split())


def proposals(syntheses: Mapping[str, SynthesisOutput]) -> dict[str, SymbolCallOut]:
    """Each symbol's proposal. A reason the senior analyst wrote for two or more symbols of a sector, the
    same but for the symbol's name ("XOM follows its sector's story"), says nothing of any one of them: it
    is left out of their reasons, and code's sentence on what names the symbol stands alone."""
    found: dict[str, SymbolCallOut] = {}
    for synthesis in syntheses.values():
        written = Counter(_masked(call) for call in synthesis.calls if call.flag_reason.strip())
        for call in synthesis.calls:
            shared = bool(call.flag_reason.strip()) and written[_masked(call)] > 1
            found[call.symbol] = call.model_copy(update={"flag_reason": ""}) if shared else call
    return found


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
