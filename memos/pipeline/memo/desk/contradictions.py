"""A memo version's contradiction flags on its page (agents.memo.contradictions), read from its frozen content
alone: claims of its specialists that read one figure in opposite ways, and its claims that the latest memo
of another brief on the company contradicts, both sides quoted, the other memo linked.

The quotes are model-written: each is shown as a reader is shown any model text (agents.text.reader: a
sentence with a typed figure is withheld, with code's note), its ``[[fact id]]`` references with the value
frozen with the version. The other memo's quote and link are shown only to a reader who may read that memo.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from pydantic import ValidationError

from agents.memo.contradictions import ClaimContradiction, DirectedClaim, addressed
from agents.memo.outputs import MemoOutput
from agents.text.reader import paragraph
from agents.text.scripts import Language
from memos.models import ArtefactVersion
from memos.pipeline.language import brief_language
from memos.services.access import visible_versions

KIND = "memo"


@dataclass(frozen=True)
class Quoted:
    specialist: str
    reading: str  # "rose" or "fell"
    text: str  # the claim as a reader is shown it, figures rendered from the frozen sources
    hidden: bool = False  # the reader may not read the memo it comes from


@dataclass(frozen=True)
class Flag:
    kind: str
    what: str  # code's one line
    first: Quoted
    second: Quoted
    other_id: int | None  # the other memo's version, when the reader may open it
    other_label: str
    other_question: str
    addressed: bool  # the memo's text takes the figure up (agents.memo.contradictions.addressed)


def memo_contradictions(user: User, version: ArtefactVersion) -> dict[str, Any] | None:
    """The panel's context, or None for another kind, unreadable content, or a memo frozen before the
    checks existed (nothing was compared, so the page claims nothing)."""
    if version.kind != KIND:
        return None
    try:
        output = MemoOutput.model_validate(version.content)
    except ValidationError:
        return None
    if not output.claims and not output.contradictions and not output.compared_with:
        return None
    facts = {str(row["id"]): row for row in version.sources if row.get("kind") == "fact"}
    said_in = brief_language(version.brief)
    others = {memo.version_id for memo in output.compared_with}
    readable = set(visible_versions(user).filter(pk__in=others).values_list("pk", flat=True))
    texts = [
        output.memo.headline_thesis,
        output.memo.risk_budget,
        output.memo.sizing_rationale,
        *output.memo.falsifiers,
        output.analysis.macro,
        output.analysis.meso,
        output.analysis.micro,
    ]
    flags = [_flag(flag, facts, said_in, readable, addressed(flag, texts)) for flag in output.contradictions]
    return {
        "contradictions": flags,
        "specialist_flags": sum(1 for flag in flags if flag.kind == "specialists"),
        "other_flags": sum(1 for flag in flags if flag.kind != "specialists"),
        "unaddressed": sum(1 for flag in flags if not flag.addressed),
        "directed_claims": len(output.claims),
        "compared_with": [(memo, memo.version_id in readable) for memo in output.compared_with],
    }


def _flag(
    flag: ClaimContradiction,
    facts: dict[str, dict[str, Any]],
    said_in: Language,
    readable: set[int],
    taken_up: bool,
) -> Flag:
    other = flag.other
    may_read = other is None or other.version_id in readable
    return Flag(
        kind=flag.kind,
        what=flag.what,
        first=_quoted(flag.first, facts, said_in),
        second=_quoted(flag.second, facts, said_in, hidden=not may_read),
        other_id=other.version_id if other is not None and may_read else None,
        other_label=other.label if other is not None else "",
        other_question=other.question if other is not None and may_read else "",
        addressed=taken_up,
    )


def _quoted(
    claim: DirectedClaim, facts: dict[str, dict[str, Any]], said_in: Language, *, hidden: bool = False
) -> Quoted:
    if hidden:
        return Quoted(claim.specialist, claim.reading, "", hidden=True)
    shown = paragraph(claim.statement, frozenset(facts), frozenset(), said_in)
    parts = []
    for part in shown.parts:
        if part.kind == "fact":
            row = facts.get(part.fact_id, {})
            value = f"{row.get('value')} " if row.get("value") not in (None, "") else ""
            parts.append(f"{value}[{part.fact_id}]")
        else:
            parts.append(part.text)
    if shown.note:
        parts.append(f" ({shown.note})")
    return Quoted(claim.specialist, claim.reading, "".join(parts).strip())
