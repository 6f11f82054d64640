"""Claims that read the same figure in opposite ways, found by code before synthesis (seed 000's
fact-stability audit: "claims that contradict across upstream specialists are flagged"), and claims that
contradict the latest memo of another brief on the same company (its "cross-run contradictions").

What a claim is about is decided from the figures it cites, never from its words:

- its direction is what its words say (``agents.text.directions.said``): exactly one way, up or down; a
  statement with words both ways, or none, claims no direction and is left out;
- its metric is the fact-store metric of the facts it cites (a fact id is ``TICKER:metric:period``; the
  catalog holds each one's metric and period). A claim citing facts of more than one metric, or of more
  than one company, is left out: code cannot tell which figure its direction word is about ("revenue rose
  while margins fell"), the rule the deck and the agency already judge by;
- its period is the latest period it cites of that metric: "revenue rose" over FY2023 and FY2024 speaks of
  the move into FY2024, so it meets "revenue fell" citing FY2024 alone, and not "revenue fell" over FY2024
  and FY2025 (another period, no contradiction). Documents cited beside the facts do not change either.

Two claims contradict when their ticker, metric and period are the same and their directions opposite. Code
quotes both as their specialists wrote them and names each specialist; the synthesizer is told to address
each flag (by the figure's id, never its value), and the flags are frozen with the memo.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.evidence import EvidenceCatalog
from agents.memo.citations import CheckedClaim
from agents.text.directions import Direction, said


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DirectedClaim(_Frozen):
    """A claim with one direction about one metric at one period, as code read it from its citations."""

    specialist: str  # the specialist (roster name) that wrote it
    statement: str  # as the specialist wrote it: model-written text
    ticker: str
    metric: str
    period: str
    direction: Direction
    figure: str  # the cited fact at that metric and period: what a reader (or the synthesizer) looks up
    citations: tuple[str, ...]

    @property
    def subject(self) -> tuple[str, str, str]:
        return self.ticker, self.metric, self.period

    @property
    def reading(self) -> str:
        return "rose" if self.direction == "up" else "fell"


class OtherMemo(_Frozen):
    """The latest frozen memo of another brief on the same company, as a flag links to it."""

    version_id: int
    label: str  # "v3"
    question: str  # that brief's question, typed by a person


class ClaimContradiction(_Frozen):
    """Two claims on one figure pointing opposite ways. ``kind`` "specialists": two claims of this run's
    specialists; "other brief": ``first`` is this run's, ``second`` the other memo's (``other``)."""

    kind: Literal["specialists", "other brief"]
    ticker: str
    metric: str
    period: str
    figure: str
    first: DirectedClaim
    second: DirectedClaim
    other: OtherMemo | None = None

    @property
    def what(self) -> str:
        """Code's one line: which figure, who read it which way."""
        name = f"{self.metric.replace('_', ' ')} for {self.period} ({self.ticker})"
        if self.other is None and self.first.specialist == self.second.specialist:
            return (
                f"The {self.first.specialist} brief reads {name} both ways: in one claim it "
                f"{self.first.reading}, in another it {self.second.reading}."
            )
        if self.other is None:
            return (
                f"Two specialists read {name} in opposite ways: the {self.first.specialist} brief says it "
                f"{self.first.reading}, the {self.second.specialist} brief that it {self.second.reading}."
            )
        return (
            f"This run's {self.first.specialist} brief says {name} {self.first.reading}; the memo "
            f"{self.other.label} of another brief on {self.ticker} rests on a {self.second.specialist} claim "
            f"that it {self.second.reading}."
        )


def directed(claims: Iterable[CheckedClaim], catalog: EvidenceCatalog) -> list[DirectedClaim]:
    """The claims code can read a direction about one metric and period from (see the module's rules)."""
    out: list[DirectedClaim] = []
    for claim in claims:
        ways = said(claim.statement)
        if len(ways) != 1:
            continue
        facts = [
            (cid, item)
            for cid in claim.citations
            if (item := catalog.get(cid)) is not None and item.kind == "fact" and item.metric and item.period
        ]
        subjects = {(cid.split(":", 1)[0], item.metric) for cid, item in facts}
        if len(subjects) != 1:
            continue
        ((ticker, metric),) = subjects
        # Periods of one metric sort in time order as the fact store writes them (FY2023 < FY2024, ISO
        # dates): the audit's series check orders them the same way.
        figure, latest = max(facts, key=lambda pair: pair[1].period)
        out.append(
            DirectedClaim(
                specialist=claim.shard_id,
                statement=claim.statement,
                ticker=ticker,
                metric=metric,
                period=latest.period,
                direction=next(iter(ways)),
                figure=figure,
                citations=tuple(claim.citations),
            )
        )
    return out


def between_specialists(claims: Sequence[DirectedClaim]) -> list[ClaimContradiction]:
    """Every pair of claims on the same metric and period that point opposite ways, in the claims' order
    (two of one specialist's claims too: a brief that says both is as unstable as two that disagree)."""
    return [
        _flag("specialists", first, second)
        for index, first in enumerate(claims)
        for second in claims[index + 1 :]
        if _opposite(first, second)
    ]


def against_memo(
    own: Sequence[DirectedClaim], theirs: Sequence[DirectedClaim], other: OtherMemo
) -> list[ClaimContradiction]:
    """This run's claims that the other brief's memo contradicts: one flag per (own claim, other claim)."""
    return [_flag("other brief", mine, it, other) for mine in own for it in theirs if _opposite(mine, it)]


def _opposite(first: DirectedClaim, second: DirectedClaim) -> bool:
    return first.subject == second.subject and first.direction != second.direction


def _flag(
    kind: Literal["specialists", "other brief"],
    first: DirectedClaim,
    second: DirectedClaim,
    other: OtherMemo | None = None,
) -> ClaimContradiction:
    return ClaimContradiction(
        kind=kind,
        ticker=first.ticker,
        metric=first.metric,
        period=first.period,
        figure=first.figure,
        first=first,
        second=second,
        other=other,
    )


def addressed(flag: ClaimContradiction, texts: Iterable[str]) -> bool:
    """Whether the memo's texts take the flagged figure up: they reference a fact of its metric (any period:
    "[[AAPL:revenue:FY2023]]" over the move into FY2024 is the same question) or name the metric in words
    ("gross margin"). Code cannot judge how well; it shows a reader which flags the memo left unmentioned."""
    prefix = f"[[{flag.ticker}:{flag.metric}:"
    words = flag.metric.replace("_", " ").lower()
    return any(prefix in text or words in text.lower() for text in texts)


def prompt_lines(flags: Sequence[ClaimContradiction]) -> str:
    """The flags as the synthesizer reads them: the figure by its id (never a value), who said what, quoted.
    The quotes are model-written, so the whole text goes to the prompt's untrusted section."""
    if not flags:
        return "(none: no two claims read the same figure in opposite ways)"
    lines = []
    for number, flag in enumerate(flags, 1):
        source = (
            "this run's specialists"
            if flag.other is None
            else f"this run against the memo {flag.other.label} of another brief on the same company"
        )
        lines.append(
            f"{number}. [[{flag.figure}]] ({flag.metric} at {flag.period}), {source}:\n"
            f'   - {flag.first.specialist} says it {flag.first.reading}: "{flag.first.statement}"\n'
            f'   - {flag.second.specialist} says it {flag.second.reading}: "{flag.second.statement}"'
        )
    return "\n".join(lines)
