"""Freezing a finished run's artefact as the next version of its brief's line, and what a version is
compared with.

A brief holds one line of versions per kind of artefact: memo v1, v2, ... and deck v1, v2, ... side by side.
A version supersedes, and is compared with, only the versions of its own line: a deck's R2 is not a memo's
J+, and a deck frozen on a brief leaves the memo under vote there as it is.

``freeze`` runs inside the transaction that finishes the run (memos.pipeline.claims.finish), so a run is
never done without its version, nor frozen twice: the same run finishing again with the same artefact (a
retried finish) finds its version; with a different one (its evaluation re-run) it freezes the next.
Freezing supersedes the line's open versions, closes their motions, opens a motion on the new version when
an evaluation stands behind it (pinning the review policy of the moment), stores its files, calls what its
workflow binds to a frozen version (``Workflow.on_frozen``: the memo's falsifier watches), writes the audit
trail and queues the notices (memos.services.notifications).

A version's files (memos.services.version_files) take a second or two to render, so the run's finish
renders them first (``prepare``), outside its transaction, and ``freeze`` only stores them: the run row and
the brief row are locked for as long as a few INSERTs take, never for a render. What a file shows (the
version's number, its delta, its changelog) is the line's as it stood when prepared; if the line moved
before the transaction (it cannot while one run of a brief is active at a time, but freeze does not rely
on it), freeze builds and renders the version again inside it.

A version's status moves only through ``move_status``: a conditional UPDATE from the statuses its mover
expects. Freezing reads the line's open versions and supersedes each only if it is still open when its row
is reached, so a version a reviewer publishes meanwhile stays published (the publication holds the row until
it commits; PostgreSQL then re-checks the condition on the committed row).
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from agents.data.formatting import format_value
from memos.jsonb import jsonb_text
from memos.live.events import send_version_changed
from memos.models import (
    ArtefactVersion,
    AuditEvent,
    Brief,
    FactRecord,
    LLMCall,
    Motion,
    Notice,
    ReviewPolicy,
    Run,
    SourceDocument,
)
from memos.pipeline.registry import workflow_for
from memos.pipeline.workflows import Artefact
from memos.services import notifications, version_files
from memos.services.accounts import Roles
from memos.services.version_files import Made

Status = ArtefactVersion.Status
Action = AuditEvent.Action


@dataclass(frozen=True)
class Prepared:
    """A version built, and its files rendered, before the freezing transaction, on its line as it stood."""

    version: ArtefactVersion  # not saved yet
    previous_pk: int | None  # the line's newest version it was built against
    files: list[Made]  # a PDF as the HTML it is printed from, after the freeze commits
    artefact: Artefact  # what it was built from: freezing this same object needs no second hash of it
    content_json: str  # its content as hashed, the text the row is written from

    def fits(self, run: Run, digest: str, previous: ArtefactVersion | None) -> bool:
        return (
            self.version.run_id == run.pk
            and self.version.content_hash == digest
            and self.previous_pk == (previous.pk if previous is not None else None)
        )


def prepare(*, run: Run, artefact: Artefact) -> Prepared:
    """The version ``artefact`` will be frozen as, with its files rendered. Call before the transaction that
    finishes the run, and hand the result to ``freeze``: it reads, and it renders, but it writes nothing."""
    brief = Brief.objects.select_related("company").get(pk=run.brief_id)
    previous = latest_in_line(brief, artefact.kind)
    dumped = canonical_content(artefact.content)
    version = _build(run, artefact, brief, previous, dumped)
    return Prepared(
        version,
        previous.pk if previous is not None else None,
        version_files.files_to_freeze(version),
        artefact,
        dumped,
    )


def freeze(*, run: Run, artefact: Artefact, prepared: Prepared | None = None) -> ArtefactVersion:
    """The run's artefact as the next version of its brief's line (or the version it already froze), with its
    files. Call inside a transaction; the brief row is locked so two runs of one brief cannot take the same
    number. Without ``prepared`` (or with one the line has moved past) the files are rendered here."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("freeze() must run inside the transaction that finishes the run")
    if prepared is not None and prepared.artefact is artefact:
        # Hashed when it was prepared: a screen's content is a megabyte of JSON, 20 ms to hash again.
        digest, dumped = prepared.version.content_hash, prepared.content_json
    else:
        dumped = canonical_content(artefact.content)
        digest = content_hash(artefact.kind, artefact.content, rendered_text(sections_of(artefact)), dumped)
    existing = ArtefactVersion.objects.filter(run=run, content_hash=digest).first()
    if existing is not None:
        return existing
    # Locks the brief row alone; its company comes with it (the falsifier watches read it).
    brief = Brief.objects.select_related("company").select_for_update(of=("self",)).get(pk=run.brief_id)
    previous = latest_in_line(brief, artefact.kind)
    if prepared is not None and prepared.fits(run, digest, previous):
        # A fresh row each time: a finish retried after a lost connection inserts again what rolled back.
        version, files = _unsaved_copy(prepared.version), prepared.files
        version.brief = brief
    else:
        version = _build(run, artefact, brief, previous, dumped)
        files = version_files.files_to_freeze(version)
    _insert(version, dumped)
    version_files.store(version, files)
    detail = {"run": str(run.pk), "evaluated": version.evaluated, "partial": version.partial}
    record(version, Action.FROZEN, detail=detail)
    if previous is not None:  # a first version has nothing older to supersede
        _supersede_open(brief, version)
    if version.evaluated and not version.partial:
        open_vote(version)
    bind = workflow_for(run.workflow).on_frozen
    if bind is not None:
        bind(version)
    _announce(version)
    return version


