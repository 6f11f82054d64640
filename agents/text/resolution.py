"""A number the model typed, put back in code's hands when a cited fact backs it.

Models copy figures from their prompts: "cash of USD 35,934 million in 2025" where the prompt listed
``AAPL:cash:FY2025 USD 35,934 M``. Such a number is not the model's own, but it is still typed: the rule that
a model never owns a number withholds the sentence. Here code looks the typed number up among the facts the
writer was given and, when exactly one of them backs it, writes the fact in its place (a ``[[fact id]]``
reference, which pages render from the fact store with its citation). A fact backs a typed number when:

- the value agrees at the typed number's own rounding ("391 billion", "391.0 billion" and "USD 391,035
  million" all print revenue of 391,035,000,000), and the typed number is not coarser than a figure is ever
  printed (three significant digits for amounts, two for percentages and multiples, or the fact's own);
- the unit agrees: a percentage is a percent or a ratio fact, an amount ("$", "USD", "billion") a currency
  or a share count, a multiple ("1.3x") a ratio; a bare number must equal the digits the fact is printed with;
- the period agrees: when the sentence names years ("in 2025", "FY2024"), the fact's period is one of them;
- the sentence names what the fact measures ("cash", "liabilities", "revenue" or "sales"), so a right number
  next to the wrong words ("total assets of" the equity figure) is not dressed up as a citation.

A number that two facts could back, or none, stays typed, and the sentence stays withheld
(agents.text.figures). Nothing here reads a model's words as instructions: it matches digits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from agents.text.figures import BRACKETED, NOT_A_FIGURE, segments
from agents.text.sentences import sentences

CURRENCY_UNITS = frozenset({"USD", "TWD", "EUR"})
SCALES = {
    "trillion": Decimal(10) ** 12,
    "tn": Decimal(10) ** 12,
    "t": Decimal(10) ** 12,
    "billion": Decimal(10) ** 9,
    "bn": Decimal(10) ** 9,
    "b": Decimal(10) ** 9,
    "million": Decimal(10) ** 6,
    "mn": Decimal(10) ** 6,
    "mm": Decimal(10) ** 6,
    "m": Decimal(10) ** 6,
    "thousand": Decimal(10) ** 3,
    "k": Decimal(10) ** 3,
}
# A typed figure: an optional currency, the digits, an optional scale, percent or multiple. The currency
# code may stand before with a blank ("USD 35,934 million"), a symbol right before ("$391 billion").
TYPED = re.compile(
    r"(?<![\w.\-/:\[])"
    r"(?P<currency>(?:US)?\$\s?|(?:USD|EUR|TWD)\s?|[€£]\s?)?"
    r"(?P<sign>[-+])?(?P<digits>\d(?:[\d,]*\d)?(?:\.\d+)?)"
    r"(?:\s?(?P<scale>%|per\s?cent\b|percent\b|bps\b|basis points\b|trillion\b|billion\b|million\b"
    r"|thousand\b|tn\b|bn\b|mn\b|mm\b|[TtBbMmKk]\b|x\b))?"
    r"(?![\w\-/:])"
)
YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")
WORD = re.compile(r"[A-Za-z]+")
# What a fact's metric is called in prose besides its own words (stems, compared by prefix).
SYNONYMS = {
    "revenue": ("revenue", "sales", "top line", "top-line", "turnover"),
    "net_income": ("net income", "earnings", "profit"),
    "eps_diluted": ("eps", "earnings per share", "per share"),
    "operating_income": ("operating income", "operating profit", "ebit"),
    "gross_profit": ("gross profit",),
    "rnd_expense": ("r&d", "research"),
    "operating_cash_flow": ("operating cash", "cash flow from operations", "cash from operations"),
    "capex": ("capex", "capital expenditure", "capital spending", "investment"),
    "fcf": ("free cash", "fcf"),
    "cash": ("cash",),
    "total_liabilities": ("liabilities",),
    "stockholders_equity": ("equity", "book value"),
    "revenue_growth_yoy": ("growth", "grew", "grow"),
    "gross_margin": ("gross margin",),
    "operating_margin": ("operating margin",),
    "net_margin": ("net margin", "profit margin"),
    "return_3m": ("return", "gain", "perform", "fell", "rose", "declin"),
    "return_ytd": ("return", "year to date", "year-to-date", "ytd", "gain", "perform"),
    "alpha_1w": ("alpha", "outperform", "underperform"),
    "beta": ("beta",),
    "beta_sector": ("beta",),
    "volatility_annualised": ("volatil",),
    "sma200_distance_pct": ("moving average", "sma", "200-day"),
}


@dataclass(frozen=True)
class Printed:
    """A fact a writer was given, as code compares a typed number with it."""

    fact_id: str
    value: Decimal
    unit: str  # the fact store's unit: USD, percent, pure, USD/shares, shares ...
    period: str  # "FY2024", "FY2025Q3", "as of 2026-01-30"
    metric: str  # "revenue", "gross_margin"

    @property
    def years(self) -> frozenset[str]:
        return frozenset(YEAR.findall(self.period))


@dataclass(frozen=True)
class Resolved:
    """The text with the typed numbers code could back replaced, and the ids it wrote in their place."""

    text: str
    replaced: tuple[str, ...] = ()


def reference(fact: Printed) -> str:
    return f"[[{fact.fact_id}]]"


def resolve_typed(
    text: str,
    facts: Sequence[Printed],
    *,
    keep: frozenset[str] = frozenset(),
    write: Callable[[Printed], str] = reference,
) -> Resolved:
    """``text`` with each typed number that exactly one of ``facts`` backs written as ``write(fact)``
    (a reference by default), sentence by sentence; numbers the brief contains (``keep``) are the analyst's
    and stay as they are."""
    if not facts or not any(char.isdigit() for char in text):
        return Resolved(text)
    out: list[str] = []
    replaced: list[str] = []
    for sentence in sentences(text):
        written, ids = _resolve_sentence(sentence, facts, keep, write)
        out.append(written)
        replaced.extend(ids)
    return Resolved("".join(out), tuple(replaced))


def _resolve_sentence(
    sentence: str, facts: Sequence[Printed], keep: frozenset[str], write: Callable[[Printed], str]
) -> tuple[str, list[str]]:
    if not any(part.kind == "removed" for part in segments(sentence, frozenset(), keep)):
        return sentence, []
    years = frozenset(YEAR.findall(BRACKETED.sub(" ", sentence)))
    lowered = sentence.lower()
    out: list[str] = []
    replaced: list[str] = []
    position = 0
    references = [match.span() for match in BRACKETED.finditer(sentence)]
    for match in TYPED.finditer(sentence):
        if any(start <= match.start() < end for start, end in references) or _not_typed(match, keep):
            continue
        backing = _backing(match, facts, years, lowered)
        if backing is None:
            continue
        out.append(sentence[position : match.start()])
        out.append(write(backing))
        replaced.append(backing.fact_id)
        position = match.end()
    out.append(sentence[position:])
    return "".join(out), replaced


def _not_typed(match: re.Match[str], keep: frozenset[str]) -> bool:
    """A year, a lone digit or the brief's own number, with no currency or unit: not a typed figure."""
    if match.group("currency") or match.group("scale"):
        return False
    digits = match.group("digits")
    return bool(NOT_A_FIGURE.match(digits)) or digits.replace(",", "") in keep or digits in keep


