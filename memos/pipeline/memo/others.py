"""The latest memos of the company's other briefs, as the contradiction check reads them (seed 000's cross-run
contradictions, beside drift against the same brief's previous memo: memos.pipeline.memo.desk.drift).

Only memos of the run's own analyst are compared: those of briefs they own or runs they started, which is
what an analyst may read (memos.services.access, which the run engine does not import). A flag quotes the
other memo's claim, and this memo's readers must not learn from it what another analyst's brief concluded;
a committee member's run is held to the same rule, so what a memo quotes never depends on who pressed start.
"""

from __future__ import annotations

from django.db.models import Q
from pydantic import ValidationError

from agents.memo.contradictions import DirectedClaim, OtherMemo, directed
from agents.memo.outputs import AuditOutput, EvidenceOutput, MemoOutput
from memos.models import AgentStep, ArtefactVersion, Run
from memos.pipeline.memo.plan import AUDIT, EVIDENCE, NAME
from memos.pipeline.memo.reads import catalog_of

# At most this many other briefs' memos are compared, the most recently frozen first: each flag is read by
# the synthesizer, whose prompt a small model reads token by token.
MAX_OTHER_BRIEFS = 3


def other_memos(run: Run) -> list[tuple[OtherMemo, list[DirectedClaim]]]:
    """The latest frozen memo of each other brief on ``run``'s company (same ticker, another question) of
    the run's analyst, newest first, with the claims code reads a direction from."""
    company_id = run.brief.company_id
    if company_id is None:
        return []
    analyst = run.created_by_id
    candidates = (
        ArtefactVersion.objects.filter(Q(brief__owner_id=analyst) | Q(run__created_by_id=analyst))
        .filter(kind=NAME, brief__company_id=company_id)
        .exclude(brief_id=run.brief_id)
        .select_related("brief", "run")
        .order_by("-created_at", "-pk")
    )
    found: list[tuple[OtherMemo, list[DirectedClaim]]] = []
    seen: set[int] = set()
    for version in candidates.iterator():
        if version.brief_id in seen:
            continue  # an older memo of a brief already compared: only its latest counts
        seen.add(version.brief_id)
        memo = OtherMemo(version_id=version.pk, label=f"v{version.number}", question=version.brief.question)
        found.append((memo, claims_of(version)))
        if len(found) == MAX_OTHER_BRIEFS:
            break
    return found


def claims_of(version: ArtefactVersion) -> list[DirectedClaim]:
    """The frozen memo's directed claims; for a memo frozen before they were frozen with it, read again from
    its run's audit and evidence (both immutable once done)."""
    try:
        frozen = MemoOutput.model_validate(version.content)
    except ValidationError:
        return []
    if frozen.claims:
        return list(frozen.claims)
    steps = {
        step.kind: step.output
        for step in AgentStep.objects.filter(
            run_id=version.run_id, kind__in=(AUDIT, EVIDENCE), status=AgentStep.Status.DONE
        )
    }
    try:
        audit = AuditOutput.model_validate(steps.get(AUDIT))
        evidence = EvidenceOutput.model_validate(steps.get(EVIDENCE))
    except ValidationError:
        return []
    return directed(audit.claims, catalog_of(evidence.by_specialist()))
