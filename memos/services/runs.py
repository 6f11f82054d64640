"""Briefs and runs: what the pages and the commands share to ask a question and start answering it."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from agents.data.errors import DataError
from agents.llm.hashing import canonical_json
from agents.text.untrusted import normalise_text
from memos.models import DEFAULT_AUDIENCE, AgentStep, Brief, Company, Run
from memos.models.runs import MAX_WATCHLIST
from memos.pipeline import driver, judge_families
from memos.pipeline.data_sources import edgar_source
from memos.pipeline.gateway import with_models
from memos.pipeline.registry import UnknownWorkflow, workflow_for
from memos.pipeline.steps import plan_steps
from memos.pipeline.workflows import ConfigurationError, RunRequest, Workflow
from memos.services import governance, spending
from memos.services.accounts import Roles, has_role
from memos.services.errors import ServiceError

MAX_TICKER_CHARS = 16


class BriefBusy(ServiceError):
    """A run of the brief is already queued or running (one active run per brief, memos.models.runs): a
    refusal that passes when that run ends, so a schedule tries again instead of using its slot up."""


def company_for(ticker: str) -> Company:
    """The company a ticker names: already stored, or found in SEC's company list; else a clear error.

    In live mode this may ask SEC over the network: never call it inside a transaction.
    """
    symbol = ticker.strip().upper()
    if not symbol:
        raise ServiceError("Enter a ticker.")
    if len(symbol) > MAX_TICKER_CHARS or not all(c.isascii() and (c.isalnum() or c in ".-") for c in symbol):
        shown = symbol if len(symbol) <= MAX_TICKER_CHARS else symbol[:MAX_TICKER_CHARS] + "…"
        raise ServiceError(
            f"{shown!r} is not a ticker: up to {MAX_TICKER_CHARS} letters, digits, '.' or '-'."
        )
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


def _field(value: str, *, name: str, limit: int) -> str:
    # Normalised like any untrusted text (no control or invisible characters: PostgreSQL refuses NUL, and
    # hidden characters would reach the prompts); then bounded, with a message instead of a silent cut.
    text = normalise_text(value, max_chars=limit + 1)
    if len(text) > limit:
        raise ServiceError(f"The {name} is longer than {limit} characters.")
    return text


def brief_fields(*, question: str, audience: str = "", notes: str = "") -> dict[str, str]:
    """The brief's fields as stored: cleaned, bounded, the audience defaulted; refused without a question."""
    fields = {
        "question": _field(question, name="question", limit=Brief.MAX_QUESTION_CHARS),
        "audience": _field(audience, name="audience", limit=Brief.MAX_AUDIENCE_CHARS) or DEFAULT_AUDIENCE,
        "notes": _field(notes, name="notes", limit=Brief.MAX_NOTES_CHARS),
    }
    if not fields["question"]:
        raise ServiceError("The brief needs a question: what should the memo answer?")
    return fields


def create_brief(
    *,
    owner: User,
    ticker: str,
    question: str,
    audience: str = "",
    notes: str = "",
    company: Company | None = None,
) -> Brief:
    fields = brief_fields(question=question, audience=audience, notes=notes)
    return Brief.objects.create(company=company or company_for(ticker), owner=owner, **fields)


def brief_nonce(brief: Brief) -> str:
    """The fence marker for untrusted text in this brief's prompts.

    Keyed with the server's secret, so no author of a news item, a filing or a brief can predict it (and a
    fence strips any copy of its own end marker anyway, agents.text.untrusted). Derived from the company
    alone: every brief on one company sends the same system text and the same evidence block, which comes
    before the brief in each prompt, so the model server reuses that prompt prefix from its cache; and the
    same question on the same company sends identical requests whoever asks it and in whichever brief, so the
    LLM ledger answers it without paying again.
    """
    key = canonical_json({"fence": brief.subject})
    return hmac.new(settings.SECRET_KEY.encode(), key.encode(), hashlib.sha256).hexdigest()[:16]


def check_owner_still_analyst(brief: Brief) -> None:
    """Refuse a run the desk would start on its own in the brief's analyst's name (a falsifier hit, a
    scheduled refinement cycle) when they are no longer an active analyst: removed from the analyst group or
    deactivated, they would own work nobody asked for and could not open."""
    owner = brief.owner
    if not has_role(owner, Roles.ANALYST):
        raise ServiceError(
            f"{owner.username} is no longer an active analyst: the desk starts runs of a brief only for its "
            "analyst"
        )


