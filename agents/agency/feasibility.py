"""Moves checked by code before they are debated (seeds 003 and 004): a move whose target is the company
itself is generic, and an acquisition of a company larger than the acquirer can pay for is infeasible. Such
a move is not debated; the page shows it with the reason and the figures, each with its fact id.

Both checks are objective (seed 003 allows an objective feasibility gate before the jury; never a quality
judgment), and both err toward debating: a target the desk cannot name, or one it holds no figures for, is
not judged infeasible, and the page says so.

The rule for an acquisition, on the desk's own filed figures (the latest fiscal year of each company):
- what the target would cost at least (``price_floor``): its market value where the desk holds one;
  otherwise the larger of its stockholders' equity (book value) and ``EARNINGS_FLOOR_MULTIPLE`` times its
  net income. The desk holds no market value today (no share price for a target beside its share count), so
  the floor is the book and earnings one, which sits below what a listed company's control has sold for in
  practice: a takeover pays a premium over the market price, and the market prices a profitable large
  company above ten times its earnings nearly always.
- what the acquirer can pay (``capacity``): its cash plus its debt capacity, ``DEBT_TO_OPERATING_INCOME``
  times its operating income (operating income stands in for EBITDA, which the desk does not hold). Existing
  debt is not subtracted (the desk holds total liabilities, not debt): the capacity is generous.
- infeasible when the floor exceeds the capacity. Paying in shares is not counted: a purchase larger than
  the acquirer's cash and borrowing is a merger its owners vote on, another move than the one proposed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.agency.dedup import target_words
from agents.data.formatting import format_value

# Investment-grade issuers borrow up to about three times EBITDA; four times operating income (below EBITDA)
# is above what a rating agency accepts, so a move ruled out by it is ruled out generously.
DEBT_TO_OPERATING_INCOME = 4
# A profitable large company is rarely priced under ten times its earnings, and control costs a premium over
# the market price on top: ten times net income is a floor, not an estimate.
EARNINGS_FLOOR_MULTIPLE = 10
# A move is an acquisition when its declared action is, or when its title says so whatever action the model
# picked ("Acquisition of Google Inc." filed under "invest").
ACQUIRING_WORDS = frozenset({"acquire", "acquisition", "buy", "purchase", "takeover"})

CheckKind = Literal["generic", "infeasible"]


@dataclass(frozen=True)
class Figure:
    """One figure of the fact store, with its id."""

    fact_id: str
    metric: str
    value: Decimal
    unit: str
    period: str

    def shown(self) -> str:
        """The value as code prints it, then its fact id (code's words, not a model's reference)."""
        return f"{format_value(self.value, self.unit)} ({self.fact_id})"


@dataclass(frozen=True)
class Holdings:
    """What the desk holds of a company's size: the latest fiscal year's figures, None where not held."""

    ticker: str
    name: str
    cash: Figure | None = None
    operating_income: Figure | None = None
    net_income: Figure | None = None
    equity: Figure | None = None
    market_value: Figure | None = None

    def figures(self) -> list[Figure]:
        found = (self.market_value, self.equity, self.net_income, self.cash, self.operating_income)
        return [figure for figure in found if figure is not None]


class CheckFigure(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    value: str  # the value as code prints it
    fact_id: str


class MoveCheck(BaseModel):
    """Why code set a move aside before the debate, with the figures that show it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: CheckKind
    headline: str  # the reason in a line (a step's summary holds 200 characters)
    reason: str
    figures: list[CheckFigure] = Field(default_factory=list)


def names_of(names: Iterable[str], ticker: str) -> frozenset[str]:
    """The words that name a company: its names' target words ("Inc." dropped) and its ticker."""
    words = {ticker.casefold()}
    for name in names:
        words |= target_words(name)
    return frozenset(words)


def generic(target: str, own_names: frozenset[str], company: str) -> MoveCheck | None:
    """A move whose target is the company itself ("Divestment from Apple Inc." for Apple, or "the company")
    names nothing to act on: generic. A target with a word beyond the company's names ("Apple's services
    arm") is not."""
    if not target_words(target) <= own_names:
        return None
    return MoveCheck(
        kind="generic",
        headline="generic: its target is the company itself",
        reason=f"generic: its target ({target!r}) is {company} itself, so it names nothing to act on",
    )


