"""Merging duplicate moves before the debate, by a declared key (seed 003's dedup discipline).

A move's key is its action and the content words of its target, normalised by rule: folded to lower case,
stop words and punctuation dropped, a plural's trailing "s" dropped, the words sorted. Two moves with the same
key are one move: the first proposed is debated, every persona that proposed it is credited. Nothing here
judges whether a move is good; no move is dropped for any other reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

_WORD = re.compile(r"[a-z]+")
_STOP = frozenset(
    (
        "a",
        "an",
        "the",
        "of",
        "in",
        "into",
        "on",
        "for",
        "to",
        "and",
        "or",
        "its",
        "their",
        "our",
        "with",
        "by",
        "from",
        "at",
        "as",
        "new",
        "more",
        "less",
        "own",
        "this",
        "that",
        "company",
        "company's",
        "firm",
        "business",
    )
)


def dedup_key(action: str, target: str) -> str:
    words = sorted({_stem(word) for word in _WORD.findall(target.casefold()) if word not in _STOP})
    return f"{action}:{' '.join(words)}"


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@dataclass
class Cluster:
    """One debated move and every generated move its key merged into it."""

    key: str
    first: str  # the move debated: the first proposed
    members: list[str] = field(default_factory=list)  # every move with the key, in the order proposed


def clusters(moves: Sequence[tuple[str, str]]) -> list[Cluster]:
    """``moves``: (move id, dedup key) in the order proposed; the clusters, in the order of their first
    move."""
    found: dict[str, Cluster] = {}
    for move_id, key in moves:
        cluster = found.setdefault(key, Cluster(key=key, first=move_id))
        cluster.members.append(move_id)
    return list(found.values())
