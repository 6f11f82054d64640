"""Merging duplicate moves before the debate, by a declared key and a declared measure (seed 003's dedup
discipline: mechanical, judgment-free, on the merged union, before any verdict).

A move's key is its action and the content words of its target, normalised by rule (``target_words``):
folded to lower case, stop words, corporate suffixes ("Inc.", "Ltd") and words that only name an action
("acquisition of", "buy") dropped, synonyms folded to one word ("rivals" -> "competitor"), a plural's
trailing "s" dropped, the words sorted. So "Acquire Shazam", "Acquisition of Shazam Ltd" and "Buy Shazam"
(each with the action ``acquire``) share the key ``acquire:shazam``.

Two moves are one move when they have the same action and their target words are near (``near``): their
Jaccard similarity (shared words over all words) is at least ``MIN_JACCARD``, or one's words all occur in
the other's (the same target named more or less fully: "Shazam" and "Shazam music app"). ``MIN_JACCARD`` is
0.6, not 0.5, because two targets of three words that share two ("home health devices" and "home security
devices") score exactly 0.5 and are different moves, while four words of which three are shared
("channel partners in emerging markets" and "emerging market distribution partners": 3 of 5) are the
same move. The first proposed is debated, every persona that proposed a member is credited, and the count
kept. Nothing here judges whether a move is good; no move is dropped for any other reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

MIN_JACCARD = 0.6
_WORD = re.compile(r"[a-z0-9]+")
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
        "s",  # a possessive's "s" once the apostrophe splits it off ("Apple's")
        "company",
        "firm",
        "business",
    )
)
# Words of a legal name that say what kind of company it is, not which: "Shazam Ltd" is Shazam.
CORPORATE = frozenset(
    (
        "inc",
        "incorporated",
        "corp",
        "corporation",
        "co",
        "ltd",
        "limited",
        "plc",
        "llc",
        "lp",
        "ag",
        "sa",
        "nv",
        "se",
        "gmbh",
        "holding",
        "holdings",
        "group",
    )
)
# Words that name an action, not a target: a model often repeats its action in the target ("acquisition
# of Shazam"); the action itself is compared as the move's declared field.
_ACTION_WORDS = frozenset(
    (
        "acquire",
        "acquiring",
        "acquisition",
        "buy",
        "buying",
        "purchase",
        "purchasing",
        "takeover",
        "take",
        "over",
        "divest",
        "divesting",
        "divestment",
        "divestiture",
        "sell",
        "selling",
        "sale",
        "spin",
        "off",
        "exit",
        "invest",
        "investing",
        "investment",
        "launch",
        "launching",
        "enter",
        "entering",
        "entry",
        "partnering",
        "partnership",
    )
)
# One word for each set of synonyms a target is named by (after the plural rule).
_SYNONYMS = {
    "rival": "competitor",
    "competing": "competitor",
    "repurchase": "buyback",
    "borrowing": "debt",
    "loan": "debt",
    "cheaper": "low",
    "lower": "low",
    "smaller": "small",
    "larger": "large",
    "bigger": "large",
    "abroad": "international",
    "overseas": "international",
    "foreign": "international",
}


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")) else word


def target_words(target: str) -> frozenset[str]:
    """The content words of a move's target, normalised by the module's rule."""
    found = set()
    for word in _WORD.findall(target.casefold().replace("'", " ").replace("’", " ")):
        if word in _STOP or word in CORPORATE or word in _ACTION_WORDS:
            continue
        stemmed = _stem(word)
        found.add(_SYNONYMS.get(stemmed, stemmed))
    return frozenset(found)


def dedup_key(action: str, target: str) -> str:
    return f"{action}:{' '.join(sorted(target_words(target)))}"


def _parts(key: str) -> tuple[str, frozenset[str]]:
    action, _, words = key.partition(":")
    return action, frozenset(words.split())


def similarity(first: frozenset[str], second: frozenset[str]) -> float:
    """Jaccard similarity of two targets' words: 1.0 for the same words, 0.0 for none shared."""
    if not first and not second:
        return 1.0
    return len(first & second) / len(first | second)


def near(first: str, second: str) -> bool:
    """Whether two keys name the same move: the same action, and targets whose words are near (the module's
    declared measure)."""
    action, words = _parts(first)
    other_action, other_words = _parts(second)
    if action != other_action:
        return False
    if not words or not other_words:
        return words == other_words
    contained = words <= other_words or other_words <= words
    return contained or similarity(words, other_words) >= MIN_JACCARD


@dataclass
class Cluster:
    """One debated move and every generated move merged into it."""

    key: str
    first: str  # the move debated: the first proposed
    members: list[str] = field(default_factory=list)  # every move merged, in the order proposed


def clusters(moves: Sequence[tuple[str, str]]) -> list[Cluster]:
    """``moves``: (move id, dedup key) in the order proposed; the clusters, in the order of their first
    move. A move joins the first cluster whose first move is near it (compared with the first only, so a
    chain of small steps never merges two moves that are not near each other)."""
    found: list[Cluster] = []
    for move_id, key in moves:
        cluster = next((c for c in found if near(c.key, key)), None)
        if cluster is None:
            cluster = Cluster(key=key, first=move_id)
            found.append(cluster)
        cluster.members.append(move_id)
    return found