def open_vote(version: ArtefactVersion) -> Motion:
    """Open the committee's vote on ``version``, pinning the review policy of the moment: an admin's later
    change applies to the motions opened after it."""
    rules = ReviewPolicy.current()
    motion = Motion.objects.create(
        version=version, min_votes=rules.min_votes, approval_share=rules.approval_share
    )
    record(
        version,
        Action.MOTION_OPENED,
        detail={"min_votes": rules.min_votes, "approval_share": rules.approval_share},
    )
    return motion


# The run engine's hooks (memos.pipeline.hooks, installed by memos.apps): positional, as the engine calls
# them; what ``prepare`` returned is handed back to ``freeze`` untouched.


def prepare_for_engine(run: Run, artefact: Artefact) -> Prepared:
    return prepare(run=run, artefact=artefact)


def freeze_for_engine(run: Run, artefact: Artefact, prepared: object) -> ArtefactVersion:
    return freeze(run=run, artefact=artefact, prepared=prepared if isinstance(prepared, Prepared) else None)


def latest_in_line(brief: Brief, kind: str) -> ArtefactVersion | None:
    """The brief's newest version of ``kind``: the head of that line."""
    return ArtefactVersion.objects.filter(brief=brief, kind=kind).order_by("-number").first()


def _unsaved_copy(version: ArtefactVersion) -> ArtefactVersion:
    columns = {
        field.attname: getattr(version, field.attname)
        for field in ArtefactVersion._meta.concrete_fields
        if not field.primary_key
    }
    return ArtefactVersion(**columns)


NOT_FINISHED = "Not finished"


def sections_of(artefact: Artefact) -> dict[str, str]:
    """The artefact's sections as frozen: a partial one begins with what did not finish, so its text, its
    diff and its export say so before anything else."""
    if not artefact.unfinished:
        return artefact.sections
    lines = [f"- {part.step}: {part.reason}" for part in artefact.unfinished]
    said = "These parts of the run did not finish; what follows was made without them:\n" + "\n".join(lines)
    return {NOT_FINISHED: said, **artefact.sections}


def _insert(version: ArtefactVersion, dumped: str) -> None:
    """Insert ``version`` with its content written from ``dumped`` (memos.jsonb): the driver would dump a
    screen's megabyte of content once more, 20 ms inside the transaction that holds the run and the brief."""
    content = version.content
    version.content = jsonb_text(dumped)
    try:
        version.save(force_insert=True)
    finally:
        version.content = content


