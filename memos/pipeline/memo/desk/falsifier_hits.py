"""When newer data loads, the register checks the company's watched falsifiers; a met condition re-opens the
position.

"Re-open" here means, all in one transaction per hit:
- the watch is marked hit with the fact that met its condition (a conditional UPDATE from ``watching``: two
  loads checking at once hit a watch once, and a second load of the same data finds nothing watching);
- the version whose falsifier it was gets an audit row ``falsifier_hit`` (bound to its content hash); its
  review status is left as it is: a published memo stays what the executives read until a newer version
  is published, but the page says its falsifier was hit;
- the brief gets a new run on the newer data (the run's owner and profile as before), unless one is already
  queued or running: the one-active-run-per-brief constraint (memos.models.runs) allows one, and that run
  answers the hit; and unless the brief's analyst is no longer an active analyst (the run would be started
  in their name): then no run starts and the audit row's reason says why. The new run freezes the next
  version, which supersedes the open ones and is reviewed again, and freezing it closes this version's
  remaining watches (memos.pipeline.memo.desk.falsifiers);
- the brief's analyst, the committee and the reviewers are told, once each (a notice per person, version and
  event: a database constraint).

Callers run ``check_after_commit`` where data lands (the snapshot loader, the EDGAR refresh job, the facts
command): the check sees committed facts and its runs are queued after that commit.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import partial

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agents.memo.falsifiers import Reading, comparable, met
from memos.models import AuditEvent, Company, FactRecord, FalsifierWatch, Notice, Run
from memos.pipeline.memo.watches import reading
from memos.services import notifications
from memos.services.accounts import Roles
from memos.services.errors import ServiceError
from memos.services.runs import check_owner_still_analyst, start_run
from memos.services.versions import record

log = logging.getLogger(__name__)

Status = FalsifierWatch.Status


def check_after_commit(company_ids: Iterable[int]) -> None:
    """Check the companies' watches once the surrounding transaction commits (at once outside one).

    Each company's check is its own callback, and a failing one is logged, not raised: the data it follows
    has committed and stays loaded, its watches stay ``watching``, and the next load checks them again.
    """
    for company_id in sorted(set(company_ids)):
        transaction.on_commit(partial(_check_one, company_id), robust=True)


def check_ticker_after_commit(ticker: str) -> None:
    """``check_after_commit`` for the company a ticker names (after an EDGAR refresh of it)."""
    check_after_commit(Company.objects.filter(ticker=ticker.strip().upper()).values_list("pk", flat=True))


def _check_one(company_id: int) -> None:
    company = Company.objects.filter(pk=company_id).first()
    if company is not None:
        check_falsifiers(company=company)


def check_falsifiers(*, company: Company) -> list[FalsifierWatch]:
    """Every watching falsifier of the company whose condition the newest comparable fact meets is hit and
    its position re-opened; returns the watches this call hit (none when nothing newer meets a condition)."""
    hits: list[FalsifierWatch] = []
    watching = FalsifierWatch.objects.filter(company=company, status=Status.WATCHING).order_by("id")
    for watch in watching:
        later = newest_comparable(watch)
        if later is not None and met(watch.condition, watch.baseline_value, later.value):
            hit = _hit(watch, later)
            if hit is not None:
                hits.append(hit)
    return hits


def baseline_of(watch: FalsifierWatch) -> Reading:
    return Reading(
        fact_id=watch.baseline_fact_id,
        value=watch.baseline_value,
        period_end=watch.baseline_period_end,
        fiscal_period=watch.baseline_fiscal_period,
    )


def newest_comparable(watch: FalsifierWatch) -> Reading | None:
    """The newest fact of the watched metric that may be compared with the reference (a later period of the
    same cadence; agents.memo.falsifiers.comparable), or None."""
    baseline = baseline_of(watch)
    later = FactRecord.objects.filter(
        company_id=watch.company_id, metric=watch.metric, period_end__gt=watch.baseline_period_end
    ).order_by("-period_end", "fiscal_period", "fact_id")
    for fact in later:
        candidate = reading(fact)
        if comparable(watch.condition, baseline, candidate):
            return candidate
    return None


def _hit(watch: FalsifierWatch, later: Reading) -> FalsifierWatch | None:
    with transaction.atomic():
        claimed = FalsifierWatch.objects.filter(pk=watch.pk, status=Status.WATCHING).update(
            status=Status.HIT, hit_fact_id=later.fact_id, hit_value=later.value, hit_at=timezone.now()
        )
        if not claimed:
            return None  # another check hit it first, or a newer version closed it
        hit = FalsifierWatch.objects.select_related("version__run", "brief__owner", "brief__company").get(
            pk=watch.pk
        )
        run, note = _reopen(hit)
        FalsifierWatch.objects.filter(pk=hit.pk).update(run=run, reopen_note=note[:300])
        because = (
            f"falsifier {hit.number}: {hit.metric} {hit.condition_words} "
            f"({later.fact_id} against {hit.baseline_fact_id}); {note}"
        )
        record(
            hit.version,
            AuditEvent.Action.FALSIFIER_HIT,
            detail={
                "because": because,
                "falsifier": hit.number,
                "metric": hit.metric,
                "condition": hit.condition,
                "baseline_fact": hit.baseline_fact_id,
                "fact": later.fact_id,
                "run": str(run.pk) if run is not None else "",
            },
        )
        notifications.notify(
            version=hit.version, event=Notice.Event.FALSIFIER_HIT, recipients=_people(hit), note=because
        )
    hit.refresh_from_db()
    log.info("%s: %s", hit.version, because)
    return hit


def _reopen(watch: FalsifierWatch) -> tuple[Run | None, str]:
    """The run that re-examines the position: a new one, or the one already under way; and what was done."""
    brief, made_by = watch.brief, watch.version.run
    active = Run.objects.filter(brief=brief, status__in=Run.ACTIVE_STATUSES).first()
    if active is not None:
        return active, f"run {str(active.pk)[:8]} of this brief was already under way; it answers the hit"
    try:
        check_owner_still_analyst(brief)
        # Started by new facts, not by a person: the desk's own work, after people's runs.
        run = start_run(
            brief=brief, user=brief.owner, profile=made_by.profile, workflow=made_by.workflow, scheduled=True
        )
    except ServiceError as exc:
        # The brief's analyst left, another run of the brief started a moment ago (the one-active-run
        # constraint), or the owner is at the bound of active runs: the hit stands and its notices go; the
        # note (and the audit row) says why no run started.
        active = Run.objects.filter(brief=brief, status__in=Run.ACTIVE_STATUSES).first()
        if active is not None:
            return active, f"run {str(active.pk)[:8]} of this brief was already under way; it answers the hit"
        return None, f"no new run started: {exc}"
    return run, f"a new run {str(run.pk)[:8]} re-examines the position"


def _people(watch: FalsifierWatch) -> list[User]:
    """The brief's analyst (and whoever started the version's run), its committee and its reviewers."""
    people = [watch.brief.owner, watch.version.run.created_by]
    people += notifications.members(Roles.COMMITTEE) + notifications.members(Roles.REVIEWER)
    return list({user.pk: user for user in people}.values())