def check_active_runs(user: User) -> None:
    """Refuse a run beyond ``RUN_MAX_ACTIVE_PER_USER`` queued or running for ``user``. Call it inside the
    transaction that makes the run active: the person's row stays locked until it commits, so two requests
    at once cannot both slip under the bound."""
    User.objects.select_for_update().filter(pk=user.pk).first()
    # The desk's scheduled work (memos.models.runs.Run.scheduled) runs in the analyst's name but is not theirs
    # to wait for: it never counts against the runs a person may start.
    active = Run.objects.filter(created_by=user, status__in=Run.ACTIVE_STATUSES, scheduled=False).count()
    if active >= settings.RUN_MAX_ACTIVE_PER_USER:
        raise ServiceError(
            f"You have {active} run{'' if active == 1 else 's'} queued or running, the most one "
            "person may have at once; wait for one to finish."
        )


def start_run(
    *,
    brief: Brief,
    user: User,
    workflow: str,
    profile: str,
    options: Mapping[str, Any] | None = None,
    enqueue: bool = True,
    scheduled: bool = False,
    part_of: Run | None = None,
) -> Run:
    """The one way a run starts, whoever asks (the brief form, ``analyze``, ``deck``, a refinement cycle, a
    falsifier hit): create the run, configured by its workflow from the profile, the rubric versions active
    now (which it pins to its end) and the caller's ``options``; plan its steps; queue its first stage once
    committed.

    Refused with a person's message: an unknown workflow or profile; a brief about the wrong kind of subject
    for the workflow; a second run of a brief while one is queued or running (a partial unique constraint,
    memos.models.runs); more than ``RUN_MAX_ACTIVE_PER_USER`` active runs for one person (checked with the
    person's row locked, so two requests at once cannot both slip under the bound).

    ``scheduled``: the desk started it on its own (a schedule, a week), so it runs after people's runs and
    is not counted against its owner's bound; ``part_of``: the run (a week) that started it as its part.
    """
    try:
        engine = workflow_for(workflow)
    except UnknownWorkflow as exc:
        raise ServiceError(str(exc)) from exc
    if brief.subject_kind != engine.subject:
        raise ServiceError(
            f"{engine.choice.split(':')[0]} runs answer a brief about a {engine.subject}; "
            f"this brief is about a {brief.subject_kind} ({brief.subject})."
        )
    with one_active_run_per_brief(brief), transaction.atomic():
        if not scheduled:
            check_active_runs(user)
        # The prompt and rubric versions active now: the run keeps them to its end, resumes included.
        pins = governance.current_pins()
        try:
            config = engine.configure(RunRequest(profile, pins.rubrics, options or {}, tuple(brief.symbols)))
        except ConfigurationError as exc:
            raise ServiceError(str(exc)) from exc
        families = judge_families.checked(
            engine.verdicts, with_models(settings.LLM_SETTINGS, engine.run_models(config))
        )
        required = "REQUIRE_SEPARATE_JUDGE" if settings.REQUIRE_SEPARATE_JUDGE else engine.separate_judge()
        refused = judge_families.refusal(families, setting=required) if required else ""
        if refused:
            raise ServiceError(refused)
        run = Run.objects.create(
            brief=brief,
            workflow=engine.name,
            created_by=user,
            profile=profile,
            nonce=brief_nonce(brief),
            config=config,
            verdict_families=[check.as_json() for check in families],
            budget_tokens=spending.capped_budget(
                user, engine.budget(config, settings.LLM_SETTINGS.run_budget_tokens)
            ),
            status_message="queued",
            prompt_versions=pins.prompts,
            rubric_versions=pins.rubrics,
            scheduled=scheduled,
            part_of=part_of,
        )
        return planned(run, engine, enqueue=enqueue)


@contextmanager
def one_active_run_per_brief(brief: Brief) -> Iterator[None]:
    """A second active run of a brief breaks a partial unique constraint (memos.models.runs): said so."""
    try:
        yield
    except IntegrityError as exc:
        raise BriefBusy(
            f"A run of this brief is already queued or running; wait for it to finish ({brief})."
        ) from exc


def planned(run: Run, engine: Workflow, *, enqueue: bool) -> Run:
    """The new run with its steps planned, its first stage queued once the transaction commits."""
    plan_steps(run, engine)
    if enqueue:
        run_id, first = str(run.pk), engine.first_stage
        transaction.on_commit(lambda: driver.enqueue_stage(run_id, first))
    return run


def may_retry(user: User, run: Run) -> bool:
    """Whether ``user`` sees "Retry what failed" on the run: its brief's analyst, on a run that failed or
    has parts that did not finish, with no newer run of its workflow on the brief."""
    try:
        _check_retry(user, run)
    except ServiceError:
        return False
    return True