def _build(
    run: Run, artefact: Artefact, brief: Brief, previous: ArtefactVersion | None, dumped: str
) -> ArtefactVersion:
    """The version row, not saved: every column freezing writes, as of now. ``dumped``: its content's
    canonical JSON (``canonical_content``)."""
    sections = sections_of(artefact)
    text = rendered_text(sections)
    delta = _delta(previous, artefact)
    prompts, models = _pins_and_models(run)
    return ArtefactVersion(
        brief=brief,
        run=run,
        number=(previous.number if previous else 0) + 1,
        kind=artefact.kind,
        title=artefact.title,
        content=artefact.content,
        rendered_text=text,
        content_hash=content_hash(artefact.kind, artefact.content, text, dumped),
        evaluated=artefact.evaluated,
        unfinished=[part.as_json() for part in artefact.unfinished],
        brief_as_frozen={
            "question": brief.question,
            "audience": brief.audience,
            "notes": brief.notes,
            "owner_id": brief.owner_id,
            "owner": brief.owner.username,
        },
        score=artefact.score,
        score_label=artefact.score_label,
        score_delta=delta,
        scores=artefact.scores,
        sections=sections,
        sources=cited_sources(artefact.cited),
        prompt_versions=prompts,
        rubric_versions=_rubrics_of(run, artefact.kind),
        model_versions=models,
        verdict_families=run.verdict_families,
        data_version=run.data_version,
        changelog=changelog(previous, artefact, delta),
        created_at=timezone.now(),
    )


def move_status(version: ArtefactVersion, *, expected: tuple[str, ...], to: str, **also: Any) -> bool:
    """Move ``version`` to the status ``to`` (and ``also``'s columns) only if its row is still in one of the
    ``expected`` statuses; whether it moved. The one way a status changes (review and freezing both)."""
    moved = ArtefactVersion.objects.filter(pk=version.pk, status__in=expected).update(status=to, **also) == 1
    if moved:
        version.status = to
        for name, value in also.items():
            setattr(version, name, value)
    return moved


def record(
    version: ArtefactVersion, action: str, *, actor: Any = None, detail: dict[str, Any] | None = None
) -> None:
    """One row of the audit trail, bound to the version's content hash."""
    AuditEvent.objects.create(
        version=version, content_hash=version.content_hash, actor=actor, action=action, detail=detail or {}
    )


def canonical_content(content: dict[str, Any]) -> str:
    """A version's content in the one spelling its hash is taken over (keys sorted)."""
    return json.dumps(content, sort_keys=True, ensure_ascii=False)


def content_hash(kind: str, content: dict[str, Any], text: str, dumped: str | None = None) -> str:
    """The hash of the JSON of {"kind", "content", "text"} with sorted keys. ``dumped``: the content's
    ``canonical_content`` when the caller has it; the whole is spelled from it exactly as ``json.dumps``
    would spell it (the keys in order, its separators), so every version frozen before keeps its hash."""
    inner = dumped if dumped is not None else canonical_content(content)
    kind_json, text_json = json.dumps(kind, ensure_ascii=False), json.dumps(text, ensure_ascii=False)
    canonical = f'{{"content": {inner}, "kind": {kind_json}, "text": {text_json}}}'
    return hashlib.sha256(canonical.encode()).hexdigest()


def rendered_text(sections: dict[str, str]) -> str:
    return "\n\n".join(f"## {name}\n{text}" for name, text in sections.items())


@dataclass(frozen=True)
class SectionDiff:
    name: str
    lines: list[tuple[str, str]]  # (" ", "-" or "+", the line)

    @property
    def changed(self) -> bool:
        return any(sign != " " for sign, _ in self.lines)


def diff(previous: ArtefactVersion | None, version: ArtefactVersion) -> list[SectionDiff]:
    """Section by section, line by line: what ``version`` changed against ``previous`` (all added if None)."""
    before = dict(previous.ordered_sections) if previous is not None else {}
    after = dict(version.ordered_sections)
    names = list(dict.fromkeys([*after, *before]))
    out = []
    for name in names:
        old = before.get(name, "").splitlines()
        new = after.get(name, "").splitlines()
        lines = [(line[0], line[2:]) for line in difflib.ndiff(old, new) if line[:1] in (" ", "-", "+")]
        out.append(SectionDiff(name, lines))
    return out


