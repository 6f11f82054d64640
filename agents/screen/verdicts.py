"""Each symbol's floor and flag, from the typed hand-offs (the quant, each sector's news, each sector's
synthesis): the honesty protocol applied by code, the same way before the managing director sees the flags
and after, when its changes are checked."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

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


NOT_ASKED = (
    "Code set YELLOW: the senior analyst proposed flags for the sector's {n} largest own moves the protocol "
    "leaves open, and this one's was smaller."
)


def put_to_senior(
    profiles: Sequence[SymbolProfile], news: NewsOutput | None, thresholds: Thresholds, limit: int
) -> tuple[str, ...]:
    """The symbols of one sector the senior analyst proposes flags for, in the sector's order: those whose
    flag the protocol leaves open (a settled one is code's whatever a model writes), the largest own moves
    first, at most ``limit``. Asking for the rest would only lengthen the slowest answer of the screen."""
    open_ = [p for p in profiles if symbol_floor(p, news, thresholds).forced is None]
    largest = sorted(open_, key=lambda p: -abs(p.alpha) if p.alpha is not None else 0.0)[:limit]
    chosen = {p.symbol for p in largest}
    return tuple(p.symbol for p in profiles if p.symbol in chosen)


def decisions(
    quant: QuantOutput,
    news: Mapping[str, NewsOutput],
    syntheses: Mapping[str, SynthesisOutput],
    thresholds: Thresholds,
) -> dict[str, tuple[Floor, Decision]]:
    """Symbol -> (its floor, code's decision on the senior analyst's proposal). A symbol its sector's
    synthesis was not asked about (``put_to_senior``) says so in code's note."""
    calls = proposals(syntheses)
    found = {}
    for profile in quant.symbols:
        symbol, rule = profile.symbol, symbol_floor(profile, news.get(profile.sector), thresholds)
        call = calls.get(symbol)
        decision = decide(call.proposed if call else None, rule)
        written = syntheses.get(profile.sector)
        asked = written.asked if written is not None else None
        if call is None and rule.forced is None and asked is not None and symbol not in asked:
            decision = Decision(decision.flag, None, NOT_ASKED.format(n=len(asked)))
        found[symbol] = (rule, decision)
    return found