def _backing(
    match: re.Match[str], facts: Sequence[Printed], years: frozenset[str], sentence: str
) -> Printed | None:
    typed = _typed_value(match)
    if typed is None:
        return None
    kind = _kind(match)
    found = [
        fact
        for fact in facts
        if _same_value(typed, kind, match, fact)
        and (not years or fact.years & years)
        and _named(fact.metric, sentence)
    ]
    unique = {fact.fact_id: fact for fact in found}
    return next(iter(unique.values())) if len(unique) == 1 else None


def _typed_value(match: re.Match[str]) -> Decimal | None:
    try:
        value = Decimal(match.group("digits").replace(",", ""))
    except InvalidOperation:
        return None
    return -value if match.group("sign") == "-" else value


def _kind(match: re.Match[str]) -> str:
    scale = (match.group("scale") or "").lower().replace(" ", "")
    if scale in {"bps", "basispoints"}:
        return "bps"
    if scale in {"%", "percent"}:  # "per cent" with its blank removed
        return "percent"
    if scale == "x":
        return "multiple"
    if match.group("currency"):
        return "amount"
    if scale:
        return "scaled"
    return "bare"


def _decimals(digits: str) -> int:
    return len(digits.split(".")[1]) if "." in digits else 0


def _significant(digits: str) -> int:
    return len(digits.replace(",", "").replace(".", "").lstrip("0-+"))


def _same_value(typed: Decimal, kind: str, match: re.Match[str], fact: Printed) -> bool:  # noqa: PLR0911
    """Whether ``fact``, rounded as the typed number is, gives the typed number, in a unit both share."""
    digits = match.group("digits")
    places = _decimals(digits)
    significant = _significant(digits)
    scale_word = (match.group("scale") or "").lower()
    if kind == "percent":
        if fact.unit == "percent":
            return _agrees(fact.value, typed, places) and significant >= min(2, _sig(fact.value))
        if fact.unit == "pure":
            return _agrees(fact.value * 100, typed, places) and significant >= min(2, _sig(fact.value * 100))
        return False
    if kind == "multiple":
        return fact.unit == "pure" and _agrees(fact.value, typed, places) and significant >= 2
    if kind == "bps":
        return False  # a change in basis points is a difference no single fact states
    amounts = fact.unit in CURRENCY_UNITS or fact.unit.startswith(tuple(f"{u}/" for u in CURRENCY_UNITS))
    if kind in {"amount", "scaled"}:
        if not (amounts or (kind == "scaled" and fact.unit == "shares")):
            return False
        scale = SCALES.get(scale_word, Decimal(1))
        return _agrees(fact.value / scale, typed, places) and significant >= min(3, _sig(fact.value))
    # A bare number: the digits the fact is printed with (millions for amounts and share counts).
    scale = (
        Decimal(10) ** 6 if (amounts or fact.unit == "shares") and abs(fact.value) >= 10**6 else Decimal(1)
    )
    shown = fact.value / scale
    if fact.unit == "pure" and abs(fact.value) < 1:
        return False  # a ratio printed as 0.46 is not typed as "46" without a percent sign
    return _agrees(shown, typed, places) and significant >= min(3, _sig(shown))


def _agrees(value: Decimal, typed: Decimal, places: int) -> bool:
    return value.quantize(Decimal(1).scaleb(-places)) == typed


def _sig(value: Decimal) -> int:
    """Significant digits of the whole part (at least 1): how coarse a rounding may be."""
    return max(1, len(str(abs(int(value))).lstrip("0")))


def _named(metric: str, sentence: str) -> bool:
    names = SYNONYMS.get(metric) or tuple(w for w in metric.split("_") if len(w) >= 3 and w not in {"pct"})
    return any(name in sentence for name in names)


def printed_facts(items: Iterable[Printed]) -> tuple[Printed, ...]:
    """The facts in a stable order (by id), so the same facts give the same resolution."""
    return tuple(sorted(items, key=lambda fact: fact.fact_id))
