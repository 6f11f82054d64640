"""Claims without figures, audited by code against what they cite (seed 000's open items).

A claim may name a company, a person, a product or an event, or give a date, with no figure in it. Code
cannot check such a claim's meaning, but it can check its footing: every name and every date it states must
appear in one of the items it cites (a document's text, a fact's description and period). One that appears
in none is unsupported: the claim is marked and falls to LOW, and the evaluation counts it against the memo.

Specialists are graded on the gaps they declare: a declared gap the evidence really has (no item the desk
held speaks of it) is credit; a claim about the very thing the specialist declared missing, or one resting
on a name or a date its sources do not hold, is an invented fact where data is missing: a penalty.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from agents.evidence import EvidenceCatalog, EvidenceItem
from agents.memo.citations import CheckedClaim


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_DATE = re.compile(
    rf"\b(?:[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}|(?:{_MONTHS})\.? [0-9]{{1,2}},? [0-9]{{4}}|"
    rf"(?:{_MONTHS}) [0-9]{{4}}|Q[1-4] [0-9]{{4}}|(?:19|20)[0-9]{{2}})\b"
)
# A name: capitalised words in a row (an initial capital, then a lower-case letter or more capitals), or
# an all-capitals word of two letters or more.
_NAME = re.compile(r"\b[A-Z][A-Za-z&'.-]*[a-z&][A-Za-z&'.-]*(?: [A-Z][A-Za-z&'.-]+)*|\b[A-Z]{2,}\b")
# Capitalised words that name no entity a source must hold: sentence openers, the desk's own vocabulary,
# finance terms, days and months.
_COMMON = _words(
    """
    the a an this that these those its it their our we he she they there here if when while as at by for
    from in into of on to with without over under after before during since until but and or nor so yet
    also however although because despite whether which who whose what where how than then thus hence
    revenue revenues sales margin margins growth earnings income profit profits cash capex capital
    expenditure free flow operating net gross diluted eps fiscal year years quarter quarters annual
    trailing twelve months market markets shares share stock stocks price prices return returns beta
    volatility alpha buy sell hold watch high medium low tier evidence filing filings filed fact facts
    sec edgar gaap ifrs usd us ceo cfo ai it rsi sma ytd fy ttm q yoy qoq eu uk usa monday tuesday
    wednesday thursday friday saturday sunday january february march april may june july august
    september october november december jan feb mar apr jun jul aug sep sept oct nov dec
    inc incorporated corp corporation co company ltd limited llc plc holdings group sa ag nv
    """
)
_WORD = re.compile(r"[a-z][a-z-]{3,}")
# A "gap" that says there is none (the embedded 1.5B wrote "The analyst did not find any coverage gaps for
# this question."): nothing was declared missing, so there is nothing to grade.
_NO_GAP = re.compile(
    r"\b(?:no|not (?:find|found|identify|identified|see|note) any|none)\b[^.;]*\bgaps?\b", re.IGNORECASE
)


def declares_none(gap: str) -> bool:
    """Whether a declared coverage gap says there is none ("The analyst did not find any coverage gaps")."""
    return bool(_NO_GAP.search(gap))


_STOP = _words(
    """
    about above after again against also among another because been before being below between both
    could does doing down during each either every from further have having here into itself just like
    made make many more most much must need none only other over same should some such than that their
    them then there these they this those through under until very what when where whether which while
    will with within without would data figures figure information available missing lacks lack shows
    show evidence sources source cited cite there
    """
)


class UnsupportedEntity(BaseModel):
    """A claim naming something, or giving a date, that none of its cited items holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    shard_id: str
    statement: str
    entities: list[str]  # the names and dates no cited item holds
    citations: list[str]


class GapGrade(BaseModel):
    """One gap a specialist declared, and whether the evidence the desk held really lacks it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    shard_id: str
    gap: str
    real: bool  # credit: no item the desk held speaks of it
    note: str  # code's reason, naming the words looked for or the item that holds them


class Invented(BaseModel):
    """A claim asserting what its specialist declared missing, or resting on names its sources lack."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    shard_id: str
    statement: str
    why: str


