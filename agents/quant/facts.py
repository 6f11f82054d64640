"""A quant profile as cited facts: ``AAPL:rsi14:2017-09-01``, value, unit, derivation, the price file."""

from __future__ import annotations

from decimal import Decimal

from agents.data.types import Citation, Fact
from agents.quant.profile import DERIVATIONS, UNITS, QuantProfile

SIGNIFICANT_DIGITS = 10


def quant_facts(profile: QuantProfile, *, ticker: str, citation: Citation) -> list[Fact]:
    """One fact per computed figure (figures the data could not support are left out, not zeroed)."""
    symbol = ticker.strip().upper()
    day = profile.as_of.isoformat()
    return [
        Fact(
            fact_id=f"{symbol}:{metric}:{day}",
            ticker=symbol,
            metric=metric,
            value=_decimal(value),
            unit=UNITS[metric],
            period_end=profile.as_of,
            fiscal_period="DAY",
            citation=citation,
            derivation=_derivation(profile, metric),
        )
        for metric, value in profile.metrics().items()
        if value is not None
    ]


def _decimal(value: float) -> Decimal:
    # Ten significant digits: more than any input file carries, and stable across platforms.
    return Decimal(f"{value:.{SIGNIFICANT_DIGITS}g}")


def _derivation(profile: QuantProfile, metric: str) -> str:
    against = profile.sector if metric.endswith("_sector") else profile.benchmark
    text = DERIVATIONS[metric]
    return f"{text} (against {against})" if metric.startswith(("beta", "alpha")) else text