def is_acquisition(action: str, title: str) -> bool:
    words = set(re.findall(r"[a-z]+", title.casefold()))
    return action == "acquire" or bool(words & ACQUIRING_WORDS)


def price_floor(target: Holdings) -> tuple[Decimal, list[CheckFigure], str] | None:
    """What the target would cost at least, the figures it rests on and how; None without figures."""
    if target.market_value is not None:
        figure = target.market_value
        return figure.value, [_figure("market value", figure)], f"its market value {figure.shown()}"
    options: list[tuple[Decimal, str]] = []
    figures = []
    if target.equity is not None and target.equity.value > 0:
        options.append((target.equity.value, f"its stockholders' equity {target.equity.shown()}"))
        figures.append(_figure(f"stockholders' equity {target.equity.period}", target.equity))
    if target.net_income is not None and target.net_income.value > 0:
        floor = target.net_income.value * EARNINGS_FLOOR_MULTIPLE
        options.append(
            (
                floor,
                f"{EARNINGS_FLOOR_MULTIPLE} x its net income {target.net_income.shown()} = "
                f"{format_value(floor, target.net_income.unit)}",
            )
        )
        figures.append(_figure(f"net income {target.net_income.period}", target.net_income))
    if not options:
        return None
    value, how = max(options, key=lambda option: option[0])
    return value, figures, how


def capacity(acquirer: Holdings) -> tuple[Decimal, list[CheckFigure], str] | None:
    """What the acquirer can pay at most: cash plus debt capacity; None unless both are held."""
    cash, income = acquirer.cash, acquirer.operating_income
    if cash is None or income is None:
        return None
    borrowing = max(income.value, Decimal(0)) * DEBT_TO_OPERATING_INCOME
    total = cash.value + borrowing
    how = (
        f"cash {cash.shown()} plus debt capacity {DEBT_TO_OPERATING_INCOME} x operating income "
        f"{income.shown()} = {format_value(total, cash.unit)}"
    )
    return (
        total,
        [_figure(f"cash {cash.period}", cash), _figure(f"operating income {income.period}", income)],
        how,
    )


def acquisition(acquirer: Holdings, target: Holdings) -> tuple[MoveCheck | None, str]:
    """(the check when the target is larger than the acquirer can pay for, or None; a note saying why it was
    not judged when it was not)."""
    floor = price_floor(target)
    if floor is None:
        return None, f"not judged: the desk holds no size figures for {target.name}"
    can = capacity(acquirer)
    if can is None:
        return None, f"not judged: the desk holds no cash and operating income for {acquirer.name}"
    units = {figure.unit for figure in (*acquirer.figures(), *target.figures())}
    if len(units) != 1:
        return None, f"not judged: the figures are in different currencies ({', '.join(sorted(units))})"
    cost, cost_figures, cost_how = floor
    most, most_figures, most_how = can
    if cost <= most:
        return None, (
            f"not shown infeasible: {target.name} would cost at least {format_value(cost, _unit(target))}, "
            f"within {acquirer.name}'s {format_value(most, _unit(acquirer))}"
        )
    check = MoveCheck(
        kind="infeasible",
        headline=f"infeasible: {target.name} would cost more than {acquirer.name} can pay"[:180],
        reason=(
            f"infeasible: {target.name} ({target.ticker}) would cost at least {cost_how}, more than "
            f"{acquirer.name} can pay: {most_how}"
        ),
        figures=[
            *(_named(f, target.ticker) for f in cost_figures),
            *(_named(f, acquirer.ticker) for f in most_figures),
        ],
    )
    return check, ""


def _unit(holdings: Holdings) -> str:
    return next(iter(f.unit for f in holdings.figures()), "")


def _figure(label: str, figure: Figure) -> CheckFigure:
    return CheckFigure(label=label, value=format_value(figure.value, figure.unit), fact_id=figure.fact_id)


def _named(figure: CheckFigure, ticker: str) -> CheckFigure:
    return figure.model_copy(update={"label": f"{ticker} {figure.label}"})


def resolve(target: str, index: Mapping[frozenset[str], str]) -> str | None:
    """The ticker a target names: its words equal a listed company's name words (or a ticker's); None
    otherwise (a description, "a smaller competitor", names no company)."""
    words = target_words(target)
    return index.get(words) if words else None