def entities(statement: str, *, own: Iterable[str] = ()) -> list[str]:
    """The names and dates a statement gives, less the company's own name and ticker and common words."""
    # "Apple Inc." is "Apple" and "Inc": a word of a name is compared without its closing full stop.
    skip = {word.strip(".'").casefold() for name in own for word in re.findall(r"[A-Za-z&.'-]+", name)}
    found: list[str] = [match.group() for match in _DATE.finditer(statement)]
    for match in _NAME.finditer(statement):
        words = [w.strip(".'") for w in match.group().split()]
        if _opens_sentence(statement, match.start()) and not words[0].isupper():
            words = words[1:]  # "Demand rose": a capital that only opens the sentence names nothing
        kept = [w for w in words if w and w.casefold() not in _COMMON | skip]
        if kept:
            found.append(" ".join(kept))
    return list(dict.fromkeys(found))


def _opens_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?:;"


def _held(entity: str, items: Sequence[EvidenceItem]) -> bool:
    needle = entity.casefold()
    return any(needle in f"{i.summary} {i.cue} {i.text} {i.period} {i.evidence_id}".casefold() for i in items)


def unsupported_entities(
    claims: Iterable[CheckedClaim], catalog: EvidenceCatalog, *, own: Iterable[str] = ()
) -> list[UnsupportedEntity]:
    """Each claim that states a name or a date none of its cited items holds."""
    names = tuple(own)
    found = []
    for claim in claims:
        cited = [item for cid in claim.citations if (item := catalog.get(cid)) is not None]
        missing = [e for e in entities(claim.statement, own=names) if not _held(e, cited)]
        if missing:
            found.append(
                UnsupportedEntity(
                    shard_id=claim.shard_id,
                    statement=claim.statement,
                    entities=missing,
                    citations=list(claim.citations),
                )
            )
    return found


def key_terms(text: str) -> list[str]:
    return list(dict.fromkeys(w for w in _WORD.findall(text.casefold()) if w not in _STOP and len(w) >= 5))


def grade_gaps(
    shard_id: str,
    gaps: Sequence[str],
    claims: Sequence[CheckedClaim],
    catalog: EvidenceCatalog,
    unsupported: Sequence[UnsupportedEntity] = (),
) -> tuple[list[GapGrade], list[Invented]]:
    """A specialist's declared gaps graded against every item the desk held, and its invented claims: those
    asserting what it declared missing, and those resting on names or dates their sources lack."""
    items = list(catalog.items.values())
    grades = []
    declared: list[tuple[str, list[str]]] = []
    for gap in gaps:
        terms = key_terms(gap)
        if not terms or declares_none(gap):  # "The analyst did not find any coverage gaps": none declared
            continue
        declared.append((gap, terms))
        holding = next((i for i in items if _covers(terms, f"{i.summary} {i.text} {i.metric}")), None)
        grades.append(
            GapGrade(
                shard_id=shard_id,
                gap=gap,
                real=holding is None,
                note=f"no item the desk held speaks of {', '.join(terms[:3])}"
                if holding is None
                else f"the desk held {holding.evidence_id}, which speaks of it",
            )
        )
    invented = []
    for claim in claims:
        said = next((gap for gap, terms in declared if _covers(terms, claim.statement)), None)
        if said is not None:
            invented.append(
                Invented(shard_id=shard_id, statement=claim.statement, why=f"it declared missing: {said}")
            )
    invented.extend(
        Invented(
            shard_id=shard_id,
            statement=u.statement,
            why="its sources hold none of " + ", ".join(repr(e) for e in u.entities),
        )
        for u in unsupported
        if u.shard_id == shard_id and not any(i.statement == u.statement for i in invented)
    )
    return grades, invented


def _covers(terms: Sequence[str], text: str) -> bool:
    """Whether ``text`` speaks of what ``terms`` name: at least two of them, or the one there is."""
    lowered = text.casefold()
    hits = sum(1 for term in terms if term in lowered)
    return hits >= min(2, len(terms))
