"""What the executive summary states, written or checked by code (issue 32, 4). A small model cannot be
trusted with a figure or a list: on the demo week the embedded model's summary said "with the market's beta
being ouch ..." (a filler where each barred figure was to go) and "Strongest candidates: AAPL, PG, BUD, KO,
PM. Weakest: XOM, RDS-B, PTR, CVX, TOT." (the first five symbols of two sectors, in list order: AAPL's own
move that week was -1.97%, TOT's +1.02%).

So code writes the paragraphs whose job is to state figures (the market's week, the portfolio), as text with
``[[fact id]]`` references the pages print; ranks the strongest and weakest candidates by their own move
(the alpha residual, each shown with its flag); and keeps of the managing director's summary only the
sentences code cannot say and has no reason to withhold: a sentence with a filler in a figure's place is
withheld (agents.text.slots), and so is one naming candidates that code's ranking does not bear out.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from pydantic import BaseModel, ConfigDict

from agents.screen.portfolio import Portfolio
from agents.screen.quant import QuantOutput, SymbolProfile, pct
from agents.text.sentences import sentences
from agents.text.slots import FILLER, filler_word

LIST_SIZE = 5
RANKING = "by the week's alpha residual (the symbol's own move, beyond what beta times the market explains)"
_SIDES = re.compile(r"\b(strongest|best|top|weakest|worst|bottom)\b", re.IGNORECASE)
_STRONG = {"strongest", "best", "top"}


class Ranked(BaseModel):
    """One candidate of code's list: the symbol and the fact its rank comes from."""

    model_config = ConfigDict(frozen=True)

    symbol: str
    alpha: float
    fact_id: str


class ListCheck(BaseModel):
    """A list the managing director named, checked against code's: kept when every symbol it names is on
    code's list of the same side, else withheld with the reason."""

    model_config = ConfigDict(frozen=True)

    named: list[str]
    kept: bool
    note: str  # why it was withheld ("" when kept or when nothing was named)


def _ranked(profiles: Sequence[SymbolProfile]) -> list[Ranked]:
    return [
        Ranked(symbol=p.symbol, alpha=p.alpha, fact_id=p.facts["alpha_1w"])
        for p in profiles
        if p.alpha is not None and "alpha_1w" in p.facts
    ]


