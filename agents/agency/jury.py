"""Seed 003's kill-argument on the agency's recommended moves, and its verdict by code.

Two threads per move, on the jury's role: the first writes the strongest rejection of the move in one call;
the second, a fresh conversation that sees only the move and that rejection, splits the rejection into three
to seven atomic objections and rules on each with a quote. The adjudicator never gives a verdict: code
computes it from the rulings, by this rule:

- An "answered" ruling counts only when its quote is a passage of the move (an answer must be the move's own
  words); an "unsupported" ruling only when its quote is a passage of the move or of the rejection. A ruling
  whose quote code cannot find is not taken: the objection stands, unchecked.
- An objection ruled "stands" whose quote is a passage of the move or of the rejection stands, checked.
- The move does not survive the jury when more than ``MOST_STANDING`` (zero) objections stand checked: one
  objection the adjudicator grounds in the text and the move does not answer is enough, as in the seed.
  Objections standing unchecked are shown, and do not decide the verdict: code decides only on what it
  could check.

A verdict on which code could check nothing (not one ruling's quote is in the move or the rejection: seen on
the embedded 1.5B, whose rulings quote the instructions) is neither "survives" nor "does not survive": it
says nothing either way, and every page says so in those words (``Verdict.outcome``).

Repeated objections are merged before anything is counted (``merge_repeats``): a splitting thread that returns
one objection twice (the 1.5B wrote the same sentence six times for one move) must not count it twice. Two
objections are one when their words are the same after folding case and punctuation, dropping the small
words that carry no claim ("the", "it", "is") and a plural's "s": "The rejection asserts it with nothing in
the move behind it." and "The rejection asserts this, with nothing in the move behind it" are one; "The
move does not say how it is financed" and "... how it is integrated" are two. Only exact sameness of the
claim's words merges, never a likeness score: two objections one content word apart are different claims.
Of a merged group the copy code could check decides (a checked "stands" first, then a checked answer or
"unsupported", then the first copy), and the count of copies is kept and shown.

A recommended move that does not survive is a disagreement with the board's ranking, shown as such: the
ranking itself stays the board's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.agency.schemas import JuryAudit, Rejection, Ruling
from agents.llm.roles import Role
from agents.text.patterns import Prose, patterned
from agents.text.quotes import quote_problem

MOST_STANDING = 0
# Words that carry no claim of an objection: folding them away merges "asserts it" and "asserts this". Never a
# negation, a quantity or a comparison ("not", "no", "more", "less"): those change what is objected.
FILLER = frozenset(
    (
        *("a", "an", "the", "it", "its", "this", "that", "these", "those", "there", "here", "which", "who"),
        *("is", "are", "was", "were", "be", "been", "being"),
        *("of", "to", "in", "on", "at", "by", "for", "with", "as", "and", "so"),
    )
)
_WORD = re.compile(r"[a-z0-9]+")
Outcome = Literal["survives", "does not survive", "unchecked"]
UNCHECKED = (
    "the jury could not check any of its objections (no ruling quoted words code found in the move or the "
    "rejection), so its verdict says nothing either way"
)
JURY_ROLE = Role.JURY  # the verdict's role: on its own model family where one is configured (seed 003)


class RuledObjection(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    objection: str
    ruling: Ruling  # as code takes it: an unchecked "answered" or "unsupported" stands
    quote: str
    quote_found: bool
    asked: Ruling | None = None  # the adjudicator's ruling, where code did not take it
    repeats: int = 1  # how many times the splitting thread wrote this objection (merged into one)

    @property
    def checked_standing(self) -> bool:
        return self.ruling == "stands" and self.quote_found

    @property
    def said(self) -> str:
        """The objection as the pages quote it, with its repeats."""
        repeated = f" (written {self.repeats} times)" if self.repeats > 1 else ""
        return f"\u201c{self.objection}\u201d{repeated}"


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    move_id: str
    rank: int
    rejection: str = ""  # the first thread's memo
    objections: list[RuledObjection]
    standing: int  # every objection that stands, checked or not
    answered: int
    unsupported: int
    checked: int = 0  # objections standing on a quote code found: the ones that decide
    survives: bool

    @property
    def left_standing(self) -> list[RuledObjection]:
        """The objections that stand on a quote code found: the ones that decide."""
        return [item for item in self.objections if item.checked_standing]

    @property
    def ruled_out(self) -> list[RuledObjection]:
        """The rulings code did not take: their quote is not in the move or the rejection (an "answered"
        quoting the rejection among them), so they cannot decide the verdict either way."""
        return [item for item in self.objections if not item.quote_found]

    @property
    def met(self) -> list[RuledObjection]:
        """The objections answered by the move's words, or unsupported, on a quote code found."""
        return [item for item in self.objections if item.quote_found and item.ruling != "stands"]

    @property
    def checked_nothing(self) -> bool:
        return bool(self.objections) and not any(item.quote_found for item in self.objections)

    @property
    def outcome(self) -> Outcome:
        """What the pages say: never "survives" for a verdict on which code could check nothing."""
        if self.checked_nothing:
            return "unchecked"
        return "survives" if self.survives else "does not survive"

    @property
    def line(self) -> str:
        n = len(self.objections)
        if self.outcome == "unchecked":
            head = f"{self.move_id} (rank {self.rank}): {UNCHECKED} ({n} objection{'' if n == 1 else 's'})"
        else:
            standing = len(self.left_standing)
            head = (
                f"{self.move_id} (rank {self.rank}) {self.outcome} the jury: {standing} of {n} "
                f"objections stand on a quote code found, {len(self.met)} answered or unsupported, "
                f"{len(self.ruled_out)} ruled out by code"
            )
        parts = [head]
        if self.left_standing:
            parts.append("standing: " + "; ".join(item.said for item in self.left_standing))
        if self.ruled_out:
            parts.append(
                "ruled out by code (quote not found): "
                + "; ".join(f"{item.said}, quoting \u201c{item.quote}\u201d" for item in self.ruled_out)
            )
        return "; ".join(parts)


