"""Cross-run drift (seed 000's open item): where a memo now says something the same brief's previous memo
contradicts. Code compares the two frozen memos; each drift quotes both sides so a reader can judge it.

- The recommendation changed (after the firewall, as readers were shown it): "flipped" when it crossed
  from buying to selling or back, with both headline theses quoted.
- The sizing changed under the same recommendation.
- The evidence the recommendation rests on fell a tier: the weakest tier among its load-bearing ids, and
  any id both memos rest on whose tier fell (filed > guided > anecdotal).
- A figure moved: a load-bearing fact of this memo whose metric the previous memo also rested on, at
  another period or another value (a restatement keeps the id and changes the value). Both sides are quoted
  as they were frozen, with their periods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

DriftKind = Literal["flipped", "recommendation", "sizing", "tier", "figure"]

# Which way a recommendation leans: a move between the two ends is a flip, any other change is a change.
LEAN = {"BUY": 1, "HOLD": 0, "WATCH": 0, "SELL": -1}
TIER_RANK = {"HIGH": 3, "MEDIUM": 2, "LOW": 1}
SIZE_RANK = {"none": 0, "starter": 1, "half": 2, "full": 3}


@dataclass(frozen=True)
class Drift:
    kind: DriftKind
    what: str  # code's one line on what moved
    before: str  # the previous memo, quoted
    after: str  # this memo, quoted


@dataclass(frozen=True)
class MemoSide:
    """What drift compares of one frozen memo."""

    label: str  # "v2"
    recommendation: str  # as readers were shown it (the firewall's final)
    sizing: str
    thesis: str  # the headline thesis as readers were shown it
    tiers: Mapping[str, str]  # load-bearing evidence id -> tier
    load_bearing: Sequence[str]
    facts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # id -> frozen source row


def drift(before: MemoSide, after: MemoSide) -> list[Drift]:
    return [
        *_recommendation(before, after),
        *_tiers(before, after),
        *_figures(before, after),
    ]


def _recommendation(before: MemoSide, after: MemoSide) -> list[Drift]:
    if before.recommendation != after.recommendation:
        lean_before, lean_after = LEAN.get(before.recommendation, 0), LEAN.get(after.recommendation, 0)
        flipped = lean_before * lean_after < 0
        kind: DriftKind = "flipped" if flipped else "recommendation"
        verb = "flipped" if flipped else "changed"
        return [
            Drift(
                kind,
                f"The recommendation {verb} from {before.recommendation} ({before.label}) to "
                f"{after.recommendation} ({after.label}).",
                f"{before.recommendation}, sizing {before.sizing}: {before.thesis}",
                f"{after.recommendation}, sizing {after.sizing}: {after.thesis}",
            )
        ]
    if before.sizing != after.sizing:
        way = "up" if SIZE_RANK.get(after.sizing, 0) > SIZE_RANK.get(before.sizing, 0) else "down"
        return [
            Drift(
                "sizing",
                f"The same {after.recommendation} is sized {way}: {before.sizing} ({before.label}) to "
                f"{after.sizing} ({after.label}).",
                f"sizing {before.sizing}: {before.thesis}",
                f"sizing {after.sizing}: {after.thesis}",
            )
        ]
    return []


def _weakest(side: MemoSide) -> tuple[str, list[str]]:
    """The weakest tier among the side's load-bearing evidence, and the ids at it."""
    ranked = [(TIER_RANK.get(tier, 0), tier, key) for key, tier in side.tiers.items()]
    if not ranked:
        return "", []
    low = min(rank for rank, _, _ in ranked)
    tier = next(t for rank, t, _ in ranked if rank == low)
    return tier, [key for rank, _, key in ranked if rank == low]


def _tiers(before: MemoSide, after: MemoSide) -> list[Drift]:
    out = []
    weakest_before, ids_before = _weakest(before)
    weakest_after, ids_after = _weakest(after)
    fell = TIER_RANK.get(weakest_after, 0) < TIER_RANK.get(weakest_before, 0)
    if weakest_before and weakest_after and fell:
        out.append(
            Drift(
                "tier",
                f"The recommendation now rests on {weakest_after}-tier evidence at its weakest; "
                f"{before.label} rested on {weakest_before} at the weakest.",
                f"weakest {weakest_before}: {', '.join(ids_before)}",
                f"weakest {weakest_after}: {', '.join(ids_after)}",
            )
        )
    for key in before.tiers.keys() & after.tiers.keys():
        was, now = before.tiers[key], after.tiers[key]
        if TIER_RANK.get(now, 0) < TIER_RANK.get(was, 0):
            out.append(Drift("tier", f"{key} fell from {was} to {now}.", f"{key}: {was}", f"{key}: {now}"))
    return out


def _metric(row: Mapping[str, Any]) -> str:
    return str(row.get("label") or "")


def _quoted(key: str, row: Mapping[str, Any]) -> str:
    period = f" ({row['period']})" if row.get("period") else ""
    return f"{row.get('label', key)}{period}: {row.get('value', 'n/a')} [{key}]"


def _figures(before: MemoSide, after: MemoSide) -> list[Drift]:
    previous = {key: before.facts[key] for key in before.load_bearing if key in before.facts}
    by_metric = {_metric(row): (key, row) for key, row in previous.items() if _metric(row)}
    out = []
    for key in after.load_bearing:
        row = after.facts.get(key)
        if row is None:
            continue
        if key in previous:
            old = previous[key]
            if old.get("value") != row.get("value"):
                out.append(
                    Drift(
                        "figure",
                        f"{row.get('label', key)} was restated: the same period's figure, another value.",
                        _quoted(key, old),
                        _quoted(key, row),
                    )
                )
            continue
        match = by_metric.get(_metric(row))
        if match is None:
            continue
        old_key, old = match
        if old.get("value") == row.get("value") and old.get("period") == row.get("period"):
            continue
        out.append(
            Drift(
                "figure",
                f"{row.get('label', key)} moved: {before.label} rested on {old.get('period') or old_key}, "
                f"{after.label} on {row.get('period') or key}.",
                _quoted(old_key, old),
                _quoted(key, row),
            )
        )
    return out
