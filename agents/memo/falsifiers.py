"""The rules of a bound falsifier (seed 000's positions register), in code: which bindings are kept, which
figure is the reference, which later figure is compared with it, and whether the condition is met.

A binding names a metric and a condition from closed lists (``agents.memo.schemas``); it never carries a
number. The reference is the metric's latest fact when the memo is frozen, read by code from the fact store
(its id, value and period). A later fact is compared with it only like for like: an annual figure with a
later annual figure, a quarter with a later quarter (with the same fiscal quarter, a year on, when the
condition compares levels: quarters are seasonal), a market figure with a later session's. Market figures
move every session, so only a change of their sign is watched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import get_args

from pydantic import BaseModel, ConfigDict

from agents.memo.schemas import Condition, FalsifierBinding, MemoDraft, WatchedMetric
from agents.text.figure_claims import metrics_named

WATCHED_METRICS: tuple[str, ...] = get_args(WatchedMetric)
CONDITIONS: tuple[str, ...] = get_args(Condition)
MARKET_METRICS = frozenset({"return_3m", "return_ytd", "alpha_1w", "sma200_distance_pct"})
SIGN_CONDITIONS = frozenset({"turns_negative", "turns_positive"})

# How a condition reads on a page, after the metric's name.
CONDITION_WORDS: dict[str, str] = {
    "falls_below_current": "falls below its value when the memo was frozen",
    "rises_above_current": "rises above its value when the memo was frozen",
    "turns_negative": "turns negative",
    "turns_positive": "turns positive",
}

# A metric as a falsifier code writes names it (no digits: the sentence is code's, and holds no figure).
METRIC_WORDS: dict[str, str] = {
    "revenue_growth_yoy": "revenue growth over the year",
    "eps_diluted": "diluted earnings per share",
    "rnd_expense": "research and development spending",
    "fcf": "free cash flow",
    "capex": "capital expenditure",
    "stockholders_equity": "stockholders' equity",
    "return_3m": "the three-month return",
    "return_ytd": "the year-to-date return",
    "alpha_1w": "the one-week alpha against the market",
    "sma200_distance_pct": "the distance to the long-term moving average",
}


def sentence(binding: FalsifierBinding) -> str:
    """The falsifier as code writes it from its binding, when the model's words could not be shown."""
    metric = METRIC_WORDS.get(binding.metric, binding.metric.replace("_", " "))
    return f"If {metric} {CONDITION_WORDS[binding.condition]}, the thesis is wrong."


@dataclass(frozen=True)
class Reading:
    """One fact of the watched metric, as code read it from the fact store."""

    fact_id: str
    value: Decimal
    period_end: date
    fiscal_period: str  # FY, Q1..Q4, DAY
    unit: str = ""


class DroppedBinding(BaseModel):
    """A binding code did not keep, and why (shown with the memo)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    binding: FalsifierBinding
    reason: str


def cadence(fiscal_period: str) -> str:
    """annual, quarter or session: figures of one cadence are compared with each other only."""
    if fiscal_period == "FY":
        return "annual"
    if fiscal_period.startswith("Q"):
        return "quarter"
    return "session" if fiscal_period == "DAY" else fiscal_period


def comparable(condition: str, baseline: Reading, later: Reading) -> bool:
    """Whether ``later`` may be compared with ``baseline`` under ``condition``: a later period of the same
    cadence; for a level comparison of quarters, the same fiscal quarter (a year on)."""
    if later.period_end <= baseline.period_end or cadence(later.fiscal_period) != cadence(
        baseline.fiscal_period
    ):
        return False
    if condition not in SIGN_CONDITIONS and cadence(baseline.fiscal_period) == "quarter":
        return later.fiscal_period == baseline.fiscal_period
    return True


def met(condition: str, baseline: Decimal, value: Decimal) -> bool:
    """Whether ``value`` meets ``condition`` against the frozen reference ``baseline`` (exact decimals)."""
    if condition == "falls_below_current":
        return value < baseline
    if condition == "rises_above_current":
        return value > baseline
    if condition == "turns_negative":
        return value < 0
    if condition == "turns_positive":
        return value > 0
    raise ValueError(f"unknown condition {condition!r}")


def problem(binding: FalsifierBinding, falsifiers: int, baseline: Reading | None) -> str:
    """Why code does not keep ``binding`` for a memo with ``falsifiers`` falsifiers whose metric's latest
    fact is ``baseline`` ("" when it keeps it)."""
    if binding.falsifier > falsifiers:
        return f"the memo has {falsifiers} falsifiers; there is no falsifier {binding.falsifier}"
    if baseline is None:
        return f"the fact store holds no {binding.metric} for this company"
    if binding.metric in MARKET_METRICS and binding.condition not in SIGN_CONDITIONS:
        return f"{binding.metric} moves every session: only a change of its sign is watched"
    if binding.condition == "turns_negative" and baseline.value < 0:
        return f"{binding.metric} is already negative ({baseline.fact_id})"
    if binding.condition == "turns_positive" and baseline.value > 0:
        return f"{binding.metric} is already positive ({baseline.fact_id})"
    return ""


def off_topic(binding: FalsifierBinding, falsifier: str) -> str:
    """Why ``binding`` does not watch what ``falsifier`` says ("" when it does, or when the words name no
    metric). A fresh desk's 1.5B bound "AAPL's beta is lower than the market ..." to capex falling: the
    register would have re-opened the position on capex, a figure the falsifier never spoke of. The words
    are read with the map every claim check reads (agents.text.metric_words); a figure cited inline names
    its metric."""
    named = metrics_named(falsifier, lambda ref: ref.rsplit(":", 2)[-2] if ref.count(":") >= 2 else "")
    if not named or any(words.backs(binding.metric) for words in named):
        return ""
    about = ", ".join(words.name for words in named)
    return (
        f"falsifier {binding.falsifier} is about {about}, not {binding.metric}: a binding watches what its "
        "falsifier says"
    )


def one_per_falsifier(memo: MemoDraft) -> tuple[list[FalsifierBinding], list[FalsifierBinding]]:
    """The memo's bindings, one per falsifier in falsifier order (the first written counts), and the
    extra ones code drops: a falsifier is watched on one condition."""
    first: dict[int, FalsifierBinding] = {}
    extra: list[FalsifierBinding] = []
    for binding in memo.falsifier_bindings:
        if binding.falsifier in first:
            extra.append(binding)
        else:
            first[binding.falsifier] = binding
    return [first[number] for number in sorted(first)], extra


def check(
    memo: MemoDraft, baselines: Mapping[str, Reading | None]
) -> tuple[list[FalsifierBinding], list[DroppedBinding]]:
    """The bindings code keeps for ``memo`` given each bound metric's latest fact, and those it drops with
    why: a second binding of one falsifier, an index past the memo's falsifiers, a metric with no fact, a
    condition that cannot apply, a metric its falsifier's words are not about."""
    candidates, extra = one_per_falsifier(memo)
    dropped = [
        DroppedBinding(
            binding=binding, reason=f"falsifier {binding.falsifier} is already bound: one condition each"
        )
        for binding in extra
    ]
    kept: list[FalsifierBinding] = []
    for binding in candidates:
        why = problem(binding, len(memo.falsifiers), baselines.get(binding.metric)) or off_topic(
            binding, memo.falsifiers[binding.falsifier - 1]
        )
        if why:
            dropped.append(DroppedBinding(binding=binding, reason=why))
        else:
            kept.append(binding)
    return kept, dropped
