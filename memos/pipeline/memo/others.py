"""The latest memos of the company's other briefs, as the contradiction check reads them (seed 000's cross-run
contradictions, beside drift against the same brief's previous memo: memos.pipeline.memo.desk.drift).

Only memos of the run's own analyst are compared: those of briefs they own or runs they started, which is
what an analyst may read (memos.services.access, which the run engine does not import). A flag quotes the
other memo's claim, and this memo's readers must not learn from it what another analyst's brief concluded;
a committee member's run is held to the same rule, so what a memo quotes never depends on who pressed start.
"""

from __future__ import annotations

from django.db.models import Q
from pydantic import TypeAdapter, ValidationError

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
    # On the synthesis' path: the versions' ids first (a company's memos add up), then the chosen few whole.
    newest = (
        ArtefactVersion.objects.filter(Q(brief__owner_id=analyst) | Q(run__created_by_id=analyst))
        .filter(kind=NAME, brief__company_id=company_id)
        .exclude(brief_id=run.brief_id)
        .order_by("-created_at", "-pk")
        .values_list("pk", "brief_id")
    )
    latest: dict[int, int] = {}  # brief -> its newest version; an older memo of a compared brief never counts
    for pk, brief_id in newest.iterator(chunk_size=100):
        latest.setdefault(brief_id, pk)
        if len(latest) == MAX_OTHER_BRIEFS:
            break
    versions = ArtefactVersion.objects.select_related("brief").in_bulk(latest.values())
    return [
        (
            OtherMemo(version_id=version.pk, label=f"v{version.number}", question=version.brief.question),
            claims_of(version),
        )
        for version in (versions[pk] for pk in latest.values())
    ]


def claims_of(version: ArtefactVersion) -> list[DirectedClaim]:
    """The frozen memo's directed claims; for a memo frozen before they were frozen with it (no ``claims`` in
    its content), read again from its run's audit and evidence (both immutable once done)."""
    content = version.content
    if isinstance(content, dict) and "claims" in content:
        try:
            return _DIRECTED.validate_python(content["claims"])
        except ValidationError:
            return []
    try:
        MemoOutput.model_validate(content)  # a version whose content is no memo has no claims to compare
    except ValidationError:
        return []
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


_DIRECTED = TypeAdapter(list[DirectedClaim])
