"""Shared set-up for pipeline tests: real snapshot data in the database and the fake LLM server."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis
from django.conf import settings
from django.contrib.auth.models import User
from django.test import override_settings

from agents.data.edgar import SnapshotEdgarSource, load_company_facts
from agents.data.markets import SnapshotMarketSource, market_document
from agents.data.news import SnapshotNewsSource
from agents.data.prices import SnapshotPriceSource
from agents.data.types import Citation
from agents.evidence import EvidenceItem
from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.roles import Role
from agents.memo.outputs import EvidenceOutput
from agents.memo.roster import MemoConfig
from agents.quant import compute_profile, quant_facts
from memos.models import AgentStep, Company, Run
from memos.pipeline import driver
from memos.pipeline.fact_store import save_company_facts, save_documents, save_facts
from memos.pipeline.liveness import LOCK_PREFIX
from memos.pipeline.memo.evidence import select_evidence
from memos.pipeline.memo.rehearsal import script_for_run
from memos.pipeline.registry import fake_answers
from memos.services.runs import create_brief, start_run
from tests.agents.data import SNAPSHOT


def quick_memo_run() -> Iterator[Run]:
    """A fixture's quick AAPL memo run, started and not yet run, with the desk's data loaded; its run lock is
    let go afterwards (``yield from quick_memo_run()``)."""
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(owner=user, ticker="AAPL", question="Is the buyback funded by operating cash?")
    started = start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")
    yield started
    redis.Redis.from_url(settings.REDIS_URL).delete(LOCK_PREFIX + str(started.pk))


def load_desk_data(ticker: str = "AAPL") -> Company:
    """The ticker's companyfacts, its quant profile against SPY, and the snapshot's news and markets."""
    save_company_facts(load_company_facts(SnapshotEdgarSource(SNAPSHOT), ticker))
    company = Company.objects.get(ticker=ticker)
    prices = SnapshotPriceSource(SNAPSHOT)
    profile = compute_profile(prices.series(ticker), benchmark=prices.series("SPY"))
    citation = Citation(
        source="prices", url=f"https://finance.yahoo.com/quote/{ticker}/history", label="test"
    )
    save_facts(company=company, facts=quant_facts(profile, ticker=ticker, citation=citation))
    save_documents(SnapshotNewsSource(SNAPSHOT).all_documents())
    save_documents(market_document(m) for m in SnapshotMarketSource(SNAPSHOT).markets())
    return company


def fake_settings(server: FakeLLMServer, *, concurrency: int = 3) -> LLMSettings:
    synthesizer = Endpoint(base_url=server.url, api_key="test-key", model="fake-synthesizer")
    return LLMSettings(
        default=synthesizer,
        roles={Role.EVALUATOR: Endpoint(base_url=server.url, api_key="test-key", model="fake-evaluator")},
        max_retries=1,
        max_concurrency=concurrency,
        loopback_only=True,
        timeout_s=20,
    )


@contextmanager
def fake_llm(script: dict[str, list[Any]] | None = None, *, latency_ms: float = 0) -> Iterator[FakeLLMServer]:
    with (
        FakeLLMServer(latency_ms=latency_ms, script=script or {}, answers=fake_answers()) as server,
        override_settings(LLM_SETTINGS=fake_settings(server)),
    ):
        yield server


def script_for(run: Run) -> dict[str, list[Any]]:
    return script_for_run(run)


def evidence_of(run: Run) -> dict[str, list[EvidenceItem]]:
    """What the run's specialists were (or, before its data stage, will be) shown."""
    frozen = AgentStep.objects.filter(run=run, kind="evidence", status="done").values_list(
        "output", flat=True
    )
    if frozen:
        return EvidenceOutput.model_validate(frozen[0]).by_specialist()
    assert run.brief.company is not None
    return select_evidence(run.brief.company, MemoConfig.model_validate(run.config).roster)


def person(username: str, *roles: str) -> User:
    """A desk user in these roles' groups, with an e-mail address at desk.example (notices reach it)."""
    from memos.services.accounts import ensure_groups

    groups = ensure_groups()
    user = User.objects.create_user(username, f"{username}@desk.example", password=f"{username}-secret-pass")
    for role in roles:
        user.groups.add(groups[role])
    return user


def analyst(username: str = "ana") -> User:
    return person(username, "analyst")


def finished_run(
    analyst: User,
    question: str = "Should the committee add to the position ahead of the next product cycle?",
    brief_of: Run | None = None,
) -> Run:
    """A quick AAPL run (a new brief, or another run of ``brief_of``'s) finished on the fake LLM."""
    brief = (
        brief_of.brief
        if brief_of is not None
        else create_brief(owner=analyst, ticker="AAPL", question=question)
    )
    run = start_run(brief=brief, user=analyst, profile="quick", enqueue=False, workflow="memo")
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message
    return run
