"""Starting runs and keeping them alive: what the pages, ``analyze`` and the watchdog share."""

from __future__ import annotations

import hashlib
import hmac
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from agents.data.errors import DataError
from agents.memo.roster import Profile
from memos.models import AgentStep, Brief, Company, Run
from memos.pipeline import runner, steps
from memos.services.errors import ServiceError
from memos.services.sources import edgar_source

MAX_QUESTION_CHARS = 2000


def company_for(ticker: str) -> Company:
    """The company a ticker names: already stored, or found in SEC's company list; else a clear error."""
    symbol = ticker.strip().upper()
    if not symbol:
        raise ServiceError("Enter a ticker.")
    found = Company.objects.filter(ticker=symbol).first()
    if found is not None:
        return found
    try:
        listed = edgar_source().company_tickers().get(symbol)
    except DataError as exc:
        raise ServiceError(f"Could not look up {symbol}: {exc}") from exc
    if listed is None:
        raise ServiceError(f"Unknown ticker {symbol!r}: it is not in SEC's company list.")
    company, _ = Company.objects.get_or_create(ticker=symbol, defaults={"cik": listed[0], "name": listed[1]})
    return company


def create_brief(*, owner: User, ticker: str, question: str, audience: str = "", notes: str = "") -> Brief:
    text = question.strip()
    if not text:
        raise ServiceError("The brief needs a question: what should the memo answer?")
    if len(text) > MAX_QUESTION_CHARS:
        raise ServiceError(f"The question is longer than {MAX_QUESTION_CHARS} characters.")
    company = company_for(ticker)
    return Brief.objects.create(
        company=company,
        question=text,
        audience=audience.strip() or "Investment committee",
        notes=notes.strip(),
        owner=owner,
    )


def profile_named(name: str) -> Profile:
    profiles: dict[str, Profile] = settings.MEMO_PROFILES
    if name not in profiles:
        raise ServiceError(f"Unknown profile {name!r}; choose one of {', '.join(sorted(profiles))}.")
    return profiles[name]


def brief_nonce(brief: Brief) -> str:
    """The fence marker for untrusted text in this brief's prompts.

    Keyed by the server's secret, so no author of a news item or filing can predict it and close a fence
    early; stable per brief, so a rerun with unchanged inputs sends identical prompts and costs nothing.
    """
    return hmac.new(
        settings.SECRET_KEY.encode(), f"brief-nonce:{brief.pk}".encode(), hashlib.sha256
    ).hexdigest()[:16]


def start_run(brief: Brief, *, user: User, profile: str = "full", enqueue: bool = True) -> Run:
    """Create the run and its pending steps, and queue the first stage once committed.

    A second run of a brief while one is queued or running is refused (a partial unique constraint).
    """
    chosen = profile_named(profile)
    try:
        with transaction.atomic():
            run = Run.objects.create(
                brief=brief,
                created_by=user,
                profile=chosen.name,
                nonce=brief_nonce(brief),
                config=chosen.as_dict(),
                budget_tokens=settings.LLM_SETTINGS.run_budget_tokens,
                status_message="queued",
            )
            _plan_steps(run, chosen)
            if enqueue:
                transaction.on_commit(lambda: runner.enqueue_stage(str(run.pk), runner.STAGES[0]))
    except IntegrityError as exc:
        raise ServiceError(
            f"A run of this brief is already queued or running; wait for it to finish ({brief})."
        ) from exc
    return run


def _plan_steps(run: Run, profile: Profile) -> None:
    """Every step the run will take, pending, so the page draws the whole pipeline from the start."""
    AgentStep.objects.bulk_create(
        [
            AgentStep(run=run, layer=p.layer, key=p.key, title=p.title, role=p.role, position=p.position)
            for p in steps.plan(profile.roster, profile.iterations)
        ]
    )


def resume_stale_runs(*, stale_after_s: int | None = None) -> list[str]:
    """The watchdog: re-enqueue the current stage of runs nobody is working on.

    That is a running run whose heartbeat went stale (its worker died), or a queued run no worker has picked
    up for as long (its job was lost, for example with a restarted Redis, which keeps no queue on disk). A
    job enqueued twice is harmless: a stage already past or held by another worker's lock does nothing.
    """
    limit = stale_after_s if stale_after_s is not None else int(settings.RUN_STALE_AFTER_S)
    cutoff = timezone.now() - timedelta(seconds=limit)
    waiting = Q(status=Run.Status.QUEUED, created_at__lt=cutoff) & (
        Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=cutoff)
    )
    stale = Run.objects.filter(Q(status=Run.Status.RUNNING, heartbeat_at__lt=cutoff) | waiting)
    resumed = []
    for run in stale:
        stage = run.stage or runner.STAGES[0]
        AgentStep.objects.filter(run=run, status=AgentStep.Status.RUNNING).update(
            status=AgentStep.Status.PENDING
        )
        why = "a lost worker" if run.status == Run.Status.RUNNING else "a lost queue entry"
        steps.set_run(run, heartbeat_at=timezone.now(), status_message=f"resuming {stage} after {why}")
        runner.enqueue_stage(str(run.pk), stage)
        resumed.append(str(run.pk))
    return resumed
