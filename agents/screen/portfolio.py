"""Seed 002's portfolio view, computed (issue 32, 4): the managing director was asked "are we overweight in
one sector?" and answered with a sentence. Code counts instead, and each count is a figure with an id the
managing director may cite and the dashboard prints:

- candidates: the watchlist's symbols the screen assessed (those with prices at the as-of session), in all
  (``watchlist:candidates:<day>``) and per sector (``basic-materials:candidates:<day>``, the sector's slug);
- the share of the candidates under each flag (``watchlist:share_red:<day>``); before the managing
  director's changes the same shares are ``watchlist:review_share_red:<day>`` (what it reviewed);
- concentration by sector: the largest sector's share of the candidates
  (``watchlist:largest_sector_share:<day>``) and the Herfindahl-Hirschman index of the sectors' shares
  (``watchlist:hhi:<day>``, the sum of each sector's share squared: 1 when every candidate is in one
  sector, 1/n when n sectors hold as many each);
- the candidates' mean week and mean alpha residual (``watchlist:avg_alpha_1w:<day>``).

Each id has the three parts a model's ``[[reference]]`` may take (agents.text.figures.REF), so the managing
director can cite them. Like a sector's averages, these are derivations kept with the run's output, each
naming its inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from decimal import Decimal
from statistics import mean
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.screen.flags import FLAGS, Flag
from agents.screen.quant import Figure, QuantOutput, SectorGroup

Stage = Literal["review", "watchlist"]
HHI = (
    "Herfindahl-Hirschman index of the sectors' shares of the candidates: the sum of each share squared (1 "
    "when one sector holds every candidate, 1/n when n sectors hold as many each)"
)


class SectorCount(BaseModel):
    model_config = ConfigDict(frozen=True)

    sector: str
    candidates: int
    fact_id: str
    flags: dict[str, int]


class Portfolio(BaseModel):
    """The watchlist as a portfolio, by code; ``stage`` "review" before the managing director's changes,
    "watchlist" once the flags are final."""

    model_config = ConfigDict(frozen=True)

    stage: Stage
    as_of: date
    candidates: int
    sectors: list[SectorCount]  # largest first, then by name
    flag_counts: dict[str, int]
    largest_sector: str
    figures: list[Figure]
    facts: dict[str, str]  # figure name -> fact id

    def fact(self, name: str) -> str:
        return self.facts.get(name, "")

    def figure(self, name: str) -> Figure | None:
        ref = self.facts.get(name)
        return next((f for f in self.figures if f.fact_id == ref), None)


def _value(value: float) -> float:
    return float(Decimal(f"{value:.10g}"))


def portfolio(quant: QuantOutput, flags: Mapping[str, Flag], *, stage: Stage) -> Portfolio:
    """The portfolio of ``quant``'s symbols under ``flags`` (symbol -> flag); a symbol without a flag is
    not a candidate (it was not assessed)."""
    day = quant.market.as_of.isoformat()
    held = [p for p in quant.symbols if p.symbol in flags]
    total = len(held)
    figures: list[Figure] = []
    facts: dict[str, str] = {}

    def add(  # noqa: PLR0917  # one figure's fields, in the order a Figure names them
        name: str, fact_id: str, value: float, unit: str, derivation: str, inputs: Sequence[str]
    ) -> None:
        facts[name] = fact_id
        figures.append(
            Figure(
                fact_id=fact_id,
                value=_value(value),
                unit=unit,
                derivation=derivation,
                source="the screen's figures and flags it names",
                inputs=tuple(inputs),
            )
        )

    counts = _sector_counts(quant.sectors, flags, day)
    # The counts and the concentration do not depend on the flags: the same ids and values at the review
    # and once the flags are final. Only the shares under each flag carry the stage in their ids.
    for count in counts:
        figures.append(
            Figure(
                fact_id=count.fact_id,
                value=float(count.candidates),
                unit="symbols",
                derivation=f"count of the candidates in {count.sector}",
                source="the screen's sector assignment",
            )
        )
    shares = [c.candidates / total for c in counts] if total else []
    add(
        "candidates",
        f"watchlist:candidates:{day}",
        float(total),
        "symbols",
        "count of the watchlist's symbols the screen assessed (prices at the as-of session)",
        [c.fact_id for c in counts],
    )
    add(
        "sectors",
        f"watchlist:sectors:{day}",
        float(len(counts)),
        "sectors",
        "count of the sectors holding a candidate",
        [c.fact_id for c in counts],
    )
    if counts and total:
        add(
            "largest_sector_share",
            f"watchlist:largest_sector_share:{day}",
            shares[0],
            "ratio",
            f"candidates in the largest sector ({counts[0].sector}) over all candidates",
            [counts[0].fact_id, f"watchlist:candidates:{day}"],
        )
        add(
            "hhi",
            f"watchlist:hhi:{day}",
            sum(share * share for share in shares),
            "index",
            HHI,
            [c.fact_id for c in counts],
        )
    for metric in ("return_1w", "alpha_1w"):
        values = [(v, p.facts[metric]) for p in held if (v := p.figures.get(metric)) is not None]
        if values:
            add(
                f"avg_{metric}",
                f"watchlist:avg_{metric}:{day}",
                mean(v for v, _ in values),
                "ratio",
                f"mean of {len(values)} candidates' {metric}",
                [ref for _, ref in values],
            )
    flag_counts = {flag: sum(1 for p in held if flags[p.symbol] == flag) for flag in FLAGS}
    if total:
        for flag in FLAGS:
            add(
                f"share_{flag.lower()}",
                f"watchlist:{'review_' if stage == 'review' else ''}share_{flag.lower()}:{day}",
                flag_counts[flag] / total,
                "ratio",
                f"candidates flagged {flag}"
                + (" by code before the managing director's changes" if stage == "review" else "")
                + " over all candidates",
                (),
            )
    return Portfolio(
        stage=stage,
        as_of=quant.market.as_of,
        candidates=total,
        sectors=counts,
        flag_counts=flag_counts,
        largest_sector=counts[0].sector if counts else "",
        figures=figures,
        facts=facts,
    )


def _sector_counts(sectors: Sequence[SectorGroup], flags: Mapping[str, Flag], day: str) -> list[SectorCount]:
    counts = [
        SectorCount(
            sector=group.sector,
            candidates=sum(1 for s in group.symbols if s in flags),
            fact_id=f"{group.slug}:candidates:{day}",
            flags={flag: sum(1 for s in group.symbols if flags.get(s) == flag) for flag in FLAGS},
        )
        for group in sectors
    ]
    return sorted((c for c in counts if c.candidates), key=lambda c: (-c.candidates, c.sector))