def _check_retry(user: User, run: Run) -> None:
    if user.pk != run.brief.owner_id or not has_role(user, Roles.ANALYST):
        raise ServiceError("Only the brief's analyst retries its runs.")
    if run.status == Run.Status.NEEDS_REVIEW:
        if not run.steps.filter(status=AgentStep.Status.FAILED).exists():
            raise ServiceError("Every part of this run finished: there is nothing to retry.")
    elif run.status != Run.Status.FAILED:
        raise ServiceError(
            f"This run is {run.get_status_display().lower()}: only a failed or partial run is retried."
        )
    newer = Run.objects.filter(brief_id=run.brief_id, workflow=run.workflow, created_at__gt=run.created_at)
    if newer.exists():
        raise ServiceError("A newer run of this brief exists: retry that one, or start a new run.")


def retry_run(*, run: Run, user: User, enqueue: bool = True) -> Run:
    """A new run that retries what ``run`` did not finish: the same workflow, profile, configuration, budget,
    fence and pinned prompts and rubrics, so every call the first run had answered is asked again with the
    same request and answered by the ledger (memos.pipeline.ledger), unpaid; only what failed, and what
    depends on it, is asked of a model. Its version supersedes the partial one. Refused with a person's
    message, as ``start_run`` refuses (a run of the brief already active, too many runs at once)."""
    _check_retry(user, run)
    with one_active_run_per_brief(run.brief), transaction.atomic():
        check_active_runs(user)
        retry = Run.objects.create(
            brief_id=run.brief_id,
            workflow=run.workflow,
            created_by=user,
            profile=run.profile,
            nonce=run.nonce,
            config=run.config,
            verdict_families=run.verdict_families,
            budget_tokens=spending.capped_budget(user, run.budget_tokens),
            status_message="queued: retrying what failed",
            prompt_versions=run.prompt_versions,
            rubric_versions=run.rubric_versions,
            retry_of=run,
        )
        return planned(retry, workflow_for(run.workflow), enqueue=enqueue)


def ask(
    *,
    owner: User,
    ticker: str,
    question: str,
    workflow: str,
    profile: str,
    audience: str = "",
    notes: str = "",
    options: Mapping[str, Any] | None = None,
    enqueue: bool = True,
    scheduled: bool = False,
    part_of: Run | None = None,
) -> Run:
    """A new question and its run, as the brief form and the run commands ask it: find the company (outside
    any transaction: it may ask SEC), then in one transaction reuse the owner's identical brief or write a
    new one, and start its run. A refused run leaves no orphan brief, and a double-submitted form meets the
    one-active-run rule instead of starting a second, identical run."""
    fields = brief_fields(question=question, audience=audience, notes=notes)
    company = company_for(ticker)
    with transaction.atomic():
        brief = Brief.objects.filter(owner=owner, company=company, **fields).order_by(
            "-created_at"
        ).first() or Brief.objects.create(owner=owner, company=company, **fields)
        return start_run(
            brief=brief,
            user=owner,
            workflow=workflow,
            profile=profile,
            options=options,
            enqueue=enqueue,
            scheduled=scheduled,
            part_of=part_of,
        )


# A watchlist's symbol as the brief stores it (memos.models.runs.Brief.symbols: 16 characters at most).
SYMBOL = re.compile(r"[A-Z0-9][A-Z0-9.\-^]{0,15}")


def ask_watchlist(
    *,
    owner: User,
    symbols: list[str],
    question: str,
    workflow: str,
    profile: str,
    options: Mapping[str, Any] | None = None,
    audience: str = "",
    notes: str = "",
    enqueue: bool = True,
    scheduled: bool = False,
    part_of: Run | None = None,
) -> Run:
    """``ask`` for a brief about a watchlist (a screen): reuse the owner's identical brief or write one, and
    start its run with ``options`` (the screen's strategy), in one transaction."""
    fields = brief_fields(question=question, audience=audience, notes=notes)
    cleaned = list(dict.fromkeys(symbol.strip().upper() for symbol in symbols if symbol.strip()))
    if not cleaned:
        raise ServiceError("The watchlist is empty: name at least one symbol.")
    strange = [symbol for symbol in cleaned if not SYMBOL.fullmatch(symbol)]
    if strange:
        raise ServiceError(f"Not a ticker symbol: {', '.join(strange[:5])[:120]}.")
    if len(cleaned) > MAX_WATCHLIST:
        raise ServiceError(f"A watchlist holds at most {MAX_WATCHLIST} symbols; this one has {len(cleaned)}.")
    with transaction.atomic():
        brief = Brief.objects.filter(owner=owner, company__isnull=True, symbols=cleaned, **fields).order_by(
            "-created_at"
        ).first() or Brief.objects.create(owner=owner, symbols=cleaned, **fields)
        return start_run(
            brief=brief,
            user=owner,
            workflow=workflow,
            profile=profile,
            options=options,
            enqueue=enqueue,
            scheduled=scheduled,
            part_of=part_of,
        )