def _size(ranked: Sequence[Ranked], size: int) -> int:
    """At most half the candidates a side, so no symbol is both among the strongest and the weakest."""
    return min(size, len(ranked) // 2)


def strongest(quant: QuantOutput, size: int = LIST_SIZE) -> list[Ranked]:
    """The candidates with the largest own move this week, largest first (ties by symbol)."""
    ranked = _ranked(quant.symbols)
    return sorted(ranked, key=lambda r: (-r.alpha, r.symbol))[: _size(ranked, size)]


def weakest(quant: QuantOutput, size: int = LIST_SIZE) -> list[Ranked]:
    """The candidates with the most negative own move this week, most negative first."""
    ranked = _ranked(quant.symbols)
    return sorted(ranked, key=lambda r: (r.alpha, r.symbol))[: _size(ranked, size)]


def check_list(named: Sequence[str], code: Sequence[Ranked], side: str, quant: QuantOutput) -> ListCheck:
    """``named``: the managing director's list for ``side`` ("strongest" or "weakest")."""
    if not named:
        return ListCheck(named=[], kept=False, note="")
    on_list = {r.symbol for r in code}
    off = [s for s in named if s not in on_list]
    if not off:
        return ListCheck(named=list(named), kept=True, note="")
    shown = ", ".join(f"{s} {pct(p.alpha) if (p := quant.symbol(s)) else 'n/a'}" for s in off[:3])
    return ListCheck(
        named=list(named),
        kept=False,
        note=(
            f"The managing director named {', '.join(named)} as the {side}; code withheld that list: "
            f"{RANKING}, {shown} {'is' if len(off) == 1 else 'are'} not among the {side} "
            f"{len(code)}."
        ),
    )


def market_week(quant: QuantOutput) -> str:
    """The market's week in code's words, each figure a ``[[fact id]]`` the page prints."""
    market = quant.market
    facts = market.facts
    parts = []
    if "return_1w" in facts:
        parts.append(
            f"{market.benchmark} returned [[{facts['return_1w']}]] in the week ending {market.as_of}"
        )
    if "sma50_distance_pct" in facts and "sma200_distance_pct" in facts:
        parts.append(
            f"it closed [[{facts['sma50_distance_pct']}]] against its 50-day average and "
            f"[[{facts['sma200_distance_pct']}]] against its 200-day (regime: {market.regime})"
        )
    text = "; ".join(parts) + "." if parts else f"Regime: {market.regime}."
    if "close" in facts:
        text += f" {market.volatility_index} closed at [[{facts['close']}]]."
    return text


def portfolio_text(book: Portfolio) -> str:
    """The candidates, their spread over sectors and their own move, in code's words."""
    if not book.candidates:
        return "No symbol of the watchlist could be assessed."
    text = f"[[{book.fact('candidates')}]] candidates in [[{book.fact('sectors')}]] sectors"
    if book.sectors:
        text += (
            f"; the largest, {book.largest_sector}, holds [[{book.sectors[0].fact_id}]] of them "
            f"([[{book.fact('largest_sector_share')}]]; sector concentration, HHI, [[{book.fact('hhi')}]])"
        )
    text += "."
    if book.fact("avg_return_1w") and book.fact("avg_alpha_1w"):
        text += (
            f" Their mean week was [[{book.fact('avg_return_1w')}]], of which their own move (mean alpha "
            f"residual) [[{book.fact('avg_alpha_1w')}]]."
        )
    shares = [f"[[{book.fact(f'share_{flag}')}]] {flag}" for flag in ("green", "yellow", "red")]
    if all(book.fact(f"share_{flag}") for flag in ("green", "yellow", "red")):
        text += f" Flagged: {', '.join(shares)}."
    return text


class Kept(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    notes: list[str]


def kept_summary(
    text: str, symbols: Collection[str], code_strong: Sequence[Ranked], code_weak: Sequence[Ranked]
) -> Kept:
    """The managing director's summary without the sentences code withholds: a filler in a figure's place,
    or candidates named as strongest or weakest that code's ranking does not bear out."""
    kept: list[str] = []
    notes: list[str] = []
    lists = {"strongest": {r.symbol for r in code_strong}, "weakest": {r.symbol for r in code_weak}}
    for sentence in sentences(text):
        if not sentence.strip():
            continue
        word = filler_word(sentence)
        if word:
            notes.append(f'Code withheld a sentence of the summary: {FILLER} ("{word}").')
            continue
        wrong = _misnamed(sentence, symbols, lists)
        if wrong:
            notes.append(
                f"Code withheld a sentence of the summary: it names {', '.join(wrong)} where code's "
                f"ranking {RANKING} does not put {'it' if len(wrong) == 1 else 'them'}."
            )
            continue
        kept.append(sentence.strip())
    return Kept(text=" ".join(kept), notes=notes)


def _misnamed(sentence: str, symbols: Collection[str], lists: dict[str, set[str]]) -> list[str]:
    """The symbols ``sentence`` names under a side (strongest or weakest) that code's list of that side
    lacks; a symbol named before any side word is not checked."""
    pieces = _SIDES.split(sentence)
    wrong: list[str] = []
    for index in range(1, len(pieces) - 1, 2):
        side = "strongest" if pieces[index].lower() in _STRONG else "weakest"
        named = [t for t in re.findall(r"[A-Z][A-Z0-9.\-]*[A-Z0-9]|[A-Z]", pieces[index + 1]) if t in symbols]
        wrong += [s for s in named if s not in lists[side]]
    return list(dict.fromkeys(wrong))
