"""Scores to totals, totals to a ranking: code's arithmetic, never a model's (seed 004's scoring system).

Each board member scores four metrics 0-10: a member's total is out of 40, a move's out of 120. Ties are
broken by rule, in order: the higher lowest member total (the board agrees more), the higher feasibility
summed over the board, then the move's number (the earlier proposed). The top three are recommended.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agents.agency.schemas import METRICS, ScoreCard

RECOMMENDED = 3
MEMBER_MAX = 10 * len(METRICS)


def member_total(card: ScoreCard) -> int:
    return sum(card.metric(name).score for name in METRICS)


def move_total(cards: Mapping[str, ScoreCard]) -> int:
    return sum(member_total(card) for card in cards.values())


@dataclass(frozen=True)
class Ranked:
    move: str
    number: int
    total: int
    lowest_member: int
    feasibility: int
    rank: int = 0


def move_number(move: str) -> int:
    return int(move.lstrip("m"))


def rank(scored: Mapping[str, Mapping[str, ScoreCard]]) -> list[Ranked]:
    """Every move with its final scores, best first, each with its rank (1 for the best)."""
    rows = [
        Ranked(
            move=move,
            number=move_number(move),
            total=move_total(cards),
            lowest_member=min((member_total(card) for card in cards.values()), default=0),
            feasibility=sum(card.feasibility.score for card in cards.values()),
        )
        for move, cards in scored.items()
    ]
    rows.sort(key=lambda row: (-row.total, -row.lowest_member, -row.feasibility, row.number))
    return [
        Ranked(r.move, r.number, r.total, r.lowest_member, r.feasibility, rank)
        for rank, r in enumerate(rows, 1)
    ]


def top_overlap(first: Sequence[str], second: Sequence[str], size: int = RECOMMENDED) -> int:
    """How many moves two rankings share in their top ``size``: rank stability across reruns."""
    return len(set(first[:size]) & set(second[:size]))