def previous_of(version: ArtefactVersion) -> ArtefactVersion | None:
    """The version before ``version`` in its line (same brief, same kind), or None for the line's first."""
    return (
        ArtefactVersion.objects.filter(
            brief_id=version.brief_id, kind=version.kind, number__lt=version.number
        )
        .order_by("-number")
        .first()
    )


def changelog(previous: ArtefactVersion | None, artefact: Artefact, delta: float | None) -> str:
    """One line a reader can scan in the history: what is new in this version against the version before it
    in its line, said by code."""
    if previous is None:
        head = f"first {artefact.kind} version of this brief"
    else:
        changed = [
            name for name, text in artefact.sections.items() if previous.sections.get(name, "") != text
        ]
        head = f"against v{previous.number}: " + (
            f"{len(changed)} section{'s' if len(changed) != 1 else ''} changed ({', '.join(changed)})"
            if changed
            else "no section changed"
        )
    if artefact.score is None:
        score = "not evaluated"
    else:
        moved = f", {delta:+g}" if delta is not None else ""
        score = f"{artefact.score_label} {artefact.score:g}{moved}"
    return f"{head}; {score}"


def _delta(previous: ArtefactVersion | None, artefact: Artefact) -> float | None:
    """The score's move against the version before in the line, on the same scale only: a deck escalated at
    its entry gate is scored on R1, not on the loop's R2, and is not compared with an R2."""
    if previous is None or previous.score is None or artefact.score is None:
        return None
    if previous.score_label != artefact.score_label:
        return None
    return round(artefact.score - previous.score, 3)


def _supersede_open(brief: Brief, newest: ArtefactVersion) -> None:
    """Older versions of the new one's line still in review give way to it; their motions close. Published
    ones stay published until a newer version is published (memos.services.review.publish): a version read as
    open here but published before its row is reached is left published (``move_status``)."""
    older = ArtefactVersion.objects.filter(
        brief=brief, kind=newest.kind, status__in=ArtefactVersion.OPEN_STATUSES
    ).exclude(pk=newest.pk)
    for version in older:
        if not move_status(version, expected=ArtefactVersion.OPEN_STATUSES, to=Status.SUPERSEDED):
            continue
        record(version, Action.SUPERSEDED, detail={"by": newest.label})
        close_motion(version=version, because=f"superseded by {newest.label}")
        send_version_changed(version.pk)  # its open pages show it superseded, their vote closed


def close_motion(*, version: ArtefactVersion, because: str, actor: Any = None) -> None:
    closed = Motion.objects.filter(version=version, closed_at__isnull=True).update(
        closed_at=timezone.now(), closed_because=because[:200]
    )
    if closed:
        record(version, Action.MOTION_CLOSED, actor=actor, detail={"because": because})


def partial_note(version: ArtefactVersion) -> str:
    parts = "; ".join(f"{part['step']} ({part['reason']})" for part in version.unfinished)
    return (
        f"Parts of its run did not finish: {parts}. No vote opens until you accept it as partial on its "
        "page, or retry what failed (the calls already answered are not paid again)."
    )


ESCALATED_NOTE = (
    "No draft cleared the entry bar within its rebuilds: the closest one is frozen for you to read. A "
    "refinement cycle does not continue from it; start a new deck run."
)


def _announce(version: ArtefactVersion) -> None:
    """The committee hears that its vote is needed (or that the version waits for an evaluation), the
    reviewers that a version is ready for review: one notice each. A deck that never cleared the entry bar
    (escalated) is its analyst's to act on: they hear of it too."""
    if version.run.part_of_id is not None:
        # A part of the desk's week (its screen, a closer look, a deck cycle): the week's digest announces
        # it with the rest of the week, one e-mail per person when the week ends, not one per part.
        return
    people = notifications.members_of(Roles.COMMITTEE, Roles.REVIEWER)
    committee = people[Roles.COMMITTEE]
    reviewers = [user for user in people[Roles.REVIEWER] if user not in committee]
    if version.partial:
        # Its analyst decides first: accept it as partial (the committee's vote opens then) or retry.
        notifications.notify(
            version=version,
            event=Notice.Event.PARTIAL,
            recipients=[version.brief.owner],
            note=partial_note(version),
        )
    if version.evaluated and not version.partial:
        notifications.notify(version=version, event=Notice.Event.VOTE_NEEDED, recipients=committee)
    else:
        notifications.notify(version=version, event=Notice.Event.FROZEN, recipients=committee)
    notifications.notify(version=version, event=Notice.Event.FROZEN, recipients=reviewers)
    if version.scores.get("escalated"):
        notifications.notify(
            version=version,
            event=Notice.Event.ESCALATED,
            recipients=[version.brief.owner],
            note=ESCALATED_NOTE,
        )