def objection_key(text: str) -> tuple[str, ...]:
    """An objection's claim words: case and punctuation folded, filler words dropped, a plural's "s" too."""
    words = _WORD.findall(text.casefold())
    return tuple(word.removesuffix("s") if len(word) > 3 else word for word in words if word not in FILLER)


def _precedence(item: RuledObjection) -> int:
    # A checked "stands" decides over a checked answer, which decides over a copy code could not check.
    return 0 if item.checked_standing else 1 if item.quote_found else 2


def merge_repeats(ruled: Sequence[RuledObjection]) -> list[RuledObjection]:
    """``ruled`` with each repeated objection once (the module's rule), in the order first written."""
    groups: dict[tuple[str, ...], list[RuledObjection]] = {}
    for item in ruled:
        groups.setdefault(objection_key(item.objection) or (item.objection,), []).append(item)
    return [
        min(copies, key=_precedence).model_copy(update={"repeats": sum(c.repeats for c in copies)})
        for copies in groups.values()
    ]


def verdict(move_id: str, rank: int, audit: JuryAudit, move: str, rejection: str) -> Verdict:
    """The verdict on a move from the second thread's rulings, ``move`` the move as the jury read it and
    ``rejection`` the first thread's memo (the only texts a quote may come from)."""
    ruled = []
    for item in audit.objections:
        where = [move] if item.ruling == "answered" else [move, rejection]
        found = not quote_problem(item.quote, where, where="the move or the rejection")
        ruling: Ruling = item.ruling if found or item.ruling == "stands" else "stands"
        ruled.append(
            RuledObjection(
                objection=item.objection,
                ruling=ruling,
                quote=item.quote,
                quote_found=found,
                asked=item.ruling if ruling != item.ruling else None,
            )
        )
    # One objection written twice is counted once (the module's rule), before anything is counted.
    ruled = merge_repeats(ruled)
    checked = sum(1 for item in ruled if item.checked_standing)
    return Verdict(
        move_id=move_id,
        rank=rank,
        rejection=rejection,
        objections=ruled,
        standing=sum(1 for item in ruled if item.ruling == "stands"),
        answered=sum(1 for item in ruled if item.ruling == "answered"),
        unsupported=sum(1 for item in ruled if item.ruling == "unsupported"),
        checked=checked,
        survives=checked <= MOST_STANDING,
    )


@lru_cache(maxsize=64)
def rejection_schema(ids: tuple[str, ...]) -> type[Rejection]:
    """The memo may reference ``ids`` (the claims and the figures), never type a figure."""
    return patterned(Rejection, Prose(ids), ["rejection"])