def _pins_and_models(run: Run) -> tuple[dict[str, Any], dict[str, str]]:
    """The run's pinned prompts that it asked a model with (it pins every active prompt when it starts), and
    the model each role answered with: one read of its ledger."""
    rows = set(LLMCall.objects.filter(run=run).values_list("prompt_name", "role", "model", "outcome"))
    asked = {prompt for prompt, _, _, _ in rows}
    answered = {LLMCall.Outcome.OK, LLMCall.Outcome.CACHED}
    prompts = {name: pin for name, pin in sorted(run.prompt_versions.items()) if name in asked}
    models = dict(sorted({(role, model) for _, role, model, outcome in rows if outcome in answered}))
    return prompts, models


def _rubrics_of(run: Run, kind: str) -> dict[str, Any]:
    """The run's pinned rubrics of its own workflow (named for it: memo_j, deck_r1, ...)."""
    return {name: pin for name, pin in sorted(run.rubric_versions.items()) if name.startswith(f"{kind}_")}


def _period(fact: dict[str, Any]) -> str:
    """ "FY 2025" for a filed figure; "as of 2017-09-01" for one computed from prices on a day (its fiscal
    period is "DAY"), so a reader sees how old a price figure is beside filings of this year."""
    if fact["fiscal_year"] is None:
        return f"as of {fact['period_end'].isoformat()}"
    return f"{fact['fiscal_period']} {fact['fiscal_year']}"


# The columns a frozen source shows: a screen cites some 1,200 figures, and whole rows (their inputs parsed,
# the documents' texts read) took 30 ms of the freeze's path.
_FACT_COLUMNS = (
    "fact_id",
    "label",
    "metric",
    "value",
    "unit",
    "period_end",
    "fiscal_year",
    "fiscal_period",
    "form",
    "filed",
    "accession",
    "source",
    "derivation",
    "url",
)
_DOCUMENT_COLUMNS = ("doc_id", "title", "source", "published", "url")


def cited_sources(cited: tuple[str, ...]) -> list[dict[str, Any]]:
    """The cited facts and documents as they stand now, frozen with the version: a later load that corrects
    a figure does not change what this version was built on."""
    ids = list(cited)
    facts = {f["fact_id"]: f for f in FactRecord.objects.filter(fact_id__in=ids).values(*_FACT_COLUMNS)}
    documents = {
        d["doc_id"]: d for d in SourceDocument.objects.filter(doc_id__in=ids).values(*_DOCUMENT_COLUMNS)
    }
    out: list[dict[str, Any]] = []
    for evidence_id in ids:
        if (fact := facts.get(evidence_id)) is not None:
            out.append(
                {
                    "id": evidence_id,
                    "kind": "fact",
                    "label": fact["label"] or fact["metric"],
                    "value": format_value(fact["value"], fact["unit"]),
                    "period": _period(fact),
                    "period_end": fact["period_end"].isoformat(),
                    "form": fact["form"],
                    "filed": fact["filed"].isoformat() if fact["filed"] else "",
                    "accession": fact["accession"],
                    "source": fact["source"],
                    "derivation": fact["derivation"],
                    "url": fact["url"],
                }
            )
        elif (document := documents.get(evidence_id)) is not None:
            out.append(
                {
                    "id": evidence_id,
                    "kind": "document",
                    "label": document["title"],
                    "source": document["source"],
                    "published": document["published"].isoformat() if document["published"] else "",
                    "url": document["url"],
                }
            )
        else:
            out.append({"id": evidence_id, "kind": "unresolved", "label": "no such fact or document"})
    return out
